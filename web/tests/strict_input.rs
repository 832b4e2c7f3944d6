//! Strict input, one rule set for every door: a body on a route that takes none, a body that is
//! not a JSON object, a body over the limit and a name Kafka would refuse are answered in the
//! envelope before anything runs, and change nothing.

mod manage_common;

use manage_common::Harness;
use reqwest::Method;
use serde_json::{json, Value};

/// A raw request: status, headers' content type, body as JSON (panics on a non-JSON answer:
/// every answer is in the envelope).
async fn raw(h: &Harness, method: Method, path: &str, body: Vec<u8>) -> (u16, Value) {
    let response = h
        .http
        .request(method.clone(), format!("{}{path}", h.base))
        .header("content-type", "application/json")
        .body(body)
        .send()
        .await
        .expect("request");
    let status = response.status().as_u16();
    let text = response.text().await.expect("body");
    let body: Value = serde_json::from_str(&text)
        .unwrap_or_else(|e| panic!("{method} {path}: {status} answered {text:?}, not JSON: {e}"));
    assert_eq!(body["success"], false, "{method} {path}: {body}");
    (status, body)
}

#[tokio::test]
async fn a_body_on_a_route_that_takes_none_is_refused_before_anything_runs() {
    let h = Harness::start().await;
    let big = vec![b' '; 1 << 20];
    for (method, path) in [
        (Method::POST, "/api/v1/proposals/current/apply"),
        (Method::DELETE, "/api/v1/proposals/p-1-00000000"),
        (Method::POST, "/api/v1/cluster/refresh-metadata"),
    ] {
        let (status, body) = raw(&h, method.clone(), path, big.clone()).await;
        assert_eq!(status, 400, "{method} {path}: {body}");
        assert_eq!(body["error"], "unexpected request body", "{body}");
    }
    assert!(h.audit().is_empty(), "nothing ran");
}

#[tokio::test]
async fn an_empty_json_object_is_no_options_on_a_route_that_takes_no_body() {
    let h = Harness::start().await;
    // What many clients send for "no options": the route runs as with no body at all.
    for body in ["{}", " { } ", "{}\n"] {
        let response = h
            .http
            .post(format!("{}/api/v1/cluster/refresh-metadata", h.base))
            .header("content-type", "application/json")
            .body(body)
            .send()
            .await
            .expect("request");
        let status = response.status().as_u16();
        let answer: Value = response.json().await.expect("JSON");
        assert_eq!(status, 200, "{body:?}: {answer}");
        assert_eq!(answer["success"], true, "{answer}");
    }
    // Anything else in such a body is still refused, and nothing runs.
    let audited = h.audit().len();
    for body in [r#"{"force": true}"#, "[]", "{} {}", "null"] {
        let (status, answer) = raw(
            &h,
            Method::DELETE,
            "/api/v1/proposals/p-1-00000000",
            body.into(),
        )
        .await;
        assert_eq!(status, 400, "{body}: {answer}");
        assert_eq!(answer["error"], "unexpected request body", "{answer}");
        assert!(
            answer["details"]
                .as_str()
                .is_some_and(|d| d.contains("send none or {}")),
            "{answer}"
        );
    }
    assert_eq!(h.audit().len(), audited, "nothing ran");
}

#[tokio::test]
async fn a_body_that_is_not_a_json_object_is_refused_and_changes_nothing() {
    let h = Harness::start().await;
    for (method, path) in [
        (Method::POST, "/api/v1/rolling-restarts"),
        (Method::PUT, "/api/v1/topics/ledger/config"),
        (Method::POST, "/api/v1/audit-log/revert"),
    ] {
        for body in ["[null, null]", "[]", "7", "\"x\""] {
            let (status, answer) = raw(&h, method.clone(), path, body.into()).await;
            assert_eq!(status, 400, "{method} {path} {body}: {answer}");
            assert_eq!(
                answer["details"], "the body must be a JSON object",
                "{answer}"
            );
        }
    }
    let (_, rolls) = h.get("/api/v1/rolling-restarts").await;
    assert_eq!(rolls["data"]["rollingRestarts"], json!([]), "{rolls}");
    assert!(h.audit().is_empty());
}

#[tokio::test]
async fn a_body_over_the_limit_is_413_in_the_envelope() {
    let h = Harness::start().await;
    let mut body = b"{\"configs\": {\"x\": \"".to_vec();
    body.extend(std::iter::repeat_n(b'a', 3 << 20));
    body.extend(b"\"}}");
    let (status, answer) = raw(&h, Method::PUT, "/api/v1/topics/ledger/config", body).await;
    assert_eq!(status, 413, "{answer}");
    assert_eq!(answer["error"], "request body too large");
}

#[tokio::test]
async fn a_topic_name_kafka_would_refuse_is_400_and_never_sent() {
    let h = Harness::start().await;
    // (`..` is covered by `ballast_ops::names`: an HTTP client resolves it away before sending.)
    let long = "t".repeat(10_000);
    for name in ["a%00b", "a%2F..%2Fb", "caf%C3%A9", long.as_str()] {
        let path = format!("/api/v1/topics/{name}/config");
        let (status, answer) = raw(
            &h,
            Method::PUT,
            &path,
            json!({"configs": {"retention.ms": 1}}).to_string().into(),
        )
        .await;
        assert_eq!(status, 400, "{name}: {answer}");
        assert!(
            answer["details"]
                .as_str()
                .is_some_and(|d| d.contains("topic") && d.len() < 300),
            "{answer}"
        );
    }
    assert!(h.audit().is_empty());
}

#[tokio::test]
async fn the_chat_doors_answer_bad_input_in_the_envelope() {
    let h = Harness::start().await;
    for (path, body) in [
        ("/api/v1/chat/conversations", "{\"nope\": 1}"),
        ("/api/v1/chat/conversations/c-1/messages", "not json"),
        ("/api/v1/chat/conversations/c-1/messages", "[1]"),
    ] {
        let (status, answer) = raw(&h, Method::POST, path, body.into()).await;
        assert_eq!(status, 400, "{path}: {answer}");
    }
}

#[tokio::test]
async fn a_config_value_kafka_would_refuse_or_an_unknown_name_is_400_and_never_sent() {
    let h = Harness::start().await;
    h.create_topic(ballast_kafka::NewTopic::new("ledger", 1, 1))
        .await;
    for (configs, error, mention) in [
        (
            json!({"retention.ms": "-5"}),
            "invalid configuration value",
            "Value must be at least -1",
        ),
        (
            json!({"retention.ms": "soon"}),
            "invalid configuration value",
            "LONG",
        ),
        (
            json!({"cleanup.policy": "shred"}),
            "invalid configuration value",
            "compact, delete",
        ),
        (
            json!({"retention.msx": "5"}),
            "unknown configuration",
            "retention.msx",
        ),
    ] {
        let (status, answer) = h
            .put(
                "/api/v1/topics/ledger/config",
                json!({ "configs": configs }),
            )
            .await;
        assert_eq!(status, 400, "{configs}: {answer}");
        assert_eq!(answer["error"], error, "{answer}");
        assert!(
            answer["details"]
                .as_str()
                .is_some_and(|d| d.contains(mention)),
            "{answer}"
        );
    }
    assert_eq!(h.topic_override("ledger", "retention.ms").await, None);
    assert!(h.audit().is_empty(), "refused changes record nothing");
}

#[tokio::test]
async fn with_the_assistant_disabled_its_routes_are_a_404_in_the_envelope_and_its_status_says_so() {
    let h = Harness::start().await;
    let (status, body) = h.get("/api/v1/chat/conversations").await;
    assert_eq!(status, 404, "{body}");
    assert_eq!(body["error"], "chat assistant disabled", "{body}");
    let (status, body) = h.get("/api/v1/chat/status").await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["data"]["available"], false, "{body}");
}
