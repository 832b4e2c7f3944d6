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
//! The read and apply helpers of each kind (`configs`, `quotas`, `acls`) are shared with the
//! audit-log revert (`routes::audit`), which puts a recorded `before` back.

pub(crate) mod acls;
pub(crate) mod cluster;
pub(crate) mod configs;
pub(crate) mod groups;
pub(crate) mod quotas;
pub(crate) mod readback;

use axum::http::StatusCode;
use axum::routing::{delete, post, put};
use axum::Router;
use ballast_kafka::{Error as KafkaError, ItemError};

use super::live;
use crate::{ApiError, AppState};

/// The operations of this module, as `routes()` serves them (`crate::openapi`).
#[derive(utoipa::OpenApi)]
#[openapi(paths(
    configs::update,
    configs::bulk_update,
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
pub(super) struct Api;

pub fn routes() -> Router<AppState> {
    Router::new()
        // topics and configuration
        .route("/api/v1/topics/{topic}/config", put(configs::update))
        .route("/api/v1/topics/config/bulk", put(configs::bulk_update))
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

/// Maps a failed cluster call of a mutation to the error envelope: the cluster refusing the
/// request (an invalid value, a policy) is the caller's 400 with the broker's words in `details`;
/// the rest as the live reads map them (404 unknown topic or group, 503 unreachable, 502 other).
pub(crate) fn fail(state: &AppState, err: KafkaError) -> ApiError {
    if let KafkaError::Kafka { name, .. } = &err {
        if let Some(mapped) = refusal(name, ballast_runtime::error_chain(&err)) {
            return mapped;
        }
    }
    live::fail(state, err)
}

/// Maps the cluster's error for one item (a topic, an entity, a binding, a partition).
pub(crate) fn item_fail(context: &str, e: &ItemError) -> ApiError {
    let details = format!("{context}: {e}");
    refusal(e.name, details.clone()).unwrap_or_else(|| match e.name {
        "UNKNOWN_TOPIC_OR_PARTITION" | "UNKNOWN_TOPIC_ID" => {
            ApiError::not_found("unknown topic or partition", details)
        }
        "GROUP_ID_NOT_FOUND" => ApiError::not_found("unknown consumer group", details),
        _ => ApiError::new(StatusCode::BAD_GATEWAY, "cluster error", details),
    })
}

/// Kafka errors that mean "the cluster refused this request as asked".
fn refusal(name: &str, details: String) -> Option<ApiError> {
    Some(match name {
        "INVALID_CONFIG"
        | "INVALID_REQUEST"
        | "POLICY_VIOLATION"
        | "INVALID_TOPIC_EXCEPTION"
        | "INVALID_COMMIT_OFFSET_SIZE"
        | "INVALID_PRINCIPAL_TYPE" => ApiError::bad_request("rejected by the cluster", details),
        "NON_EMPTY_GROUP"
        | "UNKNOWN_MEMBER_ID"
        | "ILLEGAL_GENERATION"
        | "REBALANCE_IN_PROGRESS"
        | "FENCED_INSTANCE_ID" => ApiError::new(
            StatusCode::CONFLICT,
            "consumer group has active members",
            details,
        ),
        "SECURITY_DISABLED" => ApiError::new(
            StatusCode::CONFLICT,
            "the cluster has no authorizer",
            format!("{details}; ACLs cannot be changed until the brokers run an authorizer"),
        ),
        _ => return None,
    })
}

/// A name given in a request body or path (`ballast_ops::names::plain`).
pub(crate) fn check_name(what: &str, name: &str) -> Result<(), ApiError> {
    ballast_ops::names::plain(what, name)
        .map_err(|why| ApiError::bad_request("invalid request", why))
}

/// A topic name by Kafka's own rule (`ballast_ops::names::topic`).
pub(crate) fn check_topic(name: &str) -> Result<(), ApiError> {
    ballast_ops::names::topic(name).map_err(|why| ApiError::bad_request("invalid request", why))
}
