//! `approvals`: MCP mutations waiting for a second person's decision.
//!
//! `pending -> approved -> executed | failed`, `pending -> rejected`, `pending -> expired`.
//! An approval is expired once `now_ms >= expires_at_ms`. Who may decide (the approver must differ
//! from the requester, write scope) is checked by the MCP dispatcher, not here: chat approvals,
//! for instance, are decided by their own requester.

use std::fmt;
use std::str::FromStr;

use rusqlite::{params, OptionalExtension, Row, Transaction};
use serde::{Deserialize, Serialize};

use crate::util::{
    bad_enum, json_col, json_col_opt, json_text, random_hex_token, require_non_empty,
};
use crate::{Store, StoreError};

/// State of a pending mutation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ApprovalState {
    Pending,
    Approved,
    Rejected,
    Expired,
    Executed,
    Failed,
}

impl ApprovalState {
    pub const ALL: [ApprovalState; 6] = [
        ApprovalState::Pending,
        ApprovalState::Approved,
        ApprovalState::Rejected,
        ApprovalState::Expired,
        ApprovalState::Executed,
        ApprovalState::Failed,
    ];

    /// The value stored in `approvals.state`.
    pub fn as_str(self) -> &'static str {
        match self {
            ApprovalState::Pending => "pending",
            ApprovalState::Approved => "approved",
            ApprovalState::Rejected => "rejected",
            ApprovalState::Expired => "expired",
            ApprovalState::Executed => "executed",
            ApprovalState::Failed => "failed",
        }
    }
}

impl fmt::Display for ApprovalState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for ApprovalState {
    type Err = StoreError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::ALL
            .into_iter()
            .find(|v| v.as_str() == s)
            .ok_or_else(|| StoreError::Invalid(format!("unknown approval state {s:?}")))
    }
}

/// The decision on a pending approval.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Decision {
    Approve,
    Reject,
}

impl Decision {
    fn state(self) -> ApprovalState {
        match self {
            Decision::Approve => ApprovalState::Approved,
            Decision::Reject => ApprovalState::Rejected,
        }
    }
}

/// A mutation to queue for approval.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct NewApproval {
    /// The MCP tool, e.g. `apply_proposal`.
    pub tool: String,
    /// The tool's arguments, run unchanged on approval.
    pub arguments: serde_json::Value,
    /// The requesting identity; `None` for an unauthenticated client.
    pub requested_by: Option<String>,
    /// How long it may wait for a decision.
    pub ttl_ms: i64,
}

/// One row of `approvals`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Approval {
    /// 32 lowercase hex digits, random: the approval token shown to clients.
    pub id: String,
    pub tool: String,
    pub arguments: serde_json::Value,
    pub requested_by: Option<String>,
    pub created_at_ms: i64,
    pub expires_at_ms: i64,
    pub state: ApprovalState,
    pub decided_by: Option<String>,
    pub decided_at_ms: Option<i64>,
    /// What the mutation returned (set by [`Store::finish_approval`]).
    pub result: Option<serde_json::Value>,
}

const COLUMNS: &str = "id, tool, arguments, requested_by, created_at_ms, expires_at_ms, state, \
                       decided_by, decided_at_ms, result";

fn from_row(row: &Row<'_>) -> rusqlite::Result<Approval> {
    let state: String = row.get(6)?;
    let state = state
        .parse()
        .map_err(|_| bad_enum(6, "approval state", &state))?;
    Ok(Approval {
        id: row.get(0)?,
        tool: row.get(1)?,
        arguments: json_col(row, 2)?,
        requested_by: row.get(3)?,
        created_at_ms: row.get(4)?,
        expires_at_ms: row.get(5)?,
        state,
        decided_by: row.get(7)?,
        decided_at_ms: row.get(8)?,
        result: json_col_opt(row, 9)?,
    })
}

fn get(tx: &Transaction<'_>, id: &str) -> Result<Option<Approval>, StoreError> {
    Ok(tx
        .prepare_cached(&format!("SELECT {COLUMNS} FROM approvals WHERE id = ?1"))?
        .query_row([id], from_row)
        .optional()?)
}

fn set_state(tx: &Transaction<'_>, id: &str, state: ApprovalState) -> Result<(), StoreError> {
    tx.prepare_cached("UPDATE approvals SET state = ?2 WHERE id = ?1")?
        .execute(params![id, state.as_str()])?;
    Ok(())
}

impl Store {
    /// Queues a mutation; the returned approval is `pending` until `now_ms + ttl_ms`.
    pub fn create_approval(&self, a: &NewApproval, now_ms: i64) -> Result<Approval, StoreError> {
        require_non_empty("approval tool", &a.tool)?;
        if a.ttl_ms <= 0 {
            return Err(StoreError::Invalid(format!(
                "approval ttl must be positive, got {} ms",
                a.ttl_ms
            )));
        }
        let approval = Approval {
            id: random_hex_token()?,
            tool: a.tool.clone(),
            arguments: a.arguments.clone(),
            requested_by: a.requested_by.clone(),
            created_at_ms: now_ms,
            expires_at_ms: now_ms.saturating_add(a.ttl_ms),
            state: ApprovalState::Pending,
            decided_by: None,
            decided_at_ms: None,
            result: None,
        };
        self.write(|tx| {
            tx.prepare_cached(
                "INSERT INTO approvals (id, tool, arguments, requested_by, created_at_ms,
                    expires_at_ms, state)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
            )?
            .execute(params![
                approval.id,
                approval.tool,
                json_text(&approval.arguments),
                approval.requested_by,
                approval.created_at_ms,
                approval.expires_at_ms,
                approval.state.as_str(),
            ])?;
            Ok(())
        })?;
        Ok(approval)
    }

    /// One approval by id, in whatever state.
    pub fn approval(&self, id: &str) -> Result<Option<Approval>, StoreError> {
        let conn = self.conn()?;
        let mut stmt =
            conn.prepare_cached(&format!("SELECT {COLUMNS} FROM approvals WHERE id = ?1"))?;
        Ok(stmt.query_row([id], from_row).optional()?)
    }

    /// Approvals still pending and not expired at `now_ms`, oldest first.
    pub fn pending_approvals(&self, now_ms: i64) -> Result<Vec<Approval>, StoreError> {
        let conn = self.conn()?;
        let mut stmt = conn.prepare_cached(&format!(
            "SELECT {COLUMNS} FROM approvals
             WHERE state = 'pending' AND expires_at_ms > ?1
             ORDER BY created_at_ms, id"
        ))?;
        let rows = stmt.query_map([now_ms], from_row)?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// Moves a pending approval to approved or rejected, once: of concurrent deciders exactly one
    /// wins. Fails with [`StoreError::NotFound`] for an unknown id, and with
    /// [`StoreError::Conflict`] when it is no longer pending or has expired at `now_ms` (in which
    /// case it is marked `expired`).
    pub fn decide_approval(
        &self,
        id: &str,
        decision: Decision,
        decided_by: &str,
        now_ms: i64,
    ) -> Result<Approval, StoreError> {
        require_non_empty("decided_by", decided_by)?;
        let mut conn = self.conn()?;
        let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
        let Some(mut a) = get(&tx, id)? else {
            return Err(StoreError::NotFound(format!("approval {id}")));
        };
        if a.state != ApprovalState::Pending {
            return Err(StoreError::Conflict(format!(
                "approval {id} is already {}",
                a.state
            )));
        }
        if now_ms >= a.expires_at_ms {
            set_state(&tx, id, ApprovalState::Expired)?;
            tx.commit()?;
            return Err(StoreError::Conflict(format!("approval {id} has expired")));
        }
        a.state = decision.state();
        a.decided_by = Some(decided_by.to_string());
        a.decided_at_ms = Some(now_ms);
        tx.prepare_cached(
            "UPDATE approvals SET state = ?2, decided_by = ?3, decided_at_ms = ?4
             WHERE id = ?1 AND state = 'pending'",
        )?
        .execute(params![id, a.state.as_str(), decided_by, now_ms])?;
        tx.commit()?;
        Ok(a)
    }

    /// Records the outcome of an approved mutation: approved -> executed (`ok`) or failed.
    /// Fails with [`StoreError::Conflict`] unless the approval is `approved`.
    pub fn finish_approval(
        &self,
        id: &str,
        ok: bool,
        result: &serde_json::Value,
    ) -> Result<(), StoreError> {
        let state = if ok {
            ApprovalState::Executed
        } else {
            ApprovalState::Failed
        };
        self.write(|tx| {
            let Some(a) = get(tx, id)? else {
                return Err(StoreError::NotFound(format!("approval {id}")));
            };
            if a.state != ApprovalState::Approved {
                return Err(StoreError::Conflict(format!(
                    "approval {id} is {}, not approved",
                    a.state
                )));
            }
            tx.prepare_cached("UPDATE approvals SET state = ?2, result = ?3 WHERE id = ?1")?
                .execute(params![id, state.as_str(), json_text(result)])?;
            Ok(())
        })
    }

    /// Marks every pending approval whose expiry has passed at `now_ms` as expired; returns how
    /// many changed.
    pub fn expire_approvals(&self, now_ms: i64) -> Result<usize, StoreError> {
        self.write(|tx| {
            Ok(tx
                .prepare_cached(
                    "UPDATE approvals SET state = 'expired'
                     WHERE state = 'pending' AND expires_at_ms <= ?1",
                )?
                .execute([now_ms])?)
        })
    }
}
