//! The chat assistant (docs/chat.md): `/api/v1/chat/*`, an adapter over the catalog like MCP.
//!
//! A turn sends the conversation to the configured model (`ballast_chat::Provider`) with the
//! catalog's tools the user's scope allows, streams what arrives to the client as server-sent
//! events, and stores everything in SQLite as it goes. Read tools run at once and the turn goes
//! on with their results; a mutate tool's call is checked, then waits (`pending_approval`) for
//! the user to approve or reject it; approving runs it through the catalog as the user with
//! method `CHAT` (licence gate, slot, pre-flight and audit of its REST route) and the turn goes
//! on. A turn runs in its own task: a client that goes away stops nothing half-way.

use std::convert::Infallible;
use std::pin::Pin;
use std::task::{Context, Poll};

use axum::extract::State;
use axum::http::StatusCode;
use axum::response::sse::{Event as SseEvent, KeepAlive, Sse};
use axum::routing::{get, post};
use axum::{Extension, Router};
use ballast_chat::{ChatError, Event, Message, Provider, ProviderKind, ToolSpec};
use ballast_schema::{ChatMessage, ChatToolCall, Conversation, NewChatMessage, StoreError};
use serde::Deserialize;
use serde_json::{json, Value};
use tokio::sync::mpsc;

use crate::audit::Actor;
use crate::audit::HttpActor;
use crate::auth::{Identity, Scope};
use crate::catalog::{self, Category, Channel};
use crate::extract::{Json, OptionalJson, Path};
use crate::{ApiError, ApiOk, ApiResult, AppState};

/// Model calls in one turn before it is stopped (each after tool results).
const MAX_ROUNDS: usize = 8;
/// Characters of one tool result sent to the model (the client gets it whole).
const RESULT_CHARS: usize = 16_000;
/// The history sent to the model, in characters (about a quarter as many tokens): older whole
/// exchanges (a question and everything after it) are left out first.
const HISTORY_CHARS: usize = 96_000;

const SYSTEM: &str =
    "You are ballast's assistant. ballast keeps an Apache Kafka cluster balanced: \
it observes brokers, proposes partition moves toward every broker's fair share of seven loads \
(leaders, followers, disk, producer and consumer message and byte rates), executes them as \
throttled reassignments, and heals the cluster. Answer from this cluster's live data: call the \
tools to look things up instead of guessing, and say which figures you used. Tools that change \
the cluster pause until the user approves them; propose one only when it is the fix, and say \
what it will do. Be brief.";

/// `/api/v1/chat/*` (the status route answers even when the assistant is disabled).
#[derive(utoipa::OpenApi)]
#[openapi(paths(
    status,
    create_conversation,
    list_conversations,
    get_conversation,
    delete_conversation,
    send_message,
    approve,
    reject
))]
pub(crate) struct Api;

pub fn routes() -> Router<AppState> {
    Router::new()
        .route("/api/v1/chat/status", get(status))
        .route(
            "/api/v1/chat/conversations",
            post(create_conversation).get(list_conversations),
        )
        .route(
            "/api/v1/chat/conversations/{id}",
            get(get_conversation).delete(delete_conversation),
        )
        .route(
            "/api/v1/chat/conversations/{id}/messages",
            post(send_message),
        )
        .route(
            "/api/v1/chat/conversations/{id}/approve/{toolCallId}",
            post(approve),
        )
        .route(
            "/api/v1/chat/conversations/{id}/reject/{toolCallId}",
            post(reject),
        )
}

// ------------------------------------------------------------------------------ who and what

/// The caller: the identity the auth layers put in, or the open identity of the audit header.
fn who(identity: Option<Extension<Identity>>, actor: &Actor) -> Identity {
    identity
        .map(|Extension(i)| i)
        .unwrap_or_else(|| Identity::open(actor.user.clone()))
}

/// 404 while the assistant is disabled (every route but the status): its routes are not there;
/// `GET /api/v1/chat/status` says why.
fn enabled(state: &AppState) -> Result<(), ApiError> {
    if state.config.chat.enabled {
        return Ok(());
    }
    Err(ApiError::new(
        StatusCode::NOT_FOUND,
        "chat assistant disabled",
        "set BALLAST_CHAT_ENABLED=true with BALLAST_CHAT_PROVIDER and BALLAST_CHAT_MODEL",
    ))
}

/// The configured provider, for a turn.
fn provider(state: &AppState) -> Result<Provider, ApiError> {
    enabled(state)?;
    let c = &state.config.chat;
    let kind = ProviderKind::parse(&c.provider).unwrap_or(ProviderKind::OpenAi);
    Provider::new(
        kind,
        c.base_url.as_deref(),
        c.api_key.as_ref().map(|k| k.expose().to_string()),
        c.model.as_deref().unwrap_or_default(),
        c.max_tokens,
        c.timeout,
    )
    .map_err(|e| {
        ApiError::new(
            StatusCode::SERVICE_UNAVAILABLE,
            "chat provider unavailable",
            e.to_string(),
        )
    })
}

/// The conversation `id` if it belongs to `user` (404 otherwise: another's is not there).
async fn owned(state: &AppState, id: &str, user: &str) -> Result<Conversation, ApiError> {
    let lookup = id.to_string();
    let c = state.db(move |s| s.conversation(&lookup)).await?;
    match c {
        Some(c) if c.user_id == user => Ok(c),
        _ => Err(ApiError::not_found(
            "unknown conversation",
            format!("no conversation {id}"),
        )),
    }
}

/// The tools the user may use: every read and mutate operation their scope allows.
fn tools(scope: Scope) -> Vec<ToolSpec> {
    catalog::all()
        .iter()
        .filter(|op| op.category != Category::Meta && op.scope <= scope)
        .map(|op| ToolSpec {
            name: op.name.to_string(),
            description: format!("[{}] {}", op.category.as_str(), op.description),
            parameters: Value::Object((op.schema)()),
        })
        .collect()
}

// ------------------------------------------------------------------------------ SSE

/// Events to the client; the turn's task sends, the response streams.
#[derive(Clone)]
struct Out(mpsc::UnboundedSender<SseEvent>);

impl Out {
    fn send(&self, name: &str, data: Value) {
        let event = SseEvent::default()
            .event(name)
            .json_data(&data)
            .unwrap_or_else(|_| SseEvent::default().event("error"));
        // A client that went away does not stop the turn.
        let _ = self.0.send(event);
    }
}

pub struct Events(mpsc::UnboundedReceiver<SseEvent>);

impl futures_core::Stream for Events {
    type Item = Result<SseEvent, Infallible>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        self.0.poll_recv(cx).map(|e| e.map(Ok))
    }
}

type EventStream = Sse<axum::response::sse::KeepAliveStream<Events>>;

fn stream(rx: mpsc::UnboundedReceiver<SseEvent>) -> EventStream {
    Sse::new(Events(rx)).keep_alive(KeepAlive::new().text("keepalive"))
}

// ------------------------------------------------------------------------------ the turn

fn message_json(m: &ChatMessage) -> Value {
    json!({
        "id": m.id,
        "role": m.role,
        "content": m.content,
        "toolCalls": m.tool_calls,
        "toolCallId": m.tool_call_id,
        "isError": m.is_error,
        "error": m.error,
        "at": ballast_runtime::format_rfc3339_ms(m.at_ms),
    })
}

fn call_json(c: &ChatToolCall) -> Value {
    json!({
        "id": c.id,
        "name": c.name,
        "arguments": c.arguments,
        "category": c.category,
        "state": c.state,
        "summary": c.summary,
        "result": c.result,
        "createdAt": ballast_runtime::format_rfc3339_ms(c.created_at_ms),
        "decidedAt": c.decided_at_ms.map(ballast_runtime::format_rfc3339_ms),
    })
}

/// The conversation as the model gets it: within [`HISTORY_CHARS`], dropping the oldest whole
/// exchanges; how many messages were left out.
fn history(messages: &[ChatMessage]) -> (Vec<Message>, usize) {
    let size = |m: &ChatMessage| m.content.len() + m.tool_calls.to_string().len();
    let mut start = 0;
    let mut total: usize = messages.iter().map(size).sum();
    while total > HISTORY_CHARS {
        // the next user message after `start` begins the next exchange
        let Some(next) = messages
            .iter()
            .enumerate()
            .skip(start + 1)
            .find(|(_, m)| m.role == "user")
            .map(|(i, _)| i)
        else {
            break;
        };
        total -= messages[start..next].iter().map(size).sum::<usize>();
        start = next;
    }
    let out = messages[start..]
        .iter()
        .filter_map(|m| match m.role.as_str() {
            "user" => Some(Message::User {
                text: m.content.clone(),
            }),
            "assistant" => {
                let calls: Vec<ballast_chat::ToolCall> =
                    serde_json::from_value(m.tool_calls.clone()).unwrap_or_default();
                (!m.content.is_empty() || !calls.is_empty()).then(|| Message::Assistant {
                    text: m.content.clone(),
                    tool_calls: calls,
                })
            }
            _ => Some(Message::ToolResult {
                call_id: m.tool_call_id.clone().unwrap_or_default(),
                content: m.content.clone(),
                is_error: m.is_error,
            }),
        })
        .collect();
    (out, start)
}

fn for_model(v: &Value) -> String {
    let text = v.to_string();
    if text.len() <= RESULT_CHARS {
        return text;
    }
    let cut: String = text.chars().take(RESULT_CHARS).collect();
    format!("{cut}… (cut at {RESULT_CHARS} characters; ask with narrower parameters)")
}

fn tool_message(call_id: &str, content: String, is_error: bool) -> NewChatMessage {
    NewChatMessage {
        role: "tool",
        content,
        tool_calls: json!([]),
        tool_call_id: Some(call_id.to_string()),
        is_error,
        error: None,
    }
}

/// Runs a catalog operation for the chat user and records the result; the client sees
/// `tool_call_finished`.
async fn run_tool(
    state: &AppState,
    identity: &Identity,
    conversation: &str,
    call_id: &str,
    name: &str,
    args: Value,
    out: &Out,
) -> Result<(), ApiError> {
    let outcome = match catalog::find(name) {
        Some(op) => {
            let caller = catalog::caller(
                identity,
                Channel::Chat {
                    user: identity.user_id.clone(),
                },
            );
            catalog::invoke(op, state, caller, args).await
        }
        None => Err(catalog::ToolError::invalid(format!("no tool {name}"))),
    };
    let (ok, result) = match outcome {
        Ok(v) => (v["status"] != "failed" && v["status"] != "blocked", v),
        Err(e) => (
            false,
            json!({"error": {"code": e.code, "message": e.message}}),
        ),
    };
    let (conv, id, stored) = (
        conversation.to_string(),
        call_id.to_string(),
        result.clone(),
    );
    let content = for_model(&result);
    let message = tool_message(call_id, content, !ok);
    let now = state.clock.now_ms();
    state
        .db(move |s| {
            s.finish_chat_tool_call(&conv, &id, ok, &stored)?;
            s.add_chat_message(&conv, &message, now)
        })
        .await?;
    out.send(
        "tool_call_finished",
        json!({"toolCallId": call_id, "name": name, "ok": ok, "result": result}),
    );
    Ok(())
}

/// Model calls until the model answers without tools, a mutation waits for approval, or a
/// failure; then `done`.
async fn turn(state: AppState, identity: Identity, conversation: String, out: Out) {
    let status = match rounds(&state, &identity, &conversation, &out).await {
        Ok(status) => status,
        Err(e) => {
            out.send(
                "error",
                json!({"code": "internal", "message": format!("{}: {}", e.error, e.details)}),
            );
            "error"
        }
    };
    out.send("done", json!({"status": status}));
}

async fn rounds(
    state: &AppState,
    identity: &Identity,
    conversation: &str,
    out: &Out,
) -> Result<&'static str, ApiError> {
    let provider = provider(state)?;
    let tools = tools(identity.scope);
    for _ in 0..MAX_ROUNDS {
        let conv = conversation.to_string();
        let (messages, calls) = state
            .db(move |s| Ok((s.chat_messages(&conv)?, s.chat_tool_calls(&conv)?)))
            .await?;
        if calls.iter().any(|c| c.state == "pending_approval") {
            return Ok("awaiting_approval");
        }
        let (history, dropped) = history(&messages);
        let system = if dropped > 0 {
            format!("{SYSTEM}\n\nThe {dropped} earliest messages of this conversation are left out for length.")
        } else {
            SYSTEM.to_string()
        };
        let live = out.clone();
        let result = provider
            .stream(&system, &history, &tools, move |e| match e {
                Event::Text(t) => live.send("text", json!({"delta": t})),
                Event::ToolCallStarted { id, name } => {
                    live.send("tool_call_started", json!({"toolCallId": id, "name": name}))
                }
                Event::ToolCallFinished(_) => {}
            })
            .await;
        let now = state.clock.now_ms();
        let turn = match result {
            Ok(turn) => turn,
            Err(failure) => {
                let message = NewChatMessage {
                    role: "assistant",
                    content: failure.partial_text.clone(),
                    tool_calls: json!([]),
                    tool_call_id: None,
                    is_error: true,
                    error: Some(
                        json!({"code": failure.error.code(), "message": failure.error.to_string()}),
                    ),
                };
                let conv = conversation.to_string();
                state
                    .db(move |s| s.add_chat_message(&conv, &message, now))
                    .await?;
                out.send("error", error_json(&failure.error));
                return Ok("error");
            }
        };
        let assistant = NewChatMessage {
            role: "assistant",
            content: turn.text.clone(),
            tool_calls: serde_json::to_value(&turn.tool_calls).unwrap_or(json!([])),
            tool_call_id: None,
            is_error: false,
            error: None,
        };
        let conv = conversation.to_string();
        let message_id = state
            .db(move |s| s.add_chat_message(&conv, &assistant, now))
            .await?;
        out.send(
            "message",
            json!({"messageId": message_id, "role": "assistant", "content": turn.text,
                "stopReason": turn.stop, "usage": turn.usage}),
        );
        if turn.tool_calls.is_empty() {
            return Ok("complete");
        }
        let mut waiting = false;
        for call in turn.tool_calls {
            let op = catalog::find(&call.name)
                .filter(|op| op.category != Category::Meta && op.scope <= identity.scope);
            let (category, state_name, summary, refusal) = match op {
                None => (
                    "read",
                    "failed",
                    None,
                    Some(format!("no tool {} is available to this user", call.name)),
                ),
                Some(op) if op.category == Category::Read => ("read", "running", None, None),
                Some(op) => match (op.check)(&call.arguments) {
                    Err(e) => (
                        "mutate",
                        "failed",
                        None,
                        Some(format!("invalid input: {}", e.message)),
                    ),
                    Ok(summary) => {
                        let refused = if op.licensed {
                            catalog::licence_gate(state).await.err()
                        } else {
                            None
                        };
                        match refused {
                            Some(r) => (
                                "mutate",
                                "failed",
                                Some(summary),
                                Some(format!("licence: {}", r.message)),
                            ),
                            None => ("mutate", "pending_approval", Some(summary), None),
                        }
                    }
                },
            };
            let record = ChatToolCall {
                conversation_id: conversation.to_string(),
                id: call.id.clone(),
                name: call.name.clone(),
                arguments: call.arguments.clone(),
                category: category.to_string(),
                state: state_name.to_string(),
                summary: summary.clone(),
                result: refusal.as_ref().map(|r| json!({"error": r})),
                created_at_ms: now,
                decided_at_ms: None,
            };
            let refusal_message = refusal
                .as_ref()
                .map(|r| tool_message(&call.id, format!("refused: {r}"), true));
            let conv = conversation.to_string();
            state
                .db(move |s| {
                    s.add_chat_tool_call(&record)?;
                    if let Some(m) = &refusal_message {
                        s.add_chat_message(&conv, m, now)?;
                    }
                    Ok(())
                })
                .await?;
            match (state_name, refusal) {
                (_, Some(r)) => out.send(
                    "tool_call_finished",
                    json!({"toolCallId": call.id, "name": call.name, "ok": false, "result": {"error": r}}),
                ),
                ("pending_approval", None) => {
                    waiting = true;
                    out.send(
                        "approval_needed",
                        json!({"toolCallId": call.id, "name": call.name, "arguments": call.arguments,
                            "summary": summary,
                            "approve": format!("/api/v1/chat/conversations/{conversation}/approve/{}", call.id),
                            "reject": format!("/api/v1/chat/conversations/{conversation}/reject/{}", call.id)}),
                    );
                }
                _ => {
                    run_tool(
                        state,
                        identity,
                        conversation,
                        &call.id,
                        &call.name,
                        call.arguments,
                        out,
                    )
                    .await?
                }
            }
        }
        if waiting {
            return Ok("awaiting_approval");
        }
    }
    out.send(
        "error",
        json!({"code": "too_many_rounds", "message": format!("the model called tools {MAX_ROUNDS} times in a row; ask again")}),
    );
    Ok("error")
}

fn error_json(e: &ChatError) -> Value {
    let mut v = json!({"code": e.code(), "message": e.to_string()});
    if let ChatError::RateLimited {
        retry_after: Some(d),
    } = e
    {
        v["retryAfterSeconds"] = json!(d.as_secs());
    }
    v
}

// ------------------------------------------------------------------------------ handlers

#[utoipa::path(
    get,
    path = "/api/v1/chat/status",
    tag = "chat",
    operation_id = "chatStatus",
    summary = "Whether the assistant is available, and why not",
    description = "`enabled`, `available`, `reason` (`disabled`, `no_model`, `provider_unreachable`, or null), `provider`, `model`, `baseUrl`. The provider is probed with a short request to its base URL. docs/chat.md.",
    responses((status = 200, description = "Availability"))
)]
pub async fn status(State(state): State<AppState>) -> ApiResult<Value> {
    let c = &state.config.chat;
    let kind = ProviderKind::parse(&c.provider).unwrap_or(ProviderKind::OpenAi);
    let base = c
        .base_url
        .clone()
        .unwrap_or_else(|| kind.default_base_url().to_string());
    let (available, reason, detail) = if !c.enabled {
        (
            false,
            Some("disabled"),
            Some("BALLAST_CHAT_ENABLED is false".to_string()),
        )
    } else if c.model.is_none() {
        (
            false,
            Some("no_model"),
            Some("BALLAST_CHAT_MODEL is not set".to_string()),
        )
    } else {
        match probe(&base, c.timeout.min(std::time::Duration::from_secs(5))).await {
            Ok(()) => (true, None, None),
            Err(why) => (false, Some("provider_unreachable"), Some(why)),
        }
    };
    Ok(ApiOk(json!({
        "enabled": c.enabled,
        "available": available,
        "reason": reason,
        "detail": detail,
        "provider": kind.as_str(),
        "model": c.model,
        "baseUrl": base,
    })))
}

/// Any HTTP answer from the provider's base URL counts as reachable.
async fn probe(base: &str, timeout: std::time::Duration) -> Result<(), String> {
    let client = reqwest::Client::builder()
        .timeout(timeout)
        .build()
        .map_err(|e| e.to_string())?;
    client.get(base).send().await.map(|_| ()).map_err(|e| {
        let mut why = e.to_string();
        if let Some(url) = e.url() {
            why = why.replace(url.as_str(), base);
        }
        why
    })
}

#[derive(Debug, Default, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct NewConversation {
    /// A title; the first question names it when empty.
    #[serde(default)]
    title: Option<String>,
}

#[utoipa::path(
    post,
    path = "/api/v1/chat/conversations",
    tag = "chat",
    operation_id = "createConversation",
    summary = "Start a conversation",
    request_body(content = inline(NewConversation), description = "`{\"title\"?}`"),
    responses(
        (status = 200, description = "The conversation"),
        (status = 404, description = "The assistant is disabled (`chat assistant disabled`)"),
    )
)]
pub async fn create_conversation(
    State(state): State<AppState>,
    identity: Option<Extension<Identity>>,
    HttpActor(actor): HttpActor,
    OptionalJson(body): OptionalJson<NewConversation>,
) -> ApiResult<Value> {
    enabled(&state)?;
    let who = who(identity, &actor);
    let title = body
        .title
        .unwrap_or_default()
        .chars()
        .take(200)
        .collect::<String>();
    let now = state.clock.now_ms();
    let c = state
        .db(move |s| s.create_conversation(&who.user_id, &title, now))
        .await?;
    Ok(ApiOk(conversation_json(&c)))
}

fn conversation_json(c: &Conversation) -> Value {
    json!({
        "id": c.id,
        "title": c.title,
        "createdAt": ballast_runtime::format_rfc3339_ms(c.created_at_ms),
        "updatedAt": ballast_runtime::format_rfc3339_ms(c.updated_at_ms),
    })
}

#[utoipa::path(
    get,
    path = "/api/v1/chat/conversations",
    tag = "chat",
    operation_id = "listConversations",
    summary = "The caller's conversations, most recently active first",
    responses((status = 200, description = "`conversations[]`"), (status = 404, description = "The assistant is disabled (`chat assistant disabled`)"))
)]
pub async fn list_conversations(
    State(state): State<AppState>,
    identity: Option<Extension<Identity>>,
    HttpActor(actor): HttpActor,
) -> ApiResult<Value> {
    enabled(&state)?;
    let who = who(identity, &actor);
    let list = state.db(move |s| s.conversations(&who.user_id)).await?;
    Ok(ApiOk(json!({
        "count": list.len(),
        "conversations": list.iter().map(conversation_json).collect::<Vec<_>>(),
    })))
}

#[utoipa::path(
    get,
    path = "/api/v1/chat/conversations/{id}",
    tag = "chat",
    operation_id = "getConversation",
    summary = "A conversation with its messages and tool calls",
    params(("id" = String, Path, description = "conversation id")),
    responses((status = 200, description = "The conversation"), (status = 404, description = "Not the caller's, or unknown"))
)]
pub async fn get_conversation(
    State(state): State<AppState>,
    Path(id): Path<String>,
    identity: Option<Extension<Identity>>,
    HttpActor(actor): HttpActor,
) -> ApiResult<Value> {
    enabled(&state)?;
    let who = who(identity, &actor);
    let c = owned(&state, &id, &who.user_id).await?;
    let (messages, calls) = state
        .db(move |s| Ok((s.chat_messages(&id)?, s.chat_tool_calls(&id)?)))
        .await?;
    let mut out = conversation_json(&c);
    out["messages"] = messages.iter().map(message_json).collect();
    out["toolCalls"] = calls.iter().map(call_json).collect();
    out["pending"] = calls
        .iter()
        .filter(|c| c.state == "pending_approval")
        .map(|c| json!(c.id))
        .collect();
    Ok(ApiOk(out))
}

#[utoipa::path(
    delete,
    path = "/api/v1/chat/conversations/{id}",
    tag = "chat",
    operation_id = "deleteConversation",
    summary = "Delete a conversation with its messages",
    params(("id" = String, Path, description = "conversation id")),
    responses((status = 200, description = "Deleted"), (status = 404, description = "Not the caller's, or unknown"))
)]
pub async fn delete_conversation(
    State(state): State<AppState>,
    Path(id): Path<String>,
    identity: Option<Extension<Identity>>,
    HttpActor(actor): HttpActor,
) -> ApiResult<Value> {
    enabled(&state)?;
    let who = who(identity, &actor);
    owned(&state, &id, &who.user_id).await?;
    let gone = id.clone();
    state.db(move |s| s.delete_conversation(&gone)).await?;
    Ok(ApiOk(json!({"id": id, "deleted": true})))
}

#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct NewMessage {
    /// The question.
    content: String,
}

#[utoipa::path(
    post,
    path = "/api/v1/chat/conversations/{id}/messages",
    tag = "chat",
    operation_id = "sendChatMessage",
    summary = "Ask: the answer streams as server-sent events",
    description = "`{\"content\": \"...\"}`. Events: `text` {delta}, `tool_call_started` {toolCallId, name}, `tool_call_finished` {toolCallId, name, ok, result}, `approval_needed` {toolCallId, name, arguments, summary, approve, reject}, `message` {messageId, role, content, stopReason, usage} after each model answer, `error` {code, message, retryAfterSeconds?}, and last `done` {status: complete | awaiting_approval | error}. docs/chat.md.",
    params(("id" = String, Path, description = "conversation id")),
    request_body(content = inline(NewMessage), description = "`{\"content\"}`"),
    responses(
        (status = 200, description = "Server-sent events", content_type = "text/event-stream", body = ref("ServerSentEvent")),
        (status = 400, description = "Empty content"),
        (status = 404, description = "Not the caller's conversation, or the assistant is disabled (`chat assistant disabled`)"),
        (status = 409, description = "A tool call waits for approval"),
    )
)]
pub async fn send_message(
    State(state): State<AppState>,
    Path(id): Path<String>,
    identity: Option<Extension<Identity>>,
    HttpActor(actor): HttpActor,
    Json(body): Json<NewMessage>,
) -> Result<EventStream, ApiError> {
    enabled(&state)?;
    let who = who(identity, &actor);
    let conversation = owned(&state, &id, &who.user_id).await?;
    let content = body.content.trim().to_string();
    if content.is_empty() {
        return Err(ApiError::bad_request(
            "invalid body",
            "content: ask something",
        ));
    }
    let conv = id.clone();
    let calls = state.db(move |s| s.chat_tool_calls(&conv)).await?;
    if let Some(c) = calls.iter().find(|c| c.state == "pending_approval") {
        return Err(ApiError::new(
            StatusCode::CONFLICT,
            "a tool call waits for approval",
            format!(
                "approve or reject {} ({}) first",
                c.id,
                c.summary.as_deref().unwrap_or(&c.name)
            ),
        ));
    }
    let now = state.clock.now_ms();
    let conv = id.clone();
    let untitled = conversation.title.is_empty();
    let title: String = content.chars().take(80).collect();
    let question = NewChatMessage {
        role: "user",
        content,
        tool_calls: json!([]),
        tool_call_id: None,
        is_error: false,
        error: None,
    };
    state
        .db(move |s| {
            if untitled {
                s.set_conversation_title(&conv, &title)?;
            }
            s.add_chat_message(&conv, &question, now)
        })
        .await?;
    let (tx, rx) = mpsc::unbounded_channel();
    tokio::spawn(turn(state, who, id, Out(tx)));
    Ok(stream(rx))
}

async fn decide(
    state: AppState,
    id: String,
    call_id: String,
    identity: Identity,
    approve: bool,
) -> Result<EventStream, ApiError> {
    enabled(&state)?;
    owned(&state, &id, &identity.user_id).await?;
    let (conv, cid) = (id.clone(), call_id.clone());
    let current = state
        .db(move |s| Ok(s.chat_tool_calls(&conv)?.into_iter().find(|c| c.id == cid)))
        .await?;
    let Some(call) = current else {
        return Err(ApiError::not_found(
            "unknown tool call",
            format!("no tool call {call_id} in this conversation"),
        ));
    };
    if approve {
        let allowed = catalog::find(&call.name).is_some_and(|op| op.scope <= identity.scope);
        if !allowed {
            return Err(ApiError::new(
                StatusCode::FORBIDDEN,
                "insufficient scope",
                format!("{} needs the write scope", call.name),
            ));
        }
    }
    let now = state.clock.now_ms();
    let (conv, cid) = (id.clone(), call_id.clone());
    let decided = state
        .db(move |s| Ok(s.decide_chat_tool_call(&conv, &cid, approve, now)))
        .await?;
    let call = match decided {
        Ok(c) => c,
        Err(StoreError::Conflict(why)) => {
            return Err(ApiError::new(StatusCode::CONFLICT, "already decided", why))
        }
        Err(StoreError::NotFound(why)) => {
            return Err(ApiError::not_found("unknown tool call", why))
        }
        Err(e) => return Err(ApiError::internal("database", e.to_string())),
    };
    let (tx, rx) = mpsc::unbounded_channel();
    let out = Out(tx);
    tokio::spawn(async move {
        let done = if approve {
            run_tool(
                &state,
                &identity,
                &id,
                &call.id,
                &call.name,
                call.arguments.clone(),
                &out,
            )
            .await
        } else {
            let (conv, cid) = (id.clone(), call.id.clone());
            let message = tool_message(
                &call.id,
                "refused: the user rejected this action".into(),
                true,
            );
            let now = state.clock.now_ms();
            let r = state
                .db(move |s| {
                    s.finish_chat_tool_call(&conv, &cid, false, &json!({"rejected": true}))?;
                    s.add_chat_message(&conv, &message, now)
                })
                .await
                .map(|_| ());
            out.send(
                "tool_call_finished",
                json!({"toolCallId": call.id, "name": call.name, "ok": false, "result": {"rejected": true}}),
            );
            r
        };
        match done {
            Ok(()) => turn(state, identity, id, out).await,
            Err(e) => {
                out.send(
                    "error",
                    json!({"code": "internal", "message": format!("{}: {}", e.error, e.details)}),
                );
                out.send("done", json!({"status": "error"}));
            }
        }
    });
    Ok(stream(rx))
}

#[utoipa::path(
    post,
    path = "/api/v1/chat/conversations/{id}/approve/{toolCallId}",
    tag = "chat",
    operation_id = "approveChatToolCall",
    summary = "Approve a pending mutation: it runs, then the answer continues (server-sent events)",
    description = "Runs the tool call as the chat user (audit method `CHAT`), then continues the turn with its result; the same events as sending a message. 409 when it was already decided; 403 without the write scope.",
    params(("id" = String, Path, description = "conversation id"), ("toolCallId" = String, Path, description = "the tool call")),
    responses(
        (status = 200, description = "Server-sent events", content_type = "text/event-stream", body = ref("ServerSentEvent")),
        (status = 403, description = "The caller's scope does not allow it"),
        (status = 404, description = "Unknown conversation or tool call"),
        (status = 409, description = "Already decided"),
    )
)]
pub async fn approve(
    State(state): State<AppState>,
    Path((id, call_id)): Path<(String, String)>,
    identity: Option<Extension<Identity>>,
    HttpActor(actor): HttpActor,
) -> Result<EventStream, ApiError> {
    let who = who(identity, &actor);
    decide(state, id, call_id, who, true).await
}

#[utoipa::path(
    post,
    path = "/api/v1/chat/conversations/{id}/reject/{toolCallId}",
    tag = "chat",
    operation_id = "rejectChatToolCall",
    summary = "Reject a pending mutation: the model is told, and the answer continues (server-sent events)",
    params(("id" = String, Path, description = "conversation id"), ("toolCallId" = String, Path, description = "the tool call")),
    responses(
        (status = 200, description = "Server-sent events", content_type = "text/event-stream", body = ref("ServerSentEvent")),
        (status = 404, description = "Unknown conversation or tool call"),
        (status = 409, description = "Already decided"),
    )
)]
pub async fn reject(
    State(state): State<AppState>,
    Path((id, call_id)): Path<(String, String)>,
    identity: Option<Extension<Identity>>,
    HttpActor(actor): HttpActor,
) -> Result<EventStream, ApiError> {
    let who = who(identity, &actor);
    decide(state, id, call_id, who, false).await
}

#[cfg(test)]
mod tests {
    use super::*;

    fn msg(id: i64, role: &str, content: &str) -> ChatMessage {
        ChatMessage {
            id,
            conversation_id: "c".into(),
            at_ms: id,
            role: role.into(),
            content: content.into(),
            tool_calls: json!([]),
            tool_call_id: (role == "tool").then(|| "call".to_string()),
            is_error: false,
            error: None,
        }
    }

    #[test]
    fn the_history_keeps_the_newest_whole_exchanges_within_its_budget() {
        let big = "x".repeat(HISTORY_CHARS / 2);
        let messages = vec![
            msg(1, "user", &big),
            msg(2, "assistant", "a"),
            msg(3, "user", &big),
            msg(4, "assistant", "b"),
            msg(5, "tool", "r"),
            msg(6, "user", "now?"),
        ];
        let (kept, dropped) = history(&messages);
        assert_eq!(dropped, 2, "the oldest exchange goes");
        assert!(matches!(&kept[0], Message::User { text } if text == &big));
        assert_eq!(kept.len(), 4);
        let (all, none) = history(&messages[2..]);
        assert_eq!((all.len(), none), (4, 0), "within the budget nothing goes");
    }

    #[test]
    fn tool_results_for_the_model_are_cut_with_a_note() {
        let long = json!({"rows": "y".repeat(RESULT_CHARS * 2)});
        let text = for_model(&long);
        assert!(text.chars().count() < RESULT_CHARS + 200);
        assert!(text.ends_with("ask with narrower parameters)"));
        assert_eq!(for_model(&json!({"a": 1})), "{\"a\":1}");
    }

    #[tokio::test]
    async fn the_status_probe_tells_an_unreachable_provider_from_a_reachable_one() {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind");
        let addr = listener.local_addr().expect("addr");
        tokio::spawn(async move {
            // any path answers (a fallback, not a route: routes are the API's, scanned by tests)
            let app: Router = Router::new().fallback(|| async { "ok" });
            let _ = axum::serve(listener, app).await;
        });
        let timeout = std::time::Duration::from_secs(2);
        assert!(probe(&format!("http://{addr}/v1"), timeout).await.is_ok());
        let closed = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .expect("a free port");
        let why = probe(&format!("http://{closed}/v1"), timeout)
            .await
            .expect_err("unreachable");
        assert!(!why.is_empty());
    }
}
