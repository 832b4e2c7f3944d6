//! The chat assistant against the real binary and a simulated cluster, with a scripted model
//! provider on loopback that answers in the OpenAI chat-completions and Anthropic Messages
//! streaming wire formats: a read tool runs and the answer goes on; a mutation waits, is
//! approved, changes the cluster and is audited as `CHAT`; provider failures end the turn with an
//! `error` event and keep the conversation; another user never sees it.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::body::Body;
use axum::http::StatusCode;
use axum::response::Response;
use axum::routing::post;
use axum::Router;
use serde_json::{json, Value};

use crate::cluster::Sim;
use crate::support::{wait_for, Service};

/// One scripted answer: a status and a body (an SSE stream, or an error document).
pub(crate) type Answer = (u16, String);

/// A model provider that plays its answers in order and keeps every request.
pub(crate) struct ScriptedProvider {
    pub(crate) base: String,
    answers: Arc<Mutex<VecDeque<Answer>>>,
    requests: Arc<Mutex<Vec<Value>>>,
    _runtime: tokio::runtime::Runtime,
}

impl ScriptedProvider {
    pub(crate) fn start() -> ScriptedProvider {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .expect("runtime");
        let answers: Arc<Mutex<VecDeque<Answer>>> = Arc::default();
        let requests: Arc<Mutex<Vec<Value>>> = Arc::default();
        let (a, r) = (answers.clone(), requests.clone());
        let handler = move |body: String| {
            let (a, r) = (a.clone(), r.clone());
            async move {
                if let Ok(mut r) = r.lock() {
                    r.push(serde_json::from_str(&body).unwrap_or(Value::Null));
                }
                let (status, body) = a.lock().ok().and_then(|mut q| q.pop_front()).unwrap_or((
                    500,
                    r#"{"error":{"message":"no scripted answer left"}}"#.into(),
                ));
                // The stream in pieces of 29 bytes: lines and JSON cut anywhere.
                let pieces: Vec<Result<bytes::Bytes, std::convert::Infallible>> = body
                    .as_bytes()
                    .chunks(29)
                    .map(|c| Ok(bytes::Bytes::copy_from_slice(c)))
                    .collect();
                Response::builder()
                    .status(StatusCode::from_u16(status).unwrap_or(StatusCode::OK))
                    .header("content-type", "text/event-stream")
                    .body(Body::from_stream(futures_util::stream::iter(pieces)))
                    .unwrap_or_default()
            }
        };
        let app = Router::new()
            .route("/v1/chat/completions", post(handler.clone()))
            .route("/v1/messages", post(handler));
        let listener = runtime
            .block_on(tokio::net::TcpListener::bind("127.0.0.1:0"))
            .expect("bind");
        let addr = listener.local_addr().expect("addr");
        runtime.spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        ScriptedProvider {
            base: format!("http://{addr}"),
            answers,
            requests,
            _runtime: runtime,
        }
    }

    pub(crate) fn then(&self, answer: Answer) {
        if let Ok(mut q) = self.answers.lock() {
            q.push_back(answer);
        }
    }

    fn requests(&self) -> Vec<Value> {
        self.requests.lock().map(|r| r.clone()).unwrap_or_default()
    }
}

// ---- the OpenAI chat-completions stream

fn openai_chunk(delta: Value, finish: Option<&str>) -> String {
    let chunk = json!({"id": "chatcmpl-e2e", "object": "chat.completion.chunk", "created": 1,
        "model": "test-model", "choices": [{"index": 0, "delta": delta, "logprobs": null, "finish_reason": finish}]});
    format!("data: {chunk}\n\n")
}

pub(crate) fn openai_text(text: &str) -> Answer {
    let mut s = openai_chunk(json!({"role": "assistant", "content": ""}), None);
    for word in text.split_inclusive(' ') {
        s += &openai_chunk(json!({"content": word}), None);
    }
    s += &openai_chunk(json!({}), Some("stop"));
    s += "data: {\"id\":\"chatcmpl-e2e\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"test-model\",\"choices\":[],\"usage\":{\"prompt_tokens\":900,\"completion_tokens\":12,\"total_tokens\":912}}\n\n";
    s += "data: [DONE]\n\n";
    (200, s)
}

/// A tool call whose arguments arrive in three pieces.
pub(crate) fn openai_tool_call(id: &str, name: &str, args: &Value) -> Answer {
    let text = args.to_string();
    let (a, rest) = text.split_at(text.len() / 3);
    let (b, c) = rest.split_at(rest.len() / 2);
    let mut s = openai_chunk(json!({"role": "assistant", "content": null}), None);
    s += &openai_chunk(
        json!({"tool_calls": [{"index": 0, "id": id, "type": "function", "function": {"name": name, "arguments": ""}}]}),
        None,
    );
    for piece in [a, b, c] {
        s += &openai_chunk(
            json!({"tool_calls": [{"index": 0, "function": {"arguments": piece}}]}),
            None,
        );
    }
    s += &openai_chunk(json!({}), Some("tool_calls"));
    s += "data: [DONE]\n\n";
    (200, s)
}

// ---- the Anthropic Messages stream

fn anthropic_event(name: &str, data: Value) -> String {
    format!("event: {name}\ndata: {data}\n\n")
}

fn anthropic_tool_call(id: &str, name: &str, args: &Value) -> Answer {
    let text = args.to_string();
    let (a, b) = text.split_at(text.len() / 2);
    let mut s = anthropic_event(
        "message_start",
        json!({"type": "message_start", "message": {"id": "msg_e2e", "type": "message", "role": "assistant", "content": [], "model": "test-model", "stop_reason": null, "usage": {"input_tokens": 900, "output_tokens": 1}}}),
    );
    s += &anthropic_event(
        "content_block_start",
        json!({"type": "content_block_start", "index": 0, "content_block": {"type": "tool_use", "id": id, "name": name, "input": {}}}),
    );
    s += &anthropic_event("ping", json!({"type": "ping"}));
    for piece in [a, b] {
        s += &anthropic_event(
            "content_block_delta",
            json!({"type": "content_block_delta", "index": 0, "delta": {"type": "input_json_delta", "partial_json": piece}}),
        );
    }
    s += &anthropic_event(
        "content_block_stop",
        json!({"type": "content_block_stop", "index": 0}),
    );
    s += &anthropic_event(
        "message_delta",
        json!({"type": "message_delta", "delta": {"stop_reason": "tool_use", "stop_sequence": null}, "usage": {"output_tokens": 30}}),
    );
    s += &anthropic_event("message_stop", json!({"type": "message_stop"}));
    (200, s)
}

fn anthropic_text(text: &str) -> Answer {
    let mut s = anthropic_event(
        "message_start",
        json!({"type": "message_start", "message": {"id": "msg_e2e2", "type": "message", "role": "assistant", "content": [], "model": "test-model", "stop_reason": null, "usage": {"input_tokens": 950, "output_tokens": 1}}}),
    );
    s += &anthropic_event(
        "content_block_start",
        json!({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}),
    );
    for word in text.split_inclusive(' ') {
        s += &anthropic_event(
            "content_block_delta",
            json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": word}}),
        );
    }
    s += &anthropic_event(
        "content_block_stop",
        json!({"type": "content_block_stop", "index": 0}),
    );
    s += &anthropic_event(
        "message_delta",
        json!({"type": "message_delta", "delta": {"stop_reason": "end_turn", "stop_sequence": null}, "usage": {"output_tokens": 15}}),
    );
    s += &anthropic_event("message_stop", json!({"type": "message_stop"}));
    (200, s)
}

// ---- the client side

/// The SSE events of a chat response, in order: (event, data).
fn events(response: reqwest::blocking::Response) -> Vec<(String, Value)> {
    assert_eq!(response.status().as_u16(), 200, "chat answer status");
    assert!(response
        .headers()
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("text/event-stream")));
    let text = response.text().expect("stream");
    let mut out = Vec::new();
    for block in text.split("\n\n") {
        let mut name = None;
        let mut data = String::new();
        for line in block.lines() {
            if let Some(n) = line.strip_prefix("event:") {
                name = Some(n.trim().to_string());
            } else if let Some(d) = line.strip_prefix("data:") {
                data.push_str(d.trim_start());
            }
        }
        if let Some(name) = name {
            out.push((name, serde_json::from_str(&data).unwrap_or(Value::Null)));
        }
    }
    out
}

fn names(events: &[(String, Value)]) -> Vec<&str> {
    events.iter().map(|(n, _)| n.as_str()).collect()
}

fn text_of(events: &[(String, Value)]) -> String {
    events
        .iter()
        .filter(|(n, _)| n == "text")
        .filter_map(|(_, d)| d["delta"].as_str())
        .collect()
}

struct Chat<'a> {
    service: &'a Service,
    user: &'static str,
}

impl Chat<'_> {
    /// A POST with `body`, or none for Null (routes that take none refuse one).
    fn post(&self, path: &str, body: Value) -> reqwest::blocking::Response {
        let request = reqwest::blocking::Client::new()
            .post(self.service.url(path))
            .header("X-Ballast-User", self.user)
            .timeout(Duration::from_secs(60));
        let request = if body.is_null() {
            request
        } else {
            request.json(&body)
        };
        request.send().expect("post")
    }

    fn get(&self, path: &str) -> (u16, Value) {
        let r = reqwest::blocking::Client::new()
            .get(self.service.url(path))
            .header("X-Ballast-User", self.user)
            .send()
            .expect("get");
        (r.status().as_u16(), r.json().unwrap_or(Value::Null))
    }
}

fn start(sim: &Sim, provider: &str, base: &str) -> Service {
    let license = crate::license::dev_license();
    let service = Service::start_with(&[
        ("LICENSE_STRING", license.as_str()),
        ("BALLAST_KAFKA_BOOTSTRAP_SERVERS", sim.bootstrap.as_str()),
        ("BALLAST_SAMPLE_INTERVAL", "1s"),
        ("BALLAST_CHAT_ENABLED", "true"),
        ("BALLAST_CHAT_PROVIDER", provider),
        ("BALLAST_CHAT_BASE_URL", base),
        ("BALLAST_CHAT_API_KEY", "sk-e2e-secret"),
        ("BALLAST_CHAT_MODEL", "test-model"),
        ("BALLAST_CHAT_TIMEOUT", "5s"),
    ]);
    wait_for(Duration::from_secs(20), "ready", || {
        let r = reqwest::blocking::get(service.url("/api/v1/ready")).ok()?;
        (r.status().as_u16() == 200).then_some(())
    });
    service
}

#[test]
fn the_assistant_reads_with_tools_and_changes_the_cluster_only_after_its_user_approves() {
    let sim = Sim::start();
    let provider = ScriptedProvider::start();
    let service = start(&sim, "openai", &format!("{}/v1", provider.base));
    let alice = Chat {
        service: &service,
        user: "alice",
    };

    let (_, status) = alice.get("/api/v1/chat/status");
    assert_eq!(status["data"]["available"], true, "{status}");
    assert_eq!(status["data"]["provider"], "openai");

    let conv = alice.post("/api/v1/chat/conversations", json!({}));
    let conv: Value = conv.json().expect("json");
    let id = conv["data"]["id"].as_str().expect("id").to_string();
    let messages = format!("/api/v1/chat/conversations/{id}/messages");

    // a read tool runs at once and the answer goes on with its result
    provider.then(openai_tool_call(
        "call_health",
        "get_cluster_health",
        &json!({}),
    ));
    provider.then(openai_text(
        "The cluster is healthy: no partition is under-replicated.",
    ));
    let ev = events(alice.post(&messages, json!({"content": "How is the cluster?"})));
    assert_eq!(
        names(&ev),
        vec![
            "tool_call_started",
            "message",
            "tool_call_finished",
            "text",
            "text",
            "text",
            "text",
            "text",
            "text",
            "text",
            "text",
            "message",
            "done"
        ],
        "{ev:?}"
    );
    assert_eq!(ev[2].1["ok"], true, "{:?}", ev[2]);
    assert!(ev[2].1["result"]["rackAssessment"].is_object());
    assert_eq!(
        text_of(&ev),
        "The cluster is healthy: no partition is under-replicated."
    );
    assert_eq!(
        ev.last().map(|e| e.1["status"].clone()),
        Some(json!("complete"))
    );
    let sent = provider.requests();
    assert_eq!(sent.len(), 2);
    assert_eq!(sent[0]["model"], "test-model");
    assert_eq!(sent[0]["stream"], true);
    assert!(sent[0]["tools"].as_array().is_some_and(|t| t
        .iter()
        .any(|t| t["function"]["name"] == "update_topic_config")));
    let last = sent[1]["messages"]
        .as_array()
        .and_then(|m| m.last())
        .cloned();
    assert_eq!(
        last.as_ref().map(|m| m["role"].clone()),
        Some(json!("tool"))
    );
    assert_eq!(
        last.map(|m| m["tool_call_id"].clone()),
        Some(json!("call_health"))
    );

    // a mutation waits for approval; nothing changes before it
    let snap = sim.snapshot();
    let topic = snap.partitions[0].topic.clone();
    let change = json!({"topic": topic, "configs": {"retention.ms": 3_600_000}});
    provider.then(openai_tool_call(
        "call_retention",
        "update_topic_config",
        &change,
    ));
    let ev = events(alice.post(
        &messages,
        json!({"content": format!("Set the retention of {topic} to an hour")}),
    ));
    let waiting = ev
        .iter()
        .find(|(n, _)| n == "approval_needed")
        .map(|(_, d)| d.clone())
        .expect("approval_needed");
    assert_eq!(waiting["toolCallId"], "call_retention");
    assert!(waiting["summary"]
        .as_str()
        .is_some_and(|s| s.contains("retention.ms")));
    assert_eq!(
        ev.last().map(|e| e.1["status"].clone()),
        Some(json!("awaiting_approval"))
    );
    let r = alice.post(&messages, json!({"content": "and?"}));
    assert_eq!(r.status().as_u16(), 409, "asking again while a call waits");
    let explicit = |service: &Service| -> String {
        reqwest::blocking::get(service.url(&format!("/api/v1/topics/{topic}/config/explicit")))
            .and_then(|r| r.text())
            .unwrap_or_default()
    };
    assert!(
        !explicit(&service).contains("3600000"),
        "nothing changed yet"
    );

    // another user sees neither the conversation nor can approve its call
    let bob = Chat {
        service: &service,
        user: "bob",
    };
    assert_eq!(bob.get(&format!("/api/v1/chat/conversations/{id}")).0, 404);
    let r = bob.post(
        &format!("/api/v1/chat/conversations/{id}/approve/call_retention"),
        Value::Null,
    );
    assert_eq!(r.status().as_u16(), 404);

    // approved: it runs through the catalog as alice, audited CHAT, and the answer goes on
    provider.then(openai_text("Done: retention is one hour now."));
    let ev = events(alice.post(
        &format!("/api/v1/chat/conversations/{id}/approve/call_retention"),
        Value::Null,
    ));
    let finished = ev
        .iter()
        .find(|(n, _)| n == "tool_call_finished")
        .map(|(_, d)| d.clone())
        .expect("finished");
    assert_eq!(finished["ok"], true, "{finished}");
    assert_eq!(text_of(&ev), "Done: retention is one hour now.");
    assert!(explicit(&service).contains("3600000"));
    let r = alice.post(
        &format!("/api/v1/chat/conversations/{id}/approve/call_retention"),
        Value::Null,
    );
    assert_eq!(r.status().as_u16(), 409, "decided once");
    let store = ballast_schema::Store::open(&service.db_path()).expect("db");
    let audit = store
        .list_audit(&ballast_schema::AuditQuery {
            action: Some("topics.config.update".into()),
            ..Default::default()
        })
        .expect("audit")
        .events;
    assert_eq!(audit.len(), 1, "{audit:?}");
    assert_eq!(audit[0].method, "CHAT");
    assert_eq!(audit[0].user_id.as_deref(), Some("alice"));

    // a provider failure ends the turn with an error event and keeps the conversation
    provider.then((
        429,
        r#"{"error":{"message":"Rate limit reached for sk-e2e-secret"}}"#.into(),
    ));
    let ev = events(alice.post(&messages, json!({"content": "Anything else?"})));
    let error = ev
        .iter()
        .find(|(n, _)| n == "error")
        .map(|(_, d)| d.clone())
        .expect("error event");
    assert_eq!(error["code"], "provider_rate_limited", "{error}");
    assert!(!error.to_string().contains("sk-e2e-secret"));
    assert_eq!(
        ev.last().map(|e| e.1["status"].clone()),
        Some(json!("error"))
    );
    let (_, whole) = alice.get(&format!("/api/v1/chat/conversations/{id}"));
    let roles: Vec<&str> = whole["data"]["messages"]
        .as_array()
        .expect("messages")
        .iter()
        .filter_map(|m| m["role"].as_str())
        .collect();
    assert_eq!(
        roles,
        vec![
            "user",
            "assistant",
            "tool",
            "assistant",
            "user",
            "assistant",
            "tool",
            "assistant",
            "user",
            "assistant"
        ]
    );
    assert_eq!(
        whole["data"]["title"], "How is the cluster?",
        "the first question names it"
    );
    let (_, list) = alice.get("/api/v1/chat/conversations");
    assert_eq!(list["data"]["count"], 1);
    assert_eq!(bob.get("/api/v1/chat/conversations").1["data"]["count"], 0);

    let r = reqwest::blocking::Client::new()
        .delete(service.url(&format!("/api/v1/chat/conversations/{id}")))
        .header("X-Ballast-User", "alice")
        .send()
        .expect("delete");
    assert_eq!(r.status().as_u16(), 200);
    assert_eq!(
        alice.get(&format!("/api/v1/chat/conversations/{id}")).0,
        404
    );
}

#[test]
fn the_anthropic_protocol_works_the_same_and_a_cut_stream_or_bad_arguments_end_the_turn_cleanly() {
    let sim = Sim::start();
    let provider = ScriptedProvider::start();
    let service = start(&sim, "anthropic", &provider.base);
    let alice = Chat {
        service: &service,
        user: "alice",
    };
    let conv: Value = alice
        .post("/api/v1/chat/conversations", json!({"title": "lag"}))
        .json()
        .expect("json");
    let id = conv["data"]["id"].as_str().expect("id").to_string();
    let messages = format!("/api/v1/chat/conversations/{id}/messages");

    provider.then(anthropic_tool_call(
        "toolu_groups",
        "list_consumer_groups",
        &json!({"limit": 5}),
    ));
    provider.then(anthropic_text(
        "There are consumer groups, none lagging badly.",
    ));
    let ev = events(alice.post(&messages, json!({"content": "Which groups lag?"})));
    assert!(
        ev.iter()
            .any(|(n, d)| n == "tool_call_finished" && d["ok"] == true),
        "{ev:?}"
    );
    assert_eq!(
        text_of(&ev),
        "There are consumer groups, none lagging badly."
    );
    let sent = provider.requests();
    assert_eq!(sent[0]["tools"][0]["input_schema"]["type"], "object");
    let second = &sent[1]["messages"];
    assert_eq!(second[1]["content"][0]["type"], "tool_use");
    assert_eq!(second[2]["content"][0]["type"], "tool_result");
    assert_eq!(second[2]["content"][0]["tool_use_id"], "toolu_groups");

    // a stream cut midway: the text so far is kept, the turn ends with `stream_cut`
    let (_, whole) = anthropic_text("Partial answer that never ends");
    let cut: String = whole
        .split("event: content_block_stop")
        .next()
        .unwrap_or_default()
        .to_string();
    provider.then((200, cut));
    let ev = events(alice.post(&messages, json!({"content": "More?"})));
    assert!(
        ev.iter()
            .any(|(n, d)| n == "error" && d["code"] == "stream_cut"),
        "{ev:?}"
    );
    let (_, whole) = alice.get(&format!("/api/v1/chat/conversations/{id}"));
    let last = whole["data"]["messages"]
        .as_array()
        .and_then(|m| m.last())
        .cloned()
        .unwrap_or_default();
    assert_eq!(last["isError"], true);
    assert_eq!(last["content"], "Partial answer that never ends");

    // a mutation with invalid arguments is refused to the model, nothing waits
    provider.then(anthropic_tool_call(
        "toolu_bad",
        "update_topic_config",
        &json!({"topic": "x", "configs": {}}),
    ));
    provider.then(anthropic_text("I could not change it."));
    let ev = events(alice.post(&messages, json!({"content": "Change nothing"})));
    assert!(
        ev.iter()
            .any(|(n, d)| n == "tool_call_finished" && d["ok"] == false),
        "{ev:?}"
    );
    assert!(!names(&ev).contains(&"approval_needed"));
    assert_eq!(
        ev.last().map(|e| e.1["status"].clone()),
        Some(json!("complete"))
    );
}
