//! `/api/v1/mcp`: the MCP endpoint (Streamable HTTP, rmcp) over the catalog (docs/api/mcp.md).
//!
//! The authentication layers run before it, so every call knows its `auth::Identity` (rmcp hands
//! the HTTP request's parts to the handler). Scopes are checked per tool: a `read` identity may
//! call read tools and `list_pending_actions` only. Read tools run at once; a mutate tool checks
//! its input (bad input is a tool error and nothing is queued), refuses without a licence, and
//! queues a pending action in `approvals` (it survives a restart of the web process); another
//! identity with the write scope approves it with `approve_action`, which runs it exactly once
//! (`Store::decide_approval` lets one of concurrent approvals win) and returns its result.

use std::sync::Arc;

use axum::http::request::Parts;
use ballast_schema::{Approval, ApprovalState, Decision, NewApproval, StoreError};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation,
    ListToolsResult, PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool,
    ToolAnnotations,
};
use rmcp::service::RequestContext;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use rmcp::{ErrorData, RoleServer, ServerHandler};
use serde_json::{json, Map, Value};

mod kept;

pub use kept::{kept_answers, Door};

use crate::auth::{Identity, Scope, Via};
use crate::catalog::{self, Category, Channel, Limit, Operation, ToolError};
use crate::AppState;

/// The operations of the endpoint, for the OpenAPI description (the MCP transport is served by
/// rmcp; these functions only carry its documentation).
#[derive(utoipa::OpenApi)]
#[openapi(paths(mcp_post, mcp_get, mcp_delete))]
pub(crate) struct Api;

#[utoipa::path(
    post,
    path = "/api/v1/mcp",
    tag = "mcp",
    operation_id = "mcpMessage",
    summary = "MCP: send a JSON-RPC message (Streamable HTTP)",
    description = "The MCP endpoint (docs/api/mcp.md): JSON-RPC `initialize`, `tools/list`, `tools/call` and notifications. Send `Accept: application/json, text/event-stream`; the answer is JSON or a server-sent-event stream. After `initialize` send the `Mcp-Session-Id` the server gave. Free of licence checks here: licensed tools refuse inside the call. With authentication on, a session cookie or personal access token is needed, and scopes are checked per tool.",
    request_body(content = Object, description = "A JSON-RPC request, notification or response", content_type = "application/json"),
    responses(
        (status = 200, description = "A JSON-RPC answer (JSON) or a stream of them (text/event-stream)", content_type = "application/json"),
        (status = 202, description = "A notification or response was accepted"),
        (status = 400, description = "Not a JSON-RPC message, or a bad session (a JSON-RPC error)", content_type = "application/json", body = ref("JsonRpcError")),
        (status = 404, description = "The session named by `Mcp-Session-Id` is unknown or ended (a JSON-RPC error)", content_type = "application/json", body = ref("JsonRpcError")),
        (status = 406, description = "The Accept header does not allow JSON and event streams (a JSON-RPC error)", content_type = "application/json", body = ref("JsonRpcError")),
        (status = 413, description = "The body is larger than the limit (a JSON-RPC error)", content_type = "application/json", body = ref("JsonRpcError")),
        (status = 415, description = "The body is not `application/json` (a JSON-RPC error)", content_type = "application/json", body = ref("JsonRpcError")),
        (status = 500, description = "The transport failed (a JSON-RPC error)", content_type = "application/json", body = ref("JsonRpcError")),
    )
)]
#[allow(dead_code)]
fn mcp_post() {}

#[utoipa::path(
    get,
    path = "/api/v1/mcp",
    tag = "mcp",
    operation_id = "mcpStream",
    summary = "MCP: the server's event stream for a session",
    description = "Server-sent events from the server to the client of the session named by `Mcp-Session-Id`.",
    params(("Mcp-Session-Id" = String, Header, description = "The session `initialize` answered")),
    responses(
        (status = 200, description = "An event stream", content_type = "text/event-stream", body = ref("ServerSentEvent")),
        (status = 400, description = "No session header (a JSON-RPC error)", content_type = "application/json", body = ref("JsonRpcError")),
        (status = 404, description = "Unknown or ended session (a JSON-RPC error)", content_type = "application/json", body = ref("JsonRpcError")),
        (status = 405, description = "Not offered for this session (a JSON-RPC error)", content_type = "application/json", body = ref("JsonRpcError")),
        (status = 406, description = "The Accept header does not allow event streams (a JSON-RPC error)", content_type = "application/json", body = ref("JsonRpcError")),
        (status = 500, description = "The transport failed (a JSON-RPC error)", content_type = "application/json", body = ref("JsonRpcError")),
    )
)]
#[allow(dead_code)]
fn mcp_get() {}

#[utoipa::path(
    delete,
    path = "/api/v1/mcp",
    tag = "mcp",
    operation_id = "mcpEndSession",
    summary = "MCP: end a session",
    description = "Ends the session named by `Mcp-Session-Id`. Pending actions it requested stay pending (they live in the database).",
    params(("Mcp-Session-Id" = String, Header, description = "The session `initialize` answered")),
    responses(
        (status = 200, description = "The session ended"),
        (status = 202, description = "The session ended"),
        (status = 204, description = "The session ended"),
        (status = 400, description = "No session header (a JSON-RPC error)", content_type = "application/json", body = ref("JsonRpcError")),
        (status = 404, description = "Unknown or ended session (a JSON-RPC error)", content_type = "application/json", body = ref("JsonRpcError")),
        (status = 405, description = "Not offered (a JSON-RPC error)", content_type = "application/json", body = ref("JsonRpcError")),
        (status = 500, description = "The transport failed (a JSON-RPC error)", content_type = "application/json", body = ref("JsonRpcError")),
    )
)]
#[allow(dead_code)]
fn mcp_delete() {}

/// The MCP service for the router and the door of its kept answers (`kept_answers`), which share
/// its sessions.
pub fn service(state: AppState) -> (StreamableHttpService<Server, LocalSessionManager>, Door) {
    let mut config = StreamableHttpServerConfig::default();
    let hosts = allowed_hosts(&state);
    config.allowed_hosts = hosts.clone();
    config.json_response = true;
    let sessions = Arc::new(LocalSessionManager::default());
    let door = Door::new(state.clone(), sessions.clone(), hosts);
    let service = StreamableHttpService::new(
        move || {
            Ok(Server {
                state: state.clone(),
            })
        },
        sessions,
        config,
    );
    (service, door)
}

/// A rewrite of a response's status.
pub type StatusFix<B> = fn(axum::http::Response<B>) -> axum::http::Response<B>;

/// The service for `DELETE /api/v1/mcp`: rmcp ends the session and answers 202, but the
/// clients expect 200 (the Python SDK accepts 200 or 204 and warns "Session termination failed:
/// 202" otherwise; the MCP spec leaves the status open), so an ended session is a 200.
pub fn session_end<S, B>(service: S) -> tower::util::MapResponse<S, StatusFix<B>>
where
    S: tower::Service<axum::extract::Request, Response = axum::http::Response<B>>,
{
    fn ended<B>(mut response: axum::http::Response<B>) -> axum::http::Response<B> {
        if response.status() == axum::http::StatusCode::ACCEPTED {
            *response.status_mut() = axum::http::StatusCode::OK;
        }
        response
    }
    tower::ServiceExt::map_response(service, ended as fn(_) -> _)
}

/// Transport errors as JSON-RPC errors: rmcp answers a request it cannot take (no `Accept` of
/// JSON and event streams: 406; a body that is not JSON-RPC: 400; an unknown session: 404; a wrong
/// content type: 415) in plain text. The status stays; the body becomes
/// `{"jsonrpc": "2.0", "id": null, "error": {"code", "message"}}` (-32700 for a body that does not
/// parse, -32603 for a server error, else -32600), which every MCP client reads.
pub async fn json_rpc_errors(
    req: axum::extract::Request,
    next: axum::middleware::Next,
) -> axum::response::Response {
    use axum::http::header::{CONTENT_LENGTH, CONTENT_TYPE};
    use axum::response::IntoResponse;
    let response = next.run(req).await;
    let status = response.status();
    let is_json = response
        .headers()
        .get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|c| c.starts_with("application/json"));
    if !(status.is_client_error() || status.is_server_error()) || is_json {
        return response;
    }
    let (parts, body) = response.into_parts();
    let text = axum::body::to_bytes(body, 64 * 1024)
        .await
        .map(|b| String::from_utf8_lossy(&b).trim().to_string())
        .unwrap_or_default();
    let lower = text.to_ascii_lowercase();
    let code = if status.is_server_error() {
        -32603
    } else if status == axum::http::StatusCode::BAD_REQUEST
        && (lower.contains("pars") || lower.contains("deserializ") || lower.contains("json"))
    {
        -32700
    } else {
        -32600
    };
    let message = if text.is_empty() {
        status.canonical_reason().unwrap_or("error").to_string()
    } else {
        text
    };
    let body = serde_json::json!({
        "jsonrpc": "2.0",
        "id": null,
        "error": {"code": code, "message": message},
    });
    let mut out = (status, axum::Json(body)).into_response();
    for (name, value) in parts.headers.iter() {
        if name != CONTENT_TYPE && name != CONTENT_LENGTH {
            out.headers_mut().insert(name.clone(), value.clone());
        }
    }
    out
}

/// `Host` values accepted (DNS-rebinding protection): loopback, the bind address, and the host
/// of `BALLAST_PUBLIC_URL`.
fn allowed_hosts(state: &AppState) -> Vec<String> {
    let mut hosts = vec![
        "localhost".to_string(),
        "127.0.0.1".to_string(),
        "[::1]".to_string(),
        state.config.bind.to_string(),
    ];
    if let Some(url) = &state.config.auth.public_url {
        if let Some(host) = url.split("://").nth(1).and_then(|r| r.split('/').next()) {
            hosts.push(host.to_string());
            if let Some((name, _)) = host.rsplit_once(':') {
                hosts.push(name.to_string());
            }
        }
    }
    hosts
}

/// One MCP session's handler.
#[derive(Clone)]
pub struct Server {
    state: AppState,
}

fn tool_of(op: &Operation) -> Tool {
    let description = format!(
        "[{} · {}] {}",
        op.category.as_str(),
        op.area,
        op.description
    );
    let mut annotations = ToolAnnotations::with_title(op.title)
        .read_only(op.category == Category::Read || op.name == "list_pending_actions")
        .destructive(op.category == Category::Mutate);
    annotations.idempotent_hint = Some(op.category == Category::Read);
    let mut meta = Map::new();
    meta.insert(
        "ballast/category".into(),
        json!({"category": op.category.as_str(), "area": op.area, "scope": op.scope.as_str(),
            "licensed": op.licensed, "approval": op.category == Category::Mutate}),
    );
    // No `outputSchema`: clients validate `structuredContent` against it, and an agent's answer
    // is the declared output shaped by the catalog (limits, envelopes, omissions), which nothing
    // proves conforms to the REST answer's schema (docs/api/mcp.md).
    let mut tool = Tool::new(op.name, description, Arc::new((op.schema)()))
        .with_title(op.title)
        .with_annotations(annotations);
    tool.meta = Some(rmcp::model::MetaObject(meta));
    tool
}

fn text_error(code: &str, message: impl Into<String>) -> CallToolResponse {
    let value = json!({"error": {"code": code, "message": message.into()}});
    let mut result = structured(value);
    result.is_error = Some(true);
    result.into()
}

fn op_error(e: ToolError) -> CallToolResponse {
    text_error(&e.code, e.message)
}

fn ok(value: Value) -> CallToolResponse {
    let value = match value {
        Value::Object(_) => value,
        other => json!({"result": other}),
    };
    structured(value).into()
}

/// A tool's answer (or refusal, with `isError` set) as `structuredContent` and, as the MCP
/// specification asks beside it, the same JSON as a text block. `CallToolResult::structured` writes that text through `Display`, which
/// goes through a formatter write by write: 2.7 times as long as `serde_json::to_string` on a
/// 93 KiB answer (231 against 87 µs), the largest part of a call after parsing.
fn structured(value: Value) -> CallToolResult {
    let text = serde_json::to_string(&value).unwrap_or_else(|_| value.to_string());
    let mut result = CallToolResult::structured(Value::Null);
    result.content = vec![ContentBlock::text(text)];
    result.structured_content = Some(value);
    result
}

fn identity_of(ctx: &RequestContext<RoleServer>) -> Option<Identity> {
    ctx.extensions
        .get::<Parts>()
        .and_then(|p| p.extensions.get::<Identity>())
        .cloned()
}

fn approval_json(a: &Approval, summary: Option<&str>) -> Value {
    json!({
        "token": a.id,
        "tool": a.tool,
        "arguments": a.arguments,
        "requestedBy": a.requested_by,
        "state": a.state,
        "summary": summary,
        "createdAt": ballast_runtime::format_rfc3339_ms(a.created_at_ms),
        "expiresAt": ballast_runtime::format_rfc3339_ms(a.expires_at_ms),
    })
}

impl Server {
    async fn db<T: Send + 'static>(
        &self,
        f: impl FnOnce(&ballast_schema::Store) -> Result<T, StoreError> + Send + 'static,
    ) -> Result<T, ToolError> {
        self.state.db(f).await.map_err(|e| ToolError {
            status: e.status.as_u16(),
            code: "FAILED".into(),
            message: format!("{}: {}", e.error, e.details),
        })
    }

    /// A mutate tool's request: checked, licensed, then queued.
    async fn request(
        &self,
        op: &'static Operation,
        who: &Identity,
        args: Value,
    ) -> CallToolResponse {
        let summary = match (op.check)(&args) {
            Ok(s) => s,
            Err(e) => return op_error(e),
        };
        // With anonymous access beside tokens (AUTH_ANONYMOUS), a request without a token names
        // nobody: whoever holds a token could queue as "someone else" and approve it themselves.
        if matches!(who.via, Via::Open) && self.state.config.auth.enabled() {
            return text_error(
                "FORBIDDEN",
                "a change over MCP needs a token here: send Authorization: Bearer pat_... \
                 (`ballast demo` prints two demo identities' tokens); another user's token \
                 approves it",
            );
        }
        if op.licensed {
            if let Err(refused) = catalog::licence_gate(&self.state).await {
                return op_error(refused);
            }
        }
        if let Some(gate) = op.before_queue {
            let caller = catalog::caller(
                who,
                Channel::Mcp {
                    requested_by: who.user_id.clone(),
                },
            );
            match gate(self.state.ops.clone(), caller, args.clone()).await {
                Ok(Value::Null) => {}
                Ok(answer) => return ok(answer),
                Err(e) => return op_error(e),
            }
        }
        let ttl_ms = self.state.config.timing.approval_ttl.as_millis() as i64;
        let now = self.state.clock.now_ms();
        let new = NewApproval {
            tool: op.name.to_string(),
            arguments: json!({"arguments": args, "summary": summary}),
            requested_by: Some(who.user_id.clone()),
            ttl_ms,
        };
        match self.db(move |s| s.create_approval(&new, now)).await {
            Ok(a) => {
                let mut out = approval_json(&a, Some(&summary));
                out["status"] = json!("pending_approval");
                out["arguments"] = a.arguments["arguments"].clone();
                out["message"] = json!(format!(
                    "Queued. Another person with the write scope must call approve_action with this token before {}.",
                    ballast_runtime::format_rfc3339_ms(a.expires_at_ms)
                ));
                ok(out)
            }
            Err(e) => op_error(e),
        }
    }

    async fn decide(&self, who: &Identity, args: Value, decision: Decision) -> CallToolResponse {
        let input: catalog::TokenInput = match catalog::parse(&args) {
            Ok(i) => i,
            Err(e) => return op_error(e),
        };
        let token = input.token.trim().to_string();
        let lookup = token.clone();
        let approval = match self.db(move |s| s.approval(&lookup)).await {
            Ok(Some(a)) => a,
            Ok(None) => return text_error("NOT_FOUND", format!("no pending action {token}")),
            Err(e) => return op_error(e),
        };
        if decision == Decision::Approve {
            if matches!(who.via, Via::Open) {
                return text_error(
                    "FORBIDDEN",
                    "approving needs a verified identity: send Authorization: Bearer pat_... of a \
                     user other than the requester (authentication: AUTH_PROVIDERS or \
                     AUTH_PAT_ENABLED; `ballast demo` prints two demo identities' tokens). Without \
                     one no client can be told apart from another, so nothing is approved",
                );
            }
            if approval.requested_by.as_deref() == Some(who.user_id.as_str()) {
                return text_error(
                    "FORBIDDEN",
                    format!(
                        "{} requested this action and cannot approve it: another person must",
                        who.user_id
                    ),
                );
            }
        }
        let now = self.state.clock.now_ms();
        let by = who.user_id.clone();
        let decided = match self
            .db(move |s| Ok(s.decide_approval(&token, decision, &by, now)))
            .await
        {
            Ok(Ok(a)) => a,
            Ok(Err(StoreError::Conflict(why))) => return text_error("CONFLICT", why),
            Ok(Err(StoreError::NotFound(why))) => return text_error("NOT_FOUND", why),
            Ok(Err(e)) => return text_error("FAILED", e.to_string()),
            Err(e) => return op_error(e),
        };
        if decision == Decision::Reject {
            return ok(json!({"status": "rejected", "token": decided.id, "tool": decided.tool}));
        }
        let Some(op) = catalog::find(&decided.tool) else {
            return text_error("FAILED", format!("unknown tool {}", decided.tool));
        };
        let caller = catalog::caller(
            who,
            Channel::Mcp {
                requested_by: decided
                    .requested_by
                    .clone()
                    .unwrap_or_else(|| who.user_id.clone()),
            },
        );
        let args = decided.arguments["arguments"].clone();
        let outcome = catalog::invoke(op, &self.state, caller, args).await;
        let (done, result) = match &outcome {
            Ok(v) => (
                v["status"] != "blocked" && v["status"] != "failed",
                v.clone(),
            ),
            Err(e) => (
                false,
                json!({"error": {"code": e.code, "message": e.message}}),
            ),
        };
        let id = decided.id.clone();
        let stored = result.clone();
        if let Err(e) = self
            .db(move |s| s.finish_approval(&id, done, &stored))
            .await
        {
            tracing::warn!(error = %e, "approval outcome not stored");
        }
        match outcome {
            Ok(v) => ok(
                json!({"status": if done { "executed" } else { "not_executed" },
                "token": decided.id, "tool": decided.tool, "result": v}),
            ),
            Err(e) => op_error(e),
        }
    }

    async fn pending(&self, args: Value) -> CallToolResponse {
        let input: catalog::ListInput = match catalog::parse(&args) {
            Ok(i) => i,
            Err(e) => return op_error(e),
        };
        let now = self.state.clock.now_ms();
        match self.db(move |s| s.pending_approvals(now)).await {
            Ok(list) => {
                let rows: Vec<Value> = list
                    .iter()
                    .filter(|a| a.state == ApprovalState::Pending)
                    .map(|a| {
                        let mut v = approval_json(a, a.arguments["summary"].as_str());
                        v["arguments"] = a.arguments["arguments"].clone();
                        v
                    })
                    .collect();
                ok(Value::Object(catalog::limited(
                    "actions",
                    rows,
                    Limit::new(50, 200),
                    input.limit,
                    "approve or reject the oldest first; raise limit (at most 200)",
                )))
            }
            Err(e) => op_error(e),
        }
    }
}

impl ServerHandler for Server {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("ballast", crate::VERSION))
            .with_instructions(
                "ballast keeps an Apache Kafka cluster balanced. Read tools answer at once. Mutate \
                 tools return an approval token: a second person approves with approve_action \
                 (never the requester); then the change runs and is audited.",
            )
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(
            catalog::all().iter().map(tool_of).collect(),
        ))
    }

    /// Every tool call, counted by tool and outcome (`ballast_mcp_tool_calls_total`).
    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let op = catalog::find(&request.name);
        let answer = self.call(op, request, context).await;
        let error = matches!(&answer, CallToolResponse::Complete(r) if r.is_error == Some(true));
        self.state
            .metrics
            .mcp_call(op.map_or("unknown", |op| op.name), error);
        Ok(answer)
    }
}

impl Server {
    /// The answer to a call of `op` (`None`: a name outside the catalog): a refusal or failure
    /// is an answer with `isError` set.
    async fn call(
        &self,
        op: Option<&'static Operation>,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> CallToolResponse {
        let Some(who) = identity_of(&context) else {
            return text_error("UNAUTHENTICATED", "no identity on this request");
        };
        let Some(op) = op else {
            return text_error("UNKNOWN_TOOL", format!("no tool {:?}", request.name));
        };
        if who.scope < op.scope {
            return text_error(
                "INSUFFICIENT_SCOPE",
                format!(
                    "{} needs the {} scope; {} has {}",
                    op.name,
                    op.scope.as_str(),
                    who.user_id,
                    who.scope.as_str()
                ),
            );
        }
        let args = request.arguments.map(Value::Object).unwrap_or(Value::Null);
        match (op.category, op.name) {
            (Category::Read, _) => {
                let caller = catalog::caller(
                    &who,
                    Channel::Mcp {
                        requested_by: who.user_id.clone(),
                    },
                );
                match catalog::invoke(op, &self.state, caller, args).await {
                    Ok(v) => ok(v),
                    Err(e) => op_error(e),
                }
            }
            (Category::Mutate, _) => self.request(op, &who, args).await,
            (Category::Meta, "approve_action") => self.decide(&who, args, Decision::Approve).await,
            (Category::Meta, "reject_action") => self.decide(&who, args, Decision::Reject).await,
            (Category::Meta, _) => self.pending(args).await,
        }
    }
}

/// The scope a caller needs for `tool` (per tool, not per HTTP method).
pub fn tool_scope(tool: &str) -> Option<Scope> {
    catalog::find(tool).map(|op| op.scope)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// docs/api/mcp.md: `tools/list` advertises no `outputSchema` (an agent's answer is shaped by
    /// the catalog, and clients would validate it against the schema).
    #[test]
    fn no_tool_advertises_an_output_schema_its_shaped_answer_is_not_proven_to_meet() {
        for op in crate::catalog::all() {
            assert!(tool_of(op).output_schema.is_none(), "{}", op.name);
        }
    }
}
