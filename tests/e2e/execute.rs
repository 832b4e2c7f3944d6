//! Execution end to end: the real binary moves partitions of a simulated cluster, survives a
//! SIGKILL of its executor mid-wave and leaves nothing behind.

use std::collections::BTreeMap;
use std::time::Duration;

use ballast_simcluster::GenerateParams;
use nix::sys::signal::{kill, Signal};
use nix::unistd::Pid;
use serde_json::{json, Value};

use crate::cluster::Sim;
use crate::support::{wait_for, Service};

fn get(service: &Service, path: &str) -> Option<Value> {
    reqwest::blocking::get(service.url(path)).ok()?.json().ok()
}

/// A simulated cluster of four brokers and an empty fifth, `ballast run` on it with a license
/// and fast timings, and one bulk operation moving the first replica of each of the topic's six
/// partitions onto the new broker. Returns the path of the operation's record.
fn bulk_onto_a_new_broker(seed: u64, speed: f64, rate_mb: &str) -> (Sim, Service, String) {
    let sim = Sim::start_with(
        GenerateParams {
            brokers: 4,
            racks: 0,
            topics: 1,
            partitions_per_topic: 6,
            replication_factor: 2,
            seed,
            mean_partition_bytes: 20e6,
            mean_msg_rate: 0.0,
            msg_bytes: 100.0,
            ..GenerateParams::default()
        },
        speed,
    );
    let new_broker = sim.add_broker();
    // Bulk reassignment is licensed.
    let license = crate::license::dev_license();
    let service = Service::start_with(&[
        ("LICENSE_STRING", license.as_str()),
        ("BALLAST_KAFKA_BOOTSTRAP_SERVERS", sim.bootstrap.as_str()),
        ("BALLAST_SAMPLE_INTERVAL", "1s"),
        ("BALLAST_EXECUTOR_INTERVAL", "200ms"),
        ("BALLAST_THROTTLE_RATE_MB", rate_mb),
        ("BALLAST_MOVE_MAX_PER_BROKER", "2"),
    ]);
    wait_for(Duration::from_secs(20), "ready", || {
        let r = reqwest::blocking::get(service.url("/api/v1/ready")).ok()?;
        (r.status().as_u16() == 200).then_some(())
    });
    let snap = sim.snapshot();
    let topic = snap.partitions[0].topic.clone();
    let entries: Vec<Value> = snap
        .partitions
        .iter()
        .filter(|p| p.topic == topic)
        .map(|p| {
            let mut target = p.replicas.clone();
            target[0] = new_broker;
            json!({ "partition": p.partition, "replicas": target })
        })
        .collect();
    let response: Value = reqwest::blocking::Client::new()
        .post(service.url(&format!("/api/v1/topics/{topic}/partitions/bulk")))
        .json(&json!({ "description": "onto the new broker", "partitions": entries }))
        .send()
        .and_then(|r| r.json())
        .expect("bulk");
    assert_eq!(response["success"], true, "{response}");
    assert_eq!(response["data"]["started"], true, "{response}");
    let id = response["data"]["bulkId"].as_str().expect("bulkId");
    let path = format!("/api/v1/reassignments/{id}");
    (sim, service, path)
}

#[test]
fn a_sigkilled_executor_resumes_mid_wave_and_finishes_with_no_duplicate_submission() {
    let (sim, service, path) = bulk_onto_a_new_broker(5, 4.0, "2");

    // Mid-wave: some moves active, some still pending.
    wait_for(Duration::from_secs(30), "a wave in flight", || {
        let r = get(&service, &path)?;
        (r["data"]["moves"]["Active"].as_u64()? > 0 && r["data"]["moves"]["Pending"].as_u64()? > 0)
            .then_some(())
    });
    let executor = service.worker_pids()["executor"];
    kill(Pid::from_raw(executor as i32), Signal::SIGKILL).expect("SIGKILL the executor");
    wait_for(Duration::from_secs(10), "a new executor", || {
        service
            .worker_pids()
            .get("executor")
            .filter(|pid| **pid != executor)
            .copied()
    });

    let record = wait_for(Duration::from_secs(90), "the operation completes", || {
        let r = get(&service, &path)?;
        (r["data"]["state"] == "Completed").then_some(r)
    });
    let moves = record["data"]["partitions"].as_array().expect("moves");
    assert_eq!(moves.len(), 6);
    for m in moves {
        assert_eq!(m["state"], "Completed", "{m}");
        assert_eq!(m["submissions"], 1, "submitted once: {m}");
    }
    let truth = sim.truth();
    let mut seen: BTreeMap<(String, i32), usize> = BTreeMap::new();
    for r in truth
        .reassignments
        .finished
        .iter()
        .chain(&truth.reassignments.in_flight)
    {
        *seen
            .entry((r.record.topic.clone(), r.record.partition))
            .or_default() += 1;
    }
    assert_eq!(seen.len(), 6);
    assert!(
        seen.values().all(|n| *n == 1),
        "no duplicate submission: {seen:?}"
    );
    for b in &truth.brokers {
        assert!(
            b.max_concurrent_moves_as_participant <= 2,
            "broker {} over the cap",
            b.id
        );
    }
    assert!(
        truth.throttles.brokers.is_empty() && truth.throttles.topics.is_empty(),
        "no throttle left behind: {:?}",
        truth.throttles
    );
    assert!(service.restarts("executor") >= 1);
    let metrics = reqwest::blocking::get(service.url("/metrics"))
        .and_then(|r| r.text())
        .expect("metrics");
    assert!(
        metrics.contains("ballast_reassignment_completed_total 6"),
        "{metrics}"
    );
    assert!(metrics.contains("ballast_reassignment_active 0"));
    assert!(metrics.contains("ballast_reassignment_duration_seconds_count 6"));
}

#[test]
fn cancel_mid_run_stops_in_flight_moves_keeps_completed_ones_and_leaves_no_throttle() {
    let (sim, service, path) = bulk_onto_a_new_broker(6, 2.0, "1");
    let http = reqwest::blocking::Client::new();
    wait_for(Duration::from_secs(30), "moves in flight", || {
        let r = get(&service, &path)?;
        (r["data"]["moves"]["Active"].as_u64()? > 0).then_some(())
    });
    let cancelled: Value = http
        .post(service.url(&format!("{path}/cancel")))
        .send()
        .and_then(|r| r.json())
        .expect("cancel");
    assert_eq!(cancelled["data"]["state"], "Cancelling", "{cancelled}");
    let record = wait_for(Duration::from_secs(30), "cancelled", || {
        let r = get(&service, &path)?;
        (r["data"]["state"] == "Cancelled").then_some(r)
    });
    let moves = record["data"]["partitions"].as_array().expect("moves");
    assert!(moves
        .iter()
        .all(|m| m["state"] == "Cancelled" || m["state"] == "Completed"));
    assert!(moves.iter().any(|m| m["state"] == "Cancelled"), "{record}");
    // Nothing left moving, no throttle left behind, the slot free for the next request.
    wait_for(Duration::from_secs(10), "the cluster settles", || {
        let t = sim.truth();
        (t.reassignments.in_flight.is_empty()
            && t.throttles.brokers.is_empty()
            && t.throttles.topics.is_empty())
        .then_some(())
    });
    // Kafka's cancel brings the replica set back, not its order: the executor puts each
    // cancelled partition back exactly as it was (order and leader) before confirming it.
    let record = wait_for(Duration::from_secs(30), "cancellations confirmed", || {
        let r = get(&service, &path)?;
        r["data"]["partitions"]
            .as_array()?
            .iter()
            .all(|m| m["state"] != "Cancelled" || m["cancelConfirmed"] == true)
            .then_some(r)
    });
    let moves = record["data"]["partitions"].as_array().expect("moves");
    let snap = sim.snapshot();
    for m in moves.iter().filter(|m| m["state"] == "Cancelled") {
        let p = snap
            .partitions
            .iter()
            .find(|p| json!(p.topic) == m["topic"] && json!(p.partition) == m["partition"])
            .expect("partition");
        assert_eq!(
            json!(p.replicas),
            m["sourceReplicas"],
            "back on its replicas, in their order"
        );
        assert_eq!(json!(p.leader), m["sourceReplicas"][0], "led as before");
        assert_eq!(m["reason"], "cancelled", "{m}");
    }
    assert_eq!(
        record["data"]["rateBytesPerSecond"], 0.0,
        "a finished operation copies nothing"
    );
    assert!(
        !record["data"]["rateBytesPerSecond"]
            .to_string()
            .starts_with('-'),
        "never -0.0: {record}"
    );
    let again = http
        .post(service.url(&format!("{path}/cancel")))
        .send()
        .expect("second cancel");
    assert_eq!(again.status().as_u16(), 409, "already finished");
}
