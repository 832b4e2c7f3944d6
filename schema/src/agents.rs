//! `agents`, `agent_commands`, `rolling_restarts`: the on-broker agents, the work they are given
//! and rolling restarts (docs/rolling-restarts.md).
//!
//! The web process records heartbeats and hands out commands; the executor drives rolls. The
//! `state` of a roll is written only by the executor; operators ask through the
//! `pause_requested` / `abort_requested` flags, so no request is lost between a read and a write.

use std::fmt;
use std::str::FromStr;

use rusqlite::{params, OptionalExtension, Row, Transaction};
use serde::{Deserialize, Serialize};

use crate::operations::Busy;
use crate::util::{bad_enum, json_col, json_text, random_hex_token};
use crate::{audit, NewAuditEvent, Store, StoreError};

/// What an agent's heartbeat says.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AgentHeartbeat {
    pub broker_id: i32,
    pub node_id: String,
    pub version: String,
    /// SHA-256 (hex) of the agent's executable.
    pub build_digest: String,
    /// `None`: the agent has no status command.
    pub broker_process_up: Option<bool>,
    pub broker_uptime_s: Option<i64>,
    pub agent_started_at_ms: i64,
    /// `[{"path", "totalBytes", "availableBytes"} | {"path", "error"}]`
    pub disks: serde_json::Value,
    pub remote_addr: Option<String>,
}

/// An agent as last heard from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AgentRecord {
    #[serde(flatten)]
    pub heartbeat: AgentHeartbeat,
    pub first_seen_at_ms: i64,
    pub last_seen_at_ms: i64,
}

/// Kind of work for an agent.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CommandKind {
    Restart,
    Upgrade,
}

/// State of an agent command.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CommandState {
    Pending,
    Sent,
    Succeeded,
    Failed,
    Cancelled,
}

/// A rolling restart's state. Only the executor writes it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RollState {
    Running,
    Paused,
    Aborting,
    Completed,
    Failed,
    Aborted,
}

/// Where a rolling restart is with its current broker.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RollPhase {
    /// Waiting for the cluster to be healthy before the broker.
    HealthyWait,
    /// Leadership is being moved off the broker.
    LeadersOff,
    /// The agent was asked to restart the broker.
    Restarting,
    /// Waiting for the broker to be back in every ISR.
    Recovering,
    /// Leadership is being given back (preferred leader election).
    LeadersBack,
    /// The pause after a broker, before the next one.
    Settling,
}

macro_rules! text_enum {
    ($t:ty, $what:literal, $($v:ident => $s:literal),+ $(,)?) => {
        impl $t {
            pub const ALL: &'static [$t] = &[$(<$t>::$v),+];
            pub fn as_str(self) -> &'static str {
                match self { $(<$t>::$v => $s),+ }
            }
        }
        impl fmt::Display for $t {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(self.as_str())
            }
        }
        impl FromStr for $t {
            type Err = StoreError;
            fn from_str(s: &str) -> Result<Self, Self::Err> {
                Self::ALL
                    .iter()
                    .copied()
                    .find(|v| v.as_str() == s)
                    .ok_or_else(|| StoreError::Invalid(format!(concat!("unknown ", $what, " {:?}"), s)))
            }
        }
    };
}

text_enum!(CommandKind, "agent command kind", Restart => "restart", Upgrade => "upgrade");
text_enum!(CommandState, "agent command state",
    Pending => "pending", Sent => "sent", Succeeded => "succeeded", Failed => "failed",
    Cancelled => "cancelled");
text_enum!(RollState, "rolling restart state",
    Running => "running", Paused => "paused", Aborting => "aborting", Completed => "completed",
    Failed => "failed", Aborted => "aborted");
text_enum!(RollPhase, "rolling restart phase",
    HealthyWait => "healthy_wait", LeadersOff => "leaders_off", Restarting => "restarting",
    Recovering => "recovering", LeadersBack => "leaders_back", Settling => "settling");

impl RollState {
    /// Whether the roll still holds the cluster (no reassignment may start).
    pub fn is_unfinished(self) -> bool {
        matches!(
            self,
            RollState::Running | RollState::Paused | RollState::Aborting
        )
    }
}

/// Work for an agent.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AgentCommand {
    pub id: i64,
    pub broker_id: i32,
    pub kind: CommandKind,
    pub state: CommandState,
    pub roll_id: Option<String>,
    pub target_version: Option<String>,
    pub target_digest: Option<String>,
    pub requested_by: String,
    pub audit_event_id: Option<i64>,
    pub detail: Option<String>,
    pub created_at_ms: i64,
    pub sent_at_ms: Option<i64>,
    pub finished_at_ms: Option<i64>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewAgentCommand {
    pub broker_id: i32,
    pub kind: CommandKind,
    pub roll_id: Option<String>,
    pub target_version: Option<String>,
    pub target_digest: Option<String>,
    pub requested_by: String,
}

/// A partition whose replica order a roll changed to move leadership off a broker.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ReorderedPartition {
    pub topic: String,
    pub partition: i32,
    /// The order before the roll changed it (given back after the restart).
    pub replicas: Vec<i32>,
}

/// How one broker of a roll went.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct BrokerOutcome {
    pub broker_id: i32,
    pub started_at_ms: i64,
    pub finished_at_ms: i64,
    /// `restarted`, `skipped` (aborted before its restart) or `failed`
    pub outcome: String,
    pub detail: String,
}

/// The working memory of a roll, kept in `rolling_restarts.progress`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RollProgress {
    /// Partitions whose order was changed for the current broker.
    #[serde(default)]
    pub reordered: Vec<ReorderedPartition>,
    /// The current broker's restart command.
    #[serde(default)]
    pub command_id: Option<i64>,
    /// When the current broker's turn began.
    #[serde(default)]
    pub broker_started_at_ms: Option<i64>,
    /// What the roll is waiting for, in words (shown to operators).
    #[serde(default)]
    pub waiting_for: Option<String>,
    #[serde(default)]
    pub brokers_done: Vec<BrokerOutcome>,
}

/// A rolling restart.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Roll {
    pub id: String,
    pub state: RollState,
    pub brokers: Vec<i32>,
    pub position: usize,
    pub phase: RollPhase,
    pub phase_started_at_ms: i64,
    pub pause_requested: bool,
    pub abort_requested: bool,
    pub progress: RollProgress,
    pub user_id: String,
    pub method: String,
    pub reason: Option<String>,
    pub error: Option<String>,
    pub failed_broker: Option<i32>,
    pub audit_event_id: Option<i64>,
    pub created_at_ms: i64,
    pub updated_at_ms: i64,
    pub finished_at_ms: Option<i64>,
}

impl Roll {
    /// The broker being restarted, if any is left.
    pub fn current_broker(&self) -> Option<i32> {
        self.brokers.get(self.position).copied()
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewRoll {
    pub brokers: Vec<i32>,
    pub user_id: String,
    pub method: String,
    pub reason: Option<String>,
}

/// What an operator asks of a running roll.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RollRequest {
    Pause,
    Resume,
    Abort,
}

const AGENT_COLUMNS: &str = "broker_id, node_id, version, build_digest, broker_process_up,
    broker_uptime_s, agent_started_at_ms, disks, remote_addr, first_seen_at_ms, last_seen_at_ms";

fn agent_from_row(r: &Row<'_>) -> rusqlite::Result<AgentRecord> {
    let up: Option<i64> = r.get(4)?;
    Ok(AgentRecord {
        heartbeat: AgentHeartbeat {
            broker_id: r.get(0)?,
            node_id: r.get(1)?,
            version: r.get(2)?,
            build_digest: r.get(3)?,
            broker_process_up: up.map(|v| v != 0),
            broker_uptime_s: r.get(5)?,
            agent_started_at_ms: r.get(6)?,
            disks: json_col(r, 7)?,
            remote_addr: r.get(8)?,
        },
        first_seen_at_ms: r.get(9)?,
        last_seen_at_ms: r.get(10)?,
    })
}

const COMMAND_COLUMNS: &str = "id, broker_id, kind, state, roll_id, target_version, target_digest,
    requested_by, audit_event_id, detail, created_at_ms, sent_at_ms, finished_at_ms";

fn enum_col<T: FromStr>(r: &Row<'_>, idx: usize, what: &str) -> rusqlite::Result<T> {
    let s: String = r.get(idx)?;
    s.parse().map_err(|_| bad_enum(idx, what, &s))
}

fn command_from_row(r: &Row<'_>) -> rusqlite::Result<AgentCommand> {
    Ok(AgentCommand {
        id: r.get(0)?,
        broker_id: r.get(1)?,
        kind: enum_col(r, 2, "agent command kind")?,
        state: enum_col(r, 3, "agent command state")?,
        roll_id: r.get(4)?,
        target_version: r.get(5)?,
        target_digest: r.get(6)?,
        requested_by: r.get(7)?,
        audit_event_id: r.get(8)?,
        detail: r.get(9)?,
        created_at_ms: r.get(10)?,
        sent_at_ms: r.get(11)?,
        finished_at_ms: r.get(12)?,
    })
}

const ROLL_COLUMNS: &str = "id, state, brokers, position, phase, phase_started_at_ms,
    pause_requested, abort_requested, progress, user_id, method, reason, error, failed_broker,
    audit_event_id, created_at_ms, updated_at_ms, finished_at_ms";

fn roll_from_row(r: &Row<'_>) -> rusqlite::Result<Roll> {
    let brokers: Vec<i32> = serde_json::from_value(json_col(r, 2)?).map_err(|e| {
        rusqlite::Error::FromSqlConversionFailure(2, rusqlite::types::Type::Text, Box::new(e))
    })?;
    let progress: RollProgress = serde_json::from_value(json_col(r, 8)?).map_err(|e| {
        rusqlite::Error::FromSqlConversionFailure(8, rusqlite::types::Type::Text, Box::new(e))
    })?;
    let position: i64 = r.get(3)?;
    Ok(Roll {
        id: r.get(0)?,
        state: enum_col(r, 1, "rolling restart state")?,
        brokers,
        position: usize::try_from(position).unwrap_or(0),
        phase: enum_col(r, 4, "rolling restart phase")?,
        phase_started_at_ms: r.get(5)?,
        pause_requested: r.get::<_, i64>(6)? != 0,
        abort_requested: r.get::<_, i64>(7)? != 0,
        progress,
        user_id: r.get(9)?,
        method: r.get(10)?,
        reason: r.get(11)?,
        error: r.get(12)?,
        failed_broker: r.get(13)?,
        audit_event_id: r.get(14)?,
        created_at_ms: r.get(15)?,
        updated_at_ms: r.get(16)?,
        finished_at_ms: r.get(17)?,
    })
}

fn to_json<T: Serialize>(v: &T) -> Result<String, StoreError> {
    serde_json::to_string(v).map_err(|e| StoreError::Invalid(format!("cannot encode: {e}")))
}

/// The id of the unfinished rolling restart, if any.
pub(crate) fn unfinished_roll(tx: &Transaction<'_>) -> Result<Option<String>, StoreError> {
    Ok(tx
        .prepare_cached(
            "SELECT id FROM rolling_restarts WHERE state IN ('running', 'paused', 'aborting')
             ORDER BY created_at_ms, id LIMIT 1",
        )?
        .query_row([], |r| r.get(0))
        .optional()?)
}

/// The slot holder name of a roll.
pub fn roll_holder(roll_id: &str) -> String {
    format!("roll:{roll_id}")
}

/// The slot purpose of a roll.
pub const ROLL_PURPOSE: &str = "rolling restart";

impl Store {
    /// Records a heartbeat and, with `take_command` (the agent runs none now), hands out the
    /// agent's oldest pending command (now `sent`). A
    /// command still `sent` to an agent that reports another start time than before (it started
    /// again) is failed: its outcome was never reported.
    pub fn record_agent_heartbeat(
        &self,
        hb: &AgentHeartbeat,
        take_command: bool,
        now_ms: i64,
    ) -> Result<Option<AgentCommand>, StoreError> {
        self.write(|tx| {
            // An agent that started again (another start time than it last reported, both by
            // its own clock, so clock skew between hosts does not matter) never reports what
            // it was running.
            let previous: Option<i64> = tx
                .prepare_cached("SELECT agent_started_at_ms FROM agents WHERE broker_id = ?1")?
                .query_row([hb.broker_id], |r| r.get(0))
                .optional()?;
            if previous.is_some_and(|p| p != hb.agent_started_at_ms) {
                tx.prepare_cached(
                    "UPDATE agent_commands SET state = 'failed', finished_at_ms = ?2,
                        detail = 'the agent started again before it reported the outcome'
                     WHERE broker_id = ?1 AND state = 'sent'",
                )?
                .execute(params![hb.broker_id, now_ms])?;
            }
            tx.prepare_cached(
                "INSERT INTO agents (broker_id, node_id, version, build_digest, broker_process_up,
                    broker_uptime_s, agent_started_at_ms, disks, remote_addr, first_seen_at_ms,
                    last_seen_at_ms)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?10)
                 ON CONFLICT (broker_id) DO UPDATE SET node_id = ?2, version = ?3,
                    build_digest = ?4, broker_process_up = ?5, broker_uptime_s = ?6,
                    agent_started_at_ms = ?7, disks = ?8, remote_addr = ?9, last_seen_at_ms = ?10",
            )?
            .execute(params![
                hb.broker_id,
                hb.node_id,
                hb.version,
                hb.build_digest,
                hb.broker_process_up.map(i64::from),
                hb.broker_uptime_s,
                hb.agent_started_at_ms,
                json_text(&hb.disks),
                hb.remote_addr,
                now_ms,
            ])?;
            if !take_command {
                return Ok(None);
            }
            let next = tx
                .prepare_cached(&format!(
                    "SELECT {COMMAND_COLUMNS} FROM agent_commands
                     WHERE broker_id = ?1 AND state = 'pending' ORDER BY id LIMIT 1"
                ))?
                .query_row([hb.broker_id], command_from_row)
                .optional()?;
            let Some(mut cmd) = next else {
                return Ok(None);
            };
            tx.prepare_cached(
                "UPDATE agent_commands SET state = 'sent', sent_at_ms = ?2 WHERE id = ?1",
            )?
            .execute(params![cmd.id, now_ms])?;
            cmd.state = CommandState::Sent;
            cmd.sent_at_ms = Some(now_ms);
            Ok(Some(cmd))
        })
    }

    /// Every agent, by broker id.
    pub fn agents(&self) -> Result<Vec<AgentRecord>, StoreError> {
        self.read(|tx| {
            Ok(tx
                .prepare_cached(&format!(
                    "SELECT {AGENT_COLUMNS} FROM agents ORDER BY broker_id"
                ))?
                .query_map([], agent_from_row)?
                .collect::<Result<Vec<_>, _>>()?)
        })
    }

    pub fn agent(&self, broker_id: i32) -> Result<Option<AgentRecord>, StoreError> {
        self.read(|tx| {
            Ok(tx
                .prepare_cached(&format!(
                    "SELECT {AGENT_COLUMNS} FROM agents WHERE broker_id = ?1"
                ))?
                .query_row([broker_id], agent_from_row)
                .optional()?)
        })
    }

    /// Queues work for an agent with its audit event (the command points at it). `Ok(None)`,
    /// writing nothing, while the broker's agent has an unfinished command.
    pub fn queue_agent_command(
        &self,
        cmd: &NewAgentCommand,
        audit: Option<&NewAuditEvent>,
        now_ms: i64,
    ) -> Result<Option<AgentCommand>, StoreError> {
        self.write(|tx| queue_command_tx(tx, cmd, audit, now_ms))
    }

    /// Records what the agent reported of a command it was sent. False, changing nothing, when
    /// the command is not the broker's or not waiting for its outcome.
    pub fn finish_agent_command(
        &self,
        broker_id: i32,
        id: i64,
        succeeded: bool,
        detail: &str,
        now_ms: i64,
    ) -> Result<bool, StoreError> {
        let state = if succeeded { "succeeded" } else { "failed" };
        self.write(|tx| {
            let n = tx
                .prepare_cached(
                    "UPDATE agent_commands SET state = ?3, detail = ?4, finished_at_ms = ?5
                     WHERE id = ?1 AND broker_id = ?2 AND state = 'sent'",
                )?
                .execute(params![id, broker_id, state, detail, now_ms])?;
            Ok(n == 1)
        })
    }

    /// Cancels a command not finished yet (`detail` says why). False when it already ended.
    pub fn cancel_agent_command(
        &self,
        id: i64,
        detail: &str,
        now_ms: i64,
    ) -> Result<bool, StoreError> {
        self.write(|tx| {
            let n = tx
                .prepare_cached(
                    "UPDATE agent_commands SET state = 'cancelled', detail = ?2, finished_at_ms = ?3
                     WHERE id = ?1 AND state IN ('pending', 'sent')",
                )?
                .execute(params![id, detail, now_ms])?;
            Ok(n == 1)
        })
    }

    /// The oldest unfinished command of a broker's agent other than `except`.
    pub fn open_agent_command(
        &self,
        broker_id: i32,
        except: Option<i64>,
    ) -> Result<Option<AgentCommand>, StoreError> {
        self.read(|tx| {
            Ok(tx
                .prepare_cached(&format!(
                    "SELECT {COMMAND_COLUMNS} FROM agent_commands
                     WHERE broker_id = ?1 AND state IN ('pending', 'sent')
                       AND (?2 IS NULL OR id != ?2)
                     ORDER BY id LIMIT 1"
                ))?
                .query_row(params![broker_id, except], command_from_row)
                .optional()?)
        })
    }

    /// The newest roll that ended, if any (its leadership may still be given back).
    pub fn last_ended_roll(&self) -> Result<Option<Roll>, StoreError> {
        self.read(|tx| {
            Ok(tx
                .prepare_cached(&format!(
                    "SELECT {ROLL_COLUMNS} FROM rolling_restarts
                     WHERE state IN ('completed', 'failed', 'aborted')
                     ORDER BY finished_at_ms DESC, id DESC LIMIT 1"
                ))?
                .query_row([], roll_from_row)
                .optional()?)
        })
    }

    pub fn agent_command(&self, id: i64) -> Result<Option<AgentCommand>, StoreError> {
        self.read(|tx| {
            Ok(tx
                .prepare_cached(&format!(
                    "SELECT {COMMAND_COLUMNS} FROM agent_commands WHERE id = ?1"
                ))?
                .query_row([id], command_from_row)
                .optional()?)
        })
    }

    /// Commands newest first, optionally of one broker.
    pub fn agent_commands(
        &self,
        broker_id: Option<i32>,
        limit: u64,
    ) -> Result<Vec<AgentCommand>, StoreError> {
        self.read(|tx| {
            Ok(tx
                .prepare_cached(&format!(
                    "SELECT {COMMAND_COLUMNS} FROM agent_commands
                     WHERE ?1 IS NULL OR broker_id = ?1 ORDER BY id DESC LIMIT ?2"
                ))?
                .query_map(
                    params![broker_id, i64::try_from(limit).unwrap_or(i64::MAX)],
                    command_from_row,
                )?
                .collect::<Result<Vec<_>, _>>()?)
        })
    }

    /// Starts a rolling restart: in one transaction, refuses while a reassignment, another roll
    /// or any slot holder is active ([`Busy`]), stores the roll and its audit event and takes
    /// the mutation slot for it (holder `roll:<id>`).
    pub fn create_roll(
        &self,
        new: &NewRoll,
        audit: Option<&NewAuditEvent>,
        now_ms: i64,
        ttl_ms: i64,
    ) -> Result<Result<Roll, Busy>, StoreError> {
        if new.brokers.is_empty() {
            return Err(StoreError::Invalid(
                "a rolling restart needs at least one broker".into(),
            ));
        }
        let id = format!("roll-{}", &random_hex_token()?[..12]);
        self.write(|tx| {
            if let Some(busy) = crate::operations::busy(tx, now_ms)? {
                return Ok(Err(busy));
            }
            crate::slot::take(tx, &roll_holder(&id), ROLL_PURPOSE, None, now_ms, ttl_ms)?;
            let audit_event_id = audit.map(|e| audit::insert_tx(tx, e)).transpose()?;
            tx.prepare_cached(
                "INSERT INTO rolling_restarts (id, state, brokers, position, phase,
                    phase_started_at_ms, progress, user_id, method, reason, audit_event_id,
                    created_at_ms, updated_at_ms)
                 VALUES (?1, 'running', ?2, 0, 'healthy_wait', ?3, '{}', ?4, ?5, ?6, ?7, ?3, ?3)",
            )?
            .execute(params![
                id,
                to_json(&new.brokers)?,
                now_ms,
                new.user_id,
                new.method,
                new.reason,
                audit_event_id,
            ])?;
            Ok(Ok(roll_tx(tx, &id)?.ok_or_else(|| {
                StoreError::Invalid("the new rolling restart vanished".into())
            })?))
        })
    }

    pub fn roll(&self, id: &str) -> Result<Option<Roll>, StoreError> {
        self.read(|tx| roll_tx(tx, id))
    }

    /// The unfinished roll (at most one exists).
    pub fn active_roll(&self) -> Result<Option<Roll>, StoreError> {
        self.read(|tx| match unfinished_roll(tx)? {
            Some(id) => roll_tx(tx, &id),
            None => Ok(None),
        })
    }

    /// Rolls newest first and how many there are.
    pub fn rolls(&self, limit: u64, offset: u64) -> Result<(Vec<Roll>, u64), StoreError> {
        self.read(|tx| {
            let total: i64 = tx
                .prepare_cached("SELECT count(*) FROM rolling_restarts")?
                .query_row([], |r| r.get(0))?;
            let rolls = tx
                .prepare_cached(&format!(
                    "SELECT {ROLL_COLUMNS} FROM rolling_restarts
                     ORDER BY created_at_ms DESC, id DESC LIMIT ?1 OFFSET ?2"
                ))?
                .query_map(
                    params![
                        i64::try_from(limit).unwrap_or(i64::MAX),
                        i64::try_from(offset).unwrap_or(i64::MAX)
                    ],
                    roll_from_row,
                )?
                .collect::<Result<Vec<_>, _>>()?;
            Ok((rolls, total.max(0) as u64))
        })
    }

    /// An operator's request of an unfinished roll, with its audit event. `Ok(None)`, writing
    /// nothing, when the roll does not exist or has ended; otherwise the roll as it is now.
    pub fn request_roll(
        &self,
        id: &str,
        request: RollRequest,
        audit: Option<&NewAuditEvent>,
        now_ms: i64,
    ) -> Result<Option<Roll>, StoreError> {
        let sql = match request {
            RollRequest::Pause => {
                "UPDATE rolling_restarts SET pause_requested = 1, updated_at_ms = ?2
                 WHERE id = ?1 AND state IN ('running', 'paused', 'aborting')"
            }
            RollRequest::Resume => {
                "UPDATE rolling_restarts SET pause_requested = 0, updated_at_ms = ?2
                 WHERE id = ?1 AND state IN ('running', 'paused', 'aborting')"
            }
            RollRequest::Abort => {
                "UPDATE rolling_restarts SET abort_requested = 1, updated_at_ms = ?2
                 WHERE id = ?1 AND state IN ('running', 'paused', 'aborting')"
            }
        };
        self.write(|tx| {
            let n = tx.prepare_cached(sql)?.execute(params![id, now_ms])?;
            if n == 0 {
                return Ok(None);
            }
            if let Some(e) = audit {
                audit::insert_tx(tx, e)?;
            }
            roll_tx(tx, id)
        })
    }

    /// Writes what the executor changed of a roll (state, position, phase, progress, error),
    /// never the operators' flags. A roll that ends releases the mutation slot it holds, and
    /// the audit events are written in the same transaction. A restart command in `command`
    /// is queued in it too; its id is stored in the progress.
    pub fn save_roll(
        &self,
        roll: &Roll,
        command: Option<&NewAgentCommand>,
        cancel_command: Option<i64>,
        audit: &[NewAuditEvent],
        now_ms: i64,
    ) -> Result<Roll, StoreError> {
        self.write(|tx| {
            if let Some(id) = cancel_command {
                tx.prepare_cached(
                    "UPDATE agent_commands SET state = 'cancelled', finished_at_ms = ?2,
                        detail = 'cancelled: the rolling restart stopped before its outcome'
                     WHERE id = ?1 AND state IN ('pending', 'sent')",
                )?
                .execute(params![id, now_ms])?;
            }
            let mut progress = roll.progress.clone();
            if let Some(cmd) = command {
                let queued = queue_command_tx(tx, cmd, None, now_ms)?.ok_or_else(|| {
                    StoreError::Invalid(format!(
                        "the agent of broker {} still has an unfinished command",
                        cmd.broker_id
                    ))
                })?;
                progress.command_id = Some(queued.id);
            }
            let n = tx
                .prepare_cached(
                    "UPDATE rolling_restarts SET state = ?2, position = ?3, phase = ?4,
                        phase_started_at_ms = ?5, progress = ?6, error = ?7, failed_broker = ?8,
                        finished_at_ms = ?9, updated_at_ms = ?10
                     WHERE id = ?1",
                )?
                .execute(params![
                    roll.id,
                    roll.state.as_str(),
                    i64::try_from(roll.position).unwrap_or(i64::MAX),
                    roll.phase.as_str(),
                    roll.phase_started_at_ms,
                    to_json(&progress)?,
                    roll.error,
                    roll.failed_broker,
                    roll.finished_at_ms,
                    now_ms,
                ])?;
            if n == 0 {
                return Err(StoreError::Invalid(format!(
                    "no rolling restart {}",
                    roll.id
                )));
            }
            for e in audit {
                audit::insert_tx(tx, e)?;
            }
            if !roll.state.is_unfinished() {
                tx.prepare_cached(
                    "UPDATE mutation_slot SET holder = NULL, purpose = NULL, operation_id = NULL,
                        acquired_at_ms = NULL, expires_at_ms = NULL
                     WHERE id = 1 AND holder = ?1",
                )?
                .execute([roll_holder(&roll.id)])?;
            }
            roll_tx(tx, &roll.id)?
                .ok_or_else(|| StoreError::Invalid(format!("no rolling restart {}", roll.id)))
        })
    }
}

fn roll_tx(tx: &Transaction<'_>, id: &str) -> Result<Option<Roll>, StoreError> {
    Ok(tx
        .prepare_cached(&format!(
            "SELECT {ROLL_COLUMNS} FROM rolling_restarts WHERE id = ?1"
        ))?
        .query_row([id], roll_from_row)
        .optional()?)
}

fn queue_command_tx(
    tx: &Transaction<'_>,
    cmd: &NewAgentCommand,
    audit: Option<&NewAuditEvent>,
    now_ms: i64,
) -> Result<Option<AgentCommand>, StoreError> {
    let open: Option<i64> = tx
        .prepare_cached(
            "SELECT id FROM agent_commands WHERE broker_id = ?1 AND state IN ('pending', 'sent')
             LIMIT 1",
        )?
        .query_row([cmd.broker_id], |r| r.get(0))
        .optional()?;
    if open.is_some() {
        return Ok(None);
    }
    let audit_event_id = audit.map(|e| audit::insert_tx(tx, e)).transpose()?;
    let id: i64 = tx
        .prepare_cached(
            "INSERT INTO agent_commands (broker_id, kind, state, roll_id, target_version,
                target_digest, requested_by, audit_event_id, created_at_ms)
             VALUES (?1, ?2, 'pending', ?3, ?4, ?5, ?6, ?7, ?8) RETURNING id",
        )?
        .query_row(
            params![
                cmd.broker_id,
                cmd.kind.as_str(),
                cmd.roll_id,
                cmd.target_version,
                cmd.target_digest,
                cmd.requested_by,
                audit_event_id,
                now_ms,
            ],
            |r| r.get(0),
        )?;
    Ok(tx
        .prepare_cached(&format!(
            "SELECT {COMMAND_COLUMNS} FROM agent_commands WHERE id = ?1"
        ))?
        .query_row([id], command_from_row)
        .optional()?)
}
