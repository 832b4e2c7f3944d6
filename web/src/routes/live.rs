//! Read endpoints that ask the cluster directly (through [`ballast_ops::KafkaHandle`]): topic and
//! broker configuration, consumer groups, quotas, ACLs and messages. Every one is free (monitoring
//! mode); the request/response shapes are documented in `docs/api/live.md`.
//!
//! Errors: malformed input is a 400 (the extractors of [`crate::extract`]), an unknown topic,
//! partition, group or broker a 404, an unreachable cluster a 503 (and the client is dropped so
//! the next request reconnects), an error answer of the cluster a 502.

pub(crate) mod acls;
pub(crate) mod configs;
pub(crate) mod groups;
pub(crate) mod messages;
pub(crate) mod quotas;
pub(crate) mod tail;

use axum::routing::{get, post};
use axum::Router;
use ballast_kafka::Error as KafkaError;

use crate::{ApiError, AppState};

/// The operations of this module, as `routes()` serves them (the OpenAPI document).
#[derive(utoipa::OpenApi)]
#[openapi(paths(
    configs::topic_config,
    configs::topic_config_explicit,
    configs::broker_defaults,
    configs::search,
    groups::list,
    groups::summary,
    groups::detail,
    groups::lag,
    quotas::list,
    quotas::resolve,
    quotas::default_pair,
    quotas::default_user,
    quotas::default_client_id,
    quotas::user,
    quotas::user_client,
    quotas::client_id,
    acls::list,
    messages::range,
    tail::tail,
    messages::single,
    messages::watermarks
))]
pub(crate) struct Api;

pub fn routes() -> Router<AppState> {
    Router::new()
        // topics and configuration
        .route("/api/v1/topics/{topic}/config", get(configs::topic_config))
        .route(
            "/api/v1/topics/{topic}/config/explicit",
            get(configs::topic_config_explicit),
        )
        .route("/api/v1/config/defaults", get(configs::broker_defaults))
        .route("/api/v1/topics/config-search", get(configs::search))
        // consumer groups (a group named `summary` is shadowed by the summary)
        .route("/api/v1/consumer-groups", get(groups::list))
        .route("/api/v1/consumer-groups/summary", get(groups::summary))
        .route("/api/v1/consumer-groups/{group}", get(groups::detail))
        .route("/api/v1/consumer-groups/{group}/lag", get(groups::lag))
        // quotas (PUT and DELETE on the entity paths are licensed and come later)
        .route("/api/v1/quotas", get(quotas::list))
        .route("/api/v1/quotas/resolve", post(quotas::resolve))
        .route("/api/v1/quotas/default", get(quotas::default_pair))
        .route("/api/v1/quotas/default-user", get(quotas::default_user))
        .route(
            "/api/v1/quotas/default-client-id",
            get(quotas::default_client_id),
        )
        .route("/api/v1/quotas/user/{user}", get(quotas::user))
        .route(
            "/api/v1/quotas/user/{user}/{clientId}",
            get(quotas::user_client),
        )
        .route(
            "/api/v1/quotas/client-id/{clientId}",
            get(quotas::client_id),
        )
        // ACLs
        .route("/api/v1/acls", get(acls::list))
        // messages
        .route("/api/v1/topics/{topic}/messages", get(messages::range))
        .route("/api/v1/topics/{topic}/messages/tail", get(tail::tail))
        .route(
            "/api/v1/topics/{topic}/messages/{partition}/{offset}",
            get(messages::single),
        )
        .route(
            "/api/v1/topics/{topic}/watermarks",
            get(messages::watermarks),
        )
}

/// The Kafka error name of an error the cluster answered with, if it is one.
pub(super) fn kafka_name(err: &KafkaError) -> Option<&'static str> {
    ballast_ops::cluster::kafka_name(err)
}

/// Maps a cluster error to the error envelope (`ballast_ops::cluster::read_failed`).
/// Connection-level failures also drop the client (in the background, so this stays usable in
/// `map_err`).
pub(super) fn fail(state: &AppState, err: KafkaError) -> ApiError {
    ballast_ops::cluster::read_failed(&state.kafka, err).into()
}

/// An optional text filter; an empty value is no filter.
fn non_empty(value: Option<String>) -> Option<String> {
    value.filter(|v| !v.is_empty())
}
