use std::time::Instant;

use axum::extract::{MatchedPath, Request, State};
use axum::middleware::Next;
use axum::response::Response;
use tracing::{debug, info, warn};

use crate::{ApiError, AppState};

/// The (method, path template) of every mutation the OpenAPI document describes without a
/// request body; path parameters as `{}`.
static BODILESS: std::sync::LazyLock<std::collections::HashSet<(String, String)>> =
    std::sync::LazyLock::new(|| {
        let mut out = std::collections::HashSet::new();
        let paths = crate::openapi::document()["paths"].as_object().cloned();
        for (path, item) in paths.unwrap_or_default() {
            for method in ["post", "put", "patch", "delete"] {
                let Some(op) = item.get(method) else { continue };
                if op.get("requestBody").is_none() {
                    out.insert((method.to_ascii_uppercase(), template(&path)));
                }
            }
        }
        out
    });

/// A path template with its parameters' names left out: `/a/{id}` → `/a/{}`.
pub(crate) fn template(path: &str) -> String {
    path.split('/')
        .map(|s| if s.starts_with('{') { "{}" } else { s })
        .collect::<Vec<_>>()
        .join("/")
}

/// A mutation whose route takes no body (none in the OpenAPI document) is refused with 400 when
/// it carries one, before anything runs: a body there is a mistake, or an attempt to make the
/// server read megabytes it will never use.
pub async fn refuse_unexpected_bodies(req: Request, next: Next) -> Response {
    let carries = req
        .headers()
        .get(axum::http::header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<u64>().ok())
        .is_some_and(|n| n > 0)
        || req
            .headers()
            .contains_key(axum::http::header::TRANSFER_ENCODING);
    if carries {
        if let Some(route) = req.extensions().get::<MatchedPath>() {
            let method = req.method().as_str().to_string();
            if BODILESS.contains(&(method.clone(), template(route.as_str()))) {
                return axum::response::IntoResponse::into_response(ApiError::bad_request(
                    "unexpected request body",
                    format!(
                        "{method} {} takes no request body; send none (nothing was done)",
                        route.as_str()
                    ),
                ));
            }
        }
    }
    next.run(req).await
}

/// One structured log line and one metric sample per request. Probes, scrapes and the agents'
/// heartbeats (one per agent every few seconds) log at DEBUG so they do not drown the INFO log;
/// a refused one logs at INFO, a failed one at WARN.
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
        "/api/v1/health" | "/api/v1/ready" | "/metrics" | "/api/v1/agent/heartbeat"
    );
    if status >= 500 {
        warn!(%method, path, status, ms, "request");
    } else if quiet && status < 400 {
        debug!(%method, path, status, ms, "request");
    } else {
        info!(%method, path, status, ms, "request");
    }
    response
}
