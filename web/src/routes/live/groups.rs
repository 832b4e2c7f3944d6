//! Consumer groups: the list, a summary, one group with its members and offsets, and its lag per
//! partition: REST adapters of `ballast_ops::group_reads`.

use axum::extract::State;
use axum::response::Response;
pub(crate) use ballast_ops::group_reads::*;

use crate::extract::{Path, Query};
use crate::routes::observed::ok_shared;
use crate::{ApiError, ApiOk, ApiResult, AppState};

#[utoipa::path(
    get,
    path = "/api/v1/consumer-groups",
    tag = "consumer-groups",
    operation_id = "listConsumerGroups",
    summary = "List consumer groups",
    description = "Groups with their state, members and lag.",
    params(ListQuery)
    // responses: declared by the operation `list_consumer_groups` (ballast_ops::catalog)
)]
/// `GET /api/v1/consumer-groups`: groups by id, with members, coordinator and total lag (the
/// default page made once per read and shared).
pub async fn list(
    State(state): State<AppState>,
    Query(q): Query<ListQuery>,
) -> Result<Response, ApiError> {
    Ok(ok_shared(&list_consumer_groups(&state, q).await?.text))
}

#[utoipa::path(
    get,
    path = "/api/v1/consumer-groups/summary",
    tag = "consumer-groups",
    operation_id = "getConsumerGroupSummary",
    summary = "Consumer-group statistics",
    description = "Aggregated statistics over every group.",
    params(SummaryQuery),
    responses(
        (status = 200, description = "Consumer-group statistics", body = ref("GroupSummary")),
        (status = 502, description = "The cluster answered with an error"),
        (status = 503, description = "The cluster is unreachable"),
    )
)]
/// `GET /api/v1/consumer-groups/summary`: counts by state and protocol type, members, lag, and
/// the groups with the largest lag (without parameters made once per read and shared).
pub async fn summary(
    State(state): State<AppState>,
    Query(q): Query<SummaryQuery>,
) -> Result<Response, ApiError> {
    Ok(ok_shared(&get_consumer_group_summary(&state, q).await?))
}

#[utoipa::path(
    get,
    path = "/api/v1/consumer-groups/{group}",
    tag = "consumer-groups",
    operation_id = "getConsumerGroup",
    summary = "Consumer group details",
    description = "The group with its members and their assignments.",
    params(("group" = String, Path, description = "consumer group id"), DetailQuery)
    // responses: declared by the operation `describe_consumer_group` (ballast_ops::catalog)
)]
/// `GET /api/v1/consumer-groups/{group}`: the group with its members, their assignments and the
/// group's offsets with lag.
pub async fn detail(
    State(state): State<AppState>,
    Path(group): Path<String>,
    Query(_): Query<DetailQuery>,
) -> ApiResult<Detail> {
    Ok(ApiOk(describe_consumer_group(&state, group).await?))
}

#[utoipa::path(
    get,
    path = "/api/v1/consumer-groups/{group}/lag",
    tag = "consumer-groups",
    operation_id = "getConsumerGroupLag",
    summary = "Consumer group lag per partition",
    description = "Committed offsets against log-end offsets, per partition.",
    params(("group" = String, Path, description = "consumer group id"), LagQuery)
    // responses: declared by the operation `get_consumer_group_lag` (ballast_ops::catalog)
)]
/// `GET /api/v1/consumer-groups/{group}/lag`: committed offset, log end and lag per partition.
pub async fn lag(
    State(state): State<AppState>,
    Path(group): Path<String>,
    Query(q): Query<LagQuery>,
) -> ApiResult<Lag> {
    Ok(ApiOk(get_consumer_group_lag(&state, group, q).await?))
}
