//! `operations` and `moves`: reassignment operations queued for the executor, and `maintenance`.
//!
//! Queuing takes the mutation slot in the same transaction that inserts the operation, its moves
//! and its audit event, so a request either starts an operation that holds the slot or changes
//! nothing. The executor then renews that lease (holder `op:<id>`) and writes every submission
//! before sending it, fenced by the lease.

use rusqlite::{params, OptionalExtension, Row, Transaction};
use serde::{Deserialize, Serialize};

use crate::slot::{check_fence, Lease, SlotHolder};
use crate::util::{bad_enum, json_col, json_text, random_hex_token, require_non_empty};
use crate::{audit, NewAuditEvent, Store, StoreError};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum OperationState {
    Pending,
    Running,
    Completed,
    Failed,
    Cancelled,
}

impl OperationState {
    pub fn as_str(self) -> &'static str {
        match self {
            OperationState::Pending => "pending",
            OperationState::Running => "running",
            OperationState::Completed => "completed",
            OperationState::Failed => "failed",
            OperationState::Cancelled => "cancelled",
        }
    }

    fn parse(s: &str) -> Option<Self> {
        Some(match s {
            "pending" => OperationState::Pending,
            "running" => OperationState::Running,
            "completed" => OperationState::Completed,
            "failed" => OperationState::Failed,
            "cancelled" => OperationState::Cancelled,
            _ => return None,
        })
    }

    pub fn is_finished(self) -> bool {
        matches!(
            self,
            OperationState::Completed | OperationState::Failed | OperationState::Cancelled
        )
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum MoveState {
    /// Waiting for broker capacity (also between the steps of a move).
    Pending,
    /// Recorded as about to be sent; the controller has not confirmed it yet.
    Submitting,
    /// Accepted by the controller and being moved by the cluster.
    Active,
    Completed,
    Failed,
    Cancelled,
}

impl MoveState {
    pub fn as_str(self) -> &'static str {
        match self {
            MoveState::Pending => "pending",
            MoveState::Submitting => "submitting",
            MoveState::Active => "active",
            MoveState::Completed => "completed",
            MoveState::Failed => "failed",
            MoveState::Cancelled => "cancelled",
        }
    }

    fn parse(s: &str) -> Option<Self> {
        Some(match s {
            "pending" => MoveState::Pending,
            "submitting" => MoveState::Submitting,
            "active" => MoveState::Active,
            "completed" => MoveState::Completed,
            "failed" => MoveState::Failed,
            "cancelled" => MoveState::Cancelled,
            _ => return None,
        })
    }

    pub fn is_finished(self) -> bool {
        matches!(
            self,
            MoveState::Completed | MoveState::Failed | MoveState::Cancelled
        )
    }

    /// Sent to the cluster (or about to be) and not finished.
    pub fn is_in_flight(self) -> bool {
        matches!(self, MoveState::Submitting | MoveState::Active)
    }
}

/// A move to queue.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct NewMove {
    pub topic: String,
    pub partition: i32,
    pub source: Vec<i32>,
    pub target: Vec<i32>,
    /// Submissions the move takes (one added replica each), at least 1.
    pub steps: u32,
    /// Bytes the move copies (partition size × added replicas).
    pub bytes_total: u64,
    /// Moves of a higher phase start after every move of the lower phases finished.
    #[serde(default)]
    pub phase: u32,
}

/// An operation to queue.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct NewOperation {
    /// e.g. `proposal`, `bulk`, `redistribute`, `maintenance`, `heal`, `revert`.
    pub kind: String,
    /// e.g. `BULK_MANUAL`.
    pub strategy: String,
    pub method: String,
    pub user_id: Option<String>,
    pub requested_by: Option<String>,
    pub description: Option<String>,
    pub proposal_id: Option<String>,
    /// Topology fingerprint the moves were planned on.
    pub fingerprint: Option<String>,
    pub forced: bool,
    pub detail: serde_json::Value,
    pub moves: Vec<NewMove>,
}

/// What [`Store::queue_operation`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Queued {
    /// The operation holds the slot and waits for the executor.
    Started {
        id: String,
        lease: Lease,
        audit_event_id: Option<i64>,
    },
    /// Another mutation holds the slot or an operation is unfinished; nothing was written.
    Busy(Busy),
}

/// Why the slot is not free.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Busy {
    pub holder: Option<SlotHolder>,
    pub operation_id: Option<String>,
    /// An unfinished rolling restart.
    pub rolling_restart_id: Option<String>,
}

impl Busy {
    pub fn message(&self) -> String {
        if let Some(roll) = &self.rolling_restart_id {
            return format!(
                "rolling restart {roll} is in progress: reassignments, drains, leader elections, \
                 self-healing and proposal applies wait until it completes or is aborted"
            );
        }
        match (&self.operation_id, &self.holder) {
            (Some(op), _) => format!("reassignment operation {op} is still running"),
            (None, Some(h)) => format!(
                "the mutation slot is held by {} ({}) until {}",
                h.holder, h.purpose, h.expires_at_ms
            ),
            (None, None) => "the mutation slot is busy".to_string(),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct OperationRecord {
    pub id: String,
    pub kind: String,
    pub strategy: String,
    pub state: OperationState,
    pub cancel_requested: bool,
    pub method: String,
    pub user_id: Option<String>,
    pub requested_by: Option<String>,
    pub description: Option<String>,
    pub proposal_id: Option<String>,
    pub fingerprint: Option<String>,
    pub forced: bool,
    pub slot_token: Option<i64>,
    pub audit_event_id: Option<i64>,
    pub reason: Option<String>,
    pub detail: serde_json::Value,
    pub created_at_ms: i64,
    pub started_at_ms: Option<i64>,
    pub finished_at_ms: Option<i64>,
    pub updated_at_ms: i64,
}

impl OperationRecord {
    /// The slot holder name of this operation's lease.
    pub fn holder(&self) -> String {
        holder_of(&self.id)
    }
}

/// The slot holder name an operation's lease uses.
pub fn holder_of(operation_id: &str) -> String {
    format!("op:{operation_id}")
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct MoveRecord {
    pub operation_id: String,
    pub seq: i64,
    pub phase: u32,
    pub topic: String,
    pub partition: i32,
    pub source: Vec<i32>,
    pub target: Vec<i32>,
    pub state: MoveState,
    pub step: u32,
    pub steps: u32,
    pub submitted: Option<Vec<i32>>,
    pub submitted_at_ms: Option<i64>,
    pub submissions: u32,
    pub bytes_total: u64,
    pub bytes_done: u64,
    pub rate: Option<f64>,
    pub reason: Option<String>,
    pub timed_out: bool,
    pub cancel_confirmed: bool,
    pub started_at_ms: Option<i64>,
    pub finished_at_ms: Option<i64>,
    /// Since when an in-flight move cannot progress (a broker it needs down, or no copied bytes
    /// since then); None when it is not stalled. `reason` says why.
    pub stalled_since_ms: Option<i64>,
    /// The brokers down that a stalled move needs; empty when it stalls for want of progress.
    pub stalled_brokers: Vec<i32>,
}

impl MoveRecord {
    /// Stalled: in flight, and the executor found its cause (`reason`, `stalled_since_ms`).
    pub fn is_stalled(&self) -> bool {
        self.state.is_in_flight() && self.stalled_since_ms.is_some()
    }
}

/// A page of operations, newest first.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct OperationPage {
    pub operations: Vec<OperationRecord>,
    pub total: u64,
}

/// What [`Store::request_cancel`] found.
#[derive(Debug, Clone, PartialEq)]
pub enum CancelRequest {
    Requested(OperationRecord),
    AlreadyFinished(OperationRecord),
    NotFound,
}

/// Move counts for metrics.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct MoveStats {
    /// Moves per state name (`pending`, `submitting`, `active`, ...).
    pub by_state: std::collections::BTreeMap<String, u64>,
    /// How long each completed move took, from its first submission to completion.
    pub durations_ms: Vec<i64>,
    /// In-flight moves that are stalled (counted in their state too).
    pub stalled: u64,
}

/// A broker in maintenance.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Maintenance {
    pub broker_id: i32,
    pub entered_at_ms: i64,
    pub requested_by: Option<String>,
    pub operation_id: Option<String>,
    pub reason: Option<String>,
}

const OP_COLUMNS: &str = "id, kind, strategy, state, cancel_requested, method, user_id, \
    requested_by, description, proposal_id, fingerprint, forced, slot_token, audit_event_id, \
    reason, detail, created_at_ms, started_at_ms, finished_at_ms, updated_at_ms";

const MOVE_COLUMNS: &str = "operation_id, seq, topic, partition, source, target, state, step, \
    steps, submitted, submitted_at_ms, submissions, bytes_total, bytes_done, rate, reason, \
    timed_out, cancel_confirmed, started_at_ms, finished_at_ms, phase, stalled_since_ms, \
    stalled_brokers";

fn op_from_row(r: &Row<'_>) -> rusqlite::Result<OperationRecord> {
    let state: String = r.get(3)?;
    Ok(OperationRecord {
        id: r.get(0)?,
        kind: r.get(1)?,
        strategy: r.get(2)?,
        state: OperationState::parse(&state).ok_or_else(|| bad_enum(3, "state", &state))?,
        cancel_requested: r.get(4)?,
        method: r.get(5)?,
        user_id: r.get(6)?,
        requested_by: r.get(7)?,
        description: r.get(8)?,
        proposal_id: r.get(9)?,
        fingerprint: r.get(10)?,
        forced: r.get(11)?,
        slot_token: r.get(12)?,
        audit_event_id: r.get(13)?,
        reason: r.get(14)?,
        detail: json_col(r, 15)?,
        created_at_ms: r.get(16)?,
        started_at_ms: r.get(17)?,
        finished_at_ms: r.get(18)?,
        updated_at_ms: r.get(19)?,
    })
}

fn ids(r: &Row<'_>, idx: usize) -> rusqlite::Result<Vec<i32>> {
    let v = json_col(r, idx)?;
    serde_json::from_value(v).map_err(|e| {
        rusqlite::Error::FromSqlConversionFailure(idx, rusqlite::types::Type::Text, Box::new(e))
    })
}

fn ids_opt(r: &Row<'_>, idx: usize) -> rusqlite::Result<Option<Vec<i32>>> {
    let s: Option<String> = r.get(idx)?;
    s.map(|_| ids(r, idx)).transpose()
}

fn move_from_row(r: &Row<'_>) -> rusqlite::Result<MoveRecord> {
    let state: String = r.get(6)?;
    let bytes_total: i64 = r.get(12)?;
    let bytes_done: i64 = r.get(13)?;
    Ok(MoveRecord {
        operation_id: r.get(0)?,
        seq: r.get(1)?,
        topic: r.get(2)?,
        partition: r.get(3)?,
        source: ids(r, 4)?,
        target: ids(r, 5)?,
        state: MoveState::parse(&state).ok_or_else(|| bad_enum(6, "move state", &state))?,
        step: r.get(7)?,
        steps: r.get(8)?,
        submitted: ids_opt(r, 9)?,
        submitted_at_ms: r.get(10)?,
        submissions: r.get(11)?,
        bytes_total: bytes_total.max(0) as u64,
        bytes_done: bytes_done.max(0) as u64,
        rate: r.get(14)?,
        reason: r.get(15)?,
        timed_out: r.get(16)?,
        cancel_confirmed: r.get(17)?,
        started_at_ms: r.get(18)?,
        finished_at_ms: r.get(19)?,
        phase: r.get(20)?,
        stalled_since_ms: r.get(21)?,
        stalled_brokers: ids_opt(r, 22)?.unwrap_or_default(),
    })
}

fn ids_text(v: &[i32]) -> String {
    json_text(&serde_json::json!(v))
}

fn unfinished_operation(tx: &Transaction<'_>) -> Result<Option<String>, StoreError> {
    Ok(tx
        .prepare_cached(
            "SELECT id FROM operations WHERE state IN ('pending', 'running')
             ORDER BY created_at_ms, id LIMIT 1",
        )?
        .query_row([], |r| r.get(0))
        .optional()?)
}

fn i64_of(v: u64) -> i64 {
    i64::try_from(v).unwrap_or(i64::MAX)
}

fn validate(op: &NewOperation) -> Result<(), StoreError> {
    require_non_empty("operation kind", &op.kind)?;
    require_non_empty("operation strategy", &op.strategy)?;
    require_non_empty("operation method", &op.method)?;
    if op.moves.is_empty() {
        return Err(StoreError::Invalid(
            "an operation needs at least one move".into(),
        ));
    }
    for m in &op.moves {
        require_non_empty("move topic", &m.topic)?;
        if m.partition < 0 || m.target.is_empty() || m.steps == 0 {
            return Err(StoreError::Invalid(format!(
                "invalid move of {}/{}: partition, target and steps must be set",
                m.topic, m.partition
            )));
        }
    }
    Ok(())
}

impl Store {
    /// Queues an operation: in one transaction, takes the mutation slot (holder `op:<id>`, for
    /// `ttl_ms`), inserts the operation, its moves and `audit` (the operation points at the
    /// event). Returns [`Queued::Busy`], writing nothing, while the slot is held or another
    /// operation is unfinished.
    ///
    /// An operation an agent started (audit method `MCP` or `CHAT`) also gets one audit event per partition, in the same transaction: same action,
    /// method, approver and requester, target `topic-partition`, `before`/`after` its replica
    /// lists (each revertible on its own), `relatedEventId` the operation's event.
    pub fn queue_operation(
        &self,
        op: &NewOperation,
        audit: Option<&NewAuditEvent>,
        now_ms: i64,
        ttl_ms: i64,
    ) -> Result<Queued, StoreError> {
        self.queue_operation_predicted(op, None, audit, now_ms, ttl_ms)
    }

    /// [`Store::queue_operation`], keeping `prediction` (the loads the operation's moves leave)
    /// with the operation in the same transaction.
    pub fn queue_operation_predicted(
        &self,
        op: &NewOperation,
        prediction: Option<&crate::Prediction>,
        audit: Option<&NewAuditEvent>,
        now_ms: i64,
        ttl_ms: i64,
    ) -> Result<Queued, StoreError> {
        validate(op)?;
        let id = format!("op-{}", &random_hex_token()?[..16]);
        let holder = holder_of(&id);
        self.write(|tx| {
            if let Some(busy) = busy(tx, now_ms)? {
                return Ok(Queued::Busy(busy));
            }
            let lease = crate::slot::take(
                tx,
                &holder,
                "reassignment",
                Some(&id),
                now_ms,
                ttl_ms,
            )?;
            let audit_event_id = audit.map(|e| audit::insert_tx(tx, e)).transpose()?;
            tx.prepare_cached(
                "INSERT INTO operations (id, kind, strategy, state, method, user_id, requested_by,
                    description, proposal_id, fingerprint, forced, slot_token, audit_event_id,
                    detail, created_at_ms, updated_at_ms)
                 VALUES (?1, ?2, ?3, 'pending', ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?14)",
            )?
            .execute(params![
                id,
                op.kind,
                op.strategy,
                op.method,
                op.user_id,
                op.requested_by,
                op.description,
                op.proposal_id,
                op.fingerprint,
                op.forced,
                lease.token,
                audit_event_id,
                json_text(&op.detail),
                now_ms,
            ])?;
            let mut stmt = tx.prepare_cached(
                "INSERT INTO moves (operation_id, seq, topic, partition, source, target, steps,
                    bytes_total, phase)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
            )?;
            for (seq, m) in op.moves.iter().enumerate() {
                stmt.execute(params![
                    id,
                    seq as i64,
                    m.topic,
                    m.partition,
                    ids_text(&m.source),
                    ids_text(&m.target),
                    m.steps,
                    i64_of(m.bytes_total),
                    m.phase,
                ])?;
            }
            if let Some(p) = prediction {
                crate::realized::insert_prediction_tx(tx, &id, p)?;
            }
            if let Some(e) = audit.filter(|e| agent_method(&e.method)) {
                for m in &op.moves {
                    audit::insert_tx(tx, &partition_event(e, &id, audit_event_id, m))?;
                }
            }
            Ok(Queued::Started {
                id: id.clone(),
                lease,
                audit_event_id,
            })
        })
    }

    /// Takes the slot for a short mutation that is not an operation (e.g. a leader election),
    /// only when no operation is unfinished. Release it with [`Store::release_slot`].
    pub fn acquire_idle_slot(
        &self,
        holder: &str,
        purpose: &str,
        now_ms: i64,
        ttl_ms: i64,
    ) -> Result<Result<Lease, Busy>, StoreError> {
        require_non_empty("slot holder", holder)?;
        self.write(|tx| {
            if let Some(busy) = busy(tx, now_ms)? {
                return Ok(Err(busy));
            }
            Ok(Ok(crate::slot::take(
                tx, holder, purpose, None, now_ms, ttl_ms,
            )?))
        })
    }

    /// Whether a mutating reassignment could start now.
    pub fn reassignment_busy(&self, now_ms: i64) -> Result<Option<Busy>, StoreError> {
        self.read(|tx| busy(tx, now_ms))
    }

    /// The oldest unfinished operation (the one the executor runs).
    pub fn next_operation(&self) -> Result<Option<OperationRecord>, StoreError> {
        self.read(|tx| {
            Ok(tx
                .prepare_cached(&format!(
                    "SELECT {OP_COLUMNS} FROM operations WHERE state IN ('pending', 'running')
                     ORDER BY created_at_ms, id LIMIT 1"
                ))?
                .query_row([], op_from_row)
                .optional()?)
        })
    }

    pub fn operation(&self, id: &str) -> Result<Option<OperationRecord>, StoreError> {
        self.read(|tx| {
            Ok(tx
                .prepare_cached(&format!(
                    "SELECT {OP_COLUMNS} FROM operations WHERE id = ?1"
                ))?
                .query_row([id], op_from_row)
                .optional()?)
        })
    }

    /// Operations newest first, optionally only those in `state`.
    pub fn operations(
        &self,
        state: Option<OperationState>,
        limit: u64,
        offset: u64,
    ) -> Result<OperationPage, StoreError> {
        let state = state.map(OperationState::as_str);
        self.read(|tx| {
            let total: i64 = tx
                .prepare_cached("SELECT count(*) FROM operations WHERE ?1 IS NULL OR state = ?1")?
                .query_row([state], |r| r.get(0))?;
            let operations = tx
                .prepare_cached(&format!(
                    "SELECT {OP_COLUMNS} FROM operations WHERE ?1 IS NULL OR state = ?1
                     ORDER BY created_at_ms DESC, id DESC LIMIT ?2 OFFSET ?3"
                ))?
                .query_map(params![state, i64_of(limit), i64_of(offset)], op_from_row)?
                .collect::<Result<Vec<_>, _>>()?;
            Ok(OperationPage {
                operations,
                total: total.max(0) as u64,
            })
        })
    }

    /// The moves of an operation in their order.
    pub fn moves(&self, operation_id: &str) -> Result<Vec<MoveRecord>, StoreError> {
        self.read(|tx| {
            Ok(tx
                .prepare_cached(&format!(
                    "SELECT {MOVE_COLUMNS} FROM moves WHERE operation_id = ?1 ORDER BY seq"
                ))?
                .query_map([operation_id], move_from_row)?
                .collect::<Result<Vec<_>, _>>()?)
        })
    }

    /// Moves the cluster may still be moving, of any operation: submitted or active, and
    /// cancelled moves whose cancellation is unconfirmed.
    pub fn tracked_moves(&self) -> Result<Vec<MoveRecord>, StoreError> {
        self.read(|tx| {
            Ok(tx
                .prepare_cached(&format!(
                    "SELECT {MOVE_COLUMNS} FROM moves
                     WHERE state IN ('submitting', 'active')
                        OR (state = 'cancelled' AND cancel_confirmed = 0)
                     ORDER BY operation_id, seq"
                ))?
                .query_map([], move_from_row)?
                .collect::<Result<Vec<_>, _>>()?)
        })
    }

    /// Marks a pending operation running (fenced by its lease).
    pub fn start_operation(&self, lease: &Lease, id: &str, now_ms: i64) -> Result<(), StoreError> {
        self.write(|tx| {
            check_fence(tx, lease, now_ms)?;
            tx.prepare_cached(
                "UPDATE operations SET state = 'running', started_at_ms = coalesce(started_at_ms, ?2),
                    slot_token = ?3, updated_at_ms = ?2
                 WHERE id = ?1 AND state IN ('pending', 'running')",
            )?
            .execute(params![id, now_ms, lease.token])?;
            Ok(())
        })
    }

    /// Writes the progress columns of changed moves (matched by operation and seq; their plan —
    /// topic, partition, source, target, steps, bytes total, phase — never changes); with a
    /// lease, only while it holds the slot (all or nothing).
    pub fn update_moves(
        &self,
        lease: Option<&Lease>,
        updates: &[MoveRecord],
        now_ms: i64,
    ) -> Result<(), StoreError> {
        self.update_moves_audited(lease, updates, &[], now_ms)
    }

    /// [`Store::update_moves`] and `audit` appended in the same transaction: the moves' new
    /// state and the events that record it are written together or not at all.
    pub fn update_moves_audited(
        &self,
        lease: Option<&Lease>,
        updates: &[MoveRecord],
        audit: &[NewAuditEvent],
        now_ms: i64,
    ) -> Result<(), StoreError> {
        if updates.is_empty() && audit.is_empty() {
            return Ok(());
        }
        self.write(|tx| {
            if let Some(lease) = lease {
                check_fence(tx, lease, now_ms)?;
            }
            let mut stmt = tx.prepare_cached(
                "UPDATE moves SET state = ?3, step = ?4, submitted = ?5, submitted_at_ms = ?6,
                    submissions = ?7, bytes_done = ?8, rate = ?9, reason = ?10, timed_out = ?11,
                    cancel_confirmed = ?12, started_at_ms = ?13, finished_at_ms = ?14,
                    stalled_since_ms = ?15, stalled_brokers = ?16
                 WHERE operation_id = ?1 AND seq = ?2",
            )?;
            for u in updates {
                // Only a move in flight can be stalled.
                let stalled = u.stalled_since_ms.filter(|_| u.state.is_in_flight());
                let n = stmt.execute(params![
                    u.operation_id,
                    u.seq,
                    u.state.as_str(),
                    u.step,
                    u.submitted.as_deref().map(ids_text),
                    u.submitted_at_ms,
                    u.submissions,
                    i64_of(u.bytes_done),
                    u.rate,
                    u.reason,
                    u.timed_out,
                    u.cancel_confirmed,
                    u.started_at_ms,
                    u.finished_at_ms,
                    stalled,
                    stalled.map(|_| ids_text(&u.stalled_brokers)),
                ])?;
                if n != 1 {
                    return Err(StoreError::NotFound(format!(
                        "move {} of operation {}",
                        u.seq, u.operation_id
                    )));
                }
            }
            for id in updates
                .iter()
                .map(|u| u.operation_id.as_str())
                .collect::<std::collections::BTreeSet<_>>()
            {
                tx.prepare_cached("UPDATE operations SET updated_at_ms = ?2 WHERE id = ?1")?
                    .execute(params![id, now_ms])?;
            }
            for e in audit {
                audit::insert_tx(tx, e)?;
            }
            Ok(())
        })
    }

    /// Finishes an operation, releases its lease (when given and still held) and appends
    /// `audit` (e.g. the status 500 event of a failure) in the same transaction.
    pub fn finish_operation(
        &self,
        lease: Option<&Lease>,
        id: &str,
        state: OperationState,
        reason: Option<&str>,
        audit: Option<&NewAuditEvent>,
        now_ms: i64,
    ) -> Result<(), StoreError> {
        if !state.is_finished() {
            return Err(StoreError::Invalid(format!(
                "{} is not a final operation state",
                state.as_str()
            )));
        }
        self.write(|tx| {
            tx.prepare_cached(
                "UPDATE operations SET state = ?2, reason = ?3, finished_at_ms = ?4,
                    updated_at_ms = ?4
                 WHERE id = ?1 AND state IN ('pending', 'running')",
            )?
            .execute(params![id, state.as_str(), reason, now_ms])?;
            if let Some(e) = audit {
                audit::insert_tx(tx, e)?;
            }
            if let Some(lease) = lease {
                crate::slot::release_tx(tx, lease)?;
            }
            Ok(())
        })
    }

    /// Asks the executor to cancel an unfinished operation.
    pub fn request_cancel(&self, id: &str, now_ms: i64) -> Result<CancelRequest, StoreError> {
        self.write(|tx| {
            let op = tx
                .prepare_cached(&format!(
                    "SELECT {OP_COLUMNS} FROM operations WHERE id = ?1"
                ))?
                .query_row([id], op_from_row)
                .optional()?;
            let Some(op) = op else {
                return Ok(CancelRequest::NotFound);
            };
            if op.state.is_finished() {
                return Ok(CancelRequest::AlreadyFinished(op));
            }
            tx.prepare_cached(
                "UPDATE operations SET cancel_requested = 1, updated_at_ms = ?2 WHERE id = ?1",
            )?
            .execute(params![id, now_ms])?;
            Ok(CancelRequest::Requested(OperationRecord {
                cancel_requested: true,
                updated_at_ms: now_ms,
                ..op
            }))
        })
    }

    /// For metrics: moves by state (all operations) and the durations (ms) of completed moves.
    pub fn move_stats(&self) -> Result<MoveStats, StoreError> {
        self.read(|tx| {
            let mut by_state = std::collections::BTreeMap::new();
            let mut stmt = tx.prepare_cached("SELECT state, count(*) FROM moves GROUP BY state")?;
            let rows = stmt.query_map([], |r| Ok((r.get::<_, String>(0)?, r.get::<_, i64>(1)?)))?;
            for row in rows {
                let (state, n) = row?;
                by_state.insert(state, n.max(0) as u64);
            }
            let durations_ms = tx
                .prepare_cached(
                    "SELECT finished_at_ms - started_at_ms FROM moves
                     WHERE state = 'completed' AND started_at_ms IS NOT NULL
                       AND finished_at_ms IS NOT NULL",
                )?
                .query_map([], |r| r.get::<_, i64>(0))?
                .collect::<Result<Vec<_>, _>>()?;
            let stalled: i64 = tx
                .prepare_cached(
                    "SELECT count(*) FROM moves
                     WHERE state IN ('submitting', 'active') AND stalled_since_ms IS NOT NULL",
                )?
                .query_row([], |r| r.get(0))?;
            Ok(MoveStats {
                by_state,
                durations_ms,
                stalled: stalled.max(0) as u64,
            })
        })
    }

    /// Puts a broker in maintenance (replacing an earlier entry for it).
    pub fn enter_maintenance(&self, m: &Maintenance) -> Result<(), StoreError> {
        self.write(|tx| {
            tx.prepare_cached(
                "INSERT INTO maintenance (broker_id, entered_at_ms, requested_by, operation_id, reason)
                 VALUES (?1, ?2, ?3, ?4, ?5)
                 ON CONFLICT (broker_id) DO UPDATE SET entered_at_ms = excluded.entered_at_ms,
                    requested_by = excluded.requested_by, operation_id = excluded.operation_id,
                    reason = excluded.reason",
            )?
            .execute(params![
                m.broker_id,
                m.entered_at_ms,
                m.requested_by,
                m.operation_id,
                m.reason
            ])?;
            Ok(())
        })
    }

    /// Takes a broker out of maintenance; false when it was not in maintenance.
    pub fn exit_maintenance(&self, broker_id: i32) -> Result<bool, StoreError> {
        self.write(|tx| {
            Ok(tx
                .prepare_cached("DELETE FROM maintenance WHERE broker_id = ?1")?
                .execute([broker_id])?
                == 1)
        })
    }

    /// Brokers in maintenance, by id.
    pub fn maintenance(&self) -> Result<Vec<Maintenance>, StoreError> {
        self.read(|tx| {
            Ok(tx
                .prepare_cached(
                    "SELECT broker_id, entered_at_ms, requested_by, operation_id, reason
                     FROM maintenance ORDER BY broker_id",
                )?
                .query_map([], |r| {
                    Ok(Maintenance {
                        broker_id: r.get(0)?,
                        entered_at_ms: r.get(1)?,
                        requested_by: r.get(2)?,
                        operation_id: r.get(3)?,
                        reason: r.get(4)?,
                    })
                })?
                .collect::<Result<Vec<_>, _>>()?)
        })
    }
}

/// The slot holder or unfinished operation that keeps a new mutation from starting.
pub(crate) fn busy(tx: &Transaction<'_>, now_ms: i64) -> Result<Option<Busy>, StoreError> {
    let holder = crate::slot::live_holder(tx, now_ms)?;
    let operation_id = unfinished_operation(tx)?;
    let rolling_restart_id = crate::agents::unfinished_roll(tx)?;
    if holder.is_none() && operation_id.is_none() && rolling_restart_id.is_none() {
        return Ok(None);
    }
    Ok(Some(Busy {
        holder,
        operation_id,
        rolling_restart_id,
    }))
}

/// Whether an audit `method` is an agent's (its reassignments are audited per partition).
fn agent_method(method: &str) -> bool {
    matches!(method, "MCP" | "CHAT")
}

/// The audit event of one partition of an operation an agent started.
fn partition_event(
    op_event: &NewAuditEvent,
    operation_id: &str,
    op_event_id: Option<i64>,
    m: &NewMove,
) -> NewAuditEvent {
    NewAuditEvent {
        target: Some(format!("{}-{}", m.topic, m.partition)),
        summary: serde_json::json!({
            "operationId": operation_id,
            "topic": m.topic,
            "partition": m.partition,
            "message": format!(
                "{}-{}: replicas {:?} -> {:?}",
                m.topic, m.partition, m.source, m.target
            ),
        }),
        before: Some(serde_json::json!({"replicas": m.source})),
        after: Some(serde_json::json!({"replicas": m.target})),
        related_event_id: op_event_id,
        details: None,
        ..op_event.clone()
    }
}
