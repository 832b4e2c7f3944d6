//! The audit log: `GET /api/v1/audit-log` (filters and paging), and the revert of a recorded
//! change (`revert.rs`). Shapes: `docs/api/audit.md`.

pub(crate) mod revert;

use axum::extract::State;
use axum::routing::{get, post};
use axum::Router;
pub(crate) use ballast_ops::audit::*;

use crate::extract::Query;
use crate::{ApiOk, ApiResult, AppState};

/// The operations of this module, as `routes()` serves them (the OpenAPI document).
#[derive(utoipa::OpenApi)]
#[openapi(paths(list, revert::preview, revert::revert))]
pub(crate) struct Api;

pub fn routes() -> Router<AppState> {
    Router::new()
        .route("/api/v1/audit-log", get(list))
        .route("/api/v1/audit-log/revert/preview", post(revert::preview))
        .route("/api/v1/audit-log/revert", post(revert::revert))
}

#[utoipa::path(
    get,
    path = "/api/v1/audit-log",
    tag = "audit",
    operation_id = "listAuditEvents",
    summary = "The audit log",
    description = "Events newest first (time, then id).",
    params(ListQuery)
    // responses: declared by the operation `search_audit_log` (ballast_ops::catalog)
)]
/// `GET /api/v1/audit-log`: events newest first, filtered, one page at a time.
pub async fn list(
    State(state): State<AppState>,
    Query(q): Query<ListQuery>,
) -> ApiResult<AuditList> {
    Ok(ApiOk(search_audit_log(&state, q).await?))
}
