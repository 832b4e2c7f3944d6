//! Authentication (docs/auth.md): OIDC login against a provider this test controls (so it can
//! forge, expire and misaddress ID tokens, and rotate its keys), sessions, personal access
//! tokens, scopes, and walks over every route the router serves. The same login against a real
//! OpenID provider (the npm `oidc-provider`) in Chromium is `tests/e2e/oidc_login.rs`.

mod routes_in_code;

use std::collections::HashMap;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Arc, Mutex};

use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use ballast_config::{Config, RawConfig};
use ballast_runtime::Clock;
use ballast_schema::{AuditQuery, Store};
use ballast_web::license::LicenseRuntime;
use ballast_web::AppState;
use base64::Engine;
use ring::rand::SystemRandom;
use ring::signature::{EcdsaKeyPair, KeyPair, ECDSA_P256_SHA256_FIXED_SIGNING};
use serde_json::{json, Value};

const B64: base64::engine::GeneralPurpose = base64::engine::general_purpose::URL_SAFE_NO_PAD;
const CLIENT_ID: &str = "ballast";
const CLIENT_SECRET: &str = "s3cret-client";
const PAT_SECRET: &str = "a-stable-secret-of-at-least-32-characters";

// ------------------------------------------------------------------------------ the provider

/// How the provider's token endpoint spoils the ID token.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Forge {
    None,
    ForeignKey,
    AlgNone,
    Expired,
    WrongAudience,
    WrongNonce,
}

struct Key {
    kid: String,
    pair: EcdsaKeyPair,
}

impl Key {
    fn new(kid: &str) -> Key {
        let rng = SystemRandom::new();
        let pkcs8 =
            EcdsaKeyPair::generate_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, &rng).expect("key");
        let pair = EcdsaKeyPair::from_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, pkcs8.as_ref(), &rng)
            .expect("key pair");
        Key {
            kid: kid.to_string(),
            pair,
        }
    }

    fn jwk(&self) -> Value {
        let point = self.pair.public_key().as_ref();
        json!({"kty": "EC", "crv": "P-256", "use": "sig", "alg": "ES256", "kid": self.kid,
            "x": B64.encode(&point[1..33]), "y": B64.encode(&point[33..65])})
    }

    fn sign(&self, header: &Value, claims: &Value) -> String {
        let input = format!(
            "{}.{}",
            B64.encode(header.to_string()),
            B64.encode(claims.to_string())
        );
        let sig = self
            .pair
            .sign(&SystemRandom::new(), input.as_bytes())
            .expect("sign");
        format!("{input}.{}", B64.encode(sig.as_ref()))
    }
}

struct Grant {
    nonce: String,
    challenge: String,
    claims: Value,
    forge: Forge,
}

struct ProviderState {
    issuer: String,
    /// Published keys; the first one signs.
    keys: Vec<Key>,
    grants: HashMap<String, Grant>,
    userinfo: HashMap<String, Value>,
    refresh_accepted: bool,
    discoveries: usize,
}

#[derive(Clone)]
struct Provider {
    base: String,
    state: Arc<Mutex<ProviderState>>,
}

impl Provider {
    async fn start() -> Provider {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind");
        let base = format!("http://{}", listener.local_addr().expect("addr"));
        let state = Arc::new(Mutex::new(ProviderState {
            issuer: base.clone(),
            keys: vec![Key::new("k1")],
            grants: HashMap::new(),
            userinfo: HashMap::new(),
            refresh_accepted: true,
            discoveries: 0,
        }));
        let app = Router::new()
            .route("/.well-known/openid-configuration", get(discovery))
            .route("/jwks", get(jwks))
            .route("/token", post(token))
            .route("/userinfo", get(userinfo))
            .with_state(state.clone());
        tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        Provider { base, state }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, ProviderState> {
        self.state.lock().expect("provider state")
    }

    /// Publishes only a new key, which signs from now on.
    fn rotate_keys(&self) {
        self.lock().keys = vec![Key::new("k2")];
    }
}

async fn discovery(State(s): State<Arc<Mutex<ProviderState>>>) -> Json<Value> {
    let mut s = s.lock().expect("state");
    s.discoveries += 1;
    let i = s.issuer.clone();
    Json(json!({
        "issuer": i,
        "authorization_endpoint": format!("{i}/authorize"),
        "token_endpoint": format!("{i}/token"),
        "userinfo_endpoint": format!("{i}/userinfo"),
        "jwks_uri": format!("{i}/jwks"),
        "end_session_endpoint": format!("{i}/logout"),
        "response_types_supported": ["code"],
        "subject_types_supported": ["public"],
        "id_token_signing_alg_values_supported": ["ES256"],
        "code_challenge_methods_supported": ["S256"],
        "token_endpoint_auth_methods_supported": ["client_secret_basic"],
    }))
}

async fn jwks(State(s): State<Arc<Mutex<ProviderState>>>) -> Json<Value> {
    let s = s.lock().expect("state");
    Json(json!({"keys": s.keys.iter().map(Key::jwk).collect::<Vec<_>>()}))
}

fn oauth_error(error: &str) -> Response {
    (StatusCode::BAD_REQUEST, Json(json!({"error": error}))).into_response()
}

async fn token(
    State(s): State<Arc<Mutex<ProviderState>>>,
    headers: HeaderMap,
    body: axum::body::Bytes,
) -> Response {
    let form: HashMap<String, String> = serde_urlencoded::from_bytes(&body).unwrap_or_default();
    let basic = format!(
        "Basic {}",
        base64::engine::general_purpose::STANDARD.encode(format!("{CLIENT_ID}:{CLIENT_SECRET}"))
    );
    if headers.get("authorization").and_then(|v| v.to_str().ok()) != Some(basic.as_str()) {
        return oauth_error("invalid_client");
    }
    let mut s = s.lock().expect("state");
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .expect("time")
        .as_secs() as i64;
    match form.get("grant_type").map(String::as_str) {
        Some("refresh_token") => {
            if !s.refresh_accepted || form.get("refresh_token").map(String::as_str) != Some("rt-1")
            {
                return oauth_error("invalid_grant");
            }
            Json(json!({"access_token": "at-2", "token_type": "Bearer", "expires_in": 600, "refresh_token": "rt-1"}))
                .into_response()
        }
        Some("authorization_code") => {
            let Some(grant) = form.get("code").and_then(|c| s.grants.remove(c)) else {
                return oauth_error("invalid_grant");
            };
            let verifier = form.get("code_verifier").cloned().unwrap_or_default();
            let digest = ring::digest::digest(&ring::digest::SHA256, verifier.as_bytes());
            if B64.encode(digest.as_ref()) != grant.challenge {
                return oauth_error("invalid_grant");
            }
            let mut claims = grant.claims.as_object().cloned().unwrap_or_default();
            let access = format!("at-{}", claims["sub"].as_str().unwrap_or("x"));
            claims.insert("iss".into(), json!(s.issuer));
            claims.insert("aud".into(), json!(CLIENT_ID));
            claims.insert("iat".into(), json!(now));
            claims.insert("exp".into(), json!(now + 300));
            claims.insert("nonce".into(), json!(grant.nonce));
            match grant.forge {
                Forge::Expired => {
                    claims.insert("iat".into(), json!(now - 7200));
                    claims.insert("exp".into(), json!(now - 3600));
                }
                Forge::WrongAudience => {
                    claims.insert("aud".into(), json!("another-client"));
                }
                Forge::WrongNonce => {
                    claims.insert("nonce".into(), json!("not-the-nonce"));
                }
                _ => {}
            }
            let claims = Value::Object(claims);
            let signer = &s.keys[0];
            let header = json!({"alg": "ES256", "typ": "JWT", "kid": signer.kid});
            let id_token = match grant.forge {
                Forge::ForeignKey => Key {
                    kid: signer.kid.clone(),
                    ..Key::new("foreign")
                }
                .sign(&header, &claims),
                Forge::AlgNone => format!(
                    "{}.{}.",
                    B64.encode(json!({"alg": "none", "typ": "JWT"}).to_string()),
                    B64.encode(claims.to_string())
                ),
                _ => signer.sign(&header, &claims),
            };
            s.userinfo.insert(
                access.clone(),
                json!({"sub": claims["sub"], "locale": "en"}),
            );
            Json(
                json!({"access_token": access, "token_type": "Bearer", "expires_in": 600,
                "refresh_token": "rt-1", "id_token": id_token}),
            )
            .into_response()
        }
        _ => oauth_error("unsupported_grant_type"),
    }
}

async fn userinfo(State(s): State<Arc<Mutex<ProviderState>>>, headers: HeaderMap) -> Response {
    let s = s.lock().expect("state");
    let token = headers
        .get("authorization")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .unwrap_or_default();
    match s.userinfo.get(token) {
        Some(info) => Json(info.clone()).into_response(),
        None => StatusCode::UNAUTHORIZED.into_response(),
    }
}

// ------------------------------------------------------------------------------ ballast

/// The test's clock: real time, moved forward by tests (token expiry).
struct TestClock(AtomicI64);

impl Clock for TestClock {
    fn now_ms(&self) -> i64 {
        self.0.load(Ordering::SeqCst)
    }
}

struct Ballast {
    base: String,
    http: reqwest::Client,
    store: Store,
    clock: Arc<TestClock>,
    db: std::path::PathBuf,
    _dir: tempfile::TempDir,
}

struct Answer {
    status: u16,
    headers: reqwest::header::HeaderMap,
    body: Value,
    text: String,
}

fn real_now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .expect("time")
        .as_millis() as i64
}

impl Ballast {
    /// The whole router with authentication on (provider `corp` = `provider`, tokens enabled),
    /// licensed, plus `extra` settings.
    async fn start(provider: &Provider, extra: &[(&str, &str)]) -> Ballast {
        let dir = tempfile::tempdir().expect("temp dir");
        let db = dir.path().join("ballast.db");
        Store::migrate(&db).expect("migrate");
        let store = Store::open(&db).expect("open store");
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind");
        let base = format!("http://{}", listener.local_addr().expect("addr"));
        let mut pairs: Vec<(String, String)> = [
            ("BALLAST_KAFKA_BOOTSTRAP_SERVERS", "127.0.0.1:9"),
            ("BALLAST_DATA_DIR", dir.path().to_str().expect("utf-8")),
            ("AUTH_PROVIDERS", "corp"),
            ("AUTH_CORP_ISSUER", provider.base.as_str()),
            ("AUTH_CORP_CLIENT_ID", CLIENT_ID),
            ("AUTH_CORP_CLIENT_SECRET", CLIENT_SECRET),
            ("AUTH_CORP_DISPLAY_NAME", "Corp SSO"),
            ("BALLAST_PUBLIC_URL", base.as_str()),
            ("AUTH_PAT_ENABLED", "true"),
            ("AUTH_PAT_HASH_SECRET", PAT_SECRET),
        ]
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
        pairs.extend(extra.iter().map(|(k, v)| (k.to_string(), v.to_string())));
        let raw = RawConfig::from_pairs(pairs, None).expect("raw config");
        let config = Config::from_raw(&raw).expect("valid config");
        let clock = Arc::new(TestClock(AtomicI64::new(real_now_ms())));
        let mut state = AppState::new(store.clone(), Arc::new(config), clock.clone());
        state.set_license(
            LicenseRuntime::licensed_for_tests(&store, real_now_ms()).expect("license"),
        );
        let app = ballast_web::router(state);
        tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        Ballast {
            base,
            http: reqwest::Client::builder()
                .redirect(reqwest::redirect::Policy::none())
                .build()
                .expect("client"),
            store,
            clock,
            db,
            _dir: dir,
        }
    }

    async fn send(
        &self,
        method: &str,
        path: &str,
        headers: &[(&str, String)],
        body: Option<Value>,
    ) -> Answer {
        let method = reqwest::Method::from_bytes(method.as_bytes()).expect("method");
        let mut req = self.http.request(method, format!("{}{path}", self.base));
        for (k, v) in headers {
            req = req.header(*k, v);
        }
        // A cookie comes from the dashboard's own pages, whose browser says so (a test of a
        // cross-site or headerless request sends its own Origin or Sec-Fetch-Site).
        let named = |n: &str| headers.iter().any(|(k, _)| k.eq_ignore_ascii_case(n));
        if named("cookie") && !named("origin") && !named("sec-fetch-site") {
            req = req.header("sec-fetch-site", "same-origin");
        }
        if let Some(b) = body {
            req = req.json(&b);
        }
        let r = req.send().await.expect("request");
        let status = r.status().as_u16();
        let headers = r.headers().clone();
        let text = r.text().await.expect("body");
        Answer {
            status,
            headers,
            body: serde_json::from_str(&text).unwrap_or(Value::Null),
            text,
        }
    }

    async fn get(&self, path: &str, headers: &[(&str, String)]) -> Answer {
        self.send("GET", path, headers, None).await
    }

    /// Starts a login, lets the provider answer with `claims` (spoiled by `forge`), and sends
    /// the callback: the callback's answer.
    async fn login(&self, provider: &Provider, claims: Value, forge: Forge) -> (Answer, String) {
        let (answer, callback, _) = self.login_from(provider, claims, forge, true).await;
        (answer, callback)
    }

    /// [`Ballast::login`], sending the login cookie back to the callback or not (a callback
    /// from another browser): the callback's answer, its path and the login cookie.
    async fn login_from(
        &self,
        provider: &Provider,
        claims: Value,
        forge: Forge,
        same_browser: bool,
    ) -> (Answer, String, String) {
        let start = self
            .get("/api/v1/auth/login/corp?next=%2Fui%2Ftopics", &[])
            .await;
        assert_eq!(start.status, 303, "{}", start.text);
        let login_cookie = cookie_named(&start, "ballast_login").expect("login cookie");
        let location = start.headers["location"]
            .to_str()
            .expect("location")
            .to_string();
        let url = reqwest::Url::parse(&location).expect("authorize URL");
        assert!(location.starts_with(&format!("{}/authorize", provider.base)));
        let q: HashMap<String, String> = url.query_pairs().into_owned().collect();
        assert_eq!(q["response_type"], "code");
        assert_eq!(q["client_id"], CLIENT_ID);
        assert_eq!(q["code_challenge_method"], "S256");
        assert_eq!(
            q["redirect_uri"],
            format!("{}/api/v1/auth/callback/corp", self.base)
        );
        assert!(q["scope"].split(' ').any(|s| s == "openid"));
        let code = format!("code-{}", rand_suffix());
        provider.lock().grants.insert(
            code.clone(),
            Grant {
                nonce: q["nonce"].clone(),
                challenge: q["code_challenge"].clone(),
                claims,
                forge,
            },
        );
        let callback = format!(
            "/api/v1/auth/callback/corp?code={code}&state={}",
            urlencode(&q["state"])
        );
        let headers = if same_browser {
            vec![("cookie", login_cookie.clone())]
        } else {
            vec![]
        };
        (self.get(&callback, &headers).await, callback, login_cookie)
    }

    /// Logs in as alice and returns her session cookie header.
    async fn alice(&self, provider: &Provider) -> String {
        let (answer, _) = self.login(provider, alice_claims(), Forge::None).await;
        assert_eq!(answer.status, 303, "{}", answer.text);
        session_cookie(&answer).expect("session cookie")
    }

    /// A token made by the session `cookie`: its value.
    async fn token(&self, cookie: &str, scope: &str) -> (String, String) {
        let made = self
            .send(
                "POST",
                "/api/v1/tokens",
                &[("cookie", cookie.to_string())],
                Some(json!({"name": format!("{scope} token"), "scope": scope})),
            )
            .await;
        assert_eq!(made.status, 200, "{}", made.text);
        (
            made.body["data"]["token"]
                .as_str()
                .expect("value")
                .to_string(),
            made.body["data"]["id"].as_str().expect("id").to_string(),
        )
    }

    fn audit(&self, action: &str) -> Vec<ballast_schema::AuditEvent> {
        self.store
            .list_audit(&AuditQuery {
                action: Some(action.to_string()),
                ..AuditQuery::default()
            })
            .expect("audit")
            .events
    }
}

fn rand_suffix() -> String {
    let mut b = [0u8; 8];
    ring::rand::SecureRandom::fill(&SystemRandom::new(), &mut b).expect("random");
    B64.encode(b)
}

fn urlencode(s: &str) -> String {
    s.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}

fn alice_claims() -> Value {
    json!({"sub": "u-alice", "preferred_username": "alice", "email": "alice@example.com",
        "name": "Alice Example", "groups": ["kafka-admins", "staff"]})
}

/// `ballast_session=...` from the answer's `Set-Cookie`, as a `Cookie` header value.
fn session_cookie(a: &Answer) -> Option<String> {
    cookie_named(a, "ballast_session")
}

/// Cookie `name` set (not cleared) by the answer, as a `Cookie` header value.
fn cookie_named(a: &Answer, name: &str) -> Option<String> {
    a.headers
        .get_all("set-cookie")
        .iter()
        .filter_map(|v| v.to_str().ok())
        .find(|v| v.starts_with(&format!("{name}=")) && !v.starts_with(&format!("{name}=;")))
        .and_then(|v| v.split(';').next())
        .map(str::to_string)
}

fn bearer(token: &str) -> (&'static str, String) {
    ("authorization", format!("Bearer {token}"))
}

// ------------------------------------------------------------------------------ login

#[tokio::test]
async fn a_login_sets_an_httponly_lax_session_cookie_and_me_names_the_person() {
    let p = Provider::start().await;
    let b = Ballast::start(&p, &[]).await;
    let (answer, _) = b.login(&p, alice_claims(), Forge::None).await;
    assert_eq!(answer.status, 303, "{}", answer.text);
    assert_eq!(answer.headers["location"], "/ui/topics");
    let set = answer.headers["set-cookie"].to_str().expect("cookie");
    assert!(
        set.contains("HttpOnly") && set.contains("SameSite=Lax") && set.contains("Path=/"),
        "{set}"
    );
    assert!(
        !set.contains("Secure"),
        "an http public URL gives no Secure flag: {set}"
    );
    let cookie = session_cookie(&answer).expect("cookie");
    let me = b
        .get("/api/v1/auth/me", &[("cookie", cookie.clone())])
        .await;
    assert_eq!(me.status, 200, "{}", me.text);
    let d = &me.body["data"];
    assert_eq!(d["userId"], "alice");
    assert_eq!(d["email"], "alice@example.com");
    assert_eq!(d["name"], "Alice Example");
    assert_eq!(d["groups"], json!(["kafka-admins", "staff"]));
    assert_eq!(d["via"], "session");
    assert_eq!(d["scope"], "write");
    // the session lives in SQLite: a new web process (a new router on the same database) keeps it
    let events = b.audit("auth.login");
    assert_eq!(events.len(), 1);
    assert_eq!(events[0].user_id.as_deref(), Some("alice"));
    // nothing secret in the database: the cookie value is not stored
    let bytes = std::fs::read(&b.db).expect("db");
    let value = cookie.trim_start_matches("ballast_session=");
    assert!(!String::from_utf8_lossy(&bytes).contains(value));
}

#[tokio::test]
async fn the_session_survives_a_restart_of_the_web_process() {
    let p = Provider::start().await;
    let b = Ballast::start(&p, &[]).await;
    let cookie = b.alice(&p).await;
    // a second router over the same database stands in for the restarted process
    let store = Store::open(&b.db).expect("open");
    let again = AppState::new(store, Arc::new(config_of(&p, &b.base)), b.clock.clone());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let base = format!("http://{}", listener.local_addr().expect("addr"));
    let app = ballast_web::router(again);
    tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    let me = reqwest::Client::new()
        .get(format!("{base}/api/v1/auth/me"))
        .header("cookie", cookie)
        .send()
        .await
        .expect("me");
    assert_eq!(me.status(), 200);
}

fn config_of(p: &Provider, public: &str) -> Config {
    let pairs = [
        ("BALLAST_KAFKA_BOOTSTRAP_SERVERS", "127.0.0.1:9"),
        ("AUTH_PROVIDERS", "corp"),
        ("AUTH_CORP_ISSUER", p.base.as_str()),
        ("AUTH_CORP_CLIENT_ID", CLIENT_ID),
        ("AUTH_CORP_CLIENT_SECRET", CLIENT_SECRET),
        ("BALLAST_PUBLIC_URL", public),
    ];
    let raw = RawConfig::from_pairs(
        pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())),
        None,
    )
    .expect("raw");
    Config::from_raw(&raw).expect("config")
}

async fn refused(forge: Forge, expect: &str) {
    let p = Provider::start().await;
    let b = Ballast::start(&p, &[]).await;
    let (answer, _) = b.login(&p, alice_claims(), forge).await;
    assert_eq!(answer.status, 401, "{forge:?}: {}", answer.text);
    assert!(session_cookie(&answer).is_none(), "{forge:?} set a session");
    assert!(
        answer.text.to_lowercase().contains(expect),
        "{forge:?}: {}",
        answer.text
    );
    assert!(b.audit("auth.login").is_empty());
}

#[tokio::test]
async fn an_id_token_signed_by_a_foreign_key_is_refused() {
    refused(Forge::ForeignKey, "signature").await;
}

#[tokio::test]
async fn an_unsigned_id_token_with_alg_none_is_refused() {
    refused(Forge::AlgNone, "refused").await;
}

#[tokio::test]
async fn an_expired_id_token_is_refused() {
    refused(Forge::Expired, "expired").await;
}

#[tokio::test]
async fn an_id_token_for_another_audience_is_refused() {
    refused(Forge::WrongAudience, "audience").await;
}

#[tokio::test]
async fn an_id_token_with_another_nonce_is_refused() {
    refused(Forge::WrongNonce, "nonce").await;
}

#[tokio::test]
async fn a_replayed_login_state_is_refused() {
    let p = Provider::start().await;
    let b = Ballast::start(&p, &[]).await;
    let (first, callback) = b.login(&p, alice_claims(), Forge::None).await;
    assert_eq!(first.status, 303);
    let replay = b.get(&callback, &[]).await;
    assert_eq!(replay.status, 400, "{}", replay.text);
    assert!(replay.text.contains("already used"), "{}", replay.text);
    assert!(session_cookie(&replay).is_none());
    let forged = b
        .get("/api/v1/auth/callback/corp?code=x&state=never-issued", &[])
        .await;
    assert_eq!(forged.status, 400);
}

#[tokio::test]
async fn a_login_finished_in_another_browser_is_refused() {
    let p = Provider::start().await;
    let b = Ballast::start(&p, &[]).await;
    let (answer, _, _) = b.login_from(&p, alice_claims(), Forge::None, false).await;
    assert_eq!(answer.status, 400, "{}", answer.text);
    assert!(answer.text.contains("another browser"), "{}", answer.text);
    assert!(session_cookie(&answer).is_none());
    assert!(b.audit("auth.login").is_empty());
}

#[tokio::test]
async fn a_login_that_takes_longer_than_the_login_timeout_is_refused() {
    let p = Provider::start().await;
    let b = Ballast::start(&p, &[("AUTH_LOGIN_TIMEOUT", "1m")]).await;
    let start = b.get("/api/v1/auth/login/corp", &[]).await;
    let login_cookie = cookie_named(&start, "ballast_login").expect("login cookie");
    let location = start.headers["location"]
        .to_str()
        .expect("location")
        .to_string();
    let url = reqwest::Url::parse(&location).expect("url");
    let q: HashMap<String, String> = url.query_pairs().into_owned().collect();
    b.clock.0.fetch_add(61_000, Ordering::SeqCst);
    let late = b
        .get(
            &format!(
                "/api/v1/auth/callback/corp?code=c&state={}",
                urlencode(&q["state"])
            ),
            &[("cookie", login_cookie)],
        )
        .await;
    assert_eq!(late.status, 400, "{}", late.text);
    assert!(late.text.contains("too long"));
}

#[tokio::test]
async fn keys_the_provider_rotates_are_fetched_again() {
    let p = Provider::start().await;
    let b = Ballast::start(&p, &[]).await;
    b.alice(&p).await;
    let before = p.lock().discoveries;
    p.rotate_keys();
    let (answer, _) = b.login(&p, alice_claims(), Forge::None).await;
    assert_eq!(answer.status, 303, "{}", answer.text);
    assert!(p.lock().discoveries > before, "the keys were fetched again");
}

#[tokio::test]
async fn allowed_domains_refuse_every_other_domain_with_a_clear_page() {
    let p = Provider::start().await;
    let b = Ballast::start(&p, &[("ALLOWED_DOMAINS", "example.com")]).await;
    let bob = json!({"sub": "u-bob", "email": "bob@other.org", "preferred_username": "bob"});
    let (answer, _) = b.login(&p, bob, Forge::None).await;
    assert_eq!(answer.status, 403, "{}", answer.text);
    assert!(
        answer.text.contains("other.org is not allowed"),
        "{}",
        answer.text
    );
    assert!(session_cookie(&answer).is_none());
    assert_eq!(b.login(&p, alice_claims(), Forge::None).await.0.status, 303);
}

#[tokio::test]
async fn allowed_groups_refuse_people_outside_them() {
    let p = Provider::start().await;
    let b = Ballast::start(&p, &[("ALLOWED_GROUPS", "kafka-admins")]).await;
    let dave = json!({"sub": "u-dave", "email": "dave@example.com", "group": "contractors"});
    let (answer, _) = b.login(&p, dave, Forge::None).await;
    assert_eq!(answer.status, 403, "{}", answer.text);
    assert!(answer.text.contains("not in an allowed group"));
    // a role-shaped claim counts as well as groups
    let carol = json!({"sub": "u-carol", "upn": "carol@example.com", "roles": ["kafka-admins"]});
    assert_eq!(b.login(&p, carol, Forge::None).await.0.status, 303);
}

#[tokio::test]
async fn write_groups_give_everyone_else_a_read_session() {
    let p = Provider::start().await;
    let b = Ballast::start(&p, &[("AUTH_WRITE_GROUPS", "ops")]).await;
    let cookie = b.alice(&p).await;
    let me = b
        .get("/api/v1/auth/me", &[("cookie", cookie.clone())])
        .await;
    assert_eq!(me.body["data"]["scope"], "read");
    let refused = b
        .send(
            "POST",
            "/api/v1/cluster/refresh-metadata",
            &[("cookie", cookie.clone())],
            None,
        )
        .await;
    assert_eq!(refused.status, 403, "{}", refused.text);
    // and such a person cannot make a write token
    let made = b
        .send(
            "POST",
            "/api/v1/tokens",
            &[("cookie", cookie)],
            Some(json!({"name": "w", "scope": "write"})),
        )
        .await;
    assert_eq!(made.status, 400, "{}", made.text);
}

#[tokio::test]
async fn logout_ends_the_session_server_side() {
    let p = Provider::start().await;
    let b = Ballast::start(&p, &[]).await;
    let cookie = b.alice(&p).await;
    let out = b
        .send(
            "POST",
            "/api/v1/auth/logout",
            &[("cookie", cookie.clone())],
            None,
        )
        .await;
    assert_eq!(out.status, 200, "{}", out.text);
    assert_eq!(
        out.body["data"]["endSessionUrl"],
        format!("{}/logout", p.base)
    );
    assert!(out.headers["set-cookie"]
        .to_str()
        .expect("cookie")
        .contains("Max-Age=0"));
    // the old cookie, replayed, no longer works
    let me = b
        .get("/api/v1/auth/me", &[("cookie", cookie.clone())])
        .await;
    assert_eq!(me.status, 401);
    let api = b.get("/api/v1/cluster", &[("cookie", cookie)]).await;
    assert_eq!(api.status, 401);
    assert_eq!(b.audit("auth.logout").len(), 1);
}

#[tokio::test]
async fn refresh_renews_the_session_and_a_refused_refresh_ends_it() {
    let p = Provider::start().await;
    let b = Ballast::start(&p, &[("AUTH_SESSION_TTL", "1h")]).await;
    let cookie = b.alice(&p).await;
    b.clock.0.fetch_add(50 * 60_000, Ordering::SeqCst);
    let r = b
        .send(
            "POST",
            "/api/v1/auth/refresh",
            &[("cookie", cookie.clone())],
            None,
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.text);
    b.clock.0.fetch_add(30 * 60_000, Ordering::SeqCst);
    assert_eq!(
        b.get("/api/v1/auth/me", &[("cookie", cookie.clone())])
            .await
            .status,
        200,
        "renewed past the first hour"
    );
    p.lock().refresh_accepted = false;
    let r = b
        .send(
            "POST",
            "/api/v1/auth/refresh",
            &[("cookie", cookie.clone())],
            None,
        )
        .await;
    assert_eq!(r.status, 401, "{}", r.text);
    assert_eq!(
        b.get("/api/v1/auth/me", &[("cookie", cookie)]).await.status,
        401
    );
}

#[tokio::test]
async fn a_session_expires_after_the_session_ttl() {
    let p = Provider::start().await;
    let b = Ballast::start(&p, &[("AUTH_SESSION_TTL", "1h")]).await;
    let cookie = b.alice(&p).await;
    b.clock.0.fetch_add(3_600_000, Ordering::SeqCst);
    assert_eq!(
        b.get("/api/v1/cluster", &[("cookie", cookie)]).await.status,
        401
    );
}

#[tokio::test]
async fn cookie_mutations_from_another_site_are_refused() {
    let p = Provider::start().await;
    let b = Ballast::start(&p, &[]).await;
    let cookie = b.alice(&p).await;
    let cross = b
        .send(
            "POST",
            "/api/v1/tokens",
            &[
                ("cookie", cookie.clone()),
                ("origin", "https://evil.example".into()),
            ],
            Some(json!({"name": "x", "scope": "read"})),
        )
        .await;
    assert_eq!(cross.status, 403, "{}", cross.text);
    assert!(cross.text.contains("cross-site"));
    // A forwarded host never vouches for a foreign origin.
    let spoofed = b
        .send(
            "POST",
            "/api/v1/tokens",
            &[
                ("cookie", cookie.clone()),
                ("origin", "https://evil.example".into()),
                ("x-forwarded-host", "evil.example".into()),
            ],
            Some(json!({"name": "x", "scope": "read"})),
        )
        .await;
    assert_eq!(spoofed.status, 403, "{}", spoofed.text);
    // Neither Origin nor Sec-Fetch-Site: refused.
    let bare = b
        .http
        .post(format!("{}/api/v1/tokens", b.base))
        .header("cookie", cookie.clone())
        .json(&json!({"name": "x", "scope": "read"}))
        .send()
        .await
        .expect("request");
    assert_eq!(bare.status().as_u16(), 403);
    let same = b
        .send(
            "POST",
            "/api/v1/tokens",
            &[("cookie", cookie), ("origin", b.base.clone())],
            Some(json!({"name": "x", "scope": "read"})),
        )
        .await;
    assert_eq!(same.status, 200, "{}", same.text);
}

// ------------------------------------------------------------------------------ tokens

fn hmac_hex(value: &str) -> String {
    let key = ring::hmac::Key::new(ring::hmac::HMAC_SHA256, PAT_SECRET.as_bytes());
    ring::hmac::sign(&key, value.as_bytes())
        .as_ref()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

#[tokio::test]
async fn a_token_is_shown_once_and_only_its_hmac_is_stored() {
    let p = Provider::start().await;
    let b = Ballast::start(&p, &[]).await;
    let cookie = b.alice(&p).await;
    let (value, id) = b.token(&cookie, "write").await;
    assert!(value.starts_with("pat_"));
    assert!(value.len() >= 4 + 43, "256 random bits");
    let list = b.get("/api/v1/tokens", &[("cookie", cookie)]).await;
    assert_eq!(list.status, 200);
    assert!(
        !list.text.contains(&value),
        "the list never shows the value"
    );
    assert_eq!(list.body["data"]["tokens"][0]["id"], id);
    let db = String::from_utf8_lossy(&std::fs::read(&b.db).expect("db")).to_string();
    let wal = std::fs::read(b.db.with_extension("db-wal")).unwrap_or_default();
    let wal = String::from_utf8_lossy(&wal).to_string();
    assert!(
        !db.contains(&value) && !wal.contains(&value),
        "the value is not at rest"
    );
    assert!(
        db.contains(&hmac_hex(&value)) || wal.contains(&hmac_hex(&value)),
        "its HMAC is"
    );
    // the token works on the API, as its owner
    let me = b.get("/api/v1/auth/me", &[bearer(&value)]).await;
    assert_eq!(me.body["data"]["userId"], "alice");
    assert_eq!(me.body["data"]["via"], "token");
    let made = b.audit("tokens.create");
    assert_eq!(made.len(), 1);
    assert!(!serde_json::to_string(&made[0].summary)
        .expect("json")
        .contains(&value));
}

#[tokio::test]
async fn a_tampered_revoked_or_expired_token_is_refused() {
    let p = Provider::start().await;
    let b = Ballast::start(&p, &[]).await;
    let cookie = b.alice(&p).await;
    let (value, id) = b.token(&cookie, "read").await;
    assert_ne!(
        b.get("/api/v1/cluster/health", &[bearer(&value)])
            .await
            .status,
        401
    );
    let mut tampered = value.clone();
    let last = tampered.pop().expect("char");
    tampered.push(if last == 'A' { 'B' } else { 'A' });
    assert_eq!(
        b.get("/api/v1/cluster", &[bearer(&tampered)]).await.status,
        401
    );
    assert_eq!(
        b.get("/api/v1/cluster", &[bearer("not-a-pat")])
            .await
            .status,
        401
    );
    // revoked: refused at once
    let revoked = b
        .send(
            "DELETE",
            &format!("/api/v1/tokens/{id}"),
            &[("cookie", cookie.clone())],
            None,
        )
        .await;
    assert_eq!(revoked.status, 200, "{}", revoked.text);
    assert_eq!(revoked.body["data"]["status"], "revoked");
    let after = b.get("/api/v1/cluster", &[bearer(&value)]).await;
    assert_eq!(after.status, 401);
    assert!(after.text.contains("revoked"));
    // expired: refused once the clock passes its expiry
    let soon = humantime::format_rfc3339_seconds(
        std::time::UNIX_EPOCH
            + std::time::Duration::from_millis((b.clock.now_ms() + 3_600_000) as u64),
    )
    .to_string();
    let made = b
        .send(
            "POST",
            "/api/v1/tokens",
            &[("cookie", cookie)],
            Some(json!({"name": "short", "scope": "read", "expiresAt": soon})),
        )
        .await;
    assert_eq!(made.status, 200, "{}", made.text);
    let short = made.body["data"]["token"]
        .as_str()
        .expect("value")
        .to_string();
    assert_ne!(
        b.get("/api/v1/cluster", &[bearer(&short)]).await.status,
        401
    );
    b.clock.0.fetch_add(3_600_001, Ordering::SeqCst);
    let expired = b.get("/api/v1/cluster", &[bearer(&short)]).await;
    assert_eq!(expired.status, 401);
    assert!(expired.text.contains("expired"));
}

#[tokio::test]
async fn bad_token_requests_are_refused_and_change_nothing() {
    let p = Provider::start().await;
    let b = Ballast::start(&p, &[]).await;
    let cookie = b.alice(&p).await;
    let past = humantime::format_rfc3339_seconds(std::time::UNIX_EPOCH).to_string();
    for body in [
        json!({"name": "", "scope": "read"}),
        json!({"name": "x", "scope": "admin"}),
        json!({"name": "x", "scope": "read", "expiresAt": "tomorrow"}),
        json!({"name": "x", "scope": "read", "expiresAt": past}),
        json!({"name": "x", "scope": "read", "extra": 1}),
        json!({"scope": "read"}),
    ] {
        let a = b
            .send(
                "POST",
                "/api/v1/tokens",
                &[("cookie", cookie.clone())],
                Some(body.clone()),
            )
            .await;
        assert_eq!(a.status, 400, "{body}: {}", a.text);
        assert_eq!(a.body["success"], false);
    }
    let list = b.get("/api/v1/tokens", &[("cookie", cookie.clone())]).await;
    assert_eq!(list.body["data"]["tokens"], json!([]));
    let other = b
        .send(
            "DELETE",
            "/api/v1/tokens/0123456789abcdef0123456789abcdef",
            &[("cookie", cookie)],
            None,
        )
        .await;
    assert_eq!(other.status, 404);
}

#[tokio::test]
async fn a_token_cannot_manage_tokens() {
    let p = Provider::start().await;
    let b = Ballast::start(&p, &[]).await;
    let cookie = b.alice(&p).await;
    let (value, id) = b.token(&cookie, "write").await;
    for (method, path) in [
        ("GET", "/api/v1/tokens".to_string()),
        ("POST", "/api/v1/tokens".to_string()),
        ("DELETE", format!("/api/v1/tokens/{id}")),
    ] {
        let a = b
            .send(
                method,
                &path,
                &[bearer(&value)],
                Some(json!({"name": "n", "scope": "read"})),
            )
            .await;
        assert_eq!(a.status, 403, "{method} {path}: {}", a.text);
        assert!(a.text.contains("login session"), "{}", a.text);
    }
}

#[tokio::test]
async fn tokens_are_refused_when_tokens_are_disabled() {
    let p = Provider::start().await;
    let b = Ballast::start(&p, &[("AUTH_PAT_ENABLED", "false")]).await;
    let cookie = b.alice(&p).await;
    let made = b
        .send(
            "POST",
            "/api/v1/tokens",
            &[("cookie", cookie)],
            Some(json!({"name": "n", "scope": "read"})),
        )
        .await;
    assert_eq!(made.status, 409, "{}", made.text);
    let a = b.get("/api/v1/cluster", &[bearer("pat_whatever")]).await;
    assert_eq!(a.status, 401);
    assert!(a.text.contains("disabled"));
}

// ------------------------------------------------------------------------------ walks

/// A concrete path for a route pattern.
fn concrete(pattern: &str) -> String {
    pattern
        .split('/')
        .map(|segment| match segment {
            "{partition}" | "{offset}" | "{brokerId}" => "1".to_string(),
            "{*rest}" => "anything".to_string(),
            s if s.starts_with('{') => "sample".to_string(),
            s => s.to_string(),
        })
        .collect::<Vec<_>>()
        .join("/")
}

/// Paths that answer without credentials (docs/auth.md).
fn documented_open(path: &str) -> bool {
    path.starts_with("/api/v1/auth/")
        || matches!(path, "/api/v1/health" | "/api/v1/ready" | "/ui/login")
        || path.starts_with("/ui/assets/")
}

#[tokio::test]
async fn every_route_without_credentials_answers_401_unless_it_is_in_the_open_set() {
    let p = Provider::start().await;
    let b = Ballast::start(&p, &[]).await;
    let routes = routes_in_code::served();
    assert!(routes.len() > 100, "only {} routes read", routes.len());
    let mut wrong = Vec::new();
    for (method, pattern) in &routes {
        let path = concrete(pattern);
        let a = b.send(method, &path, &[], Some(json!({}))).await;
        let page = pattern == "/ui" || pattern.starts_with("/ui/") || pattern.starts_with("/docs");
        let ok = if documented_open(pattern) {
            // the layer lets it through; `me`, `logout` and `refresh` themselves need a session
            !(a.status == 401 && a.headers.contains_key("www-authenticate"))
        } else if page {
            a.status == 303
                && a.headers["location"]
                    .to_str()
                    .is_ok_and(|l| l.starts_with("/ui/login?next="))
        } else {
            a.status == 401
                && a.body["success"] == false
                && a.headers.contains_key("www-authenticate")
        };
        if !ok {
            wrong.push(format!(
                "{method} {pattern}: {} {}",
                a.status,
                a.text.chars().take(160).collect::<String>()
            ));
        }
    }
    // and what no route serves: 401, not a 404 that tells what exists
    let unknown = b.get("/api/v1/no-such-thing", &[]).await;
    if unknown.status != 401 {
        wrong.push(format!("unknown path: {}", unknown.status));
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[tokio::test]
async fn a_read_token_is_refused_on_every_mutating_route() {
    let p = Provider::start().await;
    let b = Ballast::start(&p, &[]).await;
    let cookie = b.alice(&p).await;
    let (read, _) = b.token(&cookie, "read").await;
    let audit_before = b
        .store
        .list_audit(&AuditQuery::default())
        .expect("audit")
        .events
        .len();
    let mut wrong = Vec::new();
    let mut mutating = 0;
    for (method, pattern) in routes_in_code::served() {
        if !pattern.starts_with("/api/") && pattern != "/metrics" {
            continue; // the dashboard acts through these same API routes in-process
        }
        let needed = ballast_web::auth::required_scope(
            &axum::http::Method::from_bytes(method.as_bytes()).expect("method"),
            &pattern,
        );
        if needed != ballast_web::auth::Scope::Write {
            continue;
        }
        mutating += 1;
        let a = b
            .send(
                &method,
                &concrete(&pattern),
                &[bearer(&read)],
                Some(json!({})),
            )
            .await;
        if a.status != 403 {
            wrong.push(format!("{method} {pattern}: {} {}", a.status, a.text));
        }
    }
    assert!(mutating > 30, "only {mutating} mutating routes found");
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    let audit_after = b
        .store
        .list_audit(&AuditQuery::default())
        .expect("audit")
        .events
        .len();
    assert_eq!(
        audit_before, audit_after,
        "a refused request changed nothing"
    );
    // every POST, PUT, PATCH and DELETE that is not a write is listed on purpose
    for (method, pattern) in routes_in_code::served() {
        if ["POST", "PUT", "PATCH", "DELETE"].contains(&method.as_str())
            && pattern.starts_with("/api/")
        {
            let needed = ballast_web::auth::required_scope(
                &axum::http::Method::from_bytes(method.as_bytes()).expect("method"),
                &pattern,
            );
            if needed == ballast_web::auth::Scope::Read {
                assert!(
                    ballast_web::auth::READ_ONLY_POSTS.contains(&pattern.as_str())
                        || pattern.starts_with("/api/v1/auth/")
                        || ballast_web::auth::needs_session(&pattern)
                        || ballast_web::auth::PER_TOOL_SCOPE.contains(&pattern.as_str())
                        || ballast_web::agents::is_agent_channel(&pattern),
                    "{method} {pattern} reads without being listed"
                );
            }
        }
    }
}

#[tokio::test]
async fn a_read_token_may_call_reads_and_read_only_posts() {
    let p = Provider::start().await;
    let b = Ballast::start(&p, &[]).await;
    let cookie = b.alice(&p).await;
    let (read, _) = b.token(&cookie, "read").await;
    for path in [
        "/api/v1/license",
        "/api/v1/proposals",
        "/api/v1/audit-log",
        "/api/v1/openapi.json",
        "/metrics",
    ] {
        let a = b.get(path, &[bearer(&read)]).await;
        assert!(
            a.status != 401 && a.status != 403,
            "{path}: {} {}",
            a.status,
            a.text
        );
    }
    let search = b
        .send(
            "POST",
            "/api/v1/topics/search",
            &[bearer(&read)],
            Some(json!({"query": "x"})),
        )
        .await;
    assert!(
        search.status != 401 && search.status != 403,
        "{}",
        search.text
    );
}

#[tokio::test]
async fn metrics_need_credentials_unless_made_public() {
    let p = Provider::start().await;
    let closed = Ballast::start(&p, &[]).await;
    assert_eq!(closed.get("/metrics", &[]).await.status, 401);
    let open = Ballast::start(&p, &[("AUTH_METRICS_PUBLIC", "true")]).await;
    assert_eq!(open.get("/metrics", &[]).await.status, 200);
    assert_eq!(open.get("/api/v1/cluster", &[]).await.status, 401);
}

#[tokio::test]
async fn audit_events_record_the_identity_not_a_header() {
    let sim = ballast_simcluster::SimCluster::start(ballast_simcluster::SimConfig {
        scenario: ballast_simcluster::Scenario::Generate(ballast_simcluster::GenerateParams {
            brokers: 3,
            racks: 3,
            topics: 1,
            partitions_per_topic: 3,
            replication_factor: 2,
            ..ballast_simcluster::GenerateParams::default()
        }),
        ..ballast_simcluster::SimConfig::default()
    })
    .await
    .expect("simulated cluster");
    let bootstrap = sim.bootstrap();
    let p = Provider::start().await;
    let b = Ballast::start(
        &p,
        &[("BALLAST_KAFKA_BOOTSTRAP_SERVERS", bootstrap.as_str())],
    )
    .await;
    let cookie = b.alice(&p).await;
    let (write, _) = b.token(&cookie, "write").await;
    // a licensed mutation, sent with a header that tries to name someone else
    let a = b
        .send(
            "POST",
            "/api/v1/cluster/refresh-metadata",
            &[bearer(&write), ("x-ballast-user", "mallory".into())],
            None,
        )
        .await;
    assert!(a.status != 401 && a.status != 403, "{}", a.text);
    let events = b.audit("cluster.refresh_metadata");
    assert!(!events.is_empty(), "{}", a.text);
    assert_eq!(events[0].user_id.as_deref(), Some("alice"));
    assert_eq!(events[0].requested_by.as_deref(), Some("alice"));
}

#[tokio::test]
async fn the_login_page_lists_every_provider_and_pages_redirect_to_it() {
    let p = Provider::start().await;
    let b = Ballast::start(&p, &[]).await;
    let ui = b.get("/ui/topics?x=1", &[]).await;
    assert_eq!(ui.status, 303);
    assert_eq!(
        ui.headers["location"],
        "/ui/login?next=%2Fui%2Ftopics%3Fx%3D1"
    );
    let login = b.get("/ui/login?next=%2Fui%2Ftopics", &[]).await;
    assert_eq!(login.status, 200);
    assert!(
        login
            .text
            .contains(r#"href="/api/v1/auth/login/corp?next=%2Fui%2Ftopics""#),
        "{}",
        login.text
    );
    assert!(login.text.contains("Corp SSO"));
    let providers = b.get("/api/v1/auth/providers", &[]).await;
    assert_eq!(providers.body["data"]["providers"][0]["name"], "corp");
    assert_eq!(providers.body["data"]["enabled"], true);
    // logged in: the page shows the user menu with the name
    let cookie = b.alice(&p).await;
    let page = b.get("/ui/tokens", &[("cookie", cookie)]).await;
    assert_eq!(page.status, 200, "{}", page.text);
    assert!(page
        .text
        .contains(r#"<span class="user-name">alice</span>"#));
}

#[tokio::test]
async fn the_access_tokens_page_shows_a_new_value_once_and_revokes() {
    let p = Provider::start().await;
    let b = Ballast::start(&p, &[]).await;
    let cookie = b.alice(&p).await;
    let made = b
        .http
        .post(format!("{}/ui/tokens", b.base))
        .header("cookie", &cookie)
        .header("origin", &b.base)
        .form(&[("name", "ci"), ("scope", "read"), ("expires", "30")])
        .send()
        .await
        .expect("post");
    assert_eq!(made.status(), 200);
    let html = made.text().await.expect("html");
    let value = html
        .split(r#"id="token-value">"#)
        .nth(1)
        .and_then(|r| r.split('<').next())
        .expect("value shown")
        .trim()
        .to_string();
    assert!(value.starts_with("pat_"));
    assert!(html.contains(r#"data-copy="token-value""#));
    let again = b.get("/ui/tokens", &[("cookie", cookie.clone())]).await;
    assert!(!again.text.contains(&value), "shown once");
    assert_ne!(
        b.get("/api/v1/cluster", &[bearer(&value)]).await.status,
        401
    );
    let id = b
        .get("/api/v1/tokens", &[("cookie", cookie.clone())])
        .await
        .body["data"]["tokens"][0]["id"]
        .as_str()
        .expect("id")
        .to_string();
    let revoke = b
        .http
        .post(format!("{}/ui/tokens/{id}/revoke", b.base))
        .header("cookie", &cookie)
        .header("origin", &b.base)
        .send()
        .await
        .expect("post");
    assert_eq!(revoke.status(), 303);
    assert_eq!(
        b.get("/api/v1/cluster", &[bearer(&value)]).await.status,
        401
    );
}

#[tokio::test]
async fn a_token_request_is_neither_failed_nor_slowed_by_a_writer_holding_the_database() {
    let p = Provider::start().await;
    let b = Ballast::start(&p, &[]).await;
    let cookie = b.alice(&p).await;
    let (value, _) = b.token(&cookie, "read").await;
    // Later than the last-used resolution: the request would note the token's use.
    b.clock.0.fetch_add(120_000, Ordering::SeqCst);
    let path = b.db.clone();
    let (locked_tx, locked_rx) = std::sync::mpsc::channel();
    let holder = std::thread::spawn(move || {
        let mut conn = rusqlite::Connection::open(&path).expect("open");
        let tx = conn
            .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)
            .expect("write lock");
        locked_tx.send(()).expect("signal");
        std::thread::sleep(std::time::Duration::from_secs(3));
        tx.commit().expect("release");
    });
    locked_rx.recv().expect("locked");
    let started = std::time::Instant::now();
    let me = b.get("/api/v1/auth/me", &[bearer(&value)]).await;
    assert_eq!(me.status, 200, "{}", me.text);
    assert!(
        started.elapsed() < std::time::Duration::from_secs(1),
        "{:?}",
        started.elapsed()
    );
    tokio::task::spawn_blocking(move || holder.join())
        .await
        .expect("join")
        .expect("holder");
}
