//! Rebalancing proposals, as the observer evaluated them (`proposals` in SQLite). Free
//! (monitoring mode). Shapes: `docs/api/proposals.md`.
//!
//! The web process never plans: `POST /api/v1/proposals/generate` returns the current candidate
//! and its decision, as the spec's `generate_proposal` does. Applying is not served here.

use axum::response::Response;
use axum::routing::{get, post};
use axum::Router;
use ballast_ops::proposal_view::{self, MovesQuery};
pub(crate) use ballast_ops::proposals::{
    generate_proposal, get_proposal, list_proposals, load, named, Found, ListQuery,
};
use serde::Deserialize;
use serde_json::Value;

use crate::audit::HttpActor;
use crate::extract::{Path, Query};
use crate::{ApiError, ApiOk, ApiResult, AppState};

/// The operations of this module, as `routes()` serves them (the OpenAPI document).
#[derive(utoipa::OpenApi)]
#[openapi(paths(list, current, generate, one, moves, delete))]
pub(crate) struct Api;

pub fn routes() -> Router<AppState> {
    Router::new()
        .route("/api/v1/proposals", get(list))
        .route("/api/v1/proposals/current", get(current))
        .route("/api/v1/proposals/generate", post(generate))
        .route("/api/v1/proposals/{proposalId}", get(one).delete(delete))
        .route("/api/v1/proposals/{proposalId}/moves", get(moves))
}

/// No query parameters are accepted (typos are refused).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct NoQuery {}

#[utoipa::path(
    get,
    path = "/api/v1/proposals",
    tag = "proposals",
    operation_id = "listProposals",
    summary = "List stored proposals",
    description = "Summary rows, newest first, each with its own decision.",
    params(ListQuery)
    // responses: declared by the operation `list_proposals` (ballast_ops::catalog)
)]
async fn list(
    state: axum::extract::State<AppState>,
    Query(q): Query<ListQuery>,
) -> ApiResult<Value> {
    Ok(ApiOk(list_proposals(&state, q).await?))
}

/// The proposal's answer, rendered once per check.
fn rendered(found: &Found) -> Response {
    super::observed::ok_shared(&found.full())
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
) -> Result<Response, ApiError> {
    Ok(rendered(&generate_proposal(&state).await?))
}

#[utoipa::path(
    post,
    path = "/api/v1/proposals/generate",
    tag = "proposals",
    operation_id = "generateProposal",
    summary = "Generate a proposal",
    description = "Returns the current proposal and its decision; starts no calculation (the observer re-evaluates after every sample). A body is ignored."
    // responses: declared by the operation `generate_proposal` (ballast_ops::catalog)
)]
/// `POST /api/v1/proposals/generate`: the same answer as `GET /api/v1/proposals/current`.
async fn generate(
    state: axum::extract::State<AppState>,
    Query(_): Query<NoQuery>,
) -> Result<Response, ApiError> {
    Ok(rendered(&generate_proposal(&state).await?))
}

#[utoipa::path(
    get,
    path = "/api/v1/proposals/{proposalId}",
    tag = "proposals",
    operation_id = "getProposal",
    summary = "Proposal details",
    params(("proposalId" = String, Path, description = "`p-<created unix ms>-<8 hex digits>`"))
    // responses: declared by the operation `get_proposal` (ballast_ops::catalog)
)]
async fn one(
    state: axum::extract::State<AppState>,
    Path(id): Path<String>,
    Query(_): Query<NoQuery>,
) -> Result<Response, ApiError> {
    Ok(rendered(&get_proposal(&state, id).await?))
}

/// `GET /api/v1/proposals/{proposalId}/moves` query.
#[derive(Debug, Default, Deserialize, utoipa::IntoParams)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
#[into_params(parameter_in = Query)]
pub(crate) struct MovesParams {
    /// Moves per page, default 100, at most 1000 (absent or 0: the default).
    #[param(maximum = 1000)]
    pub(crate) limit: Option<usize>,
    /// Moves to skip, default 0.
    pub(crate) offset: Option<usize>,
    /// `plan` (default: the planner's order, the order the executor submits them in), `bytes`
    /// (most bytes to copy first) or `partition` (by topic, then partition). Ties keep the
    /// planner's order.
    #[param(schema_with = sort_schema)]
    pub(crate) sort: Option<String>,
    /// Only the moves of this topic.
    pub(crate) topic: Option<String>,
    /// Only the moves whose replicas before or after include this broker.
    pub(crate) broker_id: Option<i64>,
}

fn sort_schema() -> utoipa::openapi::Object {
    ballast_ops::schema::string_enum(proposal_view::MOVE_SORTS)
}

#[utoipa::path(
    get,
    path = "/api/v1/proposals/{proposalId}/moves",
    tag = "proposals",
    operation_id = "listProposalMoves",
    summary = "A page of a proposal's moves",
    description = "The whole move list of a proposal, paged (a proposal answer embeds the first 100 in the planner's order and names this page in `reassignmentsNext`). Sorted by `sort`; `next` is the path of the following page, null on the last.",
    params(
        ("proposalId" = String, Path, description = "`p-<created unix ms>-<8 hex digits>`, or `current`"),
        MovesParams,
    ),
    responses(
        (status = 200, description = "A page of moves", body = ref("ProposalMoves")),
        (status = 400, description = "A bad limit or sort (`invalid query`)"),
        (status = 404, description = "No stored proposal with this id"),
    )
)]
async fn moves(
    state: axum::extract::State<AppState>,
    Path(id): Path<String>,
    Query(q): Query<MovesParams>,
) -> Result<Response, ApiError> {
    let Found { head, plan: p } = load(&state, named(&id)).await?;
    let q = MovesQuery {
        limit: q.limit,
        offset: q.offset,
        sort: q.sort,
        topic: q.topic,
        broker_id: q.broker_id,
    };
    let key = q.key();
    let text = match p.cached(&head, &key) {
        Some(text) => text,
        None => {
            // A bad query is refused here and never cached.
            let page = proposal_view::moves_page(&head, &p, &q)?;
            p.rendered(&head, &key, || page.to_string())
        }
    };
    Ok(super::observed::ok_shared(&text))
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
