//! Consumer groups over REST: resetting committed offsets (with a dry run) and deleting a group.
//! Adapters over the operations `reset_consumer_group_offsets` and `delete_consumer_group`
//! (`ballast_ops::groups`, where the rules live: both need the group to be empty).

use axum::extract::State;
use ballast_ops::groups::{
    delete_consumer_group, reset_consumer_group_offsets, DeleteResult, Reset, ResetResult,
};
use serde::Deserialize;
use serde_json::Value;

use crate::audit::HttpActor;
use crate::extract::{Json, Path};
use crate::{ApiOk, ApiResult, AppState};

fn strategy_schema() -> utoipa::openapi::Object {
    ballast_ops::schema::string_enum(["earliest", "latest", "timestamp", "shift", "offsets"])
}

#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ResetBody {
    /// `earliest`, `latest`, `timestamp`, `shift` or `offsets`.
    #[schema(schema_with = strategy_schema)]
    pub(crate) strategy: String,
    /// Only this topic (all its partitions, or `partitions`); default: every partition the group
    /// has committed offsets for.
    pub(crate) topic: Option<String>,
    pub(crate) partitions: Option<Vec<i32>>,
    /// For `timestamp`: Unix ms or RFC 3339.
    #[schema(value_type = Option<String>)]
    pub(crate) timestamp: Option<Value>,
    /// For `shift`: added to the committed offset (negative moves back).
    pub(crate) shift_by: Option<i64>,
    /// For `offsets`: the exact offsets.
    pub(crate) offsets: Option<Vec<OffsetEntry>>,
    /// Plan only: answer the offsets it would commit, change nothing, audit nothing.
    #[serde(default)]
    pub(crate) dry_run: bool,
}

#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct OffsetEntry {
    pub(crate) topic: String,
    pub(crate) partition: i32,
    pub(crate) offset: i64,
}

impl From<ResetBody> for Reset {
    fn from(b: ResetBody) -> Reset {
        Reset {
            strategy: b.strategy,
            topic: b.topic,
            partitions: b.partitions,
            timestamp: b.timestamp,
            shift_by: b.shift_by,
            offsets: b.offsets.map(|o| {
                o.into_iter()
                    .map(|e| ballast_ops::groups::OffsetEntry {
                        topic: e.topic,
                        partition: e.partition,
                        offset: e.offset,
                    })
                    .collect()
            }),
            dry_run: b.dry_run,
        }
    }
}

#[utoipa::path(
    post,
    path = "/api/v1/consumer-groups/{group}/reset-offsets",
    tag = "consumer-groups",
    operation_id = "resetConsumerGroupOffsets",
    summary = "Reset consumer group offsets",
    description = "`earliest`, `latest`, `timestamp`, `shift` or exact `offsets`; the group must be empty. `dryRun` answers the offsets without committing.",
    params(("group" = String, Path, description = "consumer group id")),
    request_body(content = ResetBody)
    // responses: declared by the operation `reset_consumer_group_offsets` (ballast_ops::catalog)
)]
/// `POST /api/v1/consumer-groups/{group}/reset-offsets`
pub async fn reset_offsets(
    State(state): State<AppState>,
    HttpActor(actor): HttpActor,
    Path(group): Path<String>,
    Json(body): Json<ResetBody>,
) -> ApiResult<ResetResult> {
    Ok(ApiOk(
        reset_consumer_group_offsets(&state, &actor, group, body.into()).await?,
    ))
}

#[utoipa::path(
    delete,
    path = "/api/v1/consumer-groups/{group}",
    tag = "consumer-groups",
    operation_id = "deleteConsumerGroup",
    summary = "Delete a consumer group",
    description = "The group must be empty. Audited.",
    params(("group" = String, Path, description = "consumer group id"))
    // responses: declared by the operation `delete_consumer_group` (ballast_ops::catalog)
)]
/// `DELETE /api/v1/consumer-groups/{group}`: deletes an empty group with its committed offsets.
pub async fn delete(
    State(state): State<AppState>,
    HttpActor(actor): HttpActor,
    Path(group): Path<String>,
) -> ApiResult<DeleteResult> {
    Ok(ApiOk(delete_consumer_group(&state, &actor, group).await?))
}
