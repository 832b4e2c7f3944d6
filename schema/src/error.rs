use std::fmt;
use std::io;
use std::path::PathBuf;

/// Everything that can go wrong in the store.
///
/// Messages are lowercase and never repeat their source: log the whole chain
/// (`std::error::Error::source`) to see the underlying SQLite or IO error.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum StoreError {
    #[error("could not create directory {path}")]
    CreateDir {
        path: PathBuf,
        #[source]
        source: io::Error,
    },

    #[error("could not open database {path}")]
    Open {
        path: PathBuf,
        #[source]
        source: rusqlite::Error,
    },

    #[error(
        "database {path} does not exist: run `ballast run` (the supervisor creates and migrates it) first"
    )]
    Missing { path: PathBuf },

    #[error("database {path} uses journal mode {found}, not wal (is it on a network filesystem?)")]
    NotWal { path: PathBuf, found: String },

    #[error(
        "database {path} has schema version {found} but this ballast knows up to {supported}: it was written by a newer ballast; upgrade ballast or restore a backup"
    )]
    SchemaTooNew {
        path: PathBuf,
        found: u32,
        supported: u32,
    },

    #[error(
        "database {path} has schema version {found} but this ballast needs {expected}: run `ballast run` (the supervisor migrates) first"
    )]
    SchemaTooOld {
        path: PathBuf,
        found: u32,
        expected: u32,
    },

    #[error("migration {version} ({name}) failed on database {path}")]
    Migration {
        path: PathBuf,
        version: u32,
        name: &'static str,
        #[source]
        source: rusqlite::Error,
    },

    /// The lease is no longer the current, unexpired holder of the mutation slot; nothing was written.
    #[error("lease token {token} of {holder} is fenced: {reason}")]
    Fenced {
        token: i64,
        holder: String,
        reason: FenceReason,
    },

    /// The named thing (e.g. `approval 3f..`) does not exist.
    #[error("{0} not found")]
    NotFound(String),

    /// The request conflicts with the stored state (e.g. an approval that is no longer pending, or
    /// has expired). The message is complete and meant for the user.
    #[error("{0}")]
    Conflict(String),

    /// The caller passed a value the store refuses (empty name, non-positive ttl, ...).
    #[error("invalid input: {0}")]
    Invalid(String),

    #[error("could not read random bytes from /dev/urandom")]
    Random {
        #[source]
        source: io::Error,
    },

    #[error("database error")]
    Sqlite(#[from] rusqlite::Error),

    #[error("could not get a database connection from the pool")]
    Pool(#[from] r2d2::Error),
}

impl StoreError {
    /// True when the database stayed locked by another connection for longer than the busy
    /// timeout. A reconciler can treat this as "try again next tick".
    pub fn is_busy(&self) -> bool {
        let source = match self {
            StoreError::Sqlite(e) => e,
            StoreError::Open { source, .. } | StoreError::Migration { source, .. } => source,
            _ => return false,
        };
        matches!(
            source.sqlite_error_code(),
            Some(rusqlite::ErrorCode::DatabaseBusy | rusqlite::ErrorCode::DatabaseLocked)
        )
    }

    /// True for [`StoreError::Fenced`].
    pub fn is_fenced(&self) -> bool {
        matches!(self, StoreError::Fenced { .. })
    }
}

/// Why a lease was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FenceReason {
    /// Another acquisition happened since: `current` is the token now in force.
    Superseded { current: i64 },
    /// The lease was released and nobody holds the slot.
    Released,
    /// Nobody acquired the slot since, but the lease ran out at `expired_at_ms`.
    Expired { expired_at_ms: i64 },
}

impl fmt::Display for FenceReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FenceReason::Superseded { current } => write!(f, "superseded by token {current}"),
            FenceReason::Released => f.write_str("the slot was released"),
            FenceReason::Expired { expired_at_ms } => {
                write!(f, "the lease expired at {expired_at_ms} ms")
            }
        }
    }
}
