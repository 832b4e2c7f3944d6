//! The management endpoints against a simulated cluster: every change reaches the cluster and
//! leaves exactly one audit row with the values before and after it; every bad request is a 4xx
//! envelope that changes nothing and records nothing.

mod manage_common;

use ballast_kafka::{
    Acks, AclBinding, AclFilter, AclOperation, AclPatternType, AclPermissionType, AclResourceType,
    Compression, NewTopic, ProduceRecord, QuotaEntity, QuotaFilter, QuotaName, TopicPartition,
};
use manage_common::{assert_error, assert_ok, Harness};
use reqwest::Method;
use serde_json::{json, Value};

/// Base of the record timestamps of `ledger`: record `i` is at `T0 + i` seconds.
const T0: i64 = 1_767_225_600_000;

/// `ledger` (2 partitions: 10 and 4 records, timestamped) and the empty group `audit-readers`
/// that committed 3 and 4.
async fn with_ledger() -> Harness {
    ledger_in(Harness::start().await).await
}

/// `ledger` (10 records in partition 0, 4 in partition 1) and `audit-readers`, which committed 3
/// and 4 of them (lag 7), in the cluster of `h`.
async fn ledger_in(h: Harness) -> Harness {
    h.create_topic(NewTopic::new("ledger", 2, 2)).await;
    for (partition, n) in [(0, 10), (1, 4)] {
        let records: Vec<ProduceRecord> = (0..n)
            .map(|i| ProduceRecord::new(Some(b"k"), Some(b"v")).with_timestamp(T0 + i * 1000))
            .collect();
        h.kafka
            .produce(
                &TopicPartition::new("ledger", partition),
                &records,
                Acks::All,
                Compression::None,
            )
            .await
            .expect("produce");
    }
    commit(&h, &[(0, 3), (1, 4)]).await;
    h
}

async fn commit(h: &Harness, offsets: &[(i32, i64)]) {
    let offsets: Vec<(TopicPartition, i64)> = offsets
        .iter()
        .map(|(p, o)| (TopicPartition::new("ledger", *p), *o))
        .collect();
    let results = h
        .kafka
        .commit_offsets("audit-readers", &offsets)
        .await
        .expect("commit");
    assert!(results.iter().all(|r| r.error.is_none()), "{results:?}");
}

async fn committed(h: &Harness, group: &str) -> Vec<(i32, Option<i64>)> {
    h.kafka
        .committed_offsets(group, None)
        .await
        .expect("committed offsets")
        .into_iter()
        .map(|c| (c.partition, c.offset))
        .collect()
}

/// The one audit event with `action`, asserting there is exactly one event in all.
fn only_event(h: &Harness, action: &str) -> ballast_schema::AuditEvent {
    let events = h.audit();
    assert_eq!(events.len(), 1, "{events:#?}");
    assert_eq!(events[0].action, action);
    events[0].clone()
}

#[tokio::test]
async fn a_topic_config_update_changes_the_cluster_and_writes_one_audit_row_with_before_and_after()
{
    let h = with_ledger().await;
    let (status, body) = h
        .put(
            "/api/v1/topics/ledger/config",
            json!({"configs": {"retention.ms": 86400000, "cleanup.policy": "compact"}}),
        )
        .await;
    let data = assert_ok(status, &body);
    assert_eq!(data["topic"], "ledger");
    assert_eq!(
        data["changes"],
        json!([
            {"name": "cleanup.policy", "before": null, "after": "compact"},
            {"name": "retention.ms", "before": null, "after": "86400000"},
        ])
    );
    assert_eq!(
        h.topic_override("ledger", "retention.ms").await.as_deref(),
        Some("86400000")
    );
    let event = only_event(&h, "topics.config.update");
    assert_eq!(data["auditEventId"], event.id);
    assert_eq!(event.method, "PUT");
    assert_eq!(event.user_id.as_deref(), Some("alice"));
    assert_eq!(event.requested_by.as_deref(), Some("alice"));
    assert_eq!(event.status, 200);
    assert_eq!(event.target.as_deref(), Some("ledger"));
    assert_eq!(
        event.before,
        Some(json!({"topics": {"ledger": {"cleanup.policy": null, "retention.ms": null}}}))
    );
    assert_eq!(
        event.after,
        Some(
            json!({"topics": {"ledger": {"cleanup.policy": "compact", "retention.ms": "86400000"}}})
        )
    );

    // null removes the override again
    let (status, body) = h
        .put(
            "/api/v1/topics/ledger/config",
            json!({"configs": {"cleanup.policy": null}}),
        )
        .await;
    assert_ok(status, &body);
    assert_eq!(h.topic_override("ledger", "cleanup.policy").await, None);
}

#[tokio::test]
async fn bad_config_requests_are_4xx_change_nothing_and_record_nothing() {
    let h = with_ledger().await;
    h.put(
        "/api/v1/topics/ledger/config",
        json!({"configs": {"retention.ms": 1000}}),
    )
    .await;
    let events_before = h.audit().len();
    let cases: Vec<(&str, Option<Value>, u16, &str)> = vec![
        (
            "/api/v1/topics/nope/config",
            Some(json!({"configs": {"retention.ms": 1}})),
            404,
            "nope",
        ),
        (
            "/api/v1/topics/ledger/config",
            Some(json!({"configs": {"retention.ms": "soon", "segment.ms": 5000}})),
            400,
            "Invalid value soon for configuration retention.ms",
        ),
        (
            "/api/v1/topics/ledger/config",
            Some(json!({"configs": {"retention.ms": 5, "no.such.key": 1}})),
            400,
            "the cluster defines no topic configuration \"no.such.key\"",
        ),
        (
            "/api/v1/topics/ledger/config",
            Some(json!({"configs": {}})),
            400,
            "at least one key",
        ),
        (
            "/api/v1/topics/ledger/config",
            Some(json!({"configs": {"retention.ms": 5}, "extra": 1})),
            400,
            "unknown field",
        ),
        (
            "/api/v1/topics/config/bulk",
            Some(json!({"topics": ["ledger", "nope"], "configs": {"retention.ms": 5}})),
            404,
            "nope",
        ),
        (
            "/api/v1/topics/config/bulk",
            Some(json!({"updates": [
                {"topic": "ledger", "configs": {"retention.ms": 5}},
                {"topic": "ledger", "configs": {"retention.ms": 6}}
            ]})),
            400,
            "more than once",
        ),
    ];
    for (path, body, expected, says) in cases {
        let (status, answer) = h.send(Method::PUT, path, body.as_ref(), None).await;
        let details = assert_error(status, &answer, expected);
        assert!(details.contains(says), "{path} {body:?}: {details}");
    }
    // malformed JSON and a body that is not JSON
    let response = h
        .http
        .put(format!("{}/api/v1/topics/ledger/config", h.base))
        .header("content-type", "application/json")
        .body("{\"configs\": ")
        .send()
        .await
        .unwrap();
    let status = response.status().as_u16();
    assert_error(status, &response.json().await.unwrap(), 400);
    let response = h
        .http
        .put(format!("{}/api/v1/topics/ledger/config", h.base))
        .body("retention.ms=5")
        .send()
        .await
        .unwrap();
    let status = response.status().as_u16();
    assert_error(status, &response.json().await.unwrap(), 400);

    assert_eq!(h.audit().len(), events_before, "no audit row for a refusal");
    assert_eq!(
        h.topic_override("ledger", "retention.ms").await.as_deref(),
        Some("1000"),
        "the valid key of a refused request was not applied"
    );
    assert_eq!(h.topic_override("ledger", "segment.ms").await, None);
}

#[tokio::test]
async fn a_bulk_update_changes_every_topic_and_records_one_row() {
    let h = with_ledger().await;
    h.create_topic(NewTopic::new("journal", 1, 2)).await;
    let (status, body) = h
        .put(
            "/api/v1/topics/config/bulk",
            json!({"topics": ["ledger", "journal"], "configs": {"retention.bytes": 1048576}}),
        )
        .await;
    let data = assert_ok(status, &body);
    assert_eq!(data["topics"].as_array().unwrap().len(), 2);
    for topic in ["ledger", "journal"] {
        assert_eq!(
            h.topic_override(topic, "retention.bytes").await.as_deref(),
            Some("1048576")
        );
    }
    let event = only_event(&h, "topics.config.bulk_update");
    assert_eq!(event.target.as_deref(), Some("2 topics"));
    assert_eq!(
        event.after,
        Some(json!({"topics": {
            "journal": {"retention.bytes": "1048576"},
            "ledger": {"retention.bytes": "1048576"}
        }}))
    );
}

#[tokio::test]
async fn offsets_reset_to_each_strategy_are_committed_and_audited() {
    let h = with_ledger().await;
    let path = "/api/v1/consumer-groups/audit-readers/reset-offsets";
    let cases = [
        (
            json!({"strategy": "earliest"}),
            vec![(0, Some(0)), (1, Some(0))],
        ),
        (
            json!({"strategy": "latest"}),
            vec![(0, Some(10)), (1, Some(4))],
        ),
        (
            json!({"strategy": "timestamp", "timestamp": "2026-01-01T00:00:05Z"}),
            vec![(0, Some(5)), (1, Some(4))],
        ),
        (
            json!({"strategy": "shift", "shiftBy": -2}),
            vec![(0, Some(3)), (1, Some(2))],
        ),
        (
            json!({"strategy": "offsets", "offsets": [{"topic": "ledger", "partition": 0, "offset": 7}]}),
            vec![(0, Some(7)), (1, Some(2))],
        ),
    ];
    for (i, (request, expected)) in cases.into_iter().enumerate() {
        let (status, body) = h.post(path, request.clone()).await;
        let data = assert_ok(status, &body);
        assert_eq!(data["applied"], true, "{request}");
        assert_eq!(committed(&h, "audit-readers").await, expected, "{request}");
        let events = h.audit();
        assert_eq!(events.len(), i + 1, "one row per reset");
        assert_eq!(events[0].action, "consumer_groups.reset_offsets");
        assert_eq!(events[0].target.as_deref(), Some("audit-readers"));
        assert_eq!(events[0].method, "POST");
    }
    let last = &h.audit()[0];
    assert_eq!(
        last.before,
        Some(json!({"offsets": [{"topic": "ledger", "partition": 0, "offset": 3}]}))
    );
    assert_eq!(
        last.after,
        Some(json!({"offsets": [{"topic": "ledger", "partition": 0, "offset": 7}]}))
    );
}

#[tokio::test]
async fn a_dry_run_answers_the_planned_offsets_and_changes_and_records_nothing() {
    let h = with_ledger().await;
    let (status, body) = h
        .post(
            "/api/v1/consumer-groups/audit-readers/reset-offsets",
            json!({"strategy": "earliest", "topic": "ledger", "dryRun": true}),
        )
        .await;
    let data = assert_ok(status, &body);
    assert_eq!(data["dryRun"], true);
    assert_eq!(data["applied"], false);
    assert!(data.get("auditEventId").is_none(), "{data}");
    let planned: Vec<(i64, i64, i64)> = data["partitions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            (
                p["currentOffset"].as_i64().unwrap(),
                p["newOffset"].as_i64().unwrap(),
                p["lagAfter"].as_i64().unwrap(),
            )
        })
        .collect();
    assert_eq!(planned, [(3, 0, 10), (4, 0, 4)]);
    assert_eq!(
        committed(&h, "audit-readers").await,
        [(0, Some(3)), (1, Some(4))]
    );
    assert!(h.audit().is_empty());
}

#[tokio::test]
async fn a_shift_before_the_earliest_offset_is_clamped_and_marked() {
    let h = with_ledger().await;
    let (status, body) = h
        .post(
            "/api/v1/consumer-groups/audit-readers/reset-offsets",
            json!({"strategy": "shift", "shiftBy": -100}),
        )
        .await;
    let data = assert_ok(status, &body);
    assert!(data["partitions"]
        .as_array()
        .unwrap()
        .iter()
        .all(|p| p["newOffset"] == 0 && p["clamped"] == true));
    assert_eq!(
        committed(&h, "audit-readers").await,
        [(0, Some(0)), (1, Some(0))]
    );
}

#[tokio::test]
async fn bad_offset_resets_are_4xx_and_change_and_record_nothing() {
    let h = with_ledger().await;
    let reset = |group: &str| format!("/api/v1/consumer-groups/{group}/reset-offsets");
    let cases = [
        (reset("nobody-here"), json!({"strategy": "earliest"}), 404),
        (reset("audit-readers"), json!({"strategy": "sideways"}), 400),
        (reset("audit-readers"), json!({"strategy": "shift"}), 400),
        (
            reset("audit-readers"),
            json!({"strategy": "earliest", "topic": "nope"}),
            404,
        ),
        (
            reset("audit-readers"),
            json!({"strategy": "earliest", "topic": "ledger", "partitions": [7]}),
            404,
        ),
        (
            reset("audit-readers"),
            json!({"strategy": "offsets", "offsets": [{"topic": "ledger", "partition": 0, "offset": 11}]}),
            400,
        ),
        (
            reset("audit-readers"),
            json!({"strategy": "offsets", "offsets": [{"topic": "ledger", "partition": 0, "offset": -1}]}),
            400,
        ),
        (
            reset("audit-readers"),
            json!({"strategy": "timestamp", "timestamp": "yesterday"}),
            400,
        ),
    ];
    for (path, request, expected) in cases {
        let (status, body) = h.post(&path, request.clone()).await;
        assert_error(status, &body, expected);
    }
    assert_eq!(
        committed(&h, "audit-readers").await,
        [(0, Some(3)), (1, Some(4))]
    );
    let (status, body) = h.delete("/api/v1/consumer-groups/nobody-here").await;
    assert_error(status, &body, 404);
    assert!(h.audit().is_empty());
}

#[tokio::test]
async fn offset_reset_and_group_delete_are_refused_with_409_while_the_group_has_active_members() {
    let h = Harness::start().await;
    h.add_consumed_topic("busy");
    let group = "busy-consumer-0";
    let members = h.kafka.describe_groups(&[group.to_string()]).await.unwrap();
    assert!(
        !members[0].members.is_empty(),
        "the simulator holds members"
    );
    let before = committed(&h, group).await;
    let (status, body) = h
        .post(
            &format!("/api/v1/consumer-groups/{group}/reset-offsets"),
            json!({"strategy": "earliest"}),
        )
        .await;
    let details = assert_error(status, &body, 409);
    assert_eq!(body["error"], "consumer group has active members");
    assert!(details.contains("active member"), "{details}");
    let (status, body) = h.delete(&format!("/api/v1/consumer-groups/{group}")).await;
    assert_error(status, &body, 409);
    let (status, body) = h
        .post(
            &format!("/api/v1/consumer-groups/{group}/reset-offsets"),
            json!({"strategy": "earliest", "dryRun": true}),
        )
        .await;
    assert_error(status, &body, 409);
    assert!(h.audit().is_empty());
    let after = committed(&h, group).await;
    // the simulated members keep committing forward, never back to the earliest offset
    for ((p, was), (_, now)) in before.iter().zip(&after) {
        assert!(now >= was, "partition {p}: {was:?} -> {now:?}");
    }
}

#[tokio::test]
async fn deleting_an_empty_group_removes_it_and_records_its_offsets() {
    let h = with_ledger().await;
    let (status, body) = h.delete("/api/v1/consumer-groups/audit-readers").await;
    let data = assert_ok(status, &body);
    assert_eq!(data["deleted"], true);
    assert_eq!(data["offsets"], 2);
    let listed = h.kafka.list_groups().await.unwrap();
    assert!(listed.iter().all(|g| g.group_id != "audit-readers"));
    let event = only_event(&h, "consumer_groups.delete");
    assert_eq!(event.method, "DELETE");
    assert_eq!(
        event.before.as_ref().map(|b| b["offsets"].clone()),
        Some(json!([
            {"topic": "ledger", "partition": 0, "offset": 3},
            {"topic": "ledger", "partition": 1, "offset": 4}
        ]))
    );
    assert_eq!(event.after, None);
}

async fn quota_of(h: &Harness, entity: &QuotaEntity) -> std::collections::BTreeMap<String, f64> {
    h.kafka
        .describe_client_quotas(&QuotaFilter::all())
        .await
        .unwrap()
        .into_iter()
        .find(|q| &q.entity == entity)
        .map(|q| q.values)
        .unwrap_or_default()
}

#[tokio::test]
async fn quota_put_accepts_percentages_above_100_replaces_the_entity_and_delete_removes_it() {
    let h = Harness::start().await;
    let path = "/api/v1/quotas/user/bob/app";
    let entity = QuotaEntity {
        user: Some(QuotaName::name("bob")),
        client_id: Some(QuotaName::name("app")),
        ip: None,
    };
    let (status, body) = h
        .put(
            path,
            json!({"values": {"request_percentage": 250, "producer_byte_rate": 1048576}}),
        )
        .await;
    let data = assert_ok(status, &body);
    assert_eq!(data["path"], path);
    assert_eq!(data["before"], json!({}));
    assert_eq!(
        quota_of(&h, &entity).await,
        [
            ("producer_byte_rate".to_string(), 1048576.0),
            ("request_percentage".to_string(), 250.0)
        ]
        .into()
    );
    let event = only_event(&h, "quotas.update");
    assert_eq!(event.target.as_deref(), Some(path));
    assert_eq!(
        event.after,
        Some(json!({
            "entityPath": path,
            "entity": {"user": "bob", "clientId": "app"},
            "values": {"producer_byte_rate": 1048576.0, "request_percentage": 250.0}
        }))
    );

    // PUT replaces: a key left out is removed
    let (status, body) = h
        .put(path, json!({"values": {"consumer_byte_rate": 2048}}))
        .await;
    assert_ok(status, &body);
    assert_eq!(
        quota_of(&h, &entity).await,
        [("consumer_byte_rate".to_string(), 2048.0)].into()
    );

    let (status, body) = h.delete(path).await;
    let data = assert_ok(status, &body);
    assert_eq!(data["after"], json!({}));
    assert!(quota_of(&h, &entity).await.is_empty());
    assert_eq!(h.audit()[0].action, "quotas.delete");
    assert_eq!(h.audit().len(), 3);

    // nothing left to delete, bad values, unknown keys: refused and not recorded
    let (status, body) = h.delete(path).await;
    assert_error(status, &body, 404);
    for bad in [
        json!({"values": {"request_percentage": 0}}),
        json!({"values": {"warp_factor": 9}}),
        json!({"values": {}}),
        json!({"request_percentage": 5}),
    ] {
        let (status, body) = h.put("/api/v1/quotas/default-user", bad).await;
        assert_error(status, &body, 400);
    }
    assert_eq!(h.audit().len(), 3);
    assert!(quota_of(
        &h,
        &QuotaEntity {
            user: Some(QuotaName::Default),
            client_id: None,
            ip: None
        }
    )
    .await
    .is_empty());
}

fn binding(principal: &str, operation: AclOperation) -> AclBinding {
    AclBinding {
        resource_type: AclResourceType::Topic,
        resource_name: "ledger".into(),
        pattern_type: AclPatternType::Literal,
        principal: principal.into(),
        host: "*".into(),
        operation,
        permission_type: AclPermissionType::Allow,
    }
}

async fn acls(h: &Harness) -> Vec<AclBinding> {
    let mut all = h.kafka.describe_acls(&AclFilter::all()).await.unwrap();
    all.sort_by_key(|b| (b.principal.clone(), format!("{:?}", b.operation)));
    all
}

#[tokio::test]
async fn acls_are_created_replaced_and_deleted_by_filter_each_with_one_audit_row() {
    let h = Harness::start().await;
    let read = json!({"resourceType": "Topic", "resourceName": "ledger", "principal": "User:carol",
                      "operation": "Read", "permissionType": "Allow"});
    let write = json!({"resourceType": "Topic", "resourceName": "ledger", "principal": "User:dave",
                       "operation": "Write", "permissionType": "Allow"});
    let (status, body) = h
        .post("/api/v1/acls", json!({"bindings": [read, write]}))
        .await;
    let data = assert_ok(status, &body);
    assert_eq!(data["count"], 2);
    assert_eq!(
        acls(&h).await,
        [
            binding("User:carol", AclOperation::Read),
            binding("User:dave", AclOperation::Write)
        ]
    );
    assert_eq!(
        only_event(&h, "acls.create").before,
        Some(json!({"bindings": []}))
    );

    let describe = json!({"resourceType": "Topic", "resourceName": "ledger",
                          "principal": "User:carol", "operation": "Describe", "permissionType": "Allow"});
    let (status, body) = h
        .put("/api/v1/acls", json!({"from": read, "to": describe}))
        .await;
    assert_ok(status, &body);
    assert_eq!(
        acls(&h).await,
        [
            binding("User:carol", AclOperation::Describe),
            binding("User:dave", AclOperation::Write)
        ]
    );
    assert_eq!(h.audit()[0].action, "acls.update");

    let (status, body) = h.delete("/api/v1/acls?principal=User:dave").await;
    let data = assert_ok(status, &body);
    assert_eq!(data["count"], 1);
    assert_eq!(
        acls(&h).await,
        [binding("User:carol", AclOperation::Describe)]
    );
    let event = &h.audit()[0];
    assert_eq!(event.action, "acls.delete");
    assert_eq!(event.after, Some(json!({"bindings": []})));
    assert_eq!(h.audit().len(), 3);

    // refusals: a filter value in a binding, a missing binding to replace, a filter matching
    // everything or nothing
    let (status, body) = h
        .post(
            "/api/v1/acls",
            json!({"bindings": [{"resourceType": "Any", "resourceName": "x", "principal": "User:x",
                                 "operation": "Read", "permissionType": "Allow"}]}),
        )
        .await;
    assert_error(status, &body, 400);
    let (status, body) = h
        .put("/api/v1/acls", json!({"from": write, "to": read}))
        .await;
    assert_error(status, &body, 404);
    let (status, body) = h.delete("/api/v1/acls").await;
    assert_error(status, &body, 400);
    let (status, body) = h.delete("/api/v1/acls?principal=User:nobody").await;
    assert_error(status, &body, 404);
    assert_eq!(h.audit().len(), 3);
    assert_eq!(
        acls(&h).await,
        [binding("User:carol", AclOperation::Describe)]
    );
}

#[tokio::test]
async fn refresh_metadata_answers_the_cluster_shape_and_is_audited_as_the_header_user() {
    let h = Harness::start().await;
    let (status, body) = h
        .send(
            Method::POST,
            "/api/v1/cluster/refresh-metadata",
            None,
            Some("ops-bot"),
        )
        .await;
    let data = assert_ok(status, &body);
    assert_eq!(data["brokers"], 3);
    assert!(data["partitions"].as_u64().unwrap() >= 6, "{data}");
    let event = only_event(&h, "cluster.refresh_metadata");
    assert_eq!(event.user_id.as_deref(), Some("ops-bot"));
    assert_eq!(event.target.as_deref(), Some("cluster"));

    // without the header the user is anonymous; a control character is refused
    let (status, body) = h
        .send(Method::POST, "/api/v1/cluster/refresh-metadata", None, None)
        .await;
    assert_ok(status, &body);
    assert_eq!(h.audit()[0].user_id.as_deref(), Some("anonymous"));
    let (status, body) = h
        .send(
            Method::POST,
            "/api/v1/cluster/refresh-metadata",
            None,
            Some("zoë"),
        )
        .await;
    assert_error(status, &body, 400);
    assert_eq!(h.audit().len(), 2);
}

#[tokio::test]
async fn refresh_metadata_requests_an_immediate_observer_sample_through_the_database() {
    let h = Harness::start().await;
    assert_eq!(h.store.sample_request().unwrap(), None);
    let (status, body) = h
        .send(Method::POST, "/api/v1/cluster/refresh-metadata", None, None)
        .await;
    let data = assert_ok(status, &body);
    let sample = &data["observerSample"];
    assert_eq!(sample["requested"], true, "{data}");
    assert_eq!(
        sample["pollSeconds"], 1.0,
        "BALLAST_SAMPLE_REQUEST_POLL default: {data}"
    );
    let first = h
        .store
        .sample_request()
        .unwrap()
        .expect("the observer's request row is set");
    assert_eq!(
        sample["requestedAt"],
        ballast_runtime::format_rfc3339_ms(first.requested_at_ms).as_str()
    );
    // A second request before the observer sampled coalesces into the pending one.
    let (status, body) = h
        .send(Method::POST, "/api/v1/cluster/refresh-metadata", None, None)
        .await;
    assert_ok(status, &body);
    let second = h.store.sample_request().unwrap().expect("still pending");
    assert!(second.seq > first.seq);
    assert_eq!(
        only_event_count(&h, "cluster.refresh_metadata"),
        2,
        "each request is audited"
    );
    assert_eq!(h.audit()[0].summary["observerSampleRequested"], true);
}

fn only_event_count(h: &Harness, action: &str) -> usize {
    h.audit().iter().filter(|e| e.action == action).count()
}

#[tokio::test]
async fn metrics_expose_audit_event_failures_from_the_start() {
    let h = Harness::start().await;
    let text = h
        .http
        .get(format!("{}/metrics", h.base))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    for error_type in ["busy", "pool", "dropped"] {
        let line = format!("ballast_audit_events_failure_total{{error_type=\"{error_type}\"}} 0");
        assert!(text.contains(&line), "{line} missing");
    }
}

#[tokio::test]
async fn a_topic_named_config_is_not_shadowed_by_the_bulk_route() {
    let h = Harness::start().await;
    h.create_topic(NewTopic::new("config", 1, 2)).await;
    let (status, body) = h
        .put(
            "/api/v1/topics/config/config",
            json!({"configs": {"retention.ms": 5000}}),
        )
        .await;
    assert_ok(status, &body);
    assert_eq!(
        h.topic_override("config", "retention.ms").await.as_deref(),
        Some("5000")
    );
}

#[tokio::test]
async fn consumer_group_answers_come_from_one_fresh_read_until_a_change_goes_through_the_service() {
    // A read stays fresh for an hour here: only a change can make a new one during the test.
    let settings = [("BALLAST_LIVE_READ_MAX_AGE", "1h")];
    let h = ledger_in(Harness::start_configured(Default::default(), &settings).await).await;
    let lag = |data: &Value, rows: &str| {
        data[rows]
            .as_array()
            .and_then(|rows| rows.iter().find(|g| g["groupId"] == "audit-readers"))
            .map(|g| g["totalLag"].clone())
    };
    let list = h.data("/api/v1/consumer-groups").await;
    assert_eq!(lag(&list, "groups"), Some(json!(7)), "{list}");
    // A commit made outside the service: the list and the summary still answer from the read.
    commit(&h, &[(0, 10), (1, 4)]).await;
    let list = h.data("/api/v1/consumer-groups?search=audit").await;
    assert_eq!(lag(&list, "groups"), Some(json!(7)), "{list}");
    let summary = h.data("/api/v1/consumer-groups/summary?limit=100").await;
    assert_eq!(lag(&summary, "topLagging"), Some(json!(7)), "{summary}");
    // A change through the service: the next answer is a read of its own, which sees it.
    let (status, body) = h
        .post(
            "/api/v1/consumer-groups/audit-readers/reset-offsets",
            json!({"strategy": "earliest"}),
        )
        .await;
    assert_ok(status, &body);
    let list = h.data("/api/v1/consumer-groups").await;
    assert_eq!(lag(&list, "groups"), Some(json!(14)), "{list}");
}

/// A KIP-848 consumer group (`group.protocol=consumer`), as Kafka 4.1 shows it: listed with its
/// type and real state, described with its members' epochs and assigned and target partitions,
/// its lag read; reset and delete refused with a 409 while members are active, then (its
/// consumers stopped) reset (dry run and real) and deleted, each audited. Never the 404 of a
/// group that does not exist.
#[tokio::test]
async fn a_kip848_consumer_group_is_listed_described_reset_and_deleted_as_kafka_4_shows_it() {
    use ballast_simcluster::state::GroupKind;
    let h = Harness::start().await;
    h.add_consumed_topic("events");
    h.sim
        .add_group("kip848", GroupKind::Consumer, "events", 2)
        .expect("a consumer group");

    let (status, body) = h.get("/api/v1/consumer-groups?search=kip848").await;
    let list = assert_ok(status, &body);
    let row = &list["groups"][0];
    assert_eq!(row["groupId"], "kip848");
    assert_eq!(row["groupType"], "consumer");
    assert_eq!(row["state"], "Stable");
    assert_eq!(row["members"], 2);
    assert!(row.get("error").is_none(), "{row}");

    let (status, body) = h.get("/api/v1/consumer-groups/kip848").await;
    let d = assert_ok(status, &body);
    assert_eq!(d["groupType"], "consumer");
    assert_eq!(d["state"], "Stable");
    assert_eq!(d["protocol"], "uniform");
    assert_eq!(d["groupEpoch"], 1);
    assert_eq!(d["assignmentEpoch"], 1);
    let members = d["members"].as_array().unwrap();
    assert_eq!(members.len(), 2);
    for m in members {
        assert_eq!(m["memberEpoch"], 1);
        assert_eq!(m["targetAssignment"], m["assignment"], "reconciled");
    }
    let (status, body) = h.get("/api/v1/consumer-groups/kip848/lag").await;
    let lag = assert_ok(status, &body);
    assert_eq!(lag["partitionCount"], 3, "{lag}");

    let reset = "/api/v1/consumer-groups/kip848/reset-offsets";
    for dry_run in [true, false] {
        let (status, body) = h
            .post(reset, json!({"strategy": "earliest", "dryRun": dry_run}))
            .await;
        let details = assert_error(status, &body, 409);
        assert!(
            details.contains("kip848 is Stable with 2 active member(s)"),
            "{details}"
        );
    }
    let (status, body) = h.delete("/api/v1/consumer-groups/kip848").await;
    assert_error(status, &body, 409);
    assert!(h.audit().is_empty());

    h.sim.stop_group("kip848").expect("its consumers stop");
    let (status, body) = h
        .post(reset, json!({"strategy": "earliest", "dryRun": true}))
        .await;
    let planned = assert_ok(status, &body);
    assert_eq!(planned["applied"], false);
    assert_eq!(planned["partitions"].as_array().unwrap().len(), 3);
    assert!(h.audit().is_empty(), "a dry run records nothing");
    let (status, body) = h
        .post(reset, json!({"strategy": "offsets", "offsets": [{"topic": "events", "partition": 0, "offset": 0}]}))
        .await;
    let done = assert_ok(status, &body);
    assert_eq!(done["applied"], true, "{done}");
    let now = h.kafka.committed_offsets("kip848", None).await.unwrap();
    assert_eq!(
        now.iter().find(|o| o.partition == 0).and_then(|o| o.offset),
        Some(0)
    );
    assert_eq!(
        only_event(&h, "consumer_groups.reset_offsets")
            .target
            .as_deref(),
        Some("kip848")
    );

    let (status, body) = h.delete("/api/v1/consumer-groups/kip848").await;
    assert_eq!(assert_ok(status, &body)["deleted"], true);
    assert!(h
        .kafka
        .list_groups()
        .await
        .unwrap()
        .iter()
        .all(|g| g.group_id != "kip848"));
    let (status, body) = h.get("/api/v1/consumer-groups/kip848").await;
    assert_error(status, &body, 404);
}

/// A share group (KIP-932): listed and described as one, its backlog counted from its
/// share-partition start offsets (it commits none); an offset reset says it is not supported
/// for share groups (400) instead of planning from commits it does not have; delete works once
/// it is empty.
#[tokio::test]
async fn a_share_group_is_described_with_its_backlog_from_its_start_offsets() {
    use ballast_simcluster::state::GroupKind;
    let h = Harness::start().await;
    h.add_consumed_topic("jobs");
    h.sim
        .add_group("workers", GroupKind::Share, "jobs", 1)
        .expect("a share group");
    let d = {
        let mut last = Value::Null;
        for _ in 0..100 {
            let (status, body) = h.get("/api/v1/consumer-groups/workers").await;
            last = assert_ok(status, &body);
            if last["offsets"].as_array().map(Vec::len) == Some(3) {
                break;
            }
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        }
        last
    };
    assert_eq!(d["groupType"], "share");
    assert_eq!(d["protocol"], "simple");
    for o in d["offsets"].as_array().unwrap() {
        assert!(o["committedOffset"].is_null(), "{o}");
        let start = o["startOffset"].as_i64().expect("a start offset");
        let end = o["logEndOffset"].as_i64().expect("a log end");
        assert_eq!(o["lag"].as_i64(), Some((end - start).max(0)), "{o}");
    }
    h.sim.stop_group("workers").expect("stop");
    let (status, body) = h
        .post(
            "/api/v1/consumer-groups/workers/reset-offsets",
            json!({"strategy": "earliest"}),
        )
        .await;
    let details = assert_error(status, &body, 400);
    assert!(details.contains("share group"), "{details}");
    let (status, body) = h.delete("/api/v1/consumer-groups/workers").await;
    assert_eq!(assert_ok(status, &body)["deleted"], true);
}

/// A streams group (KIP-1071), which no describe API ballast speaks describes: listed as what it
/// is with its listed state and members unknown (null, not 0); its detail, lag, reset and delete
/// answer that it cannot be described and why (502), never the 404 of a group that does not
/// exist; nothing is changed or recorded.
#[tokio::test]
async fn a_streams_group_is_listed_as_one_and_never_answered_as_unknown() {
    use ballast_simcluster::state::GroupKind;
    let h = Harness::start().await;
    h.add_consumed_topic("clicks");
    h.sim
        .add_group("app-streams", GroupKind::Streams, "clicks", 1)
        .expect("a streams group");
    let (status, body) = h.get("/api/v1/consumer-groups?search=app-streams").await;
    let row = assert_ok(status, &body)["groups"][0].clone();
    assert_eq!(row["groupType"], "streams", "{row}");
    assert_eq!(row["state"], "Stable", "{row}");
    assert_eq!(row["members"], Value::Null, "{row}");
    assert!(
        row["error"]
            .as_str()
            .unwrap_or_default()
            .contains("streams group"),
        "{row}"
    );
    for (status, body) in [
        h.get("/api/v1/consumer-groups/app-streams").await,
        h.get("/api/v1/consumer-groups/app-streams/lag").await,
        h.post(
            "/api/v1/consumer-groups/app-streams/reset-offsets",
            json!({"strategy": "earliest", "dryRun": true}),
        )
        .await,
        h.delete("/api/v1/consumer-groups/app-streams").await,
    ] {
        let details = assert_error(status, &body, 502);
        assert_eq!(body["error"], "group cannot be described", "{body}");
        assert!(
            details.contains("app-streams is a streams group and cannot be described"),
            "{details}"
        );
    }
    assert!(h.audit().is_empty());
}
