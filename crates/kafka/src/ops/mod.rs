//! The operations, one module per area; each adds methods to [`crate::Client`].

mod acls;
mod cluster;
mod configs;
mod elr;
mod groups;
mod quorum;
mod quotas;
mod records;
mod topics;
