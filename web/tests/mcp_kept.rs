//! The MCP door's kept answers (`mcp::kept_answers`): a call of a read whose answer is kept once
//! is answered with that answer's bytes, the answer rmcp gives for the same call; every request
//! the door does not check as rmcp does goes to rmcp.

mod mcp_common;
mod observed_common;

use observed_common::Harness;
use serde_json::{json, Value};

/// A `tools/call` with extra `headers` (name, value) and `params`: the status, the answer's
/// content type and its JSON-RPC message (None when the body holds none).
async fn post(
    h: &Harness,
    session: &str,
    params: Value,
    headers: &[(&str, &str)],
) -> (u16, String, Option<Value>) {
    // A version given in `headers` replaces the client's.
    let version = (!headers
        .iter()
        .any(|(name, _)| *name == "mcp-protocol-version"))
    .then_some(mcp_common::PROTOCOL);
    let body = json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": params});
    let mut r = mcp_common::request(&h.http, &h.base, Some(session), version, body);
    for (name, value) in headers {
        r = r.header(*name, *value);
    }
    let answer = r.send().await.expect("an MCP request");
    let status = answer.status().as_u16();
    let content_type = answer
        .headers()
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_string();
    let body = answer.text().await.expect("a body");
    (status, content_type, mcp_common::message(&body, &json!(7)))
}

/// `result` without the cluster's age, which differs from call to call.
fn ageless(mut result: Value) -> Value {
    fn drop_age(v: &mut Value) {
        if let Some(c) = v.get_mut("cluster").and_then(Value::as_object_mut) {
            c.remove("ageMs");
        }
    }
    if let Some(s) = result.get_mut("structuredContent") {
        drop_age(s);
    }
    if let Some(text) = result.pointer("/content/0/text").and_then(Value::as_str) {
        let mut text: Value = serde_json::from_str(text).expect("the text block is JSON");
        drop_age(&mut text);
        result["content"][0]["text"] = json!(text.to_string());
    }
    result
}

/// A kept answer is sent as JSON and is the answer rmcp gives for the same call (asked with
/// `_meta`, which this door leaves to rmcp): the same structured content, the same JSON in the
/// text block, the call's own id; an aged answer carries the call's age.
#[tokio::test]
async fn a_kept_answer_is_the_answer_rmcp_gives_for_the_same_call() {
    let h = Harness::with_fixture().await;
    let session = mcp_common::open(&h.http, &h.base).await;
    for (tool, arguments) in [
        ("get_cluster_overview", json!({})),
        ("get_cluster_overview", json!({"limit": 0})),
        ("get_cluster_overview", json!({"limit": 2})),
        ("search_topics", json!({})),
        ("search_topics", json!({"query": "O"})),
        ("get_cluster_health", json!({})),
    ] {
        let params = json!({"name": tool, "arguments": arguments});
        let (status, kind, kept) = post(&h, &session, params.clone(), &[]).await;
        assert_eq!(status, 200, "{tool}");
        assert!(kind.starts_with("application/json"), "{tool}: {kind}");
        let kept = kept.expect("the call's answer");
        // As the Python SDK 2.x sends every call: with the standard headers naming it.
        let standard = [("mcp-method", "tools/call"), ("mcp-name", tool)];
        let (_, kind, again) = post(&h, &session, params.clone(), &standard).await;
        assert!(kind.starts_with("application/json"), "{tool}: {kind}");
        assert_eq!(
            ageless(again.expect("an answer")["result"].clone()),
            ageless(kept["result"].clone())
        );
        assert_eq!(kept["jsonrpc"], "2.0");
        let mut by_rmcp = params.clone();
        by_rmcp["_meta"] = json!({});
        let (status, kind, rmcp) = post(&h, &session, by_rmcp, &[]).await;
        assert_eq!(status, 200, "{tool}");
        assert!(kind.starts_with("text/event-stream"), "{tool}: {kind}");
        let rmcp = rmcp.expect("rmcp's answer");
        assert_eq!(
            ageless(kept["result"].clone()),
            ageless(rmcp["result"].clone()),
            "{tool} {arguments}"
        );
        let result = &kept["result"];
        let text: Value =
            serde_json::from_str(result["content"][0]["text"].as_str().expect("a text block"))
                .expect("JSON text");
        assert_eq!(text, result["structuredContent"], "{tool}");
        if tool == "get_cluster_overview" {
            let age = result["structuredContent"]["cluster"]["ageMs"]
                .as_i64()
                .expect("an age");
            // The fixture's last reading was sampled a moment ago.
            assert!((0..60_000).contains(&age), "{age}");
        }
    }
}

/// Calls the door does not take are rmcp's, answered as before: a refusal (no proposal yet), a
/// read whose answer is not kept, a browser's `Origin`, an unknown protocol version (rmcp's
/// 400), an unknown session (rmcp's 404).
#[tokio::test]
async fn what_the_door_does_not_take_is_answered_by_rmcp() {
    let h = Harness::with_fixture().await;
    let session = mcp_common::open(&h.http, &h.base).await;
    let overview = json!({"name": "get_cluster_overview", "arguments": {}});

    let (status, kind, refused) = post(
        &h,
        &session,
        json!({"name": "get_proposal", "arguments": {"proposalId": "current"}}),
        &[],
    )
    .await;
    assert_eq!(status, 200);
    assert!(kind.starts_with("text/event-stream"), "{kind}");
    assert_eq!(refused.expect("an answer")["result"]["isError"], true);

    let (_, kind, racks) = post(
        &h,
        &session,
        json!({"name": "get_broker_racks", "arguments": {}}),
        &[],
    )
    .await;
    assert!(kind.starts_with("text/event-stream"), "{kind}");
    assert_ne!(racks.expect("an answer")["result"]["isError"], true);

    let origin = [("origin", "http://localhost")];
    let (status, kind, _) = post(&h, &session, overview.clone(), &origin).await;
    assert_eq!(status, 200);
    assert!(kind.starts_with("text/event-stream"), "{kind}");

    let version = [("mcp-protocol-version", "1999-01-01")];
    let (status, _, _) = post(&h, &session, overview.clone(), &version).await;
    assert_eq!(status, 400);

    // Standard headers that do not name the call: rmcp's (which checks them only from the
    // revision 2026-07-28 on, and then refuses).
    let other = [("mcp-method", "tools/call"), ("mcp-name", "search_topics")];
    let (status, kind, _) = post(&h, &session, overview.clone(), &other).await;
    assert_eq!(status, 200);
    assert!(kind.starts_with("text/event-stream"), "{kind}");
    let newer = [("mcp-protocol-version", "2026-07-28")];
    let (status, kind, _) = post(&h, &session, overview.clone(), &newer).await;
    assert_eq!(status, 400, "{kind}");

    let (status, _, _) = post(&h, "no-such-session", overview.clone(), &[]).await;
    assert_eq!(status, 404);

    let (status, kind, _) = post(&h, &session, overview, &[]).await;
    assert_eq!(status, 200);
    assert!(kind.starts_with("application/json"), "{kind}");
}

/// A kept answer is counted as rmcp's answers are (`ballast_mcp_tool_calls_total`).
#[tokio::test]
async fn a_kept_answer_is_counted_as_a_tool_call() {
    let h = Harness::with_fixture().await;
    let session = mcp_common::open(&h.http, &h.base).await;
    for _ in 0..3 {
        let params = json!({"name": "search_topics", "arguments": {}});
        let (_, kind, _) = post(&h, &session, params, &[]).await;
        assert!(kind.starts_with("application/json"), "{kind}");
    }
    let scrape = h
        .http
        .get(format!("{}/metrics", h.base))
        .send()
        .await
        .expect("scrape")
        .text()
        .await
        .expect("text");
    let series = "ballast_mcp_tool_calls_total{outcome=\"ok\",tool=\"search_topics\"} 3";
    assert!(scrape.lines().any(|l| l == series), "{scrape}");
}
