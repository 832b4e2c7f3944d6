//! The audit log API and the revert of recorded changes, against a simulated cluster.

mod manage_common;

use ballast_kafka::{NewTopic, QuotaEntity, QuotaFilter, QuotaName};
use std::time::Duration;

use ballast_schema::{NewAuditEvent, OpenOptions};
use manage_common::{assert_error, assert_ok, hold_write_lock, serve, Harness};
use serde_json::{json, Value};

const PREVIEW: &str = "/api/v1/audit-log/revert/preview";
const REVERT: &str = "/api/v1/audit-log/revert";

async fn preview(h: &Harness, event_id: i64) -> Value {
    let (status, body) = h.post(PREVIEW, json!({"eventId": event_id})).await;
    assert_ok(status, &body)
}

/// Reverts `event_id` with a fresh preview's fingerprint: the 202 data.
async fn revert(h: &Harness, event_id: i64) -> Value {
    let fingerprint = preview(h, event_id).await["fingerprint"].clone();
    let (status, body) = h
        .post(
            REVERT,
            json!({"eventId": event_id, "fingerprint": fingerprint}),
        )
        .await;
    assert_eq!(status, 202, "{body}");
    assert_eq!(body["success"], true);
    body["data"].clone()
}

fn event_id(data: &Value) -> i64 {
    data["auditEventId"].as_i64().expect("auditEventId")
}

#[tokio::test]
async fn reverting_a_topic_config_change_restores_the_before_values_and_is_audited() {
    let h = Harness::start().await;
    h.create_topic(NewTopic::new("invoices", 1, 2).config("retention.ms", "60000"))
        .await;
    let (status, body) = h
        .put(
            "/api/v1/topics/invoices/config",
            json!({"configs": {"retention.ms": 120000, "max.message.bytes": 2048}}),
        )
        .await;
    let changed = event_id(&assert_ok(status, &body));

    let p = preview(&h, changed).await;
    assert_eq!(p["kind"], "topicConfig");
    assert_eq!(p["canRevert"], true, "{p}");
    assert_eq!(p["conflicts"], json!([]));
    assert_eq!(
        p["changes"],
        json!([
            {"item": {"topic": "invoices", "name": "max.message.bytes"}, "audited": "2048", "current": "2048", "revertTo": null},
            {"item": {"topic": "invoices", "name": "retention.ms"}, "audited": "120000", "current": "120000", "revertTo": "60000"},
        ])
    );
    let fingerprint = p["fingerprint"].clone();
    let (status, body) = h
        .post(
            REVERT,
            json!({"eventId": changed, "fingerprint": fingerprint}),
        )
        .await;
    assert_eq!(status, 202, "{body}");
    let data = &body["data"];
    assert!(data["executionId"]
        .as_str()
        .is_some_and(|id| !id.is_empty()));
    assert_eq!(data["state"], "completed");
    assert_eq!(
        h.topic_override("invoices", "retention.ms")
            .await
            .as_deref(),
        Some("60000")
    );
    assert_eq!(
        h.topic_override("invoices", "max.message.bytes").await,
        None
    );

    let revert_event = h.store.audit_event(event_id(data)).unwrap().unwrap();
    assert_eq!(revert_event.action, "audit.revert");
    assert_eq!(revert_event.related_event_id, Some(changed));
    assert_eq!(revert_event.status, 202);
    assert_eq!(revert_event.method, "POST");
    assert_eq!(
        revert_event.after,
        Some(json!({"topics": {"invoices": {"max.message.bytes": null, "retention.ms": "60000"}}}))
    );

    // a second revert with the old fingerprint is refused and changes nothing
    let (status, body) = h
        .post(
            REVERT,
            json!({"eventId": changed, "fingerprint": fingerprint}),
        )
        .await;
    assert_error(status, &body, 409);
    assert_eq!(
        h.topic_override("invoices", "retention.ms")
            .await
            .as_deref(),
        Some("60000")
    );
    assert_eq!(h.audit().len(), 2);

    // the revert is itself revertible: the change comes back
    revert(&h, event_id(data)).await;
    assert_eq!(
        h.topic_override("invoices", "retention.ms")
            .await
            .as_deref(),
        Some("120000")
    );
}

/// The audit row of a change records what the cluster holds once the change applied, though a
/// KRaft broker (and the simulator, `SimConfig::metadata_lag`) shows it only a moment after the
/// write was accepted; so the row's revert is accepted at once.
#[tokio::test]
async fn an_audited_config_change_records_the_value_the_cluster_shows_after_it_applies() {
    let h = Harness::start().await;
    h.create_topic(NewTopic::new("ledger", 1, 2).config("retention.ms", "5400000"))
        .await;
    let (status, body) = h
        .put(
            "/api/v1/topics/ledger/config",
            json!({"configs": {"retention.ms": 1800000}}),
        )
        .await;
    let data = assert_ok(status, &body);
    assert_eq!(
        data["changes"],
        json!([{"name": "retention.ms", "before": "5400000", "after": "1800000"}])
    );
    assert!(data.get("note").is_none(), "{data}");
    let changed = event_id(&data);
    let event = h.store.audit_event(changed).unwrap().unwrap();
    assert_eq!(
        event.before,
        Some(json!({"topics": {"ledger": {"retention.ms": "5400000"}}}))
    );
    assert_eq!(
        event.after,
        Some(json!({"topics": {"ledger": {"retention.ms": "1800000"}}}))
    );
    assert_eq!(event.details, None);
    assert_eq!(
        h.topic_override("ledger", "retention.ms").await.as_deref(),
        Some("1800000"),
        "the audited value is the cluster's"
    );

    // Reverted at once: nothing changed since the audited change.
    let p = preview(&h, changed).await;
    assert_eq!(p["canRevert"], true, "{p}");
    let reverted = revert(&h, changed).await;
    assert_eq!(
        h.topic_override("ledger", "retention.ms").await.as_deref(),
        Some("5400000")
    );
    let revert_event = h.store.audit_event(event_id(&reverted)).unwrap().unwrap();
    assert_eq!(
        revert_event.after,
        Some(json!({"topics": {"ledger": {"retention.ms": "5400000"}}}))
    );
}

#[tokio::test]
async fn an_audited_quota_change_records_the_values_the_cluster_shows_after_it_applies() {
    let h = Harness::start().await;
    let path = "/api/v1/quotas/user/grace";
    let (status, body) = h
        .put(path, json!({"values": {"producer_byte_rate": 1048576}}))
        .await;
    let data = assert_ok(status, &body);
    assert_eq!(data["after"], json!({"producer_byte_rate": 1048576.0}));
    let upserted = event_id(&data);
    let event = h.store.audit_event(upserted).unwrap().unwrap();
    assert_eq!(
        event.after.as_ref().map(|a| a["values"].clone()),
        Some(json!({"producer_byte_rate": 1048576.0}))
    );
    assert_eq!(event.details, None);
    assert_eq!(
        quota_of(&h, "grace").await,
        [("producer_byte_rate".to_string(), 1048576.0)].into()
    );

    // Reverted at once: the entity has no quota again.
    revert(&h, upserted).await;
    assert!(quota_of(&h, "grace").await.is_empty());

    // A delete records the entity gone.
    h.put(path, json!({"values": {"consumer_byte_rate": 4096}}))
        .await;
    let (status, body) = h.delete(path).await;
    let data = assert_ok(status, &body);
    assert_eq!(data["after"], json!({}));
    let deleted = event_id(&data);
    let event = h.store.audit_event(deleted).unwrap().unwrap();
    assert_eq!(
        event.after.as_ref().map(|a| a["values"].clone()),
        Some(json!({}))
    );
    revert(&h, deleted).await;
    assert_eq!(
        quota_of(&h, "grace").await,
        [("consumer_byte_rate".to_string(), 4096.0)].into()
    );
}

#[tokio::test]
async fn a_change_the_cluster_does_not_show_in_time_is_audited_as_shown_with_a_note() {
    let h = Harness::start_configured(
        OpenOptions::default(),
        &[
            ("BALLAST_READBACK_TIMEOUT", "300ms"),
            ("BALLAST_READBACK_POLL", "50ms"),
        ],
    )
    .await;
    h.create_topic(NewTopic::new("slow", 1, 2).config("retention.ms", "5400000"))
        .await;
    h.sim.set_metadata_lag(Duration::from_secs(600));
    let (status, body) = h
        .put(
            "/api/v1/topics/slow/config",
            json!({"configs": {"retention.ms": 1800000}}),
        )
        .await;
    let data = assert_ok(status, &body);
    let note = data["note"].as_str().unwrap_or_default().to_string();
    assert!(
        note.contains("did not show the change within 300ms"),
        "{data}"
    );
    assert_eq!(
        data["changes"],
        json!([{"name": "retention.ms", "before": "5400000", "after": "5400000"}]),
        "what the cluster showed, not what was asked"
    );
    let event = h.store.audit_event(event_id(&data)).unwrap().unwrap();
    assert_eq!(
        event.after,
        Some(json!({"topics": {"slow": {"retention.ms": "5400000"}}}))
    );
    assert_eq!(event.details.as_deref(), Some(note.as_str()));

    let (status, body) = h
        .put(
            path_of_quota(),
            json!({"values": {"request_percentage": 200}}),
        )
        .await;
    let data = assert_ok(status, &body);
    assert_eq!(data["after"], json!({}));
    assert!(
        data["note"]
            .as_str()
            .is_some_and(|n| n.contains("did not show")),
        "{data}"
    );
}

fn path_of_quota() -> &'static str {
    "/api/v1/quotas/client-id/slow-app"
}

async fn quota_of(h: &Harness, user: &str) -> std::collections::BTreeMap<String, f64> {
    let entity = QuotaEntity {
        user: Some(QuotaName::name(user)),
        client_id: None,
        ip: None,
    };
    h.kafka
        .describe_client_quotas(&QuotaFilter::all())
        .await
        .unwrap()
        .into_iter()
        .find(|q| q.entity == entity)
        .map(|q| q.values)
        .unwrap_or_default()
}

#[tokio::test]
async fn reverting_a_quota_change_restores_the_entity_from_its_recorded_path() {
    let h = Harness::start().await;
    let path = "/api/v1/quotas/user/erin";
    let (status, body) = h
        .put(path, json!({"values": {"producer_byte_rate": 1000}}))
        .await;
    assert_ok(status, &body);
    let (status, body) = h
        .put(path, json!({"values": {"request_percentage": 300}}))
        .await;
    let second = event_id(&assert_ok(status, &body));
    let data = revert(&h, second).await;
    assert_eq!(data["kind"], "quota");
    assert_eq!(
        quota_of(&h, "erin").await,
        [("producer_byte_rate".to_string(), 1000.0)].into()
    );

    // a deleted entity comes back too
    let (status, body) = h.delete(path).await;
    let deleted = event_id(&assert_ok(status, &body));
    assert!(quota_of(&h, "erin").await.is_empty());
    revert(&h, deleted).await;
    assert_eq!(
        quota_of(&h, "erin").await,
        [("producer_byte_rate".to_string(), 1000.0)].into()
    );
}

#[tokio::test]
async fn a_revert_after_someone_else_changed_the_value_is_refused_and_changes_nothing() {
    let h = Harness::start().await;
    let path = "/api/v1/quotas/user/frank";
    let (status, body) = h
        .put(path, json!({"values": {"consumer_byte_rate": 500}}))
        .await;
    let first = event_id(&assert_ok(status, &body));
    let fingerprint = preview(&h, first).await["fingerprint"].clone();
    // someone changes the entity again
    h.put(path, json!({"values": {"consumer_byte_rate": 700}}))
        .await;

    let p = preview(&h, first).await;
    assert_eq!(p["canRevert"], false);
    assert_eq!(
        p["conflicts"],
        json!([{"item": {"key": "consumer_byte_rate"}, "audited": 500.0, "current": 700.0, "revertTo": null}])
    );
    for fp in [fingerprint, p["fingerprint"].clone()] {
        let (status, body) = h
            .post(REVERT, json!({"eventId": first, "fingerprint": fp}))
            .await;
        let details = assert_error(status, &body, 409);
        assert_eq!(body["error"], "target changed since the audited change");
        assert!(details.contains("consumer_byte_rate"), "{details}");
    }
    assert_eq!(
        quota_of(&h, "frank").await,
        [("consumer_byte_rate".to_string(), 700.0)].into()
    );
    assert_eq!(h.audit().len(), 2, "refused reverts are not recorded");
}

#[tokio::test]
async fn a_revert_needs_the_fingerprint_of_a_current_preview() {
    let h = Harness::start().await;
    h.create_topic(NewTopic::new("ids", 1, 2)).await;
    let (status, body) = h
        .put(
            "/api/v1/topics/ids/config",
            json!({"configs": {"retention.ms": 1000}}),
        )
        .await;
    let changed = event_id(&assert_ok(status, &body));
    let (status, body) = h.post(REVERT, json!({"eventId": changed})).await;
    assert_error(status, &body, 409);
    assert_eq!(body["error"], "missing fingerprint");
    let (status, body) = h
        .post(
            REVERT,
            json!({"eventId": changed, "fingerprint": "rv1-0000000000000000"}),
        )
        .await;
    assert_error(status, &body, 409);
    assert_eq!(body["error"], "stale fingerprint");
    assert_eq!(
        h.topic_override("ids", "retention.ms").await.as_deref(),
        Some("1000")
    );
    let (status, body) = h
        .post(REVERT, json!({"eventId": 999_999, "fingerprint": "x"}))
        .await;
    assert_error(status, &body, 404);
    let (status, body) = h.post(PREVIEW, json!({"id": changed})).await;
    assert_error(status, &body, 400);
    assert_eq!(h.audit().len(), 1);
}

#[tokio::test]
async fn acl_changes_are_reverted_by_recreating_or_removing_the_bindings() {
    let h = Harness::start().await;
    let grant = json!({"resourceType": "Group", "resourceName": "billing-", "patternType": "Prefixed",
                       "principal": "User:gina", "operation": "Read", "permissionType": "Allow"});
    let (status, body) = h.post("/api/v1/acls", json!({"bindings": [grant]})).await;
    let created = event_id(&assert_ok(status, &body));
    let (status, body) = h.delete("/api/v1/acls?principal=User:gina").await;
    let deleted = event_id(&assert_ok(status, &body));
    // reverting the create is refused: the binding is already gone (changed since)
    let (status, body) = h
        .post(
            REVERT,
            json!({"eventId": created, "fingerprint": preview(&h, created).await["fingerprint"]}),
        )
        .await;
    assert_error(status, &body, 409);
    // reverting the delete brings it back
    revert(&h, deleted).await;
    let (_, listed) = h.get("/api/v1/acls?principal=User:gina").await;
    assert_eq!(listed["data"]["count"], 1, "{listed}");
    // and now the create can be reverted: the binding goes
    revert(&h, created).await;
    let (_, listed) = h.get("/api/v1/acls?principal=User:gina").await;
    assert_eq!(listed["data"]["count"], 0, "{listed}");
}

fn insert(h: &Harness, event: NewAuditEvent) -> i64 {
    h.store.insert_audit(&event).expect("insert audit event")
}

#[tokio::test]
async fn self_healing_events_are_never_reverted() {
    let h = Harness::start().await;
    let id = insert(
        &h,
        NewAuditEvent {
            at_ms: 1,
            action: "selfheal.apply".into(),
            method: "INTERNAL".into(),
            user_id: Some("pilot".into()),
            status: 202,
            target: Some("orders-0".into()),
            before: Some(json!({"replicas": [1, 2]})),
            after: Some(json!({"replicas": [1, 3]})),
            ..NewAuditEvent::default()
        },
    );
    for (path, request) in [
        (PREVIEW, json!({"eventId": id})),
        (REVERT, json!({"eventId": id, "fingerprint": "rv1-0"})),
    ] {
        let (status, body) = h.post(path, request).await;
        let details = assert_error(status, &body, 400);
        assert!(details.contains("selfheal.apply"), "{details}");
    }
    let data = h.data("/api/v1/audit-log?action=selfheal.apply").await;
    assert_eq!(data["events"][0]["revertible"], false);
    assert_eq!(h.audit().len(), 1);
}

#[tokio::test]
async fn a_reassignment_revert_is_previewed_against_the_live_placement_and_queued_for_the_executor()
{
    let h = Harness::start().await;
    h.create_topic(NewTopic::new("moved", 1, 2)).await;
    let metadata = h
        .kafka
        .metadata(Some(&["moved".to_string()]))
        .await
        .unwrap();
    let now: Vec<i32> = metadata.topic("moved").unwrap().partitions[0]
        .replicas
        .clone();
    let other = (1..=3).find(|b| !now.contains(b)).unwrap();
    let before = vec![now[0], other];
    let id = insert(
        &h,
        NewAuditEvent {
            at_ms: 1,
            action: "reassignments.apply".into(),
            method: "POST".into(),
            user_id: Some("alice".into()),
            status: 202,
            target: Some("moved-0".into()),
            before: Some(json!({"replicas": before})),
            after: Some(json!({"replicas": now})),
            ..NewAuditEvent::default()
        },
    );
    let p = preview(&h, id).await;
    assert_eq!(p["kind"], "reassignment");
    assert_eq!(p["canRevert"], true, "{p}");
    assert_eq!(
        p["changes"],
        json!([{"item": {"topic": "moved", "partition": 0}, "audited": now, "current": now, "revertTo": before}])
    );
    let (status, body) = h
        .post(
            REVERT,
            json!({"eventId": id, "fingerprint": p["fingerprint"]}),
        )
        .await;
    // Accepted: the moves back are queued as one operation for the executor (202 with its id),
    // with the `audit.revert` event written in the same transaction.
    assert_eq!(status, 202, "{body}");
    assert_eq!(body["data"]["state"], "queued");
    let op_id = body["data"]["executionId"].as_str().expect("executionId");
    let op = h.store.operation(op_id).unwrap().expect("operation queued");
    assert_eq!(op.kind, "revert");
    let moves = h.store.moves(op_id).unwrap();
    assert_eq!(moves.len(), 1);
    assert_eq!(moves[0].source, now);
    assert_eq!(moves[0].target, before);
    let events = h.audit();
    assert_eq!(events.len(), 2);
    assert!(events
        .iter()
        .any(|e| e.action == "audit.revert" && e.related_event_id == Some(id)));
    // A second revert while the first is queued: the slot is held.
    let p2 = preview(&h, id).await;
    let (status, _) = h
        .post(
            REVERT,
            json!({"eventId": id, "fingerprint": p2["fingerprint"]}),
        )
        .await;
    assert_eq!(status, 409);

    // a partition that moved elsewhere since the audited change is a conflict
    let elsewhere = vec![other, now[0]];
    let stale = insert(
        &h,
        NewAuditEvent {
            at_ms: 2,
            action: "reassignments.apply".into(),
            method: "POST".into(),
            status: 202,
            target: Some("moved-0".into()),
            before: Some(json!({"replicas": elsewhere})),
            after: Some(json!({"replicas": before})),
            ..NewAuditEvent::default()
        },
    );
    let p = preview(&h, stale).await;
    assert_eq!(p["canRevert"], false);
    assert_eq!(p["conflicts"].as_array().unwrap().len(), 1);
}

fn event(at_ms: i64, action: &str, user: &str, target: &str) -> NewAuditEvent {
    NewAuditEvent {
        at_ms,
        action: action.into(),
        method: "PUT".into(),
        user_id: Some(user.into()),
        requested_by: Some(user.into()),
        status: 200,
        target: Some(target.into()),
        summary: json!({"note": format!("{action} on {target}")}),
        ..NewAuditEvent::default()
    }
}

#[tokio::test]
async fn the_audit_log_filters_by_action_user_time_and_text_and_pages_newest_first() {
    // No cluster is needed to read the log.
    let (base, store, _dir) = serve("127.0.0.1:9").await;
    let day = 86_400_000;
    let t0 = 1_767_225_600_000; // 2026-01-01T00:00:00Z
    for (i, (action, user, target)) in [
        ("quotas.update", "alice", "/api/v1/quotas/user/x"),
        ("topics.config.update", "bob", "orders"),
        ("topics.config.update", "alice", "payments"),
        ("acls.create", "carol", "Topic:orders"),
        ("quotas.delete", "bob", "/api/v1/quotas/default"),
    ]
    .into_iter()
    .enumerate()
    {
        store
            .insert_audit(&event(t0 + i as i64 * day, action, user, target))
            .unwrap();
    }
    let http = reqwest::Client::new();
    let get = |query: &'static str| {
        let http = http.clone();
        let url = format!("{base}/api/v1/audit-log{query}");
        async move {
            let response = http.get(url).send().await.unwrap();
            let status = response.status().as_u16();
            (status, response.json::<Value>().await.unwrap())
        }
    };
    let targets = |body: &Value| -> Vec<String> {
        body["data"]["events"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| e["target"].as_str().unwrap().to_string())
            .collect()
    };
    let (status, all) = get("").await;
    assert_eq!(status, 200);
    assert_eq!(all["data"]["total"], 5);
    assert_eq!(
        targets(&all),
        [
            "/api/v1/quotas/default",
            "Topic:orders",
            "payments",
            "orders",
            "/api/v1/quotas/user/x"
        ],
        "newest first"
    );
    assert_eq!(all["data"]["events"][0]["at"], "2026-01-05T00:00:00.000Z");

    let (_, by_action) = get("?action=topics.config.update").await;
    assert_eq!(targets(&by_action), ["payments", "orders"]);
    let (_, by_user) = get("?user=bob").await;
    assert_eq!(targets(&by_user), ["/api/v1/quotas/default", "orders"]);
    let (_, by_time) = get("?since=2026-01-02T00:00:00Z&until=1767484800000").await;
    assert_eq!(targets(&by_time), ["Topic:orders", "payments", "orders"]);
    let (_, by_offset_time) = get("?since=2026-01-04T01:00:00%2B01:00").await;
    assert_eq!(
        targets(&by_offset_time),
        ["/api/v1/quotas/default", "Topic:orders"]
    );
    let (_, by_text) = get("?search=ORDERS").await;
    assert_eq!(targets(&by_text), ["Topic:orders", "orders"]);

    let (_, page) = get("?limit=2&offset=2").await;
    assert_eq!(targets(&page), ["payments", "orders"]);
    assert_eq!(page["data"]["count"], 2);
    assert_eq!(page["data"]["total"], 5);
    assert_eq!(page["data"]["hasMore"], true);
    let (_, last) = get("?limit=2&offset=4").await;
    assert_eq!(last["data"]["hasMore"], false);

    for bad in [
        "?since=yesterday",
        "?limit=-1",
        "?since=2026-02-01&until=2026-01-01",
        "?sort=asc",
    ] {
        let (status, body) = get(bad).await;
        assert_error(status, &body, 400);
    }
}

async fn failures(h: &Harness, error_type: &str) -> u64 {
    let text = h
        .http
        .get(format!("{}/metrics", h.base))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    let prefix = format!("ballast_audit_events_failure_total{{error_type=\"{error_type}\"}} ");
    text.lines()
        .find_map(|l| l.strip_prefix(&prefix))
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or_else(|| panic!("{prefix} missing"))
}

#[tokio::test]
async fn a_change_waits_out_a_short_write_lock_and_is_refused_with_503_when_the_lock_outlasts_the_busy_timeout(
) {
    let h = Harness::start_with(OpenOptions {
        busy_timeout: Duration::from_millis(1500),
        ..OpenOptions::default()
    })
    .await;
    let path = "/api/v1/quotas/user/hank";
    let db = h.store.path().to_path_buf();

    // Busy for a moment, within the busy timeout: the change is made and audited.
    let holder = hold_write_lock(db.clone(), Duration::from_millis(300));
    let (status, body) = h
        .put(path, json!({"values": {"producer_byte_rate": 100}}))
        .await;
    tokio::task::spawn_blocking(move || holder.join())
        .await
        .unwrap()
        .unwrap();
    let data = assert_ok(status, &body);
    assert!(data["auditEventId"].as_i64().is_some(), "{data}");
    assert_eq!(h.audit().len(), 1);

    // Busy past the busy timeout: the audit intent cannot be written, so nothing is changed and
    // the caller is told to retry; no event is lost because none was needed.
    let holder = hold_write_lock(db, Duration::from_millis(4000));
    let response = h
        .http
        .put(format!("{}{path}", h.base))
        .header("content-type", "application/json")
        .body(json!({"values": {"producer_byte_rate": 200}}).to_string())
        .send()
        .await
        .unwrap();
    assert_eq!(response.status().as_u16(), 503);
    assert!(response.headers().get("retry-after").is_some());
    assert_eq!(
        quota_of(&h, "hank").await,
        [("producer_byte_rate".to_string(), 100.0)]
            .into_iter()
            .collect(),
        "the cluster keeps the value before"
    );
    tokio::task::spawn_blocking(move || holder.join())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(failures(&h, "dropped").await, 0);
    assert_eq!(h.audit().len(), 1);
}

#[tokio::test]
async fn the_completed_moves_of_a_cancelled_apply_can_be_reverted_and_the_ones_never_run_are_no_conflict(
) {
    let h = Harness::start().await;
    h.create_topic(NewTopic::new("half", 2, 2)).await;
    let metadata = h.kafka.metadata(Some(&["half".to_string()])).await.unwrap();
    let parts = &metadata.topic("half").unwrap().partitions;
    let now: Vec<Vec<i32>> = parts.iter().map(|p| p.replicas.clone()).collect();
    let other = |r: &Vec<i32>| (1..=3).find(|b| !r.contains(b)).unwrap();
    // Partition 0 was moved (it holds what the event recorded after); partition 1's move never
    // ran (cancelled): it still holds what the event recorded before.
    let p0_before = vec![now[0][0], other(&now[0])];
    let p1_after = vec![now[1][0], other(&now[1])];
    let rows = |a: &Vec<i32>, b: &Vec<i32>| json!([{"topic": "half", "partition": 0, "replicas": a}, {"topic": "half", "partition": 1, "replicas": b}]);
    let id = insert(
        &h,
        NewAuditEvent {
            at_ms: 1,
            action: "reassignments.apply".into(),
            method: "POST".into(),
            user_id: Some("alice".into()),
            status: 202,
            target: Some("half".into()),
            before: Some(rows(&p0_before, &now[1])),
            after: Some(rows(&now[0], &p1_after)),
            ..NewAuditEvent::default()
        },
    );
    let p = preview(&h, id).await;
    assert_eq!(p["canRevert"], true, "{p}");
    assert_eq!(
        p["conflicts"],
        json!([]),
        "the move that never ran is no conflict"
    );
    assert_eq!(
        p["changes"],
        json!([{"item": {"topic": "half", "partition": 0}, "audited": now[0], "current": now[0], "revertTo": p0_before}]),
        "only the completed move is reverted"
    );
    let done = revert(&h, id).await;
    let op = done["executionId"].as_str().expect("executionId");
    let moves = h.store.moves(op).unwrap();
    assert_eq!(moves.len(), 1);
    assert_eq!(moves[0].partition, 0);
    assert_eq!(moves[0].target, p0_before);
}

#[tokio::test]
async fn a_reverted_event_says_which_event_reverted_it() {
    let h = Harness::start().await;
    h.create_topic(NewTopic::new("undo", 1, 1)).await;
    let (status, body) = h
        .put(
            "/api/v1/topics/undo/config",
            json!({"configs": {"retention.ms": "3600000"}}),
        )
        .await;
    let changed = event_id(&assert_ok(status, &body));
    assert_eq!(preview(&h, changed).await["revertedBy"], Value::Null);
    let done = revert(&h, changed).await;
    let p = preview(&h, changed).await;
    assert_eq!(p["canRevert"], false);
    let by = h
        .audit()
        .iter()
        .find(|e| e.action == "audit.revert" && e.related_event_id == Some(changed))
        .map(|e| e.id)
        .expect("the revert event");
    assert_eq!(p["revertedBy"], by, "{p} {done}");
    assert!(
        p["reason"]
            .as_str()
            .is_some_and(|r| r.contains(&format!("reverted by event {by}"))),
        "{p}"
    );
}
