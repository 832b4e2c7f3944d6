//! `POST /api/v1/cluster/refresh-metadata`: forces a fresh look at the cluster. The web process's
//! own cluster client reads the metadata again (brokers, controller, topics, partitions) instead of
//! waiting for its cache to age, and the observer is asked for an immediate sample through the
//! database (`Store::request_sample`; it polls every `BALLAST_SAMPLE_REQUEST_POLL`), so the
//! observed view that `/api/v1/cluster`, previews and proposals read follows too.

use axum::extract::State;
use ballast_kafka::BrokerId;
use ballast_runtime::format_rfc3339_ms;
use serde::Serialize;
use serde_json::json;

use super::fail;
use crate::audit::{record, Audited, HttpActor};
use crate::{ApiOk, ApiResult, AppState};

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Refreshed {
    cluster_id: Option<String>,
    controller_id: Option<BrokerId>,
    brokers: usize,
    topics: usize,
    partitions: usize,
    observer_sample: ObserverSample,
    #[serde(flatten)]
    audit: Audited,
}

/// The observer sample this request asked for.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ObserverSample {
    requested: bool,
    requested_at: String,
    /// How often the observer looks for a request (`BALLAST_SAMPLE_REQUEST_POLL`): the sample
    /// starts within about this long, when the observer is running.
    poll_seconds: f64,
}

#[utoipa::path(
    post,
    path = "/api/v1/cluster/refresh-metadata",
    tag = "cluster",
    operation_id = "refreshMetadata",
    summary = "Force a metadata refresh",
    description = "Reads the cluster metadata afresh in the web process and asks the observer for an immediate sample (it looks for the request every `BALLAST_SAMPLE_REQUEST_POLL`), so the observed view (`/api/v1/cluster`, previews, proposals) follows; reports the counts read and the sample requested; audited.",
    responses(
        (status = 200, description = "Metadata read; observer sample requested", body = ref("MetadataRefreshed")),
        (status = 502, description = "The cluster answered with an error"),
        (status = 503, description = "The cluster is unreachable"),
    )
)]
pub async fn refresh_metadata(
    State(state): State<AppState>,
    HttpActor(actor): HttpActor,
) -> ApiResult<Refreshed> {
    let client = state.kafka.client().await?;
    let before = client.cached_metadata();
    let metadata = client
        .refresh_metadata()
        .await
        .map_err(|e| fail(&state, e))?;
    // Metadata's controller id on KRaft is a broker the answering broker picks: the active
    // controller is the quorum's leader (ZooKeeper: Metadata's).
    let controller_id = client
        .active_controller()
        .await
        .map_err(|e| fail(&state, e))?
        .id;
    let now = state.clock.now_ms();
    let requested = state.db(move |s| s.request_sample(now)).await?;
    let observer_sample = ObserverSample {
        requested: true,
        requested_at: format_rfc3339_ms(requested.requested_at_ms),
        poll_seconds: state.config.timing.sample_request_poll.as_secs_f64(),
    };
    let counts = |m: &ballast_kafka::ClusterMetadata| {
        json!({
            "brokers": m.brokers.len(),
            "topics": m.topics.len(),
            "partitions": m.topics.iter().map(|t| t.partitions.len()).sum::<usize>(),
        })
    };
    let mut event = actor.event(now, "cluster.refresh_metadata", "cluster");
    event.summary = counts(&metadata);
    event.summary["controllerId"] = json!(controller_id);
    event.summary["observerSampleRequested"] = json!(true);
    event.before = Some(counts(&before));
    event.after = Some(counts(&metadata));
    let audit = record(&state, event).await;
    Ok(ApiOk(Refreshed {
        cluster_id: metadata.cluster_id.clone(),
        controller_id,
        brokers: metadata.brokers.len(),
        topics: metadata.topics.len(),
        partitions: metadata.topics.iter().map(|t| t.partitions.len()).sum(),
        observer_sample,
        audit,
    }))
}
