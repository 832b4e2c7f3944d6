//! Authentication and scopes (docs/auth.md).
//!
//! Off unless configured ([`ballast_config::AuthConfig::enabled`]): then every request runs as an
//! open identity with the write scope, named by `X-Ballast-User` as before. On, two layers:
//!
//! - [`authenticate`] (outermost, over HTTP only): turns credentials into an [`Identity`] — a
//!   personal access token (`Authorization: Bearer pat_...`, looked up by its HMAC on every
//!   request, so a revoked or expired token stops at once in every process) or the session cookie
//!   of an OIDC login (looked up by its SHA-256). Nothing else is accepted. Without credentials a
//!   request gets 401 in the error envelope, and a page (`/ui`, `/docs`) a redirect to the login
//!   page; only [`is_open`] paths pass without. Cookie-authenticated mutations must come from this
//!   origin ([`crate::url::same_origin`]).
//! - [`authorize`] (also in the dashboard's in-process API): the scope the route needs
//!   ([`required_scope`]) against the identity's; token management needs a login session.
//!
//! Handlers learn who acts through the audit log's actor (`crate::audit`), which reads the [`Identity`].

pub mod claims;
pub mod oidc;
pub(crate) mod routes;

use std::sync::Arc;

use axum::extract::{Request, State};
use axum::http::{header, HeaderMap, HeaderValue, Method, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Redirect, Response};
use ballast_schema::{ApiToken, Session};
use ring::{digest, hmac, rand::SecureRandom};
use serde::Serialize;

use crate::{ApiError, AppState};

/// The session cookie.
pub const SESSION_COOKIE: &str = "ballast_session";
/// The cookie that ties a login under way to the browser that started it.
pub const LOGIN_COOKIE: &str = "ballast_login";
/// The prefix of every personal access token value.
pub const PAT_PREFIX: &str = "pat_";
/// The user of an open (authentication off) request that names none.
pub const ANONYMOUS: &str = "anonymous";

pub use ballast_ops::actor::Scope;

/// How a request proved who it is.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase", tag = "kind")]
pub enum Via {
    /// Authentication is off: the user is whatever `X-Ballast-User` says.
    Open,
    /// An OIDC login session.
    Session {
        session_id: String,
        expires_at_ms: i64,
    },
    /// A personal access token.
    Token { token_id: String },
    /// The service itself (self-healing, timeouts): user `pilot`.
    Internal,
}

/// Who is acting, with what scope. Put in the request's extensions by [`authenticate`] (or by the
/// dashboard for its in-process calls).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Identity {
    /// The name audit events record (`userId`).
    pub user_id: String,
    /// `provider:subject` of a logged-in person; tokens belong to it. `None` when open.
    pub owner: Option<String>,
    pub name: Option<String>,
    pub email: Option<String>,
    pub provider: Option<String>,
    pub groups: Vec<String>,
    pub roles: Vec<String>,
    pub scope: Scope,
    pub via: Via,
}

impl Identity {
    /// An open request's identity (authentication off).
    pub fn open(user: String) -> Identity {
        Identity {
            user_id: user,
            owner: None,
            name: None,
            email: None,
            provider: None,
            groups: Vec::new(),
            roles: Vec::new(),
            scope: Scope::Write,
            via: Via::Open,
        }
    }

    fn from_session(s: Session) -> Identity {
        Identity {
            owner: Some(owner_key(&s.provider, &s.subject)),
            user_id: s.user_id,
            name: s.name,
            email: s.email,
            provider: Some(s.provider),
            groups: s.groups,
            roles: s.roles,
            scope: Scope::parse(&s.scope).unwrap_or(Scope::Read),
            via: Via::Session {
                session_id: s.id,
                expires_at_ms: s.expires_at_ms,
            },
        }
    }

    fn from_token(t: ApiToken) -> Identity {
        Identity {
            owner: Some(t.owner),
            user_id: t.user_id,
            name: None,
            email: None,
            provider: None,
            groups: Vec::new(),
            roles: Vec::new(),
            scope: Scope::parse(&t.scope).unwrap_or(Scope::Read),
            via: Via::Token { token_id: t.id },
        }
    }

    /// The session id when this identity is a login session.
    pub fn session_id(&self) -> Option<&str> {
        match &self.via {
            Via::Session { session_id, .. } => Some(session_id),
            _ => None,
        }
    }

    /// `open`, `session`, `token` or `internal`.
    pub fn via_name(&self) -> &'static str {
        match self.via {
            Via::Open => "open",
            Via::Session { .. } => "session",
            Via::Token { .. } => "token",
            Via::Internal => "internal",
        }
    }
}

/// The owner of a person's tokens: provider and subject, stable across renamed accounts.
pub fn owner_key(provider: &str, subject: &str) -> String {
    format!("{provider}:{subject}")
}

/// The header naming the acting user when authentication is off (ignored when it is on).
pub const USER_HEADER: &str = "x-ballast-user";
/// The longest user name accepted from [`USER_HEADER`].
const MAX_USER_LEN: usize = 200;

pub(crate) fn parse_user(raw: Option<&str>) -> Result<String, ApiError> {
    let invalid =
        |why: &str| ApiError::bad_request("invalid header", format!("{USER_HEADER}: {why}"));
    let user = raw
        .ok_or_else(|| invalid("must be visible ASCII text"))?
        .trim();
    if user.is_empty() {
        return Err(invalid(
            "must not be empty (leave the header out for anonymous)",
        ));
    }
    if user.len() > MAX_USER_LEN {
        return Err(invalid(&format!("longer than {MAX_USER_LEN} characters")));
    }
    if user.chars().any(char::is_control) {
        return Err(invalid("must not contain control characters"));
    }
    Ok(user.to_string())
}

/// Paths of the agent channel: authenticated by the agent token, never by a user credential.
/// Exactly the three routes (a route added under the prefix later is not opened by accident).
pub fn is_agent_channel(path: &str) -> bool {
    match path.strip_prefix("/api/v1/agent/") {
        Some("heartbeat") | Some("binary") => true,
        Some(rest) => rest
            .strip_prefix("commands/")
            .and_then(|r| r.strip_suffix("/result"))
            .is_some_and(|id| !id.is_empty() && !id.contains('/')),
        None => false,
    }
}

// ------------------------------------------------------------------------------ secrets

/// The web process's authentication state: the OIDC providers and the token key.
pub struct AuthRuntime {
    pub oidc: oidc::Providers,
    pat_key: Option<hmac::Key>,
}

impl AuthRuntime {
    pub fn new(config: &ballast_config::AuthConfig) -> AuthRuntime {
        let pat_key = match (&config.pat_enabled, &config.pat_hash_secret) {
            (true, Some(secret)) => Some(hmac::Key::new(
                hmac::HMAC_SHA256,
                secret.expose().as_bytes(),
            )),
            _ => None,
        };
        AuthRuntime {
            oidc: oidc::Providers::new(config),
            pat_key,
        }
    }

    /// HMAC-SHA-256 (hex) of a token value; `None` when tokens are disabled.
    pub fn token_hmac(&self, value: &str) -> Option<String> {
        let key = self.pat_key.as_ref()?;
        Some(hex(hmac::sign(key, value.as_bytes()).as_ref()))
    }
}

/// SHA-256 as 64 hex digits.
pub fn sha256_hex(value: impl AsRef<[u8]>) -> String {
    hex(digest::digest(&digest::SHA256, value.as_ref()).as_ref())
}

pub(crate) fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// `n` random bytes from the system's generator, base64url without padding.
pub fn random_url_safe(n: usize) -> Result<String, ApiError> {
    use base64::Engine;
    let mut buf = vec![0u8; n];
    ring::rand::SystemRandom::new()
        .fill(&mut buf)
        .map_err(|_| ApiError::internal("no randomness", "the system random generator failed"))?;
    Ok(base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(buf))
}

/// A new token value: `pat_` and 32 random bytes (256 bits), base64url.
pub fn new_token_value() -> Result<String, ApiError> {
    Ok(format!("{PAT_PREFIX}{}", random_url_safe(32)?))
}

// ------------------------------------------------------------------------------ rules

/// Paths that answer without credentials when authentication is on: the login flow itself, the
/// liveness and readiness probes (load balancers and systemd checks carry no credentials), the
/// login page and its assets, and `/metrics` when `AUTH_METRICS_PUBLIC=true`.
pub fn is_open(path: &str, metrics_public: bool) -> bool {
    path.starts_with("/api/v1/auth/")
        || matches!(
            path,
            "/api/v1/health" | "/api/v1/ready" | "/ui/login" | "/favicon.ico" | "/favicon.svg"
        )
        || path.starts_with("/ui/assets/")
        || (metrics_public && path == "/metrics")
}

/// POST routes that only read: they compute an answer from what they are sent and change
/// nothing (search, quota resolution, simulations, the revert review, the current candidate).
pub const READ_ONLY_POSTS: [&str; 6] = [
    "/api/v1/topics/search",
    "/api/v1/quotas/resolve",
    "/api/v1/what-if/simulate",
    "/api/v1/blast-radius/analyze",
    "/api/v1/audit-log/revert/preview",
    "/api/v1/proposals/generate",
];

/// Where scopes are enforced per tool, not per HTTP method (MCP).
pub const PER_TOOL_SCOPE: [&str; 1] = ["/api/v1/mcp"];

/// The scope a request needs: `read` for GET, HEAD and OPTIONS, for [`READ_ONLY_POSTS`], for
/// the auth flow and for one's own tokens (they need a login session instead, and a token's
/// scope is capped at its maker's); `write` for every other method, so a route added later is a mutation unless
/// it is listed here on purpose.
///
/// Dashboard pages (`/ui`) need only `read` here: their forms act through the API in-process,
/// where this same rule applies to the API route they call.
pub fn required_scope(method: &Method, path: &str) -> Scope {
    let reads = matches!(*method, Method::GET | Method::HEAD | Method::OPTIONS)
        || path == "/ui"
        || path.starts_with("/ui/")
        || path.starts_with("/api/v1/auth/")
        || needs_session(path)
        || PER_TOOL_SCOPE.contains(&path)
        || is_agent_channel(path)
        || (*method == Method::POST && READ_ONLY_POSTS.contains(&path));
    if reads {
        Scope::Read
    } else {
        Scope::Write
    }
}

/// Token management (`/api/v1/tokens`, and the dashboard's token page) needs a login session.
pub fn needs_session(path: &str) -> bool {
    path == "/api/v1/tokens" || path.starts_with("/api/v1/tokens/")
}

/// A page people open in a browser: without a session it redirects to the login page instead of
/// answering 401.
fn is_page(path: &str) -> bool {
    path == "/ui" || path.starts_with("/ui/") || path.starts_with("/docs")
}

/// The value of cookie `name` in the request's `Cookie` headers.
pub fn cookie(headers: &HeaderMap, name: &str) -> Option<String> {
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|pair| pair.trim().split_once('='))
        .find(|(k, _)| *k == name)
        .map(|(_, v)| v.trim().to_string())
        .filter(|v| !v.is_empty())
}

/// The `Set-Cookie` value of a new session cookie.
pub fn session_cookie(value: &str, max_age_s: u64, secure: bool) -> String {
    let secure = if secure { "; Secure" } else { "" };
    format!("{SESSION_COOKIE}={value}; Path=/; HttpOnly; SameSite=Lax; Max-Age={max_age_s}{secure}")
}

/// The `Set-Cookie` value of the login cookie: sent back only to the callback.
pub fn login_cookie(value: &str, max_age_s: u64, secure: bool) -> String {
    let secure = if secure { "; Secure" } else { "" };
    format!(
        "{LOGIN_COOKIE}={value}; Path=/api/v1/auth/callback; HttpOnly; SameSite=Lax; Max-Age={max_age_s}{secure}"
    )
}

/// The `Set-Cookie` value that removes the session cookie.
pub fn clear_session_cookie(secure: bool) -> String {
    session_cookie("", 0, secure)
}

// ------------------------------------------------------------------------------ layers

/// A refusal of [`authenticate`]: 401 in the envelope (with `WWW-Authenticate`).
fn unauthorized(details: impl Into<String>) -> Response {
    let mut response =
        ApiError::new(StatusCode::UNAUTHORIZED, "authentication required", details).into_response();
    response.headers_mut().insert(
        header::WWW_AUTHENTICATE,
        HeaderValue::from_static("Bearer realm=\"ballast\""),
    );
    response
}

/// The credentials a request carries, checked: `Ok(None)` when it carries none.
pub async fn identify(state: &AppState, headers: &HeaderMap) -> Result<Option<Identity>, String> {
    let now = state.clock.now_ms();
    if let Some(auth) = headers.get(header::AUTHORIZATION) {
        let auth = auth
            .to_str()
            .map_err(|_| "unreadable Authorization header")?;
        let (kind, value) = auth.trim().split_once(' ').unwrap_or((auth, ""));
        if !kind.eq_ignore_ascii_case("bearer") {
            return Err("the Authorization header must be `Bearer pat_...`".into());
        }
        let value = value.trim();
        if !value.starts_with(PAT_PREFIX) {
            return Err(
                "only personal access tokens (pat_...) are accepted as bearer tokens".into(),
            );
        }
        let Some(hmac) = state.auth.token_hmac(value) else {
            return Err("personal access tokens are disabled (AUTH_PAT_ENABLED=false)".into());
        };
        let found = state
            .db(move |s| s.token_by_hmac(&hmac))
            .await
            .map_err(|e| format!("{}: {}", e.error, e.details))?;
        let Some(token) = found else {
            return Err("unknown personal access token".into());
        };
        if token.revoked_at_ms.is_some() {
            return Err("this personal access token was revoked".into());
        }
        if token.expires_at_ms.is_some_and(|at| now >= at) {
            return Err("this personal access token has expired".into());
        }
        let id = token.id.clone();
        // Best effort, in the background: a writer holding the database must neither fail nor
        // slow a request that only reads.
        let store = state.clone();
        tokio::spawn(async move {
            let _ = store.db(move |s| s.mark_token_used(&id, now)).await;
        });
        return Ok(Some(Identity::from_token(token)));
    }
    if let Some(value) = cookie(headers, SESSION_COOKIE) {
        let hash = sha256_hex(&value);
        let found = state
            .db(move |s| s.session_by_cookie(&hash, now))
            .await
            .map_err(|e| format!("{}: {}", e.error, e.details))?;
        return match found {
            Some(session) => Ok(Some(Identity::from_session(session))),
            None => Err("the session has ended or expired; log in again".into()),
        };
    }
    Ok(None)
}

/// The request's identity when authentication is off: `X-Ballast-User` or `anonymous`.
fn open_identity(headers: &HeaderMap) -> Result<Identity, ApiError> {
    let user = match headers.get(USER_HEADER) {
        None => ANONYMOUS.to_string(),
        Some(raw) => parse_user(raw.to_str().ok())?,
    };
    Ok(Identity::open(user))
}

/// The outer layer: credentials to [`Identity`] (see the module documentation).
pub async fn authenticate(State(state): State<AppState>, mut req: Request, next: Next) -> Response {
    // The agent channel is authenticated by the agent token in its handlers, never by a user
    // credential (docs/rolling-restarts.md).
    if is_agent_channel(req.uri().path()) {
        return next.run(req).await;
    }
    let auth = &state.config.auth;
    if !auth.enabled() {
        match open_identity(req.headers()) {
            Ok(identity) => {
                req.extensions_mut().insert(identity);
                return next.run(req).await;
            }
            Err(e) => return e.into_response(),
        }
    }
    let path = req.uri().path().to_string();
    let open = is_open(&path, auth.metrics_public);
    match identify(&state, req.headers()).await {
        Ok(Some(identity)) => {
            let cookie_based = matches!(identity.via, Via::Session { .. });
            let unsafe_method =
                !matches!(*req.method(), Method::GET | Method::HEAD | Method::OPTIONS);
            // Dashboard forms check their origin themselves and answer with a page.
            if cookie_based
                && unsafe_method
                && !is_page(&path)
                && !crate::url::same_origin(state.config.auth.public_url.as_deref(), req.headers())
            {
                return ApiError::new(
                    StatusCode::FORBIDDEN,
                    "cross-site request refused",
                    "a change made with the session cookie must come from a page of this origin",
                )
                .into_response();
            }
            req.extensions_mut().insert(identity);
            next.run(req).await
        }
        // AUTH_ANONYMOUS: no credentials, served as with authentication off.
        Ok(None) if auth.anonymous => match open_identity(req.headers()) {
            Ok(identity) => {
                req.extensions_mut().insert(identity);
                next.run(req).await
            }
            Err(e) => e.into_response(),
        },
        Ok(None) if open => next.run(req).await,
        Ok(None) if is_page(&path) => {
            let target = match req.uri().query() {
                Some(q) => format!("{path}?{q}"),
                None => path,
            };
            Redirect::to(&format!("/ui/login?next={}", encode_component(&target))).into_response()
        }
        Ok(None) => unauthorized(
            "send a session cookie (log in at /ui/login) or Authorization: Bearer pat_...",
        ),
        // A broken or stale credential on an open path (a probe, the login page) is ignored.
        Err(_) if open => next.run(req).await,
        Err(why) if is_page(&path) => {
            let _ = why;
            let target = encode_component(&path);
            let mut response = Redirect::to(&format!("/ui/login?next={target}")).into_response();
            if let Ok(v) = HeaderValue::from_str(&clear_session_cookie(auth.secure_cookies())) {
                response.headers_mut().insert(header::SET_COOKIE, v);
            }
            response
        }
        Err(why) => unauthorized(why),
    }
}

/// The inner layer: the scope the route needs, and a login session for token management.
pub async fn authorize(State(state): State<AppState>, mut req: Request, next: Next) -> Response {
    let enabled = state.config.auth.enabled();
    let path = req.uri().path().to_string();
    if is_agent_channel(&path) {
        return next.run(req).await;
    }
    let identity = match req.extensions().get::<Identity>() {
        Some(identity) => identity.clone(),
        None if !enabled => match open_identity(req.headers()) {
            Ok(identity) => {
                req.extensions_mut().insert(identity.clone());
                identity
            }
            Err(e) => return e.into_response(),
        },
        None if is_open(&path, state.config.auth.metrics_public) => return next.run(req).await,
        None => return unauthorized("no identity"),
    };
    if enabled && needs_session(&path) && identity.session_id().is_none() {
        return ApiError::new(
            StatusCode::FORBIDDEN,
            "a login session is needed",
            "personal access tokens are managed from a login session (the dashboard's Access \
             Tokens page); a token cannot manage tokens",
        )
        .into_response();
    }
    let needed = required_scope(req.method(), &path);
    if identity.scope < needed {
        return ApiError::new(
            StatusCode::FORBIDDEN,
            "insufficient scope",
            format!(
                "{} {path} needs the {} scope; {} has {}",
                req.method(),
                needed.as_str(),
                identity.user_id,
                identity.scope.as_str()
            ),
        )
        .into_response();
    }
    next.run(req).await
}

/// Percent-encodes everything but unreserved characters (a query parameter value).
pub fn encode_component(s: &str) -> String {
    crate::url::enc(s)
}

/// A local path to return to after a login: must start with one `/` (no scheme, no
/// `//host`, no backslash), else `/ui`.
pub fn safe_next(next: Option<&str>) -> String {
    match next {
        Some(n)
            if n.starts_with('/')
                && !n.starts_with("//")
                && !n.contains('\\')
                && !n.chars().any(char::is_control) =>
        {
            n.to_string()
        }
        _ => "/ui".to_string(),
    }
}

/// The shared pieces handed to [`AppState`].
pub fn runtime(config: &ballast_config::Config) -> Arc<AuthRuntime> {
    Arc::new(AuthRuntime::new(&config.auth))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_agent_paths_are_the_agent_channel() {
        assert!(is_agent_channel("/api/v1/agent/heartbeat"));
        assert!(is_agent_channel("/api/v1/agent/binary"));
        assert!(is_agent_channel("/api/v1/agent/commands/7/result"));
        assert!(!is_agent_channel("/api/v1/agent/commands/7/other"));
        assert!(!is_agent_channel("/api/v1/agent/commands/7/x/result"));
        assert!(!is_agent_channel("/api/v1/agent/anything-else"));
        assert!(!is_agent_channel("/api/v1/agent/../tokens"));
        assert!(!is_agent_channel("/api/v1/agents"));
        assert!(!is_agent_channel("/api/v1/agents/1/upgrade"));
    }

    #[test]
    fn reads_need_read_and_every_other_method_needs_write() {
        assert_eq!(required_scope(&Method::GET, "/api/v1/cluster"), Scope::Read);
        assert_eq!(required_scope(&Method::POST, "/api/v1/acls"), Scope::Write);
        assert_eq!(
            required_scope(&Method::DELETE, "/api/v1/acls"),
            Scope::Write
        );
        assert_eq!(
            required_scope(&Method::DELETE, "/api/v1/tokens/x"),
            Scope::Read,
            "one's own tokens need a session instead"
        );
        assert_eq!(
            required_scope(&Method::PATCH, "/api/v1/anything-new"),
            Scope::Write
        );
        assert_eq!(
            required_scope(&Method::POST, "/api/v1/what-if/simulate"),
            Scope::Read
        );
        assert_eq!(
            required_scope(&Method::POST, "/api/v1/auth/logout"),
            Scope::Read
        );
    }

    #[test]
    fn only_the_login_flow_probes_and_login_assets_are_open() {
        for open in [
            "/api/v1/auth/providers",
            "/api/v1/auth/callback/corp",
            "/api/v1/health",
            "/api/v1/ready",
            "/ui/login",
            "/ui/assets/app.css",
        ] {
            assert!(is_open(open, false), "{open}");
        }
        for closed in [
            "/api/v1/cluster",
            "/metrics",
            "/ui",
            "/api/v1/tokens",
            "/docs/",
        ] {
            assert!(!is_open(closed, false), "{closed}");
        }
        assert!(is_open("/metrics", true));
    }

    #[test]
    fn the_return_path_after_login_stays_on_this_site() {
        assert_eq!(safe_next(Some("/ui/topics?x=1")), "/ui/topics?x=1");
        for bad in [
            "//evil.example",
            "https://evil.example",
            "/\\evil",
            "ui",
            "",
        ] {
            assert_eq!(safe_next(Some(bad)), "/ui", "{bad}");
        }
        assert_eq!(safe_next(None), "/ui");
    }

    #[test]
    fn cookies_are_read_by_name_and_the_session_cookie_is_httponly_and_lax() {
        let mut h = HeaderMap::new();
        h.insert(
            header::COOKIE,
            HeaderValue::from_static("a=1; ballast_session=xyz; b=2"),
        );
        assert_eq!(cookie(&h, SESSION_COOKIE).as_deref(), Some("xyz"));
        assert_eq!(cookie(&h, "c"), None);
        let c = session_cookie("v", 60, true);
        assert!(c.contains("HttpOnly") && c.contains("SameSite=Lax") && c.contains("Secure"));
        assert!(!session_cookie("v", 60, false).contains("Secure"));
    }

    #[test]
    fn a_token_value_has_the_prefix_and_256_random_bits() {
        let a = new_token_value().expect("random");
        let b = new_token_value().expect("random");
        assert!(a.starts_with(PAT_PREFIX));
        assert_eq!(a.len(), PAT_PREFIX.len() + 43, "32 bytes in base64url");
        assert_ne!(a, b);
    }
}
