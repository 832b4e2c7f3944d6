//! On-broker agents and rolling restarts (docs/rolling-restarts.md).
//!
//! Two kinds of route:
//! - the **agent channel** `/api/v1/agent/*` (heartbeat, command result, the service's own
//!   binary): outside the user authentication layers, authenticated here and only here by the
//!   shared `BALLAST_AGENT_TOKEN` (`Authorization: Bearer <token>`); anything else gets 401 and
//!   changes nothing. An agent never listens: it polls, so nothing on a broker host accepts
//!   requests.
//! - the operators' routes: `GET /api/v1/agents`, `POST /api/v1/agents/{brokerId}/upgrade`,
//!   `/api/v1/rolling-restarts…` (start, list, get, pause, resume, abort): user-authenticated,
//!   licensed when they change something, audited. The executor drives a roll
//!   (`ballast_executor::roll`); these routes only store requests.

use std::sync::OnceLock;

use axum::body::{Body, Bytes};
use axum::extract::{ConnectInfo, State};
use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::Router;
use ballast_schema::{AgentHeartbeat, AgentRecord, CommandKind, RollRequest};
use serde::Deserialize;
use serde_json::{json, Value};

use crate::audit::Actor;
use crate::audit::HttpActor;
use crate::auth::hex;
pub use crate::auth::is_agent_channel;
pub use crate::auth::sha256_hex;
use crate::extract::{OptionalJson, Path};
use crate::{ApiError, ApiOk, ApiResult, AppState};
pub use ballast_ops::rolls::{
    agent_up, command_json, request_roll, restart_order, roll_json, start_rolling_restart,
    upgrade_agent, StartBody, TargetBuild,
};

/// The documented operations of this module (the OpenAPI document).
#[derive(utoipa::OpenApi)]
#[openapi(paths(
    heartbeat,
    command_result,
    binary,
    list_agents,
    upgrade,
    list_rolls,
    start_roll,
    get_roll,
    pause_roll,
    resume_roll,
    abort_roll
))]
pub(crate) struct Api;

pub(crate) fn routes() -> Router<AppState> {
    Router::new()
        .route("/api/v1/agent/heartbeat", post(heartbeat))
        .route("/api/v1/agent/commands/{id}/result", post(command_result))
        .route("/api/v1/agent/binary", get(binary))
        .route("/api/v1/agents", get(list_agents))
        .route("/api/v1/agents/{brokerId}/upgrade", post(upgrade))
        .route("/api/v1/rolling-restarts", get(list_rolls).post(start_roll))
        .route("/api/v1/rolling-restarts/{id}", get(get_roll))
        .route("/api/v1/rolling-restarts/{id}/pause", post(pause_roll))
        .route("/api/v1/rolling-restarts/{id}/resume", post(resume_roll))
        .route("/api/v1/rolling-restarts/{id}/abort", post(abort_roll))
}

// ------------------------------------------------------------------------------ the build

/// The running executable: its bytes are what an agent upgrade installs.
pub struct Build {
    pub bytes: Vec<u8>,
    pub sha256: String,
}

/// The running build, read once from `/proc/self/exe` (the file that runs, even when a
/// package upgrade replaced the path since).
pub fn own_build() -> Result<&'static Build, ApiError> {
    static BUILD: OnceLock<Result<Build, String>> = OnceLock::new();
    let b = BUILD.get_or_init(|| {
        let bytes = std::fs::read("/proc/self/exe")
            .map_err(|e| format!("the running executable could not be read: {e}"))?;
        let sha256 = sha256_hex(&bytes);
        Ok(Build { bytes, sha256 })
    });
    b.as_ref()
        .map_err(|e| ApiError::internal("the service's own build is unavailable", e.clone()))
}

// ------------------------------------------------------------------------------ agent token

fn refused(why: &str) -> ApiError {
    ApiError::new(StatusCode::UNAUTHORIZED, "agent authentication failed", why)
}

/// Checks `Authorization: Bearer <BALLAST_AGENT_TOKEN>`. The comparison is of SHA-256 digests,
/// so its time does not depend on how much of the token was right.
/// The prefix of an agent's credential.
pub const AGENT_TOKEN_PREFIX: &str = "bat_";

/// The credential of the agent of `broker`: `bat_<broker>_<HMAC-SHA256(secret, "ballast-agent:<broker>")>`.
/// Made from the service's `BALLAST_AGENT_TOKEN` (`ballast agent-token --broker N`); it names the
/// one broker it may speak for, so an agent cannot pass for another broker's.
pub fn broker_token(secret: &str, broker: i32) -> String {
    let key = ring::hmac::Key::new(ring::hmac::HMAC_SHA256, secret.as_bytes());
    let tag = ring::hmac::sign(&key, format!("ballast-agent:{broker}").as_bytes());
    format!("{AGENT_TOKEN_PREFIX}{broker}_{}", hex(tag.as_ref()))
}

/// The broker a credential names, if it has the credential's shape.
pub fn token_broker(token: &str) -> Option<i32> {
    let rest = token.strip_prefix(AGENT_TOKEN_PREFIX)?;
    let (broker, mac) = rest.split_once('_')?;
    (mac.len() == 64).then_some(())?;
    broker.parse().ok().filter(|b: &i32| *b >= 0)
}

/// Checks `Authorization: Bearer <the broker's agent credential>`; the broker it speaks for.
fn check_agent(
    state: &AppState,
    headers: &HeaderMap,
    peer: Option<&str>,
) -> Result<i32, Box<Response>> {
    let fail = |why: &str| {
        tracing::warn!(
            peer = peer.unwrap_or("?"),
            reason = why,
            "agent request refused"
        );
        let mut r = refused(why).into_response();
        r.headers_mut().insert(
            header::WWW_AUTHENTICATE,
            HeaderValue::from_static("Bearer realm=\"ballast-agent\""),
        );
        Box::new(r)
    };
    let Some(token) = state.config.roll.agent_token.as_ref() else {
        return Err(fail(
            "agents are not enabled on this service (BALLAST_AGENT_TOKEN is not set)",
        ));
    };
    let sent = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| {
            let (kind, value) = v.trim().split_once(' ')?;
            kind.eq_ignore_ascii_case("bearer").then(|| value.trim())
        });
    let Some(sent) = sent else {
        return Err(fail("send Authorization: Bearer <the agent token>"));
    };
    let Some(broker) = token_broker(sent) else {
        return Err(fail(
            "not an agent credential (bat_<broker>_…, made by `ballast agent-token --broker N`)",
        ));
    };
    let expected = broker_token(token.expose(), broker);
    if sha256_hex(sent) != sha256_hex(&expected) {
        return Err(fail(
            "the agent credential was not made from this service's BALLAST_AGENT_TOKEN",
        ));
    }
    Ok(broker)
}

/// 403 when an agent speaks for another broker than its credential names.
fn other_broker(authenticated: i32, claimed: i32) -> Option<Response> {
    (authenticated != claimed).then(|| {
        ApiError::new(
            StatusCode::FORBIDDEN,
            "agent credential for another broker",
            format!("this credential is broker {authenticated}'s; the request speaks for broker {claimed}"),
        )
        .into_response()
    })
}

/// The client's address, when the server records it.
struct Peer(Option<String>);

impl<S: Send + Sync> axum::extract::FromRequestParts<S> for Peer {
    type Rejection = std::convert::Infallible;

    async fn from_request_parts(
        parts: &mut axum::http::request::Parts,
        _state: &S,
    ) -> Result<Self, Self::Rejection> {
        Ok(Peer(
            parts
                .extensions
                .get::<ConnectInfo<std::net::SocketAddr>>()
                .map(|ConnectInfo(a)| a.ip().to_string()),
        ))
    }
}

// ------------------------------------------------------------------------------ agent channel

/// Unknown fields are ignored: an agent newer than the service still reports (and can be
/// brought to the service's build).
#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct HeartbeatBody {
    /// The broker on the agent's host.
    broker_id: i32,
    /// The host's name (metrics label `node_id`).
    node_id: String,
    /// The agent's version (`ballast --version`).
    version: String,
    /// SHA-256 (hex) of the agent's executable.
    build_digest: String,
    /// Whether the broker process runs (null: the agent has no status command).
    broker_process_up: Option<bool>,
    /// Seconds the broker process has been running, when known.
    broker_uptime_seconds: Option<i64>,
    /// When the agent started, milliseconds since the epoch.
    agent_started_at: i64,
    /// The log directories' disks: `{path, totalBytes, availableBytes}` or `{path, error}`.
    #[serde(default)]
    #[schema(value_type = Vec<Object>)]
    disks: Vec<Value>,
    /// The command the agent is running now, if any: no other is handed out meanwhile.
    #[serde(default)]
    running_command_id: Option<i64>,
}

/// A JSON body read after authentication (the `Json` extractor would read it before).
fn json_body<T: serde::de::DeserializeOwned>(body: &[u8]) -> Result<T, ApiError> {
    serde_json::from_slice(body)
        .map_err(|e| ApiError::bad_request("invalid request body", e.to_string()))
}

fn bounded(what: &str, v: &str, max: usize) -> Result<(), ApiError> {
    if v.trim().is_empty() || v.len() > max {
        return Err(ApiError::bad_request(
            format!("invalid {what}"),
            format!("{what} must be 1 to {max} characters"),
        ));
    }
    Ok(())
}

#[utoipa::path(
    post,
    path = "/api/v1/agent/heartbeat",
    tag = "agents",
    operation_id = "agentHeartbeat",
    summary = "An agent reports and asks for work (agent channel)",
    description = "Sent by `ballast agent` every `BALLAST_AGENT_HEARTBEAT_INTERVAL` with `Authorization: Bearer <BALLAST_AGENT_TOKEN>` (not a user credential: 401 otherwise). Records the agent's state and answers with its oldest pending command (`restart` or `upgrade`, now `sent`) or null. docs/rolling-restarts.md.",
    request_body(content = inline(HeartbeatBody)),
    responses(
        (status = 200, description = "`command` (or null), `serviceVersion`, `serviceBuildDigest`"),
        (status = 401, description = "Not the agent token"),
    )
)]
async fn heartbeat(
    State(state): State<AppState>,
    Peer(addr): Peer,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    // Authenticated before the body is parsed: an unauthenticated caller learns nothing of how
    // it would be read (axum has buffered it, within its body limit).
    let broker = match check_agent(&state, &headers, addr.as_deref()) {
        Ok(b) => b,
        Err(r) => return *r,
    };
    let body: HeartbeatBody = match json_body(&body) {
        Ok(b) => b,
        Err(e) => return e.into_response(),
    };
    if let Some(r) = other_broker(broker, body.broker_id) {
        return r;
    }
    match record_heartbeat(&state, body, addr).await {
        Ok(v) => ApiOk(v).into_response(),
        Err(e) => e.into_response(),
    }
}

async fn record_heartbeat(
    state: &AppState,
    body: HeartbeatBody,
    addr: Option<String>,
) -> Result<Value, ApiError> {
    if body.broker_id < 0 {
        return Err(ApiError::bad_request(
            "invalid brokerId",
            "brokerId must be 0 or above",
        ));
    }
    bounded("nodeId", &body.node_id, 255)?;
    bounded("version", &body.version, 255)?;
    if body.build_digest.len() != 64 || !body.build_digest.chars().all(|c| c.is_ascii_hexdigit()) {
        return Err(ApiError::bad_request(
            "invalid buildDigest",
            "buildDigest must be a SHA-256 in 64 hex digits",
        ));
    }
    if body.disks.len() > 64 {
        return Err(ApiError::bad_request(
            "invalid disks",
            "at most 64 log directories",
        ));
    }
    let body_running = body.running_command_id;
    let hb = AgentHeartbeat {
        broker_id: body.broker_id,
        node_id: body.node_id,
        version: body.version,
        build_digest: body.build_digest.to_ascii_lowercase(),
        broker_process_up: body.broker_process_up,
        broker_uptime_s: body.broker_uptime_seconds,
        agent_started_at_ms: body.agent_started_at,
        disks: Value::Array(body.disks),
        remote_addr: addr,
    };
    let now = state.clock.now_ms();
    let take = body_running.is_none();
    let command = state
        .db(move |s| s.record_agent_heartbeat(&hb, take, now))
        .await?;
    let build = own_build()?;
    Ok(json!({
        "command": command.as_ref().map(command_json),
        "serviceVersion": crate::VERSION,
        "serviceBuildDigest": build.sha256,
    }))
}

#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ResultBody {
    /// The broker of the reporting agent.
    broker_id: i32,
    /// Whether the command did what it should.
    succeeded: bool,
    /// What happened, e.g. the command's exit status and the end of its output.
    detail: String,
}

#[utoipa::path(
    post,
    path = "/api/v1/agent/commands/{id}/result",
    tag = "agents",
    operation_id = "agentCommandResult",
    summary = "An agent reports the outcome of a command (agent channel)",
    description = "Agent token only (401 otherwise). Accepted once, for a command sent to that broker's agent; an upgrade's outcome is audited (`agents.upgrade.result`).",
    params(("id" = i64, Path, description = "command id")),
    request_body(content = inline(ResultBody)),
    responses(
        (status = 200, description = "Recorded"),
        (status = 401, description = "Not the agent token"),
        (status = 409, description = "Not a command waiting for this agent's outcome"),
    )
)]
async fn command_result(
    State(state): State<AppState>,
    Peer(addr): Peer,
    headers: HeaderMap,
    axum::extract::Path(id): axum::extract::Path<String>,
    body: Bytes,
) -> Response {
    let broker = match check_agent(&state, &headers, addr.as_deref()) {
        Ok(b) => b,
        Err(r) => return *r,
    };
    let Ok(id) = id.parse::<i64>() else {
        return ApiError::bad_request("invalid path", format!("command id {id:?} is not a number"))
            .into_response();
    };
    let body: ResultBody = match json_body(&body) {
        Ok(b) => b,
        Err(e) => return e.into_response(),
    };
    if let Some(r) = other_broker(broker, body.broker_id) {
        return r;
    }
    match record_result(&state, id, body).await {
        Ok(v) => ApiOk(v).into_response(),
        Err(e) => e.into_response(),
    }
}

async fn record_result(state: &AppState, id: i64, body: ResultBody) -> Result<Value, ApiError> {
    let detail: String = body.detail.chars().take(4000).collect();
    let now = state.clock.now_ms();
    let broker = body.broker_id;
    let ok = body.succeeded;
    let d = detail.clone();
    let recorded = state
        .db(move |s| s.finish_agent_command(broker, id, ok, &d, now))
        .await?;
    if !recorded {
        return Err(ApiError::new(
            StatusCode::CONFLICT,
            "not a command waiting for this agent's outcome",
            format!("command {id} was not sent to the agent of broker {broker}, or already ended"),
        ));
    }
    let cmd = state.db(move |s| s.agent_command(id)).await?;
    if let Some(c) = cmd.filter(|c| c.kind == CommandKind::Upgrade) {
        let event = ballast_schema::NewAuditEvent {
            at_ms: now,
            action: "agents.upgrade.result".into(),
            method: "INTERNAL".into(),
            user_id: Some(c.requested_by.clone()),
            requested_by: Some(c.requested_by.clone()),
            status: if ok { 200 } else { 500 },
            target: Some(format!("agent {broker}")),
            summary: json!({ "brokerId": broker, "commandId": id, "succeeded": ok,
                "targetVersion": c.target_version, "message": detail }),
            related_event_id: c.audit_event_id,
            ..Default::default()
        };
        crate::audit::record(state, event).await;
    }
    Ok(json!({ "commandId": id, "recorded": true }))
}

#[utoipa::path(
    get,
    path = "/api/v1/agent/binary",
    tag = "agents",
    operation_id = "agentBinary",
    summary = "The service's own executable, for an agent upgrade (agent channel)",
    description = "Agent token only (401 otherwise). The bytes of the running `ballast` executable; header `X-Ballast-Sha256` carries its digest, which the agent checks against the command's `targetDigest` before it replaces itself.",
    responses(
        (status = 200, description = "application/octet-stream"),
        (status = 401, description = "Not the agent token"),
    )
)]
async fn binary(State(state): State<AppState>, Peer(addr): Peer, headers: HeaderMap) -> Response {
    if let Err(r) = check_agent(&state, &headers, addr.as_deref()) {
        return *r;
    }
    let build = match own_build() {
        Ok(b) => b,
        Err(e) => return e.into_response(),
    };
    let mut r = Response::new(Body::from(build.bytes.as_slice()));
    let h = r.headers_mut();
    h.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/octet-stream"),
    );
    if let Ok(v) = HeaderValue::from_str(&build.sha256) {
        h.insert("x-ballast-sha256", v);
    }
    r
}

// ------------------------------------------------------------------------------ agents

pub(crate) fn agent_json(state: &AppState, a: &AgentRecord, own: Option<&str>, now: i64) -> Value {
    let h = &a.heartbeat;
    json!({
        "brokerId": h.broker_id,
        "nodeId": h.node_id,
        "up": agent_up(state, a, now),
        "version": h.version,
        "buildDigest": h.build_digest,
        "sameBuildAsService": own.map(|d| d == h.build_digest),
        "brokerProcessUp": h.broker_process_up,
        "brokerUptimeSeconds": h.broker_uptime_s,
        "agentStartedAt": h.agent_started_at_ms,
        "disks": h.disks,
        "remoteAddr": h.remote_addr,
        "firstSeenAt": a.first_seen_at_ms,
        "lastSeenAt": a.last_seen_at_ms,
    })
}

#[utoipa::path(
    get,
    path = "/api/v1/agents",
    tag = "agents",
    operation_id = "listAgents",
    summary = "The on-broker agents and their recent commands",
    description = "Every agent that ever reported: `up` (heard from within `BALLAST_AGENT_STALE_AFTER`), version and build digest (`sameBuildAsService`), broker process state and uptime, disks of the log dirs, last seen; `commands` are the 50 newest agent commands. Free.",
    responses((status = 200, description = "`agents[]`, `commands[]`, `service`"))
)]
async fn list_agents(State(state): State<AppState>) -> ApiResult<Value> {
    let (agents, commands) = state
        .db(|s| Ok((s.agents()?, s.agent_commands(None, 50)?)))
        .await?;
    let now = state.clock.now_ms();
    let own = own_build().ok().map(|b| b.sha256.as_str());
    Ok(ApiOk(json!({
        "agents": agents.iter().map(|a| agent_json(&state, a, own, now)).collect::<Vec<_>>(),
        "commands": commands.iter().map(command_json).collect::<Vec<_>>(),
        "service": { "version": crate::VERSION, "buildDigest": own,
                     "agentsEnabled": state.config.roll.agent_token.is_some() },
    })))
}

#[utoipa::path(
    post,
    path = "/api/v1/agents/{brokerId}/upgrade",
    tag = "agents",
    operation_id = "upgradeAgent",
    summary = "Upgrade an agent to the service's own build",
    description = "Queues an `upgrade` command: on its next heartbeat the agent downloads `GET /api/v1/agent/binary` over the authenticated channel, checks the SHA-256, replaces its executable and starts again; its outcome is recorded and audited. Licensed; audited `agents.upgrade`.",
    params(("brokerId" = i32, Path, description = "the agent's broker id")),
    responses(
        (status = 200, description = "The queued command"),
        (status = 404, description = "No agent of that broker has reported"),
        (status = 409, description = "The agent is down, already runs this build or has an unfinished command, or a rolling restart is in progress"),
    )
)]
async fn upgrade(
    State(state): State<AppState>,
    HttpActor(actor): HttpActor,
    Path(broker): Path<i32>,
) -> ApiResult<Value> {
    let build = own_build()?;
    let target = TargetBuild {
        version: crate::VERSION.to_string(),
        sha256: build.sha256.clone(),
    };
    Ok(ApiOk(upgrade_agent(&state, &actor, broker, &target).await?))
}

// ------------------------------------------------------------------------------ rolls

#[utoipa::path(
    get,
    path = "/api/v1/rolling-restarts",
    tag = "agents",
    operation_id = "listRollingRestarts",
    summary = "Rolling restarts, newest first",
    description = "`rollingRestarts[]` (state, brokers in order, position, phase, what it waits for, per-broker outcomes, error) and `total`. Free.",
    responses((status = 200, description = "`rollingRestarts[]`, `total`"))
)]
async fn list_rolls(State(state): State<AppState>) -> ApiResult<Value> {
    let (rolls, total) = state.db(|s| s.rolls(50, 0)).await?;
    Ok(ApiOk(json!({
        "rollingRestarts": rolls.iter().map(roll_json).collect::<Vec<_>>(),
        "total": total,
    })))
}

#[utoipa::path(
    get,
    path = "/api/v1/rolling-restarts/{id}",
    tag = "agents",
    operation_id = "getRollingRestart",
    summary = "One rolling restart",
    params(("id" = String, Path, description = "rolling restart id")),
    responses(
        (status = 200, description = "The rolling restart"),
        (status = 404, description = "Unknown id"),
    )
)]
async fn get_roll(State(state): State<AppState>, Path(id): Path<String>) -> ApiResult<Value> {
    let i = id.clone();
    match state.db(move |s| s.roll(&i)).await? {
        Some(r) => Ok(ApiOk(roll_json(&r))),
        None => Err(ApiError::not_found(
            "rolling restart not found",
            format!("no rolling restart {id}"),
        )),
    }
}

#[utoipa::path(
    post,
    path = "/api/v1/rolling-restarts",
    tag = "agents",
    operation_id = "startRollingRestart",
    summary = "Start a rolling restart",
    description = "Restarts the brokers one at a time through their agents, the active controller last: before each, the cluster must be healthy (no offline partition, no replica out of sync but the broker's own); leadership is moved off it; its agent restarts it; the roll waits until it is back in every ISR and gives its leadership back (preferred leader election); every wait has a timeout (`BALLAST_ROLL_*`), and a failure stops the roll saying where and why. While it runs, reassignments, drains, leader elections, self-healing and proposal applies answer 409. Refused (409) while a reassignment or another roll runs, or when a broker has no running agent. Licensed; audited `rolling_restart.start`.",
    request_body(content = Option<StartBody>, description = "Optional"),
    responses(
        (status = 200, description = "The rolling restart, `running`"),
        (status = 400, description = "Unknown or repeated broker ids"),
        (status = 409, description = "Busy (a reassignment or another roll), or a broker without a running agent"),
        (status = 503, description = "The cluster could not be read"),
    )
)]
async fn start_roll(
    State(state): State<AppState>,
    HttpActor(actor): HttpActor,
    OptionalJson(body): OptionalJson<StartBody>,
) -> ApiResult<Value> {
    Ok(ApiOk(start_rolling_restart(&state, &actor, body).await?))
}

async fn request(
    state: &AppState,
    actor: &Actor,
    id: String,
    request: RollRequest,
    action: &str,
) -> ApiResult<Value> {
    Ok(ApiOk(
        request_roll(state, actor, id, request, action).await?,
    ))
}

#[utoipa::path(
    post,
    path = "/api/v1/rolling-restarts/{id}/pause",
    tag = "agents",
    operation_id = "pauseRollingRestart",
    summary = "Pause a rolling restart",
    description = "The roll stops at its next safe point (before a broker's health check or during the settle pause; a broker being restarted is finished first) and shows `paused`; it still holds the mutation slot. Licensed; audited `rolling_restart.pause`.",
    params(("id" = String, Path, description = "rolling restart id")),
    responses(
        (status = 200, description = "The roll with `pauseRequested`"),
        (status = 404, description = "Unknown id"),
        (status = 409, description = "The roll has ended"),
    )
)]
async fn pause_roll(
    State(state): State<AppState>,
    HttpActor(actor): HttpActor,
    Path(id): Path<String>,
) -> ApiResult<Value> {
    request(
        &state,
        &actor,
        id,
        RollRequest::Pause,
        "rolling_restart.pause",
    )
    .await
}

#[utoipa::path(
    post,
    path = "/api/v1/rolling-restarts/{id}/resume",
    tag = "agents",
    operation_id = "resumeRollingRestart",
    summary = "Resume a paused rolling restart",
    description = "The health check of the next broker starts again with its full timeout. Licensed; audited `rolling_restart.resume`.",
    params(("id" = String, Path, description = "rolling restart id")),
    responses(
        (status = 200, description = "The roll"),
        (status = 404, description = "Unknown id"),
        (status = 409, description = "The roll has ended"),
    )
)]
async fn resume_roll(
    State(state): State<AppState>,
    HttpActor(actor): HttpActor,
    Path(id): Path<String>,
) -> ApiResult<Value> {
    request(
        &state,
        &actor,
        id,
        RollRequest::Resume,
        "rolling_restart.resume",
    )
    .await
}

#[utoipa::path(
    post,
    path = "/api/v1/rolling-restarts/{id}/abort",
    tag = "agents",
    operation_id = "abortRollingRestart",
    summary = "Abort a rolling restart",
    description = "No further broker is restarted. A broker whose leadership was moved off gets it back; a broker already being restarted is waited for (back in every ISR, leadership given back) before the roll ends `aborted` and frees the mutation slot. Licensed; audited `rolling_restart.abort`.",
    params(("id" = String, Path, description = "rolling restart id")),
    responses(
        (status = 200, description = "The roll with `abortRequested`"),
        (status = 404, description = "Unknown id"),
        (status = 409, description = "The roll has ended"),
    )
)]
async fn abort_roll(
    State(state): State<AppState>,
    HttpActor(actor): HttpActor,
    Path(id): Path<String>,
) -> ApiResult<Value> {
    request(
        &state,
        &actor,
        id,
        RollRequest::Abort,
        "rolling_restart.abort",
    )
    .await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_broker_credential_names_its_broker_and_depends_on_the_secret() {
        let a = broker_token("a-service-secret-of-at-least-32-chars", 3);
        assert!(a.starts_with("bat_3_"));
        assert_eq!(token_broker(&a), Some(3));
        assert_ne!(a, broker_token("a-service-secret-of-at-least-32-chars", 4));
        assert_ne!(a, broker_token("another-secret-of-at-least-32-chars!", 3));
        assert_eq!(token_broker("bat_3_short"), None);
        assert_eq!(token_broker("pat_abc"), None);
    }
}
