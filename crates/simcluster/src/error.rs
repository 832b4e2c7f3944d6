//! Errors of the public API.

use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum SimError {
    #[error("cannot listen on {addr}: {source}")]
    Bind {
        addr: String,
        #[source]
        source: std::io::Error,
    },
    #[error("invalid scenario: {0}")]
    Scenario(String),
    #[error("invalid security settings: {0}")]
    Security(String),
    #[error("cannot read {path}: {source}")]
    Read {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{path} is not a ballast.snapshot/v1 document: {problem}")]
    Snapshot { path: PathBuf, problem: String },
    #[error("unknown broker {0}")]
    UnknownBroker(i32),
    #[error("{0}")]
    Invalid(String),
}
