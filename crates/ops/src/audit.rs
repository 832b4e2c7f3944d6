//! The audit log read: `search_audit_log`, events newest first (time, then id), filtered, one
//! page at a time (docs/api/audit.md).

use ballast_runtime::format_rfc3339_ms;
use ballast_schema::{AuditEvent, AuditQuery, AUDIT_DEFAULT_LIMIT, AUDIT_MAX_LIMIT};
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use crate::context::Context;
use crate::error::OpError;
use crate::time::parse_instant_ms;

#[derive(Debug, Default, Deserialize, utoipa::IntoParams)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct ListQuery {
    /// Exact action name, e.g. `quotas.update`.
    pub action: Option<String>,
    /// The acting user or the requester.
    pub user: Option<String>,
    /// From this instant (inclusive): Unix ms or RFC 3339.
    #[param(schema_with = instant_or_empty)]
    pub since: Option<String>,
    /// Up to this instant (inclusive).
    #[param(schema_with = instant_or_empty)]
    pub until: Option<String>,
    /// Case-insensitive text in the action, target, summary or details.
    pub search: Option<String>,
    /// Page size: default 50 (also for 0), at most 500.
    pub limit: Option<u32>,
    /// Events to skip.
    pub offset: Option<u32>,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct AuditList {
    count: usize,
    total: u64,
    limit: u32,
    offset: u32,
    /// More events match after this page.
    has_more: bool,
    events: Vec<Value>,
}

/// An event as the API shows it.
fn render(e: &AuditEvent) -> Value {
    json!({
        "id": e.id,
        "at": format_rfc3339_ms(e.at_ms),
        "atMs": e.at_ms,
        "action": e.action,
        "method": e.method,
        "userId": e.user_id,
        "requestedBy": e.requested_by,
        "status": e.status,
        "target": e.target,
        "summary": e.summary,
        "before": e.before,
        "after": e.after,
        "forced": e.forced,
        "relatedEventId": e.related_event_id,
        "details": e.details,
        "revertible": crate::revert::revertible(e),
    })
}

fn instant_or_empty() -> utoipa::openapi::Object {
    crate::schema::instant_schema(true)
}

fn instant(name: &str, value: Option<String>) -> Result<Option<i64>, OpError> {
    match value.filter(|v| !v.trim().is_empty()) {
        None => Ok(None),
        Some(v) => parse_instant_ms(&v)
            .map(Some)
            .map_err(|e| OpError::bad_input("invalid query", format!("{name}: {e}"))),
    }
}

/// The operation `search_audit_log`: events newest first (time, then id), filtered, one page at
/// a time.
pub async fn search_audit_log(ctx: &Context, q: ListQuery) -> Result<AuditList, OpError> {
    let since_ms = instant("since", q.since)?;
    let until_ms = instant("until", q.until)?;
    if let (Some(since), Some(until)) = (since_ms, until_ms) {
        if since > until {
            return Err(OpError::bad_input("invalid query", "since is after until"));
        }
    }
    let limit = match q.limit {
        None | Some(0) => AUDIT_DEFAULT_LIMIT,
        Some(n) => n.min(AUDIT_MAX_LIMIT),
    };
    let offset = q.offset.unwrap_or(0);
    let query = AuditQuery {
        action: q.action,
        user: q.user,
        since_ms,
        until_ms,
        text: q.search,
        limit: Some(limit),
        offset: Some(offset),
    };
    let page = ctx.db(move |store| store.list_audit(&query)).await?;
    let events: Vec<Value> = page.events.iter().map(render).collect();
    Ok(AuditList {
        count: events.len(),
        has_more: u64::from(offset) + (events.len() as u64) < page.total,
        total: page.total,
        limit,
        offset,
        events,
    })
}
