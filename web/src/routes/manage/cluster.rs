//! `POST /api/v1/cluster/refresh-metadata`: forces the web process's cluster client to read the
//! metadata again (brokers, controller, topics, partitions) instead of waiting for its cache to
//! age. The observer reads the cluster on its own schedule and is not affected.

use axum::extract::State;
use ballast_kafka::BrokerId;
use serde::Serialize;
use serde_json::json;

use super::fail;
use crate::audit::{record, Actor, Audited};
use crate::{ApiOk, ApiResult, AppState};

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Refreshed {
    cluster_id: Option<String>,
    controller_id: Option<BrokerId>,
    brokers: usize,
    topics: usize,
    partitions: usize,
    #[serde(flatten)]
    audit: Audited,
}

#[utoipa::path(
    post,
    path = "/api/v1/cluster/refresh-metadata",
    tag = "cluster",
    operation_id = "refreshMetadata",
    summary = "Force a metadata refresh",
    description = "Reads the cluster metadata afresh and reports what changed; audited.",
    responses(
        (status = 200, description = "Force a metadata refresh", body = ref("MetadataRefreshed")),
        (status = 502, description = "The cluster answered with an error"),
        (status = 503, description = "The cluster is unreachable"),
    )
)]
pub async fn refresh_metadata(State(state): State<AppState>, actor: Actor) -> ApiResult<Refreshed> {
    let client = state.kafka.client().await?;
    let before = client.cached_metadata();
    let metadata = client
        .refresh_metadata()
        .await
        .map_err(|e| fail(&state, e))?;
    let counts = |m: &ballast_kafka::ClusterMetadata| {
        json!({
            "brokers": m.brokers.len(),
            "topics": m.topics.len(),
            "partitions": m.topics.iter().map(|t| t.partitions.len()).sum::<usize>(),
            "controllerId": m.controller_id,
        })
    };
    let mut event = actor.event(state.clock.now_ms(), "cluster.refresh_metadata", "cluster");
    event.summary = counts(&metadata);
    event.before = Some(counts(&before));
    event.after = Some(counts(&metadata));
    let audit = record(&state, event).await;
    Ok(ApiOk(Refreshed {
        cluster_id: metadata.cluster_id.clone(),
        controller_id: metadata.controller_id,
        brokers: metadata.brokers.len(),
        topics: metadata.topics.len(),
        partitions: metadata.topics.iter().map(|t| t.partitions.len()).sum(),
        audit,
    }))
}
