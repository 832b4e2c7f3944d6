//! `heartbeats` (each worker, every tick) and `observations` (the observer's freshness).

use rusqlite::{params, OptionalExtension, Row};
use serde::{Deserialize, Serialize};

use crate::util::{json_col, json_text, require_non_empty};
use crate::{Store, StoreError};

/// The latest heartbeat of one worker.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Heartbeat {
    pub name: String,
    pub pid: u32,
    pub at_ms: i64,
    /// Free-form JSON the worker wants to show (tick count, last error, ...).
    pub detail: serde_json::Value,
}

/// How fresh one kind of observation is (e.g. `brokers`); `/api/v1/ready` reads this.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Observation {
    pub kind: String,
    pub observed_at_ms: i64,
    /// Whether the latest attempt succeeded.
    pub ok: bool,
    /// Why it failed, when `ok` is false.
    pub error: Option<String>,
    pub detail: serde_json::Value,
}

fn heartbeat_from_row(row: &Row<'_>) -> rusqlite::Result<Heartbeat> {
    Ok(Heartbeat {
        name: row.get(0)?,
        pid: row.get(1)?,
        at_ms: row.get(2)?,
        detail: json_col(row, 3)?,
    })
}

fn observation_from_row(row: &Row<'_>) -> rusqlite::Result<Observation> {
    Ok(Observation {
        kind: row.get(0)?,
        observed_at_ms: row.get(1)?,
        ok: row.get(2)?,
        error: row.get(3)?,
        detail: json_col(row, 4)?,
    })
}

impl Store {
    /// Records that worker `name` (process `pid`) was alive at `now_ms`.
    pub fn heartbeat(
        &self,
        name: &str,
        pid: u32,
        now_ms: i64,
        detail: &serde_json::Value,
    ) -> Result<(), StoreError> {
        require_non_empty("heartbeat name", name)?;
        let conn = self.conn()?;
        conn.prepare_cached(
            "INSERT INTO heartbeats (name, pid, at_ms, detail) VALUES (?1, ?2, ?3, ?4)
             ON CONFLICT (name) DO UPDATE SET
                pid = excluded.pid, at_ms = excluded.at_ms, detail = excluded.detail",
        )?
        .execute(params![name, pid, now_ms, json_text(detail)])?;
        Ok(())
    }

    /// Every worker's latest heartbeat, ordered by name.
    pub fn heartbeats(&self) -> Result<Vec<Heartbeat>, StoreError> {
        let conn = self.conn()?;
        let mut stmt =
            conn.prepare_cached("SELECT name, pid, at_ms, detail FROM heartbeats ORDER BY name")?;
        let rows = stmt.query_map([], heartbeat_from_row)?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// Inserts or replaces the observation of `o.kind`.
    pub fn record_observation(&self, o: &Observation) -> Result<(), StoreError> {
        require_non_empty("observation kind", &o.kind)?;
        let conn = self.conn()?;
        conn.prepare_cached(
            "INSERT INTO observations (kind, observed_at_ms, ok, error, detail)
             VALUES (?1, ?2, ?3, ?4, ?5)
             ON CONFLICT (kind) DO UPDATE SET
                observed_at_ms = excluded.observed_at_ms, ok = excluded.ok,
                error = excluded.error, detail = excluded.detail",
        )?
        .execute(params![
            o.kind,
            o.observed_at_ms,
            o.ok,
            o.error,
            json_text(&o.detail)
        ])?;
        Ok(())
    }

    /// The latest observation of `kind`, if any was ever recorded.
    pub fn observation(&self, kind: &str) -> Result<Option<Observation>, StoreError> {
        let conn = self.conn()?;
        let mut stmt = conn.prepare_cached(
            "SELECT kind, observed_at_ms, ok, error, detail FROM observations WHERE kind = ?1",
        )?;
        Ok(stmt.query_row([kind], observation_from_row).optional()?)
    }

    /// Every observation, ordered by kind.
    pub fn observations(&self) -> Result<Vec<Observation>, StoreError> {
        let conn = self.conn()?;
        let mut stmt = conn.prepare_cached(
            "SELECT kind, observed_at_ms, ok, error, detail FROM observations ORDER BY kind",
        )?;
        let rows = stmt.query_map([], observation_from_row)?;
        Ok(rows.collect::<Result<_, _>>()?)
    }
}
