//! Invariants of every plan, on random clusters.

mod common;

use std::collections::BTreeSet;

use ballast_balancer::{apply_plan, plan, Plan, Policy};
use ballast_model::snapshot::{Snapshot, SnapshotBroker, SnapshotPartition, SNAPSHOT_FORMAT};
use ballast_model::BrokerState;
use common::{NOW, NOW_MS};
use proptest::prelude::*;

/// A random cluster: brokers (some in maintenance, some down: the repair path), racks, topics with
/// random placement, sizes, rates and some recently moved partitions.
fn cluster() -> impl Strategy<Value = Snapshot> {
    (3usize..9, 0usize..4, 1usize..5, any::<u64>()).prop_map(|(brokers, racks, topics, seed)| {
        let mut rng = seed | 1;
        let mut next = move |n: u64| {
            rng ^= rng << 13;
            rng ^= rng >> 7;
            rng ^= rng << 17;
            rng % n.max(1)
        };
        let brokers_v: Vec<SnapshotBroker> = (1..=brokers as i32)
            .map(|id| SnapshotBroker {
                id,
                rack: (racks > 0).then(|| format!("r{}", (id - 1) as usize % racks)),
                state: match next(12) {
                    0 => BrokerState::Maintenance,
                    1 => BrokerState::Down,
                    _ => BrokerState::Alive,
                },
            })
            .collect();
        let mut partitions = Vec::new();
        for t in 0..topics {
            let count = 1 + next(24) as i32;
            let rf = 1 + next(3.min(brokers as u64)) as usize;
            let hot = next(3) == 0;
            for p in 0..count {
                let mut replicas: Vec<i32> = Vec::new();
                while replicas.len() < rf {
                    // Skewed placement: low broker ids more likely.
                    let b = 1 + next(
                        if hot { 2 } else { brokers as u64 }
                            .max(rf as u64 + 1)
                            .min(brokers as u64),
                    ) as i32;
                    if !replicas.contains(&b) {
                        replicas.push(b);
                    }
                }
                let leader = replicas[next(replicas.len() as u64) as usize];
                let msg = next(2000) as f64;
                partitions.push(SnapshotPartition {
                    topic: format!("topic-{t}"),
                    partition: p,
                    leader: Some(leader),
                    isr: None,
                    replicas,
                    size_bytes: (1 + next(5000)) * 1_000_000,
                    compacted: false,
                    min_insync_replicas: 1,
                    producer_msg_rate: msg,
                    producer_byte_rate: msg * (100 + next(2000)) as f64,
                    consumer_msg_rate: msg * next(3) as f64,
                    consumer_byte_rate: msg * 500.0,
                    last_moved_at: (next(8) == 0).then(|| "2026-11-21T09:50:00Z".to_string()),
                });
            }
        }
        Snapshot {
            format: SNAPSHOT_FORMAT.to_string(),
            taken_at: NOW.to_string(),
            cluster_id: None,
            brokers: brokers_v,
            partitions,
        }
    })
}

fn rack_spread(s: &Snapshot, replicas: &[i32]) -> usize {
    let mut racks = BTreeSet::new();
    let mut unracked = 0;
    for r in replicas {
        match s
            .brokers
            .iter()
            .find(|b| b.id == *r)
            .and_then(|b| b.rack.clone())
        {
            Some(rack) => {
                racks.insert(rack);
            }
            None => unracked += 1,
        }
    }
    racks.len() + unracked
}

fn run(s: &Snapshot) -> Plan {
    plan(s, &Policy::default(), NOW_MS)
}

proptest! {
    // 64 cases by default; PROPTEST_CASES=5000 for a deeper run.
    #![proptest_config(ProptestConfig::with_cases(
        std::env::var("PROPTEST_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(64)
    ))]

    #[test]
    fn plans_never_break_rack_awareness(s in cluster()) {
        let p = run(&s);
        let has_racks = s.brokers.iter().any(|b| b.rack.is_some());
        for m in &p.moves {
            if has_racks {
                prop_assert!(rack_spread(&s, &m.replicas_after) >= rack_spread(&s, &m.replicas_before), "{m:?}");
            }
        }
    }

    #[test]
    fn plans_never_change_a_replication_factor(s in cluster()) {
        let p = run(&s);
        for m in &p.moves {
            prop_assert_eq!(m.replicas_after.len(), m.replicas_before.len());
            let distinct: BTreeSet<i32> = m.replicas_after.iter().copied().collect();
            prop_assert_eq!(distinct.len(), m.replicas_after.len(), "duplicate replica in {:?}", m);
            for b in m.replicas_after.iter().filter(|b| !m.replicas_before.contains(b)) {
                let broker = s.brokers.iter().find(|x| x.id == *b);
                prop_assert!(broker.is_some_and(|x| x.state == BrokerState::Alive), "added replica on broker {} that cannot take load", b);
            }
            prop_assert!(m.leader_after.is_none_or(|l| m.replicas_after.contains(&l)));
        }
    }

    #[test]
    fn plans_never_move_a_partition_in_cooldown_except_to_repair_a_down_broker(s in cluster()) {
        let p = run(&s);
        let down: BTreeSet<i32> = s.brokers.iter().filter(|b| b.state == BrokerState::Down).map(|b| b.id).collect();
        for m in &p.moves {
            let before = s.partitions.iter().find(|x| x.topic == m.topic && x.partition == m.partition);
            if before.is_some_and(|x| x.last_moved_at.is_none()) {
                continue;
            }
            // Restoring redundancy beats the cooldown: only replicas on down brokers are replaced,
            // the others stay where they are.
            prop_assert!(p.balance_hold, "moved {}-{} in cooldown while balancing", m.topic, m.partition);
            for (b, a) in m.replicas_before.iter().zip(&m.replicas_after) {
                prop_assert!(b == a || down.contains(b), "repair of {}-{} moved {} to {}", m.topic, m.partition, b, a);
            }
        }
    }

    #[test]
    fn replanning_the_planned_result_proposes_nothing_new(s in cluster()) {
        let first = run(&s);
        let after = apply_plan(&s, &first, None);
        let second = run(&after);
        prop_assert!(second.moves.is_empty(), "{} more moves after {}: {:?}", second.moves.len(), first.moves.len(), second.moves.first());
    }

    #[test]
    fn the_same_input_gives_a_byte_identical_plan(s in cluster(), rotate in 0usize..50) {
        let a = serde_json::to_string(&run(&s)).map_err(|e| TestCaseError::fail(e.to_string()))?;
        let b = serde_json::to_string(&run(&s)).map_err(|e| TestCaseError::fail(e.to_string()))?;
        prop_assert!(a == b);
        // Input order does not matter either.
        let mut shuffled = s.clone();
        let n = shuffled.partitions.len();
        shuffled.partitions.rotate_left(rotate % n.max(1));
        shuffled.brokers.reverse();
        let c = serde_json::to_string(&run(&shuffled)).map_err(|e| TestCaseError::fail(e.to_string()))?;
        prop_assert!(a == c);
    }
}

/// Brokers with a rack, by id.
fn racks_of(s: &Snapshot) -> std::collections::BTreeMap<i32, Option<String>> {
    s.brokers.iter().map(|b| (b.id, b.rack.clone())).collect()
}

/// Whether `replicas` sit on fewer racks than min(replication factor, racks of the brokers that
/// take load); never when a broker that takes load has no rack.
fn on_too_few_racks(s: &Snapshot, replicas: &[i32]) -> bool {
    let takes: Vec<&SnapshotBroker> = s.brokers.iter().filter(|b| b.state.takes_load()).collect();
    if takes.is_empty() || takes.iter().any(|b| b.rack.is_none()) {
        return false;
    }
    let racks: BTreeSet<&String> = takes.iter().filter_map(|b| b.rack.as_ref()).collect();
    let of = racks_of(s);
    let here: BTreeSet<Option<String>> = replicas
        .iter()
        .map(|r| of.get(r).cloned().flatten())
        .collect();
    here.len() < replicas.len().min(racks.len())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(
        std::env::var("PROPTEST_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(64)
    ))]

    #[test]
    fn no_partition_the_plan_moves_ends_on_too_few_racks(s in cluster()) {
        let p = run(&s);
        for m in &p.moves {
            // Under balance hold a partition in cooldown has only its lost replica replaced.
            let cooling = s
                .partitions
                .iter()
                .any(|x| x.topic == m.topic && x.partition == m.partition && x.last_moved_at.is_some());
            if m.replicas_after != m.replicas_before && !(p.balance_hold && cooling) {
                prop_assert!(!on_too_few_racks(&s, &m.replicas_after), "{m:?}");
            }
        }
    }

    #[test]
    fn every_partition_left_on_too_few_racks_is_counted_with_its_cause(s in cluster()) {
        let p = run(&s);
        let after = apply_plan(&s, &p, None);
        let left = after.partitions.iter().filter(|x| on_too_few_racks(&s, &x.replicas)).count() as u64;
        prop_assert_eq!(left, p.rack_awareness.violations_after);
        let explained: u64 = p.rack_awareness.limits.iter().map(|l| l.partitions).sum();
        prop_assert_eq!(left, explained, "{:?}", p.rack_awareness);
    }

    #[test]
    fn a_replan_of_the_result_says_the_same_about_every_load(s in cluster()) {
        // While a broker is down, repairs move partitions in cooldown: the result's cooldowns
        // are the executor's to set, so only balancing plans are compared.
        if s.brokers.iter().any(|b| b.state == BrokerState::Down) {
            return Ok(());
        }
        let first = run(&s);
        let after = apply_plan(&s, &first, None);
        let second = run(&after);
        for ((load, a), (_, b)) in first.loads.0.iter().zip(&second.loads.0) {
            prop_assert_eq!((&a.stop, &a.stop_reason), (&b.stop, &b.stop_reason), "{}", load.name());
        }
    }

    #[test]
    fn the_number_of_worker_threads_never_changes_a_plan(s in cluster()) {
        let with = |workers| {
            let mut p = plan(&s, &Policy { workers, parallel_min_chunk: 4, ..Policy::default() }, NOW_MS);
            p.search.workers = 0;
            p.search.parallel_steps = 0;
            p.search.threads_used = 0;
            serde_json::to_string(&p).unwrap_or_default()
        };
        prop_assert!(with(1) == with(3));
    }

    #[test]
    fn balancing_never_makes_topic_spread_worse(s in cluster()) {
        // Drains, repairs of down brokers and rack repairs must place replicas somewhere (a
        // rack the partition lacks may hold only brokers at the topic's cap); balancing alone
        // never adds leaders or replicas beyond a topic's caps.
        if s.brokers.iter().any(|b| b.state != BrokerState::Alive) {
            return Ok(());
        }
        let p = run(&s);
        if p.rack_awareness.repaired > 0 {
            return Ok(());
        }
        let t = &p.topic_spread;
        prop_assert!(t.projected_excess_leaders <= t.excess_leaders, "{t:?}");
        prop_assert!(t.projected_excess_replicas <= t.excess_replicas, "{t:?} {:?}", p.moves);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(
        std::env::var("PROPTEST_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(64)
    ))]

    #[test]
    fn a_load_within_the_trigger_before_is_never_pushed_beyond_it(s in cluster()) {
        // Only while every broker takes load: a drain or a repair moves load that fair share
        // already spreads over the others. A rack repair adds copies wherever the missing rack
        // is, so plans that repair none.
        if s.brokers.iter().any(|b| b.state != BrokerState::Alive) {
            return Ok(());
        }
        let p = run(&s);
        if p.rack_awareness.repaired > 0 {
            return Ok(());
        }
        // Replica copies move disk, leader and follower count together: once one of them
        // triggered, the three are evened together and a lumpy one may end beyond the trigger
        // (reported as a limit).
        let placement = ["leaderCount", "followerCount", "diskBytes"];
        let coupled = p.loads.0.iter().any(|(l, x)| placement.contains(&l.name()) && x.triggered);
        for (load, x) in &p.loads.0 {
            if x.no_traffic || x.max_distance_before > 10.0 || (coupled && placement.contains(&load.name())) {
                continue;
            }
            prop_assert!(x.max_distance_after <= 10.0, "{}: {} -> {} {} {}", load.name(), x.max_distance_before, x.max_distance_after, x.stop, x.stop_reason);
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(
        std::env::var("PROPTEST_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(64)
    ))]

    #[test]
    fn a_placement_load_within_the_trigger_before_is_never_pushed_beyond_it_when_another_triggers(
        s in cluster()
    ) {
        // Disk, leader and follower count are evened together once one of them triggers; the
        // others, if within the trigger before, stay within it. (As above: every broker takes
        // load and nothing is repaired.)
        if s.brokers.iter().any(|b| b.state != BrokerState::Alive) {
            return Ok(());
        }
        let p = run(&s);
        if p.rack_awareness.repaired > 0 {
            return Ok(());
        }
        for (load, x) in &p.loads.0 {
            if x.no_traffic || x.max_distance_before > 10.0 {
                continue;
            }
            prop_assert!(x.max_distance_after <= 10.0, "{}: {} -> {} {} {}", load.name(), x.max_distance_before, x.max_distance_after, x.stop, x.stop_reason);
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(
        std::env::var("PROPTEST_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(64)
    ))]

    /// A held proposal is re-checked by assessing its moves on the newest reading: on the
    /// reading it was planned on, that says exactly what the plan said.
    #[test]
    fn a_plan_assessed_on_its_own_snapshot_reports_the_plans_own_figures(s in cluster()) {
        let policy = Policy::default();
        let p = plan(&s, &policy, NOW_MS);
        let a = ballast_balancer::assess(&s, &policy, NOW_MS, &p.moves);
        prop_assert_eq!(&a.moves, &p.moves);
        prop_assert_eq!(&a.loads, &p.loads);
        prop_assert_eq!(&a.tripped, &p.tripped);
        prop_assert_eq!(a.estimated_bytes, p.estimated_bytes);
        prop_assert_eq!(a.recommended, p.recommended, "{:?} / {:?}", a.reason_text, p.reason_text);
        prop_assert_eq!(&a.rack_awareness.violations_after, &p.rack_awareness.violations_after);
        prop_assert_eq!(a.effective_after, p.effective_after);
        prop_assert_eq!(a.evenness_after, p.evenness_after);
    }
}

/// The same moves assessed on a later reading report that reading's loads, not the first's.
#[test]
fn a_held_plan_assessed_on_a_newer_reading_reports_the_newer_readings_loads() {
    use ballast_balancer::instances::{generate, Kind, Spec};
    let s = generate(&Spec::new(Kind::HotBroker, 12, 600, 3));
    let policy = Policy::default();
    let p = plan(&s, &policy, NOW_MS);
    assert!(!p.moves.is_empty());
    // Every partition doubles in size and gains traffic.
    let mut later = s.clone();
    for q in &mut later.partitions {
        q.size_bytes *= 2;
        q.producer_msg_rate += 100.0;
        q.producer_byte_rate += 100_000.0;
    }
    let a = ballast_balancer::assess(&later, &policy, NOW_MS, &p.moves);
    let fair = |plan: &Plan, name: &str| {
        plan.loads
            .0
            .iter()
            .find(|(l, _)| l.name() == name)
            .map(|(_, s)| s.fair_share)
            .unwrap_or(f64::NAN)
    };
    assert!((fair(&a, "diskBytes") - 2.0 * fair(&p, "diskBytes")).abs() < 1.0);
    assert!(fair(&a, "producerMsgRate") > fair(&p, "producerMsgRate"));
    assert_eq!(a.estimated_bytes, 2 * p.estimated_bytes);
    let placed = |plan: &Plan| -> Vec<(String, i32, Vec<i32>, Option<i32>)> {
        plan.moves
            .iter()
            .map(|m| {
                (
                    m.topic.clone(),
                    m.partition,
                    m.replicas_after.clone(),
                    m.leader_after,
                )
            })
            .collect()
    };
    assert_eq!(placed(&a), placed(&p), "the same moves");
}

/// A generated instance ([`ballast_balancer::instances`]) of every kind at a small size, with
/// three or four racks or none, replication factor 2 or 3, any seed: the shapes the planner
/// bench measures, small enough for a debug run.
fn generated() -> impl Strategy<Value = Snapshot> {
    use ballast_balancer::instances::{generate, Kind, Spec};
    (
        0usize..4,
        6i32..15,
        20usize..60,
        1u64..10_000,
        0usize..3,
        2usize..4,
    )
        .prop_map(|(kind, brokers, per_broker, seed, racks, rf)| {
            generate(&Spec {
                rf,
                racks: [0, 3, 4][racks],
                ..Spec::new(
                    Kind::ALL[kind],
                    brokers,
                    brokers as usize * per_broker,
                    seed,
                )
            })
        })
}

/// Every load whose `stop` is `limit`, and every load that triggered and ends beyond the
/// threshold, has an entry for that load in `structuralLimits`.
fn every_limit_is_named(p: &Plan) -> Result<(), TestCaseError> {
    for (load, l) in &p.loads.0 {
        let short = l.stop == "limit"
            || (l.triggered && l.stop == "within_trigger" && l.max_distance_after > 5.0);
        if !short {
            continue;
        }
        let named = p.structural_limits.iter().any(|x| x.load == *load);
        prop_assert!(
            named,
            "{} stops {} ({}) and structuralLimits names no broker for it: {:?}",
            load.name(),
            l.stop,
            l.stop_reason,
            p.structural_limits
        );
        for x in p.structural_limits.iter().filter(|x| x.load == *load) {
            prop_assert!(x.proof.is_some(), "{x:?}");
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(
        std::env::var("PROPTEST_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(24)
    ))]

    /// `stop` `limit` says structuralLimits names the broker: it always does, and a load that
    /// triggered either ends within the threshold or is named there too (with a proof, or the
    /// search's reading of why no move helps).
    #[test]
    fn a_stop_of_limit_always_has_a_structural_limit_for_its_load(s in generated()) {
        every_limit_is_named(&run(&s))?;
    }

    #[test]
    fn a_stop_of_limit_always_has_a_structural_limit_for_its_load_on_random_clusters(
        s in cluster()
    ) {
        every_limit_is_named(&run(&s))?;
    }
}
