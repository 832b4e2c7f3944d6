//! The MCP endpoint's Streamable HTTP sessions as a client sees them.

mod manage_common;
mod mcp_common;

use manage_common::serve;
use serde_json::{json, Value};

use mcp_common::PROTOCOL;

/// POSTs one JSON-RPC message: the status and the session id the answer names.
async fn post(
    http: &reqwest::Client,
    url: &str,
    session: Option<&str>,
    body: Value,
) -> (u16, Option<String>) {
    let base = url.trim_end_matches("/api/v1/mcp");
    let answer = mcp_common::send(http, base, session, body).await;
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

/// The value of the `ballast_mcp_tool_calls_total` series of `tool` and `outcome` in a scrape
/// (0 when the scrape has none).
fn tool_calls(scrape: &str, tool: &str, outcome: &str) -> u64 {
    let series = format!("ballast_mcp_tool_calls_total{{outcome=\"{outcome}\",tool=\"{tool}\"}} ");
    scrape
        .lines()
        .find_map(|l| l.strip_prefix(&series))
        .map_or(0, |v| v.trim().parse().expect("a count"))
}

/// `ballast_mcp_tool_calls_total` counts every tool call by tool and outcome: an answer with
/// `isError` set (a refusal, an unknown tool) is an error, every other answer is ok. The load
/// benchmark counts tool errors from it.
#[tokio::test]
async fn every_mcp_tool_call_is_counted_by_tool_and_outcome() {
    let (base, _store, _dir) = serve("127.0.0.1:9").await;
    let http = reqwest::Client::new();
    let session = mcp_common::open(&http, &base).await;
    let calls = [
        ("search_audit_log", json!({}), false),
        ("search_audit_log", json!({"limit": 5}), false),
        ("get_proposal", json!({"proposalId": " "}), true),
        ("no_such_tool", json!({}), true),
    ];
    for (id, (tool, arguments, error)) in (10..).zip(&calls) {
        let result = mcp_common::call_in(&http, &base, &session, id, tool, arguments.clone()).await;
        assert_eq!(
            result["isError"] == true,
            *error,
            "{tool} {arguments}: {result}"
        );
    }
    let scrape = http
        .get(format!("{base}/metrics"))
        .send()
        .await
        .expect("scrape")
        .text()
        .await
        .expect("scrape text");
    assert_eq!(tool_calls(&scrape, "search_audit_log", "ok"), 2, "{scrape}");
    assert_eq!(tool_calls(&scrape, "search_audit_log", "error"), 0);
    assert_eq!(tool_calls(&scrape, "get_proposal", "error"), 1);
    assert_eq!(tool_calls(&scrape, "get_proposal", "ok"), 0);
    // A name outside the catalog is counted as `unknown`, so no caller can add series.
    assert_eq!(tool_calls(&scrape, "unknown", "error"), 1);
    assert_eq!(tool_calls(&scrape, "no_such_tool", "error"), 0);
}
