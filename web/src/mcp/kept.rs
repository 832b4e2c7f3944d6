//! The MCP door's kept answers: a `tools/call` of a read that declares a kept answer (for its
//! common inputs kept once per reading, read of every group or check of a proposal:
//! `ballast_ops::kept`) is answered here with that answer's bytes, written once and shared (not
//! copied) around the call's JSON-RPC id and age, instead of through rmcp,
//! which takes an answer as a value and writes it twice per call (docs/api/mcp.md, "Kept
//! answers"; docs/big-clusters.md, "Eighth round").
//!
//! The answer is the one rmcp gives for the same call (`structuredContent` and the same JSON as
//! a text block), sent as `application/json`, which every client of Streamable HTTP reads. It is
//! taken through the catalog's pipeline (`catalog::kept`: scope, licence, input check) and
//! counted as rmcp's are. Everything else goes to rmcp as it came: another method, a tool that
//! declares no kept answer, a refusal, and any request this door does not check as rmcp
//! does (an `Origin` header, a `Host` outside the allowed ones, an unknown protocol version,
//! `Mcp-Method` or `Mcp-Name` not naming the call (or missing where the revision requires
//! them), other `Mcp-*` headers, `_meta`, a body over [`MAX_BODY`], no session).
//!
//! A session's worker in rmcp ends after [`SessionConfig::DEFAULT_KEEP_ALIVE`] without a
//! message, and a call answered here never reaches it: a session is answered here only while a
//! message of it reached rmcp within half that time, so a client that calls nothing but kept
//! answers sends one call in every such interval through rmcp, and its session lives on.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::body::{Body, Bytes};
use axum::extract::{Request, State};
use axum::http::header::{ACCEPT, CONTENT_LENGTH, CONTENT_TYPE, HOST, ORIGIN};
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode};
use axum::middleware::Next;
use axum::response::Response;
use rmcp::model::ProtocolVersion;
use rmcp::transport::streamable_http_server::session::local::{LocalSessionManager, SessionConfig};
use rmcp::transport::streamable_http_server::session::SessionManager;
use serde::Deserialize;
use serde_json::{Map, Value};

use crate::auth::Identity;
use crate::catalog::{self, Channel};
use crate::AppState;

/// A `tools/call` of a kept answer is small; a larger body goes to rmcp as it came.
pub const MAX_BODY: u64 = 64 * 1024;

const SESSION_HEADER: &str = "mcp-session-id";
const VERSION_HEADER: &str = "mcp-protocol-version";
/// The standard headers of a request (SEP-2243), which clients send from the revision
/// 2026-07-28 on (the Python SDK 2.x on every request): the method, and the tool's name.
const METHOD_HEADER: &str = "mcp-method";
const NAME_HEADER: &str = "mcp-name";
/// The first revision whose requests must carry the standard headers.
const STANDARD_HEADERS_FROM: &str = "2026-07-28";

/// What the door needs: the state, rmcp's sessions, and when each session last reached rmcp.
#[derive(Clone)]
pub struct Door {
    state: AppState,
    sessions: Arc<LocalSessionManager>,
    /// The `Host` values rmcp allows (DNS-rebinding protection), lower case: an entry with a
    /// port allows that host and port, one without a port the host at any port.
    hosts: Arc<Vec<String>>,
    reached: Arc<Mutex<Reached>>,
}

/// When each session's messages last reached rmcp, and how long after that its calls may be
/// answered here.
struct Reached {
    at: HashMap<String, Instant>,
    prune_at: usize,
    fresh: Duration,
}

impl Reached {
    fn new(fresh: Duration) -> Reached {
        Reached {
            at: HashMap::new(),
            prune_at: 64,
            fresh,
        }
    }

    /// Notes that a message of `session` reached rmcp at `now`; forgets the sessions not
    /// heard of for twice [`Reached::fresh`] now and then.
    fn reach(&mut self, session: &str, now: Instant) {
        self.at.insert(session.to_string(), now);
        if self.at.len() >= self.prune_at {
            let stale = self.fresh * 2;
            self.at.retain(|_, at| now.duration_since(*at) < stale);
            self.prune_at = (self.at.len() * 2).max(64);
        }
    }

    /// Whether a message of `session` reached rmcp within [`Reached::fresh`] before `now`.
    fn is_fresh(&self, session: &str, now: Instant) -> bool {
        self.at
            .get(session)
            .is_some_and(|at| now.duration_since(*at) < self.fresh)
    }
}

impl Door {
    pub fn new(state: AppState, sessions: Arc<LocalSessionManager>, hosts: Vec<String>) -> Door {
        let keep_alive = sessions
            .session_config
            .keep_alive
            .unwrap_or(SessionConfig::DEFAULT_KEEP_ALIVE);
        Door {
            state,
            sessions,
            hosts: Arc::new(
                hosts
                    .iter()
                    .map(|h| h.trim().to_ascii_lowercase())
                    .collect(),
            ),
            reached: Arc::new(Mutex::new(Reached::new(keep_alive / 2))),
        }
    }

    fn reached(&self) -> std::sync::MutexGuard<'_, Reached> {
        self.reached.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Notes that a message of `session` reaches rmcp now.
    fn reach(&self, session: &str) {
        self.reached().reach(session, Instant::now());
    }

    /// Whether a message of `session` reached rmcp recently enough to answer its call here.
    fn is_fresh(&self, session: &str) -> bool {
        self.reached().is_fresh(session, Instant::now())
    }

    /// Whether the headers are ones this door checks as rmcp does.
    fn plain(&self, headers: &HeaderMap) -> bool {
        // A media type without its parameters is `kind`.
        let is = |t: &str, kind: &str| {
            t.split(';')
                .next()
                .unwrap_or("")
                .trim()
                .eq_ignore_ascii_case(kind)
        };
        let accepts = |kind: &str| {
            headers
                .get_all(ACCEPT)
                .iter()
                .filter_map(|v| v.to_str().ok())
                .flat_map(|v| v.split(','))
                .any(|t| is(t, kind))
        };
        let json = |v: &HeaderValue| v.to_str().ok().is_some_and(|c| is(c, "application/json"));
        let host = headers
            .get(HOST)
            .and_then(|h| h.to_str().ok())
            .map(|h| h.trim().to_ascii_lowercase());
        let version = headers
            .get(VERSION_HEADER)
            .map(|v| v.to_str().unwrap_or(""));
        let single = |name| headers.get_all(name).iter().count() <= 1;
        single(VERSION_HEADER)
            && single(METHOD_HEADER)
            && single(NAME_HEADER)
            && single(HOST.as_str())
            && single(CONTENT_TYPE.as_str())
            && accepts("application/json")
            && accepts("text/event-stream")
            && headers.get(CONTENT_TYPE).is_some_and(json)
            && headers.get(ORIGIN).is_none()
            && host.is_some_and(|h| {
                let name = host_name(&h);
                self.hosts.iter().any(|a| *a == h || *a == name)
            })
            && version.is_none_or(|v| {
                ProtocolVersion::KNOWN_VERSIONS
                    .iter()
                    .any(|known| known.as_str() == v)
            })
            && headers.keys().all(|name| {
                let name = name.as_str();
                !name.starts_with("mcp-")
                    || [SESSION_HEADER, VERSION_HEADER, METHOD_HEADER, NAME_HEADER].contains(&name)
            })
    }
}

/// `example.com:8080` → `example.com`; `[::1]:80` → `[::1]`; lower case.
fn host_name(host: &str) -> String {
    let host = host.trim().to_ascii_lowercase();
    if host.starts_with('[') {
        return match host.find(']') {
            Some(end) => host[..=end].to_string(),
            None => host,
        };
    }
    match host.rsplit_once(':') {
        Some((name, port)) if !name.contains(':') && port.bytes().all(|b| b.is_ascii_digit()) => {
            name.to_string()
        }
        _ => host,
    }
}

/// Whether the standard headers agree with a `tools/call` of `tool` as rmcp checks them: each
/// one given names the body's method and tool (a name in the header's Base64 form is left to
/// rmcp), and from the revision that requires them both are given.
fn standard_headers_agree(headers: &HeaderMap, tool: &str) -> bool {
    let value = |name| headers.get(name).map(|v| v.to_str().unwrap_or("\u{0}"));
    let (method, name) = (value(METHOD_HEADER), value(NAME_HEADER));
    let required = value(VERSION_HEADER).is_some_and(|v| v >= STANDARD_HEADERS_FROM);
    method.is_none_or(|m| m == "tools/call")
        && name.is_none_or(|n| n == tool)
        && (!required || (method.is_some() && name.is_some()))
}

/// A JSON-RPC `tools/call` as this door takes it: anything else is rmcp's.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Call {
    jsonrpc: String,
    id: Value,
    method: String,
    params: CallParams,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct CallParams {
    name: String,
    #[serde(default)]
    arguments: Option<Map<String, Value>>,
}

/// The layer over rmcp's `POST /api/v1/mcp`: a call of a kept answer answered here (see the
/// module's documentation), every other request passed to rmcp as it came.
pub async fn kept_answers(State(door): State<Door>, req: Request, next: Next) -> Response {
    let Some(session) = req
        .headers()
        .get(SESSION_HEADER)
        .and_then(|v| v.to_str().ok())
        .map(str::to_string)
    else {
        return next.run(req).await;
    };
    let small = req
        .headers()
        .get(CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok())
        .is_some_and(|len| len <= MAX_BODY);
    if req.method() != Method::POST
        || !small
        || !door.plain(req.headers())
        || !door.is_fresh(&session)
        || !has_session(&door, &session).await
    {
        door.reach(&session);
        return next.run(req).await;
    }
    let (parts, body) = req.into_parts();
    let bytes = match axum::body::to_bytes(body, MAX_BODY as usize).await {
        Ok(bytes) => bytes,
        Err(_) => {
            // The body could not be read (the client went, or sent more than it said): rmcp
            // would not have read it either.
            let mut response = Response::new(Body::empty());
            *response.status_mut() = StatusCode::BAD_REQUEST;
            return response;
        }
    };
    if let Some(answer) = answer(&door, &parts, &bytes).await {
        return answer;
    }
    door.reach(&session);
    next.run(Request::from_parts(parts, Body::from(bytes)))
        .await
}

async fn has_session(door: &Door, session: &str) -> bool {
    door.sessions
        .has_session(&session.to_string().into())
        .await
        .unwrap_or(false)
}

/// The answer to a call of a kept answer, or None for rmcp to answer.
async fn answer(door: &Door, parts: &axum::http::request::Parts, body: &Bytes) -> Option<Response> {
    let call: Call = serde_json::from_slice(body).ok()?;
    if call.jsonrpc != "2.0"
        || call.method != "tools/call"
        || !(call.id.is_string() || call.id.is_i64() || call.id.is_u64())
    {
        return None;
    }
    if !standard_headers_agree(&parts.headers, &call.params.name) {
        return None;
    }
    let op = catalog::find(&call.params.name)?;
    op.kept?;
    let who = parts.extensions.get::<Identity>()?;
    let caller = catalog::caller(
        who,
        Channel::Mcp {
            requested_by: who.user_id.clone(),
        },
    );
    let args = call
        .params
        .arguments
        .map(Value::Object)
        .unwrap_or(Value::Null);
    let kept = catalog::kept(op, &door.state, &caller, args).await.ok()??;
    let written = kept.kept.written()?;
    let id = serde_json::to_vec(&call.id).ok()?;
    // The call's own head, the kept pieces shared (not copied) around its age, and the tail.
    let mut head = b"{\"jsonrpc\":\"2.0\",\"id\":".to_vec();
    head.extend_from_slice(&id);
    head.extend_from_slice(b",\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"");
    let mut chunks = vec![Bytes::from(head)];
    chunks.extend(kept.chunks(&written.escaped));
    chunks.push(Bytes::from_static(b"\"}],\"structuredContent\":"));
    chunks.extend(kept.chunks(&written.json));
    chunks.push(Bytes::from_static(b",\"isError\":false}}"));
    door.state.metrics.mcp_call(op.name, false);
    let len: usize = chunks.iter().map(Bytes::len).sum();
    let chunks = chunks
        .into_iter()
        .map(Ok::<Bytes, std::convert::Infallible>);
    let mut response = Response::new(Body::from_stream(futures_util::stream::iter(chunks)));
    let headers = response.headers_mut();
    headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    headers.insert(CONTENT_LENGTH, HeaderValue::from(len));
    Some(response)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A session's worker in rmcp ends after its idle time without a message: a session is
    /// answered here only while a message of it reached rmcp within half that time, so one
    /// call in every such interval restarts the worker's idle time.
    #[test]
    fn a_session_is_answered_here_only_while_it_reached_rmcp_within_half_its_idle_time() {
        let idle = SessionConfig::DEFAULT_KEEP_ALIVE;
        let mut reached = Reached::new(idle / 2);
        let t0 = Instant::now();
        assert!(!reached.is_fresh("s", t0), "a session never seen");
        reached.reach("s", t0);
        assert!(reached.is_fresh("s", t0 + idle / 2 - Duration::from_millis(1)));
        assert!(!reached.is_fresh("s", t0 + idle / 2));
        reached.reach("s", t0 + idle / 2);
        assert!(reached.is_fresh("s", t0 + idle - Duration::from_millis(1)));
        assert!(!reached.is_fresh("other", t0));
    }

    #[test]
    fn sessions_not_heard_of_are_forgotten() {
        let mut reached = Reached::new(Duration::from_secs(10));
        let t0 = Instant::now();
        for i in 0..63 {
            reached.reach(&format!("old{i}"), t0);
        }
        reached.reach("new", t0 + Duration::from_secs(20));
        assert_eq!(reached.at.len(), 1);
        assert!(reached.is_fresh("new", t0 + Duration::from_secs(20)));
    }

    /// The Python SDK 2.x sends `Mcp-Method` and `Mcp-Name` on every request; rmcp checks them
    /// against the body from the revision 2026-07-28 on, and refuses a request without them.
    #[test]
    fn standard_headers_are_taken_only_when_they_name_the_call() {
        let headers = |pairs: &[(&'static str, &'static str)]| {
            let mut h = HeaderMap::new();
            for (k, v) in pairs {
                h.insert(*k, HeaderValue::from_static(v));
            }
            h
        };
        let tool = "get_cluster_overview";
        assert!(standard_headers_agree(&headers(&[]), tool));
        let both = [
            ("mcp-method", "tools/call"),
            ("mcp-name", "get_cluster_overview"),
        ];
        assert!(standard_headers_agree(&headers(&both), tool));
        assert!(!standard_headers_agree(&headers(&both), "search_topics"));
        assert!(!standard_headers_agree(
            &headers(&[("mcp-method", "tools/list")]),
            tool
        ));
        let new = [(VERSION_HEADER, "2026-07-28")];
        assert!(!standard_headers_agree(&headers(&new), tool));
        let mut all = both.to_vec();
        all.extend(new);
        assert!(standard_headers_agree(&headers(&all), tool));
        let old = [(VERSION_HEADER, "2025-06-18"), ("mcp-method", "tools/call")];
        assert!(standard_headers_agree(&headers(&old), tool));
    }

    #[test]
    fn a_host_is_compared_by_its_name_without_the_port() {
        assert_eq!(host_name("LocalHost:8080"), "localhost");
        assert_eq!(host_name("127.0.0.1"), "127.0.0.1");
        assert_eq!(host_name("[::1]:9000"), "[::1]");
        assert_eq!(host_name("[::1]"), "[::1]");
    }
}
