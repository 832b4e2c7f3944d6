//! Rebalancing proposals, as the observer evaluated them (`proposals` in SQLite). Free
//! (monitoring mode). Shapes: `docs/api/proposals.md`.
//!
//! The web process never plans: `POST /api/v1/proposals/generate` returns the current candidate
//! and its decision, as the spec's `generate_proposal` does. Applying is not served here.

use axum::routing::{get, post};
use axum::Router;
use ballast_runtime::format_rfc3339_ms;
use ballast_schema::ProposalRecord;
use serde::Deserialize;
use serde_json::{json, Map, Value};

use crate::audit::HttpActor;
use crate::extract::{Path, Query};
use crate::{ApiError, ApiOk, ApiResult, AppState};

pub const DEFAULT_LIMIT: u64 = 50;
pub const MAX_LIMIT: u64 = 500;

/// The operations of this module, as `routes()` serves them (`crate::openapi`).
#[derive(utoipa::OpenApi)]
#[openapi(paths(list, current, generate, one, delete))]
pub(super) struct Api;

pub fn routes() -> Router<AppState> {
    Router::new()
        .route("/api/v1/proposals", get(list))
        .route("/api/v1/proposals/current", get(current))
        .route("/api/v1/proposals/generate", post(generate))
        .route("/api/v1/proposals/{proposalId}", get(one).delete(delete))
}

#[derive(Debug, Default, Deserialize, utoipa::IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub(crate) struct ListQuery {
    /// Rows, default 50, at most 500 (absent or 0: the default; above: clamped).
    pub(crate) limit: Option<u64>,
    /// Rows to skip, default 0.
    pub(crate) offset: Option<u64>,
}

/// No query parameters are accepted (typos are refused).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct NoQuery {}

fn candidate_available(p: &ProposalRecord) -> bool {
    p.current && p.moves > 0
}

/// A list row: the summary columns and the proposal's own decision.
fn summary(p: &ProposalRecord) -> Value {
    json!({
        "id": p.id,
        "createdAt": format_rfc3339_ms(p.created_at_ms),
        "checkedAt": format_rfc3339_ms(p.checked_at_ms),
        "current": p.current,
        "superseded": !p.current,
        "candidateAvailable": candidate_available(p),
        "recommended": p.recommended,
        "totalReassignments": p.moves,
        "estimatedBytes": p.estimated_bytes,
        "balanceHold": p.balance_hold,
        "fingerprint": p.fingerprint,
        "decision": p.decision,
    })
}

/// The whole proposal: the spec's named fields from the stored plan, decision and detail.
fn full(p: &ProposalRecord) -> Value {
    let plan = &p.plan;
    let field = |name: &str| plan.get(name).cloned().unwrap_or(Value::Null);
    let moves = plan
        .get("moves")
        .cloned()
        .unwrap_or_else(|| Value::Array(Vec::new()));
    let total = moves.as_array().map_or(0, Vec::len);
    let mut balance = Map::new();
    if let Some(loads) = plan.get("loads").and_then(Value::as_object) {
        for (name, l) in loads {
            let get = |k: &str| l.get(k).cloned().unwrap_or(Value::Null);
            balance.insert(
                name.clone(),
                json!({
                    "imbalance": get("maxDistanceBefore"),
                    "imbalanceAfter": get("maxDistanceAfter"),
                    "counted": get("counted"),
                    "noTraffic": get("noTraffic"),
                    "belowFloor": get("belowFloor"),
                    "triggered": get("triggered"),
                    "largestDifference": get("largestDifference"),
                    "busiestBroker": get("busiestBroker"),
                    "quietestBroker": get("quietestBroker"),
                    "stop": get("stop"),
                    "stopReason": get("stopReason"),
                }),
            );
        }
    }
    let detail = |name: &str, empty: Value| p.detail.get(name).cloned().unwrap_or(empty);
    // The cap counts, before and after the plan (`null` in proposals stored before they were).
    let spread = |name: &str| {
        plan.get("topicSpread")
            .and_then(|s| s.get(name))
            .cloned()
            .unwrap_or(Value::Null)
    };
    json!({
        "id": p.id,
        "createdAt": format_rfc3339_ms(p.created_at_ms),
        "checkedAt": format_rfc3339_ms(p.checked_at_ms),
        "current": p.current,
        "superseded": !p.current,
        "candidateAvailable": candidate_available(p),
        "recommended": p.recommended,
        "reason": field("reason"),
        "reasonText": field("reasonText"),
        "decision": p.decision,
        "fingerprint": p.fingerprint,
        "fairShare": {
            "shares": detail("shares", json!([])),
            "loads": field("loads"),
        },
        "topicSpread": {
            "atLimit": detail("topicSpreadAtLimit", json!({})),
            "overCap": spread("overCap"),
            "projectedOverCap": spread("projectedOverCap"),
            "excessLeaders": spread("excessLeaders"),
            "projectedExcessLeaders": spread("projectedExcessLeaders"),
            "excessReplicas": spread("excessReplicas"),
            "projectedExcessReplicas": spread("projectedExcessReplicas"),
        },
        // Partitions on fewer racks than min(replication factor, racks), before and after, and
        // why any stay (`null` in proposals stored before plans reported it).
        "rackAwareness": field("rackAwareness"),
        "benefitEvidence": {
            "tripped": plan.get("tripped").cloned().unwrap_or_else(|| json!([])),
            "topicBreaches": detail("topicBreaches", json!([])),
        },
        "structuralLimits": plan.get("structuralLimits").cloned().unwrap_or_else(|| json!([])),
        "metrics": {
            "effective": field("effectiveAfter"),
            "effectiveBefore": field("effectiveBefore"),
            "evennessBefore": field("evennessBefore"),
            "evennessAfter": field("evennessAfter"),
        },
        "movement": {
            "estimatedBytes": p.estimated_bytes,
            "search": field("search"),
            "planningMs": field("elapsedMs"),
        },
        "balance": balance,
        "balanceHold": p.balance_hold,
        "downBrokers": plan.get("downBrokers").cloned().unwrap_or_else(|| json!([])),
        "reassignments": moves,
        "totalReassignments": total,
        "reassignmentsTruncated": false,
    })
}

pub(crate) fn no_proposal() -> ApiError {
    ApiError::not_found(
        "no proposal",
        "the observer has not evaluated a proposal yet (it does after each successful sample)",
    )
}

pub(crate) fn unknown(id: &str) -> ApiError {
    ballast_ops::proposals::unknown(id).into()
}

#[utoipa::path(
    get,
    path = "/api/v1/proposals",
    tag = "proposals",
    operation_id = "listProposals",
    summary = "List stored proposals",
    description = "Summary rows, newest first, each with its own decision.",
    params(ListQuery),
    responses((status = 200, description = "A page of proposals", body = ref("ProposalList")))
)]
async fn list(
    state: axum::extract::State<AppState>,
    Query(q): Query<ListQuery>,
) -> ApiResult<Value> {
    list_proposals(&state, q).await.map(ApiOk)
}

/// The operation `list_proposals`: a page of stored proposals, newest first, as summary rows
/// each with its own decision.
pub(crate) async fn list_proposals(state: &AppState, q: ListQuery) -> Result<Value, ApiError> {
    let limit = match q.limit {
        None | Some(0) => DEFAULT_LIMIT,
        Some(n) => n.min(MAX_LIMIT),
    };
    let offset = q.offset.unwrap_or(0);
    if i64::try_from(offset).is_err() {
        return Err(ApiError::bad_request("invalid query", "offset: too large"));
    }
    let page = state.db(move |s| s.proposals(limit, offset)).await?;
    let rows: Vec<Value> = page.proposals.iter().map(summary).collect();
    let count = rows.len() as u64;
    Ok(json!({
        "total": page.total,
        "offset": offset,
        "count": count,
        "truncated": offset + count < page.total,
        "proposals": rows,
    }))
}

#[utoipa::path(
    get,
    path = "/api/v1/proposals/current",
    tag = "proposals",
    operation_id = "getCurrentProposal",
    summary = "The current proposal",
    responses(
        (status = 200, description = "The current proposal", body = ref("Proposal")),
        (status = 404, description = "The observer has not evaluated a proposal yet (`no proposal`)"),
    )
)]
/// `GET /api/v1/proposals/current`.
async fn current(
    state: axum::extract::State<AppState>,
    Query(_): Query<NoQuery>,
) -> ApiResult<Value> {
    generate_proposal(&state).await.map(ApiOk)
}

/// The operation `generate_proposal`: the current candidate proposal and its decision (the web
/// process starts no calculation; the observer re-evaluates after every sample).
pub(crate) async fn generate_proposal(state: &AppState) -> Result<Value, ApiError> {
    match state.db(|s| s.current_proposal()).await? {
        Some(p) => Ok(full(&p)),
        None => Err(no_proposal()),
    }
}

#[utoipa::path(
    post,
    path = "/api/v1/proposals/generate",
    tag = "proposals",
    operation_id = "generateProposal",
    summary = "Generate a proposal",
    description = "Returns the current proposal and its decision; starts no calculation (the observer re-evaluates after every sample). A body is ignored.",
    responses(
        (status = 200, description = "The current proposal", body = ref("Proposal")),
        (status = 404, description = "The observer has not evaluated a proposal yet (`no proposal`)"),
    )
)]
/// `POST /api/v1/proposals/generate`: the same answer as `GET /api/v1/proposals/current`.
async fn generate(
    state: axum::extract::State<AppState>,
    Query(_): Query<NoQuery>,
) -> ApiResult<Value> {
    generate_proposal(&state).await.map(ApiOk)
}

#[utoipa::path(
    get,
    path = "/api/v1/proposals/{proposalId}",
    tag = "proposals",
    operation_id = "getProposal",
    summary = "Proposal details",
    params(("proposalId" = String, Path, description = "`p-<created unix ms>-<8 hex digits>`")),
    responses(
        (status = 200, description = "The proposal", body = ref("Proposal")),
        (status = 404, description = "No stored proposal with this id"),
    )
)]
async fn one(
    state: axum::extract::State<AppState>,
    Path(id): Path<String>,
    Query(_): Query<NoQuery>,
) -> ApiResult<Value> {
    get_proposal(&state, id).await.map(ApiOk)
}

/// The operation `get_proposal`: one stored proposal in full; `current` names the current one
/// (as `GET /api/v1/proposals/current`, whose route comes before this one's).
pub(crate) async fn get_proposal(state: &AppState, id: String) -> Result<Value, ApiError> {
    if id == "current" {
        return generate_proposal(state).await;
    }
    let key = id.clone();
    match state.db(move |s| s.proposal(&key)).await? {
        Some(p) => Ok(full(&p)),
        None => Err(unknown(&id)),
    }
}

#[utoipa::path(
    delete,
    path = "/api/v1/proposals/{proposalId}",
    tag = "proposals",
    operation_id = "deleteProposal",
    summary = "Delete a stored proposal",
    description = "Only a proposal that is no longer current can be deleted. Audited `proposals.delete` (before: the proposal's id, times, fingerprint, moves and bytes).",
    params(("proposalId" = String, Path, description = "`p-<created unix ms>-<8 hex digits>`")),
    responses(
        (status = 200, description = "Deleted", body = ref("ProposalDeleted")),
        (status = 404, description = "No stored proposal with this id"),
        (status = 409, description = "It is the current proposal (`proposal is current`)"),
    )
)]
async fn delete(
    state: axum::extract::State<AppState>,
    HttpActor(actor): HttpActor,
    Path(id): Path<String>,
    Query(_): Query<NoQuery>,
) -> ApiResult<ballast_ops::proposals::Deleted> {
    Ok(ApiOk(
        ballast_ops::proposals::delete_proposal(&state, &actor, id).await?,
    ))
}
