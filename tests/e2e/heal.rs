//! Self-healing end to end: the real binary heals a simulated cluster with short injected
//! durations (critical fixes, replication-factor increases, activity), records what a dry run
//! would have done while moving nothing, produces every skip reason, and survives a healer
//! SIGKILLed around its apply without queueing moves twice or leaving throttles.

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use ballast_schema::{OperationRecord, OperationState, Store};
use ballast_simcluster::{GenerateParams, Skew};
use nix::sys::signal::{kill, Signal};
use nix::unistd::Pid;
use serde_json::{json, Value};

use crate::cluster::Sim;
use crate::support::{wait_for, Service};

/// Licensed, applying (not a dry run), fast timings, no cooldowns, a 3 s grace, and the
/// replication-factor loop idle (target 0) unless a test says otherwise.
fn start(sim: &Sim, extra: &[(&str, &str)]) -> Service {
    let license = crate::license::dev_license();
    let mut env: Vec<(&str, &str)> = vec![
        ("LICENSE_STRING", license.as_str()),
        ("BALLAST_KAFKA_BOOTSTRAP_SERVERS", sim.bootstrap.as_str()),
        ("BALLAST_SAMPLE_INTERVAL", "1s"),
        ("BALLAST_EXECUTOR_INTERVAL", "200ms"),
        ("BALLAST_THROTTLE_RATE_MB", "1000"),
        ("BALLAST_WARMUP", "0s"),
        ("BALLAST_HEAL_DRY_RUN", "false"),
        ("BALLAST_HEAL_COOLDOWN", "0s"),
        ("BALLAST_MOVE_COOLDOWN", "0s"),
        ("BALLAST_HEAL_DEAD_BROKER_GRACE", "3s"),
        ("BALLAST_HEAL_TARGET_REPLICATION_FACTOR", "0"),
    ];
    env.extend_from_slice(extra);
    let service = Service::start_with(&env);
    wait_for(Duration::from_secs(30), "ready", || {
        let r = reqwest::blocking::get(service.url("/api/v1/ready")).ok()?;
        (r.status().as_u16() == 200).then_some(())
    });
    service
}

fn params(brokers: u32, racks: u32, rf: u32, partitions: u32) -> GenerateParams {
    GenerateParams {
        brokers,
        racks,
        topics: 2,
        partitions_per_topic: partitions,
        replication_factor: rf,
        seed: 7,
        mean_partition_bytes: 2e6,
        mean_msg_rate: 0.0,
        msg_bytes: 100.0,
        ..GenerateParams::default()
    }
}

fn get(service: &Service, path: &str) -> Option<Value> {
    let v: Value = reqwest::blocking::get(service.url(path))
        .ok()?
        .json()
        .ok()?;
    Some(v["data"].clone())
}

/// One loop of the self-healing status.
fn loop_status(service: &Service, name: &str) -> Option<Value> {
    get(service, "/api/v1/self-healing/status")?["loops"]
        .as_array()?
        .iter()
        .find(|l| l["loop"] == name)
        .cloned()
}

/// Waits until some pass of `name` skipped for `reason` (the healer's counter of it grows and
/// the loop reports it), returning the loop's status.
fn wait_skip(service: &Service, name: &str, reason: &str, secs: u64) -> Value {
    wait_for(
        Duration::from_secs(secs),
        &format!("{name} skipping with {reason}"),
        || {
            let l = loop_status(service, name)?;
            (l["reason"] == reason).then_some(l)
        },
    )
}

fn heal_operations(service: &Service) -> Vec<OperationRecord> {
    Store::open(&service.db_path())
        .and_then(|s| s.operations(None, 500, 0))
        .map(|p| p.operations)
        .unwrap_or_default()
        .into_iter()
        .filter(|o| o.kind == "heal")
        .collect()
}

fn all_operations(service: &Service) -> u64 {
    Store::open(&service.db_path())
        .and_then(|s| s.operations(None, 1, 0))
        .map_or(0, |p| p.total)
}

/// Waits for a completed healing operation of `name`.
fn wait_healed(service: &Service, name: &str, secs: u64) -> OperationRecord {
    wait_for(
        Duration::from_secs(secs),
        &format!("a completed {name} operation"),
        || {
            heal_operations(service)
                .into_iter()
                .find(|o| o.detail["loop"] == name && o.state == OperationState::Completed)
        },
    )
}

/// Partitions whose in-sync replicas are not all their replicas, or that keep a replica on a
/// stopped broker.
fn under_replicated(sim: &Sim) -> usize {
    let snap = sim.snapshot();
    let up: BTreeSet<i32> = sim
        .truth()
        .brokers
        .iter()
        .filter(|b| b.up)
        .map(|b| b.id)
        .collect();
    snap.partitions
        .iter()
        .filter(|p| {
            let isr: BTreeSet<i32> = p.isr_or_replicas().iter().copied().collect();
            let replicas: BTreeSet<i32> = p.replicas.iter().copied().collect();
            isr != replicas || !replicas.is_subset(&up)
        })
        .count()
}

fn no_throttles(sim: &Sim) -> bool {
    let t = sim.truth();
    t.throttles.brokers.is_empty() && t.throttles.topics.is_empty()
}

fn replicas_on(sim: &Sim, broker: i32) -> usize {
    sim.snapshot()
        .partitions
        .iter()
        .filter(|p| p.replicas.contains(&broker))
        .count()
}

#[test]
fn a_broker_down_longer_than_the_grace_period_has_its_replicas_recreated_and_urps_return_to_zero() {
    let sim = Sim::start_with(params(4, 0, 2, 6), 1.0);
    let service = start(&sim, &[("BALLAST_HEAL_ACTIVITY_ENABLED", "false")]);
    assert!(replicas_on(&sim, 4) > 0);
    sim.stop_broker(4);
    assert!(under_replicated(&sim) > 0);
    // Within the grace the critical loop waits.
    wait_for(Duration::from_secs(10), "waiting out the grace", || {
        let l = loop_status(&service, "critical")?;
        (l["reason"] == "no_proposal" && l["why"].as_str()?.contains("grace")).then_some(())
    });
    let op = wait_healed(&service, "critical", 60);
    assert_eq!(op.user_id.as_deref(), Some("pilot"));
    assert_eq!(op.method, "INTERNAL");
    wait_for(
        Duration::from_secs(30),
        "no under-replicated partition",
        || (under_replicated(&sim) == 0 && no_throttles(&sim)).then_some(()),
    );
    assert_eq!(replicas_on(&sim, 4), 0);
    // Audited as pilot, INTERNAL, selfheal.apply; never revertible, and the preview says why.
    let events = get(&service, "/api/v1/audit-log?action=selfheal.apply").expect("audit");
    let event = events["events"][0].clone();
    assert_eq!(event["userId"], "pilot", "{events}");
    assert_eq!(event["method"], "INTERNAL");
    let preview: Value = reqwest::blocking::Client::new()
        .post(service.url("/api/v1/audit-log/revert/preview"))
        .json(&json!({ "eventId": event["id"] }))
        .send()
        .and_then(|r| r.json())
        .expect("preview");
    assert_eq!(preview["success"], false, "{preview}");
    assert!(preview.to_string().contains("never reverted"), "{preview}");
    let status = loop_status(&service, "critical").expect("status");
    assert_eq!(status["lastOperationId"], json!(op.id));
}

#[test]
fn in_a_dry_run_a_dead_broker_is_not_repaired_and_the_loop_records_what_it_would_move() {
    let sim = Sim::start_with(params(4, 0, 2, 6), 1.0);
    let service = start(
        &sim,
        &[
            ("BALLAST_HEAL_DRY_RUN", "true"),
            ("BALLAST_HEAL_ACTIVITY_ENABLED", "false"),
        ],
    );
    let on_4 = replicas_on(&sim, 4);
    sim.stop_broker(4);
    let l = wait_for(Duration::from_secs(30), "a dry run with moves", || {
        let l = wait_skip(&service, "critical", "dry_run", 30);
        (l["dryRun"]["wouldMoveCount"].as_u64()? > 0).then_some(l)
    });
    assert_eq!(
        l["dryRun"]["wouldMoveCount"].as_u64(),
        Some(on_4 as u64),
        "every partition with a replica on broker 4: {l}"
    );
    for m in l["dryRun"]["wouldMove"].as_array().expect("moves") {
        assert!(!m["replicasAfter"]
            .as_array()
            .expect("after")
            .contains(&json!(4)));
    }
    std::thread::sleep(Duration::from_secs(2));
    assert_eq!(all_operations(&service), 0, "nothing queued");
    assert!(sim.truth().reassignments.finished.is_empty());
    assert_eq!(replicas_on(&sim, 4), on_4);
}

/// Three brokers on three racks, topics of replication factor 1.
fn rf1_cluster() -> Sim {
    Sim::start_with(params(3, 3, 1, 4), 1.0)
}

#[test]
fn a_topic_below_the_target_replication_factor_is_raised_one_replica_per_rack() {
    let sim = rf1_cluster();
    let service = start(
        &sim,
        &[
            ("BALLAST_HEAL_TARGET_REPLICATION_FACTOR", "3"),
            ("BALLAST_HEAL_ACTIVITY_ENABLED", "false"),
        ],
    );
    wait_healed(&service, "replicationFactor", 60);
    wait_for(
        Duration::from_secs(30),
        "every partition at 3 in sync",
        || {
            let snap = sim.snapshot();
            (snap.partitions.iter().all(|p| p.replicas.len() == 3)
                && under_replicated(&sim) == 0
                && no_throttles(&sim))
            .then_some(snap)
        },
    );
    let snap = sim.snapshot();
    let rack: BTreeMap<i32, Option<String>> = snap
        .brokers
        .iter()
        .map(|b| (b.id, b.rack.clone()))
        .collect();
    for p in &snap.partitions {
        let racks: BTreeSet<_> = p.replicas.iter().map(|b| rack[b].clone()).collect();
        assert_eq!(racks.len(), 3, "one replica per rack: {p:?}");
    }
}

#[test]
fn a_per_topic_rule_sets_the_target_and_in_a_dry_run_nothing_is_raised() {
    let sim = rf1_cluster();
    let topic = sim.snapshot().partitions[0].topic.clone();
    let rule = format!("{topic}=2");
    let service = start(
        &sim,
        &[
            ("BALLAST_HEAL_DRY_RUN", "true"),
            ("BALLAST_HEAL_TOPIC_REPLICATION_FACTOR", rule.as_str()),
            ("BALLAST_HEAL_ACTIVITY_ENABLED", "false"),
        ],
    );
    let l = wait_for(Duration::from_secs(30), "a dry run with moves", || {
        let l = wait_skip(&service, "replicationFactor", "dry_run", 30);
        (l["dryRun"]["wouldMoveCount"].as_u64()? > 0).then_some(l)
    });
    let moves = l["dryRun"]["wouldMove"].as_array().expect("moves");
    assert_eq!(moves.len(), 4, "the ruled topic's four partitions: {l}");
    for m in moves {
        assert_eq!(m["topic"], json!(topic));
        assert_eq!(m["replicasAfter"].as_array().map(Vec::len), Some(2));
    }
    std::thread::sleep(Duration::from_secs(2));
    assert_eq!(all_operations(&service), 0);
    assert!(sim
        .snapshot()
        .partitions
        .iter()
        .all(|p| p.replicas.len() == 1));
}

/// Four brokers, the last just added and empty.
fn skewed() -> Sim {
    Sim::start_with(
        GenerateParams {
            skew: Skew::NewBroker,
            ..params(4, 0, 2, 8)
        },
        1.0,
    )
}

#[test]
fn a_skewed_cluster_is_evened_by_the_activity_loop_once_the_proposal_decision_allows_it() {
    let sim = skewed();
    assert_eq!(replicas_on(&sim, 4), 0);
    let service = start(&sim, &[]);
    let op = wait_healed(&service, "activity", 90);
    assert!(op.proposal_id.is_some(), "{op:?}");
    wait_for(Duration::from_secs(30), "moves done", || {
        (sim.truth().reassignments.in_flight.is_empty() && no_throttles(&sim)).then_some(())
    });
    // 32 replicas over 4 brokers: the new broker takes a fair share, give or take.
    let on_new = replicas_on(&sim, 4);
    assert!(on_new >= 6, "broker 4 holds {on_new} replicas");
}

#[test]
fn in_a_dry_run_a_skewed_cluster_is_left_alone_and_the_activity_loop_records_its_moves() {
    let sim = skewed();
    let service = start(&sim, &[("BALLAST_HEAL_DRY_RUN", "true")]);
    let l = wait_for(Duration::from_secs(60), "a dry run with moves", || {
        let l = wait_skip(&service, "activity", "dry_run", 60);
        (l["dryRun"]["wouldMoveCount"].as_u64()? > 0).then_some(l)
    });
    assert!(l["dryRun"]["wouldMove"]
        .as_array()
        .expect("moves")
        .iter()
        .any(|m| m["replicasAfter"]
            .as_array()
            .is_some_and(|r| r.contains(&json!(4)))));
    std::thread::sleep(Duration::from_secs(2));
    assert_eq!(all_operations(&service), 0);
    assert_eq!(replicas_on(&sim, 4), 0);
}

#[test]
fn a_healer_killed_around_its_apply_never_queues_the_same_moves_twice_nor_leaves_throttles() {
    // Bigger partitions and a slow throttle: the repair takes seconds, the kills land before,
    // during and after the apply.
    let sim = Sim::start_with(
        GenerateParams {
            mean_partition_bytes: 8e6,
            ..params(4, 0, 2, 6)
        },
        1.0,
    );
    let service = start(
        &sim,
        &[
            ("BALLAST_HEAL_ACTIVITY_ENABLED", "false"),
            ("BALLAST_THROTTLE_RATE_MB", "4"),
            ("BALLAST_HEAL_DEAD_BROKER_GRACE", "2s"),
        ],
    );
    sim.stop_broker(4);
    let mut kills = 0;
    let deadline = std::time::Instant::now() + Duration::from_secs(8);
    while std::time::Instant::now() < deadline {
        let healer = service.wait_all_running()["healer"];
        kill(Pid::from_raw(healer as i32), Signal::SIGKILL).expect("SIGKILL the healer");
        kills += 1;
        wait_for(Duration::from_secs(10), "a new healer", || {
            service
                .worker_pids()
                .get("healer")
                .filter(|pid| **pid != healer)
                .copied()
        });
        std::thread::sleep(Duration::from_millis(300));
    }
    assert!(kills >= 3);
    wait_healed(&service, "critical", 90);
    wait_for(
        Duration::from_secs(60),
        "repaired, throttles cleared",
        || {
            (under_replicated(&sim) == 0
                && sim.truth().reassignments.in_flight.is_empty()
                && no_throttles(&sim))
            .then_some(())
        },
    );
    // Let the healer run more passes on the repaired cluster: nothing more is queued.
    std::thread::sleep(Duration::from_secs(3));
    let ops = heal_operations(&service);
    assert_eq!(ops.len(), 1, "one repair operation: {ops:?}");
    let store = Store::open(&service.db_path()).expect("store");
    let moves = store.moves(&ops[0].id).expect("moves");
    assert!(moves.iter().all(|m| m.submissions == 1), "{moves:?}");
    let mut seen: BTreeMap<(String, i32), usize> = BTreeMap::new();
    for r in &sim.truth().reassignments.finished {
        *seen
            .entry((r.record.topic.clone(), r.record.partition))
            .or_default() += 1;
    }
    assert_eq!(seen.len(), moves.len());
    assert!(seen.values().all(|n| *n == 1), "{seen:?}");
    assert!(service.restarts("healer") >= 3);
}

// ------------------------------------------------------------------ one test per skip reason

fn utc_hour_now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() / 3600 % 24)
}

fn skipped_total(service: &Service, reason: &str) -> u64 {
    get(service, "/api/v1/self-healing/status")
        .and_then(|s| s["skippedTotal"][reason].as_u64())
        .unwrap_or(0)
}

fn metric_counts(service: &Service, reason: &str) -> bool {
    let text = reqwest::blocking::get(service.url("/metrics"))
        .and_then(|r| r.text())
        .unwrap_or_default();
    text.lines().any(|l| {
        l.starts_with(&format!(
            "ballast_selfhealing_skipped_total{{reason=\"{reason}\"}}"
        )) && !l.ends_with(" 0")
    })
}

fn assert_counted(service: &Service, reason: &str) {
    assert!(skipped_total(service, reason) > 0);
    wait_for(Duration::from_secs(5), "the metric", || {
        metric_counts(service, reason).then_some(())
    });
}

#[test]
fn outside_window() {
    let sim = Sim::start_with(params(4, 0, 2, 6), 1.0);
    let h = utc_hour_now();
    let (start_at, end_at) = (
        format!("{:02}:00", (h + 2) % 24),
        format!("{:02}:00", (h + 3) % 24),
    );
    let service = start(
        &sim,
        &[
            ("BALLAST_HEAL_WINDOW_START", start_at.as_str()),
            ("BALLAST_HEAL_WINDOW_END", end_at.as_str()),
        ],
    );
    sim.stop_broker(4);
    let l = wait_skip(&service, "critical", "outside_window", 20);
    assert_eq!(l["window"]["start"], json!(start_at));
    std::thread::sleep(Duration::from_secs(4));
    assert_eq!(
        loop_status(&service, "critical").expect("loop")["reason"],
        "outside_window"
    );
    assert_eq!(all_operations(&service), 0);
    assert_counted(&service, "outside_window");
}

#[test]
fn cooldown() {
    let sim = rf1_cluster();
    let service = start(
        &sim,
        &[
            ("BALLAST_HEAL_TARGET_REPLICATION_FACTOR", "2"),
            ("BALLAST_HEAL_COOLDOWN", "1h"),
            ("BALLAST_HEAL_ACTIVITY_ENABLED", "false"),
        ],
    );
    wait_healed(&service, "replicationFactor", 60);
    let l = wait_skip(&service, "replicationFactor", "cooldown", 30);
    assert!(l["cooldownUntil"].is_string(), "{l}");
    assert_eq!(heal_operations(&service).len(), 1);
    assert_counted(&service, "cooldown");
}

#[test]
fn partitions_in_cooldown() {
    // Move every partition's first replica onto a new broker 5, then stop broker 5: every
    // partition the repair would move was moved within BALLAST_MOVE_COOLDOWN.
    let sim = Sim::start_with(
        GenerateParams {
            topics: 1,
            ..params(4, 0, 2, 6)
        },
        1.0,
    );
    let new_broker = sim.add_broker();
    let service = start(
        &sim,
        &[
            ("BALLAST_MOVE_COOLDOWN", "1h"),
            ("BALLAST_HEAL_DEAD_BROKER_GRACE", "1s"),
            ("BALLAST_HEAL_ACTIVITY_ENABLED", "false"),
        ],
    );
    let snap = sim.snapshot();
    let topic = snap.partitions[0].topic.clone();
    let entries: Vec<Value> = snap
        .partitions
        .iter()
        .map(|p| {
            let mut target = p.replicas.clone();
            target[0] = new_broker;
            json!({ "partition": p.partition, "replicas": target })
        })
        .collect();
    let r: Value = reqwest::blocking::Client::new()
        .post(service.url(&format!("/api/v1/topics/{topic}/partitions/bulk")))
        .json(&json!({ "description": "onto the new broker", "partitions": entries }))
        .send()
        .and_then(|r| r.json())
        .expect("bulk");
    assert_eq!(r["data"]["started"], true, "{r}");
    let id = r["data"]["bulkId"].as_str().expect("bulkId").to_string();
    wait_for(Duration::from_secs(60), "the bulk completes", || {
        let r = get(&service, &format!("/api/v1/reassignments/{id}"))?;
        (r["state"] == "Completed").then_some(())
    });
    sim.stop_broker(new_broker);
    wait_skip(&service, "critical", "partitions_in_cooldown", 30);
    assert!(heal_operations(&service).is_empty());
    assert_counted(&service, "partitions_in_cooldown");
}

#[test]
fn dry_run() {
    let sim = Sim::start_with(params(4, 0, 2, 6), 1.0);
    // The default: BALLAST_HEAL_DRY_RUN unset is true.
    let license = crate::license::dev_license();
    let service = Service::start_with(&[
        ("LICENSE_STRING", license.as_str()),
        ("BALLAST_KAFKA_BOOTSTRAP_SERVERS", sim.bootstrap.as_str()),
        ("BALLAST_SAMPLE_INTERVAL", "1s"),
    ]);
    let status = wait_for(Duration::from_secs(30), "dry_run", || {
        let s = get(&service, "/api/v1/self-healing/status")?;
        (s["dryRun"] == true && s["skippedTotal"]["dry_run"].as_u64()? > 0).then_some(s)
    });
    for l in status["loops"].as_array().expect("loops") {
        assert_eq!(l["reason"], "dry_run", "{l}");
    }
    assert_counted(&service, "dry_run");
}

#[test]
fn active_reassignments() {
    // A slow repair: while it runs, every loop skips with active_reassignments.
    let sim = Sim::start_with(
        GenerateParams {
            mean_partition_bytes: 8e6,
            ..params(4, 0, 2, 6)
        },
        1.0,
    );
    let service = start(
        &sim,
        &[
            ("BALLAST_THROTTLE_RATE_MB", "2"),
            ("BALLAST_HEAL_DEAD_BROKER_GRACE", "1s"),
        ],
    );
    sim.stop_broker(4);
    let l = wait_skip(&service, "activity", "active_reassignments", 30);
    assert!(!l["why"].as_str().unwrap_or("").is_empty(), "{l}");
    assert!(!heal_operations(&service).is_empty());
    assert_counted(&service, "active_reassignments");
}

#[test]
fn license_invalid() {
    let sim = Sim::start_with(params(4, 0, 2, 6), 1.0);
    let service = Service::start_with(&[
        ("BALLAST_KAFKA_BOOTSTRAP_SERVERS", sim.bootstrap.as_str()),
        ("BALLAST_SAMPLE_INTERVAL", "1s"),
        ("BALLAST_HEAL_DRY_RUN", "false"),
        ("BALLAST_HEAL_DEAD_BROKER_GRACE", "1s"),
    ]);
    sim.stop_broker(4);
    wait_skip(&service, "critical", "license_invalid", 30);
    std::thread::sleep(Duration::from_secs(2));
    assert_eq!(all_operations(&service), 0, "nothing applied");
    assert_counted(&service, "license_invalid");
}

#[test]
fn data_not_ready() {
    // No cluster answers: the observer never samples.
    let license = crate::license::dev_license();
    let service = Service::start_with(&[
        ("LICENSE_STRING", license.as_str()),
        ("BALLAST_HEAL_DRY_RUN", "false"),
    ]);
    let l = wait_skip(&service, "critical", "data_not_ready", 20);
    assert!(l["why"].as_str().unwrap_or("").contains("not read"), "{l}");
    assert_counted(&service, "data_not_ready");
}

#[test]
fn benefit_unconfirmed() {
    // A warm-up of five samples: the new broker trips the trigger in four readings in a row
    // before the first fresh measurement, so the benefit is unconfirmed for a while.
    let sim = skewed();
    let service = start(&sim, &[("BALLAST_WARMUP", "5s")]);
    wait_skip(&service, "activity", "benefit_unconfirmed", 60);
    assert_counted(&service, "benefit_unconfirmed");
}

#[test]
fn no_proposal() {
    let sim = Sim::start_with(params(4, 0, 2, 6), 1.0);
    let service = start(&sim, &[]);
    for name in ["critical", "replicationFactor"] {
        let l = wait_skip(&service, name, "no_proposal", 30);
        assert!(l["why"].is_string(), "{l}");
    }
    std::thread::sleep(Duration::from_secs(2));
    assert_eq!(all_operations(&service), 0);
    assert_counted(&service, "no_proposal");
}

#[test]
fn higher_priority_running() {
    // A broker down within a long grace: the replication-factor loop, which has topics to
    // raise, waits for the critical loop.
    let sim = Sim::start_with(params(4, 0, 2, 6), 1.0);
    sim.stop_broker(4);
    // Bootstrap from the brokers that are up.
    let live: Vec<&str> = sim.bootstrap.split(',').take(3).collect();
    let live = live.join(",");
    let service = start(
        &sim,
        &[
            ("BALLAST_KAFKA_BOOTSTRAP_SERVERS", live.as_str()),
            ("BALLAST_HEAL_TARGET_REPLICATION_FACTOR", "3"),
            ("BALLAST_HEAL_DEAD_BROKER_GRACE", "1h"),
        ],
    );
    let l = wait_skip(&service, "replicationFactor", "higher_priority_running", 30);
    assert!(
        l["why"].as_str().unwrap_or("").contains("broker is down"),
        "{l}"
    );
    std::thread::sleep(Duration::from_secs(2));
    assert_eq!(all_operations(&service), 0);
    assert_counted(&service, "higher_priority_running");
}
