//! The executor's engine against the simulated cluster (real wire protocol): operations queued in
//! SQLite run to completion under the per-broker cap with throttles present during and absent
//! after; a restarted engine resumes without sending anything twice; cancel; the stale-plan check;
//! the timeout of a move no execution drives; brokers that die and never come back (throttle
//! cleanup retried, never blocking); the pre-flight hold; one added replica at a time.

use std::sync::Arc;
use std::time::Duration;

use ballast_config::{Config, RawConfig};
use ballast_executor::{waves, Engine};
use ballast_kafka::{Client, ClientConfig};
use ballast_schema::{
    ClusterFacts, MoveState, NewAuditEvent, NewMove, NewOperation, ObservedBroker, ObservedWrite,
    OperationState, Queued, Store,
};
use ballast_simcluster::{GenerateParams, Scenario, SimCluster, SimConfig};

struct Bed {
    sim: SimCluster,
    client: Client,
    store: Store,
    config: Arc<Config>,
    new_broker: i32,
    _dir: tempfile::TempDir,
}

fn now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0)
}

/// Four brokers and an empty fifth; two topics of four 20 MB partitions, RF 2; the simulator runs
/// `speed` times real time; moves throttled to `rate_mb` MB/s, at most `cap` per broker.
async fn bed(speed: f64, rate_mb: u64, cap: u32, extra: &[(&str, &str)]) -> Bed {
    let sim = SimCluster::start(SimConfig {
        scenario: Scenario::Generate(GenerateParams {
            brokers: 4,
            racks: 0,
            topics: 2,
            partitions_per_topic: 4,
            replication_factor: 2,
            seed: 3,
            mean_partition_bytes: 20e6,
            mean_msg_rate: 0.0,
            msg_bytes: 100.0,
            ..GenerateParams::default()
        }),
        base_port: 0,
        speed,
        tick: Duration::from_millis(20),
        ..SimConfig::default()
    })
    .await
    .expect("simulated cluster");
    let new_broker = sim.add_broker(None).await.expect("add a broker");
    let client = Client::connect(
        ClientConfig::plaintext(&sim.bootstrap())
            .with_request_timeout(Duration::from_secs(5))
            .with_retries(5, Duration::from_millis(50)),
    )
    .await
    .expect("connect");
    let dir = tempfile::tempdir().expect("temp dir");
    let db = dir.path().join("ballast.db");
    Store::migrate(&db).expect("migrate");
    let store = Store::open(&db).expect("open");
    let rate = rate_mb.to_string();
    let cap = cap.to_string();
    let mut pairs: Vec<(String, String)> = [
        ("BALLAST_KAFKA_BOOTSTRAP_SERVERS", sim.bootstrap().as_str()),
        ("BALLAST_DATA_DIR", dir.path().to_str().expect("utf-8")),
        ("BALLAST_THROTTLE_RATE_MB", rate.as_str()),
        ("BALLAST_MOVE_MAX_PER_BROKER", cap.as_str()),
    ]
    .iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect();
    pairs.extend(extra.iter().map(|(k, v)| (k.to_string(), v.to_string())));
    let raw = RawConfig::from_pairs(pairs, None).expect("raw config");
    let config = Arc::new(Config::from_raw(&raw).expect("config"));
    Bed {
        sim,
        client,
        store,
        config,
        new_broker,
        _dir: dir,
    }
}

impl Bed {
    /// Moves the first replica of `count` partitions onto the new broker, as one operation.
    fn queue(&self, count: usize) -> String {
        let snap = self.sim.snapshot();
        let moves: Vec<NewMove> = snap
            .partitions
            .iter()
            .take(count)
            .map(|p| {
                let mut target = p.replicas.clone();
                target[0] = self.new_broker;
                NewMove {
                    topic: p.topic.clone(),
                    partition: p.partition,
                    source: p.replicas.clone(),
                    target,
                    steps: 1,
                    bytes_total: p.size_bytes,
                    phase: 0,
                }
            })
            .collect();
        self.queue_moves(moves)
    }

    fn queue_moves(&self, moves: Vec<NewMove>) -> String {
        let op = NewOperation {
            kind: "bulk".into(),
            strategy: "BULK_MANUAL".into(),
            method: "POST".into(),
            detail: serde_json::json!({}),
            moves,
            ..NewOperation::default()
        };
        match self
            .store
            .queue_operation(&op, None, now(), 30_000)
            .expect("queue")
        {
            Queued::Started { id, .. } => id,
            Queued::Busy(b) => panic!("busy: {}", b.message()),
        }
    }

    fn state(&self, id: &str) -> OperationState {
        self.store
            .operation(id)
            .expect("read")
            .expect("exists")
            .state
    }

    fn throttles_set(&self) -> bool {
        let t = self.sim.truth().throttles;
        !t.brokers.is_empty() || !t.topics.is_empty()
    }

    /// Throttle configs on brokers that are up, on the broker defaults and on topics.
    fn live_throttles(&self) -> Vec<String> {
        let truth = self.sim.truth();
        let up: Vec<i32> = truth
            .brokers
            .iter()
            .filter(|b| b.up)
            .map(|b| b.id)
            .collect();
        let brokers = truth
            .throttles
            .brokers
            .iter()
            .filter(|t| t.broker.is_none_or(|b| up.contains(&b)))
            .map(|t| format!("{t:?}"));
        let topics = truth.throttles.topics.iter().map(|t| format!("{t:?}"));
        brokers.chain(topics).collect()
    }

    /// Whether broker `id` has a throttle rate set.
    fn broker_throttled(&self, id: i32) -> bool {
        self.sim
            .truth()
            .throttles
            .brokers
            .iter()
            .any(|t| t.broker == Some(id))
    }

    /// Stores an observed view that has seen every broker of the cluster (as the observer would
    /// before they went down): the pre-flight counts them as known.
    fn observe_every_broker(&self) {
        let brokers = self
            .sim
            .truth()
            .brokers
            .iter()
            .map(|b| ObservedBroker {
                broker_id: b.id,
                host: Some("127.0.0.1".into()),
                port: Some(i32::from(b.port)),
                rack: None,
                alive: true,
                first_seen_ms: Some(now()),
                last_seen_ms: Some(now()),
                log_dirs_read: false,
                log_dirs_error: None,
            })
            .collect::<Vec<_>>();
        self.store
            .write_observed(&ObservedWrite {
                cluster: ClusterFacts {
                    sampled_at_ms: now(),
                    brokers: brokers.len() as u32,
                    ..ClusterFacts::default()
                },
                brokers,
                ..ObservedWrite::default()
            })
            .expect("observed view");
    }

    /// Whether every cancelled move of operation `id` is confirmed (the cluster dropped it and
    /// its partition is back as it was).
    fn cancels_confirmed(&self, id: &str) -> bool {
        self.store
            .moves(id)
            .expect("moves")
            .iter()
            .all(|m| m.state != MoveState::Cancelled || m.cancel_confirmed)
    }

    /// The partition's replicas and leader in the simulator.
    fn placement(&self, topic: &str, partition: i32) -> (Vec<i32>, Option<i32>) {
        let snap = self.sim.snapshot();
        let p = snap
            .partitions
            .iter()
            .find(|p| p.topic == topic && p.partition == partition)
            .expect("partition");
        (p.replicas.clone(), p.leader)
    }

    fn audits(&self, action: &str) -> usize {
        self.store
            .list_audit(&ballast_schema::AuditQuery {
                action: Some(action.into()),
                ..Default::default()
            })
            .expect("audit")
            .events
            .len()
    }

    /// Queues one move, ticks until it is in flight, then ends its operation: nothing drives
    /// the move any more. Returns the operation id and the engine.
    async fn abandon_a_move_in_flight(&self) -> (String, Engine) {
        let id = self.queue(1);
        let mut engine = Engine::new(self.store.clone(), self.config.clone());
        self.run_until(&mut engine, |b| {
            b.store.moves(&id).expect("moves")[0].state == MoveState::Active
        })
        .await;
        self.store
            .finish_operation(
                None,
                &id,
                OperationState::Failed,
                Some("abandoned"),
                None,
                now(),
            )
            .expect("finish");
        (id, engine)
    }

    /// Ticks until some move of operation `id` is in flight.
    async fn run_until_a_move_is_active(&self, engine: &mut Engine, id: &str) {
        self.run_until(engine, |b| {
            b.store
                .moves(id)
                .expect("moves")
                .iter()
                .any(|m| m.state == MoveState::Active)
        })
        .await;
    }

    /// Ticks until `done` or 40 s; returns whether throttles were seen while moves ran.
    async fn run_until(&self, engine: &mut Engine, mut done: impl FnMut(&Bed) -> bool) -> bool {
        let mut saw_throttles = false;
        let deadline = std::time::Instant::now() + Duration::from_secs(40);
        while !done(self) {
            assert!(std::time::Instant::now() < deadline, "timed out");
            engine.tick(&self.client, now()).await.expect("tick");
            if !self.sim.truth().reassignments.in_flight.is_empty() {
                saw_throttles |= self.throttles_set();
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        saw_throttles
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_move_completes_under_the_per_broker_cap_with_throttles_during_and_none_after() {
    let bed = bed(10.0, 2, 2, &[]).await;
    let id = bed.queue(6);
    let mut engine = Engine::new(bed.store.clone(), bed.config.clone());
    let saw = bed
        .run_until(&mut engine, |b| b.state(&id).is_finished())
        .await;
    assert_eq!(bed.state(&id), OperationState::Completed);
    let moves = bed.store.moves(&id).expect("moves");
    assert!(
        moves.iter().all(|m| m.state == MoveState::Completed),
        "{moves:?}"
    );
    // The cluster is where the moves said.
    let snap = bed.sim.snapshot();
    for m in &moves {
        let p = snap
            .partitions
            .iter()
            .find(|p| p.topic == m.topic && p.partition == m.partition)
            .expect("partition");
        assert_eq!(p.replicas, m.target);
    }
    let truth = bed.sim.truth();
    for b in &truth.brokers {
        assert!(
            b.max_concurrent_moves_as_participant <= 2,
            "broker {} took part in {} concurrent moves",
            b.id,
            b.max_concurrent_moves_as_participant
        );
    }
    assert!(saw, "throttles were set while moves ran");
    assert!(
        !bed.throttles_set(),
        "no throttle is left behind: {:?}",
        truth.throttles
    );
    assert_eq!(
        bed.store.slot(now()).expect("slot"),
        None,
        "the slot is free"
    );
    assert_eq!(
        bed.store
            .partitions_in_cooldown(now(), 3_600_000)
            .expect("cooldowns")
            .len(),
        6
    );
    bed.sim.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_restarted_engine_resumes_tracking_and_submits_nothing_twice() {
    let bed = bed(5.0, 2, 2, &[]).await;
    let id = bed.queue(4);
    let mut first = Engine::new(bed.store.clone(), bed.config.clone());
    bed.run_until_a_move_is_active(&mut first, &id).await;
    drop(first);
    // A step recorded but never sent (the process died between the two): shown as submitting.
    let moves = bed.store.moves(&id).expect("moves");
    let waiting = moves
        .iter()
        .find(|m| m.state == MoveState::Pending)
        .expect("a move still waits");
    let mut u = waiting.clone();
    u.state = MoveState::Submitting;
    u.submitted = Some(waiting.target.clone());
    u.submissions = 1;
    u.submitted_at_ms = Some(now());
    bed.store
        .update_moves(None, &[u], now())
        .expect("fake a crash");

    let mut second = Engine::new(bed.store.clone(), bed.config.clone());
    bed.run_until(&mut second, |b| b.state(&id).is_finished())
        .await;
    assert_eq!(bed.state(&id), OperationState::Completed);
    let truth = bed.sim.truth();
    for m in bed.store.moves(&id).expect("moves") {
        let seen = truth
            .reassignments
            .finished
            .iter()
            .chain(truth.reassignments.in_flight.iter())
            .filter(|r| r.record.topic == m.topic && r.record.partition == m.partition)
            .count();
        assert_eq!(
            seen, 1,
            "{}-{} reached the cluster exactly once",
            m.topic, m.partition
        );
    }
    assert!(!bed.throttles_set());
    bed.sim.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancel_mid_run_cancels_in_flight_moves_keeps_completed_ones_and_clears_throttles() {
    let bed = bed(2.0, 1, 1, &[]).await;
    let id = bed.queue(4);
    let mut engine = Engine::new(bed.store.clone(), bed.config.clone());
    bed.run_until_a_move_is_active(&mut engine, &id).await;
    bed.store.request_cancel(&id, now()).expect("cancel");
    bed.run_until(&mut engine, |b| {
        b.state(&id).is_finished() && b.cancels_confirmed(&id)
    })
    .await;
    assert_eq!(bed.state(&id), OperationState::Cancelled);
    let moves = bed.store.moves(&id).expect("moves");
    assert!(moves
        .iter()
        .all(|m| matches!(m.state, MoveState::Cancelled | MoveState::Completed)));
    assert!(moves.iter().any(|m| m.state == MoveState::Cancelled));
    assert!(bed.sim.truth().reassignments.in_flight.is_empty());
    assert!(!bed.throttles_set(), "{:?}", bed.sim.truth().throttles);
    // Cancelled moves are back on their original replicas.
    let snap = bed.sim.snapshot();
    for m in moves.iter().filter(|m| m.state == MoveState::Cancelled) {
        let p = snap
            .partitions
            .iter()
            .find(|p| p.topic == m.topic && p.partition == m.partition)
            .expect("partition");
        assert_eq!(p.replicas, m.source);
        assert_eq!(p.leader, m.source.first().copied());
    }
    bed.sim.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stale_plan_is_caught_before_submission_and_never_sent() {
    let bed = bed(10.0, 50, 5, &[]).await;
    let snap = bed.sim.snapshot();
    let p = &snap.partitions[0];
    // Planned on replicas the partition does not have: a broker both keep is missing live.
    let other: Vec<i32> = (1..=4).filter(|b| !p.replicas.contains(b)).collect();
    let planned_source = vec![other[0], other[1]];
    let moves = vec![NewMove {
        topic: p.topic.clone(),
        partition: p.partition,
        source: planned_source.clone(),
        target: vec![bed.new_broker, other[1]],
        steps: 1,
        bytes_total: p.size_bytes,
        phase: 0,
    }];
    let id = bed.queue_moves(moves);
    let mut engine = Engine::new(bed.store.clone(), bed.config.clone());
    bed.run_until(&mut engine, |b| b.state(&id).is_finished())
        .await;
    let m = &bed.store.moves(&id).expect("moves")[0];
    assert_eq!(m.state, MoveState::Failed);
    let reason = m.reason.clone().unwrap_or_default();
    assert!(reason.starts_with("stale plan: live replicas"), "{reason}");
    assert_eq!(m.submissions, 0);
    let truth = bed.sim.truth();
    assert!(truth.reassignments.finished.is_empty() && truth.reassignments.in_flight.is_empty());
    // A failure adds a status 500 audit event.
    let page = bed
        .store
        .list_audit(&ballast_schema::AuditQuery::default())
        .expect("audit");
    assert!(page.events.iter().any(|e| e.status == 500));
    bed.sim.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_move_tracked_past_the_timeout_with_no_execution_driving_it_is_reverted_and_audited() {
    let bed = bed(1.0, 1, 5, &[("BALLAST_MOVE_TIMEOUT", "3s")]).await;
    // The operation ends while its move is still in flight: nothing drives the move any more.
    let (id, mut engine) = bed.abandon_a_move_in_flight().await;
    let source = bed.store.moves(&id).expect("moves")[0].source.clone();
    bed.run_until(&mut engine, |b| {
        b.store.moves(&id).expect("moves")[0].timed_out
    })
    .await;
    let m = &bed.store.moves(&id).expect("moves")[0];
    assert_eq!(m.state, MoveState::Cancelled);
    assert!(m.reason.as_deref().unwrap_or("").starts_with("timed out"));
    let page = bed
        .store
        .list_audit(&ballast_schema::AuditQuery {
            action: Some("reassignments.timeout".into()),
            ..Default::default()
        })
        .expect("audit");
    assert_eq!(page.events.len(), 1);
    assert_eq!(page.events[0].method, "INTERNAL");
    assert_eq!(page.events[0].user_id.as_deref(), Some("pilot"));
    // The partition goes back to its original replicas.
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    loop {
        let snap = bed.sim.snapshot();
        let p = snap
            .partitions
            .iter()
            .find(|p| p.topic == m.topic && p.partition == m.partition)
            .expect("partition");
        if p.replicas == source
            && p.leader == source.first().copied()
            && bed.sim.truth().reassignments.in_flight.is_empty()
        {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "not reverted: {:?}",
            p.replicas
        );
        engine.tick(&bed.client, now()).await.expect("tick");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    // Later passes neither send the revert again nor audit it again.
    tick_n(&bed, &mut engine, 5).await;
    assert_eq!(bed.audits("reassignments.timeout"), 1);
    assert!(bed.store.moves(&id).expect("moves")[0].cancel_confirmed);
    bed.sim.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_leader_only_move_ends_with_its_first_replica_leading() {
    let bed = bed(10.0, 50, 5, &[]).await;
    let snap = bed.sim.snapshot();
    let p = &snap.partitions[0];
    let mut target = p.replicas.clone();
    target.reverse();
    let id = bed.queue_moves(vec![NewMove {
        topic: p.topic.clone(),
        partition: p.partition,
        source: p.replicas.clone(),
        target: target.clone(),
        steps: 1,
        bytes_total: 0,
        phase: 0,
    }]);
    let mut engine = Engine::new(bed.store.clone(), bed.config.clone());
    bed.run_until(&mut engine, |b| b.state(&id).is_finished())
        .await;
    assert_eq!(bed.state(&id), OperationState::Completed);
    let after = bed.sim.snapshot();
    let q = after
        .partitions
        .iter()
        .find(|q| q.topic == p.topic && q.partition == p.partition)
        .expect("partition");
    assert_eq!(q.replicas, target);
    assert_eq!(
        q.leader,
        Some(target[0]),
        "the preferred leader was elected"
    );
    bed.sim.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_later_phase_starts_only_after_the_earlier_phase_finished() {
    let bed = bed(10.0, 2, 5, &[]).await;
    let snap = bed.sim.snapshot();
    let moves: Vec<NewMove> = snap
        .partitions
        .iter()
        .take(2)
        .enumerate()
        .map(|(i, p)| {
            let mut target = p.replicas.clone();
            target[0] = bed.new_broker;
            NewMove {
                topic: p.topic.clone(),
                partition: p.partition,
                source: p.replicas.clone(),
                target,
                steps: 1,
                bytes_total: p.size_bytes,
                phase: i as u32,
            }
        })
        .collect();
    let id = bed.queue_moves(moves);
    let mut engine = Engine::new(bed.store.clone(), bed.config.clone());
    let mut overlap = false;
    bed.run_until(&mut engine, |b| {
        let m = b.store.moves(&id).expect("moves");
        overlap |= m[0].state.is_in_flight() && m[1].state.is_in_flight();
        b.state(&id).is_finished()
    })
    .await;
    assert!(!overlap, "phase 1 waited for phase 0");
    assert_eq!(bed.state(&id), OperationState::Completed);
    bed.sim.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_destination_broker_dying_mid_move_loses_nothing_and_the_move_completes_when_it_returns()
{
    let bed = bed(4.0, 1, 5, &[]).await;
    let id = bed.queue(2);
    let mut engine = Engine::new(bed.store.clone(), bed.config.clone());
    bed.run_until(&mut engine, |b| {
        b.store
            .moves(&id)
            .expect("moves")
            .iter()
            .all(|m| m.state == MoveState::Active)
    })
    .await;
    bed.sim
        .stop_broker(bed.new_broker)
        .await
        .expect("stop the destination");
    for _ in 0..10 {
        engine.tick(&bed.client, now()).await.expect("tick");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let moves = bed.store.moves(&id).expect("moves");
    assert!(
        moves.iter().all(|m| m.state == MoveState::Active),
        "moves keep being tracked while their destination is down: {moves:?}"
    );
    assert_eq!(bed.state(&id), OperationState::Running);
    bed.sim
        .start_broker(bed.new_broker)
        .await
        .expect("start it again");
    bed.run_until(&mut engine, |b| b.state(&id).is_finished())
        .await;
    assert_eq!(bed.state(&id), OperationState::Completed);
    assert!(!bed.throttles_set());
    bed.sim.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_move_whose_destination_broker_is_down_reads_stalled_naming_it_and_completes_once_it_returns(
) {
    let bed = bed(4.0, 1, 5, &[("BALLAST_MOVE_STALL_READINGS", "3")]).await;
    let id = bed.queue(2);
    let mut engine = Engine::new(bed.store.clone(), bed.config.clone());
    bed.run_until(&mut engine, |b| {
        b.store
            .moves(&id)
            .expect("moves")
            .iter()
            .all(|m| m.state == MoveState::Active)
    })
    .await;
    let moves = bed.store.moves(&id).expect("moves");
    assert!(moves.iter().all(|m| !m.is_stalled()), "copying: {moves:?}");
    let down_at = now();
    bed.sim
        .stop_broker(bed.new_broker)
        .await
        .expect("stop the destination");
    tick_n(&bed, &mut engine, 6).await;
    let moves = bed.store.moves(&id).expect("moves");
    for m in &moves {
        assert!(
            m.is_stalled(),
            "stalled while its destination is down: {m:?}"
        );
        assert_eq!(m.state, MoveState::Active, "still in the cluster: {m:?}");
        assert_eq!(m.stalled_brokers, vec![bed.new_broker]);
        let since = m.stalled_since_ms.expect("since");
        assert!(since >= down_at && since <= now(), "{m:?}");
        let reason = m.reason.as_deref().unwrap_or_default();
        assert!(
            reason.starts_with(&format!(
                "stalled: destination broker {} is down (not in the cluster's metadata since ",
                bed.new_broker
            )),
            "{reason}"
        );
        assert_eq!(
            m.rate, None,
            "its rate is not measured while it is down: {m:?}"
        );
        assert_eq!(m.submissions, 1, "nothing is sent again: {m:?}");
    }
    assert_eq!(bed.store.move_stats().expect("stats").stalled, 2);
    assert_eq!(bed.state(&id), OperationState::Running);
    bed.sim
        .start_broker(bed.new_broker)
        .await
        .expect("start it again");
    bed.run_until(&mut engine, |b| {
        b.store
            .moves(&id)
            .expect("moves")
            .iter()
            .all(|m| !m.is_stalled())
    })
    .await;
    bed.run_until(&mut engine, |b| b.state(&id).is_finished())
        .await;
    assert_eq!(bed.state(&id), OperationState::Completed);
    for m in bed.store.moves(&id).expect("moves") {
        assert_eq!(m.state, MoveState::Completed, "{m:?}");
        assert_eq!(m.submissions, 1, "submitted once: {m:?}");
        assert_eq!(
            (m.stalled_since_ms, m.reason.clone()),
            (None, None),
            "{m:?}"
        );
    }
    assert_eq!(bed.store.move_stats().expect("stats").stalled, 0);
    assert!(!bed.throttles_set(), "no throttle is left");
    bed.sim.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_move_whose_partition_has_no_leader_to_copy_from_reads_stalled_naming_its_sources() {
    let bed = bed(4.0, 1, 5, &[]).await;
    let id = bed.queue(1);
    let mut engine = Engine::new(bed.store.clone(), bed.config.clone());
    bed.run_until_a_move_is_active(&mut engine, &id).await;
    let m = bed.store.moves(&id).expect("moves")[0].clone();
    // Every replica it can copy from stops: the partition has no leader.
    for b in &m.source {
        bed.sim.stop_broker(*b).await.expect("stop a source");
    }
    tick_n(&bed, &mut engine, 3).await;
    let m = bed.store.moves(&id).expect("moves")[0].clone();
    assert!(m.is_stalled(), "{m:?}");
    let mut sources = m.source.clone();
    sources.sort_unstable();
    assert_eq!(m.stalled_brokers, sources, "{m:?}");
    assert!(
        m.reason
            .as_deref()
            .is_some_and(|r| r.starts_with("stalled: no leader to copy from: source brokers ")),
        "{m:?}"
    );
    for b in &m.source {
        bed.sim.start_broker(*b).await.expect("start it again");
    }
    bed.run_until(&mut engine, |b| b.state(&id).is_finished())
        .await;
    let m = bed.store.moves(&id).expect("moves")[0].clone();
    assert_eq!(m.state, MoveState::Completed, "{m:?}");
    assert_eq!(m.submissions, 1, "{m:?}");
    bed.sim.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn leftover_throttles_are_cleared_at_start_when_ballast_owns_them() {
    use ballast_kafka::{AlterConfigOp, ConfigResource};
    let bed = bed(10.0, 50, 5, &[]).await;
    let snap = bed.sim.snapshot();
    let topic = snap.partitions[0].topic.clone();
    let set = |name: &str, value: &str| AlterConfigOp::Set {
        name: name.to_string(),
        value: value.to_string(),
    };
    bed.client
        .incremental_alter_configs(
            &[
                (
                    ConfigResource::Broker(1),
                    vec![set("leader.replication.throttled.rate", "1000")],
                ),
                (
                    ConfigResource::BrokerDefaults,
                    vec![set("follower.replication.throttled.rate", "1000")],
                ),
                (
                    ConfigResource::Topic(topic.clone()),
                    vec![set("leader.replication.throttled.replicas", "0:1")],
                ),
            ],
            false,
        )
        .await
        .expect("leave throttles behind");
    assert!(bed.throttles_set());
    // Leftovers of an earlier run: set long before this start, so the brokers show them (a
    // KRaft broker, and the simulator, describe a change a moment after it was accepted).
    let shown = || async {
        let described = bed
            .client
            .describe_configs(&[
                ConfigResource::Broker(1),
                ConfigResource::BrokerDefaults,
                ConfigResource::Topic(topic.clone()),
            ])
            .await
            .expect("describe");
        described.iter().all(|rc| {
            rc.entries.iter().any(|e| {
                e.name.contains("throttled")
                    && e.value.as_deref().is_some_and(|v| !v.is_empty())
                    && matches!(
                        e.source,
                        ballast_kafka::ConfigSource::DynamicTopicConfig
                            | ballast_kafka::ConfigSource::DynamicBrokerConfig
                            | ballast_kafka::ConfigSource::DynamicDefaultBrokerConfig
                    )
            })
        })
    };
    let mut waited = 0;
    while !shown().await {
        waited += 1;
        assert!(waited < 100, "the throttles never showed");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let mut engine = Engine::new(bed.store.clone(), bed.config.clone());
    engine.tick(&bed.client, now()).await.expect("tick");
    assert!(!bed.throttles_set(), "{:?}", bed.sim.truth().throttles);
    bed.sim.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_throttles_externally_managed_ballast_sets_and_clears_none() {
    use ballast_kafka::{AlterConfigOp, ConfigResource};
    let bed = bed(10.0, 2, 5, &[("BALLAST_THROTTLE_MANAGED", "false")]).await;
    bed.client
        .incremental_alter_configs(
            &[(
                ConfigResource::Broker(1),
                vec![AlterConfigOp::Set {
                    name: "leader.replication.throttled.rate".into(),
                    value: "5000000".into(),
                }],
            )],
            false,
        )
        .await
        .expect("an operator's own throttle");
    let id = bed.queue(2);
    let mut engine = Engine::new(bed.store.clone(), bed.config.clone());
    bed.run_until(&mut engine, |b| b.state(&id).is_finished())
        .await;
    assert_eq!(bed.state(&id), OperationState::Completed);
    let t = bed.sim.truth().throttles;
    assert_eq!(t.brokers.len(), 1, "the operator's throttle stays: {t:?}");
    assert!(t.topics.is_empty(), "ballast set no replica lists: {t:?}");
    bed.sim.shutdown().await;
}

/// Ticks `n` times, 100 ms apart; returns the last report.
async fn tick_n(bed: &Bed, engine: &mut Engine, n: usize) -> ballast_executor::Report {
    let mut last = ballast_executor::Report::default();
    for _ in 0..n {
        last = engine.tick(&bed.client, now()).await.expect("tick");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    last
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_source_broker_gone_for_good_keeps_no_operation_from_finishing_and_loses_its_throttle_when_it_returns(
) {
    let bed = bed(4.0, 1, 5, &[]).await;
    let id = bed.queue(2);
    let mut engine = Engine::new(bed.store.clone(), bed.config.clone());
    bed.run_until(&mut engine, |b| {
        b.store
            .moves(&id)
            .expect("moves")
            .iter()
            .all(|m| m.state == MoveState::Active)
    })
    .await;
    // A broker the first move copies from and removes; no move keeps it (one that did could
    // never complete while it is down, in Kafka as here: that takes a cancel).
    let moves = bed.store.moves(&id).expect("moves");
    let gone = moves[0].source[0];
    assert!(moves.iter().all(|m| !m.target.contains(&gone)), "{moves:?}");
    assert!(bed.broker_throttled(gone), "a source broker is throttled");
    bed.sim.stop_broker(gone).await.expect("stop a source");
    bed.run_until(&mut engine, |b| b.state(&id).is_finished())
        .await;
    let moves = bed.store.moves(&id).expect("moves");
    for m in &moves {
        assert!(
            m.state == MoveState::Completed
                || (m.state.is_finished() && m.reason.as_deref().is_some_and(|r| !r.is_empty())),
            "{m:?}"
        );
    }
    assert_eq!(
        bed.store.slot(now()).expect("slot"),
        None,
        "the slot is free"
    );
    assert!(
        bed.live_throttles().is_empty(),
        "no throttle is left on a live broker or topic: {:?}",
        bed.live_throttles()
    );
    assert!(
        bed.broker_throttled(gone),
        "the stopped broker still holds its throttle"
    );
    let report = tick_n(&bed, &mut engine, 1).await;
    assert!(
        report
            .throttle_pending
            .iter()
            .any(|p| p.contains(&format!("broker {gone}"))),
        "the pending cleanup is reported: {report:?}"
    );
    // A restarted executor cannot read the stopped broker, but remembers what is left to remove.
    drop(engine);
    let mut restarted = Engine::new(bed.store.clone(), bed.config.clone());
    tick_n(&bed, &mut restarted, 2).await;
    bed.sim.start_broker(gone).await.expect("it comes back");
    bed.run_until(&mut restarted, |b| !b.throttles_set()).await;
    let report = tick_n(&bed, &mut restarted, 1).await;
    assert!(report.throttle_pending.is_empty(), "{report:?}");
    bed.sim.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_destination_broker_gone_for_good_keeps_no_cancel_from_ending_and_loses_its_throttle_when_it_returns(
) {
    let bed = bed(2.0, 1, 5, &[]).await;
    let id = bed.queue(2);
    let mut engine = Engine::new(bed.store.clone(), bed.config.clone());
    bed.run_until(&mut engine, |b| {
        b.store
            .moves(&id)
            .expect("moves")
            .iter()
            .all(|m| m.state == MoveState::Active)
    })
    .await;
    assert!(bed.broker_throttled(bed.new_broker));
    bed.sim
        .stop_broker(bed.new_broker)
        .await
        .expect("stop the destination");
    tick_n(&bed, &mut engine, 3).await;
    bed.store.request_cancel(&id, now()).expect("cancel");
    bed.run_until(&mut engine, |b| b.state(&id).is_finished())
        .await;
    assert_eq!(bed.state(&id), OperationState::Cancelled);
    for m in bed.store.moves(&id).expect("moves") {
        assert_eq!(m.state, MoveState::Cancelled, "{m:?}");
        assert!(m.reason.is_some(), "{m:?}");
    }
    assert!(
        bed.sim.truth().reassignments.in_flight.is_empty(),
        "cancelled in the cluster"
    );
    assert!(
        bed.live_throttles().is_empty(),
        "{:?}",
        bed.live_throttles()
    );
    assert!(bed.broker_throttled(bed.new_broker));
    bed.sim
        .start_broker(bed.new_broker)
        .await
        .expect("it comes back");
    bed.run_until(&mut engine, |b| !b.throttles_set()).await;
    bed.sim.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_majority_of_brokers_down_holds_pending_moves_back_until_they_return() {
    let bed = bed(4.0, 1, 1, &[]).await;
    bed.observe_every_broker();
    let snap = bed.sim.snapshot();
    // Phase 0 keeps only brokers that stay up: [leader, x] -> [leader, new], x goes down. The
    // largest partition, so it is still copying when the brokers stop.
    let first = snap
        .partitions
        .iter()
        .max_by_key(|p| p.size_bytes)
        .expect("a partition");
    let leader = first.leader.expect("a leader");
    let x = *first
        .replicas
        .iter()
        .find(|b| **b != leader)
        .expect("a follower");
    let mut moves = vec![NewMove {
        topic: first.topic.clone(),
        partition: first.partition,
        source: first.replicas.clone(),
        target: first
            .replicas
            .iter()
            .map(|b| if *b == x { bed.new_broker } else { *b })
            .collect(),
        steps: 1,
        bytes_total: first.size_bytes,
        phase: 0,
    }];
    // Phase 1 waits for it: pending when the brokers go down.
    for p in snap
        .partitions
        .iter()
        .filter(|p| (&p.topic, p.partition) != (&first.topic, first.partition))
        .take(2)
    {
        let mut target = p.replicas.clone();
        target[0] = bed.new_broker;
        moves.push(NewMove {
            topic: p.topic.clone(),
            partition: p.partition,
            source: p.replicas.clone(),
            target,
            steps: 1,
            bytes_total: p.size_bytes,
            phase: 1,
        });
    }
    let id = bed.queue_moves(moves);
    let mut engine = Engine::new(bed.store.clone(), bed.config.clone());
    bed.run_until_a_move_is_active(&mut engine, &id).await;
    let down: Vec<i32> = (1..=4).filter(|b| *b != leader).collect();
    for b in &down {
        bed.sim.stop_broker(*b).await.expect("stop");
    }
    // Phase 0 completes; phase 1 is held back, pending, showing the blocker.
    bed.run_until(&mut engine, |b| {
        b.store.moves(&id).expect("moves")[0].state == MoveState::Completed
    })
    .await;
    let report = tick_n(&bed, &mut engine, 10).await;
    let held = report.held.clone().unwrap_or_default();
    assert!(held.contains("majority"), "{report:?}");
    let moves = bed.store.moves(&id).expect("moves");
    for m in &moves[1..] {
        assert_eq!(m.state, MoveState::Pending, "{m:?}");
        assert!(
            m.reason
                .as_deref()
                .is_some_and(|r| r.starts_with("held back: ") && r.contains("majority")),
            "{m:?}"
        );
        assert_eq!(m.submissions, 0);
    }
    assert_eq!(bed.state(&id), OperationState::Running);
    for b in &down {
        bed.sim.start_broker(*b).await.expect("start");
    }
    bed.run_until(&mut engine, |b| b.state(&id).is_finished())
        .await;
    assert_eq!(bed.state(&id), OperationState::Completed);
    for m in bed.store.moves(&id).expect("moves") {
        assert_eq!(m.state, MoveState::Completed, "{m:?}");
        assert_eq!(m.reason, None, "the hold no longer shows: {m:?}");
    }
    assert!(!bed.throttles_set());
    bed.sim.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pending_moves_held_back_longer_than_the_hold_limit_fail_naming_the_blocker() {
    let bed = bed(10.0, 2, 5, &[("BALLAST_PREFLIGHT_HOLD_MAX", "1s")]).await;
    bed.observe_every_broker();
    let id = bed.queue(2);
    for b in 1..=3 {
        bed.sim.stop_broker(b).await.expect("stop");
    }
    let mut engine = Engine::new(bed.store.clone(), bed.config.clone());
    let report = tick_n(&bed, &mut engine, 1).await;
    assert!(
        report
            .held
            .as_deref()
            .is_some_and(|h| h.contains("majority")),
        "{report:?}"
    );
    assert!(bed
        .store
        .moves(&id)
        .expect("moves")
        .iter()
        .all(|m| m.state == MoveState::Pending));
    bed.run_until(&mut engine, |b| b.state(&id).is_finished())
        .await;
    assert_eq!(bed.state(&id), OperationState::Failed);
    for m in bed.store.moves(&id).expect("moves") {
        assert_eq!(m.state, MoveState::Failed);
        let reason = m.reason.unwrap_or_default();
        assert!(
            reason.contains("a majority of brokers is unavailable")
                && reason.contains("BALLAST_PREFLIGHT_HOLD_MAX"),
            "{reason}"
        );
        assert_eq!(m.submissions, 0);
    }
    let truth = bed.sim.truth();
    assert!(truth.reassignments.finished.is_empty() && truth.reassignments.in_flight.is_empty());
    bed.sim.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_replication_factor_increase_never_has_two_added_replicas_in_flight() {
    let bed = bed(10.0, 2, 5, &[]).await;
    let snap = bed.sim.snapshot();
    let p = &snap.partitions[0];
    let other = (1..=4)
        .find(|b| !p.replicas.contains(b))
        .expect("a broker without it");
    let mut target = p.replicas.clone();
    target.extend([bed.new_broker, other]);
    let id = bed.queue_moves(vec![NewMove {
        topic: p.topic.clone(),
        partition: p.partition,
        source: p.replicas.clone(),
        target: target.clone(),
        steps: waves::steps(&p.replicas, &target).len() as u32,
        bytes_total: p.size_bytes * 2,
        phase: 0,
    }]);
    let mut engine = Engine::new(bed.store.clone(), bed.config.clone());
    bed.run_until(&mut engine, |b| b.state(&id).is_finished())
        .await;
    assert_eq!(bed.state(&id), OperationState::Completed);
    let truth = bed.sim.truth();
    let sent: Vec<_> = truth
        .reassignments
        .finished
        .iter()
        .chain(truth.reassignments.in_flight.iter())
        .filter(|r| r.record.topic == p.topic && r.record.partition == p.partition)
        .collect();
    assert_eq!(sent.len(), 2, "one reassignment per added replica");
    for r in &sent {
        let adding = r
            .record
            .target_replicas
            .iter()
            .filter(|b| !r.record.original_replicas.contains(b))
            .count();
        assert_eq!(adding, 1, "{:?}", r.record);
    }
    let after = bed.sim.snapshot();
    let q = after
        .partitions
        .iter()
        .find(|q| q.topic == p.topic && q.partition == p.partition)
        .expect("partition");
    assert_eq!(q.replicas, target);
    assert!(!bed.throttles_set());
    bed.sim.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_timed_out_move_whose_revert_never_arrived_is_sent_again_and_audited_once() {
    let bed = bed(1.0, 1, 5, &[("BALLAST_MOVE_TIMEOUT", "3s")]).await;
    let (id, mut engine) = bed.abandon_a_move_in_flight().await;
    // An executor recorded the timeout with its audit event, then died before sending the revert.
    let m = bed.store.moves(&id).expect("moves")[0].clone();
    let mut u = m.clone();
    u.state = MoveState::Cancelled;
    u.timed_out = true;
    u.cancel_confirmed = false;
    u.reason = Some("timed out".into());
    bed.store
        .update_moves_audited(
            None,
            &[u],
            &[NewAuditEvent {
                at_ms: now(),
                action: "reassignments.timeout".into(),
                method: "INTERNAL".into(),
                status: 200,
                summary: serde_json::json!({}),
                ..NewAuditEvent::default()
            }],
            now(),
        )
        .expect("record the timeout");
    assert_eq!(bed.sim.truth().reassignments.in_flight.len(), 1);
    bed.run_until(&mut engine, |b| {
        b.store.moves(&id).expect("moves")[0].cancel_confirmed
    })
    .await;
    tick_n(&bed, &mut engine, 5).await;
    let snap = bed.sim.snapshot();
    let p = snap
        .partitions
        .iter()
        .find(|p| p.topic == m.topic && p.partition == m.partition)
        .expect("partition");
    assert_eq!(p.replicas, m.source, "reverted");
    let truth = bed.sim.truth();
    assert!(truth.reassignments.in_flight.is_empty());
    let records: Vec<_> = truth
        .reassignments
        .finished
        .iter()
        .filter(|r| r.record.topic == m.topic && r.record.partition == m.partition)
        .map(|r| &r.record)
        .collect();
    let moved: Vec<_> = records
        .iter()
        .filter(|r| r.target_replicas == m.target)
        .collect();
    assert_eq!(
        moved.len(),
        1,
        "the move reached the cluster once: {records:?}"
    );
    assert_eq!(
        format!("{:?}", moved[0].state),
        "Cancelled",
        "reverted by a cancel"
    );
    // Anything else is the order put back, copying nothing.
    assert!(
        records
            .iter()
            .filter(|r| r.target_replicas != m.target)
            .all(|r| r.target_replicas == m.source && r.bytes_copied == 0.0),
        "{records:?}"
    );
    assert_eq!(p.leader, m.source.first().copied());
    assert_eq!(
        bed.audits("reassignments.timeout"),
        1,
        "never audited twice"
    );
    let m = &bed.store.moves(&id).expect("moves")[0];
    assert_eq!(m.reason.as_deref(), Some("timed out"), "the reason stays");
    bed.sim.shutdown().await;
}

/// Queues one move of a partition's first replica onto the new broker (`[a,b]` -> `[new,b]`)
/// and ticks until it is copying.
async fn one_move_copying(bed: &Bed) -> (String, Engine, ballast_schema::MoveRecord) {
    let id = bed.queue(1);
    let mut engine = Engine::new(bed.store.clone(), bed.config.clone());
    bed.run_until_a_move_is_active(&mut engine, &id).await;
    let m = bed.store.moves(&id).expect("moves")[0].clone();
    (id, engine, m)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cancelled_move_leaves_its_partition_in_the_original_replica_order_led_by_its_first_replica(
) {
    let bed = bed(2.0, 1, 5, &[]).await;
    let (id, mut engine, m) = one_move_copying(&bed).await;
    let [a, b] = m.source[..] else {
        panic!("two replicas: {m:?}")
    };
    bed.store.request_cancel(&id, now()).expect("cancel");
    tick_n(&bed, &mut engine, 1).await;
    // Kafka's cancel brings the set back, not the order: [new,b,a] less the adding one.
    assert_eq!(bed.placement(&m.topic, m.partition).0, vec![b, a]);
    assert!(!bed.store.moves(&id).expect("moves")[0].cancel_confirmed);
    bed.run_until(&mut engine, |b| b.cancels_confirmed(&id))
        .await;
    assert_eq!(
        bed.placement(&m.topic, m.partition),
        (vec![a, b], Some(a)),
        "exactly as it was"
    );
    let m = &bed.store.moves(&id).expect("moves")[0];
    assert_eq!(m.state, MoveState::Cancelled);
    assert_eq!(m.reason.as_deref(), Some("cancelled"));
    // The order came back by a reassignment that copied nothing.
    let truth = bed.sim.truth();
    let reorder = truth
        .reassignments
        .finished
        .iter()
        .find(|r| {
            r.record.topic == m.topic
                && r.record.partition == m.partition
                && r.record.target_replicas == vec![a, b]
        })
        .expect("a reorder");
    assert_eq!(reorder.record.original_replicas, vec![b, a]);
    assert_eq!(reorder.record.bytes_copied, 0.0);
    assert!(truth.reassignments.in_flight.is_empty());
    assert!(!bed.throttles_set());
    bed.sim.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_restarted_executor_finishes_putting_a_cancelled_moves_partition_back_in_order() {
    let bed = bed(2.0, 1, 5, &[]).await;
    let (id, mut engine, m) = one_move_copying(&bed).await;
    bed.store.request_cancel(&id, now()).expect("cancel");
    tick_n(&bed, &mut engine, 1).await;
    assert_eq!(bed.state(&id), OperationState::Cancelled);
    assert_ne!(bed.placement(&m.topic, m.partition).0, m.source);
    // Killed after the cancellation landed, before the order was restored.
    drop(engine);
    let mut restarted = Engine::new(bed.store.clone(), bed.config.clone());
    bed.run_until(&mut restarted, |b| b.cancels_confirmed(&id))
        .await;
    assert_eq!(
        bed.placement(&m.topic, m.partition),
        (m.source.clone(), m.source.first().copied())
    );
    bed.sim.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cancellation_recorded_but_never_sent_is_sent_by_a_restarted_executor_and_the_order_restored(
) {
    let bed = bed(2.0, 1, 5, &[]).await;
    let (id, engine, m) = one_move_copying(&bed).await;
    bed.store.request_cancel(&id, now()).expect("cancel");
    // The executor recorded the cancellation, then died before sending it.
    drop(engine);
    let mut u = m.clone();
    u.state = MoveState::Cancelled;
    u.cancel_confirmed = false;
    u.finished_at_ms = Some(now());
    bed.store
        .update_moves(None, &[u], now())
        .expect("record the cancellation");
    assert_eq!(bed.sim.truth().reassignments.in_flight.len(), 1);
    let mut restarted = Engine::new(bed.store.clone(), bed.config.clone());
    bed.run_until(&mut restarted, |b| {
        b.state(&id).is_finished() && b.cancels_confirmed(&id)
    })
    .await;
    assert_eq!(bed.state(&id), OperationState::Cancelled);
    let truth = bed.sim.truth();
    assert!(truth.reassignments.in_flight.is_empty());
    let record = truth
        .reassignments
        .finished
        .iter()
        .find(|r| r.record.topic == m.topic && r.record.target_replicas == m.target)
        .expect("the move");
    assert_eq!(
        format!("{:?}", record.record.state),
        "Cancelled",
        "cancelled, not completed"
    );
    assert_eq!(
        bed.placement(&m.topic, m.partition),
        (m.source.clone(), m.source.first().copied())
    );
    bed.sim.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_restarted_executor_keeps_the_throttles_of_a_reassignment_in_progress() {
    use ballast_kafka::{AlterConfigOp, ConfigResource, TopicPartition};
    let bed = bed(10.0, 50, 5, &[]).await;
    let snap = bed.sim.snapshot();
    let p = snap.partitions[0].clone();
    let other_topic = snap
        .partitions
        .iter()
        .find(|q| q.topic != p.topic)
        .expect("another topic")
        .topic
        .clone();
    let [a, b] = p.replicas[..] else {
        panic!("two replicas: {p:?}")
    };
    let new = bed.new_broker;
    let idle = (1..=4)
        .find(|x| !p.replicas.contains(x))
        .expect("a broker without it");
    // An operator's `kafka-reassign-partitions.sh --execute --throttle 500000`: [a,b] -> [new,b],
    // and leftovers of something long finished on another topic and broker.
    let set = |name: &str, value: String| AlterConfigOp::Set {
        name: name.into(),
        value,
    };
    let rates = |v: &str| {
        vec![
            set("leader.replication.throttled.rate", v.into()),
            set("follower.replication.throttled.rate", v.into()),
        ]
    };
    bed.client
        .incremental_alter_configs(
            &[
                (ConfigResource::Broker(a), rates("500000")),
                (ConfigResource::Broker(b), rates("500000")),
                (ConfigResource::Broker(new), rates("500000")),
                (ConfigResource::Broker(idle), rates("1000")),
                (
                    ConfigResource::Topic(p.topic.clone()),
                    vec![
                        set(
                            "leader.replication.throttled.replicas",
                            format!("{0}:{a},{0}:{b}", p.partition),
                        ),
                        set(
                            "follower.replication.throttled.replicas",
                            format!("{}:{new}", p.partition),
                        ),
                    ],
                ),
                (
                    ConfigResource::Topic(other_topic.clone()),
                    vec![set("leader.replication.throttled.replicas", "0:1".into())],
                ),
            ],
            false,
        )
        .await
        .expect("the operator's throttles");
    // A leftover of something long finished is visible everywhere: wait until every broker
    // applied the operator's writes from the metadata log (the simulator's lag, as on KRaft).
    wait_until_every_broker_shows(&bed, idle, "leader.replication.throttled.rate", "1000").await;
    bed.client
        .alter_partition_reassignments(&[(
            TopicPartition::new(p.topic.clone(), p.partition),
            Some(vec![new, b]),
        )])
        .await
        .expect("the operator's reassignment");
    let mut engine = Engine::new(bed.store.clone(), bed.config.clone());
    let report = tick_n(&bed, &mut engine, 2).await;
    let truth = bed.sim.truth();
    assert_eq!(truth.reassignments.in_flight.len(), 1, "still copying");
    let mut throttled: Vec<i32> = truth
        .throttles
        .brokers
        .iter()
        .filter_map(|t| t.broker)
        .collect();
    throttled.sort_unstable();
    let mut wanted = vec![a, b, new];
    wanted.sort_unstable();
    assert_eq!(throttled, wanted, "the idle broker's leftover is cleared");
    let topics: Vec<&str> = truth
        .throttles
        .topics
        .iter()
        .map(|t| t.topic.as_str())
        .collect();
    assert_eq!(
        topics,
        vec![p.topic.as_str()],
        "the other topic's is cleared"
    );
    assert_eq!(
        report.throttle_kept.len(),
        8,
        "two lists and six rates kept, and said so: {report:?}"
    );
    assert!(
        report.throttle_kept.iter().all(|k| k.contains(&format!(
            "{}-{} being reassigned, not by ballast",
            p.topic, p.partition
        ))),
        "{report:?}"
    );
    // The copy runs at the operator's rate to the end; then the next pass clears everything.
    bed.run_until(&mut engine, |b| {
        b.sim.truth().reassignments.in_flight.is_empty()
    })
    .await;
    let report = tick_n(&bed, &mut engine, 1).await;
    assert!(report.throttle_kept.is_empty(), "{report:?}");
    assert!(!bed.throttles_set(), "{:?}", bed.sim.truth().throttles);
    let truth = bed.sim.truth();
    let record = &truth
        .reassignments
        .finished
        .iter()
        .find(|r| r.record.topic == p.topic && r.record.partition == p.partition)
        .expect("the operator's move")
        .record;
    assert!(
        !record.limited_by.contains("link"),
        "never ran unthrottled: {record:?}"
    );
    bed.sim.shutdown().await;
}

/// Polls DescribeConfigs of `broker` on every broker until each answers `name` = `value`.
async fn wait_until_every_broker_shows(bed: &Bed, broker: i32, name: &str, value: &str) {
    use ballast_kafka::ConfigResource;
    let brokers: Vec<i32> = bed.sim.snapshot().brokers.iter().map(|b| b.id).collect();
    for _ in 0..200 {
        let mut all = true;
        for at in &brokers {
            let shown = bed
                .client
                .describe_configs_at(*at, &[ConfigResource::Broker(broker)])
                .await
                .expect("describe")
                .into_iter()
                .flat_map(|r| r.entries)
                .any(|e| e.name == name && e.value.as_deref() == Some(value));
            all &= shown;
        }
        if all {
            return;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    panic!("broker {broker}'s {name}={value} never shown by every broker");
}
