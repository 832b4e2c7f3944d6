//! What-if simulation and blast radius over the observed cluster: REST adapters of
//! `ballast_ops::simulation` (where the rules live). Shapes: `docs/api/simulation.md`.

use axum::extract::State;
use axum::response::Response;
use axum::routing::post;
use axum::Router;
use ballast_balancer::blast::BlastRequest;
use ballast_balancer::whatif::WhatIfRequest;
pub(crate) use ballast_ops::simulation::*;

use super::observed::ok_json;
use crate::extract::Json;
use crate::{ApiError, AppState};

/// The operations of this module, as `routes()` serves them (the OpenAPI document).
#[derive(utoipa::OpenApi)]
#[openapi(paths(simulate, blast_radius))]
pub(crate) struct Api;

pub fn routes() -> Router<AppState> {
    Router::new()
        .route("/api/v1/what-if/simulate", post(simulate))
        .route("/api/v1/blast-radius/analyze", post(blast_radius))
}

#[utoipa::path(
    post,
    path = "/api/v1/what-if/simulate",
    tag = "simulation",
    operation_id = "simulateWhatIf",
    summary = "What-if simulation",
    description = "Applies the scenarios in order to the observed cluster and plans the result with the proposals' planner and settings (no move cooldown, no partition cap). Read-only. docs/api/simulation.md.",
    request_body(content = ref("WhatIfRequest"))
    // responses: declared by the operation `what_if_simulate` (ballast_ops::catalog)
)]
/// `POST /api/v1/what-if/simulate`
async fn simulate(
    State(state): State<AppState>,
    Json(request): Json<WhatIfRequest>,
) -> Result<Response, ApiError> {
    ok_json(&what_if_simulate(&state, request).await?)
}

#[utoipa::path(
    post,
    path = "/api/v1/blast-radius/analyze",
    tag = "simulation",
    operation_id = "analyzeBlastRadius",
    summary = "Failure blast radius",
    description = "What fails when a broker, several brokers or a rack fail: offline and min-ISR partitions, leadership failover, re-replication bytes and time, consumer groups. Read-only. docs/api/simulation.md.",
    request_body(content = ref("BlastRequest"))
    // responses: declared by the operation `blast_radius_analyze` (ballast_ops::catalog)
)]
/// `POST /api/v1/blast-radius/analyze`
async fn blast_radius(
    State(state): State<AppState>,
    Json(request): Json<BlastRequest>,
) -> Result<Response, ApiError> {
    ok_json(&blast_radius_analyze(&state, request).await?)
}
