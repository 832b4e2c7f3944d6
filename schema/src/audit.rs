//! `audit_events`: the append-only audit log of mutations.

use rusqlite::{params, OptionalExtension, Row};
use serde::{Deserialize, Serialize};

use crate::util::{json_col, json_col_opt, json_text, require_non_empty};
use crate::{Store, StoreError};

/// Page size of [`Store::list_audit`] when the query sets none.
pub const AUDIT_DEFAULT_LIMIT: u32 = 50;
/// The largest page [`Store::list_audit`] returns.
pub const AUDIT_MAX_LIMIT: u32 = 500;

/// The status of an audit event written before its change is sent (HTTP 102 Processing).
pub const AUDIT_INTENT: u16 = 102;
/// The details of an intent until it is completed.
pub const AUDIT_INTENT_DETAILS: &str =
    "in progress: written before the change was sent, completed once the change is read back";

/// An audit event to record.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct NewAuditEvent {
    pub at_ms: i64,
    /// e.g. `reassignments.apply`, `selfheal.apply`.
    pub action: String,
    /// `MCP`, `CHAT`, `INTERNAL`, or an HTTP method such as `POST`.
    pub method: String,
    /// The acting user or approver (`pilot` for the service's own changes).
    pub user_id: Option<String>,
    /// The requester (for MCP, the client that asked; the approver is `user_id`).
    pub requested_by: Option<String>,
    /// HTTP-like status, 100..=599 (`500` for a later failure).
    pub status: u16,
    /// What was changed, e.g. a topic, `topic-partition` or broker.
    pub target: Option<String>,
    pub summary: serde_json::Value,
    pub before: Option<serde_json::Value>,
    pub after: Option<serde_json::Value>,
    /// Whether a soft block was overridden with `force=true`.
    pub forced: bool,
    /// An earlier event this one refers to (e.g. the apply a later failure belongs to).
    pub related_event_id: Option<i64>,
    pub details: Option<String>,
}

/// A recorded audit event.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AuditEvent {
    pub id: i64,
    pub at_ms: i64,
    pub action: String,
    pub method: String,
    pub user_id: Option<String>,
    pub requested_by: Option<String>,
    pub status: u16,
    pub target: Option<String>,
    pub summary: serde_json::Value,
    pub before: Option<serde_json::Value>,
    pub after: Option<serde_json::Value>,
    pub forced: bool,
    pub related_event_id: Option<i64>,
    pub details: Option<String>,
}

/// Filters of [`Store::list_audit`]; every filter is optional and they combine with AND.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AuditQuery {
    /// Exact action name.
    pub action: Option<String>,
    /// Matches `user_id` or `requested_by` exactly.
    pub user: Option<String>,
    /// Events at or after this instant.
    pub since_ms: Option<i64>,
    /// Events at or before this instant.
    pub until_ms: Option<i64>,
    /// Case-insensitive (ASCII) substring of action, target, summary JSON or details.
    pub text: Option<String>,
    /// Page size: [`AUDIT_DEFAULT_LIMIT`] when unset, at most [`AUDIT_MAX_LIMIT`].
    pub limit: Option<u32>,
    /// Events to skip (after ordering newest first).
    pub offset: Option<u32>,
}

/// One page of audit events, newest first, and how many match in total.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AuditPage {
    pub events: Vec<AuditEvent>,
    /// Events matching the filters, before limit and offset.
    pub total: u64,
}

const COLUMNS: &str = "id, at_ms, action, method, user_id, requested_by, status, target, summary, \
                       before, after, forced, related_event_id, details";

const FILTER: &str = "(?1 IS NULL OR action = ?1)
    AND (?2 IS NULL OR user_id = ?2 OR requested_by = ?2)
    AND (?3 IS NULL OR at_ms >= ?3)
    AND (?4 IS NULL OR at_ms <= ?4)
    AND (?5 IS NULL OR instr(lower(action || ' ' || coalesce(target, '') || ' ' || summary
                                   || ' ' || coalesce(details, '')), lower(?5)) > 0)";

fn from_row(row: &Row<'_>) -> rusqlite::Result<AuditEvent> {
    Ok(AuditEvent {
        id: row.get(0)?,
        at_ms: row.get(1)?,
        action: row.get(2)?,
        method: row.get(3)?,
        user_id: row.get(4)?,
        requested_by: row.get(5)?,
        status: row.get(6)?,
        target: row.get(7)?,
        summary: json_col(row, 8)?,
        before: json_col_opt(row, 9)?,
        after: json_col_opt(row, 10)?,
        forced: row.get(11)?,
        related_event_id: row.get(12)?,
        details: row.get(13)?,
    })
}

/// Treats an empty (or blank) filter as no filter.
fn filter(v: &Option<String>) -> Option<&str> {
    v.as_deref().filter(|s| !s.trim().is_empty())
}

fn validate(e: &NewAuditEvent) -> Result<(), StoreError> {
    require_non_empty("audit action", &e.action)?;
    require_non_empty("audit method", &e.method)?;
    if !(100..=599).contains(&e.status) {
        return Err(StoreError::Invalid(format!(
            "audit status must be 100..=599, got {}",
            e.status
        )));
    }
    Ok(())
}

/// Appends an event inside a caller's write transaction (so a change and its audit row commit
/// together).
pub(crate) fn insert_tx(
    tx: &rusqlite::Transaction<'_>,
    e: &NewAuditEvent,
) -> Result<i64, StoreError> {
    validate(e)?;
    if let Some(related) = e.related_event_id {
        let exists: Option<i64> = tx
            .prepare_cached("SELECT id FROM audit_events WHERE id = ?1")?
            .query_row([related], |r| r.get(0))
            .optional()?;
        if exists.is_none() {
            return Err(StoreError::NotFound(format!(
                "related audit event {related}"
            )));
        }
    }
    let id = tx
        .prepare_cached(
            "INSERT INTO audit_events (at_ms, action, method, user_id, requested_by, status,
                target, summary, before, after, forced, related_event_id, details)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)",
        )?
        .insert(params![
            e.at_ms,
            e.action,
            e.method,
            e.user_id,
            e.requested_by,
            e.status,
            e.target,
            json_text(&e.summary),
            e.before.as_ref().map(json_text),
            e.after.as_ref().map(json_text),
            e.forced,
            e.related_event_id,
            e.details,
        ])?;
    Ok(id)
}

impl Store {
    /// Appends an event and returns its id. Fails with [`StoreError::NotFound`] when
    /// `related_event_id` names no event.
    pub fn insert_audit(&self, e: &NewAuditEvent) -> Result<i64, StoreError> {
        validate(e)?;
        self.write(|tx| insert_tx(tx, e))
    }

    /// Writes the intent of a change before it is sent: `e` with status [`AUDIT_INTENT`] and
    /// `details` saying it is in progress. Completed once by [`Store::complete_audit`], or
    /// withdrawn by [`Store::withdraw_audit`] when nothing was sent.
    pub fn insert_audit_intent(&self, e: &NewAuditEvent) -> Result<i64, StoreError> {
        let mut e = e.clone();
        e.status = AUDIT_INTENT;
        e.before = None;
        e.after = None;
        e.details = Some(AUDIT_INTENT_DETAILS.to_string());
        self.insert_audit(&e)
    }

    /// Completes intent `id` with its final status, the true before and after and details.
    /// Fails with [`StoreError::Conflict`] when `id` is not an intent (never, or no longer).
    pub fn complete_audit(
        &self,
        id: i64,
        status: u16,
        before: Option<&serde_json::Value>,
        after: Option<&serde_json::Value>,
        details: Option<&str>,
    ) -> Result<(), StoreError> {
        if !(100..=599).contains(&status) || status == AUDIT_INTENT {
            return Err(StoreError::Invalid(format!(
                "a completed audit status must be 100..=599 and not {AUDIT_INTENT}, got {status}"
            )));
        }
        self.write(|tx| {
            let n = tx
                .prepare_cached(
                    "UPDATE audit_events SET status = ?2, before = ?3, after = ?4, details = ?5
                     WHERE id = ?1 AND status = 102",
                )?
                .execute(params![
                    id,
                    status,
                    before.map(json_text),
                    after.map(json_text),
                    details
                ])?;
            if n == 0 {
                return Err(StoreError::Conflict(format!(
                    "audit event {id} is not an intent in progress"
                )));
            }
            Ok(())
        })
    }

    /// Withdraws intent `id`: the change was refused before anything was sent. An event that is
    /// not an intent stays.
    pub fn withdraw_audit(&self, id: i64) -> Result<bool, StoreError> {
        self.write(|tx| {
            Ok(tx
                .prepare_cached("DELETE FROM audit_events WHERE id = ?1 AND status = 102")?
                .execute([id])?
                > 0)
        })
    }

    /// Completes every intent written before `before_ms` as a failure (status 500) with
    /// `details`: the process that wrote it ended before it could say how the change went.
    /// Returns how many.
    pub fn fail_stale_audit_intents(
        &self,
        before_ms: i64,
        details: &str,
    ) -> Result<u64, StoreError> {
        self.write(|tx| {
            Ok(tx
                .prepare_cached(
                    "UPDATE audit_events SET status = 500, details = ?2
                     WHERE status = 102 AND at_ms < ?1",
                )?
                .execute(params![before_ms, details])? as u64)
        })
    }

    /// One event by id.
    pub fn audit_event(&self, id: i64) -> Result<Option<AuditEvent>, StoreError> {
        let conn = self.conn()?;
        let mut stmt =
            conn.prepare_cached(&format!("SELECT {COLUMNS} FROM audit_events WHERE id = ?1"))?;
        Ok(stmt.query_row([id], from_row).optional()?)
    }

    /// The newest `audit.revert` event that reverted event `id` (status 200, or 202 for a
    /// placement revert queued for the executor; not an intent nor a failure), None when it was
    /// never reverted.
    pub fn reverted_by(&self, id: i64) -> Result<Option<i64>, StoreError> {
        let conn = self.conn()?;
        let mut stmt = conn.prepare_cached(
            "SELECT id FROM audit_events
             WHERE action = 'audit.revert' AND related_event_id = ?1 AND status IN (200, 202)
             ORDER BY id DESC LIMIT 1",
        )?;
        Ok(stmt.query_row([id], |r| r.get(0)).optional()?)
    }

    /// Events matching `q`, newest first (`at_ms` then `id` descending), one page at a time.
    pub fn list_audit(&self, q: &AuditQuery) -> Result<AuditPage, StoreError> {
        let limit = q.limit.unwrap_or(AUDIT_DEFAULT_LIMIT).min(AUDIT_MAX_LIMIT);
        let offset = q.offset.unwrap_or(0);
        let args = params![
            filter(&q.action),
            filter(&q.user),
            q.since_ms,
            q.until_ms,
            filter(&q.text),
        ];
        self.read(|tx| {
            let total: i64 = tx
                .prepare_cached(&format!("SELECT count(*) FROM audit_events WHERE {FILTER}"))?
                .query_row(args, |r| r.get(0))?;
            let mut stmt = tx.prepare_cached(&format!(
                "SELECT {COLUMNS} FROM audit_events WHERE {FILTER}
                 ORDER BY at_ms DESC, id DESC LIMIT ?6 OFFSET ?7"
            ))?;
            let events = stmt
                .query_map(
                    params![
                        filter(&q.action),
                        filter(&q.user),
                        q.since_ms,
                        q.until_ms,
                        filter(&q.text),
                        limit,
                        offset,
                    ],
                    from_row,
                )?
                .collect::<Result<Vec<_>, _>>()?;
            Ok(AuditPage {
                events,
                total: u64::try_from(total).unwrap_or(0),
            })
        })
    }
}
