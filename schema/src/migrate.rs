//! Linear numbered migrations, embedded at compile time.
//!
//! Migration `N` lives in `migrations/000N_name.sql`. Each runs in its own `BEGIN IMMEDIATE`
//! transaction that also records it in `schema_migrations` and sets `PRAGMA user_version = N`,
//! so a crash leaves the database at a whole version. Migrations are never edited once released:
//! a change is a new file.

use std::path::Path;

use rusqlite::{Connection, TransactionBehavior};
use serde::Serialize;

use crate::StoreError;

/// One embedded migration.
#[derive(Debug, Clone, Copy)]
pub struct Migration {
    pub version: u32,
    pub name: &'static str,
    pub sql: &'static str,
}

/// Every migration this code knows, in order; `MIGRATIONS[i].version == i + 1`.
pub const MIGRATIONS: &[Migration] = &[
    Migration {
        version: 1,
        name: "0001_init",
        sql: include_str!("../migrations/0001_init.sql"),
    },
    Migration {
        version: 2,
        name: "0002_observed",
        sql: include_str!("../migrations/0002_observed.sql"),
    },
    Migration {
        version: 3,
        name: "0003_proposals",
        sql: include_str!("../migrations/0003_proposals.sql"),
    },
    Migration {
        version: 4,
        name: "0004_operations",
        sql: include_str!("../migrations/0004_operations.sql"),
    },
    Migration {
        version: 5,
        name: "0005_observed_settings",
        sql: include_str!("../migrations/0005_observed_settings.sql"),
    },
    Migration {
        version: 6,
        name: "0006_partition_readings",
        sql: include_str!("../migrations/0006_partition_readings.sql"),
    },
    Migration {
        version: 7,
        name: "0007_auth",
        sql: include_str!("../migrations/0007_auth.sql"),
    },
    Migration {
        version: 8,
        name: "0008_chat",
        sql: include_str!("../migrations/0008_chat.sql"),
    },
    Migration {
        version: 9,
        name: "0009_agents",
        sql: include_str!("../migrations/0009_agents.sql"),
    },
    Migration {
        version: 10,
        name: "0010_kafka_facts",
        sql: include_str!("../migrations/0010_kafka_facts.sql"),
    },
    Migration {
        version: 11,
        name: "0011_audit_intents",
        sql: include_str!("../migrations/0011_audit_intents.sql"),
    },
    Migration {
        version: 12,
        name: "0012_proposal_basis",
        sql: include_str!("../migrations/0012_proposal_basis.sql"),
    },
    Migration {
        version: 13,
        name: "0013_move_stalls",
        sql: include_str!("../migrations/0013_move_stalls.sql"),
    },
    Migration {
        version: 14,
        name: "0014_realized",
        sql: include_str!("../migrations/0014_realized.sql"),
    },
    Migration {
        version: 15,
        name: "0015_tiered",
        sql: include_str!("../migrations/0015_tiered.sql"),
    },
];

/// The schema version this code reads and writes: the newest migration.
pub const LATEST_VERSION: u32 = MIGRATIONS.len() as u32;

/// What [`crate::Store::migrate`] did.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct MigrationReport {
    /// Version found before migrating (0 for a new file).
    pub from: u32,
    /// Version after migrating (always [`LATEST_VERSION`] on success).
    pub to: u32,
    /// Names of the migrations applied by this call, in order (empty when already current).
    pub applied: Vec<String>,
}

/// The bookkeeping table, created by the runner so that every migration can record itself.
const SCHEMA_MIGRATIONS: &str = "CREATE TABLE IF NOT EXISTS schema_migrations (
    version       INTEGER PRIMARY KEY NOT NULL,
    name          TEXT NOT NULL,
    applied_at_ms INTEGER NOT NULL
)";

/// `applied_at_ms` is informational, so it is SQLite's clock (the migration API takes no `now`).
const RECORD_MIGRATION: &str = "INSERT INTO schema_migrations (version, name, applied_at_ms)
    VALUES (?1, ?2, CAST((julianday('now') - 2440587.5) * 86400000.0 AS INTEGER))";

pub(crate) fn user_version(conn: &Connection) -> Result<u32, rusqlite::Error> {
    let v: i64 = conn.pragma_query_value(None, "user_version", |r| r.get(0))?;
    // user_version is a signed 32-bit header field; a negative value is as foreign as a huge one.
    Ok(u32::try_from(v).unwrap_or(u32::MAX))
}

/// Applies every migration above the current version, up to and including `target`.
pub(crate) fn run(
    conn: &mut Connection,
    path: &Path,
    target: u32,
) -> Result<MigrationReport, StoreError> {
    let from = user_version(conn)?;
    if from > LATEST_VERSION {
        return Err(StoreError::SchemaTooNew {
            path: path.to_path_buf(),
            found: from,
            supported: LATEST_VERSION,
        });
    }
    let mut applied = Vec::new();
    for m in MIGRATIONS.iter().filter(|m| m.version <= target) {
        let fail = |source| StoreError::Migration {
            path: path.to_path_buf(),
            version: m.version,
            name: m.name,
            source,
        };
        let tx = conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(fail)?;
        // Read again under the write lock: another process may have migrated meanwhile.
        let current = user_version(&tx).map_err(fail)?;
        if current > LATEST_VERSION {
            return Err(StoreError::SchemaTooNew {
                path: path.to_path_buf(),
                found: current,
                supported: LATEST_VERSION,
            });
        }
        if current >= m.version {
            continue;
        }
        tx.execute_batch(SCHEMA_MIGRATIONS).map_err(fail)?;
        tx.execute_batch(m.sql).map_err(fail)?;
        tx.execute(RECORD_MIGRATION, rusqlite::params![m.version, m.name])
            .map_err(fail)?;
        tx.pragma_update(None, "user_version", m.version)
            .map_err(fail)?;
        tx.commit().map_err(fail)?;
        applied.push(m.name.to_string());
    }
    let to = user_version(conn)?;
    Ok(MigrationReport { from, to, applied })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn migrations_are_numbered_without_gaps_and_match_their_files() {
        for (i, m) in MIGRATIONS.iter().enumerate() {
            assert_eq!(m.version as usize, i + 1, "{}", m.name);
            assert!(
                m.name.starts_with(&format!("{:04}_", m.version)),
                "{} must start with its zero-padded version",
                m.name
            );
            assert!(
                m.sql.starts_with(&format!("-- {}", m.name)),
                "{} must start with a `-- {}` comment line",
                m.name,
                m.name
            );
        }
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("migrations");
        let mut files: Vec<String> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n.ends_with(".sql"))
            .collect();
        files.sort();
        let known: Vec<String> = MIGRATIONS
            .iter()
            .map(|m| format!("{}.sql", m.name))
            .collect();
        assert_eq!(
            files, known,
            "every file in migrations/ must be listed in MIGRATIONS"
        );
    }
}
