//! A simulated day, time injected: the healer's pure core (`work` + `decide`) drives the
//! simulated cluster's synchronous model minute by minute. Load drifts, a broker fails at 03:00
//! and returns at 09:00, the healing window (20:00 to 06:00 UTC) opens and closes across midnight.
//! Applies are submitted to the model as the executor would. At no point do two loops act at
//! once, nothing is applied outside the window, and the day ends balanced and fully replicated.

use std::collections::{BTreeMap, BTreeSet};

use ballast_balancer::{decide as decide_plan, plan, Context, Policy, Reading};
use ballast_config::{HealWindow, TimeOfDay};
use ballast_healer::decide::{decide, in_window, Loop, LoopInput, Outcome, State, Work};
use ballast_healer::work;
use ballast_model::snapshot::Snapshot;
use ballast_simcluster::scenario::{export, generate, load};
use ballast_simcluster::state::Cluster;
use ballast_simcluster::GenerateParams;

const MIN: i64 = 60_000;
const HOUR: i64 = 60 * MIN;
/// 2026-01-01T00:00:00Z
const DAY: i64 = 1_767_225_600_000;
const GRACE: i64 = 10 * MIN;
const HEAL_COOLDOWN: i64 = 30 * MIN;
const MOVE_COOLDOWN: i64 = 30 * MIN;

fn in_flight(c: &Cluster) -> usize {
    c.topics
        .values()
        .flat_map(|t| &t.partitions)
        .filter(|p| p.reassignment().is_some())
        .count()
}

/// Partitions not fully in sync, or with a replica on a broker that is down.
fn under_replicated(snap: &Snapshot) -> usize {
    let down: BTreeSet<i32> = snap
        .brokers
        .iter()
        .filter(|b| b.state == ballast_model::BrokerState::Down)
        .map(|b| b.id)
        .collect();
    snap.partitions
        .iter()
        .filter(|p| {
            let isr: BTreeSet<i32> = p.isr_or_replicas().iter().copied().collect();
            let replicas: BTreeSet<i32> = p.replicas.iter().copied().collect();
            isr != replicas || p.replicas.iter().any(|r| down.contains(r))
        })
        .count()
}

/// As the executor does once a move completes: the target's first replica is the preferred
/// leader, elected when it does not lead yet (a reassignment alone does not move leadership).
fn elect_finished(c: &mut Cluster, waiting: &mut BTreeSet<(String, i32)>) {
    let done: Vec<(String, i32)> = waiting
        .iter()
        .filter(|(t, p)| {
            c.topics
                .get(t)
                .and_then(|topic| topic.partitions.get(*p as usize))
                .is_none_or(|part| part.reassignment().is_none())
        })
        .cloned()
        .collect();
    for (t, p) in done {
        // A preferred replica out of the ISR stays a follower, as in Kafka.
        let _ = c.elect_preferred(&t, p);
        waiting.remove(&(t, p));
    }
}

fn drift(c: &mut Cluster, factor: f64) {
    // The first topic's traffic grows (or shrinks) by `factor`: brokers holding its leaders heat up.
    if let Some(t) = c.topics.values_mut().next() {
        for p in &mut t.partitions {
            p.rates.producer_msg *= factor;
            p.rates.producer_byte *= factor;
            p.rates.consumer_msg *= factor;
            p.rates.consumer_byte *= factor;
        }
    }
}

#[test]
fn over_a_simulated_day_no_two_loops_act_at_once_and_the_cluster_ends_balanced_and_fully_replicated(
) {
    let snapshot = generate(&GenerateParams {
        brokers: 5,
        racks: 0,
        topics: 4,
        partitions_per_topic: 10,
        replication_factor: 2,
        seed: 11,
        mean_partition_bytes: 200e6,
        mean_msg_rate: 200.0,
        msg_bytes: 1000.0,
        ..GenerateParams::default()
    });
    // One topic at replication factor 1: the replication-factor loop raises it to 2.
    let mut snapshot = snapshot;
    let rf1 = snapshot.partitions[0].topic.clone();
    for p in snapshot.partitions.iter_mut().filter(|p| p.topic == rf1) {
        p.replicas.truncate(1);
        p.isr = None;
        p.leader = p.replicas.first().copied();
    }
    let mut c = load(&snapshot, DAY, 50e6).expect("load");
    let window = HealWindow {
        start: TimeOfDay {
            hour: 20,
            minute: 0,
        },
        end: TimeOfDay { hour: 6, minute: 0 },
    };
    let policy = Policy {
        cooldown_ms: MOVE_COOLDOWN,
        ..Policy::default()
    };
    let mut readings: Vec<Reading> = Vec::new();
    let mut last_applied: BTreeMap<Loop, i64> = BTreeMap::new();
    let mut moved_at: BTreeMap<(String, i32), i64> = BTreeMap::new();
    let mut down_since: BTreeMap<i32, i64> = BTreeMap::new();
    // The loop whose moves are in flight, if any.
    let mut acting: Option<Loop> = None;
    let mut applies: Vec<(i64, Loop, usize)> = Vec::new();
    let mut to_elect: BTreeSet<(String, i32)> = BTreeSet::new();
    let failed = 3;

    let mut now = DAY;
    while now < DAY + 24 * HOUR + 6 * HOUR {
        c.advance(now);
        elect_finished(&mut c, &mut to_elect);
        // The scenario.
        match now - DAY {
            t if t == 3 * HOUR => {
                c.stop_broker(failed, now);
                down_since.insert(failed, now);
            }
            t if t == 9 * HOUR => {
                c.start_broker(failed, now);
                down_since.remove(&failed);
            }
            t if t == 12 * HOUR => drift(&mut c, 4.0),
            t if t == 16 * HOUR => drift(&mut c, 0.5),
            _ => {}
        }
        let moving = in_flight(&c);
        if moving == 0 {
            acting = None;
        }
        let snap = export(&c);
        // The observer's proposal: plan, reading, decision (warm-up done, a reading a minute).
        let planned = plan(&snap, &policy, now);
        readings.push(Reading::of(&planned, now));
        let decision = decide_plan(
            &planned,
            &Context {
                readings: &readings,
                started_at_ms: DAY - HOUR,
                warmup_ms: 0,
                max_gap_ms: 3 * MIN,
                now_ms: now,
                throttles_managed: true,
            },
        );
        let proposal = work::Proposal {
            id: format!("p-{now}"),
            checked_at_ms: now,
            balance_hold: planned.balance_hold,
            application_allowed: decision.application_allowed,
            plan: serde_json::to_value(&planned).expect("plan"),
            decision: serde_json::to_value(&decision).expect("decision"),
        };
        let cooling: BTreeSet<(String, i32)> = moved_at
            .iter()
            .filter(|(_, at)| now - **at < MOVE_COOLDOWN)
            .map(|(k, _)| k.clone())
            .collect();
        let input = |l: Loop, work: Work| LoopInput {
            enabled: true,
            last_applied_ms: last_applied.get(&l).copied(),
            work,
        };
        let state = State {
            window: Some(window),
            dry_run: false,
            license_allows: true,
            cooldown_ms: HEAL_COOLDOWN,
            max_partitions: Some(20),
            active_reassignments: (moving > 0).then(|| format!("{moving} moving")),
            partitions_in_cooldown: cooling,
            broker_down: !down_since.is_empty(),
            loops: [
                input(
                    Loop::Critical,
                    work::critical(&snap, &down_since, DAY, GRACE, &policy, now),
                ),
                input(
                    Loop::ReplicationFactor,
                    work::replication_factor(&snap, &BTreeSet::new(), |_| 2, |_| false, 10.0),
                ),
                input(
                    Loop::Activity,
                    work::activity(Some(&proposal), 2 * MIN, now),
                ),
            ],
        };
        let decisions = decide(&state, now);
        let applying: Vec<_> = decisions
            .iter()
            .filter_map(|d| match &d.outcome {
                Outcome::Apply { moves } => Some((d.kind, moves.clone())),
                _ => None,
            })
            .collect();
        assert!(
            applying.len() <= 1,
            "two loops apply at once at {now}: {applying:?}"
        );
        if let Some((kind, moves)) = applying.into_iter().next() {
            assert!(
                in_window(Some(&window), now),
                "applied outside the window at {now}"
            );
            assert!(
                acting.is_none() && moving == 0,
                "{kind:?} applies while {acting:?} is still moving"
            );
            for m in &moves {
                c.reassign(&m.topic, m.partition, m.replicas_after.clone(), true, now)
                    .expect("reassign");
                moved_at.insert((m.topic.clone(), m.partition), now);
                to_elect.insert((m.topic.clone(), m.partition));
            }
            last_applied.insert(kind, now);
            applies.push((now, kind, moves.len()));
            acting = Some(kind);
        }
        now += MIN;
    }
    // Let the last moves finish.
    for _ in 0..120 {
        if in_flight(&c) == 0 {
            break;
        }
        now += MIN;
        c.advance(now);
        elect_finished(&mut c, &mut to_elect);
    }
    assert_eq!(in_flight(&c), 0);
    let end = export(&c);
    let loops: BTreeSet<Loop> = applies.iter().map(|(_, l, _)| *l).collect();
    assert!(
        loops.contains(&Loop::Critical)
            && loops.contains(&Loop::ReplicationFactor)
            && loops.contains(&Loop::Activity),
        "every loop acted: {applies:?}"
    );
    // The repair came after the grace and inside the window (03:00 + 10 min).
    let repair = applies
        .iter()
        .find(|(_, l, _)| *l == Loop::Critical)
        .expect("a repair");
    assert!(
        repair.0 >= DAY + 3 * HOUR + GRACE && repair.0 < DAY + 6 * HOUR,
        "{applies:?}"
    );
    assert_eq!(under_replicated(&end), 0, "fully replicated");
    assert!(
        end.partitions.iter().all(|p| p.replicas.len() == 2),
        "RF 2 everywhere"
    );
    let last = plan(&end, &policy, now + MOVE_COOLDOWN);
    assert!(
        !last.recommended,
        "balanced at the end: {:?} {:?}; applies {applies:?}",
        last.reason, last.tripped
    );
}
