//! Messages of a topic: a range (from an offset, a time, the earliest or the latest, filtered
//! by key or value), one message, and the watermarks: REST adapters of `ballast_ops::messages`.

use axum::extract::State;
pub(crate) use ballast_ops::messages::*;

use crate::extract::{Path, Query};
use crate::{ApiOk, ApiResult, AppState};

#[utoipa::path(
    get,
    path = "/api/v1/topics/{topic}/messages",
    tag = "messages",
    operation_id = "getMessages",
    summary = "Fetch a message range",
    description = "Messages from an offset, a timestamp, the earliest or the latest, optionally filtered by key or value.",
    params(("topic" = String, Path, description = "topic name"), RangeQuery)
    // responses: declared by the operation `browse_messages` (ballast_ops::catalog)
)]
/// `GET /api/v1/topics/{topic}/messages`
pub async fn range(
    State(state): State<AppState>,
    Path(topic): Path<String>,
    Query(q): Query<RangeQuery>,
) -> ApiResult<Range> {
    Ok(ApiOk(browse_messages(&state, topic, q).await?))
}

#[utoipa::path(
    get,
    path = "/api/v1/topics/{topic}/messages/{partition}/{offset}",
    tag = "messages",
    operation_id = "getMessage",
    summary = "A single message",
    description = "",
    params(("topic" = String, Path, description = "topic name"), ("partition" = i32, Path, description = "partition"), ("offset" = i64, Path, description = "offset")),
    responses(
        (status = 200, description = "A single message", body = ref("SingleMessage")),
        (status = 404, description = "Unknown topic or partition, or no message at that offset"),
        (status = 502, description = "The cluster answered with an error"),
        (status = 503, description = "The cluster is unreachable"),
    )
)]
/// `GET /api/v1/topics/{topic}/messages/{partition}/{offset}`: one message, whole.
pub async fn single(
    State(state): State<AppState>,
    Path((topic, partition, offset)): Path<(String, i32, i64)>,
    Query(_): Query<NoQuery>,
) -> ApiResult<SingleMessage> {
    Ok(ApiOk(get_message(&state, topic, partition, offset).await?))
}

#[utoipa::path(
    get,
    path = "/api/v1/topics/{topic}/watermarks",
    tag = "messages",
    operation_id = "getWatermarks",
    summary = "Topic watermarks",
    description = "Earliest and latest offsets per partition.",
    params(("topic" = String, Path, description = "topic name"))
    // responses: declared by the operation `get_topic_watermarks` (ballast_ops::catalog)
)]
/// `GET /api/v1/topics/{topic}/watermarks`
pub async fn watermarks(
    State(state): State<AppState>,
    Path(topic): Path<String>,
    Query(_): Query<NoQuery>,
) -> ApiResult<Watermarks> {
    Ok(ApiOk(get_topic_watermarks(&state, topic).await?))
}
