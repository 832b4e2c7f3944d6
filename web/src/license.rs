//! License enforcement, in one place: the table of licensed routes ([`licensed_routes`]), the
//! layer that answers 403 on them without a license ([`gate`]), `GET /api/v1/license`, the
//! license metrics, and auto-fetch (a background task of the web process).
//!
//! The state is evaluated against the injected clock on every licensed request, from sources
//! read at most once a second ([`CACHE_TTL`]): a license that expires while ballast runs turns
//! licensed routes into 403 at once, and a token that auto-fetch (or another process) stores in
//! `settings` counts within a second, without a restart. Design: `docs/license.md`.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::extract::{Request, State};
use axum::http::Method;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::Router;
use ballast_license::fetch::{decide, request_body, token_from_response, Decision};
use ballast_license::status::iso_secs;
use ballast_license::{
    load_inputs, record_trial_start, Loaded, SourceStatus, State as LicenseState, Status, Trial,
    Verifier, TOKEN_SETTING,
};
use ballast_runtime::format_rfc3339_ms;
use prometheus::{IntCounterVec, Opts, Registry};
use serde_json::{json, Value};
use tracing::{info, warn};

use ballast_ops::licence::{Refusal, VerdictFuture};
use ballast_ops::OpError;

use crate::{ApiError, ApiOk, ApiResult, AppState, LicenseCode, LicenseError};

/// Every route the spec marks licensed (License column "Yes", and PUT and DELETE of the quota
/// entity paths), whether or not this build serves it yet, plus the management routes ballast
/// adds beyond the spec ([`BEYOND_SPEC`]): the gate answers for the table, not for the router, so
/// a licensed route is never reachable without a license.
static LICENSED_ROUTES: [(Method, &str); 41] = [
    // cluster
    (Method::POST, "/api/v1/cluster/refresh-metadata"),
    // topics and configuration
    (Method::PUT, "/api/v1/topics/{topic}/config"),
    (Method::PUT, "/api/v1/topics/config/bulk"),
    (Method::POST, "/api/v1/topics"),
    (Method::DELETE, "/api/v1/topics/{topic}"),
    (Method::POST, "/api/v1/topics/{topic}/partitions"),
    (Method::PUT, "/api/v1/topics/{topic}/replication-factor"),
    // proposals
    (Method::POST, "/api/v1/proposals/{proposalId}/apply"),
    (Method::POST, "/api/v1/proposals/current/apply"),
    // reassignments
    (Method::POST, "/api/v1/topics/{topic}/redistribute"),
    (
        Method::POST,
        "/api/v1/topics/{topic}/partitions/{partition}/redistribute",
    ),
    (Method::POST, "/api/v1/topics/{topic}/partitions/bulk"),
    (Method::POST, "/api/v1/preferred-leader-election"),
    (
        Method::POST,
        "/api/v1/topics/{topic}/preferred-leader-election",
    ),
    // broker maintenance
    (Method::POST, "/api/v1/brokers/{brokerId}/maintenance"),
    (Method::DELETE, "/api/v1/brokers/{brokerId}/maintenance"),
    (Method::POST, "/api/v1/brokers/{brokerId}/logdirs/move"),
    // consumer groups
    (
        Method::POST,
        "/api/v1/consumer-groups/{group}/reset-offsets",
    ),
    (Method::DELETE, "/api/v1/consumer-groups/{group}"),
    // quota entities (GET is free)
    (Method::PUT, "/api/v1/quotas/default"),
    (Method::DELETE, "/api/v1/quotas/default"),
    (Method::PUT, "/api/v1/quotas/default-user"),
    (Method::DELETE, "/api/v1/quotas/default-user"),
    (Method::PUT, "/api/v1/quotas/default-client-id"),
    (Method::DELETE, "/api/v1/quotas/default-client-id"),
    (Method::PUT, "/api/v1/quotas/user/{user}"),
    (Method::DELETE, "/api/v1/quotas/user/{user}"),
    (Method::PUT, "/api/v1/quotas/client-id/{clientId}"),
    (Method::DELETE, "/api/v1/quotas/client-id/{clientId}"),
    (Method::PUT, "/api/v1/quotas/user/{user}/{clientId}"),
    (Method::DELETE, "/api/v1/quotas/user/{user}/{clientId}"),
    // ACLs
    (Method::POST, "/api/v1/acls"),
    (Method::PUT, "/api/v1/acls"),
    (Method::DELETE, "/api/v1/acls"),
    // audit log
    (Method::POST, "/api/v1/audit-log/revert"),
    // beyond the spec: tuning the replication throttle of running moves
    (Method::PUT, "/api/v1/reassignments/throttle"),
    // beyond the spec: rolling restarts and agent upgrades (docs/rolling-restarts.md)
    (Method::POST, "/api/v1/rolling-restarts"),
    (Method::POST, "/api/v1/rolling-restarts/{id}/pause"),
    (Method::POST, "/api/v1/rolling-restarts/{id}/resume"),
    (Method::POST, "/api/v1/rolling-restarts/{id}/abort"),
    (Method::POST, "/api/v1/agents/{brokerId}/upgrade"),
];

/// The licensed routes that are ballast's own (management features the spec does not list).
pub const BEYOND_SPEC: [(Method, &str); 10] = [
    (Method::PUT, "/api/v1/reassignments/throttle"),
    (Method::POST, "/api/v1/topics"),
    (Method::DELETE, "/api/v1/topics/{topic}"),
    (Method::POST, "/api/v1/topics/{topic}/partitions"),
    (Method::PUT, "/api/v1/topics/{topic}/replication-factor"),
    (Method::POST, "/api/v1/rolling-restarts"),
    (Method::POST, "/api/v1/rolling-restarts/{id}/pause"),
    (Method::POST, "/api/v1/rolling-restarts/{id}/resume"),
    (Method::POST, "/api/v1/rolling-restarts/{id}/abort"),
    (Method::POST, "/api/v1/agents/{brokerId}/upgrade"),
];

/// The licensed routes: method and path pattern (`{name}` matches one path segment), in the
/// router's syntax. The OpenAPI description marks exactly these.
pub fn licensed_routes() -> &'static [(Method, &'static str)] {
    &LICENSED_ROUTES
}

/// Whether `method path` is a licensed route. `path` is the request path as received.
pub fn is_licensed(method: &Method, path: &str) -> bool {
    LICENSED_ROUTES
        .iter()
        .any(|(m, pattern)| m == method && pattern_matches(pattern, path))
}

/// Segment by segment: a `{name}` segment matches any non-empty segment, others match exactly.
fn pattern_matches(pattern: &str, path: &str) -> bool {
    let mut want = pattern.split('/');
    let mut got = path.split('/');
    loop {
        match (want.next(), got.next()) {
            (None, None) => return true,
            (Some(w), Some(g)) => {
                let param = w.starts_with('{') && w.ends_with('}');
                if (param && g.is_empty()) || (!param && w != g) {
                    return false;
                }
            }
            _ => return false,
        }
    }
}

/// How long the sources read from the store and the license file are reused.
pub const CACHE_TTL: Duration = Duration::from_secs(1);
/// Bound on one license-server call.
const FETCH_TIMEOUT: Duration = Duration::from_secs(30);
/// A license server's answer larger than this is refused.
const MAX_FETCH_BODY: usize = 64 * 1024;

/// The license side of the web process: the accepted keys, the cached sources, the state of
/// auto-fetch and its counter.
pub struct LicenseRuntime {
    verifier: Verifier,
    demo_cluster_id: Option<String>,
    cache: Mutex<Option<(Instant, Arc<Loaded>)>>,
    fetch: Mutex<FetchState>,
    registry: Registry,
    fetch_total: IntCounterVec,
}

/// What the last fetch did.
#[derive(Debug, Clone, Default)]
struct FetchState {
    last_attempt_at_ms: Option<i64>,
    last_result: Option<&'static str>,
    last_error: Option<String>,
    last_success_at_ms: Option<i64>,
    /// Whether the last successful fetch stored a new token.
    last_stored: bool,
}

/// Outcome labels of `ballast_license_fetch_total{result}`.
pub const FETCH_RESULTS: [&str; 3] = ["success", "invalid", "error"];

impl LicenseRuntime {
    /// `verifier`: the accepted keys; `demo_cluster_id`: this process's `BALLAST_DEMO_TRIAL`.
    pub fn new(verifier: Verifier, demo_cluster_id: Option<String>) -> LicenseRuntime {
        let registry = Registry::new();
        let fetch_total = IntCounterVec::new(
            Opts::new(
                "ballast_license_fetch_total",
                "license auto-fetch attempts by result: success (a valid token, stored or already held), invalid (a token that does not verify; never stored), error (no token: network, HTTP status, answer)",
            ),
            &["result"],
        )
        .expect("valid metric definition");
        for result in FETCH_RESULTS {
            fetch_total.with_label_values(&[result]);
        }
        // Registration only fails on duplicate names, which this fixed definition cannot have.
        let _ = registry.register(Box::new(fetch_total.clone()));
        LicenseRuntime {
            verifier,
            demo_cluster_id,
            cache: Mutex::new(None),
            fetch: Mutex::new(FetchState::default()),
            registry,
            fetch_total,
        }
    }

    /// The keys this binary accepts and `BALLAST_DEMO_TRIAL` from the environment.
    pub fn for_this_build() -> LicenseRuntime {
        LicenseRuntime::new(
            Verifier::for_this_build(),
            ballast_license::sources::demo_cluster_id_from_env(),
        )
    }

    /// For tests that exercise licensed routes: a runtime that trusts one fresh key, with a
    /// license signed by it (valid from `now_ms` for a year) stored as the fetched token in
    /// `store`. Put it in `AppState::license`. Only code can build this; it trusts no key a token
    /// from outside could carry.
    pub fn licensed_for_tests(
        store: &ballast_schema::Store,
        now_ms: i64,
    ) -> Result<LicenseRuntime, ballast_schema::StoreError> {
        let key = ballast_license::SigningKey::generate().map_err(|e| {
            ballast_schema::StoreError::Invalid(format!("no test license key: {e}"))
        })?;
        let now = now_ms.div_euclid(1000);
        let token = ballast_license::issue(
            &ballast_license::Claims {
                sub: "test".into(),
                lic: "test".into(),
                iat: now,
                nbf: now,
                exp: now + 365 * 86_400,
                notes: Some("a license for tests".into()),
            },
            &key,
        );
        store.put_setting(TOKEN_SETTING, &token, now_ms)?;
        Ok(LicenseRuntime::new(
            Verifier::with_keys(vec![ballast_license::TrustedKey {
                name: ballast_license::KeyName::Custom,
                key: key.public_key(),
            }]),
            None,
        ))
    }

    /// Forgets the cached sources: the next evaluation reads them again.
    pub fn invalidate(&self) {
        if let Ok(mut cache) = self.cache.lock() {
            *cache = None;
        }
    }

    fn cached(&self) -> Option<Arc<Loaded>> {
        let cache = self.cache.lock().ok()?;
        cache
            .as_ref()
            .filter(|(at, _)| at.elapsed() < CACHE_TTL)
            .map(|(_, loaded)| loaded.clone())
    }

    fn fetch_state(&self) -> FetchState {
        self.fetch.lock().map(|f| f.clone()).unwrap_or_default()
    }
}

impl std::fmt::Debug for LicenseRuntime {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LicenseRuntime")
            .field("verifier", &self.verifier)
            .field("demo", &self.demo_cluster_id.is_some())
            .finish_non_exhaustive()
    }
}

/// The license state of this process now.
pub async fn status(state: &AppState) -> Result<Status, ApiError> {
    Ok(status_of(&state.license, &state.ops).await?)
}

/// The license state `runtime` gives now (its cached sources, else read again over `ctx`).
async fn status_of(
    runtime: &LicenseRuntime,
    ctx: &ballast_ops::Context,
) -> Result<Status, OpError> {
    let loaded = match runtime.cached() {
        Some(loaded) => loaded,
        None => {
            let config = ctx.config.clone();
            let demo = runtime.demo_cluster_id.clone();
            let verifier = runtime.verifier.clone();
            let loaded =
                ctx.db(move |store| {
                    Ok(load_inputs(&config, store, demo.as_deref())?.verify(&verifier))
                })
                .await?;
            let loaded = Arc::new(loaded);
            if let Ok(mut cache) = runtime.cache.lock() {
                *cache = Some((Instant::now(), loaded.clone()));
            }
            loaded
        }
    };
    let now = ctx.clock.now_ms();
    let status = loaded.status(now);
    if matches!(status.trial, Trial::Active { record: true, .. }) {
        let recorded = status.clone();
        ctx.db(move |store| record_trial_start(store, &recorded, now))
            .await?;
        runtime.invalidate();
        info!("demo trial started");
    }
    Ok(status)
}

/// The licence verdict of the operation context (`ballast_ops::licence`): this runtime's status,
/// the one source the REST layer ([`require_license`]) and the agents' gate
/// (`ballast_ops::catalog::licence_gate`) both ask.
impl ballast_ops::Licence for LicenseRuntime {
    fn verdict<'a>(&'a self, ctx: &'a ballast_ops::Context) -> VerdictFuture<'a> {
        Box::pin(async move {
            let status = status_of(self, ctx).await?;
            if status.allows_management() {
                return Ok(Ok(()));
            }
            let refused = refusal(&status);
            Ok(Err(Refusal {
                code: refused.code.as_str(),
                message: refused.message,
            }))
        })
    }
}

/// A refusal of the context's licence, in the envelope's words.
impl From<Refusal> for LicenseError {
    fn from(r: Refusal) -> LicenseError {
        let code = if r.code == LicenseCode::Expired.as_str() {
            LicenseCode::Expired
        } else {
            LicenseCode::Invalid
        };
        LicenseError {
            code,
            message: r.message,
        }
    }
}

/// The 403 a licensed route answers in monitoring mode.
pub fn refusal(status: &Status) -> LicenseError {
    let code = match status.state() {
        LicenseState::Expired => LicenseCode::Expired,
        _ => LicenseCode::Invalid,
    };
    LicenseError {
        code,
        message: status.message().to_string(),
    }
}

/// `Err` with the 403 envelope in monitoring mode: the verdict of the operation context's
/// licence, the one agents get through `ballast_ops::catalog::licence_gate`.
pub async fn require_license(state: &AppState) -> Result<(), Response> {
    match state.ops.licence.verdict(&state.ops).await {
        Ok(Ok(())) => Ok(()),
        Ok(Err(refused)) => Err(LicenseError::from(refused).into_response()),
        Err(e) => Err(ApiError::from(e).into_response()),
    }
}

/// The layer on the whole router: a licensed route answers 403 unless the license is licensed or
/// trial. Other routes pass without any work.
pub async fn gate(State(state): State<AppState>, req: Request, next: Next) -> Response {
    if !is_licensed(req.method(), req.uri().path()) {
        return next.run(req).await;
    }
    match require_license(&state).await {
        Ok(()) => next.run(req).await,
        Err(refused) => refused,
    }
}

pub fn routes() -> Router<AppState> {
    Router::new().route("/api/v1/license", get(license_status))
}

/// `GET /api/v1/license` (free).
async fn license_status(State(state): State<AppState>) -> ApiResult<Value> {
    let s = status(&state).await?;
    Ok(ApiOk(status_json(&state, &s)))
}

fn source_json(s: &SourceStatus) -> Value {
    json!({
        "source": s.source,
        "state": s.state,
        "reason": s.reason,
        "message": s.message,
        "lic": s.claims.as_ref().map(|c| c.lic.clone()),
        "sub": s.claims.as_ref().map(|c| c.sub.clone()),
        "expires_at": s.expires_at_ms.map(format_rfc3339_ms),
    })
}

fn trial_json(trial: &Trial) -> Value {
    match trial {
        Trial::NotOffered => json!({"state": "not_offered"}),
        Trial::Pending { why } => json!({"state": "pending", "message": why}),
        Trial::Refused { why } => json!({"state": "refused", "message": why}),
        Trial::Active {
            started_at_ms,
            ends_at_ms,
            cluster_id,
            ..
        } => json!({
            "state": "active",
            "started_at": format_rfc3339_ms(*started_at_ms),
            "ends_at": format_rfc3339_ms(*ends_at_ms),
            "cluster_id": cluster_id,
            "days": ballast_license::trial::TRIAL_DAYS,
        }),
        Trial::Ended {
            started_at_ms,
            ended_at_ms,
        } => json!({
            "state": "ended",
            "started_at": format_rfc3339_ms(*started_at_ms),
            "ends_at": format_rfc3339_ms(*ended_at_ms),
        }),
    }
}

fn fetch_json(state: &AppState) -> Value {
    let lic = &state.config.license;
    let f = state.license.fetch_state();
    json!({
        "enabled": fetch_enabled(state).is_ok(),
        "disabled_because": fetch_enabled(state).err(),
        "url": lic.fetch_url(),
        "interval_seconds": lic.fetch_interval.as_secs_f64(),
        "last_attempt_at": f.last_attempt_at_ms.map(format_rfc3339_ms),
        "last_result": f.last_result,
        "last_error": f.last_error,
        "last_success_at": f.last_success_at_ms.map(format_rfc3339_ms),
        "last_stored": f.last_stored,
    })
}

fn status_json(state: &AppState, s: &Status) -> Value {
    let best = &s.best;
    let claims = best.claims.as_ref();
    json!({
        "state": s.state(),
        "reason": best.reason,
        "message": best.message,
        "management_enabled": s.allows_management(),
        "source": s.any_source.then_some(best.source),
        "key": best.key.map(|k| k.as_str()),
        "sub": claims.map(|c| c.sub.clone()),
        "lic": claims.map(|c| c.lic.clone()),
        "notes": claims.and_then(|c| c.notes.clone()),
        "issued_at": claims.map(|c| iso_secs(c.iat)),
        "not_before": claims.map(|c| iso_secs(c.nbf)),
        "expires_at": best.expires_at_ms.map(format_rfc3339_ms),
        "leeway_seconds": ballast_license::LEEWAY_SECS,
        "trial": trial_json(&s.trial),
        "sources": s.sources.iter().map(source_json).collect::<Vec<_>>(),
        "fetch": fetch_json(state),
    })
}

/// `ballast_license_valid`, `ballast_license_expiry_timestamp_seconds` (when a license or trial
/// has an expiry) and `ballast_license_fetch_total{result}`.
pub async fn metric_families(
    state: &AppState,
) -> Result<Vec<prometheus::proto::MetricFamily>, ApiError> {
    let s = status(state).await?;
    let registry = Registry::new();
    let metric_error = |e: prometheus::Error| ApiError::internal("metrics failed", e.to_string());
    let valid = prometheus::IntGauge::new(
        "ballast_license_valid",
        "1 while the license is licensed or a demo trial (management mode), 0 when expired or invalid (monitoring mode)",
    )
    .map_err(metric_error)?;
    valid.set(i64::from(s.allows_management()));
    registry.register(Box::new(valid)).map_err(metric_error)?;
    if let Some(exp) = s.expires_at_ms() {
        let expiry = prometheus::Gauge::new(
            "ballast_license_expiry_timestamp_seconds",
            "unix time the current license (or demo trial) expires",
        )
        .map_err(metric_error)?;
        expiry.set(exp as f64 / 1000.0);
        registry.register(Box::new(expiry)).map_err(metric_error)?;
    }
    let mut families = registry.gather();
    families.extend(state.license.registry.gather());
    Ok(families)
}

/// Whether auto-fetch is configured: the fetch token and the subscription id.
fn fetch_enabled(state: &AppState) -> Result<(), &'static str> {
    let lic = &state.config.license;
    if lic.fetch_token.as_ref().is_none_or(|t| t.is_empty()) {
        return Err("LICENSE_FETCH_TOKEN is not set");
    }
    if lic.subscription_id.as_deref().is_none_or(str::is_empty) {
        return Err("LICENSE_SUBSCRIPTION_ID is not set");
    }
    if lic.url.is_empty() {
        return Err("LICENSE_URL is not set");
    }
    Ok(())
}

/// Starts auto-fetch when it is configured: one fetch at once, then one every
/// `LICENSE_FETCH_INTERVAL`, until the process stops.
pub fn spawn_fetcher(state: AppState) -> Option<tokio::task::JoinHandle<()>> {
    if let Err(why) = fetch_enabled(&state) {
        if state.config.license.fetch_token.is_some() {
            warn!(reason = why, "license auto-fetch is off");
        }
        return None;
    }
    let interval = state.config.license.fetch_interval;
    Some(tokio::spawn(async move {
        loop {
            fetch_once(&state).await;
            tokio::select! {
                _ = tokio::time::sleep(interval) => {}
                _ = state.stopping() => break,
            }
        }
    }))
}

/// One fetch: ask the license server, verify the answer, store it when it is better than the
/// stored token, count the outcome. Returns the outcome label.
pub async fn fetch_once(state: &AppState) -> &'static str {
    let started = state.clock.now_ms();
    let outcome = fetch_and_store(state).await;
    let (label, error, stored) = match &outcome {
        Ok(stored) => ("success", None, *stored),
        Err(FetchFailure::Invalid(why)) => ("invalid", Some(why.clone()), false),
        Err(FetchFailure::Error(why)) => ("error", Some(why.clone()), false),
    };
    state.license.fetch_total.with_label_values(&[label]).inc();
    match (&outcome, &error) {
        (Ok(true), _) => info!(result = label, "license fetched and stored"),
        (Ok(false), _) => info!(result = label, "license fetched; the stored one stays"),
        (Err(_), Some(e)) => warn!(result = label, error = %e, "license fetch failed"),
        (Err(_), None) => {}
    }
    if let Ok(mut f) = state.license.fetch.lock() {
        f.last_attempt_at_ms = Some(started);
        f.last_result = Some(label);
        f.last_error = error;
        if outcome.is_ok() {
            f.last_success_at_ms = Some(started);
            f.last_stored = stored;
        }
    }
    label
}

enum FetchFailure {
    /// The server answered with a token that does not verify.
    Invalid(String),
    /// No token: the request, the HTTP status or the answer failed.
    Error(String),
}

/// Ok(true) when a new token was stored.
async fn fetch_and_store(state: &AppState) -> Result<bool, FetchFailure> {
    let lic = &state.config.license;
    let (Some(bearer), Some(subscription)) = (&lic.fetch_token, &lic.subscription_id) else {
        return Err(FetchFailure::Error("auto-fetch is not configured".into()));
    };
    let client = reqwest::Client::builder()
        .timeout(FETCH_TIMEOUT)
        .build()
        .map_err(|e| FetchFailure::Error(format!("no HTTP client: {}", e.without_url())))?;
    let response = client
        .post(lic.fetch_url())
        .bearer_auth(bearer.expose())
        .json(&request_body(subscription))
        .send()
        .await
        .map_err(|e| {
            FetchFailure::Error(format!("license server unreachable: {}", e.without_url()))
        })?;
    let status = response.status();
    if !status.is_success() {
        return Err(FetchFailure::Error(format!(
            "license server answered {status}"
        )));
    }
    let body = response.bytes().await.map_err(|e| {
        FetchFailure::Error(format!("reading the answer failed: {}", e.without_url()))
    })?;
    if body.len() > MAX_FETCH_BODY {
        return Err(FetchFailure::Error(format!(
            "the answer is larger than {MAX_FETCH_BODY} bytes"
        )));
    }
    let Some(token) = token_from_response(&body) else {
        return Err(FetchFailure::Error(
            "the answer holds no license token".into(),
        ));
    };
    let now = state.clock.now_ms();
    let verifier = state.license.verifier.clone();
    let decision = state
        .db(move |store| {
            let stored = store.setting(TOKEN_SETTING)?;
            let decision = decide(&token, stored.as_deref(), &verifier, now);
            if decision == Decision::Store {
                store.put_setting(TOKEN_SETTING, &token, now)?;
            }
            Ok(decision)
        })
        .await
        .map_err(|e| FetchFailure::Error(format!("{}: {}", e.error, e.details)))?;
    match decision {
        Decision::Store => {
            state.license.invalidate();
            Ok(true)
        }
        Decision::Keep => Ok(false),
        Decision::Reject(r) => Err(FetchFailure::Invalid(format!(
            "the fetched license was not stored: {r}"
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn patterns_match_whole_segments() {
        assert!(pattern_matches("/api/v1/acls", "/api/v1/acls"));
        assert!(!pattern_matches("/api/v1/acls", "/api/v1/acls/"));
        assert!(!pattern_matches("/api/v1/acls", "/api/v1/acl"));
        assert!(pattern_matches(
            "/api/v1/topics/{topic}/config",
            "/api/v1/topics/orders/config"
        ));
        assert!(!pattern_matches(
            "/api/v1/topics/{topic}/config",
            "/api/v1/topics//config"
        ));
        assert!(!pattern_matches(
            "/api/v1/topics/{topic}/config",
            "/api/v1/topics/orders/config/explicit"
        ));
    }

    #[test]
    fn free_routes_are_not_licensed() {
        for (m, p) in [
            (Method::GET, "/api/v1/license"),
            (Method::GET, "/api/v1/topics/orders/config"),
            (Method::GET, "/api/v1/quotas/default"),
            (Method::GET, "/api/v1/acls"),
            (Method::POST, "/api/v1/proposals/generate"),
            (Method::DELETE, "/api/v1/proposals/p-1"),
            (Method::POST, "/api/v1/reassignments/r-1/cancel"),
            (Method::POST, "/api/v1/audit-log/revert/preview"),
            (Method::POST, "/api/v1/mcp"),
        ] {
            assert!(!is_licensed(&m, p), "{m} {p}");
        }
        assert!(is_licensed(&Method::PUT, "/api/v1/quotas/user/alice/app-1"));
        assert!(is_licensed(
            &Method::POST,
            "/api/v1/proposals/current/apply"
        ));
    }
}
