//! ballast's only way to talk to a Kafka cluster: an async client over the Kafka wire protocol
//! (the `kafka-protocol` crate), with TLS and SASL.
//!
//! [`Client::connect`] bootstraps from a [`ClientConfig`], keeps a metadata cache and one
//! connection per broker, routes each request (any broker, a given broker, the partition leader,
//! the group coordinator, the controller), negotiates versions per broker and retries retriable
//! failures. Every operation returns the typed results of [`types`]; no protocol struct leaves
//! this crate. See `crates/kafka/README.md` for the operations, routing, retries, security and
//! the Kafka versions supported.

mod client;
mod codes;
mod config;
mod connection;
mod error;
mod oauth;
mod ops;
mod sasl;
mod tls;
pub mod types;
mod versions;
mod wire;

pub use ballast_model::{BrokerId, TopicPartition};
pub use client::Client;
pub use codes::{error_name, is_retriable};
pub use config::{ClientConfig, Sasl, Security, TlsConfig};
pub use error::{Error, ItemError, Result};
pub use types::*;
pub use versions::{infer_kafka_version, markers as kafka_version_markers, metadata_mode};
