//! `processes`: the supervisor's view of its children. Written by the supervisor only.

use std::fmt;
use std::str::FromStr;

use rusqlite::{params, OptionalExtension, Row};
use serde::{Deserialize, Serialize};

use crate::util::{bad_enum, require_non_empty};
use crate::{Store, StoreError};

/// Life-cycle state of a supervised process.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ProcessState {
    Starting,
    Running,
    /// Crashed; waiting until `next_start_at_ms` to start again.
    Backoff,
    Stopping,
    Stopped,
    /// Exited and will not be restarted.
    Exited,
}

impl ProcessState {
    pub const ALL: [ProcessState; 6] = [
        ProcessState::Starting,
        ProcessState::Running,
        ProcessState::Backoff,
        ProcessState::Stopping,
        ProcessState::Stopped,
        ProcessState::Exited,
    ];

    /// The value stored in `processes.state`.
    pub fn as_str(self) -> &'static str {
        match self {
            ProcessState::Starting => "starting",
            ProcessState::Running => "running",
            ProcessState::Backoff => "backoff",
            ProcessState::Stopping => "stopping",
            ProcessState::Stopped => "stopped",
            ProcessState::Exited => "exited",
        }
    }
}

impl fmt::Display for ProcessState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for ProcessState {
    type Err = StoreError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::ALL
            .into_iter()
            .find(|v| v.as_str() == s)
            .ok_or_else(|| StoreError::Invalid(format!("unknown process state {s:?}")))
    }
}

/// One row of `processes`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ProcessRecord {
    /// `supervisor`, `observer`, `executor`, `healer` or `web`.
    pub name: String,
    pub pid: Option<u32>,
    pub state: ProcessState,
    pub started_at_ms: Option<i64>,
    /// Restarts after crashes since the supervisor started.
    pub restarts: u32,
    /// How it last ended, e.g. `signal 9 (SIGKILL)` or `exit status 1`.
    pub last_exit: Option<String>,
    pub last_exit_at_ms: Option<i64>,
    /// When a process in backoff will be started again.
    pub next_start_at_ms: Option<i64>,
    pub updated_at_ms: i64,
}

const COLUMNS: &str = "name, pid, state, started_at_ms, restarts, last_exit, last_exit_at_ms, \
                       next_start_at_ms, updated_at_ms";

fn from_row(row: &Row<'_>) -> rusqlite::Result<ProcessRecord> {
    let state: String = row.get(2)?;
    let state = state
        .parse()
        .map_err(|_| bad_enum(2, "process state", &state))?;
    Ok(ProcessRecord {
        name: row.get(0)?,
        pid: row.get(1)?,
        state,
        started_at_ms: row.get(3)?,
        restarts: row.get(4)?,
        last_exit: row.get(5)?,
        last_exit_at_ms: row.get(6)?,
        next_start_at_ms: row.get(7)?,
        updated_at_ms: row.get(8)?,
    })
}

impl Store {
    /// Inserts or replaces the row of `p.name`.
    pub fn put_process(&self, p: &ProcessRecord) -> Result<(), StoreError> {
        require_non_empty("process name", &p.name)?;
        let conn = self.conn()?;
        conn.prepare_cached(&format!(
            "INSERT INTO processes ({COLUMNS}) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)
             ON CONFLICT (name) DO UPDATE SET
                pid = excluded.pid, state = excluded.state, started_at_ms = excluded.started_at_ms,
                restarts = excluded.restarts, last_exit = excluded.last_exit,
                last_exit_at_ms = excluded.last_exit_at_ms,
                next_start_at_ms = excluded.next_start_at_ms, updated_at_ms = excluded.updated_at_ms"
        ))?
        .execute(params![
            p.name,
            p.pid,
            p.state.as_str(),
            p.started_at_ms,
            p.restarts,
            p.last_exit,
            p.last_exit_at_ms,
            p.next_start_at_ms,
            p.updated_at_ms,
        ])?;
        Ok(())
    }

    /// Every process row, ordered by name.
    pub fn processes(&self) -> Result<Vec<ProcessRecord>, StoreError> {
        let conn = self.conn()?;
        let mut stmt =
            conn.prepare_cached(&format!("SELECT {COLUMNS} FROM processes ORDER BY name"))?;
        let rows = stmt.query_map([], from_row)?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// The row of one process.
    pub fn process(&self, name: &str) -> Result<Option<ProcessRecord>, StoreError> {
        let conn = self.conn()?;
        let mut stmt =
            conn.prepare_cached(&format!("SELECT {COLUMNS} FROM processes WHERE name = ?1"))?;
        Ok(stmt.query_row([name], from_row).optional()?)
    }
}
