//! Health, readiness, version, metrics and the self-healing status.

use axum::extract::State;
use axum::http::header::CONTENT_TYPE;
use axum::response::IntoResponse;
use ballast_runtime::format_rfc3339_ms;
use ballast_schema::ProcessState;
use serde_json::{json, Value};

use crate::{metrics, ApiError, ApiOk, ApiResult, AppState};

/// The operations of this module (served by `routes::routes`).
#[derive(utoipa::OpenApi)]
#[openapi(paths(
    health,
    ready,
    version,
    third_party_notices,
    metrics,
    self_healing_status
))]
pub(crate) struct Api;

/// Workers the supervisor runs; the health details list each.
const WORKERS: [&str; 4] = ["observer", "executor", "healer", "web"];

#[utoipa::path(
    get,
    path = "/api/v1/health",
    tag = "system",
    operation_id = "getHealth",
    summary = "Liveness probe",
    description = "200 while the web process answers; the details say how every process is doing, with restart counts.",
    responses((status = 200, description = "This process answers", body = ref("Health")))
)]
/// Liveness: 200 while this process answers. The details say how every process is doing, with
/// restart counts, so one request shows a crash-looping worker.
pub async fn health(State(state): State<AppState>) -> ApiResult<Value> {
    let data = crate::probes::data(&state).await?;
    let (processes, heartbeats) = (&data.processes, &data.heartbeats);
    let now = state.clock.now_ms();
    let stale_after = 3 * state.config.timing.heartbeat_interval.as_millis() as i64;
    let mut degraded = Vec::new();
    let workers: Vec<Value> = WORKERS
        .iter()
        .map(|name| {
            let process = processes.iter().find(|p| p.name == *name);
            let beat = heartbeats.iter().find(|h| h.name == *name);
            let state = process.map(|p| p.state.as_str()).unwrap_or("unknown");
            let age = beat.map(|h| (now - h.at_ms).max(0));
            if state != ProcessState::Running.as_str() || age.is_none_or(|a| a > stale_after) {
                degraded.push(*name);
            }
            json!({
                "name": name,
                "state": state,
                "pid": process.map(|p| p.pid),
                "restarts": process.map(|p| p.restarts).unwrap_or(0),
                "startedAt": process.and_then(|p| p.started_at_ms).map(format_rfc3339_ms),
                "lastExit": process.and_then(|p| p.last_exit.clone()),
                "lastExitAt": process.and_then(|p| p.last_exit_at_ms).map(format_rfc3339_ms),
                "heartbeatAt": beat.map(|h| format_rfc3339_ms(h.at_ms)),
                "heartbeatAgeMs": age,
                "detail": beat.map(|h| open_report(&h.detail)),
            })
        })
        .collect();
    let supervisor = processes.iter().find(|p| p.name == "supervisor");
    Ok(ApiOk(json!({
        "status": if degraded.is_empty() { "ok" } else { "degraded" },
        "degraded": degraded,
        "uptimeSeconds": (now - state.started_at_ms).max(0) / 1000,
        "supervisor": supervisor.map(|p| json!({"pid": p.pid, "startedAt": p.started_at_ms.map(format_rfc3339_ms)})),
        "workers": workers,
        "detailsAsOf": format_rfc3339_ms(data.read_at_ms),
    })))
}

/// A worker's report as the open liveness probe shows it: its values, and the values of its
/// objects, without any list. The lists are cluster data (the healer's moves and would-be moves
/// name topics, partitions, replicas and sizes, up to 100 of each per loop) and made the probe's
/// answer 23 KB on a large cluster; the probe is open to callers without credentials and must
/// stay small. `GET /api/v1/self-healing/status` and the executor's endpoints give the lists to
/// authenticated callers.
fn open_report(detail: &Value) -> Value {
    fn values(object: &serde_json::Map<String, Value>) -> serde_json::Map<String, Value> {
        object
            .iter()
            .filter(|(_, v)| !v.is_array() && !v.is_object())
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect()
    }
    match detail {
        Value::Object(o) => Value::Object(
            o.iter()
                .filter(|(_, v)| !v.is_array())
                .map(|(k, v)| match v {
                    Value::Object(inner) => (k.clone(), Value::Object(values(inner))),
                    other => (k.clone(), other.clone()),
                })
                .collect(),
        ),
        Value::Array(_) => Value::Null,
        other => other.clone(),
    }
}

#[utoipa::path(
    get,
    path = "/api/v1/ready",
    tag = "system",
    operation_id = "getReady",
    summary = "Readiness probe",
    description = "503 until the observer has a view of the brokers no older than `BALLAST_READY_STALE_AFTER`.",
    responses(
        (status = 200, description = "The broker view is fresh", body = ref("Ready")),
        (status = 503, description = "The broker view is unavailable or stale"),
    )
)]
/// Readiness: 503 until the observer has a view of the brokers no older than
/// `BALLAST_READY_STALE_AFTER`.
pub async fn ready(State(state): State<AppState>) -> ApiResult<Value> {
    let observation = crate::probes::data(&state).await?.brokers.clone();
    let now = state.clock.now_ms();
    let bound = state.config.timing.ready_stale_after;
    let Some(seen) = observation else {
        return Err(ApiError::unavailable(
            "broker view unavailable",
            "the observer has not read the brokers yet",
        ));
    };
    let age_ms = (now - seen.observed_at_ms).max(0);
    if !seen.ok {
        return Err(ApiError::unavailable(
            "broker view unavailable",
            format!(
                "last attempt at {} failed: {}",
                format_rfc3339_ms(seen.observed_at_ms),
                seen.error.unwrap_or_default()
            ),
        ));
    }
    if age_ms > bound.as_millis() as i64 {
        return Err(ApiError::unavailable(
            "broker view is stale",
            format!(
                "brokers last read at {} ({} s ago); BALLAST_READY_STALE_AFTER is {}",
                format_rfc3339_ms(seen.observed_at_ms),
                age_ms / 1000,
                ballast_config::format_duration(bound)
            ),
        ));
    }
    Ok(ApiOk(json!({
        "ready": true,
        "observedAt": format_rfc3339_ms(seen.observed_at_ms),
        "ageMs": age_ms,
    })))
}

#[utoipa::path(
    get,
    path = "/api/v1/version",
    tag = "system",
    operation_id = "getVersion",
    summary = "Version and build information",
    responses((status = 200, description = "Version and build", body = ref("Version")))
)]
pub async fn version(State(state): State<AppState>) -> ApiResult<Value> {
    let schema = state.db(|store| store.schema_version()).await?;
    Ok(ApiOk(json!({
        "name": "ballast",
        "version": crate::VERSION,
        "commit": crate::COMMIT,
        "buildTime": crate::BUILD_TIME,
        "schemaVersion": schema,
        "apiVersion": "v1",
    })))
}

/// `GET /api/v1/third-party-notices` query.
#[derive(Debug, serde::Deserialize, utoipa::IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct NoticesQuery {
    /// `json` (default, in the envelope) or `text` (plain text, as the Debian package ships it).
    #[param(schema_with = notices_format_schema)]
    format: Option<String>,
}

fn notices_format_schema() -> utoipa::openapi::Object {
    ballast_ops::schema::string_enum(["json", "text"])
}

#[utoipa::path(
    get,
    path = "/api/v1/third-party-notices",
    tag = "system",
    operation_id = "getThirdPartyNotices",
    summary = "Third-party notices",
    description = "Every crate compiled into this binary with its version, licence and licence text, generated from the dependency tree by cargo-about at build time.",
    params(NoticesQuery),
    responses(
        (status = 200, description = "The notices (JSON, or text/plain with format=text)", content(
            (ref("ThirdPartyNotices") = "application/json"),
            (String = "text/plain"),
        )),
        (status = 400, description = "Unknown format"),
    )
)]
pub async fn third_party_notices(
    crate::extract::Query(q): crate::extract::Query<NoticesQuery>,
) -> Result<axum::response::Response, ApiError> {
    let internal = |e: String| ApiError::internal("notices unavailable", e);
    match q.format.as_deref() {
        None | Some("") | Some("json") => {
            let n = crate::notices::notices().map_err(internal)?;
            Ok(ApiOk(json!({
                "generator": n.generator,
                "target": n.target,
                "count": n.crates.len(),
                "crates": n.crates,
                "licenses": n.licenses,
            }))
            .into_response())
        }
        Some("text") => {
            let text = crate::notices::text().map_err(internal)?;
            Ok(([(CONTENT_TYPE, "text/plain; charset=utf-8")], text).into_response())
        }
        Some(other) => Err(ApiError::bad_request(
            "invalid query",
            format!("format: expected json or text, got {other:?}"),
        )),
    }
}

#[utoipa::path(
    get,
    path = "/metrics",
    tag = "system",
    operation_id = "getMetrics",
    summary = "Prometheus metrics",
    description = "Prometheus text exposition format 0.0.4: process, worker, HTTP, cluster, reassignment, license and audit metrics (docs/api/observed.md, docs/api/reassignments.md, docs/license.md).",
    responses((status = 200, description = "Metrics in the Prometheus text format", content_type = "text/plain; version=0.0.4; charset=utf-8", body = String))
)]
pub async fn metrics(State(state): State<AppState>) -> Result<axum::response::Response, ApiError> {
    let scrape = metrics::scrape(&state).await?;
    Ok(scrape.untagged_response("text/plain; version=0.0.4; charset=utf-8"))
}

#[utoipa::path(
    get,
    path = "/api/v1/self-healing/status",
    tag = "system",
    operation_id = "getSelfHealingStatus",
    summary = "Self-healing loop status",
    description = "The healer's latest report: mode (dry run), window, the license it saw, why its latest pass skipped, and passes and skips per reason since it started (README, endpoint table).",
    responses((status = 200, description = "The self-healing status", body = ref("SelfHealingStatus")))
)]
/// `GET /api/v1/self-healing/status`: the healer's heartbeat report and the healing settings.
pub async fn self_healing_status(State(state): State<AppState>) -> ApiResult<Value> {
    let heartbeats = state.db(|store| store.heartbeats()).await?;
    let healer = heartbeats.iter().find(|h| h.name == "healer");
    Ok(ApiOk(crate::healing::status(
        &state,
        healer,
        state.clock.now_ms(),
    )))
}
