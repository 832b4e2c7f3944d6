//! The partition-moving endpoints against a simulated cluster, with the real observer tick for the
//! cached view and the real executor engine to carry operations out: bulk rules, explicit replica
//! sets, topic redistribution, elections, maintenance, cancel, throttle tuning.

mod mcp_common;
mod reassign_common;

use std::time::Duration;

use ballast_executor::Engine;
use ballast_schema::{AuditEvent, AuditQuery, OperationState};
use reassign_common::*;
use serde_json::{json, Value};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bulk_request_of_previews_only_starts_nothing_takes_no_slot_and_writes_no_audit() {
    let bed = bed().await;
    let (topic, parts) = bed.topic();
    let (p, replicas) = &parts[0];
    let mut target = replicas.clone();
    target[0] = bed.new_broker;
    let (status, body) = bed
        .post(
            &format!("/api/v1/topics/{topic}/partitions/bulk"),
            json!({ "partitions": [{ "partition": p, "replicas": target, "preview": true }] }),
        )
        .await;
    assert_eq!(status, 200, "{body}");
    let r = &body["data"]["results"][0];
    assert_eq!(r["success"], true, "{body}");
    assert_eq!(r["preview"], true);
    assert_eq!(r["adding"], json!([bed.new_broker]));
    assert!(
        body["data"].get("started").is_none(),
        "no live entry: no started"
    );
    assert_eq!(bed.operations(), 0);
    assert_eq!(bed.audit_count(), 0);
    assert!(bed.store.slot(now()).expect("slot").is_none());
    bed.sim.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bulk_request_rejects_invalid_and_duplicate_entries_and_runs_the_others_as_bulk_manual() {
    let bed = bed().await;
    let (topic, parts) = bed.topic();
    let moved = |i: usize| {
        let mut t = parts[i].1.clone();
        t[0] = bed.new_broker;
        t
    };
    let body = json!({
        "description": "mixed",
        "partitions": [
            { "partition": parts[0].0, "replicas": moved(0) },
            { "partition": parts[1].0, "replicas": moved(1) },
            { "partition": parts[1].0, "replicas": parts[1].1 },
            { "partition": parts[2].0, "replicas": [] },
            { "partition": parts[3].0, "replicas": [parts[3].1[0]] },
            { "partition": 99, "replicas": [1, 2] },
        ]
    });
    let (status, body) = bed
        .post(&format!("/api/v1/topics/{topic}/partitions/bulk"), body)
        .await;
    assert_eq!(status, 200, "{body}");
    let results = body["data"]["results"].as_array().expect("results");
    assert_eq!(results.len(), 6, "one result per entry, in order");
    let ok: Vec<bool> = results.iter().map(|r| r["success"] == true).collect();
    assert_eq!(ok, vec![true, false, false, false, false, false], "{body}");
    assert!(results[1]["error"]
        .as_str()
        .unwrap_or("")
        .contains("more than once"));
    assert!(results[4]["error"].as_str().unwrap_or("").contains("floor"));
    assert_eq!(body["data"]["started"], true);
    let id = body["data"]["bulkId"].as_str().expect("bulkId").to_string();
    let op = bed.store.operation(&id).expect("read").expect("op");
    assert_eq!(op.strategy, "BULK_MANUAL");
    assert_eq!(bed.store.moves(&id).expect("moves").len(), 1);
    let audit = bed
        .store
        .list_audit(&AuditQuery {
            action: Some("reassignments.apply".into()),
            ..AuditQuery::default()
        })
        .expect("audit");
    assert_eq!(audit.total, 1);
    assert_eq!(
        audit.events[0].summary["entries"].as_array().map(Vec::len),
        Some(6)
    );

    // While the operation holds the slot another mutating reassignment gets 409.
    let (status, body) = bed
        .post(
            &format!(
                "/api/v1/topics/{topic}/partitions/{}/redistribute",
                parts[2].0
            ),
            json!({ "replicas": moved(2) }),
        )
        .await;
    assert_eq!(status, 409, "{body}");
    let (status, _) = bed
        .post("/api/v1/preferred-leader-election", json!({}))
        .await;
    assert_eq!(status, 409);

    bed.run_to_end(&id).await;
    let (status, record) = bed
        .send(
            reqwest::Method::GET,
            &format!("/api/v1/reassignments/{id}"),
            None,
        )
        .await;
    assert_eq!(status, 200);
    assert_eq!(record["data"]["state"], "Completed", "{record}");
    assert_eq!(record["data"]["partitions"][0]["state"], "Completed");
    bed.sim.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_bulk_and_single_partition_input_is_refused_and_changes_nothing() {
    let bed = bed().await;
    let (topic, parts) = bed.topic();
    let (status, body) = bed
        .post(
            &format!("/api/v1/topics/{topic}/partitions/bulk"),
            json!({ "partitions": [] }),
        )
        .await;
    assert_eq!(status, 400, "{body}");
    let r = bed
        .http
        .post(format!(
            "{}/api/v1/topics/{topic}/partitions/bulk",
            bed.base
        ))
        .header("content-type", "application/json")
        .body("{not json")
        .send()
        .await
        .expect("request");
    assert_eq!(r.status().as_u16(), 400);
    let single = format!(
        "/api/v1/topics/{topic}/partitions/{}/redistribute",
        parts[0].0
    );
    for (replicas, expected) in [
        (json!([]), 400),
        (json!([1, 1]), 400),
        (json!([-1, 2]), 400),
        (json!([parts[0].1[0]]), 409),
        (json!([parts[0].1[0], 77]), 409),
    ] {
        let (status, body) = bed.post(&single, json!({ "replicas": replicas })).await;
        assert_eq!(status, expected, "{replicas}: {}", error_text(&body));
    }
    let (status, _) = bed
        .post("/api/v1/topics/nope/partitions/0/redistribute", json!({}))
        .await;
    assert_eq!(status, 404);
    assert_eq!(bed.operations(), 0);
    assert_eq!(bed.audit_count(), 0);
    assert!(bed.sim.truth().reassignments.finished.is_empty());
    bed.sim.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_topic_election_naming_another_topic_is_400_and_a_cluster_election_reports_each_partition(
) {
    let bed = bed().await;
    let (topic, _) = bed.topic();
    let (status, body) = bed
        .post(
            &format!("/api/v1/topics/{topic}/preferred-leader-election"),
            json!({ "topic": "someone-else" }),
        )
        .await;
    assert_eq!(status, 400, "{body}");
    let (status, body) = bed
        .post(
            &format!("/api/v1/topics/{topic}/preferred-leader-election"),
            json!({}),
        )
        .await;
    assert_eq!(status, 200, "{body}");
    let rows = body["data"]["results"].as_array().expect("results");
    assert_eq!(rows.len(), 4, "only its own topic's partitions: {body}");
    assert!(rows.iter().all(|r| r["topic"] == topic.as_str()));
    let (status, body) = bed
        .send(
            reqwest::Method::POST,
            "/api/v1/preferred-leader-election",
            None,
        )
        .await;
    assert_eq!(status, 200, "{body}");
    assert!(
        bed.store.slot(now()).expect("slot").is_none(),
        "the slot is released"
    );
    bed.sim.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_topic_redistribution_previews_from_the_cached_view_and_rejects_unavailable_brokers() {
    let bed = bed().await;
    let (topic, _) = bed.topic();
    let path = format!("/api/v1/topics/{topic}/redistribute");
    let (status, body) = bed.post(&path, json!({ "preview": true })).await;
    assert_eq!(status, 200, "{body}");
    let moves = body["data"]["moves"].as_array().expect("moves");
    assert!(
        moves.iter().any(|m| m["adding"]
            .as_array()
            .is_some_and(|a| a.contains(&json!(bed.new_broker)))),
        "the empty broker gets replicas: {body}"
    );
    assert_eq!(bed.operations(), 0);
    let (status, body) = bed
        .post(&path, json!({ "preview": true, "brokers": [1, 2, 99] }))
        .await;
    assert_eq!(status, 409, "{body}");
    let (status, body) = bed.post(&path, json!({ "preview": false })).await;
    assert_eq!(status, 200, "{body}");
    let id = body["data"]["operationId"]
        .as_str()
        .expect("started")
        .to_string();
    bed.run_to_end(&id).await;
    let op = bed.store.operation(&id).expect("read").expect("op");
    assert_eq!(op.state, OperationState::Completed, "{:?}", op.reason);
    bed.sim.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn maintenance_drains_leadership_then_replicas_and_exit_ends_it() {
    let bed = bed().await;
    let path = "/api/v1/brokers/1/maintenance";
    let (status, body) = bed.send(reqwest::Method::POST, path, None).await;
    assert_eq!(status, 200, "{body}");
    let id = body["data"]["operationId"]
        .as_str()
        .expect("drain")
        .to_string();
    let moves = bed.store.moves(&id).expect("moves");
    assert!(moves.iter().any(|m| m.phase == 0), "leadership first");
    assert!(moves.iter().any(|m| m.phase == 1));
    bed.run_to_end(&id).await;
    let truth = bed.sim.truth();
    let b1 = truth.brokers.iter().find(|b| b.id == 1).expect("broker 1");
    assert_eq!(b1.replicas, 0, "broker 1 is drained");
    assert_eq!(b1.leaders, 0);
    assert_eq!(
        bed.store.maintenance().expect("maintenance")[0].broker_id,
        1
    );
    let (status, _) = bed.send(reqwest::Method::POST, path, None).await;
    assert_eq!(status, 409, "already in maintenance");
    let (status, _) = bed.send(reqwest::Method::DELETE, path, None).await;
    assert_eq!(status, 200);
    let (status, _) = bed.send(reqwest::Method::DELETE, path, None).await;
    assert_eq!(status, 404);
    let (status, _) = bed
        .send(
            reqwest::Method::POST,
            "/api/v1/brokers/42/maintenance",
            None,
        )
        .await;
    assert_eq!(status, 404);
    bed.sim.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn leaving_maintenance_mid_drain_cancels_the_drain_and_says_so_unless_kept() {
    let bed = bed().await;
    for (broker, keep) in [(1, false), (2, true)] {
        let path = format!("/api/v1/brokers/{broker}/maintenance");
        let (status, body) = bed.send(reqwest::Method::POST, &path, None).await;
        assert_eq!(status, 200, "{body}");
        let id = body["data"]["operationId"]
            .as_str()
            .expect("drain")
            .to_string();
        // The drain has not run yet (no executor pass): leave maintenance now.
        let exit = if keep {
            format!("{path}?keepDrain=true")
        } else {
            path.clone()
        };
        let (status, body) = bed.send(reqwest::Method::DELETE, &exit, None).await;
        assert_eq!(status, 200, "{body}");
        let d = &body["data"];
        assert_eq!(d["drain"]["operationId"], id.as_str());
        assert_eq!(d["drain"]["cancelled"], !keep, "{d}");
        let op = bed.store.operation(&id).expect("read").expect("operation");
        assert_eq!(op.cancel_requested, !keep, "{op:?}");
        let message = d["message"].as_str().unwrap_or_default();
        if keep {
            assert!(message.contains("keeps running"), "{message}");
            bed.run_to_end(&id).await;
        } else {
            assert!(message.contains("was cancelled"), "{message}");
            bed.run_to_end(&id).await;
            let op = bed.store.operation(&id).expect("read").expect("operation");
            assert_eq!(format!("{:?}", op.state), "Cancelled", "{op:?}");
        }
    }
    bed.sim.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancel_list_throttle_and_apply_answer_in_the_envelope() {
    let bed = bed().await;
    let (status, _) = bed
        .post("/api/v1/reassignments/op-nope/cancel", Value::Null)
        .await;
    assert_eq!(status, 404);
    let (status, body) = bed
        .send(
            reqwest::Method::GET,
            "/api/v1/reassignments?state=bogus",
            None,
        )
        .await;
    assert_eq!(status, 400, "{body}");
    let (status, body) = bed
        .send(reqwest::Method::GET, "/api/v1/reassignments", None)
        .await;
    assert_eq!(status, 200);
    assert_eq!(body["data"]["total"], 0);
    let (status, _) = bed
        .send(
            reqwest::Method::PUT,
            "/api/v1/reassignments/throttle",
            Some(json!({ "rateMb": 0 })),
        )
        .await;
    assert_eq!(status, 400);
    let (status, body) = bed
        .send(
            reqwest::Method::PUT,
            "/api/v1/reassignments/throttle",
            Some(json!({ "rateMb": 80 })),
        )
        .await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["data"]["rateMb"], 80);
    assert_eq!(
        bed.store
            .setting("throttle.rate_mb")
            .expect("setting")
            .as_deref(),
        Some("80")
    );
    let (status, _) = bed
        .send(
            reqwest::Method::POST,
            "/api/v1/proposals/current/apply",
            None,
        )
        .await;
    assert_eq!(status, 404, "no current proposal yet");
    bed.sim.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unreadable_placement_is_503_and_changes_nothing() {
    let bed = bed().await;
    let (topic, parts) = bed.topic();
    let mut target = parts[0].1.clone();
    target[0] = bed.new_broker;
    for b in 1..=bed.new_broker {
        bed.sim.stop_broker(b).await.expect("stop");
    }
    let (status, body) = bed
        .post(
            &format!(
                "/api/v1/topics/{topic}/partitions/{}/redistribute",
                parts[0].0
            ),
            json!({ "replicas": target }),
        )
        .await;
    assert_eq!(status, 503, "{body}");
    assert_eq!(bed.operations(), 0);
    assert_eq!(bed.audit_count(), 0);
    assert!(bed.store.slot(now()).expect("slot").is_none());
    bed.sim.shutdown().await;
}

// ------------------------------------------------------------------------- cached previews

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn previews_from_cached_metadata_older_than_60_s_are_503_and_change_nothing() {
    let bed = bed().await;
    let (topic, parts) = bed.topic();
    let topic_preview = format!("/api/v1/topics/{topic}/redistribute");
    let (status, body) = bed.post(&topic_preview, json!({ "preview": true })).await;
    assert_eq!(status, 200, "a fresh view previews: {body}");
    // The observer's sample is now 61 s old (default BALLAST_TOPIC_PREVIEW_MAX_AGE, 60 s).
    bed.clock.advance(Duration::from_secs(61));
    let (status, body) = bed.post(&topic_preview, json!({ "preview": true })).await;
    assert_eq!(status, 503, "{body}");
    assert_eq!(body["error"], "cached metadata is too old for a preview");
    let (status, body) = bed
        .post(
            &format!(
                "/api/v1/topics/{topic}/partitions/{}/redistribute",
                parts[0].0
            ),
            json!({ "preview": true }),
        )
        .await;
    assert_eq!(status, 503, "single-partition preview: {body}");
    let (status, body) = bed
        .post(
            &format!("/api/v1/topics/{topic}/partitions/bulk"),
            json!({ "partitions": [{ "partition": parts[0].0, "preview": true }] }),
        )
        .await;
    assert_eq!(status, 503, "bulk of previews only: {body}");
    assert_eq!(bed.operations(), 0);
    assert_eq!(bed.audit_count(), 0);
    bed.sim.shutdown().await;
}

// ------------------------------------------------------------------------- log directories

/// Broker `broker`'s replicas by log directory, read from the cluster.
async fn log_dirs(
    bed: &Bed,
    broker: i32,
) -> std::collections::BTreeMap<String, Vec<(String, i32)>> {
    let dirs = bed
        .client
        .describe_log_dirs(broker, None)
        .await
        .expect("log dirs");
    dirs.dirs
        .iter()
        .map(|d| {
            let mut r: Vec<(String, i32)> = d
                .replicas
                .iter()
                .filter(|r| !r.is_future)
                .map(|r| (r.topic.clone(), r.partition))
                .collect();
            r.sort();
            (d.path.clone(), r)
        })
        .collect()
}

/// A directory of `broker` holding at least one replica, its first replica and another directory.
async fn dir_with_replica(bed: &Bed, broker: i32) -> (String, (String, i32), String) {
    let dirs = log_dirs(bed, broker).await;
    let (from, replicas) = dirs
        .iter()
        .find(|(_, r)| !r.is_empty())
        .expect("a directory holding a replica");
    let to = dirs
        .keys()
        .find(|d| *d != from)
        .expect("a second directory");
    (from.clone(), replicas[0].clone(), to.clone())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_log_dir_move_refuses_bad_requests_unknown_brokers_and_a_held_slot_and_changes_nothing() {
    let bed = bed().await;
    let before = log_dirs(&bed, 1).await;
    let (from, (topic, partition), to) = dir_with_replica(&bed, 1).await;
    let path = "/api/v1/brokers/1/logdirs/move";
    let (not_held_topic, not_held) = [bed.topic_at(0), bed.topic_at(1)]
        .into_iter()
        .flat_map(|(t, parts)| parts.into_iter().map(move |(p, r)| (t.clone(), p, r)))
        .find(|(_, _, r)| !r.contains(&1))
        .map(|(t, p, _)| (t, p))
        .expect("a partition broker 1 does not hold");
    for (why, body) in [
        ("no body fields", json!({})),
        ("an empty moves list", json!({ "moves": [] })),
        (
            "the same directory twice",
            json!({ "from": from, "to": from }),
        ),
        ("from without to", json!({ "from": from })),
        (
            "both forms",
            json!({ "from": from, "to": to, "moves": [{ "topic": topic, "partition": partition, "path": to }] }),
        ),
        (
            "an unknown from directory",
            json!({ "from": "/nope", "to": to }),
        ),
        (
            "an unknown target directory",
            json!({ "moves": [{ "topic": topic, "partition": partition, "path": "/nope" }] }),
        ),
        (
            "a replica the broker does not hold",
            json!({ "moves": [{ "topic": not_held_topic, "partition": not_held, "path": to }] }),
        ),
        (
            "an unknown field",
            json!({ "from": from, "to": to, "force": true }),
        ),
    ] {
        let (status, body) = bed.post(path, body).await;
        assert_eq!(status, 400, "{why}: {body}");
        assert_eq!(body["success"], false, "{why}: {body}");
    }
    let good = json!({ "moves": [{ "topic": topic, "partition": partition, "path": to }] });
    let (status, body) = bed
        .post("/api/v1/brokers/42/logdirs/move", good.clone())
        .await;
    assert_eq!(status, 404, "an unknown broker: {body}");
    // While an operation holds the mutation slot: 409.
    let (t, parts) = bed.topic();
    let mut target = parts[0].1.clone();
    target[0] = bed.new_broker;
    let (status, body) = bed
        .post(
            &format!("/api/v1/topics/{t}/partitions/bulk"),
            json!({ "partitions": [{ "partition": parts[0].0, "replicas": target }] }),
        )
        .await;
    assert_eq!(status, 200, "{body}");
    let (status, body) = bed.post(path, good.clone()).await;
    assert_eq!(status, 409, "slot held: {body}");
    let id = body_id(&bed);
    bed.run_to_end(&id).await;
    // A broker that is down is not up: 404.
    bed.sim.stop_broker(4).await.expect("stop");
    let (status, body) = bed.post("/api/v1/brokers/4/logdirs/move", good).await;
    assert_eq!(status, 404, "a stopped broker: {body}");
    assert_eq!(log_dirs(&bed, 1).await, before, "nothing moved");
    let moved = bed
        .store
        .list_audit(&AuditQuery {
            action: Some("logdirs.move".into()),
            ..AuditQuery::default()
        })
        .expect("audit");
    assert_eq!(moved.total, 0, "nothing audited as moved");
    bed.sim.shutdown().await;
}

/// The id of the only operation.
fn body_id(bed: &Bed) -> String {
    bed.store.operations(None, 1, 0).expect("ops").operations[0]
        .id
        .clone()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_log_dir_move_moves_replicas_between_directories_and_records_before_and_after_paths() {
    let bed = bed().await;
    let (from, replica, to) = dir_with_replica(&bed, 1).await;
    let (status, body) = bed
        .send_as(
            Some("disk-ops"),
            reqwest::Method::POST,
            "/api/v1/brokers/1/logdirs/move",
            Some(json!({ "moves": [{ "topic": replica.0, "partition": replica.1, "path": to }] })),
        )
        .await;
    assert_eq!(status, 200, "{body}");
    let row = &body["data"]["results"][0];
    assert_eq!(row["success"], true, "{body}");
    assert_eq!(row["from"], from.as_str());
    assert_eq!(row["to"], to.as_str());
    let after = log_dirs(&bed, 1).await;
    assert!(after[&to].contains(&replica), "{after:?}");
    assert!(!after[&from].contains(&replica), "{after:?}");
    let event = &bed.audit()[0];
    assert_eq!(event.action, "logdirs.move");
    assert_eq!(event.user_id.as_deref(), Some("disk-ops"));
    assert_eq!(event.target.as_deref(), Some("broker 1"));
    assert_eq!(
        event.before,
        Some(json!([{ "topic": replica.0, "partition": replica.1, "path": from }]))
    );
    assert_eq!(
        event.after,
        Some(json!([{ "topic": replica.0, "partition": replica.1, "path": to }]))
    );
    // Every replica of a directory: the directory ends empty.
    let (status, body) = bed
        .post(
            "/api/v1/brokers/1/logdirs/move",
            json!({ "from": to, "to": from }),
        )
        .await;
    assert_eq!(status, 200, "{body}");
    let moved = body["data"]["results"].as_array().expect("results");
    assert_eq!(moved.len(), after[&to].len(), "{body}");
    assert!(moved.iter().all(|r| r["success"] == true), "{body}");
    let end = log_dirs(&bed, 1).await;
    assert!(end[&to].is_empty(), "{end:?}");
    assert_eq!(bed.audit_count(), 2, "one row per request");
    assert!(
        bed.store.slot(now()).expect("slot").is_none(),
        "slot released"
    );
    bed.sim.shutdown().await;
}

// ------------------------------------------------------------------------- progress

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn running_moves_report_bytes_done_rate_and_eta_in_the_list_and_the_record() {
    // Partitions of about 400 MB copied at 1 MB/s (simulated time runs ten times faster): the
    // move runs for many executor passes.
    let bed = bed_with(
        ballast_simcluster::GenerateParams {
            mean_partition_bytes: 4e8,
            ..small()
        },
        &[("BALLAST_THROTTLE_RATE_MB", "1")],
    )
    .await;
    let (topic, parts) = bed.topic();
    let mut target = parts[0].1.clone();
    target[0] = bed.new_broker;
    let (status, body) = bed
        .post(
            &format!("/api/v1/topics/{topic}/partitions/bulk"),
            json!({ "partitions": [{ "partition": parts[0].0, "replicas": target }] }),
        )
        .await;
    assert_eq!(status, 200, "{body}");
    let id = body["data"]["bulkId"].as_str().expect("bulkId").to_string();
    let mut engine = Engine::new(bed.store.clone(), bed.config.clone());
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    let record = loop {
        bed.executor_pass(&mut engine).await;
        let (status, record) = bed.get(&format!("/api/v1/reassignments/{id}")).await;
        assert_eq!(status, 200, "{record}");
        let m = &record["data"]["partitions"][0];
        if m["state"] == "Active" && m["rateBytesPerSecond"].as_f64().is_some_and(|r| r > 0.0) {
            break record;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "no progress: {record}"
        );
        tokio::time::sleep(Duration::from_millis(300)).await;
    };
    let m = &record["data"]["partitions"][0];
    let total = m["bytesTotal"].as_f64().expect("bytesTotal");
    let done = m["bytesDone"].as_f64().expect("bytesDone");
    assert!(done > 0.0 && done < total, "{m}");
    assert!(m["etaSeconds"].as_f64().is_some_and(|e| e > 0.0), "{m}");
    let op = &record["data"];
    assert_eq!(op["state"], "Active", "{op}");
    assert!(op["bytesDone"].as_f64().is_some_and(|d| d > 0.0), "{op}");
    assert!(
        op["rateBytesPerSecond"].as_f64().is_some_and(|r| r > 0.0),
        "{op}"
    );
    assert!(op["etaSeconds"].as_f64().is_some_and(|e| e > 0.0), "{op}");
    let (status, list) = bed.get("/api/v1/reassignments?state=Active").await;
    assert_eq!(status, 200, "{list}");
    let row = list["data"]["reassignments"]
        .as_array()
        .and_then(|rows| rows.iter().find(|r| r["id"] == id.as_str()))
        .cloned()
        .unwrap_or_else(|| panic!("the operation is listed as Active: {list}"));
    for field in ["bytesDone", "rateBytesPerSecond", "etaSeconds"] {
        assert!(
            row[field].as_f64().is_some_and(|v| v > 0.0),
            "{field}: {row}"
        );
    }
    // Cancelled mid-copy: the move ends Cancelled and the progress fields stop.
    let (status, body) = bed
        .post(&format!("/api/v1/reassignments/{id}/cancel"), Value::Null)
        .await;
    assert_eq!(status, 200, "{body}");
    bed.run_to_end(&id).await;
    let (_, record) = bed.get(&format!("/api/v1/reassignments/{id}")).await;
    assert_eq!(record["data"]["state"], "Cancelled", "{record}");
    assert_eq!(record["data"]["etaSeconds"], Value::Null, "{record}");
    bed.sim.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_move_whose_destination_is_down_reads_stalled_in_the_record_the_list_the_metric_the_dashboard_and_mcp(
) {
    let bed = bed_with(
        ballast_simcluster::GenerateParams {
            mean_partition_bytes: 4e8,
            ..small()
        },
        &[
            ("BALLAST_THROTTLE_RATE_MB", "1"),
            ("BALLAST_MOVE_STALL_READINGS", "3"),
        ],
    )
    .await;
    let (topic, parts) = bed.topic();
    let mut target = parts[0].1.clone();
    target[0] = bed.new_broker;
    let (status, body) = bed
        .post(
            &format!("/api/v1/topics/{topic}/partitions/bulk"),
            json!({ "partitions": [{ "partition": parts[0].0, "replicas": target }] }),
        )
        .await;
    assert_eq!(status, 200, "{body}");
    let id = body["data"]["bulkId"].as_str().expect("bulkId").to_string();
    let path = format!("/api/v1/reassignments/{id}");
    let mut engine = Engine::new(bed.store.clone(), bed.config.clone());
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    loop {
        bed.executor_pass(&mut engine).await;
        let (_, record) = bed.get(&path).await;
        let m = &record["data"]["partitions"][0];
        if m["state"] == "Active" && m["rateBytesPerSecond"].as_f64().is_some_and(|r| r > 0.0) {
            break;
        }
        assert!(std::time::Instant::now() < deadline, "no copy: {record}");
        tokio::time::sleep(Duration::from_millis(300)).await;
    }
    bed.sim
        .stop_broker(bed.new_broker)
        .await
        .expect("stop the destination");
    let record = loop {
        bed.executor_pass(&mut engine).await;
        let (_, record) = bed.get(&path).await;
        if record["data"]["partitions"][0]["state"] == "Stalled" {
            break record;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "not stalled: {record}"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    };
    let op = &record["data"];
    let m = &op["partitions"][0];
    let broker = bed.new_broker;
    assert!(
        m["reason"].as_str().is_some_and(|r| r.starts_with(&format!(
            "stalled: destination broker {broker} is down (not in the cluster's metadata since "
        ))),
        "{m}"
    );
    assert!(m["stalledSince"].as_str().is_some(), "{m}");
    assert_eq!(m["stalledBrokers"], json!([broker]), "{m}");
    assert_eq!(m["etaSeconds"], Value::Null, "no ETA of its own: {m}");
    assert_eq!(m["submissions"], 1, "{m}");
    assert_eq!(op["state"], "Active", "the operation still runs: {op}");
    assert_eq!(op["moves"]["Stalled"], 1, "{op}");
    assert_eq!(op["moves"]["Active"], 0, "{op}");
    assert_eq!(op["etaSeconds"], Value::Null, "{op}");
    assert_eq!(op["etaBasis"], "stalled", "{op}");
    assert_eq!(op["etaLeavesOut"]["stalledMoves"], 1, "{op}");
    let (_, list) = bed.get("/api/v1/reassignments").await;
    assert_eq!(
        list["data"]["reassignments"][0]["moves"]["Stalled"], 1,
        "{list}"
    );
    let metrics = bed
        .http
        .get(format!("{}/metrics", bed.base))
        .send()
        .await
        .expect("metrics")
        .text()
        .await
        .expect("text");
    assert!(
        metrics.contains("\nballast_reassignment_stalled_moves 1\n"),
        "{metrics}"
    );
    let page = bed
        .http
        .get(format!("{}/ui/reassignments/{id}", bed.base))
        .send()
        .await
        .expect("page")
        .text()
        .await
        .expect("text");
    assert!(page.contains("Stalled"), "{page}");
    assert!(
        page.contains(&format!("destination broker {broker} is down")),
        "{page}"
    );
    assert!(page.contains("leaves out 1 stalled move"), "{page}");
    let (mcp, _) = mcp_common::call(
        &bed.http,
        &bed.base,
        "get_reassignment_by_id",
        json!({ "id": id }),
    )
    .await;
    assert_eq!(mcp["partitions"][0]["state"], "Stalled", "{mcp}");
    assert_eq!(
        mcp["partitions"][0]["stalledBrokers"],
        json!([broker]),
        "{mcp}"
    );
    assert_eq!(mcp["etaBasis"], "stalled", "{mcp}");
    // The broker back: the move goes on and completes, sent once.
    bed.sim
        .start_broker(bed.new_broker)
        .await
        .expect("start it again");
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    loop {
        bed.executor_pass(&mut engine).await;
        let (_, record) = bed.get(&path).await;
        if record["data"]["partitions"][0]["state"] == "Active" {
            assert_eq!(
                record["data"]["partitions"][0]["reason"],
                Value::Null,
                "{record}"
            );
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "still stalled: {record}"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    let metrics = bed
        .http
        .get(format!("{}/metrics", bed.base))
        .send()
        .await
        .expect("metrics")
        .text()
        .await
        .expect("text");
    assert!(
        metrics.contains("\nballast_reassignment_stalled_moves 0\n"),
        "{metrics}"
    );
    bed.sim.shutdown().await;
}

// ------------------------------------------------------------------------- audit

/// What a mutation's request is built from, read just before it is sent.
struct Ctx {
    topic: String,
    other_topic: String,
    parts: Vec<(i32, Vec<i32>)>,
    new_broker: i32,
    /// The newest operation.
    op: Option<String>,
    /// The current proposal.
    proposal: Option<String>,
    /// A replica of broker 1 and a directory it is not in.
    log_dir_move: Option<((String, i32), String)>,
}

impl Ctx {
    /// Partition `i` of the topic moved onto the added broker.
    fn moved(&self, i: usize) -> (i32, Vec<i32>) {
        let (p, r) = &self.parts[i];
        let mut t = r.clone();
        t[0] = self.new_broker;
        (*p, t)
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Before {
    Nothing,
    /// Store a current proposal planned on the observed topology.
    SaveProposal,
    /// Find a replica to move between log directories.
    FindLogDir,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Then {
    Nothing,
    /// Run the queued operation to its end (it holds the slot until then).
    RunToEnd,
}

struct Case {
    name: &'static str,
    before: Before,
    method: reqwest::Method,
    request: fn(&Ctx) -> (String, Option<Value>),
    action: &'static str,
    status: u16,
    target: fn(&Ctx) -> String,
    then: Then,
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_reassignment_type_mutation_leaves_exactly_one_audit_row_naming_action_method_user_status_and_target(
) {
    use reqwest::Method;
    let cases = [
        Case {
            name: "throttle PUT",
            before: Before::Nothing,
            method: Method::PUT,
            request: |_| {
                (
                    "/api/v1/reassignments/throttle".into(),
                    Some(json!({ "rateMb": 60 })),
                )
            },
            action: "throttle.update",
            status: 200,
            target: |_| "replication throttle".into(),
            then: Then::Nothing,
        },
        Case {
            name: "cluster preferred election",
            before: Before::Nothing,
            method: Method::POST,
            request: |_| ("/api/v1/preferred-leader-election".into(), None),
            action: "leaders.elect",
            status: 200,
            target: |_| "cluster".into(),
            then: Then::Nothing,
        },
        Case {
            name: "topic preferred election",
            before: Before::Nothing,
            method: Method::POST,
            request: |c| {
                (
                    format!("/api/v1/topics/{}/preferred-leader-election", c.topic),
                    None,
                )
            },
            action: "leaders.elect",
            status: 200,
            target: |c| c.topic.clone(),
            then: Then::Nothing,
        },
        Case {
            name: "log-dir move",
            before: Before::FindLogDir,
            method: Method::POST,
            request: |c| {
                let ((topic, partition), to) = c.log_dir_move.clone().expect("a replica");
                (
                    "/api/v1/brokers/1/logdirs/move".into(),
                    Some(
                        json!({ "moves": [{ "topic": topic, "partition": partition, "path": to }] }),
                    ),
                )
            },
            action: "logdirs.move",
            status: 200,
            target: |_| "broker 1".into(),
            then: Then::Nothing,
        },
        Case {
            name: "single-partition redistribute",
            before: Before::Nothing,
            method: Method::POST,
            request: |c| {
                let (p, replicas) = c.moved(1);
                (
                    format!("/api/v1/topics/{}/partitions/{p}/redistribute", c.topic),
                    Some(json!({ "replicas": replicas })),
                )
            },
            action: "reassignments.apply",
            status: 200,
            target: |c| format!("{}-{}", c.topic, c.parts[1].0),
            then: Then::RunToEnd,
        },
        Case {
            name: "topic redistribute",
            before: Before::Nothing,
            method: Method::POST,
            request: |c| {
                (
                    format!("/api/v1/topics/{}/redistribute", c.other_topic),
                    Some(json!({})),
                )
            },
            action: "reassignments.apply",
            status: 200,
            target: |c| c.other_topic.clone(),
            then: Then::RunToEnd,
        },
        Case {
            name: "bulk",
            before: Before::Nothing,
            method: Method::POST,
            request: |c| {
                let (p, replicas) = c.moved(2);
                (
                    format!("/api/v1/topics/{}/partitions/bulk", c.topic),
                    Some(json!({ "partitions": [{ "partition": p, "replicas": replicas }] })),
                )
            },
            action: "reassignments.apply",
            status: 200,
            target: |c| c.topic.clone(),
            // Left unfinished: the next case cancels it.
            then: Then::Nothing,
        },
        Case {
            name: "reassignment cancel",
            before: Before::Nothing,
            method: Method::POST,
            request: |c| {
                let op = c.op.clone().expect("an operation");
                (format!("/api/v1/reassignments/{op}/cancel"), None)
            },
            action: "reassignments.cancel",
            status: 202,
            target: |c| c.op.clone().expect("an operation"),
            then: Then::RunToEnd,
        },
        Case {
            name: "maintenance enter",
            before: Before::Nothing,
            method: Method::POST,
            request: |_| ("/api/v1/brokers/2/maintenance".into(), None),
            action: "brokers.maintenance.enter",
            status: 200,
            target: |_| "broker 2".into(),
            then: Then::RunToEnd,
        },
        Case {
            name: "maintenance exit",
            before: Before::Nothing,
            method: Method::DELETE,
            request: |_| ("/api/v1/brokers/2/maintenance".into(), None),
            action: "brokers.maintenance.exit",
            status: 200,
            target: |_| "broker 2".into(),
            then: Then::Nothing,
        },
        Case {
            name: "proposal apply",
            before: Before::SaveProposal,
            method: Method::POST,
            request: |_| ("/api/v1/proposals/current/apply".into(), None),
            action: "reassignments.apply",
            status: 200,
            target: |c| format!("proposal {}", c.proposal.clone().expect("a proposal")),
            then: Then::RunToEnd,
        },
    ];
    let bed = bed().await;
    for (i, case) in cases.iter().enumerate() {
        let name = case.name;
        let (topic, parts) = bed.topic_at(0);
        let mut ctx = Ctx {
            topic,
            other_topic: bed.topic_at(1).0,
            parts,
            new_broker: bed.new_broker,
            op: bed
                .store
                .operations(None, 1, 0)
                .expect("ops")
                .operations
                .first()
                .map(|o| o.id.clone()),
            proposal: None,
            log_dir_move: None,
        };
        match case.before {
            Before::Nothing => {}
            Before::SaveProposal => {
                let id = format!("p-audit-{i}");
                bed.save_proposal(&bed.proposal(&id, &bed.observed_fingerprint(), true), now());
                ctx.proposal = Some(id);
            }
            Before::FindLogDir => {
                let (_, replica, to) = dir_with_replica(&bed, 1).await;
                ctx.log_dir_move = Some((replica, to));
            }
        }
        let user = format!("auditor-{i}");
        let count = bed.audit_count();
        let (path, body) = (case.request)(&ctx);
        let (status, answer) = bed
            .send_as(Some(&user), case.method.clone(), &path, body)
            .await;
        assert_eq!(status, 200, "{name}: {answer}");
        assert_eq!(
            bed.audit_count(),
            count + 1,
            "{name}: exactly one audit row"
        );
        let event = bed.audit().remove(0);
        assert_eq!(event.action, case.action, "{name}");
        assert_eq!(event.method, case.method.as_str(), "{name}");
        assert_eq!(event.user_id.as_deref(), Some(user.as_str()), "{name}");
        assert_eq!(event.requested_by.as_deref(), Some(user.as_str()), "{name}");
        assert_eq!(event.status, case.status, "{name}");
        assert_eq!(event.target, Some((case.target)(&ctx)), "{name}");
        if case.then == Then::RunToEnd {
            let op = bed.store.operations(None, 1, 0).expect("ops").operations[0]
                .id
                .clone();
            bed.run_to_end(&op).await;
            assert_eq!(
                bed.audit_count(),
                count + 1,
                "{name}: running the operation to its end adds no row"
            );
        }
    }
    bed.sim.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn while_a_rolling_restart_runs_a_reassignment_is_refused_with_the_rolls_409_even_naming_a_stopped_broker(
) {
    let bed = bed().await;
    let (topic, parts) = bed.topic();
    let (p, replicas) = &parts[0];
    let roll = ballast_schema::NewRoll {
        brokers: vec![replicas[0]],
        user_id: "alice".into(),
        method: "POST".into(),
        reason: None,
    };
    bed.store
        .create_roll(&roll, None, now(), 60_000)
        .expect("store")
        .expect("no other holder");
    // A replica set naming a broker the roll may have stopped, and one of live brokers: the roll
    // is the answer either way.
    let mut stopped = replicas.clone();
    stopped[0] = 999;
    let mut other = replicas.clone();
    other.reverse();
    for target in [stopped, other] {
        let (status, body) = bed
            .post(
                &format!("/api/v1/topics/{topic}/partitions/{p}/redistribute"),
                json!({ "replicas": target }),
            )
            .await;
        assert_eq!(status, 409, "{body}");
        assert_eq!(body["error"], "a rolling restart is in progress", "{body}");
    }
    assert_eq!(bed.operations(), 0);
    bed.sim.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_topic_name_kafka_refuses_is_a_400_before_the_cluster_or_the_slot_is_looked_at() {
    let bed = bed().await;
    for path in [
        "/api/v1/topics/null%2Cnull/partitions/bulk",
        "/api/v1/topics/a%20b/redistribute",
        "/api/v1/topics/..%2F..%2Fx/partitions/0/redistribute",
    ] {
        let body = if path.ends_with("bulk") {
            json!({"partitions": [{"partition": 0}]})
        } else {
            json!({})
        };
        let (status, answer) = bed.post(path, body).await;
        assert_eq!(status, 400, "{path}: {answer}");
        assert_eq!(answer["error"], "invalid request", "{path}: {answer}");
    }
    bed.sim.shutdown().await;
}

/// An election the cluster refuses for every partition it names changed nothing: the caller is
/// told so (409 when every refusal is a preferred leader that is down or out of sync) as the
/// audit log records the failure (500), never a 200 beside a failed event. One refused only in
/// part answers 200 with its counts and is recorded as partly done (207).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_election_refused_for_every_partition_is_refused_and_recorded_500_and_one_refused_in_part_is_200_recorded_207(
) {
    let bed = bed().await;
    let (topic, parts) = bed.topic();
    // Partitions the cluster does not have are the caller's mistake: 404, nothing recorded; a
    // name Kafka would refuse is a 400 before anything is sent.
    let (status, body) = bed
        .post(
            "/api/v1/preferred-leader-election",
            json!({ "partitions": [{ "topic": "no-such-topic", "partition": 0 }] }),
        )
        .await;
    assert_eq!(status, 404, "{body}");
    for bad in [
        json!({ "topic": "", "partition": 0 }),
        json!({ "topic": topic, "partition": -1 }),
    ] {
        let (status, body) = bed
            .post(
                "/api/v1/preferred-leader-election",
                json!({ "partitions": [bad] }),
            )
            .await;
        assert_eq!(status, 400, "{body}");
    }
    assert_eq!(bed.audit_count(), 0, "{:?}", bed.audit());
    let (partition, replicas) = parts[0].clone();
    let first = replicas[0];
    bed.sim.stop_broker(first).await.expect("stop broker");
    let (status, body) = bed
        .post(
            &format!("/api/v1/topics/{topic}/preferred-leader-election"),
            json!({ "partitions": [partition] }),
        )
        .await;
    assert_eq!(status, 409, "{body}");
    assert!(
        error_text(&body).contains("PREFERRED_LEADER_NOT_AVAILABLE"),
        "{body}"
    );
    let elections = |bed: &Bed| -> Vec<AuditEvent> {
        bed.audit()
            .into_iter()
            .filter(|e| e.action == "leaders.elect")
            .collect()
    };
    let recorded = elections(&bed);
    assert_eq!(recorded.len(), 1);
    assert_eq!(recorded[0].status, 500, "{:?}", recorded[0]);

    // The first broker back in every ISR (its partitions now want their leader back), another
    // preferred leader down: the election elects some and is refused for others.
    bed.sim.start_broker(first).await.expect("start broker");
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    while bed.sim.truth().under_replicated_partitions > 0 {
        assert!(std::time::Instant::now() < deadline, "the broker caught up");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let second = parts
        .iter()
        .map(|(_, r)| r[0])
        .find(|b| *b != first)
        .expect("another preferred leader");
    bed.sim.stop_broker(second).await.expect("stop broker");
    let (status, body) = bed
        .post("/api/v1/preferred-leader-election", json!({}))
        .await;
    assert_eq!(status, 200, "{body}");
    assert!(body["data"]["elected"].as_u64().unwrap_or(0) >= 1, "{body}");
    assert!(body["data"]["failed"].as_u64().unwrap_or(0) >= 1, "{body}");
    let recorded = elections(&bed);
    assert_eq!(recorded.len(), 2);
    assert_eq!(recorded[0].status, 207, "newest first: {:?}", recorded[0]);
    bed.sim.shutdown().await;
}
