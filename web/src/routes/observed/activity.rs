//! Activity scores: `GET /api/v1/activity/partitions`, `/activity/topics`, `/activity/brokers`:
//! REST adapters of `ballast_ops::observed::activity` (the scores are explained there).

use axum::extract::State;
use axum::response::Response;
pub(crate) use ballast_ops::observed::activity::*;

use super::ok_shared;
use crate::extract::Query;
use crate::{ApiError, AppState};

#[utoipa::path(
    get,
    path = "/api/v1/activity/partitions",
    tag = "activity",
    operation_id = "getPartitionActivity",
    summary = "Partition activity",
    description = "Each partition's share of the cluster's traffic. Without `sortBy` rows come in topic and partition order.",
    params(ActivityQuery)
    // responses: declared by the operation `get_partition_activity` (ballast_ops::catalog)
)]
pub async fn partitions(
    State(state): State<AppState>,
    Query(q): Query<ActivityQuery>,
) -> Result<Response, ApiError> {
    Ok(ok_shared(&get_partition_activity(&state, q).await?))
}

#[utoipa::path(
    get,
    path = "/api/v1/activity/topics",
    tag = "activity",
    operation_id = "getTopicActivity",
    summary = "Topic activity",
    description = "Each topic's share of the cluster's traffic and its hottest partition. `aggregate` does not apply.",
    params(ActivityQuery),
    responses(
        (status = 200, description = "Topic activity", body = ref("ActivityTopics")),
        (status = 404, description = "Unknown topic"),
        (status = 503, description = "No current sample of the cluster (`cluster data unavailable`)"),
    )
)]
pub async fn topics(
    State(state): State<AppState>,
    Query(q): Query<ActivityQuery>,
) -> Result<Response, ApiError> {
    Ok(ok_shared(&get_topic_activity(&state, q).await?))
}

#[utoipa::path(
    get,
    path = "/api/v1/activity/brokers",
    tag = "activity",
    operation_id = "getBrokerActivity",
    summary = "Broker activity",
    description = "Each broker's share of the traffic of the partitions it leads. `aggregate` does not apply.",
    params(ActivityQuery),
    responses(
        (status = 200, description = "Broker activity", body = ref("ActivityBrokers")),
        (status = 404, description = "Unknown broker"),
        (status = 503, description = "No current sample of the cluster (`cluster data unavailable`)"),
    )
)]
pub async fn brokers(
    State(state): State<AppState>,
    Query(q): Query<ActivityQuery>,
) -> Result<Response, ApiError> {
    Ok(ok_shared(&get_broker_activity(&state, q).await?))
}
