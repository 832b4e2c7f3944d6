//! `/api/v1/cluster`, `/cluster/comprehensive`, `/cluster/logdirs`, `/cluster/health`,
//! `/cluster/controllers`,
//! `/partitions` and `/brokers/racks`: REST adapters of `ballast_ops::observed::cluster`.

use axum::extract::State;
use axum::response::Response;
pub(crate) use ballast_ops::observed::cluster::*;
use ballast_ops::observed::Aged;

use super::ok_shared;
use crate::extract::Query;
use crate::{ApiError, AppState};

/// The success envelope up to its `data`.
const ENVELOPE_OPEN: &str = "{\"success\":true,\"data\":";

/// An answer whose first field is an `ageMs`: the head up to the age is made per request, the
/// rest (a text rendered once per reading) with the envelope's close is finished once and shared
/// (`etag::aged`), under a weak tag of the rest. `ageMs` is the one field that moves between two
/// requests of one reading; a client whose tag matches has the same reading, its age is
/// `observedAt`'s.
fn with_age(a: &Aged) -> Response {
    let rest = crate::etag::finished(&a.rest, |r| {
        crate::etag::Finished::rest(format!("{r}}}").into())
    });
    crate::etag::aged(
        format!("{ENVELOPE_OPEN}{}{{\"ageMs\":{}", a.head, a.age_ms),
        &rest,
    )
}

#[utoipa::path(
    get,
    path = "/api/v1/cluster",
    tag = "cluster",
    operation_id = "getCluster",
    summary = "Basic cluster info",
    description = "Counts, totals and rates of the latest sample. No query parameters.",
    responses(
        (status = 200, description = "Basic cluster info", body = ref("ClusterInfo")),
        (status = 503, description = "No current sample of the cluster (`cluster data unavailable`)"),
    )
)]
pub async fn cluster(
    State(state): State<AppState>,
    Query(_): Query<NoQuery>,
) -> Result<Response, ApiError> {
    Ok(with_age(&get_cluster(&state).await?))
}

#[utoipa::path(
    get,
    path = "/api/v1/cluster/comprehensive",
    tag = "cluster",
    operation_id = "getClusterComprehensive",
    summary = "Full cluster data",
    description = "The cluster, brokers, topics (with partitions unless `summary=true`), consumer groups, health and rack assessment of one sample. Without `summary` the topics come in pages of whole topics holding at most `limit` partition rows; `page.nextOffset` names the next page.",
    params(ComprehensiveQuery)
    // responses: declared by the operation `get_cluster_overview` (ballast_ops::catalog)
)]
pub async fn comprehensive(
    State(state): State<AppState>,
    Query(q): Query<ComprehensiveQuery>,
) -> Result<Response, ApiError> {
    Ok(with_age(&get_cluster_overview(&state, q).await?.aged()))
}

#[utoipa::path(
    get,
    path = "/api/v1/cluster/logdirs",
    tag = "cluster",
    operation_id = "getClusterLogDirs",
    summary = "Disk usage by broker and log directory",
    description = "With `topic` and/or `brokerId`, per-replica rows too.",
    params(LogDirsQuery)
    // responses: declared by the operation `get_cluster_logdirs` (ballast_ops::catalog)
)]
pub async fn logdirs(
    State(state): State<AppState>,
    Query(q): Query<LogDirsQuery>,
) -> Result<Response, ApiError> {
    Ok(ok_shared(&get_cluster_logdirs(&state, q).await?))
}

#[utoipa::path(
    get,
    path = "/api/v1/cluster/health",
    tag = "cluster",
    operation_id = "getClusterHealth",
    summary = "Broker and partition health",
    description = "`critical`, `degraded` or `healthy`, with the partitions that make it so.",
    params(HealthQuery)
    // responses: declared by the operation `get_cluster_health` (ballast_ops::catalog)
)]
pub async fn health(
    State(state): State<AppState>,
    Query(q): Query<HealthQuery>,
) -> Result<Response, ApiError> {
    Ok(ok_shared(&get_cluster_health(&state, q).await?))
}

#[utoipa::path(
    get,
    path = "/api/v1/cluster/controllers",
    tag = "cluster",
    operation_id = "getClusterControllers",
    summary = "Controllers as nodes",
    description = "On KRaft every voter and observer of the metadata quorum (id, role controller/broker/both, endpoints, leader, lag, time since its last fetch and catch-up, up), with the quorum's health (`quorum: 2 of 3 voters`); on ZooKeeper the controller broker. No query parameters.",
    responses(
        (status = 200, description = "Controllers as nodes", body = ref("Controllers")),
        (status = 503, description = "No current sample of the cluster (`cluster data unavailable`)"),
    )
)]
pub async fn controllers(
    State(state): State<AppState>,
    Query(_): Query<NoQuery>,
) -> Result<Response, ApiError> {
    Ok(ok_shared(&get_cluster_controllers(&state).await?))
}

#[utoipa::path(
    get,
    path = "/api/v1/partitions",
    tag = "cluster",
    operation_id = "listPartitions",
    summary = "List partitions",
    description = "Every partition, one row each, in topic and partition order.",
    params(PartitionsQuery),
    responses(
        (status = 200, description = "List partitions", body = ref("PartitionList")),
        (status = 404, description = "Unknown topic or broker"),
        (status = 503, description = "No current sample of the cluster (`cluster data unavailable`)"),
    )
)]
pub async fn partitions(
    State(state): State<AppState>,
    Query(q): Query<PartitionsQuery>,
) -> Result<Response, ApiError> {
    Ok(ok_shared(&list_partitions(&state, q).await?))
}

#[utoipa::path(
    get,
    path = "/api/v1/brokers/racks",
    tag = "cluster",
    operation_id = "getRacks",
    summary = "Broker rack topology",
    description = "Racks, their brokers and load, and the rack assessment. No query parameters."
    // responses: declared by the operation `get_broker_racks` (ballast_ops::catalog)
)]
pub async fn racks(
    State(state): State<AppState>,
    Query(_): Query<NoQuery>,
) -> Result<Response, ApiError> {
    Ok(ok_shared(&get_broker_racks(&state).await?))
}
