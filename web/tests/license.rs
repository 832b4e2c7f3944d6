//! License enforcement over HTTP: every licensed route of the spec refuses without a license or
//! with an expired one, free routes stay open, expiry and renewal by auto-fetch take effect
//! without a restart, and the license metrics and status endpoint say what happened.

use std::collections::BTreeSet;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::http::Method;
use ballast_config::{Config, RawConfig};
use ballast_license::{issue, Claims, KeyName, SigningKey, TrustedKey, Verifier, TOKEN_SETTING};
use ballast_runtime::Clock;
use ballast_schema::Store;
use ballast_web::license::{fetch_once, licensed_routes, spawn_fetcher, LicenseRuntime};
use ballast_web::AppState;
use serde_json::{json, Value};

/// 2027-01-15T08:00:00Z
const T0: i64 = 1_800_000_000_000;

struct ManualClock(AtomicI64);

impl Clock for ManualClock {
    fn now_ms(&self) -> i64 {
        self.0.load(Ordering::SeqCst)
    }
}

struct Harness {
    base: String,
    http: reqwest::Client,
    store: Store,
    clock: Arc<ManualClock>,
    state: AppState,
    _dir: tempfile::TempDir,
}

/// A signing key the harness's verifier trusts (the tests do not depend on the build's keys).
fn test_key() -> SigningKey {
    SigningKey::generate().expect("key")
}

fn token(key: &SigningKey, nbf_ms: i64, exp_ms: i64) -> String {
    issue(
        &Claims {
            sub: "ACME Corp".into(),
            lic: "lic-1".into(),
            iat: nbf_ms / 1000,
            nbf: nbf_ms / 1000,
            exp: exp_ms / 1000,
            notes: Some("test license".into()),
        },
        key,
    )
}

impl Harness {
    async fn start(key: SigningKey, env: &[(&str, &str)], demo: Option<String>) -> Harness {
        let dir = tempfile::tempdir().expect("temp dir");
        let db = dir.path().join("ballast.db");
        Store::migrate(&db).expect("migrate");
        let store = Store::open(&db).expect("open store");
        let mut pairs = vec![
            ("BALLAST_KAFKA_BOOTSTRAP_SERVERS", "127.0.0.1:9"),
            ("BALLAST_DATA_DIR", dir.path().to_str().expect("utf-8 path")),
        ];
        pairs.extend_from_slice(env);
        let raw = RawConfig::from_pairs(
            pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())),
            None,
        )
        .expect("raw config");
        let config = Config::from_raw(&raw).expect("valid config");
        let clock = Arc::new(ManualClock(AtomicI64::new(T0)));
        let mut state = AppState::new(store.clone(), Arc::new(config), clock.clone());
        state.set_license(LicenseRuntime::new(
            Verifier::with_keys(vec![TrustedKey {
                name: KeyName::Custom,
                key: key.public_key(),
            }]),
            demo,
        ));
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind");
        let addr = listener.local_addr().expect("address");
        let app = ballast_web::router(state.clone());
        tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        Harness {
            base: format!("http://{addr}"),
            http: reqwest::Client::new(),
            store,
            clock,
            state,
            _dir: dir,
        }
    }

    async fn send(&self, method: Method, path: &str) -> (u16, Value) {
        let m = reqwest::Method::from_bytes(method.as_str().as_bytes()).expect("method");
        let r = self
            .http
            .request(m, format!("{}{path}", self.base))
            .json(&json!({}))
            .send()
            .await
            .expect("request");
        let status = r.status().as_u16();
        let text = r.text().await.expect("body");
        (
            status,
            serde_json::from_str(&text).unwrap_or(Value::String(text)),
        )
    }

    async fn license(&self) -> Value {
        let (status, body) = self.send(Method::GET, "/api/v1/license").await;
        assert_eq!(status, 200, "{body}");
        body["data"].clone()
    }

    async fn metrics(&self) -> String {
        self.http
            .get(format!("{}/metrics", self.base))
            .send()
            .await
            .expect("metrics")
            .text()
            .await
            .expect("text")
    }

    fn advance_to(&self, ms: i64) {
        self.clock.0.store(ms, Ordering::SeqCst);
    }

    /// Waits out the source cache so a change in the store or file counts.
    async fn settle(&self) {
        tokio::time::sleep(ballast_web::license::CACHE_TTL + Duration::from_millis(50)).await;
    }
}

/// A concrete path for a route pattern.
fn concrete(pattern: &str) -> String {
    pattern
        .replace("{topic}", "orders")
        .replace("{partition}", "0")
        .replace("{proposalId}", "p-1")
        .replace("{brokerId}", "1")
        .replace("{group}", "billing")
        .replace("{user}", "alice")
        .replace("{clientId}", "app-1")
}

/// The spec's licensed routes, transcribed from its endpoint tables (License column "Yes") and
/// its quota entity paths (PUT and DELETE licensed).
fn spec_licensed_routes() -> BTreeSet<(String, String)> {
    let mut routes: BTreeSet<(String, String)> = [
        ("POST", "/api/v1/cluster/refresh-metadata"),
        ("PUT", "/api/v1/topics/{topic}/config"),
        ("PUT", "/api/v1/topics/config/bulk"),
        ("POST", "/api/v1/proposals/{proposalId}/apply"),
        ("POST", "/api/v1/proposals/current/apply"),
        ("POST", "/api/v1/topics/{topic}/redistribute"),
        (
            "POST",
            "/api/v1/topics/{topic}/partitions/{partition}/redistribute",
        ),
        ("POST", "/api/v1/topics/{topic}/partitions/bulk"),
        ("POST", "/api/v1/preferred-leader-election"),
        ("POST", "/api/v1/topics/{topic}/preferred-leader-election"),
        ("POST", "/api/v1/brokers/{brokerId}/maintenance"),
        ("DELETE", "/api/v1/brokers/{brokerId}/maintenance"),
        ("POST", "/api/v1/brokers/{brokerId}/logdirs/move"),
        ("POST", "/api/v1/consumer-groups/{group}/reset-offsets"),
        ("DELETE", "/api/v1/consumer-groups/{group}"),
        ("POST", "/api/v1/acls"),
        ("PUT", "/api/v1/acls"),
        ("DELETE", "/api/v1/acls"),
        ("POST", "/api/v1/audit-log/revert"),
    ]
    .into_iter()
    .map(|(m, p)| (m.to_string(), p.to_string()))
    .collect();
    for entity in [
        "/api/v1/quotas/default",
        "/api/v1/quotas/default-user",
        "/api/v1/quotas/default-client-id",
        "/api/v1/quotas/user/{user}",
        "/api/v1/quotas/client-id/{clientId}",
        "/api/v1/quotas/user/{user}/{clientId}",
    ] {
        routes.insert(("PUT".into(), entity.into()));
        routes.insert(("DELETE".into(), entity.into()));
    }
    routes
}

/// The same list read from the spec itself, when it sits beside the repository
/// (`../shared/spec/interface-spec.md`, as in CI).
fn spec_file_licensed_routes() -> Option<BTreeSet<(String, String)>> {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../shared/spec/interface-spec.md");
    let text = std::fs::read_to_string(path).ok()?;
    let mut routes = BTreeSet::new();
    for line in text.lines() {
        let cells: Vec<&str> = line.split('|').map(str::trim).collect();
        // | Method | Path | Purpose | License |  →  ["", method, path, purpose, license, ""]
        if cells.len() == 6 && cells[4] == "Yes" {
            routes.insert((cells[1].to_string(), cells[2].trim_matches('`').to_string()));
        }
        if line.starts_with("Entity paths") && line.contains("PUT (licensed) and DELETE (licensed)")
        {
            for path in line.split('`').skip(1).step_by(2) {
                routes.insert(("PUT".into(), path.to_string()));
                routes.insert(("DELETE".into(), path.to_string()));
            }
        }
    }
    Some(routes)
}

/// The table without ballast's own licensed routes (management beyond the spec).
fn table() -> BTreeSet<(String, String)> {
    let own: BTreeSet<(String, String)> = ballast_web::license::BEYOND_SPEC
        .iter()
        .map(|(m, p)| (m.to_string(), p.to_string()))
        .collect();
    licensed_routes()
        .iter()
        .map(|(m, p)| (m.to_string(), p.to_string()))
        .filter(|r| !own.contains(r))
        .collect()
}

#[test]
fn the_licensed_route_table_is_exactly_the_specs_licensed_routes() {
    assert_eq!(table(), spec_licensed_routes());
    match spec_file_licensed_routes() {
        Some(from_spec) => assert_eq!(table(), from_spec, "the table and the spec file differ"),
        None => eprintln!(
            "note: ../shared/spec/interface-spec.md not found; checked the transcription only"
        ),
    }
}

#[tokio::test]
async fn every_licensed_route_answers_403_license_invalid_without_a_license() {
    let h = Harness::start(test_key(), &[], None).await;
    for (method, pattern) in licensed_routes() {
        let path = concrete(pattern);
        let (status, body) = h.send(method.clone(), &path).await;
        assert_eq!(status, 403, "{method} {path}: {body}");
        assert_eq!(body["data"], Value::Null, "{method} {path}");
        assert_eq!(body["error"]["code"], "LICENSE_INVALID", "{method} {path}");
        let message = body["error"]["message"].as_str().expect("message");
        assert!(message.contains("no license"), "{message}");
        assert_eq!(body.as_object().map(|o| o.len()), Some(2), "{body}");
    }
}

#[tokio::test]
async fn every_licensed_route_answers_403_license_expired_with_an_expired_license() {
    let key = test_key();
    let expired = token(&key, T0 - 90 * 86_400_000, T0 - 86_400_000);
    let h = Harness::start(key, &[("LICENSE_STRING", &expired)], None).await;
    for (method, pattern) in licensed_routes() {
        let path = concrete(pattern);
        let (status, body) = h.send(method.clone(), &path).await;
        assert_eq!(status, 403, "{method} {path}: {body}");
        assert_eq!(body["error"]["code"], "LICENSE_EXPIRED", "{method} {path}");
        assert!(body["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("expired at")));
    }
}

#[tokio::test]
async fn free_routes_stay_open_without_a_license() {
    let h = Harness::start(test_key(), &[], None).await;
    for path in [
        "/api/v1/health",
        "/api/v1/version",
        "/api/v1/license",
        "/api/v1/proposals",
    ] {
        let (status, body) = h.send(Method::GET, path).await;
        assert_eq!(status, 200, "{path}: {body}");
    }
    // Free routes next to licensed ones: not refused for the license (whatever else they say).
    for (method, path) in [
        (Method::GET, "/api/v1/acls"),
        (Method::GET, "/api/v1/quotas/default"),
        (Method::POST, "/api/v1/proposals/generate"),
        (Method::GET, "/api/v1/topics/orders/config"),
    ] {
        let (status, body) = h.send(method.clone(), path).await;
        assert_ne!(status, 403, "{method} {path}: {body}");
    }
    let metrics = h.metrics().await;
    assert!(metrics.contains("ballast_license_valid 0"), "{metrics}");
    assert!(!metrics.contains("ballast_license_expiry_timestamp_seconds"));
}

#[tokio::test]
async fn a_valid_license_lets_licensed_routes_through_to_their_handlers() {
    let key = test_key();
    let valid = token(&key, T0 - 1000, T0 + 30 * 86_400_000);
    let h = Harness::start(key, &[("LICENSE_STRING", &valid)], None).await;
    for (method, pattern) in licensed_routes() {
        let path = concrete(pattern);
        let (status, body) = h.send(method.clone(), &path).await;
        assert_ne!(status, 403, "{method} {path}: {body}");
    }
}

#[tokio::test]
async fn license_status_reports_state_claims_source_and_expiry() {
    let key = test_key();
    let valid = token(&key, T0 - 1000, T0 + 30 * 86_400_000);
    let h = Harness::start(key, &[("LICENSE_STRING", &valid)], None).await;
    let data = h.license().await;
    assert_eq!(data["state"], "licensed");
    assert_eq!(data["sub"], "ACME Corp");
    assert_eq!(data["lic"], "lic-1");
    assert_eq!(data["source"], "env");
    assert_eq!(data["notes"], "test license");
    assert_eq!(data["expires_at"], "2027-02-14T08:00:00.000Z");
    assert_eq!(data["management_enabled"], true);
    assert_eq!(data["trial"]["state"], "not_offered");
    assert_eq!(data["fetch"]["enabled"], false);
    let metrics = h.metrics().await;
    assert!(metrics.contains("ballast_license_valid 1"), "{metrics}");
    assert!(
        metrics.contains("ballast_license_expiry_timestamp_seconds 1802592000"),
        "{metrics}"
    );
    // Secrets never show: the token is not in the status.
    assert!(!data.to_string().contains(&valid));
}

#[tokio::test]
async fn a_license_expiring_while_running_turns_licensed_routes_into_403_without_restart() {
    let key = test_key();
    let exp = T0 + 3_600_000;
    let valid = token(&key, T0 - 1000, exp);
    let h = Harness::start(key, &[("LICENSE_STRING", &valid)], None).await;
    let (status, _) = h.send(Method::POST, "/api/v1/acls").await;
    assert_ne!(status, 403);
    // Within the 300 s leeway the license still holds.
    h.advance_to(exp + 300_000);
    let (status, _) = h.send(Method::POST, "/api/v1/acls").await;
    assert_ne!(status, 403);
    h.advance_to(exp + 300_001);
    let (status, body) = h.send(Method::POST, "/api/v1/acls").await;
    assert_eq!(status, 403, "{body}");
    assert_eq!(body["error"]["code"], "LICENSE_EXPIRED");
    assert_eq!(h.license().await["state"], "expired");
    assert!(h.metrics().await.contains("ballast_license_valid 0"));
}

#[tokio::test]
async fn a_license_not_yet_valid_is_invalid_until_its_start() {
    let key = test_key();
    let nbf = T0 + 3_600_000;
    let later = token(&key, nbf, nbf + 86_400_000);
    let h = Harness::start(key, &[("LICENSE_STRING", &later)], None).await;
    let (status, body) = h.send(Method::POST, "/api/v1/acls").await;
    assert_eq!(status, 403);
    assert_eq!(body["error"]["code"], "LICENSE_INVALID");
    assert_eq!(h.license().await["reason"], "not_yet_valid");
    h.advance_to(nbf - 300_000);
    let (status, _) = h.send(Method::POST, "/api/v1/acls").await;
    assert_ne!(status, 403);
}

#[tokio::test]
async fn a_token_signed_by_another_key_or_with_another_algorithm_is_invalid() {
    let forged = token(&test_key(), T0 - 1000, T0 + 86_400_000);
    let h = Harness::start(test_key(), &[("LICENSE_STRING", &forged)], None).await;
    let (status, body) = h.send(Method::PUT, "/api/v1/acls").await;
    assert_eq!(
        (status, &body["error"]["code"]),
        (403, &json!("LICENSE_INVALID"))
    );
    assert_eq!(h.license().await["reason"], "signature");

    let key = test_key();
    let good = token(&key, T0 - 1000, T0 + 86_400_000);
    let (_, rest) = good.split_once('.').expect("token");
    let hs256 = format!("eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.{rest}");
    let h = Harness::start(key, &[("LICENSE_STRING", &hs256)], None).await;
    let (status, _) = h.send(Method::PUT, "/api/v1/acls").await;
    assert_eq!(status, 403);
    let data = h.license().await;
    assert_eq!(data["reason"], "algorithm");
    assert!(data["message"]
        .as_str()
        .is_some_and(|m| m.contains("HS256")));
}

#[tokio::test]
async fn a_license_file_replaced_while_running_counts_without_restart() {
    let key = test_key();
    let dir = tempfile::tempdir().expect("dir");
    let file = dir.path().join("license.jwt");
    std::fs::write(&file, token(&key, T0 - 86_400_000, T0 - 600_000)).expect("write");
    let file_text = file.to_string_lossy().into_owned();
    let renewed = token(&key, T0 - 1000, T0 + 86_400_000);
    let h = Harness::start(key, &[("BALLAST_LICENSE_FILE", &file_text)], None).await;
    assert_eq!(h.license().await["state"], "expired");
    std::fs::write(&file, format!("{renewed}\n")).expect("write");
    h.settle().await;
    let data = h.license().await;
    assert_eq!(data["state"], "licensed");
    assert_eq!(data["source"], "file");
}

/// A license server on loopback: answers every fetch with `answer` (status and body) and keeps
/// what it was sent.
#[derive(Clone, Default)]
struct LicenseServer {
    answer: Arc<Mutex<(u16, String)>>,
    seen: Arc<Mutex<Vec<Request>>>,
}

/// The `Authorization` header and the JSON body of one fetch.
type Request = (Option<String>, Value);

impl LicenseServer {
    async fn start(&self) -> String {
        use axum::routing::post;
        let me = self.clone();
        let app = axum::Router::new().route(
            "/api/license/fetch",
            post(
                move |headers: axum::http::HeaderMap, body: axum::Json<Value>| {
                    let me = me.clone();
                    async move {
                        let auth = headers
                            .get("authorization")
                            .and_then(|v| v.to_str().ok())
                            .map(str::to_string);
                        me.seen.lock().expect("lock").push((auth, body.0));
                        let (status, body) = me.answer.lock().expect("lock").clone();
                        (
                            axum::http::StatusCode::from_u16(status).expect("status"),
                            body,
                        )
                    }
                },
            ),
        );
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind");
        let addr = listener.local_addr().expect("addr");
        tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        format!("http://{addr}")
    }

    fn answer(&self, status: u16, body: impl Into<String>) {
        *self.answer.lock().expect("lock") = (status, body.into());
    }
}

fn fetch_count(metrics: &str, result: &str) -> u64 {
    let prefix = format!("ballast_license_fetch_total{{result=\"{result}\"}} ");
    metrics
        .lines()
        .find_map(|l| l.strip_prefix(&prefix))
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(0)
}

#[tokio::test]
async fn auto_fetch_renews_an_expired_license_without_restart() {
    let server = LicenseServer::default();
    server.answer(503, "maintenance");
    let url = server.start().await;
    let key = test_key();
    let expired = token(&key, T0 - 90 * 86_400_000, T0 - 86_400_000);
    let renewed = token(&key, T0 - 1000, T0 + 365 * 86_400_000);
    let h = Harness::start(
        key,
        &[
            ("LICENSE_STRING", &expired),
            ("LICENSE_URL", &url),
            ("LICENSE_FETCH_TOKEN", "fetch-secret-123"),
            ("LICENSE_SUBSCRIPTION_ID", "sub-42"),
            ("LICENSE_FETCH_INTERVAL", "100ms"),
        ],
        None,
    )
    .await;
    let (status, body) = h.send(Method::POST, "/api/v1/acls").await;
    assert_eq!(
        (status, &body["error"]["code"]),
        (403, &json!("LICENSE_EXPIRED"))
    );

    let fetcher = spawn_fetcher(h.state.clone()).expect("auto-fetch is configured");
    // The first fetch fails: counted, the state unchanged, the fetch token nowhere in the status.
    let mut waited = 0;
    while fetch_count(&h.metrics().await, "error") == 0 {
        tokio::time::sleep(Duration::from_millis(20)).await;
        waited += 1;
        assert!(waited < 200, "no failed fetch counted");
    }
    let data = h.license().await;
    assert_eq!(data["state"], "expired");
    assert_eq!(data["fetch"]["last_result"], "error");
    assert!(!data.to_string().contains("fetch-secret-123"));

    // The vendor renews: the next fetch stores the new token and licensed routes open.
    server.answer(200, json!({ "token": renewed }).to_string());
    let mut waited = 0;
    loop {
        let (status, _) = h.send(Method::POST, "/api/v1/acls").await;
        if status != 403 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
        waited += 1;
        assert!(waited < 200, "the renewal never took effect");
    }
    let data = h.license().await;
    assert_eq!(data["state"], "licensed");
    assert_eq!(data["source"], "fetched");
    assert_eq!(
        h.store.setting(TOKEN_SETTING).expect("setting").as_deref(),
        Some(renewed.as_str())
    );
    let metrics = h.metrics().await;
    assert!(fetch_count(&metrics, "success") >= 1, "{metrics}");
    assert!(fetch_count(&metrics, "error") >= 1, "{metrics}");
    let (auth, body) = server.seen.lock().expect("lock")[0].clone();
    assert_eq!(auth.as_deref(), Some("Bearer fetch-secret-123"));
    assert_eq!(body, json!({"subscription_id": "sub-42"}));
    fetcher.abort();
}

#[tokio::test]
async fn an_invalid_fetched_token_is_counted_and_never_replaces_a_valid_one() {
    let server = LicenseServer::default();
    let url = server.start().await;
    let key = test_key();
    let valid = token(&key, T0 - 1000, T0 + 86_400_000);
    let forged = token(&test_key(), T0 - 1000, T0 + 3650 * 86_400_000);
    server.answer(200, forged.clone());
    let h = Harness::start(
        key,
        &[
            ("LICENSE_URL", &url),
            ("LICENSE_FETCH_TOKEN", "fetch-secret-123"),
            ("LICENSE_SUBSCRIPTION_ID", "sub-42"),
        ],
        None,
    )
    .await;
    h.store
        .put_setting(TOKEN_SETTING, &valid, T0)
        .expect("store a fetched token");
    assert_eq!(fetch_once(&h.state).await, "invalid");
    assert_eq!(
        h.store.setting(TOKEN_SETTING).expect("setting").as_deref(),
        Some(valid.as_str())
    );
    let data = h.license().await;
    assert_eq!(data["state"], "licensed");
    assert_eq!(data["fetch"]["last_result"], "invalid");
    assert!(!data.to_string().contains(&forged));
    // An answer without a token is an error, also counted.
    server.answer(200, json!({"error": "unknown subscription"}).to_string());
    assert_eq!(fetch_once(&h.state).await, "error");
    let metrics = h.metrics().await;
    assert_eq!(fetch_count(&metrics, "invalid"), 1, "{metrics}");
    assert_eq!(fetch_count(&metrics, "error"), 1, "{metrics}");
}

#[tokio::test]
async fn a_demo_trial_opens_licensed_routes_only_on_the_demos_simulated_cluster() {
    let id = ballast_license::trial::new_demo_cluster_id();
    let h = Harness::start(test_key(), &[], Some(id.clone())).await;
    // Before the observer has read the simulator: pending, monitoring mode.
    let data = h.license().await;
    assert_eq!(data["state"], "invalid");
    assert_eq!(data["reason"], "trial_pending");
    write_cluster(&h.store, &id, T0 - 1_000);
    h.settle().await;
    let data = h.license().await;
    assert_eq!(data["state"], "trial", "{data}");
    assert_eq!(data["trial"]["state"], "active");
    assert_eq!(data["trial"]["ends_at"], "2027-01-29T08:00:00.000Z");
    let (status, _) = h.send(Method::POST, "/api/v1/acls").await;
    assert_ne!(status, 403);
    assert_eq!(
        h.store
            .setting(ballast_license::trial::TRIAL_STARTED_SETTING)
            .expect("setting"),
        Some(T0.to_string())
    );
    assert!(h.metrics().await.contains("ballast_license_valid 1"));
    // Fourteen days later the trial is over.
    h.advance_to(T0 + 14 * 86_400_000);
    write_cluster(&h.store, &id, T0 + 14 * 86_400_000 - 1_000);
    h.settle().await;
    let (status, body) = h.send(Method::POST, "/api/v1/acls").await;
    assert_eq!(
        (status, &body["error"]["code"]),
        (403, &json!("LICENSE_EXPIRED"))
    );
}

#[tokio::test]
async fn the_demo_variable_grants_nothing_on_a_real_cluster() {
    let id = ballast_license::trial::new_demo_cluster_id();
    let h = Harness::start(test_key(), &[], Some(id)).await;
    write_cluster(&h.store, "MkU3OEVBNTcwNTJENDM2Qg", T0 - 1_000);
    let (status, body) = h.send(Method::POST, "/api/v1/acls").await;
    assert_eq!(
        (status, &body["error"]["code"]),
        (403, &json!("LICENSE_INVALID"))
    );
    assert_eq!(h.license().await["reason"], "trial_refused");
}

fn write_cluster(store: &Store, cluster_id: &str, at_ms: i64) {
    store
        .write_observed(&ballast_schema::ObservedWrite {
            cluster: ballast_schema::ClusterFacts {
                cluster_id: Some(cluster_id.to_string()),
                sampled_at_ms: at_ms,
                ..Default::default()
            },
            ..Default::default()
        })
        .expect("write observed");
}

/// An agent's call goes through `catalog::invoke`, which applies an operation's declaration
/// whatever the door: a licensed tool in monitoring mode answers the licence code; a read identity
/// cannot run a mutation; an input the operation's check refuses (partitions without a topic would
/// widen an election to the whole cluster) runs nothing. No audit event is written by any of them.
#[tokio::test]
async fn an_agents_call_is_gated_by_its_operations_declaration_whatever_the_door() {
    use ballast_schema::AuditQuery;
    use ballast_web::auth::{Identity, Scope};
    use ballast_web::catalog::{self, find, invoke, Channel};
    let caller = |scope: Scope| {
        let mut identity = Identity::open("approver".into());
        identity.scope = scope;
        catalog::caller(
            &identity,
            Channel::Mcp {
                requested_by: "requester".into(),
            },
        )
    };
    let audited = |store: &Store| {
        store
            .list_audit(&AuditQuery::default())
            .expect("audit")
            .total
    };
    let election = find("preferred_leader_election").expect("a tool");

    let unlicensed = Harness::start(test_key(), &[], None).await;
    let refused = invoke(election, &unlicensed.state, caller(Scope::Write), json!({}))
        .await
        .expect_err("monitoring mode");
    assert_eq!(
        (refused.status, refused.code.as_str()),
        (403, "LICENSE_INVALID"),
        "{refused}"
    );
    assert_eq!(audited(&unlicensed.store), 0);

    let key = test_key();
    let valid = token(&key, T0 - 86_400_000, T0 + 90 * 86_400_000);
    let licensed = Harness::start(key, &[("LICENSE_STRING", &valid)], None).await;
    let read_only = invoke(election, &licensed.state, caller(Scope::Read), json!({}))
        .await
        .expect_err("a read identity");
    assert_eq!(read_only.code, "INSUFFICIENT_SCOPE", "{read_only}");
    let unchecked = invoke(
        election,
        &licensed.state,
        caller(Scope::Write),
        json!({"partitions": [0]}),
    )
    .await
    .expect_err("partitions need a topic");
    assert_eq!(unchecked.code, "INVALID_INPUT", "{unchecked}");
    assert_eq!(audited(&licensed.store), 0, "nothing ran");
}
