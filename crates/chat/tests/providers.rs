//! The whole client against a scripted provider on loopback that answers in each protocol's real
//! streaming wire format (bytes as the providers send them, split at awkward places), and fails
//! in each way a provider can: 401, 429 with retry-after, 5xx, a stream cut midway, a malformed
//! chunk, a tool call with invalid arguments, and no answer at all.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::body::Body;
use axum::http::{HeaderMap, StatusCode};
use axum::response::Response;
use axum::routing::post;
use axum::Router;
use ballast_chat::{ChatError, Event, Message, Provider, ProviderKind, StopReason, ToolSpec};
use serde_json::{json, Value};

/// What the scripted server answers, and what it received.
#[derive(Clone, Default)]
struct Script {
    status: u16,
    headers: Vec<(&'static str, String)>,
    /// Body pieces, sent with a pause between them.
    chunks: Vec<String>,
    /// Wait this long before answering at all.
    stall: Duration,
    received: Arc<Mutex<Vec<(HeaderMap, Value)>>>,
}

async fn answer(script: Script, headers: HeaderMap, body: String) -> Response {
    if let Ok(mut r) = script.received.lock() {
        r.push((headers, serde_json::from_str(&body).unwrap_or(Value::Null)));
    }
    tokio::time::sleep(script.stall).await;
    let chunks = script.chunks.clone();
    let stream =
        futures_util::stream::iter(chunks.into_iter().enumerate()).then(|(i, c)| async move {
            if i > 0 {
                tokio::time::sleep(Duration::from_millis(5)).await;
            }
            Ok::<_, std::convert::Infallible>(bytes::Bytes::from(c))
        });
    let mut r =
        Response::builder().status(StatusCode::from_u16(script.status).unwrap_or(StatusCode::OK));
    r = r.header("content-type", "text/event-stream");
    for (k, v) in &script.headers {
        r = r.header(*k, v.as_str());
    }
    r.body(Body::from_stream(stream)).unwrap_or_default()
}

use futures_util::StreamExt;

async fn serve(script: Script) -> String {
    let s1 = script.clone();
    let s2 = script.clone();
    let app = Router::new()
        .route(
            "/v1/chat/completions",
            post(move |h: HeaderMap, b: String| answer(s1.clone(), h, b)),
        )
        .route(
            "/v1/messages",
            post(move |h: HeaderMap, b: String| answer(s2.clone(), h, b)),
        );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let addr = listener.local_addr().expect("addr");
    tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    format!("http://{addr}/v1")
}

/// SSE framing of OpenAI chunks, split mid-line between network writes.
fn openai_sse(chunks: &[&str]) -> Vec<String> {
    let whole: String = chunks.iter().map(|c| format!("data: {c}\n\n")).collect();
    split_awkwardly(&whole)
}

fn anthropic_sse(events: &[(&str, &str)]) -> Vec<String> {
    let whole: String = events
        .iter()
        .map(|(e, d)| format!("event: {e}\ndata: {d}\n\n"))
        .collect();
    split_awkwardly(&whole)
}

/// Pieces of 37 bytes (on char boundaries): lines and JSON cut anywhere.
fn split_awkwardly(s: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    for ch in s.chars() {
        cur.push(ch);
        if cur.len() >= 37 {
            out.push(std::mem::take(&mut cur));
        }
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    out
}

const OPENAI: &[&str] = &[
    r#"{"id":"c1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}]}"#,
    r#"{"id":"c1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":"Broker 4 "},"finish_reason":null}]}"#,
    r#"{"id":"c1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":"is hot — ünïcode ok."},"finish_reason":null}]}"#,
    r#"{"id":"c1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"get_partition_activity","arguments":""}}]},"finish_reason":null}]}"#,
    r#"{"id":"c1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\"brokerId\":"}}]},"finish_reason":null}]}"#,
    r#"{"id":"c1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":" 4, \"sortBy\": \"score\"}"}}]},"finish_reason":null}]}"#,
    r#"{"id":"c1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}"#,
    r#"{"id":"c1","object":"chat.completion.chunk","created":1,"model":"m","choices":[],"usage":{"prompt_tokens":100,"completion_tokens":20,"total_tokens":120}}"#,
    "[DONE]",
];

const ANTHROPIC: &[(&str, &str)] = &[
    (
        "message_start",
        r#"{"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","content":[],"model":"m","stop_reason":null,"usage":{"input_tokens":100,"output_tokens":1}}}"#,
    ),
    (
        "content_block_start",
        r#"{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}"#,
    ),
    ("ping", r#"{"type": "ping"}"#),
    (
        "content_block_delta",
        r#"{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Broker 4 "}}"#,
    ),
    (
        "content_block_delta",
        r#"{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"is hot — ünïcode ok."}}"#,
    ),
    (
        "content_block_stop",
        r#"{"type":"content_block_stop","index":0}"#,
    ),
    (
        "content_block_start",
        r#"{"type":"content_block_start","index":1,"content_block":{"type":"tool_use","id":"toolu_1","name":"get_partition_activity","input":{}}}"#,
    ),
    (
        "content_block_delta",
        r#"{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"{\"brokerId\":"}}"#,
    ),
    (
        "content_block_delta",
        r#"{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":" 4, \"sortBy\": \"score\"}"}}"#,
    ),
    (
        "content_block_stop",
        r#"{"type":"content_block_stop","index":1}"#,
    ),
    (
        "message_delta",
        r#"{"type":"message_delta","delta":{"stop_reason":"tool_use","stop_sequence":null},"usage":{"output_tokens":20}}"#,
    ),
    ("message_stop", r#"{"type":"message_stop"}"#),
];

fn provider(kind: ProviderKind, base: &str, timeout: Duration) -> Provider {
    let base = match kind {
        ProviderKind::OpenAi => base.to_string(),
        ProviderKind::Anthropic => base.trim_end_matches("/v1").to_string(),
    };
    Provider::new(
        kind,
        Some(&base),
        Some("sk-test-key".into()),
        "test-model",
        256,
        timeout,
    )
    .expect("provider")
}

fn tools() -> Vec<ToolSpec> {
    vec![ToolSpec {
        name: "get_partition_activity".into(),
        description: "Partitions by traffic".into(),
        parameters: json!({"type": "object", "properties": {"brokerId": {"type": "integer"}}}),
    }]
}

async fn run(
    kind: ProviderKind,
    script: Script,
    timeout: Duration,
) -> (
    Result<ballast_chat::Turn, ballast_chat::Failure>,
    Vec<Event>,
    Script,
) {
    let base = serve(script.clone()).await;
    let p = provider(kind, &base, timeout);
    let mut events = Vec::new();
    let r = p
        .stream(
            "You help operate a Kafka cluster.",
            &[Message::User {
                text: "Why is broker 4 hot?".into(),
            }],
            &tools(),
            |e| events.push(e),
        )
        .await;
    (r, events, script)
}

fn ok_script(chunks: Vec<String>) -> Script {
    Script {
        status: 200,
        chunks,
        ..Script::default()
    }
}

#[tokio::test]
async fn both_protocols_stream_text_and_a_tool_call_with_arguments_split_across_chunks() {
    for (kind, chunks) in [
        (ProviderKind::OpenAi, openai_sse(OPENAI)),
        (ProviderKind::Anthropic, anthropic_sse(ANTHROPIC)),
    ] {
        let (r, events, script) = run(kind, ok_script(chunks), Duration::from_secs(5)).await;
        let turn = r.unwrap_or_else(|f| panic!("{kind:?}: {f:?}"));
        assert_eq!(turn.text, "Broker 4 is hot — ünïcode ok.", "{kind:?}");
        assert_eq!(turn.stop, StopReason::ToolUse);
        assert_eq!(turn.tool_calls.len(), 1);
        assert_eq!(turn.tool_calls[0].name, "get_partition_activity");
        assert_eq!(
            turn.tool_calls[0].arguments,
            json!({"brokerId": 4, "sortBy": "score"})
        );
        assert_eq!(turn.usage.input_tokens, Some(100));
        assert_eq!(turn.usage.output_tokens, Some(20));
        let text: String = events
            .iter()
            .filter_map(|e| match e {
                Event::Text(t) => Some(t.as_str()),
                _ => None,
            })
            .collect();
        assert_eq!(text, turn.text, "deltas add up to the text");
        assert!(events.iter().any(
            |e| matches!(e, Event::ToolCallStarted { name, .. } if name == "get_partition_activity")
        ));

        // what the provider received: the model, streaming, the tools, the key in its header
        let received = script.received.lock().expect("lock").clone();
        let (headers, body) = &received[0];
        assert_eq!(body["model"], "test-model");
        assert_eq!(body["stream"], true);
        match kind {
            ProviderKind::OpenAi => {
                assert_eq!(headers["authorization"], "Bearer sk-test-key");
                assert_eq!(
                    body["tools"][0]["function"]["name"],
                    "get_partition_activity"
                );
            }
            ProviderKind::Anthropic => {
                assert_eq!(headers["x-api-key"], "sk-test-key");
                assert_eq!(headers["anthropic-version"], "2023-06-01");
                assert_eq!(body["tools"][0]["name"], "get_partition_activity");
            }
        }
    }
}

#[tokio::test]
async fn http_failures_say_what_happened_and_never_the_key() {
    for kind in [ProviderKind::OpenAi, ProviderKind::Anthropic] {
        let cases = [
            (
                401,
                vec![],
                r#"{"error":{"message":"invalid x-api-key sk-test-key"}}"#,
                "provider_unauthorized",
            ),
            (
                429,
                vec![("retry-after", "7".to_string())],
                r#"{"error":{"message":"slow down"}}"#,
                "provider_rate_limited",
            ),
            (
                503,
                vec![],
                r#"{"error":{"message":"overloaded"}}"#,
                "provider_error",
            ),
            (
                400,
                vec![],
                r#"{"error":{"message":"unknown model for key sk-test-key"}}"#,
                "provider_refused",
            ),
        ];
        for (status, headers, body, code) in cases {
            let script = Script {
                status,
                headers,
                chunks: vec![body.to_string()],
                ..Script::default()
            };
            let (r, _, _) = run(kind, script, Duration::from_secs(5)).await;
            let f = r.expect_err("an error");
            assert_eq!(f.error.code(), code, "{kind:?} {status}: {:?}", f.error);
            assert!(!f.error.to_string().contains("sk-test-key"), "{}", f.error);
            if status == 429 {
                assert_eq!(
                    f.error,
                    ChatError::RateLimited {
                        retry_after: Some(Duration::from_secs(7))
                    }
                );
                assert!(f.error.to_string().contains("retry after 7 s"));
            }
        }
    }
}

#[tokio::test]
async fn a_stream_cut_midway_keeps_the_text_received_so_far() {
    let cut_openai = openai_sse(&OPENAI[..3]);
    let cut_anthropic = anthropic_sse(&ANTHROPIC[..5]);
    for (kind, chunks) in [
        (ProviderKind::OpenAi, cut_openai),
        (ProviderKind::Anthropic, cut_anthropic),
    ] {
        let (r, _, _) = run(kind, ok_script(chunks), Duration::from_secs(5)).await;
        let f = r.expect_err("cut");
        assert_eq!(f.error, ChatError::StreamCut, "{kind:?}");
        assert_eq!(f.partial_text, "Broker 4 is hot — ünïcode ok.", "{kind:?}");
    }
}

#[tokio::test]
async fn a_malformed_chunk_and_invalid_tool_arguments_end_the_turn() {
    let mut bad = openai_sse(&OPENAI[..2]);
    bad.push("data: {\"choices\": [{\"delta\": \n\n".into());
    let (r, _, _) = run(ProviderKind::OpenAi, ok_script(bad), Duration::from_secs(5)).await;
    let f = r.expect_err("malformed");
    assert_eq!(f.error.code(), "malformed_chunk");
    assert_eq!(f.partial_text, "Broker 4 ");

    let mut args = ANTHROPIC.to_vec();
    args[8] = (
        "content_block_delta",
        r#"{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":" 4, \"sortBy\": "}}"#,
    );
    let (r, _, _) = run(
        ProviderKind::Anthropic,
        ok_script(anthropic_sse(&args)),
        Duration::from_secs(5),
    )
    .await;
    let f = r.expect_err("bad arguments");
    assert!(
        matches!(f.error, ChatError::BadToolArguments { ref name, .. } if name == "get_partition_activity"),
        "{:?}",
        f.error
    );
}

#[tokio::test]
async fn a_provider_that_does_not_answer_times_out() {
    let script = Script {
        status: 200,
        chunks: openai_sse(OPENAI),
        stall: Duration::from_secs(3),
        ..Script::default()
    };
    let started = std::time::Instant::now();
    let (r, _, _) = run(ProviderKind::OpenAi, script, Duration::from_millis(300)).await;
    let f = r.expect_err("timeout");
    assert_eq!(f.error.code(), "provider_timeout");
    assert!(started.elapsed() < Duration::from_secs(2));
}
