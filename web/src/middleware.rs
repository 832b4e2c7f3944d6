use std::time::Instant;

use axum::extract::{MatchedPath, Request, State};
use axum::middleware::Next;
use axum::response::Response;
use tracing::{debug, info, warn};

use crate::AppState;

/// One structured log line and one metric sample per request. Probes and scrapes log at DEBUG so
/// they do not drown the INFO log.
pub async fn log_and_measure(State(state): State<AppState>, req: Request, next: Next) -> Response {
    let started = Instant::now();
    let method = req.method().clone();
    let path = req.uri().path().to_string();
    let route = req
        .extensions()
        .get::<MatchedPath>()
        .map(|m| m.as_str().to_string())
        .unwrap_or_else(|| "unmatched".to_string());
    let response = next.run(req).await;
    let status = response.status().as_u16();
    let elapsed = started.elapsed();
    let ms = elapsed.as_secs_f64() * 1000.0;
    state
        .metrics
        .observe(method.as_str(), &route, status, elapsed.as_secs_f64());
    let quiet = matches!(
        route.as_str(),
        "/api/v1/health" | "/api/v1/ready" | "/metrics"
    );
    if status >= 500 {
        warn!(%method, path, status, ms, "request");
    } else if quiet {
        debug!(%method, path, status, ms, "request");
    } else {
        info!(%method, path, status, ms, "request");
    }
    response
}
