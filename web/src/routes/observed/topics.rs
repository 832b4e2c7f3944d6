//! `POST /api/v1/topics/search` and `GET /api/v1/optimize/partitions`: REST adapters of
//! `ballast_ops::observed::topics`.

use axum::extract::State;
use axum::response::Response;
pub(crate) use ballast_ops::observed::topics::*;

use super::{ok_json, ok_shared};
use crate::extract::Query;
use crate::{ApiError, AppState};

#[utoipa::path(
    post,
    path = "/api/v1/topics/search",
    tag = "topics",
    operation_id = "searchTopics",
    summary = "Search topics by name",
    description = "Every field optional; an empty body lists every topic.",
    request_body(content = Option<SearchBody>, description = "Optional")
    // responses: declared by the operation `search_topics` (ballast_ops::catalog)
)]
pub async fn search(
    State(state): State<AppState>,
    crate::extract::OptionalJson(body): crate::extract::OptionalJson<SearchBody>,
) -> Result<Response, ApiError> {
    ok_json(&search_topics(&state, body).await?)
}

#[utoipa::path(
    get,
    path = "/api/v1/optimize/partitions",
    tag = "topics",
    operation_id = "getPartitionRecommendations",
    summary = "Partition-count recommendations",
    description = "Per topic: more partitions for throughput or size, a hot partition (skew), or fewer partitions; each with a priority and a reason.",
    params(OptimizeQuery)
    // responses: declared by the operation `get_partition_optimization` (ballast_ops::catalog)
)]
pub async fn optimize(
    State(state): State<AppState>,
    Query(q): Query<OptimizeQuery>,
) -> Result<Response, ApiError> {
    Ok(ok_shared(&get_partition_optimization(&state, q).await?))
}
