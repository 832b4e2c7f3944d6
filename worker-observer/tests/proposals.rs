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
        // The tests tick a second apart.
        sample_interval_ms: 1_000,
        rate_window_ms: WINDOWS.rate_window_ms,
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
        if readings == 1 {
            // The first reading has no rate yet: the rates are being measured.
            assert_eq!(e.decision.reason.as_deref(), Some("data_not_ready"));
        } else if readings < 4 {
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
    // The gap is longer than the rate window too: the rates are measured again from here.
    assert!(!e.decision.application_allowed);
    assert_eq!(e.decision.reason.as_deref(), Some("data_not_ready"));
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

/// A load status per load name, from a stored plan.
fn stops(plan: &serde_json::Value) -> Vec<(String, String, bool)> {
    plan["loads"]
        .as_object()
        .map(|loads| {
            loads
                .iter()
                .map(|(name, s)| {
                    (
                        name.clone(),
                        s["stop"].as_str().unwrap_or("").to_string(),
                        s["noTraffic"].as_bool().unwrap_or(false),
                    )
                })
                .collect()
        })
        .unwrap_or_default()
}

#[tokio::test]
async fn rates_are_unknown_until_their_window_holds_the_warm_ups_readings_and_then_a_fresh_proposal_replaces_the_held_one(
) {
    let mut s = Setup::new_broker().await;
    let t0 = now_ms();
    // Readings a second apart, a 2 s warm-up: three readings measure the rates. A 15-minute
    // hold would keep the first proposal were the rates' status not part of what it was
    // judged on.
    let settings = Settings {
        hold_ms: 900_000,
        ..settings(2_000)
    };
    let mut first_id = String::new();
    for i in 0..3 {
        let now = t0 + i * 1_000;
        s.tick(now).await;
        let e = evaluate(&s.store, &settings, now)
            .unwrap()
            .expect("a proposal");
        let current = s.store.current_proposal().unwrap().expect("current");
        let rates: Vec<_> = stops(&current.plan)
            .into_iter()
            .filter(|(name, _, _)| name.ends_with("Rate"))
            .collect();
        assert_eq!(rates.len(), 4);
        if i < 2 {
            for (name, stop, no_traffic) in &rates {
                assert_eq!(stop, "measuring", "{name} at reading {}", i + 1);
                assert!(!no_traffic, "{name}: unknown is not No traffic");
            }
            let reason = current.plan["loads"]["producerMsgRate"]["stopReason"]
                .as_str()
                .unwrap_or("");
            assert!(
                reason.contains(&format!("{} of 3 readings", i + 1)),
                "{reason}"
            );
            assert!(!e.decision.application_allowed);
            assert_eq!(e.decision.reason.as_deref(), Some("data_not_ready"));
            if i == 0 {
                first_id = current.id.clone();
            } else {
                assert_eq!(current.id, first_id, "held while nothing changed");
            }
        } else {
            for (name, stop, _) in &rates {
                assert_ne!(stop, "measuring", "{name} is measured at reading 3");
            }
            assert_ne!(
                current.id, first_id,
                "a fresh plan replaces the held one at once"
            );
            assert!(matches!(e.saved, SavedProposal::Inserted { .. }));
            assert_ne!(e.decision.reason.as_deref(), Some("data_not_ready"));
        }
    }
}

#[tokio::test]
async fn a_rechecked_proposal_shows_the_evidence_of_the_reading_it_was_last_checked_against() {
    let mut s = Setup::new_broker().await;
    let t0 = now_ms();
    let settings = Settings {
        hold_ms: 900_000,
        ..settings(0)
    };
    for i in 0..5 {
        let now = t0 + i * 1_000;
        s.tick(now).await;
        let e = evaluate(&s.store, &settings, now)
            .unwrap()
            .expect("a proposal");
        let current = s.store.current_proposal().unwrap().expect("current");
        assert_eq!(current.checked_at_ms, now);
        // What is stored is this reading's plan of the moves the proposal keeps, and its
        // detail those moves on this reading.
        // (Read back as the store reads its text.)
        let planned: serde_json::Value =
            serde_json::from_str(&serde_json::to_string(&e.plan).unwrap()).unwrap();
        assert_eq!(current.plan, planned, "reading {}", i + 1);
        let view = s.store.observed_view().unwrap().expect("view");
        let snapshot = ballast_observer::proposals::snapshot_from_view(&view, &[]);
        let expected = ballast_observer::proposals::detail(&snapshot, &e.plan);
        assert_eq!(
            current.detail["shares"],
            expected["shares"],
            "reading {}",
            i + 1
        );
    }
}
