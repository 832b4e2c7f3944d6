pub(crate) mod audit;
pub(crate) mod brokers;
pub(crate) mod live;
pub(crate) mod manage;
pub(crate) mod observed;
pub(crate) mod proposals;
pub(crate) mod reassignments;
pub(crate) mod simulation;
pub(crate) mod system;

use axum::http::{Method, Uri};
use axum::routing::get;
use axum::Router;

use crate::{ApiError, AppState};

/// The routes of this folder's modules (the whole API is `crate::api_routes`).
pub fn routes() -> Router<AppState> {
    Router::new()
        .route("/api/v1/health", get(system::health))
        .route("/api/v1/ready", get(system::ready))
        .route("/api/v1/version", get(system::version))
        .route(
            "/api/v1/third-party-notices",
            get(system::third_party_notices),
        )
        .route("/metrics", get(system::metrics))
        .route(
            "/api/v1/self-healing/status",
            get(system::self_healing_status),
        )
        .merge(observed::routes())
        .merge(live::routes())
        .merge(proposals::routes())
        .merge(reassignments::routes())
        .merge(brokers::routes())
        .merge(simulation::routes())
        .merge(manage::routes())
        .merge(audit::routes())
}

pub async fn not_found(method: Method, uri: Uri) -> ApiError {
    ApiError::not_found("not found", format!("no route for {method} {}", uri.path()))
}

pub async fn method_not_allowed(method: Method, uri: Uri) -> ApiError {
    ApiError::new(
        axum::http::StatusCode::METHOD_NOT_ALLOWED,
        "method not allowed",
        format!("{method} is not supported on {}", uri.path()),
    )
}
