//! Broker operations over REST: maintenance (enter drains the broker, exit ends it),
//! log-directory moves, and preferred leader elections (cluster-wide and per topic). Adapters
//! over `ballast_ops::brokers` (where the rules live; shapes: `docs/api/reassignments.md`).

use axum::routing::post;
use axum::Router;
pub(crate) use ballast_ops::brokers::*;
use ballast_ops::reassignments::ForceQuery;
use serde_json::Value;

use crate::audit::HttpActor;
use crate::extract::{OptionalJson, Path, Query};
use crate::{ApiOk, ApiResult, AppState};

/// The operations of this module, as `routes()` serves them (the OpenAPI document).
#[derive(utoipa::OpenApi)]
#[openapi(paths(enter, exit, logdirs_move, elect_cluster, elect_topic))]
pub(crate) struct Api;

pub fn routes() -> Router<AppState> {
    Router::new()
        .route(
            "/api/v1/brokers/{brokerId}/maintenance",
            post(enter).delete(exit),
        )
        .route(
            "/api/v1/brokers/{brokerId}/logdirs/move",
            post(logdirs_move),
        )
        .route("/api/v1/preferred-leader-election", post(elect_cluster))
        .route(
            "/api/v1/topics/{topic}/preferred-leader-election",
            post(elect_topic),
        )
}

#[utoipa::path(
    post,
    path = "/api/v1/brokers/{brokerId}/maintenance",
    tag = "brokers",
    operation_id = "enterMaintenance",
    summary = "Enter broker maintenance (drains it)",
    description = "Records the broker in maintenance and, unless `drain` is false, queues a two-phase drain (strategy `DRAIN`): leadership first, then replicas. Audited `brokers.maintenance.enter`.",
    params(("brokerId" = i32, Path, description = "broker id"), ForceQuery),
    request_body(content = Option<EnterBody>, description = "Optional")
    // responses: declared by the operation `set_broker_maintenance` (ballast_ops::catalog)
)]
async fn enter(
    state: axum::extract::State<AppState>,
    HttpActor(actor): HttpActor,
    Path(broker): Path<i32>,
    Query(q): Query<ForceQuery>,
    OptionalJson(body): OptionalJson<EnterBody>,
) -> ApiResult<Value> {
    Ok(ApiOk(
        set_broker_maintenance(&state, &actor, broker, q, body).await?,
    ))
}

#[utoipa::path(
    delete,
    path = "/api/v1/brokers/{brokerId}/maintenance",
    tag = "brokers",
    operation_id = "exitMaintenance",
    summary = "Exit broker maintenance",
    description = "Ends the maintenance; the next proposal moves partitions back onto the broker. A drain of the broker still running is cancelled (moves in flight are cancelled through the cluster, completed ones stay) unless `keepDrain=true`; `drain` says which operation, how far it got and whether it was cancelled. Audited `brokers.maintenance.exit`.",
    params(("brokerId" = i32, Path, description = "broker id"), ExitQuery)
    // responses: declared by the operation `remove_broker_maintenance` (ballast_ops::catalog)
)]
async fn exit(
    state: axum::extract::State<AppState>,
    HttpActor(actor): HttpActor,
    Path(broker): Path<i32>,
    Query(q): Query<ExitQuery>,
) -> ApiResult<Value> {
    let keep_drain = q.keep_drain.unwrap_or(false);
    Ok(ApiOk(
        remove_broker_maintenance(&state, &actor, broker, keep_drain).await?,
    ))
}

#[utoipa::path(
    post,
    path = "/api/v1/brokers/{brokerId}/logdirs/move",
    tag = "brokers",
    operation_id = "moveLogDirs",
    summary = "Move replicas between log directories",
    description = "Explicit `moves`, or every replica of directory `from` to `to`. Takes the mutation slot for the request; audited `logdirs.move`.",
    params(("brokerId" = i32, Path, description = "broker id")),
    request_body(content = LogDirsBody)
    // responses: declared by the operation `move_broker_logdirs` (ballast_ops::catalog)
)]
async fn logdirs_move(
    state: axum::extract::State<AppState>,
    HttpActor(actor): HttpActor,
    Path(broker): Path<i32>,
    OptionalJson(body): OptionalJson<LogDirsBody>,
) -> ApiResult<Value> {
    Ok(ApiOk(
        move_broker_logdirs(&state, &actor, broker, body).await?,
    ))
}

#[utoipa::path(
    post,
    path = "/api/v1/preferred-leader-election",
    tag = "brokers",
    operation_id = "electPreferredLeaders",
    summary = "Cluster-wide preferred leader election",
    description = "Default: every partition whose preferred leader does not lead. Takes the mutation slot for the election; audited `leaders.elect`.",
    request_body(content = Option<ClusterElection>, description = "Optional")
    // responses: declared by the operation `preferred_leader_election` (ballast_ops::catalog)
)]
async fn elect_cluster(
    state: axum::extract::State<AppState>,
    HttpActor(actor): HttpActor,
    OptionalJson(body): OptionalJson<ClusterElection>,
) -> ApiResult<Value> {
    Ok(ApiOk(
        preferred_leader_election(&state, &actor, Election::Cluster(body)).await?,
    ))
}

#[utoipa::path(
    post,
    path = "/api/v1/topics/{topic}/preferred-leader-election",
    tag = "brokers",
    operation_id = "electTopicPreferredLeaders",
    summary = "Preferred leader election of one topic",
    description = "Touches only the path's topic. Audited `leaders.elect`.",
    params(("topic" = String, Path, description = "topic name")),
    request_body(content = Option<TopicElection>, description = "Optional"),
    responses(
        (status = 200, description = "Every partition's outcome", body = ref("Election")),
        (status = 400, description = "The body names another topic"),
        (status = 404, description = "Unknown topic, or every named partition is unknown"),
        (status = 409, description = "The mutation slot is held, or the cluster refused every partition because its preferred leader is down or out of sync (`no leader was elected`)"),
        (status = 502, description = "The cluster refused every partition for another reason (`no leader was elected`)"),
        (status = 503, description = "The cluster could not be read"),
    )
)]
async fn elect_topic(
    state: axum::extract::State<AppState>,
    HttpActor(actor): HttpActor,
    Path(topic): Path<String>,
    OptionalJson(body): OptionalJson<TopicElection>,
) -> ApiResult<Value> {
    Ok(ApiOk(
        preferred_leader_election(&state, &actor, Election::Topic(topic, body)).await?,
    ))
}
