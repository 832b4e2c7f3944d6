//! MCP calls as a client makes them, for the tests that look at a tool's answer.
#![allow(dead_code)]

use serde_json::Value;

pub const PROTOCOL: &str = "2025-06-18";

/// POSTs one JSON-RPC message to the MCP endpoint at `base`, in `session` when given.
pub async fn send(
    http: &reqwest::Client,
    base: &str,
    session: Option<&str>,
    body: Value,
) -> reqwest::Response {
    request(http, base, session, Some(PROTOCOL), body)
        .send()
        .await
        .expect("an MCP request")
}

/// One JSON-RPC message to the MCP endpoint at `base` as a client sends it, with the protocol
/// version header when `version` is given and the session's when `session` is.
pub fn request(
    http: &reqwest::Client,
    base: &str,
    session: Option<&str>,
    version: Option<&str>,
    body: Value,
) -> reqwest::RequestBuilder {
    let mut r = http
        .post(format!("{base}/api/v1/mcp"))
        .header("accept", "application/json, text/event-stream")
        .header("content-type", "application/json")
        .body(body.to_string());
    if let Some(v) = version {
        r = r.header("mcp-protocol-version", v);
    }
    if let Some(s) = session {
        r = r.header("mcp-session-id", s);
    }
    r
}

/// A new session, initialized: its id.
pub async fn open(http: &reqwest::Client, base: &str) -> String {
    let init = send(
        http,
        base,
        None,
        serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": PROTOCOL, "capabilities": {},
            "clientInfo": {"name": "test", "version": "1"}}}),
    )
    .await;
    assert_eq!(init.status().as_u16(), 200, "initialize");
    let session = init
        .headers()
        .get("mcp-session-id")
        .and_then(|v| v.to_str().ok())
        .expect("a session")
        .to_string();
    send(
        http,
        base,
        Some(&session),
        serde_json::json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
    )
    .await;
    session
}

/// One tool call in `session` with the JSON-RPC `id`: the call's `result` (a refusal included).
pub async fn call_in(
    http: &reqwest::Client,
    base: &str,
    session: &str,
    id: u64,
    tool: &str,
    arguments: Value,
) -> Value {
    let answer = send(
        http,
        base,
        Some(session),
        serde_json::json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": {"name": tool, "arguments": arguments}}),
    )
    .await;
    assert_eq!(answer.status().as_u16(), 200, "{tool}");
    let answer = answer.text().await.expect("answer");
    let message = message(&answer, &serde_json::json!(id))
        .unwrap_or_else(|| panic!("no answer to the call in {answer}"));
    message["result"].clone()
}

/// The JSON-RPC message answering `id` in an answer's body: JSON (a kept answer) or a stream
/// of server-sent events (rmcp's), as every client of Streamable HTTP reads them.
pub fn message(body: &str, id: &Value) -> Option<Value> {
    if let Ok(m) = serde_json::from_str::<Value>(body) {
        return (m["id"] == *id).then_some(m);
    }
    body.lines()
        .filter_map(|l| l.strip_prefix("data:"))
        .filter_map(|d| serde_json::from_str::<Value>(d.trim()).ok())
        .find(|m| m["id"] == *id)
}

/// One tool call in a session of its own, which must succeed: the call's `structuredContent`
/// and the text block beside it, parsed.
pub async fn call(
    http: &reqwest::Client,
    base: &str,
    tool: &str,
    arguments: Value,
) -> (Value, Value) {
    let session = open(http, base).await;
    let result = call_in(http, base, &session, 2, tool, arguments).await;
    assert_ne!(result["isError"], true, "{tool}: {result}");
    let text: Value = serde_json::from_str(result["content"][0]["text"].as_str().expect("text"))
        .expect("the text block is JSON");
    (result["structuredContent"].clone(), text)
}
