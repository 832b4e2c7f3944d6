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

/// Every answer of the MCP door is JSON: a request the transport cannot take is a JSON-RPC error
/// with the transport's status, never plain text.
#[tokio::test]
async fn transport_refusals_are_json_rpc_errors() {
    let (base, _store, _dir) = serve("127.0.0.1:9").await;
    let url = format!("{base}/api/v1/mcp");
    let http = reqwest::Client::new();
    let initialize = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": PROTOCOL, "capabilities": {},
        "clientInfo": {"name": "test", "version": "1"}}});
    let cases: Vec<(&str, reqwest::RequestBuilder)> = vec![
        (
            "no Accept of JSON and event streams",
            http.post(&url)
                .header("content-type", "application/json")
                .body(initialize.to_string()),
        ),
        (
            "a body that is not JSON",
            http.post(&url)
                .header("accept", "application/json, text/event-stream")
                .header("content-type", "application/json")
                .body("{not json"),
        ),
        (
            "an unknown session",
            http.post(&url)
                .header("accept", "application/json, text/event-stream")
                .header("content-type", "application/json")
                .header("mcp-session-id", "no-such-session")
                .body(json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}).to_string()),
        ),
    ];
    for (what, request) in cases {
        let answer = request.send().await.expect("request");
        let status = answer.status().as_u16();
        assert!((400..500).contains(&status), "{what}: {status}");
        let text = answer.text().await.expect("body");
        let body: Value = serde_json::from_str(&text)
            .unwrap_or_else(|e| panic!("{what}: {status} {text:?} is not JSON: {e}"));
        assert_eq!(body["jsonrpc"], "2.0", "{what}: {body}");
        assert!(body["error"]["code"].as_i64().is_some(), "{what}: {body}");
        assert!(
            body["error"]["message"]
                .as_str()
                .is_some_and(|m| !m.is_empty()),
            "{what}: {body}"
        );
    }
}
