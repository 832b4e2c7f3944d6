//! `/api/v1/auth/*` (providers, login, callback, me, logout, refresh) and `/api/v1/tokens`
//! (personal access tokens), and the dashboard's login page `/ui/login` and logout `/ui/logout`
//! (the web process's, merged beside the dashboard's pages). Design: docs/auth.md.

use askama::Template;
use axum::extract::{Query as AxumQuery, State};
use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::response::{Html, IntoResponse, Redirect, Response};
use axum::routing::{delete, get, post};
use axum::{Extension, Router};
use ballast_runtime::format_rfc3339_ms;
use ballast_schema::{Login, NewSession, StoreError};
use serde::Deserialize;
use serde_json::{json, Value};
use tracing::{info, warn};

use super::claims;
use super::oidc::OidcError;
use super::{
    clear_session_cookie, encode_component, login_cookie, new_token_value, random_url_safe,
    safe_next, session_cookie, sha256_hex, Identity, Scope, Via,
};
use crate::extract::{Json, Path};
use crate::{ApiError, ApiOk, ApiResult, AppState};

/// The operations of this module.
#[derive(utoipa::OpenApi)]
#[openapi(paths(
    providers,
    login,
    callback,
    me,
    logout,
    refresh,
    list_tokens,
    create_token,
    revoke_token
))]
pub(crate) struct Api;

pub(crate) fn routes() -> Router<AppState> {
    Router::new()
        .route("/api/v1/auth/providers", get(providers))
        .route("/api/v1/auth/login/{provider}", get(login))
        .route("/api/v1/auth/callback/{provider}", get(callback))
        .route("/api/v1/auth/me", get(me))
        .route("/api/v1/auth/logout", post(logout))
        .route("/api/v1/auth/refresh", post(refresh))
        .route("/api/v1/tokens", get(list_tokens).post(create_token))
        .route("/api/v1/tokens/{tokenId}", delete(revoke_token))
}

/// The dashboard's login page (open) and its logout button.
pub(crate) fn ui_routes() -> Router<AppState> {
    Router::new()
        .route("/ui/login", get(login_page))
        .route("/ui/logout", post(ui_logout))
}

/// `POST /ui/logout`: ends the session and goes to the login page.
async fn ui_logout(
    State(state): State<AppState>,
    headers: HeaderMap,
    identity: Option<Extension<Identity>>,
) -> Response {
    let ended = end_session(&state, &headers, identity.map(|Extension(i)| i)).await;
    let mut r = match ended {
        Ok(_) => Redirect::to("/ui/login").into_response(),
        Err(e) => e.into_response(),
    };
    *r.status_mut() = if r.status().is_redirection() {
        StatusCode::SEE_OTHER
    } else {
        r.status()
    };
    if let Ok(v) = HeaderValue::from_str(&clear_session_cookie(state.config.auth.secure_cookies()))
    {
        r.headers_mut().insert(header::SET_COOKIE, v);
    }
    r
}

// ------------------------------------------------------------------------------ pages

#[derive(Template)]
#[template(path = "login.html")]
struct LoginPage {
    title: String,
    kind: &'static str,
    message: String,
    providers: Vec<ProviderLink>,
    show_providers: bool,
    again: String,
}

struct ProviderLink {
    href: String,
    display_name: String,
}

fn page(status: StatusCode, p: LoginPage) -> Response {
    match p.render() {
        Ok(html) => {
            let mut r = (status, Html(html)).into_response();
            r.headers_mut()
                .insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
            r
        }
        Err(e) => ApiError::internal("template failed", e.to_string()).into_response(),
    }
}

/// A login outcome shown to the person in the browser (the callback is a navigation, not an API
/// call): what happened, and a way back.
fn message_page(status: StatusCode, title: &str, message: String) -> Response {
    page(
        status,
        LoginPage {
            title: title.to_string(),
            kind: "error",
            message,
            providers: Vec::new(),
            show_providers: false,
            again: "/ui/login".into(),
        },
    )
}

#[derive(Debug, Deserialize)]
struct NextQuery {
    next: Option<String>,
}

async fn login_page(State(state): State<AppState>, AxumQuery(q): AxumQuery<NextQuery>) -> Response {
    let next = safe_next(q.next.as_deref());
    let auth = &state.config.auth;
    if !auth.enabled() {
        return Redirect::to(&next).into_response();
    }
    page(
        StatusCode::OK,
        LoginPage {
            title: "Log in".into(),
            kind: "info",
            message: String::new(),
            providers: auth
                .providers
                .iter()
                .map(|p| ProviderLink {
                    href: format!(
                        "/api/v1/auth/login/{}?next={}",
                        p.name,
                        encode_component(&next)
                    ),
                    display_name: p.display_name.clone(),
                })
                .collect(),
            show_providers: true,
            again: String::new(),
        },
    )
}

// ------------------------------------------------------------------------------ the flow

#[utoipa::path(
    get,
    path = "/api/v1/auth/providers",
    tag = "auth",
    operation_id = "listAuthProviders",
    summary = "Configured login providers",
    description = "Open. `enabled` says whether authentication is on; each provider has its `name`, `displayName` and `loginUrl`.",
    responses((status = 200, description = "Providers", body = ref("AuthProviders")))
)]
async fn providers(State(state): State<AppState>) -> ApiResult<Value> {
    let auth = &state.config.auth;
    Ok(ApiOk(json!({
        "enabled": auth.enabled(),
        "patEnabled": auth.pat_enabled,
        "providers": auth.providers.iter().map(|p| json!({
            "name": p.name,
            "displayName": p.display_name,
            "loginUrl": format!("/api/v1/auth/login/{}", p.name),
            "redirectUri": state.auth.oidc.redirect_uri(&p.name),
        })).collect::<Vec<_>>(),
    })))
}

#[utoipa::path(
    get,
    path = "/api/v1/auth/login/{provider}",
    tag = "auth",
    operation_id = "startLogin",
    summary = "Start a login at a provider",
    description = "Redirects (303) the browser to the provider's authorization endpoint (authorization code with PKCE S256, `state` and `nonce`). `next` is the local path to return to (default `/ui`). The login must come back within `AUTH_LOGIN_TIMEOUT`.",
    params(
        ("provider" = String, Path, description = "provider name from `AUTH_PROVIDERS`"),
        ("next" = Option<String>, Query, description = "local path to return to after the login"),
    ),
    responses(
        (status = 303, description = "To the provider"),
        (status = 404, description = "No such provider (the failure envelope, or an HTML page for a browser)", content(
            (ref("Error") = "application/json"),
            (String = "text/html"),
        )),
        (status = 502, description = "The provider's discovery failed"),
    )
)]
async fn login(
    State(state): State<AppState>,
    Path(provider): Path<String>,
    AxumQuery(q): AxumQuery<NextQuery>,
) -> Result<Response, ApiError> {
    if state.config.auth.provider(&provider).is_none() {
        return Err(ApiError::not_found(
            "no such provider",
            format!("{provider:?} is not in AUTH_PROVIDERS"),
        ));
    }
    let started = state.auth.oidc.start(&provider).await.map_err(|e| {
        warn!(provider, error = %e, "login could not start");
        ApiError::new(
            StatusCode::BAD_GATEWAY,
            "identity provider unavailable",
            e.to_string(),
        )
    })?;
    let now = state.clock.now_ms();
    let ttl = state.config.auth.login_timeout.as_millis() as i64;
    let browser = random_url_safe(32)?;
    let login = Login {
        state_hash: sha256_hex(&started.state),
        browser_hash: sha256_hex(&browser),
        provider: provider.clone(),
        nonce: started.nonce,
        pkce_verifier: started.pkce_verifier,
        next_path: safe_next(q.next.as_deref()),
        expires_at_ms: now.saturating_add(ttl),
    };
    state.db(move |s| s.create_login(&login, now)).await?;
    let mut r = Redirect::to(&started.url).into_response();
    *r.status_mut() = StatusCode::SEE_OTHER;
    r.headers_mut()
        .insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    let auth = &state.config.auth;
    let cookie = login_cookie(
        &browser,
        auth.login_timeout.as_secs(),
        auth.secure_cookies(),
    );
    if let Ok(v) = HeaderValue::from_str(&cookie) {
        r.headers_mut().insert(header::SET_COOKIE, v);
    }
    Ok(r)
}

#[derive(Debug, Deserialize)]
struct CallbackQuery {
    code: Option<String>,
    state: Option<String>,
    error: Option<String>,
    error_description: Option<String>,
}

#[utoipa::path(
    get,
    path = "/api/v1/auth/callback/{provider}",
    tag = "auth",
    operation_id = "loginCallback",
    summary = "Login callback (the provider redirects here)",
    description = "Checks `state` (once, within `AUTH_LOGIN_TIMEOUT`), exchanges `code` with the PKCE verifier, verifies the ID token (JWKS signature, `iss`, `aud`, `exp`, `nonce`), maps the claims, applies `ALLOWED_DOMAINS` and `ALLOWED_GROUPS`, then sets the session cookie (`ballast_session`: HttpOnly, SameSite=Lax, Secure behind https) and redirects (303) to the path the login started from. A refusal is an HTML page saying why (400 bad or replayed state, 401 refused token, 403 not allowed, 502 provider unreachable).",
    params(("provider" = String, Path, description = "provider name")),
    responses(
        (status = 303, description = "Logged in: back to the page"),
        (status = 400, description = "Unknown, replayed or expired login state (an HTML page)", content_type = "text/html", body = String),
        (status = 404, description = "No such provider (an HTML page)", content_type = "text/html", body = String),
        (status = 401, description = "The provider or its ID token refused the login (an HTML page)", content_type = "text/html", body = String),
        (status = 403, description = "Not allowed by ALLOWED_DOMAINS / ALLOWED_GROUPS (an HTML page)", content_type = "text/html", body = String),
        (status = 502, description = "The provider could not be reached (an HTML page)", content_type = "text/html", body = String),
    )
)]
async fn callback(
    State(state): State<AppState>,
    Path(provider): Path<String>,
    AxumQuery(q): AxumQuery<CallbackQuery>,
    headers: HeaderMap,
) -> Response {
    let refused = |status, message: String| message_page(status, "Login failed", message);
    let Some(p) = state.config.auth.provider(&provider).cloned() else {
        return refused(
            StatusCode::NOT_FOUND,
            format!("{provider:?} is not a configured provider."),
        );
    };
    if let Some(error) = q.error {
        let why = q.error_description.unwrap_or_default();
        return refused(
            StatusCode::UNAUTHORIZED,
            format!("{} refused the login: {error} {why}", p.display_name),
        );
    }
    let (Some(code), Some(login_state)) = (q.code, q.state) else {
        return refused(
            StatusCode::BAD_REQUEST,
            "The provider's answer has no code or state.".into(),
        );
    };
    let now = state.clock.now_ms();
    let hash = sha256_hex(&login_state);
    let login = match state.db(move |s| Ok(s.take_login(&hash, now))).await {
        Ok(Ok(login)) => login,
        Ok(Err(StoreError::Conflict(_))) => {
            return refused(StatusCode::BAD_REQUEST, "The login took too long. Please start again.".into())
        }
        Ok(Err(StoreError::NotFound(_))) => {
            return refused(
                StatusCode::BAD_REQUEST,
                "This login state is unknown or was already used (a replayed or stale link). Please start again.".into(),
            )
        }
        Ok(Err(e)) => return refused(StatusCode::INTERNAL_SERVER_ERROR, format!("database error: {e}")),
        Err(e) => return e.into_response(),
    };
    let browser = super::cookie(&headers, super::LOGIN_COOKIE).map(|v| sha256_hex(&v));
    if browser.as_deref() != Some(login.browser_hash.as_str()) {
        return refused(
            StatusCode::BAD_REQUEST,
            "This login was started in another browser (or its cookie was blocked). Please start again here.".into(),
        );
    }
    if login.provider != provider {
        return refused(
            StatusCode::BAD_REQUEST,
            "The login was started at another provider.".into(),
        );
    }
    let finished = match state
        .auth
        .oidc
        .finish(&provider, &code, &login.pkce_verifier, &login.nonce, now)
        .await
    {
        Ok(f) => f,
        Err(OidcError::Refused(why)) => {
            warn!(provider, error = why, "login refused");
            return refused(StatusCode::UNAUTHORIZED, why);
        }
        Err(OidcError::Unavailable(why)) => {
            warn!(provider, error = why, "provider unavailable");
            return refused(
                StatusCode::BAD_GATEWAY,
                format!("The identity provider could not be reached: {why}"),
            );
        }
    };
    let person = match claims::person(&finished.claims, &p) {
        Ok(person) => person,
        Err(why) => return refused(StatusCode::UNAUTHORIZED, why),
    };
    let auth = &state.config.auth;
    if let Err(claims::Refusal(why)) =
        claims::admit(&person, &auth.allowed_domains, &auth.allowed_groups)
    {
        info!(provider, user = person.user_id, "login not allowed");
        return message_page(
            StatusCode::FORBIDDEN,
            "Not allowed",
            format!("You are signed in at the provider, but ballast does not let you in: {why}."),
        );
    }
    let cookie_value = match random_url_safe(32) {
        Ok(v) => v,
        Err(e) => return e.into_response(),
    };
    let ttl = auth.session_ttl;
    let new = NewSession {
        cookie_hash: sha256_hex(&cookie_value),
        provider: provider.clone(),
        subject: person.subject.clone(),
        user_id: person.user_id.clone(),
        name: person.name.clone(),
        email: person.email.clone(),
        groups: person.groups.clone(),
        roles: person.roles.clone(),
        scope: claims::scope(&person, &auth.write_groups)
            .as_str()
            .to_string(),
        refresh_token: finished.refresh_token,
        access_expires_at_ms: finished.access_expires_at_ms,
        expires_at_ms: now.saturating_add(ttl.as_millis() as i64),
    };
    let session = match state.db(move |s| s.create_session(&new, now)).await {
        Ok(s) => s,
        Err(e) => return e.into_response(),
    };
    let mut event = crate::audit::identity_event(
        &state_identity(&session),
        "GET",
        now,
        "auth.login",
        format!("session/{}", session.id),
    );
    event.summary = json!({"provider": provider, "scope": session.scope});
    crate::audit::record(&state, event).await;
    info!(provider, user = session.user_id, "logged in");
    let mut r = Redirect::to(&login.next_path).into_response();
    *r.status_mut() = StatusCode::SEE_OTHER;
    if let Ok(v) = HeaderValue::from_str(&session_cookie(
        &cookie_value,
        ttl.as_secs(),
        auth.secure_cookies(),
    )) {
        r.headers_mut().insert(header::SET_COOKIE, v);
    }
    if let Ok(v) = HeaderValue::from_str(&login_cookie("", 0, auth.secure_cookies())) {
        r.headers_mut().append(header::SET_COOKIE, v);
    }
    r
}

fn state_identity(s: &ballast_schema::Session) -> Identity {
    Identity {
        user_id: s.user_id.clone(),
        owner: Some(super::owner_key(&s.provider, &s.subject)),
        name: s.name.clone(),
        email: s.email.clone(),
        provider: Some(s.provider.clone()),
        groups: s.groups.clone(),
        roles: s.roles.clone(),
        scope: Scope::parse(&s.scope).unwrap_or(Scope::Read),
        via: Via::Session {
            session_id: s.id.clone(),
            expires_at_ms: s.expires_at_ms,
        },
    }
}

fn identity_json(i: &Identity, auth_enabled: bool) -> Value {
    json!({
        "authEnabled": auth_enabled,
        "userId": i.user_id,
        "name": i.name,
        "email": i.email,
        "provider": i.provider,
        "groups": i.groups,
        "roles": i.roles,
        "scope": i.scope,
        "via": i.via_name(),
        "sessionId": i.session_id(),
        "tokenId": match &i.via { Via::Token { token_id } => Some(token_id.clone()), _ => None },
        "expiresAt": match &i.via { Via::Session { expires_at_ms, .. } => Some(format_rfc3339_ms(*expires_at_ms)), _ => None },
    })
}

/// The identity of a request on an open path, which [`super::authenticate`] does not require.
async fn caller(
    state: &AppState,
    headers: &HeaderMap,
    ext: Option<Identity>,
) -> Result<Identity, ApiError> {
    if let Some(i) = ext {
        return Ok(i);
    }
    match super::identify(state, headers).await {
        Ok(Some(i)) => Ok(i),
        Ok(None) => Err(ApiError::new(
            StatusCode::UNAUTHORIZED,
            "not logged in",
            "send a session cookie or Authorization: Bearer pat_...",
        )),
        Err(why) => Err(ApiError::new(
            StatusCode::UNAUTHORIZED,
            "not logged in",
            why,
        )),
    }
}

#[utoipa::path(
    get,
    path = "/api/v1/auth/me",
    tag = "auth",
    operation_id = "getMe",
    summary = "The current user",
    description = "Who the request acts as: `userId` (what audit events record), `name`, `email`, `provider`, `groups`, `roles`, `scope` (`read` or `write`), `via` (`session`, `token`, or `open` when authentication is off) and the session's `expiresAt`. 401 without valid credentials.",
    responses(
        (status = 200, description = "The identity", body = ref("AuthMe")),
        (status = 401, description = "No valid session or token"),
    )
)]
async fn me(
    State(state): State<AppState>,
    headers: HeaderMap,
    ext: Option<Extension<Identity>>,
) -> ApiResult<Value> {
    let enabled = state.config.auth.enabled();
    let i = caller(&state, &headers, ext.map(|Extension(i)| i)).await?;
    Ok(ApiOk(identity_json(&i, enabled)))
}

#[utoipa::path(
    post,
    path = "/api/v1/auth/logout",
    tag = "auth",
    operation_id = "logout",
    summary = "End the session",
    description = "Deletes the session server-side (the cookie stops working in every process at once) and clears the cookie. `endSessionUrl` is the provider's end-session endpoint, when it has one, for a full sign-out there.",
    responses(
        (status = 200, description = "Logged out", body = ref("AuthLogout")),
        (status = 401, description = "No session"),
        (status = 403, description = "Cross-site request"),
    )
)]
async fn logout(
    State(state): State<AppState>,
    headers: HeaderMap,
    ext: Option<Extension<Identity>>,
) -> Result<Response, ApiError> {
    let (ended, end_session_url) = end_session(&state, &headers, ext.map(|Extension(i)| i)).await?;
    let mut r =
        ApiOk(json!({"loggedOut": ended, "endSessionUrl": end_session_url})).into_response();
    if let Ok(v) = HeaderValue::from_str(&clear_session_cookie(state.config.auth.secure_cookies()))
    {
        r.headers_mut().insert(header::SET_COOKIE, v);
    }
    Ok(r)
}

/// Ends the caller's session (logout of the API and of the dashboard): whether one ended, and
/// the provider's end-session URL.
pub(crate) async fn end_session(
    state: &AppState,
    headers: &HeaderMap,
    ext: Option<Identity>,
) -> Result<(bool, Option<String>), ApiError> {
    if !crate::url::same_origin(state.config.auth.public_url.as_deref(), headers) {
        return Err(ApiError::new(
            StatusCode::FORBIDDEN,
            "cross-site request refused",
            "log out from a page of this origin",
        ));
    }
    let i = caller(state, headers, ext).await?;
    let Some(id) = i.session_id().map(str::to_string) else {
        return Err(ApiError::bad_request(
            "no session",
            "only a login session can log out; revoke a token instead",
        ));
    };
    let removed = state.db(move |s| s.delete_session(&id)).await?;
    let now = state.clock.now_ms();
    let event = crate::audit::identity_event(
        &i,
        "POST",
        now,
        "auth.logout",
        format!("session/{}", i.session_id().unwrap_or_default()),
    );
    crate::audit::record(state, event).await;
    let url = match &i.provider {
        Some(p) => state.auth.oidc.end_session_url(p).await,
        None => None,
    };
    Ok((removed, url))
}

#[utoipa::path(
    post,
    path = "/api/v1/auth/refresh",
    tag = "auth",
    operation_id = "refreshSession",
    summary = "Refresh the session through the provider",
    description = "Uses the provider's refresh token: on success the session lasts another `AUTH_SESSION_TTL`. 409 when the provider gave no refresh token (log in again); 401, and the session ends, when the provider refuses it.",
    responses(
        (status = 200, description = "Refreshed", body = ref("AuthMe")),
        (status = 401, description = "No session, or the provider refused the refresh token"),
        (status = 403, description = "Not from a page of this origin (`cross-site request refused`)"),
        (status = 409, description = "No refresh token"),
        (status = 502, description = "The provider could not be reached"),
    )
)]
async fn refresh(
    State(state): State<AppState>,
    headers: HeaderMap,
    ext: Option<Extension<Identity>>,
) -> ApiResult<Value> {
    if !crate::url::same_origin(state.config.auth.public_url.as_deref(), &headers) {
        return Err(ApiError::new(
            StatusCode::FORBIDDEN,
            "cross-site request refused",
            "refresh from a page of this origin",
        ));
    }
    let i = caller(&state, &headers, ext.map(|Extension(i)| i)).await?;
    let Some(id) = i.session_id().map(str::to_string) else {
        return Err(ApiError::bad_request(
            "no session",
            "only a login session can be refreshed",
        ));
    };
    let lookup = id.clone();
    let session = state
        .db(move |s| s.session(&lookup))
        .await?
        .ok_or_else(|| {
            ApiError::new(
                StatusCode::UNAUTHORIZED,
                "not logged in",
                "the session has ended",
            )
        })?;
    let Some(refresh_token) = session.refresh_token.clone() else {
        return Err(ApiError::new(
            StatusCode::CONFLICT,
            "no refresh token",
            "the provider gave no refresh token at login; log in again",
        ));
    };
    let now = state.clock.now_ms();
    match state
        .auth
        .oidc
        .refresh(&session.provider, &refresh_token, now)
        .await
    {
        Ok(r) => {
            let expires = now.saturating_add(state.config.auth.session_ttl.as_millis() as i64);
            let renewed = state
                .db(move |s| {
                    s.renew_session(
                        &id,
                        r.refresh_token.as_deref(),
                        r.access_expires_at_ms,
                        expires,
                        now,
                    )
                })
                .await?;
            Ok(ApiOk(identity_json(&state_identity(&renewed), true)))
        }
        Err(OidcError::Refused(why)) => {
            state.db(move |s| s.delete_session(&id)).await?;
            Err(ApiError::new(
                StatusCode::UNAUTHORIZED,
                "refresh refused",
                format!("{why}; the session has ended, log in again"),
            ))
        }
        Err(OidcError::Unavailable(why)) => Err(ApiError::new(
            StatusCode::BAD_GATEWAY,
            "identity provider unavailable",
            why,
        )),
    }
}

// ------------------------------------------------------------------------------ tokens

/// The person behind a login session (the authorize layer lets only sessions reach the token
/// routes when authentication is on).
fn session_owner(i: &Identity) -> Result<String, ApiError> {
    match (&i.via, &i.owner) {
        (Via::Session { .. }, Some(owner)) => Ok(owner.clone()),
        (Via::Open, _) => Err(ApiError::new(
            StatusCode::CONFLICT,
            "authentication is off",
            "personal access tokens belong to people who log in; configure AUTH_PROVIDERS (docs/auth.md)",
        )),
        _ => Err(ApiError::new(
            StatusCode::FORBIDDEN,
            "a login session is needed",
            "personal access tokens are managed from a login session; a token cannot manage tokens",
        )),
    }
}

use ballast_ops::tokens::token_json;

#[utoipa::path(
    get,
    path = "/api/v1/tokens",
    tag = "auth",
    operation_id = "listTokens",
    summary = "The current user's personal access tokens",
    description = "Needs a login session (a token gets 403). Newest first, revoked and expired ones included with their `status`; never the value.",
    responses(
        (status = 200, description = "Tokens", body = ref("AccessTokens")),
        (status = 403, description = "Not a login session"),
        (status = 409, description = "Authentication is off: tokens belong to people who log in"),
    )
)]
async fn list_tokens(
    State(state): State<AppState>,
    Extension(i): Extension<Identity>,
) -> ApiResult<Value> {
    let owner = session_owner(&i)?;
    let tokens = state.db(move |s| s.tokens_of(&owner)).await?;
    let now = state.clock.now_ms();
    Ok(ApiOk(json!({
        "patEnabled": state.config.auth.pat_enabled,
        "tokens": tokens.iter().map(|t| token_json(t, now)).collect::<Vec<_>>(),
    })))
}

/// `POST /api/v1/tokens` body.
#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct NewTokenRequest {
    /// What the token is for (1-100 characters).
    name: String,
    /// `read` or `write` (write only for a person who has write).
    scope: String,
    /// When it stops working (RFC 3339, in the future); never when left out.
    #[serde(rename = "expiresAt", default)]
    expires_at: Option<String>,
}

#[utoipa::path(
    post,
    path = "/api/v1/tokens",
    tag = "auth",
    operation_id = "createToken",
    summary = "Create a personal access token",
    description = "Needs a login session. Answers the value once in `data.token` (`pat_` and 256 random bits); only its HMAC (`AUTH_PAT_HASH_SECRET`) is stored. 400 for a bad name, scope or expiry, or a write token asked by a read-only person; 409 when tokens are disabled.",
    request_body = NewTokenRequest,
    responses(
        (status = 200, description = "Created: the value, shown once", body = ref("AccessTokenCreated")),
        (status = 400, description = "Bad input"),
        (status = 403, description = "Not a login session"),
        (status = 409, description = "Authentication is off, or AUTH_PAT_ENABLED is false"),
    )
)]
async fn create_token(
    State(state): State<AppState>,
    Extension(i): Extension<Identity>,
    Json(req): Json<NewTokenRequest>,
) -> ApiResult<Value> {
    let holder = ballast_ops::tokens::Holder {
        owner: session_owner(&i)?,
        user_id: i.user_id.clone(),
        scope: i.scope,
    };
    let request = ballast_ops::tokens::TokenRequest {
        name: req.name,
        scope: req.scope,
        expires_at: req.expires_at,
    };
    let actor = crate::audit::identity_actor(&i, "POST");
    let mint = || {
        let value =
            new_token_value().map_err(|e| ballast_ops::OpError::internal(e.error, e.details))?;
        let hmac = state.auth.token_hmac(&value);
        Ok((value, hmac))
    };
    Ok(ApiOk(
        ballast_ops::tokens::create_token(&state, &actor, &holder, request, mint).await?,
    ))
}

#[utoipa::path(
    delete,
    path = "/api/v1/tokens/{tokenId}",
    tag = "auth",
    operation_id = "revokeToken",
    summary = "Revoke a personal access token",
    description = "Needs a login session; only the owner's own tokens (another's answers 404). The token stops working at once in every process; it stays listed as `revoked`.",
    params(("tokenId" = String, Path, description = "token id")),
    responses(
        (status = 200, description = "Revoked", body = ref("AccessToken")),
        (status = 403, description = "Not a login session"),
        (status = 404, description = "No such token of yours"),
        (status = 409, description = "Authentication is off: tokens belong to people who log in"),
    )
)]
async fn revoke_token(
    State(state): State<AppState>,
    Extension(i): Extension<Identity>,
    Path(token_id): Path<String>,
) -> ApiResult<Value> {
    let owner = session_owner(&i)?;
    let actor = crate::audit::identity_actor(&i, "DELETE");
    Ok(ApiOk(
        ballast_ops::tokens::revoke_token(&state, &actor, owner, token_id).await?,
    ))
}
