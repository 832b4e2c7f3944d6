//! Proposal evaluation against the simulated cluster: observer ticks written to a real store,
//! then `proposals::evaluate` on what they wrote.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use ballast_kafka::{Client, ClientConfig};
use ballast_observer::derive::{History, Windows};
use ballast_observer::proposals::{evaluate, Settings, PROPOSALS_KEPT, READINGS_KEPT};
use ballast_observer::tick;
use ballast_schema::{SavedProposal, Store};
use ballast_simcluster::{GenerateParams, Scenario, SimCluster, SimConfig, Skew};

fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64)
}

const WINDOWS: Windows = Windows {
    rate_window_ms: 60_000,
    retention_ms: 7 * 24 * 3_600_000,
    partition_reading_ms: 3_600_000,
};

/// Settings of an observer that started long ago.
fn settings(warmup_ms: i64) -> Settings {
    Settings {
        policy: ballast_balancer::Policy::default(),
        started_at_ms: 0,
        warmup_ms,
        max_gap_ms: 180_000,
        throttles_managed: true,
        readings_kept: READINGS_KEPT,
        proposals_kept: PROPOSALS_KEPT,
        hold_ms: 0,
    }
}

struct Setup {
    _sim: SimCluster,
    client: Client,
    path: std::path::PathBuf,
    store: Store,
    history: Option<History>,
    _dir: tempfile::TempDir,
}

impl Setup {
    /// Four brokers, the newest one empty.
    async fn new_broker() -> Setup {
        let sim = SimCluster::start(SimConfig {
            scenario: Scenario::Generate(GenerateParams {
                brokers: 4,
                racks: 0,
                topics: 3,
                partitions_per_topic: 8,
                replication_factor: 2,
                mean_partition_bytes: 50e6,
                skew: Skew::NewBroker,
                ..GenerateParams::default()
            }),
            tick: Duration::from_millis(20),
            ..SimConfig::default()
        })
        .await
        .expect("simulated cluster starts");
        let client = Client::connect(ClientConfig::plaintext(&sim.bootstrap()))
            .await
            .expect("client connects");
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("ballast.db");
        Store::migrate(&path).expect("migrate");
        let store = Store::open(&path).expect("open");
        Setup {
            _sim: sim,
            client,
            path,
            store,
            history: None,
            _dir: dir,
        }
    }

    async fn tick(&mut self, now: i64) {
        tick(&self.client, &self.store, &mut self.history, WINDOWS, now)
            .await
            .expect("tick");
    }
}

#[tokio::test]
async fn a_proposal_is_allowed_only_after_four_readings_with_the_same_broker_tripped() {
    let mut s = Setup::new_broker().await;
    let t0 = now_ms();
    for i in 0..6 {
        let now = t0 + i * 1_000;
        s.tick(now).await;
        let e = evaluate(&s.store, &settings(0), now)
            .unwrap()
            .expect("a view, so a proposal");
        assert!(e.plan.recommended, "{:?}", e.plan.reason);
        assert!(
            e.plan.tripped.iter().any(|t| t.broker_id == 4),
            "the empty broker 4 is beyond the trigger: {:?}",
            e.plan.tripped
        );
        let readings = (i + 1) as usize;
        assert_eq!(
            e.decision.application_allowed,
            readings >= 4,
            "after {readings} readings: {:?}",
            e.decision
        );
        if readings < 4 {
            assert_eq!(e.decision.reason.as_deref(), Some("confirming"));
        }
        let current = s.store.current_proposal().unwrap().expect("current");
        assert_eq!(current.id, e.saved.id());
        assert_eq!(current.application_allowed, e.decision.application_allowed);
        assert_eq!(current.decision["applicationAllowed"], readings >= 4);
    }
}

#[tokio::test]
async fn an_unchanged_plan_is_rechecked_not_added_and_checked_at_advances() {
    let mut s = Setup::new_broker().await;
    let t0 = now_ms();
    s.tick(t0).await;
    let first = evaluate(&s.store, &settings(0), t0).unwrap().unwrap();
    assert!(matches!(first.saved, SavedProposal::Inserted { .. }));
    // No new sample: the same view, the same topology and moves.
    let second = evaluate(&s.store, &settings(0), t0 + 5_000)
        .unwrap()
        .unwrap();
    assert_eq!(
        second.saved,
        SavedProposal::Rechecked {
            id: first.saved.id().to_string()
        }
    );
    let stored = s.store.proposal(first.saved.id()).unwrap().unwrap();
    assert_eq!(stored.created_at_ms, t0);
    assert_eq!(stored.checked_at_ms, t0 + 5_000);
    assert_eq!(s.store.proposals(50, 0).unwrap().total, 1);
}

#[tokio::test]
async fn no_proposal_is_allowed_during_the_warm_up() {
    let mut s = Setup::new_broker().await;
    let t0 = now_ms();
    for i in 0..5 {
        s.tick(t0 + i * 1_000).await;
    }
    let started = Settings {
        started_at_ms: t0,
        ..settings(3_600_000)
    };
    let e = evaluate(&s.store, &started, t0 + 5_000).unwrap().unwrap();
    assert!(!e.decision.application_allowed);
    assert_eq!(e.decision.reason.as_deref(), Some("warming_up"));
}

#[tokio::test]
async fn the_warm_up_runs_from_the_observer_process_start_not_the_first_sample() {
    let mut s = Setup::new_broker().await;
    let t0 = now_ms();
    for i in 0..5 {
        s.tick(t0 + i * 1_000).await;
        evaluate(&s.store, &settings(0), t0 + i * 1_000).unwrap();
    }
    // The observer restarts 15 s after the first sample, with a 10 s warm-up: measured from the
    // first sample it would be over, measured from this process's start it is not.
    let restarted = Settings {
        started_at_ms: t0 + 15_000,
        ..settings(10_000)
    };
    s.history = None;
    s.tick(t0 + 20_000).await;
    let e = evaluate(&s.store, &restarted, t0 + 20_000)
        .unwrap()
        .unwrap();
    assert!(!e.decision.application_allowed);
    assert_eq!(e.decision.reason.as_deref(), Some("warming_up"));
    assert_eq!(e.decision.warmup_remaining_ms, 5_000);
}

#[tokio::test]
async fn readings_further_apart_than_three_sample_intervals_restart_the_streak() {
    let mut s = Setup::new_broker().await;
    let t0 = now_ms();
    let gap = settings(0).max_gap_ms;
    for i in 0..3 {
        s.tick(t0 + i * 1_000).await;
        evaluate(&s.store, &settings(0), t0 + i * 1_000).unwrap();
    }
    // The observer could not read the cluster for longer than the gap.
    let later = t0 + 2_000 + gap + 1;
    s.tick(later).await;
    let e = evaluate(&s.store, &settings(0), later).unwrap().unwrap();
    assert_eq!(e.decision.readings_beyond_trigger, 1, "{:?}", e.decision);
    assert_eq!(e.decision.reason.as_deref(), Some("confirming"));
}

#[tokio::test]
async fn a_restarted_observer_keeps_its_readings() {
    let mut s = Setup::new_broker().await;
    let t0 = now_ms();
    for i in 0..3 {
        s.tick(t0 + i * 1_000).await;
        evaluate(&s.store, &settings(0), t0 + i * 1_000).unwrap();
    }
    // A new process: a fresh store handle and no in-memory history.
    let reopened = Store::open(&s.path).expect("reopen");
    assert_eq!(reopened.proposal_readings().unwrap().len(), 3);
    s.store = reopened;
    s.history = None;
    s.tick(t0 + 3_000).await;
    let e = evaluate(&s.store, &settings(0), t0 + 3_000)
        .unwrap()
        .unwrap();
    assert_eq!(e.decision.readings_beyond_trigger, 4);
    assert!(e.decision.application_allowed, "{:?}", e.decision);
}

#[test]
fn nothing_is_evaluated_before_the_first_sample() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("ballast.db");
    Store::migrate(&path).unwrap();
    let store = Store::open(&path).unwrap();
    assert!(evaluate(&store, &settings(0), 1_000).unwrap().is_none());
    assert!(store.current_proposal().unwrap().is_none());
}

#[tokio::test]
async fn while_an_operation_runs_the_decision_says_which_and_how_far_not_applicable() {
    let mut s = Setup::new_broker().await;
    let t0 = now_ms();
    for i in 0..4 {
        s.tick(t0 + i * 1_000).await;
        evaluate(&s.store, &settings(0), t0 + i * 1_000).unwrap();
    }
    let allowed = s.store.current_proposal().unwrap().expect("current");
    assert!(
        allowed.application_allowed,
        "applicable before: {:?}",
        allowed.decision
    );
    let mv = |partition: i32| ballast_schema::NewMove {
        topic: "t".into(),
        partition,
        source: vec![1, 2],
        target: vec![4, 2],
        steps: 1,
        bytes_total: 1,
        phase: 0,
    };
    let queued = s
        .store
        .queue_operation(
            &ballast_schema::NewOperation {
                kind: "bulk".into(),
                strategy: "BULK_MANUAL".into(),
                method: "POST".into(),
                user_id: None,
                requested_by: None,
                description: None,
                proposal_id: None,
                fingerprint: None,
                forced: false,
                detail: serde_json::json!({}),
                moves: vec![mv(0), mv(1), mv(2)],
            },
            None,
            t0 + 4_000,
            600_000,
        )
        .unwrap();
    let ballast_schema::Queued::Started { id, .. } = queued else {
        panic!("queued: {queued:?}")
    };
    s.tick(t0 + 5_000).await;
    let e = evaluate(&s.store, &settings(0), t0 + 5_000)
        .unwrap()
        .expect("a proposal");
    assert!(!e.decision.application_allowed, "{:?}", e.decision);
    assert_eq!(e.decision.reason.as_deref(), Some("operation_in_progress"));
    assert!(
        e.decision.next_action.contains(&id) && e.decision.next_action.contains("0 of 3 moves"),
        "{}",
        e.decision.next_action
    );
    let current = s.store.current_proposal().unwrap().expect("current");
    assert!(!current.application_allowed);
    assert_eq!(current.decision["reason"], "operation_in_progress");
}
