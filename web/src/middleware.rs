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

/// The most of a body a route that takes none reads, to see whether it is `{}`.
const NO_OPTIONS_MAX: usize = 64;

/// Whether `bytes` are an empty JSON object (`{}`, white space allowed): "no options".
fn is_no_options(bytes: &[u8]) -> bool {
    matches!(
        serde_json::from_slice::<serde_json::Value>(bytes),
        Ok(serde_json::Value::Object(m)) if m.is_empty()
    )
}

/// A mutation whose route takes no body (none in the OpenAPI document) is refused with 400 when
/// it carries one, before anything runs: a body there is a mistake, or an attempt to make the
/// server read megabytes it will never use. An empty JSON object, what many clients send for
/// "no options", is taken as no body (at most [`NO_OPTIONS_MAX`] bytes are read to see it).
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
                let route = route.as_str().to_string();
                let (mut parts, body) = req.into_parts();
                if let Ok(bytes) = axum::body::to_bytes(body, NO_OPTIONS_MAX).await {
                    if is_no_options(&bytes) {
                        parts.headers.remove(axum::http::header::CONTENT_LENGTH);
                        parts.headers.remove(axum::http::header::TRANSFER_ENCODING);
                        parts.headers.remove(axum::http::header::CONTENT_TYPE);
                        let req = Request::from_parts(parts, axum::body::Body::empty());
                        return next.run(req).await;
                    }
                }
                return axum::response::IntoResponse::into_response(ApiError::bad_request(
                    "unexpected request body",
                    format!(
                        "{method} {route} takes no request body; send none or {{}} (nothing was done)"
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
