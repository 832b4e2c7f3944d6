//! Read endpoints served from what the observer recorded in SQLite: the cluster, its health,
//! log dirs, follower lag, partitions, racks, topic search, partition-count recommendations and
//! activity scores. Every one is free (monitoring mode). Shapes and parameters are documented in
//! `docs/api/observed.md`.
//!
//! The reads are operations of `ballast_ops::observed` (cluster, topics, activity), answered from
//! the in-memory view of the latest sample ([`crate::observed_view`]), never from SQLite scans;
//! these handlers extract their input, call them and finish the shared text once
//! (`crate::etag`). While there is no sample, or the latest is older than
//! `BALLAST_READY_STALE_AFTER`, they answer 503; a partial sample (a broker whose log dirs could
//! not be read, partitions without rates yet) gives null values and a `coverage` object.
//! Malformed input is a 400, an unknown topic or broker a 404, both in the error envelope.

pub(crate) mod activity;
pub(crate) mod cluster;
pub(crate) mod history;
pub(crate) mod lag;
pub(crate) mod topics;

use std::sync::Arc;

use axum::http::header::CONTENT_TYPE;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::Router;
use ballast_model::BrokerId;
use serde::Serialize;

use crate::observed_view as view;
use crate::{ApiError, AppState};

/// The operations of this module, as `routes()` serves them (the OpenAPI document).
#[derive(utoipa::OpenApi)]
#[openapi(paths(
    cluster::cluster,
    cluster::comprehensive,
    cluster::logdirs,
    cluster::health,
    lag::follower_lag,
    cluster::controllers,
    cluster::partitions,
    cluster::racks,
    history::all,
    history::broker,
    history::topic,
    topics::search,
    topics::optimize,
    activity::partitions,
    activity::topics,
    activity::brokers
))]
pub(crate) struct Api;

pub fn routes() -> Router<AppState> {
    Router::new()
        .route("/api/v1/cluster", get(cluster::cluster))
        .route("/api/v1/cluster/comprehensive", get(cluster::comprehensive))
        .route("/api/v1/cluster/logdirs", get(cluster::logdirs))
        .route("/api/v1/cluster/health", get(cluster::health))
        .route("/api/v1/cluster/controllers", get(cluster::controllers))
        .route("/api/v1/cluster/follower-lag", get(lag::follower_lag))
        .route("/api/v1/partitions", get(cluster::partitions))
        .route("/api/v1/brokers/racks", get(cluster::racks))
        .route("/api/v1/brokers/loads/history", get(history::all))
        .route(
            "/api/v1/brokers/{brokerId}/loads/history",
            get(history::broker),
        )
        .route("/api/v1/topics/search", post(topics::search))
        .route("/api/v1/topics/{topic}/history", get(history::topic))
        .route("/api/v1/optimize/partitions", get(topics::optimize))
        .route("/api/v1/activity/partitions", get(activity::partitions))
        .route("/api/v1/activity/topics", get(activity::topics))
        .route("/api/v1/activity/brokers", get(activity::brokers))
}

/// `{"success": true, "data": <data>}` serialised straight to text (large answers never pass
/// through a `serde_json::Value`).
pub(crate) fn ok_json<T: Serialize + ?Sized>(data: &T) -> Result<Response, ApiError> {
    let text = serde_json::to_string(data)
        .map_err(|e| ApiError::internal("response encoding failed", e.to_string()))?;
    Ok(ok_raw(&text))
}

/// The success envelope around `data`, a text of a render cache: finished (envelope bytes and
/// tag) once per text and shared by every request that serves it (`etag::finished`).
pub(crate) fn ok_shared(data: &Arc<String>) -> Response {
    crate::etag::finished(data, |data| {
        crate::etag::Finished::new(enveloped(data).into())
    })
    .response()
}

fn enveloped(data: &str) -> String {
    let mut body = String::with_capacity(data.len() + 26);
    body.push_str("{\"success\":true,\"data\":");
    body.push_str(data);
    body.push('}');
    body
}

/// The success envelope around already serialised `data`.
pub(crate) fn ok_raw(data: &str) -> Response {
    ([(CONTENT_TYPE, "application/json")], enveloped(data)).into_response()
}

/// The index of topic `name`, or a 404 in the error envelope.
pub(crate) fn known_topic(v: &view::View, name: &str) -> Result<usize, ApiError> {
    Ok(ballast_ops::observed::known_topic(v, name)?)
}

/// `id` if the cluster knows the broker, or a 404 in the error envelope.
pub(crate) fn known_broker(v: &view::View, id: BrokerId) -> Result<BrokerId, ApiError> {
    Ok(ballast_ops::observed::known_broker(v, id)?)
}
