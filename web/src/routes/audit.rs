//! The audit log: `GET /api/v1/audit-log` (filters and paging), and the revert of a recorded
//! change (`revert.rs`). Shapes: `docs/api/audit.md`.

pub(crate) mod revert;

use axum::extract::State;
use axum::routing::{get, post};
use axum::Router;
use ballast_runtime::format_rfc3339_ms;
use ballast_schema::{AuditEvent, AuditQuery, AUDIT_DEFAULT_LIMIT, AUDIT_MAX_LIMIT};
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use crate::extract::{parse_instant_ms, Query};
use crate::{ApiError, ApiOk, ApiResult, AppState};

/// The operations of this module, as `routes()` serves them (`crate::openapi`).
#[derive(utoipa::OpenApi)]
#[openapi(paths(list, revert::preview, revert::revert))]
pub(super) struct Api;

pub fn routes() -> Router<AppState> {
    Router::new()
        .route("/api/v1/audit-log", get(list))
        .route("/api/v1/audit-log/revert/preview", post(revert::preview))
        .route("/api/v1/audit-log/revert", post(revert::revert))
}

#[derive(Debug, Default, Deserialize, utoipa::IntoParams)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct ListQuery {
    /// Exact action name, e.g. `quotas.update`.
    pub(crate) action: Option<String>,
    /// The acting user or the requester.
    pub(crate) user: Option<String>,
    /// From this instant (inclusive): Unix ms or RFC 3339.
    #[param(schema_with = instant_or_empty)]
    pub(crate) since: Option<String>,
    /// Up to this instant (inclusive).
    #[param(schema_with = instant_or_empty)]
    pub(crate) until: Option<String>,
    /// Case-insensitive text in the action, target, summary or details.
    pub(crate) search: Option<String>,
    /// Page size: default 50 (also for 0), at most 500.
    pub(crate) limit: Option<u32>,
    /// Events to skip.
    pub(crate) offset: Option<u32>,
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
        "revertible": revert::revertible(e),
    })
}

fn instant_or_empty() -> utoipa::openapi::Object {
    crate::openapi::instant_schema(true)
}

fn instant(name: &str, value: Option<String>) -> Result<Option<i64>, ApiError> {
    match value.filter(|v| !v.trim().is_empty()) {
        None => Ok(None),
        Some(v) => parse_instant_ms(&v)
            .map(Some)
            .map_err(|e| ApiError::bad_request("invalid query", format!("{name}: {e}"))),
    }
}

#[utoipa::path(
    get,
    path = "/api/v1/audit-log",
    tag = "audit",
    operation_id = "listAuditEvents",
    summary = "The audit log",
    description = "Events newest first (time, then id).",
    params(ListQuery),
    responses(
        (status = 200, description = "The audit log", body = ref("AuditList")),
    )
)]
/// `GET /api/v1/audit-log`: events newest first, filtered, one page at a time.
pub async fn list(
    State(state): State<AppState>,
    Query(q): Query<ListQuery>,
) -> ApiResult<AuditList> {
    search_audit_log(&state, q).await.map(ApiOk)
}

/// The operation `search_audit_log`: events newest first (time, then id), filtered, one page at
/// a time.
pub(crate) async fn search_audit_log(
    state: &AppState,
    q: ListQuery,
) -> Result<AuditList, ApiError> {
    let since_ms = instant("since", q.since)?;
    let until_ms = instant("until", q.until)?;
    if let (Some(since), Some(until)) = (since_ms, until_ms) {
        if since > until {
            return Err(ApiError::bad_request(
                "invalid query",
                "since is after until",
            ));
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
    let page = state.db(move |store| store.list_audit(&query)).await?;
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
