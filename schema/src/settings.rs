//! `settings`: small key/value settings changed at run time.

use rusqlite::{params, OptionalExtension, Transaction};
use serde::{Deserialize, Serialize};

use crate::util::require_non_empty;
use crate::{Store, StoreError};

/// The `settings` key of a request for an immediate observer sample (`POST
/// /api/v1/cluster/refresh-metadata`): the value is a sequence number that grows with every
/// request until the observer clears it; `updated_at_ms` is when the latest request arrived.
pub const SAMPLE_REQUEST_KEY: &str = "observer.sample_requested";

/// A pending request for an immediate observer sample.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SampleRequest {
    /// Grows with every request while one is pending (requests coalesce).
    pub seq: i64,
    /// When the latest request arrived.
    pub requested_at_ms: i64,
}

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

    /// Asks the observer for a sample now. Requests made while one is pending coalesce into it
    /// (its `seq` grows, its time is the latest request's).
    pub fn request_sample(&self, now_ms: i64) -> Result<SampleRequest, StoreError> {
        self.write(|tx| {
            tx.prepare_cached(
                "INSERT INTO settings (key, value, updated_at_ms) VALUES (?1, '1', ?2)
                 ON CONFLICT (key) DO UPDATE SET
                    value = CAST(CAST(value AS INTEGER) + 1 AS TEXT),
                    updated_at_ms = excluded.updated_at_ms",
            )?
            .execute(params![SAMPLE_REQUEST_KEY, now_ms])?;
            let seq: String = tx
                .prepare_cached("SELECT value FROM settings WHERE key = ?1")?
                .query_row([SAMPLE_REQUEST_KEY], |r| r.get(0))?;
            Ok(SampleRequest {
                seq: seq.parse().unwrap_or(0),
                requested_at_ms: now_ms,
            })
        })
    }

    /// The pending sample request, if any.
    pub fn sample_request(&self) -> Result<Option<SampleRequest>, StoreError> {
        let conn = self.conn()?;
        let mut stmt =
            conn.prepare_cached("SELECT value, updated_at_ms FROM settings WHERE key = ?1")?;
        let row: Option<(String, i64)> = stmt
            .query_row([SAMPLE_REQUEST_KEY], |r| Ok((r.get(0)?, r.get(1)?)))
            .optional()?;
        Ok(row.map(|(seq, at)| SampleRequest {
            seq: seq.parse().unwrap_or(0),
            requested_at_ms: at,
        }))
    }

    /// Clears the request `seen` before a sample that has now been taken. A request that arrived
    /// since (a larger `seq`) stays pending. True when the request was cleared.
    pub fn clear_sample_request(&self, seen: &SampleRequest) -> Result<bool, StoreError> {
        self.write(|tx| {
            let n = tx
                .prepare_cached("DELETE FROM settings WHERE key = ?1 AND value = ?2")?
                .execute(params![SAMPLE_REQUEST_KEY, seen.seq.to_string()])?;
            Ok(n > 0)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn store() -> (Store, tempfile::TempDir) {
        let dir = tempfile::tempdir().expect("temp dir");
        let db = dir.path().join("ballast.db");
        Store::migrate(&db).expect("migrate");
        (Store::open(&db).expect("open"), dir)
    }

    #[test]
    fn sample_requests_coalesce_and_a_request_made_during_a_sample_stays_pending() {
        let (store, _dir) = store();
        assert_eq!(store.sample_request().expect("read"), None);
        let first = store.request_sample(1_000).expect("request");
        let seen = store.sample_request().expect("read").expect("pending");
        assert_eq!(seen, first);
        // Another request while the observer samples: clearing what it saw keeps the new one.
        let second = store.request_sample(2_000).expect("request");
        assert!(second.seq > first.seq);
        assert!(!store.clear_sample_request(&seen).expect("clear"));
        let pending = store
            .sample_request()
            .expect("read")
            .expect("still pending");
        assert_eq!(pending.requested_at_ms, 2_000);
        assert!(store.clear_sample_request(&pending).expect("clear"));
        assert_eq!(store.sample_request().expect("read"), None);
    }
}
