//! What-if simulation and blast radius over HTTP, on the hand-written observed view of
//! `observed_common::fixture` (brokers 1..3 alive on racks r1..r3, broker 4 down).

mod observed_common;

use observed_common::{assert_error, now_ms, Harness};
use serde_json::{json, Value};

const SIMULATE: &str = "/api/v1/what-if/simulate";
const BLAST: &str = "/api/v1/blast-radius/analyze";

async fn data(h: &Harness, path: &str, body: &Value) -> Value {
    let (status, answer) = h.post(path, &body.to_string()).await;
    assert_eq!(status, 200, "POST {path} {body}: {answer}");
    assert_eq!(answer["success"], true, "{answer}");
    answer["data"].clone()
}

fn broker(answer: &Value, id: i64) -> &Value {
    answer["brokers"]
        .as_array()
        .and_then(|b| b.iter().find(|b| b["brokerId"] == id))
        .unwrap_or_else(|| panic!("broker {id} in {answer}"))
}

fn codes(answer: &Value) -> Vec<String> {
    answer["warnings"]
        .as_array()
        .map(|w| {
            w.iter()
                .filter_map(|x| x["code"].as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

#[tokio::test]
async fn both_answer_503_before_the_first_sample() {
    let h = Harness::empty().await;
    let (status, body) = h
        .post(
            SIMULATE,
            r#"{"scenarios": [{"type": "addBrokers", "count": 1}]}"#,
        )
        .await;
    assert_error(status, &body, 503);
    let (status, body) = h.post(BLAST, r#"{"brokerId": 1}"#).await;
    assert_error(status, &body, 503);
}

#[tokio::test]
async fn what_if_adding_a_broker_moves_data_onto_it_and_shows_its_loads_after() {
    let h = Harness::with_fixture().await;
    // In rack r3: broker 4 (r1) is down, so the planner only repairs, and a repair keeps rack
    // awareness (orders-1 on racks r1, r1, r2 needs a replica in r3); a new broker in r2 would
    // take nothing.
    let d = data(
        &h,
        SIMULATE,
        &json!({"scenarios": [{"type": "addBrokers", "count": 1, "rack": "r3"}]}),
    )
    .await;
    assert!(d["observedAt"].is_string());
    assert!(d["coverage"]["brokers"].is_number());
    assert_eq!(
        d["throttle"],
        json!({"rateMb": 50.0, "bytesPerSec": 5e7, "source": "config"})
    );
    assert_eq!(d["scenarios"][0]["brokerIds"], json!([5]));
    let new = broker(&d, 5);
    assert_eq!(new["change"], "added");
    assert_eq!(new["loads"], Value::Null);
    assert!(
        new["loadsAfter"]["diskBytes"].as_f64().unwrap_or(0.0) > 0.0,
        "{new}"
    );
    let moves = d["moves"].as_array().expect("moves");
    assert!(moves.iter().any(|m| m["replicasAfter"]
        .as_array()
        .is_some_and(|r| r.contains(&json!(5)))));
    assert_eq!(d["movement"]["moves"], moves.len());
    // Broker 4 is down in the fixture: the planner only repairs, and says so.
    assert_eq!(d["plan"]["balanceHold"], true);
    assert!(codes(&d).contains(&"balance_hold".to_string()), "{d}");
    let seconds = d["movement"]["transfer"]["estimatedSeconds"]
        .as_f64()
        .expect("seconds");
    let bytes = d["movement"]["bytes"].as_f64().expect("bytes");
    assert!((seconds - bytes / 5e7).abs() < 0.01);
}

#[tokio::test]
async fn what_if_removing_the_down_broker_warns_about_replicas_that_cannot_leave_it() {
    let h = Harness::with_fixture().await;
    let d = data(
        &h,
        SIMULATE,
        &json!({"scenarios": [{"type": "removeBrokers", "brokerIds": [4]}]}),
    )
    .await;
    assert_eq!(broker(&d, 4)["change"], "removed");
    // dead-0 lives only on broker 4 and is offline: nothing can copy it.
    assert!(
        codes(&d).contains(&"removed_broker_not_drained".to_string()),
        "{d}"
    );
    assert!(d["moves"]
        .as_array()
        .expect("moves")
        .iter()
        .any(|m| m["cause"] == "broker-removal"));
}

#[tokio::test]
async fn what_if_bad_input_answers_400_naming_the_field_and_changes_nothing() {
    let h = Harness::with_fixture().await;
    let view = h.store.observed_view().expect("view");
    let settings = h.store.settings().expect("settings");
    let cases: [(&str, &str); 9] = [
        (r#"{"scenarios": ["#, "EOF"),
        ("", "EOF"),
        (
            r#"{"scenarios": [{"type": "explode"}]}"#,
            "scenarios[0].type",
        ),
        (
            r#"{"scenarios": [{"type": "scaleTraffic", "factor": "x"}]}"#,
            "scenarios[0].factor",
        ),
        (
            r#"{"scenarios": [{"type": "scaleTraffic", "factor": -2}]}"#,
            "scenarios[0].factor",
        ),
        (
            r#"{"scenarios": [{"type": "changeReplicationFactor", "topic": "nope", "replicationFactor": 3}]}"#,
            "scenarios[0].topic",
        ),
        (
            r#"{"scenarios": [{"type": "changeReplicationFactor", "topic": "orders", "replicationFactor": 0}]}"#,
            "scenarios[0].replicationFactor",
        ),
        (
            r#"{"scenarios": [{"type": "removeBrokers", "brokerIds": [1, 2, 3]}]}"#,
            "scenarios[0].brokerIds",
        ),
        (
            r#"{"scenarios": [{"type": "addBrokers", "brokerIds": [2]}]}"#,
            "scenarios[0].brokerIds[0]",
        ),
    ];
    for (body, mention) in cases {
        let (status, answer) = h.post(SIMULATE, body).await;
        let details = assert_error(status, &answer, 400);
        assert!(details.contains(mention), "{body}: {details}");
    }
    assert_eq!(h.store.observed_view().expect("view"), view);
    assert_eq!(h.store.settings().expect("settings"), settings);
    assert_eq!(h.store.proposals(10, 0).expect("proposals").total, 0);
}

#[tokio::test]
async fn blast_radius_of_a_broker_counts_offline_partitions_failovers_and_groups() {
    let h = Harness::with_fixture().await;
    let d = data(&h, BLAST, &json!({"brokerId": 1})).await;
    assert_eq!(d["failure"]["kind"], "broker");
    assert_eq!(d["failure"]["brokers"], json!([1]));
    // Ten `idle` partitions live only on broker 1.
    assert_eq!(d["summary"]["offline"], 10);
    assert_eq!(d["offline"]["partitions"][0]["topic"], "idle");
    // orders-0 and orders-1 drop to one in-sync replica under min ISR 2.
    assert_eq!(d["summary"]["underMinIsr"], 2);
    let orders3 = d["leadership"]["changes"]
        .as_array()
        .expect("changes")
        .iter()
        .find(|c| c["topic"] == "orders" && c["partition"] == 3)
        .cloned()
        .expect("orders-3 loses its leader");
    assert_eq!(
        orders3,
        json!({"topic": "orders", "partition": 3, "from": 1, "to": 2})
    );
    // orders-app commits on orders-0, -1 and -3 (leaders fail over) and its coordinator is 1.
    assert_eq!(
        d["consumerGroups"]["groups"],
        json!([{"groupId": "orders-app", "offlinePartitions": 0, "leaderMovedPartitions": 3,
                "coordinatorLost": true}])
    );
    // Copies with a destination: orders-1 (1 GB), clicks-0 (2 GB) and moving-0 (5 MB) go to
    // broker 3; the other partitions already have a replica on both brokers left. moving-0's
    // replica on 3 is only being added (out of sync): it is no copy yet, so it needs one.
    let r = &d["reReplication"];
    assert_eq!(r["transfer"]["bytes"], 3_005_000_000u64);
    assert_eq!(r["transfer"]["estimatedSeconds"], 60.1);
    assert_eq!(
        r["destinations"],
        json!([{"brokerId": 3, "replicas": 3, "bytes": 3_005_000_000u64}])
    );
    assert!(d["coverage"]["complete"].is_boolean());
}

#[tokio::test]
async fn blast_radius_uses_the_stored_throttle_override() {
    let h = Harness::with_fixture().await;
    h.store
        .put_setting("throttle.rate_mb", "100", now_ms())
        .expect("setting");
    let d = data(&h, BLAST, &json!({"rack": "r1"})).await;
    assert_eq!(d["throttle"]["source"], "setting");
    // Broker 4 (down) was on r1 too.
    assert_eq!(d["failure"]["brokers"], json!([1, 4]));
    assert_eq!(d["failure"]["alreadyDown"], json!([4]));
    // 3.005 GB at 100 MB/s (moving-0's replica on 3 is only being added).
    assert_eq!(d["reReplication"]["transfer"]["estimatedSeconds"], 30.05);
}

#[tokio::test]
async fn blast_radius_bad_input_answers_400_naming_the_field() {
    let h = Harness::with_fixture().await;
    let view = h.store.observed_view().expect("view");
    let cases = [
        (r#"{"brokerId": 9}"#, "brokerId"),
        (r#"{"brokerIds": [1, 9]}"#, "brokerIds[1]"),
        (r#"{"rack": "r9"}"#, "rack"),
        (r#"{}"#, "exactly one"),
        (r#"{"broker": 1}"#, "unknown field"),
        (r#"{"brokerId": "one"}"#, "brokerId"),
        ("not json", "JSON"),
    ];
    for (body, mention) in cases {
        let (status, answer) = h.post(BLAST, body).await;
        let details = assert_error(status, &answer, 400);
        assert!(details.contains(mention), "{body}: {details}");
    }
    assert_eq!(h.store.observed_view().expect("view"), view);
}

fn enter_maintenance(h: &Harness, broker_id: i32) {
    h.store
        .enter_maintenance(&ballast_schema::Maintenance {
            broker_id,
            entered_at_ms: now_ms(),
            requested_by: None,
            operation_id: None,
            reason: Some("disk swap".into()),
        })
        .expect("maintenance");
}

#[tokio::test]
async fn what_if_sees_brokers_in_maintenance_as_proposals_do() {
    let h = Harness::with_fixture().await;
    enter_maintenance(&h, 3);
    let d = data(
        &h,
        SIMULATE,
        &json!({"scenarios": [{"type": "addBrokers", "count": 1}]}),
    )
    .await;
    let three = broker(&d, 3);
    assert_eq!(three["takesLoad"], false, "{three}");
    assert!(
        d["moves"].as_array().expect("moves").iter().all(|m| {
            let after = m["replicasAfter"].as_array().expect("replicas");
            let before = m["replicasBefore"].as_array().expect("replicas");
            !after.contains(&json!(3)) || before.contains(&json!(3))
        }),
        "nothing moves onto a broker in maintenance: {}",
        d["moves"]
    );
}

#[tokio::test]
async fn blast_radius_copies_nothing_onto_a_broker_in_maintenance() {
    let h = Harness::with_fixture().await;
    // Without maintenance broker 3 takes the re-replicated copies (see above); in maintenance
    // it takes none.
    enter_maintenance(&h, 3);
    let d = data(&h, BLAST, &json!({"brokerId": 1})).await;
    let destinations = d["reReplication"]["destinations"]
        .as_array()
        .expect("destinations");
    assert!(
        destinations.iter().all(|x| x["brokerId"] != 3),
        "{destinations:?}"
    );
}
