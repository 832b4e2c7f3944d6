//! The MCP endpoint's Streamable HTTP sessions as a client sees them.

mod manage_common;

use manage_common::serve;
use serde_json::{json, Value};

const PROTOCOL: &str = "2025-06-18";

/// POSTs one JSON-RPC message: the status and the session id the answer names.
async fn post(
    http: &reqwest::Client,
    url: &str,
    session: Option<&str>,
    body: Value,
) -> (u16, Option<String>) {
    let mut r = http
        .post(url)
        .header("accept", "application/json, text/event-stream")
        .header("content-type", "application/json")
        .header("mcp-protocol-version", PROTOCOL)
        .body(body.to_string());
    if let Some(s) = session {
        r = r.header("mcp-session-id", s);
    }
    let answer = r.send().await.expect("mcp request");
    let id = answer
        .headers()
        .get("mcp-session-id")
        .and_then(|v| v.to_str().ok())
        .map(str::to_string);
    (answer.status().as_u16(), id)
}

async fn delete(http: &reqwest::Client, url: &str, session: &str) -> u16 {
    http.delete(url)
        .header("mcp-session-id", session)
        .header("mcp-protocol-version", PROTOCOL)
        .send()
        .await
        .expect("mcp delete")
        .status()
        .as_u16()
}

/// The Python MCP SDK accepts 200 or 204 for a session DELETE and logs "Session termination
/// failed: 202" for rmcp's own answer.
#[tokio::test]
async fn ending_an_mcp_session_answers_200() {
    // No cluster is needed to open and end a session.
    let (base, _store, _dir) = serve("127.0.0.1:9").await;
    let url = format!("{base}/api/v1/mcp");
    let http = reqwest::Client::new();
    let (status, session) = post(
        &http,
        &url,
        None,
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": PROTOCOL, "capabilities": {},
            "clientInfo": {"name": "test", "version": "1"}}}),
    )
    .await;
    assert_eq!(status, 200);
    let session = session.expect("a session id");
    let (status, _) = post(
        &http,
        &url,
        Some(&session),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
    )
    .await;
    assert!((200..300).contains(&status), "{status}");

    assert_eq!(delete(&http, &url, &session).await, 200);
    // The session is gone: using it again is refused.
    let (status, _) = post(
        &http,
        &url,
        Some(&session),
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}),
    )
    .await;
    assert!(status >= 400, "{status}");
}
