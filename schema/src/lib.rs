//! The SQLite store of ballast: schema, numbered migrations and a typed API.
//!
//! Every ballast process (the supervisor and the observer, executor, healer and web workers)
//! coordinates only through one SQLite file. This crate holds every SQL statement of the project;
//! no rusqlite type appears in its public API.
//!
//! Architecture Invariant: nothing here reads the clock for a rule. Methods whose outcome depends
//! on time take `now_ms` (unix milliseconds). The one exception is the informational
//! `schema_migrations.applied_at_ms`, which SQLite fills in.
//!
//! Architecture Invariant: every connection runs with WAL, a busy timeout, foreign keys on and
//! `synchronous=NORMAL`; read-then-write runs in short `BEGIN IMMEDIATE` transactions.
//!
//! The tables are described for operators in `schema/README.md`.

mod agents;
mod approvals;
mod audit;
mod auth;
mod chat;
mod cooldowns;
mod error;
mod health;
mod migrate;
mod observed;
mod observed_settings;
mod operations;
mod processes;
mod proposals;
mod realized;
mod settings;
mod slot;
mod util;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use r2d2_sqlite::SqliteConnectionManager;
use rusqlite::{Connection, OpenFlags, TransactionBehavior};
use serde::Serialize;

pub use agents::{
    roll_holder, AgentCommand, AgentHeartbeat, AgentRecord, BrokerOutcome, CommandKind,
    CommandState, NewAgentCommand, NewRoll, ReorderedPartition, Roll, RollPhase, RollProgress,
    RollRequest, RollState, ROLL_PURPOSE,
};
pub use approvals::{Approval, ApprovalState, Decision, NewApproval};
pub use audit::{
    AuditEvent, AuditPage, AuditQuery, NewAuditEvent, AUDIT_DEFAULT_LIMIT, AUDIT_INTENT,
    AUDIT_INTENT_DETAILS, AUDIT_MAX_LIMIT,
};
pub use auth::{ApiToken, Login, NewSession, NewToken, Session, TOKEN_LAST_USED_RESOLUTION_MS};
pub use chat::{ChatMessage, ChatToolCall, Conversation, NewChatMessage};
pub use cooldowns::Cooldown;
pub use error::{FenceReason, StoreError};
pub use health::{Heartbeat, Observation};
pub use migrate::{MigrationReport, LATEST_VERSION};
pub use observed::{
    BrokerReading, ClusterFacts, Downsample, ObservedBroker, ObservedCluster, ObservedGroup,
    ObservedGroupOffset, ObservedLogDir, ObservedPartition, ObservedReplica, ObservedTopic,
    ObservedView, ObservedWrite, PartitionCounter, PartitionRates, PartitionReading,
    PartitionTotals, ReadingsPolicy, WriteStats,
};
pub use observed_settings::{StoredAcl, StoredBrokerConfig, StoredQuota};
pub use operations::{
    holder_of, Busy, CancelRequest, Maintenance, MoveRecord, MoveState, MoveStats, NewMove,
    NewOperation, OperationPage, OperationRecord, OperationState, Queued,
};
pub use processes::{ProcessRecord, ProcessState};
pub use proposals::{
    same_basis, BasisKeeps, DeletedProposal, Hold, NewProposal, ProposalPage, ProposalReading,
    ProposalRecord, SavedProposal, DETAIL_PAIRS,
};
pub use realized::{
    LoadValues, LoadsReading, PredictedBroker, Prediction, Realized, RealizedDue, RealizedPart,
};
pub use settings::{SampleRequest, Setting, SAMPLE_REQUEST_KEY};
pub use slot::{Lease, SlotHolder};

/// Pooled connections taken by [`Store::hold_connections`], given back when dropped.
pub struct PoolHold {
    _held: Vec<r2d2::PooledConnection<SqliteConnectionManager>>,
}

/// How connections are opened.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OpenOptions {
    /// How long a statement waits for another connection's write lock before failing with a busy
    /// error (`PRAGMA busy_timeout`).
    pub busy_timeout: Duration,
    /// The most connections this process keeps open.
    pub pool_size: u32,
}

impl Default for OpenOptions {
    fn default() -> Self {
        Self {
            busy_timeout: Duration::from_secs(5),
            pool_size: 4,
        }
    }
}

/// The pragmas in force on a connection, as read back from SQLite (see
/// [`Store::connection_settings`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ConnectionSettings {
    /// `wal` on every ballast connection.
    pub journal_mode: String,
    pub busy_timeout_ms: i64,
    pub foreign_keys: bool,
    /// `normal` on every ballast connection.
    pub synchronous: String,
}

/// A handle on the ballast database: a small pool of configured connections.
///
/// Cheap to clone; `Send + Sync`. Calls block on SQLite: call them from a blocking context
/// (`spawn_blocking` or a dedicated thread) in async code.
#[derive(Clone)]
pub struct Store {
    pool: r2d2::Pool<SqliteConnectionManager>,
    path: Arc<PathBuf>,
}

impl std::fmt::Debug for Store {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Store").field("path", &self.path).finish()
    }
}

/// Applies the pragmas every ballast connection runs with.
fn configure(conn: &Connection, busy_timeout: Duration) -> Result<(), rusqlite::Error> {
    // First, so that switching the journal mode below also waits for other connections.
    conn.busy_timeout(busy_timeout)?;
    // Returns the resulting mode; checked once per Store by `check_wal`.
    let _mode: String = conn.query_row("PRAGMA journal_mode=WAL", [], |r| r.get(0))?;
    conn.execute_batch("PRAGMA foreign_keys=ON; PRAGMA synchronous=NORMAL;")?;
    Ok(())
}

fn read_settings(conn: &Connection) -> Result<ConnectionSettings, rusqlite::Error> {
    let journal_mode: String = conn.pragma_query_value(None, "journal_mode", |r| r.get(0))?;
    let busy_timeout_ms: i64 = conn.pragma_query_value(None, "busy_timeout", |r| r.get(0))?;
    let foreign_keys: i64 = conn.pragma_query_value(None, "foreign_keys", |r| r.get(0))?;
    let synchronous: i64 = conn.pragma_query_value(None, "synchronous", |r| r.get(0))?;
    let synchronous = match synchronous {
        0 => "off",
        1 => "normal",
        2 => "full",
        3 => "extra",
        _ => "unknown",
    };
    Ok(ConnectionSettings {
        journal_mode: journal_mode.to_ascii_lowercase(),
        busy_timeout_ms,
        foreign_keys: foreign_keys == 1,
        synchronous: synchronous.to_string(),
    })
}

fn check_wal(conn: &Connection, path: &Path) -> Result<(), StoreError> {
    let found: String = conn.pragma_query_value(None, "journal_mode", |r| r.get(0))?;
    if !found.eq_ignore_ascii_case("wal") {
        return Err(StoreError::NotWal {
            path: path.to_path_buf(),
            found,
        });
    }
    Ok(())
}

/// Opens one configured connection, creating the file only when `create` is set.
fn open_raw(path: &Path, create: bool, busy_timeout: Duration) -> Result<Connection, StoreError> {
    let mut flags = OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX;
    if create {
        flags |= OpenFlags::SQLITE_OPEN_CREATE;
    }
    let open_err = |source| StoreError::Open {
        path: path.to_path_buf(),
        source,
    };
    let conn = Connection::open_with_flags(path, flags).map_err(open_err)?;
    configure(&conn, busy_timeout).map_err(open_err)?;
    Ok(conn)
}

impl Store {
    /// Creates the database (and its parent directory) if missing and applies every pending
    /// migration, each in its own transaction. Run by the supervisor before it starts workers.
    /// Safe to run concurrently and repeatedly: a current database is left untouched.
    pub fn migrate(path: &Path) -> Result<MigrationReport, StoreError> {
        Self::migrate_to(path, LATEST_VERSION, OpenOptions::default())
    }

    /// [`Store::migrate`] with explicit connection options.
    pub fn migrate_with(path: &Path, opts: OpenOptions) -> Result<MigrationReport, StoreError> {
        Self::migrate_to(path, LATEST_VERSION, opts)
    }

    /// Migrates up to `target` only (tests prove that stepping through versions one at a time
    /// gives the same schema as migrating at once).
    #[doc(hidden)]
    pub fn migrate_to(
        path: &Path,
        target: u32,
        opts: OpenOptions,
    ) -> Result<MigrationReport, StoreError> {
        if let Some(parent) = path.parent() {
            if !parent.as_os_str().is_empty() && !parent.exists() {
                std::fs::create_dir_all(parent).map_err(|source| StoreError::CreateDir {
                    path: parent.to_path_buf(),
                    source,
                })?;
            }
        }
        let mut conn = open_raw(path, true, opts.busy_timeout)?;
        check_wal(&conn, path)?;
        migrate::run(&mut conn, path, target.min(LATEST_VERSION))
    }

    /// Opens an existing database at exactly [`LATEST_VERSION`] with default options. Used by
    /// workers: they never create or migrate the file.
    pub fn open(path: &Path) -> Result<Store, StoreError> {
        Self::open_with(path, OpenOptions::default())
    }

    /// [`Store::open`] with explicit options.
    pub fn open_with(path: &Path, opts: OpenOptions) -> Result<Store, StoreError> {
        if opts.pool_size == 0 {
            return Err(StoreError::Invalid("pool_size must be at least 1".into()));
        }
        if !path.exists() {
            return Err(StoreError::Missing {
                path: path.to_path_buf(),
            });
        }
        let conn = open_raw(path, false, opts.busy_timeout)?;
        check_wal(&conn, path)?;
        let found = migrate::user_version(&conn)?;
        check_version(path, found)?;
        drop(conn);

        let busy_timeout = opts.busy_timeout;
        let manager = SqliteConnectionManager::file(path)
            .with_flags(OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX)
            .with_init(move |c| configure(c, busy_timeout));
        // Connections are made lazily; waiting for a free one is bounded a little above the
        // busy timeout so a wedged pool surfaces as an error rather than a hang.
        let pool = r2d2::Pool::builder()
            .max_size(opts.pool_size)
            .min_idle(Some(0))
            .connection_timeout(busy_timeout + Duration::from_secs(5))
            .build_unchecked(manager);
        Ok(Store {
            pool,
            path: Arc::new(path.to_path_buf()),
        })
    }

    /// The file this store reads and writes.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// `PRAGMA user_version` as stored now (a worker may re-check it to notice an upgrade).
    pub fn schema_version(&self) -> Result<u32, StoreError> {
        let conn = self.conn()?;
        Ok(migrate::user_version(&conn)?)
    }

    /// Fails with [`StoreError::SchemaTooNew`] / [`StoreError::SchemaTooOld`] when the stored
    /// version is no longer the one this code was built for.
    pub fn check_schema_version(&self) -> Result<(), StoreError> {
        check_version(&self.path, self.schema_version()?)
    }

    /// The pragmas in force on a pooled connection (diagnostics).
    pub fn connection_settings(&self) -> Result<ConnectionSettings, StoreError> {
        let conn = self.conn()?;
        Ok(read_settings(&conn)?)
    }

    /// Takes `n` of this process's pooled connections and keeps them until the hold is dropped:
    /// for tests of what answers while the pool is exhausted.
    pub fn hold_connections(&self, n: usize) -> Result<PoolHold, StoreError> {
        let held = (0..n).map(|_| self.conn()).collect::<Result<Vec<_>, _>>()?;
        Ok(PoolHold { _held: held })
    }

    pub(crate) fn conn(
        &self,
    ) -> Result<r2d2::PooledConnection<SqliteConnectionManager>, StoreError> {
        Ok(self.pool.get()?)
    }

    /// Runs `f` in a short `BEGIN IMMEDIATE` transaction, committed only when `f` succeeds.
    pub(crate) fn write<T>(
        &self,
        f: impl FnOnce(&rusqlite::Transaction<'_>) -> Result<T, StoreError>,
    ) -> Result<T, StoreError> {
        let mut conn = self.conn()?;
        let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
        let out = f(&tx)?;
        tx.commit()?;
        Ok(out)
    }

    /// Runs `f` in a read transaction so several reads see one snapshot.
    pub(crate) fn read<T>(
        &self,
        f: impl FnOnce(&rusqlite::Transaction<'_>) -> Result<T, StoreError>,
    ) -> Result<T, StoreError> {
        let mut conn = self.conn()?;
        let tx = conn.transaction_with_behavior(TransactionBehavior::Deferred)?;
        let out = f(&tx)?;
        tx.commit()?;
        Ok(out)
    }
}

fn check_version(path: &Path, found: u32) -> Result<(), StoreError> {
    if found > LATEST_VERSION {
        return Err(StoreError::SchemaTooNew {
            path: path.to_path_buf(),
            found,
            supported: LATEST_VERSION,
        });
    }
    if found < LATEST_VERSION {
        return Err(StoreError::SchemaTooOld {
            path: path.to_path_buf(),
            found,
            expected: LATEST_VERSION,
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_connection_uses_wal_busy_timeout_and_foreign_keys() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("nested").join("ballast.db");
        Store::migrate(&path).unwrap();
        let opts = OpenOptions {
            busy_timeout: Duration::from_millis(1234),
            pool_size: 3,
        };
        let store = Store::open_with(&path, opts).unwrap();
        // Hold every pooled connection at once so each one is a distinct connection.
        let conns: Vec<_> = (0..opts.pool_size)
            .map(|_| store.pool.get().unwrap())
            .collect();
        let expected = ConnectionSettings {
            journal_mode: "wal".into(),
            busy_timeout_ms: 1234,
            foreign_keys: true,
            synchronous: "normal".into(),
        };
        for c in &conns {
            assert_eq!(read_settings(c).unwrap(), expected);
        }
        drop(conns);
        assert_eq!(store.connection_settings().unwrap(), expected);

        // The raw connection used for migrations is configured the same way (default timeout).
        let raw = open_raw(&path, false, OpenOptions::default().busy_timeout).unwrap();
        assert_eq!(
            read_settings(&raw).unwrap(),
            ConnectionSettings {
                busy_timeout_ms: 5000,
                ..expected
            }
        );
    }

    #[test]
    fn store_is_clone_send_sync() {
        fn assert_traits<T: Clone + Send + Sync + 'static>() {}
        assert_traits::<Store>();
    }
}
