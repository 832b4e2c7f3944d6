//! Reverting a recorded change over REST: the preview and the revert. Adapters over
//! `ballast_ops::revert` (where the rules live; docs/api/audit.md). An accepted revert answers
//! `202 Accepted` in the success envelope.

use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
pub(crate) use ballast_ops::revert::*;
use serde_json::json;

use crate::audit::HttpActor;
use crate::extract::Json;
use crate::{ApiError, ApiOk, ApiResult, AppState};

#[utoipa::path(
    post,
    path = "/api/v1/audit-log/revert/preview",
    tag = "audit",
    operation_id = "previewRevert",
    summary = "Preview reverting an audited change",
    description = "Reads the live values of everything the event changed and what a revert would set, with the `fingerprint` a revert must send.",
    request_body(content = PreviewBody),
    responses(
        (status = 200, description = "Preview reverting an audited change", body = ref("RevertPreview")),
        (status = 400, description = "The event cannot be reverted"),
        (status = 404, description = "No such audit event"),
        (status = 502, description = "The cluster answered with an error"),
        (status = 503, description = "The cluster is unreachable"),
    )
)]
/// `POST /api/v1/audit-log/revert/preview` with `{"eventId"}`.
pub async fn preview(
    State(state): State<AppState>,
    Json(body): Json<PreviewBody>,
) -> ApiResult<Preview> {
    Ok(ApiOk(preview_revert(&state, body).await?))
}

#[utoipa::path(
    post,
    path = "/api/v1/audit-log/revert",
    tag = "audit",
    operation_id = "revertAuditEvent",
    summary = "Revert an audited change",
    description = "Puts the values the event recorded before its change back, when nothing changed since the preview (its `fingerprint`). Every accepted revert answers 202 with `executionId`: configuration, quota and ACL reverts are applied before the answer (`state` `completed`); a reassignment revert is queued for the executor (`state` `queued`; acceptance does not mean the moves finished).",
    request_body(content = RevertBody)
    // responses: declared by the operation `revert_audit_event` (ballast_ops::catalog)
)]
/// `POST /api/v1/audit-log/revert` with `{"eventId", "fingerprint"}`.
pub async fn revert(
    State(state): State<AppState>,
    HttpActor(actor): HttpActor,
    Json(body): Json<RevertBody>,
) -> Result<Response, ApiError> {
    let done = revert_audit_event(&state, &actor, body).await?;
    Ok((
        StatusCode::ACCEPTED,
        axum::Json(json!({ "success": true, "data": done })),
    )
        .into_response())
}
