//! One pipeline for every change, whatever the door: changes of one resource are serialised and
//! their audit rows form an exact chain; a change whose audit intent cannot be written is refused
//! with 503 and changes nothing; a busy database is a 503 with `Retry-After`, never a 500.

mod manage_common;

use std::time::Duration;

use ballast_kafka::NewTopic;
use ballast_schema::{AuditQuery, OpenOptions};
use ballast_web::auth::Identity;
use ballast_web::catalog::{self, Channel};
use manage_common::{assert_ok, hold_write_lock, Harness};
use reqwest::Method;
use serde_json::{json, Value};

const KEY: &str = "retention.ms";

/// The topic-config events, oldest first.
fn config_events(h: &Harness) -> Vec<ballast_schema::AuditEvent> {
    let mut events = h
        .store
        .list_audit(&AuditQuery {
            action: Some("topics.config.update".into()),
            limit: Some(500),
            ..AuditQuery::default()
        })
        .expect("audit")
        .events;
    events.sort_by_key(|e| e.id);
    events
}

fn value_in(v: &Option<Value>) -> Value {
    v.as_ref()
        .map(|v| v["topics"]["audited"][KEY].clone())
        .unwrap_or(Value::Null)
}

/// Runs `update_topic_config` as an agent's door runs it once approved.
async fn through_catalog(h: &Harness, channel: Channel, user: &str, value: i64) -> Value {
    let op = catalog::find("update_topic_config").expect("operation");
    let caller = catalog::caller(&Identity::open(user.into()), channel);
    let input = json!({"topic": "audited", "configs": {KEY: value}});
    match catalog::invoke(op, &h.state, caller, input).await {
        Ok(v) => v,
        Err(e) => panic!("{user}: {e:?}"),
    }
}

#[tokio::test]
async fn parallel_updates_of_one_topic_through_rest_mcp_and_chat_form_an_exact_audit_chain() {
    let h = Harness::start().await;
    h.create_topic(NewTopic::new("audited", 2, 2)).await;
    let updates = (0..20i64).map(|i| {
        let h = &h;
        async move {
            let value = 3_600_000 + i;
            match i % 3 {
                0 => {
                    let (status, body) = h
                        .put(
                            "/api/v1/topics/audited/config",
                            json!({"configs": {KEY: value}}),
                        )
                        .await;
                    assert_ok(status, &body);
                }
                1 => {
                    let channel = Channel::Mcp {
                        requested_by: "agent-7".into(),
                    };
                    through_catalog(h, channel, "approver", value).await;
                }
                _ => {
                    let channel = Channel::Chat {
                        user: "carol".into(),
                    };
                    through_catalog(h, channel, "carol", value).await;
                }
            }
        }
    });
    futures_util::future::join_all(updates).await;

    let events = config_events(&h);
    assert_eq!(events.len(), 20, "{events:#?}");
    let mut previous = Value::Null;
    let mut afters = Vec::new();
    for e in &events {
        assert_eq!(e.status, 200, "{e:?}");
        assert_eq!(
            value_in(&e.before),
            previous,
            "event {} breaks the chain",
            e.id
        );
        previous = value_in(&e.after);
        afters.push(previous.as_str().map(str::to_string));
    }
    afters.sort();
    let expected: Vec<Option<String>> =
        (0..20).map(|i| Some((3_600_000 + i).to_string())).collect();
    assert_eq!(afters, expected, "every value is some event's after, once");
    assert_eq!(
        h.topic_override("audited", KEY).await.map(Value::from),
        Some(previous),
        "the last event's after is what the cluster shows"
    );
    let methods: std::collections::BTreeSet<&str> =
        events.iter().map(|e| e.method.as_str()).collect();
    assert_eq!(methods, ["CHAT", "MCP", "PUT"].into_iter().collect());
}

#[tokio::test]
async fn a_change_whose_audit_intent_cannot_be_written_is_refused_with_503_and_changes_nothing() {
    let h = Harness::start().await;
    h.create_topic(NewTopic::new("audited", 1, 1)).await;
    // The store fails every audit write, as a full disk would.
    let conn = rusqlite::Connection::open(h.store.path()).expect("open");
    conn.execute_batch(
        "CREATE TRIGGER disk_full BEFORE INSERT ON audit_events
         BEGIN SELECT RAISE(FAIL, 'database or disk is full'); END;",
    )
    .expect("trigger");
    let response = h
        .http
        .put(format!("{}/api/v1/topics/audited/config", h.base))
        .header("content-type", "application/json")
        .body(json!({"configs": {KEY: 7_200_000}}).to_string())
        .send()
        .await
        .expect("request");
    assert_eq!(response.status().as_u16(), 503);
    assert!(response.headers().get("retry-after").is_some());
    let body: Value = response.json().await.expect("json");
    assert_eq!(body["success"], false, "{body}");
    assert!(
        body["details"]
            .as_str()
            .is_some_and(|d| d.contains("nothing was changed")),
        "{body}"
    );
    assert_eq!(
        h.topic_override("audited", KEY).await,
        None,
        "the cluster is unchanged"
    );
    assert!(config_events(&h).is_empty());

    // Through an agent's door too.
    let op = catalog::find("update_topic_config").expect("operation");
    let caller = catalog::caller(
        &Identity::open("approver".into()),
        Channel::Mcp {
            requested_by: "agent-7".into(),
        },
    );
    let input = json!({"topic": "audited", "configs": {KEY: 7_200_000}});
    let refused = catalog::invoke(op, &h.state, caller, input)
        .await
        .expect_err("refused");
    assert_eq!(refused.status, 503, "{refused:?}");
    assert_eq!(h.topic_override("audited", KEY).await, None);
}

#[tokio::test]
async fn a_write_lock_held_elsewhere_gives_503_with_retry_after_never_500_and_reads_keep_answering()
{
    let h = Harness::start_with(OpenOptions {
        busy_timeout: Duration::from_millis(300),
        ..OpenOptions::default()
    })
    .await;
    h.create_topic(NewTopic::new("audited", 1, 1)).await;
    let holder = hold_write_lock(h.store.path().to_path_buf(), Duration::from_secs(4));
    for (method, path, body) in [
        (
            Method::PUT,
            "/api/v1/topics/audited/config",
            json!({"configs": {KEY: 7_200_000}}),
        ),
        (
            Method::PUT,
            "/api/v1/reassignments/throttle",
            json!({"rateMb": 50}),
        ),
    ] {
        let response = h
            .http
            .request(method, format!("{}{path}", h.base))
            .header("content-type", "application/json")
            .body(body.to_string())
            .send()
            .await
            .expect("request");
        let status = response.status().as_u16();
        let retry = response.headers().get("retry-after").cloned();
        let body: Value = response.json().await.expect("json");
        assert_eq!(status, 503, "{path}: {body}");
        assert!(retry.is_some(), "{path}: Retry-After");
        assert_eq!(body["success"], false);
    }
    // Reads are not blocked by the writer.
    let started = std::time::Instant::now();
    let (status, body) = h.send(Method::GET, "/api/v1/audit-log", None, None).await;
    assert_eq!(status, 200, "{body}");
    assert!(
        started.elapsed() < Duration::from_secs(1),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(
        h.topic_override("audited", KEY).await,
        None,
        "the cluster is unchanged"
    );
    tokio::task::spawn_blocking(move || holder.join())
        .await
        .expect("join")
        .expect("holder");
}
