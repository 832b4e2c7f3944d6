//! Topic configuration updates over REST: one topic, or several at once. Adapters over the
//! operations `update_topic_config` and `bulk_update_topic_config`
//! (`ballast_ops::topic_configs`, where the rules live).

use std::collections::BTreeMap;

use axum::extract::State;
use ballast_ops::topic_configs::{
    bulk_update_topic_config, update_topic_config, BulkUpdate, BulkUpdated, Updated,
};
use serde::Deserialize;
use serde_json::Value;

use crate::audit::HttpActor;
use crate::extract::{Json, Path};
use crate::{ApiOk, ApiResult, AppState};

#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[schema(as = TopicConfigUpdateBody)]
pub struct UpdateBody {
    /// key → new value (string, number or boolean), or null to remove the topic's override.
    pub(crate) configs: BTreeMap<String, Value>,
}

#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[schema(as = TopicConfigBulkBody)]
pub struct BulkBody {
    /// The same `configs` for every topic listed...
    pub(crate) topics: Option<Vec<String>>,
    pub(crate) configs: Option<BTreeMap<String, Value>>,
    /// ... or one entry per topic.
    pub(crate) updates: Option<Vec<TopicUpdate>>,
}

#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct TopicUpdate {
    pub(crate) topic: String,
    pub(crate) configs: BTreeMap<String, Value>,
}

impl From<BulkBody> for BulkUpdate {
    fn from(b: BulkBody) -> BulkUpdate {
        BulkUpdate {
            topics: b.topics,
            configs: b.configs,
            updates: b
                .updates
                .map(|u| u.into_iter().map(|u| (u.topic, u.configs)).collect()),
        }
    }
}

#[utoipa::path(
    put,
    path = "/api/v1/topics/{topic}/config",
    tag = "topics",
    operation_id = "updateTopicConfig",
    summary = "Update topic configuration",
    description = "Sets or removes (null) the topic's overrides: validated, read before, changed, read after, audited.",
    params(("topic" = String, Path, description = "topic name")),
    request_body(content = UpdateBody)
    // responses: declared by the operation `update_topic_config` (ballast_ops::catalog)
)]
/// `PUT /api/v1/topics/{topic}/config` with `{"configs": {key: value | null}}`.
pub async fn update(
    State(state): State<AppState>,
    HttpActor(actor): HttpActor,
    Path(topic): Path<String>,
    Json(body): Json<UpdateBody>,
) -> ApiResult<Updated> {
    Ok(ApiOk(
        update_topic_config(&state, &actor, topic, body.configs).await?,
    ))
}

#[utoipa::path(
    put,
    path = "/api/v1/topics/config/bulk",
    tag = "topics",
    operation_id = "bulkUpdateTopicConfig",
    summary = "Bulk update of topic configuration",
    description = "The same `configs` for every topic in `topics`, or one entry per topic in `updates`.",
    request_body(content = BulkBody)
    // responses: declared by the operation `bulk_update_topic_config` (ballast_ops::catalog)
)]
/// `PUT /api/v1/topics/config/bulk` with `{"topics": [...], "configs": {...}}` (the same change
/// everywhere) or `{"updates": [{"topic", "configs"}]}`. All or nothing: the cluster validates
/// every topic's change before any is applied.
pub async fn bulk_update(
    State(state): State<AppState>,
    HttpActor(actor): HttpActor,
    Json(body): Json<BulkBody>,
) -> ApiResult<BulkUpdated> {
    Ok(ApiOk(
        bulk_update_topic_config(&state, &actor, body.into()).await?,
    ))
}
