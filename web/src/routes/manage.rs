//! Management endpoints that change the cluster but move no partition: topic configuration,
//! consumer-group offsets and deletion, client quotas, ACLs, and the metadata refresh. Shapes:
//! `docs/api/manage.md`.
//!
//! Every handler follows the same steps: validate the request (malformed input is a 4xx and
//! nothing is sent to the cluster), read the values it is about to change, change them, read them
//! again, and record one audit event with both (`crate::audit`). The license check is not here:
//! one middleware guards every licensed route.
//!
//! The read after a change waits until the cluster shows it (`readback`): on KRaft a broker
//! applies a change a moment after the controller accepted it.
//!
//! The read and apply helpers of each kind (`ballast_ops::{topic_configs, quotas, acls}`) are
//! shared with the audit-log revert (`routes::audit`), which puts a recorded `before` back.

pub(crate) mod acls;
pub(crate) mod cluster;
pub(crate) mod configs;
pub(crate) mod groups;
pub(crate) mod quotas;
pub(crate) mod topics;

use axum::routing::{delete, post, put};
use axum::Router;
use ballast_kafka::Error as KafkaError;

use crate::{ApiError, AppState};

/// The operations of this module, as `routes()` serves them (the OpenAPI document).
#[derive(utoipa::OpenApi)]
#[openapi(paths(
    configs::update,
    configs::bulk_update,
    topics::create,
    topics::partitions,
    topics::replication_factor,
    topics::delete,
    groups::reset_offsets,
    groups::delete,
    quotas::put_default_pair,
    quotas::delete_default_pair,
    quotas::put_default_user,
    quotas::delete_default_user,
    quotas::put_default_client_id,
    quotas::delete_default_client_id,
    quotas::put_user,
    quotas::delete_user,
    quotas::put_client_id,
    quotas::delete_client_id,
    quotas::put_user_client,
    quotas::delete_user_client,
    acls::create,
    acls::update,
    acls::delete,
    cluster::refresh_metadata
))]
pub(crate) struct Api;

pub fn routes() -> Router<AppState> {
    Router::new()
        // topics and configuration
        .route("/api/v1/topics/{topic}/config", put(configs::update))
        .route("/api/v1/topics/config/bulk", put(configs::bulk_update))
        .route("/api/v1/topics", post(topics::create))
        .route("/api/v1/topics/{topic}", delete(topics::delete))
        .route(
            "/api/v1/topics/{topic}/partitions",
            post(topics::partitions),
        )
        .route(
            "/api/v1/topics/{topic}/replication-factor",
            put(topics::replication_factor),
        )
        // consumer groups
        .route(
            "/api/v1/consumer-groups/{group}/reset-offsets",
            post(groups::reset_offsets),
        )
        .route("/api/v1/consumer-groups/{group}", delete(groups::delete))
        // quota entities (GET is served by the live routes)
        .route(
            "/api/v1/quotas/default",
            put(quotas::put_default_pair).delete(quotas::delete_default_pair),
        )
        .route(
            "/api/v1/quotas/default-user",
            put(quotas::put_default_user).delete(quotas::delete_default_user),
        )
        .route(
            "/api/v1/quotas/default-client-id",
            put(quotas::put_default_client_id).delete(quotas::delete_default_client_id),
        )
        .route(
            "/api/v1/quotas/user/{user}",
            put(quotas::put_user).delete(quotas::delete_user),
        )
        .route(
            "/api/v1/quotas/client-id/{clientId}",
            put(quotas::put_client_id).delete(quotas::delete_client_id),
        )
        .route(
            "/api/v1/quotas/user/{user}/{clientId}",
            put(quotas::put_user_client).delete(quotas::delete_user_client),
        )
        // ACLs
        .route(
            "/api/v1/acls",
            post(acls::create).put(acls::update).delete(acls::delete),
        )
        // cluster
        .route(
            "/api/v1/cluster/refresh-metadata",
            post(cluster::refresh_metadata),
        )
}

/// A failed cluster call of a mutation in the envelope (`ballast_ops::cluster::change_failed`).
pub(crate) fn fail(state: &AppState, err: KafkaError) -> ApiError {
    ballast_ops::cluster::change_failed(&state.kafka, err).into()
}
