//! `settings`: small key/value settings changed at run time.

use rusqlite::{params, OptionalExtension, Transaction};
use serde::{Deserialize, Serialize};

use crate::util::require_non_empty;
use crate::{Store, StoreError};

/// One row of `settings`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Setting {
    pub key: String,
    pub value: String,
    pub updated_at_ms: i64,
}

pub(crate) fn upsert(
    tx: &Transaction<'_>,
    key: &str,
    value: &str,
    now_ms: i64,
) -> Result<(), StoreError> {
    require_non_empty("setting key", key)?;
    tx.prepare_cached(
        "INSERT INTO settings (key, value, updated_at_ms) VALUES (?1, ?2, ?3)
         ON CONFLICT (key) DO UPDATE SET value = excluded.value, updated_at_ms = excluded.updated_at_ms",
    )?
    .execute(params![key, value, now_ms])?;
    Ok(())
}

impl Store {
    /// The value of `key`, if set.
    pub fn setting(&self, key: &str) -> Result<Option<String>, StoreError> {
        let conn = self.conn()?;
        let mut stmt = conn.prepare_cached("SELECT value FROM settings WHERE key = ?1")?;
        Ok(stmt.query_row([key], |r| r.get(0)).optional()?)
    }

    /// Every setting, ordered by key.
    pub fn settings(&self) -> Result<Vec<Setting>, StoreError> {
        let conn = self.conn()?;
        let mut stmt =
            conn.prepare_cached("SELECT key, value, updated_at_ms FROM settings ORDER BY key")?;
        let rows = stmt.query_map([], |r| {
            Ok(Setting {
                key: r.get(0)?,
                value: r.get(1)?,
                updated_at_ms: r.get(2)?,
            })
        })?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// Sets `key` to `value` (unguarded; see [`Store::put_setting_fenced`] for the guarded write).
    pub fn put_setting(&self, key: &str, value: &str, now_ms: i64) -> Result<(), StoreError> {
        self.write(|tx| upsert(tx, key, value, now_ms))
    }
}
