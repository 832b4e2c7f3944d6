//! Partition-moving requests over REST: proposal apply, single-partition and bulk
//! reassignment, topic redistribution, the reassignment list, one record, cancel, and the
//! throttle. Adapters over the operations of `ballast_ops::reassignments` (where the rules live;
//! shapes: `docs/api/reassignments.md`).

use axum::routing::{get, post};
use axum::Router;
pub(crate) use ballast_ops::reassignments::*;
use serde_json::Value;

use crate::audit::HttpActor;
use crate::extract::{Json, OptionalJson, Path, Query};
use crate::{ApiOk, ApiResult, AppState};

/// The operations of this module, as `routes()` serves them (the OpenAPI document).
#[derive(utoipa::OpenApi)]
#[openapi(paths(
    apply_current,
    apply_one,
    topic_spread,
    bulk,
    single,
    list,
    throttle_get,
    throttle_put,
    one,
    cancel
))]
pub(crate) struct Api;

pub fn routes() -> Router<AppState> {
    Router::new()
        .route("/api/v1/proposals/current/apply", post(apply_current))
        .route("/api/v1/proposals/{proposalId}/apply", post(apply_one))
        .route("/api/v1/topics/{topic}/redistribute", post(topic_spread))
        .route("/api/v1/topics/{topic}/partitions/bulk", post(bulk))
        .route(
            "/api/v1/topics/{topic}/partitions/{partition}/redistribute",
            post(single),
        )
        .route("/api/v1/reassignments", get(list))
        .route(
            "/api/v1/reassignments/throttle",
            get(throttle_get).put(throttle_put),
        )
        .route("/api/v1/reassignments/{id}", get(one))
        .route("/api/v1/reassignments/{id}/cancel", post(cancel))
}

#[utoipa::path(
    post,
    path = "/api/v1/proposals/current/apply",
    tag = "reassignments",
    operation_id = "applyCurrentProposal",
    summary = "Apply the current proposal",
    description = "Queues the current proposal's exact moves for the executor (strategy `PROPOSAL`), after the proposal rules and the live pre-flight (docs/api/reassignments.md).",
    params(ForceQuery),
    responses(
        (status = 200, description = "Queued", body = ref("ApplyResult")),
        (status = 404, description = "No current proposal"),
        (status = 409, description = "Not applicable: checked too long ago, `decision.applicationAllowed` false, unsafe, a pre-flight reason, or the mutation slot is held; the soft ones yield to `force=true`"),
        (status = 503, description = "The cluster could not be read"),
    )
)]
async fn apply_current(
    state: axum::extract::State<AppState>,
    HttpActor(actor): HttpActor,
    Query(q): Query<ForceQuery>,
) -> ApiResult<Value> {
    Ok(ApiOk(apply_current_proposal(&state, &actor, q).await?))
}

#[utoipa::path(
    post,
    path = "/api/v1/proposals/{proposalId}/apply",
    tag = "reassignments",
    operation_id = "applyProposal",
    summary = "Apply a proposal",
    description = "Queues the proposal's exact moves; only the current proposal can be applied (409 otherwise, not overridable). Rules: docs/api/reassignments.md.",
    params(("proposalId" = String, Path, description = "the proposal id"), ForceQuery)
    // responses: declared by the operation `apply_proposal` (ballast_ops::catalog)
)]
async fn apply_one(
    state: axum::extract::State<AppState>,
    HttpActor(actor): HttpActor,
    Path(id): Path<String>,
    Query(q): Query<ForceQuery>,
) -> ApiResult<Value> {
    Ok(ApiOk(apply_proposal(&state, &actor, id, q).await?))
}

#[utoipa::path(
    post,
    path = "/api/v1/topics/{topic}/partitions/{partition}/redistribute",
    tag = "reassignments",
    operation_id = "redistributePartition",
    summary = "Reassign one partition",
    description = "With `replicas`, to that set (validated against the replication-factor floor); without, down or maintenance replicas are replaced and the busiest replica broker swapped. `preview` plans from the cached view and starts nothing.",
    params(
        ("topic" = String, Path, description = "topic name"),
        ("partition" = i32, Path, description = "partition number"),
        ForceQuery,
    ),
    request_body(content = SingleBody, description = "`{}` lets ballast choose the replicas")
    // responses: declared by the operation `redistribute_partition` (ballast_ops::catalog)
)]
async fn single(
    state: axum::extract::State<AppState>,
    HttpActor(actor): HttpActor,
    Path((topic, partition)): Path<(String, i32)>,
    Query(q): Query<ForceQuery>,
    Json(body): Json<SingleBody>,
) -> ApiResult<Value> {
    Ok(ApiOk(
        redistribute_partition(&state, &actor, topic, partition, q, body).await?,
    ))
}

#[utoipa::path(
    post,
    path = "/api/v1/topics/{topic}/partitions/bulk",
    tag = "reassignments",
    operation_id = "bulkReassign",
    summary = "Bulk reassignment",
    description = "Each entry is checked on its own (`results[]`, in request order); the live entries run as one operation with strategy `BULK_MANUAL`. `success` is true on every 200: check `started` and each result.",
    params(("topic" = String, Path, description = "topic name"), ForceQuery),
    request_body(content = BulkBody)
    // responses: declared by the operation `bulk_reassign_partitions` (ballast_ops::catalog)
)]
async fn bulk(
    state: axum::extract::State<AppState>,
    HttpActor(actor): HttpActor,
    Path(topic): Path<String>,
    Query(q): Query<ForceQuery>,
    Json(body): Json<BulkBody>,
) -> ApiResult<Value> {
    Ok(ApiOk(
        bulk_reassign_partitions(&state, &actor, topic, q, body).await?,
    ))
}

#[utoipa::path(
    post,
    path = "/api/v1/topics/{topic}/redistribute",
    tag = "reassignments",
    operation_id = "redistributeTopic",
    summary = "Redistribute a topic",
    description = "Spreads the topic's replicas evenly over the chosen brokers (default every broker up and not in maintenance), moving as few replicas as possible; strategy `TOPIC`.",
    params(("topic" = String, Path, description = "topic name"), ForceQuery),
    request_body(content = Option<TopicBody>, description = "Optional")
    // responses: declared by the operation `redistribute_topic` (ballast_ops::catalog)
)]
async fn topic_spread(
    state: axum::extract::State<AppState>,
    HttpActor(actor): HttpActor,
    Path(topic): Path<String>,
    Query(q): Query<ForceQuery>,
    OptionalJson(body): OptionalJson<TopicBody>,
) -> ApiResult<Value> {
    Ok(ApiOk(
        redistribute_topic(&state, &actor, topic, q, body).await?,
    ))
}

#[utoipa::path(
    get,
    path = "/api/v1/reassignments",
    tag = "reassignments",
    operation_id = "listReassignments",
    summary = "List tracked reassignments",
    description = "Operations, newest first, with their progress and the current holder of the mutation slot.",
    params(ListQuery)
    // responses: declared by the operation `list_reassignments` and `get_reassignment_history` (ballast_ops::catalog)
)]
async fn list(
    state: axum::extract::State<AppState>,
    Query(q): Query<ListQuery>,
) -> ApiResult<Value> {
    Ok(ApiOk(list_reassignments(&state, q).await?))
}

#[utoipa::path(
    get,
    path = "/api/v1/reassignments/{id}",
    tag = "reassignments",
    operation_id = "getReassignment",
    summary = "One reassignment record",
    params(("id" = String, Path, description = "operation id (`op-…`)"))
    // responses: declared by the operation `get_reassignment_by_id` (ballast_ops::catalog)
)]
async fn one(state: axum::extract::State<AppState>, Path(id): Path<String>) -> ApiResult<Value> {
    Ok(ApiOk(get_reassignment_by_id(&state, id).await?))
}

#[utoipa::path(
    post,
    path = "/api/v1/reassignments/{id}/cancel",
    tag = "reassignments",
    operation_id = "cancelReassignment",
    summary = "Cancel a reassignment",
    description = "Asks the executor to cancel: in-flight moves are cancelled through the cluster, pending ones never start, completed ones stay. Audited `reassignments.cancel`.",
    params(("id" = String, Path, description = "operation id (`op-…`)"))
    // responses: declared by the operation `cancel_reassignment` (ballast_ops::catalog)
)]
async fn cancel(
    state: axum::extract::State<AppState>,
    HttpActor(actor): HttpActor,
    Path(id): Path<String>,
) -> ApiResult<Value> {
    Ok(ApiOk(cancel_reassignment(&state, &actor, id).await?))
}

#[utoipa::path(
    get,
    path = "/api/v1/reassignments/throttle",
    tag = "reassignments",
    operation_id = "getThrottle",
    summary = "Replication throttle rate",
    responses((status = 200, description = "The rate in MB/s", body = ref("Throttle")))
)]
async fn throttle_get(state: axum::extract::State<AppState>) -> ApiResult<Value> {
    Ok(ApiOk(throttle_value(&state).await?))
}

#[utoipa::path(
    put,
    path = "/api/v1/reassignments/throttle",
    tag = "reassignments",
    operation_id = "setThrottle",
    summary = "Tune the replication throttle rate",
    description = "Takes effect on the executor's next pass on every broker taking part in moves; audited `throttle.update`. Licensed: ballast's own management route beyond the specification.",
    request_body(content = ThrottleBody),
    responses(
        (status = 200, description = "The new rate", body = ref("Throttle")),
        (status = 400, description = "A rate outside 1 to `BALLAST_THROTTLE_MAX_RATE_MB`"),
    )
)]
async fn throttle_put(
    state: axum::extract::State<AppState>,
    HttpActor(actor): HttpActor,
    Json(body): Json<ThrottleBody>,
) -> ApiResult<Value> {
    Ok(ApiOk(set_throttle(&state, &actor, body.rate_mb).await?))
}
