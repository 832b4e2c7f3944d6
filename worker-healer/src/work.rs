//! What each loop would do, from the observed cluster: pure functions over a `ballast.snapshot/v1`
//! and the current proposal. Placement is always the planner's: repairs are `ballast_balancer::plan`
//! under `balanceHold`, raised replication factors `placement::replication_factor` (the placement
//! of the operation `change_replication_factor`), balancing the observer's current proposal.

use ballast_moves::PlanMove;
use std::collections::{BTreeMap, BTreeSet};

use ballast_balancer::Policy;
use ballast_model::snapshot::Snapshot;
use ballast_model::{BrokerId, BrokerState};
use serde_json::Value;

use crate::decide::{Move, Work};

/// Seconds, rounded up, for messages.
fn secs(ms: i64) -> i64 {
    (ms.max(0) + 999) / 1000
}

/// The critical loop's work: the replicas of brokers down (and not in maintenance) for at least
/// `grace_ms`, re-created elsewhere by the planner's repair pass. Brokers down for less are left
/// alone (neither repaired nor used as targets). `down_since` holds when each down broker was
/// last seen; a broker missing there counts as down since `first_sampled_at_ms`.
pub fn critical(
    snapshot: &Snapshot,
    down_since: &BTreeMap<BrokerId, i64>,
    first_sampled_at_ms: i64,
    grace_ms: i64,
    policy: &Policy,
    now_ms: i64,
) -> Work {
    let down: Vec<(BrokerId, i64)> = snapshot
        .brokers
        .iter()
        .filter(|b| b.state == BrokerState::Down)
        .map(|b| {
            let since = down_since
                .get(&b.id)
                .copied()
                .unwrap_or(first_sampled_at_ms);
            (b.id, now_ms - since)
        })
        .collect();
    if down.is_empty() {
        // Nothing to re-create: repair the rack spread where the racks allow it.
        return rack_violations(snapshot);
    }
    let expired: BTreeSet<BrokerId> = down
        .iter()
        .filter(|(_, for_ms)| *for_ms >= grace_ms)
        .map(|(b, _)| *b)
        .collect();
    if expired.is_empty() {
        let text: Vec<String> = down
            .iter()
            .map(|(b, for_ms)| {
                format!(
                    "broker {b} down for {} s of the {} s grace",
                    secs(*for_ms),
                    secs(grace_ms)
                )
            })
            .collect();
        return Work::Nothing(text.join("; "));
    }
    // Brokers still within their grace take no part: not repaired, not a target.
    let mut planned = snapshot.clone();
    for b in &mut planned.brokers {
        if b.state == BrokerState::Down && !expired.contains(&b.id) {
            b.state = BrokerState::Maintenance;
        }
    }
    let plan = ballast_balancer::plan(&planned, policy, now_ms);
    let moves: Vec<Move> = plan
        .moves
        .iter()
        .map(|m| Move {
            topic: m.topic.clone(),
            partition: m.partition,
            replicas_before: m.replicas_before.clone(),
            replicas_after: m.replicas_after.clone(),
            bytes: m.bytes,
        })
        .collect();
    if moves.is_empty() {
        let lost = snapshot
            .partitions
            .iter()
            .filter(|p| p.replicas.iter().any(|r| expired.contains(r)))
            .count();
        return Work::Nothing(if lost == 0 {
            format!("no replica is left on down broker(s) {expired:?}")
        } else {
            format!(
                "{lost} partition(s) keep replicas on down broker(s) {expired:?} and no placement can repair them (offline, or no broker can take them)"
            )
        });
    }
    Work::Moves(moves)
}

/// The critical loop's rack repairs, while no broker is down: every led partition whose replicas
/// span fewer racks than min(its replication factor, the racks of brokers that take load) moves
/// one replica off a rack holding two of them (the last such replica, never the preferred leader)
/// onto a rack it lacks, placed as raised replication factors are
/// (`whatif::with_replication_factors`: a rack the partition does not use, then the broker with
/// the fewest replicas of the topic, of the cluster, the least disk). Needs a complete rack layout;
/// a partition no broker on a missing rack can take is left as it is.
pub fn rack_violations(snapshot: &Snapshot) -> Work {
    let rack: BTreeMap<BrokerId, Option<&str>> = snapshot
        .brokers
        .iter()
        .map(|b| (b.id, b.rack.as_deref()))
        .collect();
    let takes_load: Vec<_> = snapshot
        .brokers
        .iter()
        .filter(|b| b.state.takes_load())
        .collect();
    if takes_load.iter().any(|b| b.rack.is_none()) {
        return Work::Nothing(
            "no rack violation to repair: the rack layout is not complete".into(),
        );
    }
    let racks: BTreeSet<&str> = takes_load
        .iter()
        .filter_map(|b| b.rack.as_deref())
        .collect();
    if racks.len() < 2 {
        return Work::Nothing("no rack violation to repair: fewer than two racks".into());
    }
    let alive = |b: &BrokerId| {
        snapshot
            .brokers
            .iter()
            .any(|x| x.id == *b && x.state != BrokerState::Down)
    };
    // A topic whose partitions differ in replication factor is left alone: raising one partition
    // back would change the others.
    let mut factors: BTreeMap<&str, BTreeSet<usize>> = BTreeMap::new();
    for p in &snapshot.partitions {
        factors
            .entry(p.topic.as_str())
            .or_default()
            .insert(p.replicas.len());
    }
    let mut trimmed = snapshot.clone();
    let mut violating: BTreeMap<(String, i32), usize> = BTreeMap::new();
    let mut targets: BTreeMap<String, usize> = BTreeMap::new();
    for (i, p) in snapshot.partitions.iter().enumerate() {
        if p.leader.is_none()
            || !p.replicas.iter().all(alive)
            || factors.get(p.topic.as_str()).is_none_or(|f| f.len() != 1)
        {
            continue;
        }
        let on: Vec<Option<&str>> = p
            .replicas
            .iter()
            .map(|r| rack.get(r).copied().flatten())
            .collect();
        let distinct: BTreeSet<&str> = on.iter().flatten().copied().collect();
        if distinct.len() >= p.replicas.len().min(racks.len()) {
            continue;
        }
        let shared = |r: Option<&str>| on.iter().filter(|x| **x == r).count() > 1;
        let Some(victim) = (1..p.replicas.len()).rev().find(|j| shared(on[*j])) else {
            continue;
        };
        let t = &mut trimmed.partitions[i];
        let gone = t.replicas.remove(victim);
        if let Some(isr) = t.isr.as_mut() {
            isr.retain(|r| *r != gone);
        }
        violating.insert((p.topic.clone(), p.partition), distinct.len());
        targets.insert(p.topic.clone(), p.replicas.len());
    }
    if violating.is_empty() {
        return Work::Nothing(
            "no broker is down and every partition spans the racks it can".into(),
        );
    }
    let after = ballast_balancer::whatif::with_replication_factors(&trimmed, &targets);
    let mut moves = Vec::new();
    for p in &after.partitions {
        let Some(before_racks) = violating.get(&(p.topic.clone(), p.partition)) else {
            continue;
        };
        let Some(b) = snapshot
            .partitions
            .iter()
            .find(|b| b.topic == p.topic && b.partition == p.partition)
        else {
            continue;
        };
        let now: BTreeSet<&str> = p
            .replicas
            .iter()
            .filter_map(|r| rack.get(r).copied().flatten())
            .collect();
        if p.replicas.len() != b.replicas.len() || now.len() <= *before_racks {
            continue;
        }
        moves.push(Move {
            topic: p.topic.clone(),
            partition: p.partition,
            replicas_before: b.replicas.clone(),
            replicas_after: p.replicas.clone(),
            bytes: b.size_bytes,
        });
    }
    if moves.is_empty() {
        return Work::Nothing(format!(
            "{} partition(s) span too few racks and no broker on a missing rack can take them",
            violating.len()
        ));
    }
    Work::Moves(moves)
}

/// The replication-factor loop's work: every partition of a topic below its target (`target_rf`
/// of the topic, capped by the brokers that take load; internal topics only by an explicit rule
/// in `explicit`) gets replicas added, placed as the operation `change_replication_factor`
/// places them (`ballast_balancer::placement::replication_factor`: a rack the partition lacks,
/// at most one beyond the topic's even share, no broker pushed beyond `trigger_pct`, then the
/// fewest), topic after topic on the placement the earlier ones leave. Only partitions below
/// the target grow (none is lowered); offline partitions are left alone.
pub fn replication_factor(
    snapshot: &Snapshot,
    internal: &BTreeSet<String>,
    target_rf: impl Fn(&str) -> u32,
    explicit: impl Fn(&str) -> bool,
    trigger_pct: f64,
) -> Work {
    let eligible = snapshot
        .brokers
        .iter()
        .filter(|b| b.state.takes_load())
        .count();
    let mut lowest: BTreeMap<&str, usize> = BTreeMap::new();
    for p in &snapshot.partitions {
        let e = lowest.entry(p.topic.as_str()).or_insert(usize::MAX);
        *e = (*e).min(p.replicas.len());
    }
    let targets: BTreeMap<String, usize> = lowest
        .iter()
        .filter(|(t, _)| !internal.contains(**t) || explicit(t))
        .filter_map(|(t, rf)| {
            let want = (target_rf(t) as usize).min(eligible);
            (want > *rf).then(|| (t.to_string(), want))
        })
        .collect();
    if targets.is_empty() {
        return Work::Nothing(
            "every topic is at its target replication factor (or as many brokers as take load)"
                .into(),
        );
    }
    let sizes: BTreeMap<(&str, i32), u64> = snapshot
        .partitions
        .iter()
        .map(|p| ((p.topic.as_str(), p.partition), p.size_bytes))
        .collect();
    let mut working = snapshot.clone();
    let mut moves = Vec::new();
    for (topic, want) in &targets {
        let below: BTreeSet<i32> = working
            .partitions
            .iter()
            .filter(|p| &p.topic == topic && p.replicas.len() < *want && p.leader.is_some())
            .map(|p| p.partition)
            .collect();
        if below.is_empty() {
            continue;
        }
        let Ok(changed) = ballast_balancer::placement::replication_factor(
            &working,
            topic,
            Some(&below),
            *want,
            trigger_pct,
        ) else {
            continue;
        };
        for c in changed {
            let grows =
                c.after.len() > c.before.len() && c.before.iter().all(|r| c.after.contains(r));
            if !grows {
                continue;
            }
            if let Some(p) = working
                .partitions
                .iter_mut()
                .find(|p| &p.topic == topic && p.partition == c.partition)
            {
                p.replicas = c.after.clone();
            }
            let added = (c.after.len() - c.before.len()) as u64;
            let size = sizes
                .get(&(topic.as_str(), c.partition))
                .copied()
                .unwrap_or(0);
            moves.push(Move {
                topic: topic.clone(),
                partition: c.partition,
                replicas_before: c.before,
                replicas_after: c.after,
                bytes: size.saturating_mul(added),
            });
        }
    }
    if moves.is_empty() {
        return Work::Nothing("no partition below its target can take a replica".into());
    }
    Work::Moves(moves)
}

/// The current proposal as the activity loop reads it.
#[derive(Debug, Clone)]
pub struct Proposal {
    pub id: String,
    pub checked_at_ms: i64,
    pub balance_hold: bool,
    pub application_allowed: bool,
    /// The stored `ballast.plan/v1`.
    pub plan: Value,
    /// The stored decision.
    pub decision: Value,
}

/// The activity loop's work: the current proposal's moves when its decision allows applying it
/// (checked within `freshness_ms`, not while balancing is held, not when unsafe).
pub fn activity(proposal: Option<&Proposal>, freshness_ms: i64, now_ms: i64) -> Work {
    let Some(p) = proposal else {
        return Work::NotReady("the observer has not evaluated a proposal yet".into());
    };
    if now_ms - p.checked_at_ms > freshness_ms {
        return Work::NotReady(format!(
            "the current proposal {} was last checked {} s ago (fresh within {} s)",
            p.id,
            secs(now_ms - p.checked_at_ms),
            secs(freshness_ms)
        ));
    }
    if p.balance_hold {
        return Work::Nothing(
            "balancing is paused while a broker is down (balanceHold): only repairs".into(),
        );
    }
    let next = p.decision["nextAction"].as_str().unwrap_or("").to_string();
    let unsafe_reasons: Vec<&str> = p.decision["unsafeReasons"]
        .as_array()
        .map(|a| a.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    if !unsafe_reasons.is_empty() {
        return Work::Nothing(format!(
            "the proposal is unsafe ({}): self-healing skips it",
            unsafe_reasons.join(", ")
        ));
    }
    match p.decision["reason"].as_str() {
        Some("warming_up") | Some("confirming") if !p.application_allowed => {
            return Work::NotReady(next)
        }
        Some("benefit_unconfirmed") if !p.application_allowed => return Work::Unconfirmed(next),
        _ => {}
    }
    if !p.application_allowed {
        return Work::Nothing(next);
    }
    let moves: Vec<PlanMove> = p
        .plan
        .get("moves")
        .cloned()
        .and_then(|m| serde_json::from_value(m).ok())
        .unwrap_or_default();
    if moves.is_empty() {
        return Work::Nothing(format!("proposal {} has no moves", p.id));
    }
    Work::Moves(
        moves
            .into_iter()
            .map(|m| Move {
                topic: m.topic,
                partition: m.partition,
                replicas_before: m.replicas_before,
                replicas_after: m.replicas_after,
                bytes: m.bytes,
            })
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use ballast_model::snapshot::{SnapshotBroker, SnapshotPartition, SNAPSHOT_FORMAT};
    use serde_json::json;

    fn part(topic: &str, p: i32, replicas: &[BrokerId], down: &[BrokerId]) -> SnapshotPartition {
        let isr: Vec<BrokerId> = replicas
            .iter()
            .copied()
            .filter(|r| !down.contains(r))
            .collect();
        SnapshotPartition {
            topic: topic.into(),
            partition: p,
            replicas: replicas.to_vec(),
            leader: isr.first().copied(),
            isr: Some(isr),
            size_bytes: 1_000_000,
            compacted: false,
            min_insync_replicas: 1,
            producer_msg_rate: 0.0,
            producer_byte_rate: 0.0,
            consumer_msg_rate: 0.0,
            consumer_byte_rate: 0.0,
            last_moved_at: None,
        }
    }

    /// Four brokers on racks a, b, c, c; broker 2 down; topic `t` RF 2, topic `one` RF 1.
    fn cluster() -> Snapshot {
        let down = [2];
        Snapshot {
            format: SNAPSHOT_FORMAT.into(),
            taken_at: "2026-01-01T00:00:00Z".into(),
            cluster_id: None,
            brokers: [(1, "a"), (2, "b"), (3, "c"), (4, "c")]
                .into_iter()
                .map(|(id, r)| SnapshotBroker {
                    id,
                    rack: Some(r.into()),
                    state: if down.contains(&id) {
                        BrokerState::Down
                    } else {
                        BrokerState::Alive
                    },
                })
                .collect(),
            partitions: vec![
                part("t", 0, &[1, 2], &down),
                part("t", 1, &[2, 3], &down),
                part("t", 2, &[3, 4], &down),
                part("one", 0, &[1], &down),
            ],
        }
    }

    const GRACE: i64 = 600_000;

    #[test]
    fn a_broker_down_within_the_grace_period_is_not_repaired() {
        let w = critical(
            &cluster(),
            &BTreeMap::from([(2, 1_000)]),
            0,
            GRACE,
            &Policy::default(),
            1_000 + GRACE - 1,
        );
        assert!(
            matches!(w, Work::Nothing(ref t) if t.contains("grace")),
            "{w:?}"
        );
    }

    #[test]
    fn a_broker_down_longer_than_the_grace_period_has_its_replicas_recreated_on_live_brokers() {
        let w = critical(
            &cluster(),
            &BTreeMap::from([(2, 1_000)]),
            0,
            GRACE,
            &Policy::default(),
            1_000 + GRACE,
        );
        let Work::Moves(moves) = w else {
            panic!("{w:?}")
        };
        let moved: BTreeSet<(String, i32)> = moves
            .iter()
            .map(|m| (m.topic.clone(), m.partition))
            .collect();
        assert_eq!(
            moved,
            BTreeSet::from([("t".to_string(), 0), ("t".to_string(), 1)])
        );
        for m in &moves {
            assert!(!m.replicas_after.contains(&2), "{m:?}");
            assert_eq!(m.replicas_after.len(), 2, "{m:?}");
        }
    }

    #[test]
    fn a_broker_still_within_its_grace_is_neither_repaired_nor_a_target() {
        let mut snap = cluster();
        snap.brokers[2].state = BrokerState::Down; // broker 3 too, but only just
        let w = critical(
            &snap,
            &BTreeMap::from([(2, 0), (3, GRACE)]),
            0,
            GRACE,
            &Policy::default(),
            GRACE + 1,
        );
        let Work::Moves(moves) = w else {
            panic!("{w:?}")
        };
        for m in &moves {
            assert!(
                m.replicas_before.contains(&2),
                "only broker 2's replicas: {m:?}"
            );
            let added: Vec<_> = m
                .replicas_after
                .iter()
                .filter(|r| !m.replicas_before.contains(r))
                .collect();
            assert!(!m.replicas_after.contains(&2), "{m:?}");
            assert!(!added.contains(&&3), "nothing placed on broker 3: {m:?}");
        }
    }

    #[test]
    fn with_no_broker_down_a_partition_on_too_few_racks_moves_a_follower_to_a_rack_it_lacks() {
        let mut snap = cluster();
        snap.brokers[1].state = BrokerState::Alive;
        // t-2 is on brokers 3 and 4, both rack c; t-0 and t-1 span two racks already.
        for p in &mut snap.partitions {
            p.isr = Some(p.replicas.clone());
            p.leader = p.replicas.first().copied();
        }
        let Work::Moves(moves) = critical(&snap, &BTreeMap::new(), 0, GRACE, &Policy::default(), 1)
        else {
            panic!("a rack repair")
        };
        assert_eq!(moves.len(), 1, "{moves:?}");
        let m = &moves[0];
        assert_eq!((m.topic.as_str(), m.partition), ("t", 2));
        assert_eq!(m.replicas_after[0], 3, "the preferred leader stays");
        assert!(
            m.replicas_after[1] == 1 || m.replicas_after[1] == 2,
            "the follower on rack c goes to rack a or b: {m:?}"
        );

        // Where racks do not allow it (every other broker down or without room), nothing moves.
        let mut one_rack = snap.clone();
        for b in &mut one_rack.brokers {
            b.rack = Some("c".into());
        }
        assert!(matches!(
            rack_violations(&one_rack),
            Work::Nothing(ref t) if t.contains("fewer than two racks")
        ));
        // A partial layout is not judged.
        let mut partial = snap.clone();
        partial.brokers[0].rack = None;
        assert!(matches!(rack_violations(&partial), Work::Nothing(_)));
    }

    #[test]
    fn the_loop_places_replicas_exactly_as_the_replication_factor_operation_does() {
        let mut snap = cluster();
        snap.brokers[1].state = BrokerState::Alive;
        for p in &mut snap.partitions {
            p.isr = Some(p.replicas.clone());
            p.leader = p.replicas.first().copied();
        }
        let Work::Moves(moves) =
            replication_factor(&snap, &BTreeSet::new(), |_| 2, |_| false, 10.0)
        else {
            panic!("no moves")
        };
        let topics: BTreeSet<&str> = moves.iter().map(|m| m.topic.as_str()).collect();
        let mut working = snap.clone();
        let mut expected = Vec::new();
        for t in topics {
            let below: BTreeSet<i32> = working
                .partitions
                .iter()
                .filter(|p| p.topic == t && p.replicas.len() < 2)
                .map(|p| p.partition)
                .collect();
            let changed =
                ballast_balancer::placement::replication_factor(&working, t, Some(&below), 2, 10.0)
                    .expect("placed");
            for c in changed {
                if let Some(p) = working
                    .partitions
                    .iter_mut()
                    .find(|p| p.topic == t && p.partition == c.partition)
                {
                    p.replicas = c.after.clone();
                }
                expected.push((t.to_string(), c.partition, c.before, c.after));
            }
        }
        let got: Vec<_> = moves
            .iter()
            .map(|m| {
                (
                    m.topic.clone(),
                    m.partition,
                    m.replicas_before.clone(),
                    m.replicas_after.clone(),
                )
            })
            .collect();
        assert_eq!(got, expected);
    }

    #[test]
    fn topics_below_their_target_are_raised_on_racks_they_lack_and_internal_ones_only_by_rule() {
        let mut snap = cluster();
        snap.brokers[1].state = BrokerState::Alive;
        for p in &mut snap.partitions {
            p.isr = Some(p.replicas.clone());
            p.leader = p.replicas.first().copied();
        }
        snap.partitions
            .push(part("__consumer_offsets", 0, &[1], &[]));
        let internal = BTreeSet::from(["__consumer_offsets".to_string()]);
        let w = replication_factor(&snap, &internal, |_| 2, |_| false, 10.0);
        let Work::Moves(moves) = w else {
            panic!("{w:?}")
        };
        assert_eq!(moves.len(), 1, "{moves:?}");
        assert_eq!(moves[0].topic, "one");
        assert_eq!(moves[0].replicas_before, vec![1]);
        assert_eq!(moves[0].replicas_after.len(), 2);
        assert_eq!(moves[0].replicas_after[0], 1, "the leader stays");
        assert_ne!(moves[0].replicas_after[1], 1);
        assert_eq!(moves[0].bytes, 1_000_000);
        // A rule naming the internal topic raises it too; a target above the brokers is capped.
        let w = replication_factor(&snap, &internal, |_| 9, |t| t.starts_with("__"), 10.0);
        let Work::Moves(moves) = w else {
            panic!("{w:?}")
        };
        assert!(
            moves.iter().all(|m| m.replicas_after.len() == 4),
            "{moves:?}"
        );
        assert!(moves.iter().any(|m| m.topic == "__consumer_offsets"));
        // At target: nothing.
        let w = replication_factor(&snap, &internal, |_| 1, |_| false, 10.0);
        assert!(matches!(w, Work::Nothing(_)));
    }

    fn proposal(decision: Value, allowed: bool) -> Proposal {
        Proposal {
            id: "p-1".into(),
            checked_at_ms: 1_000,
            balance_hold: false,
            application_allowed: allowed,
            plan: json!({"moves": [{"topic": "t", "partition": 0, "replicasBefore": [1, 2],
                "replicasAfter": [3, 2], "bytes": 5}]}),
            decision,
        }
    }

    #[test]
    fn the_activity_loop_takes_the_proposal_only_when_its_decision_allows_it() {
        let ok = proposal(
            json!({"applicationAllowed": true, "unsafeReasons": []}),
            true,
        );
        assert!(matches!(activity(Some(&ok), 120_000, 2_000), Work::Moves(ref m) if m.len() == 1));
        assert!(matches!(activity(None, 120_000, 2_000), Work::NotReady(_)));
        assert!(matches!(
            activity(Some(&ok), 120_000, 1_000 + 120_001),
            Work::NotReady(_)
        ));
        let warming = proposal(json!({"reason": "warming_up", "unsafeReasons": []}), false);
        assert!(matches!(
            activity(Some(&warming), 120_000, 2_000),
            Work::NotReady(_)
        ));
        let confirming = proposal(json!({"reason": "confirming", "unsafeReasons": []}), false);
        assert!(matches!(
            activity(Some(&confirming), 120_000, 2_000),
            Work::NotReady(_)
        ));
        let unconfirmed = proposal(
            json!({"reason": "benefit_unconfirmed", "unsafeReasons": []}),
            false,
        );
        assert!(matches!(
            activity(Some(&unconfirmed), 120_000, 2_000),
            Work::Unconfirmed(_)
        ));
        let balanced = proposal(
            json!({"reason": "not_recommended", "unsafeReasons": []}),
            false,
        );
        assert!(matches!(
            activity(Some(&balanced), 120_000, 2_000),
            Work::Nothing(_)
        ));
        let mut held = ok.clone();
        held.balance_hold = true;
        assert!(
            matches!(activity(Some(&held), 120_000, 2_000), Work::Nothing(ref t) if t.contains("balanceHold"))
        );
    }

    #[test]
    fn proposals_marked_unsafe_throttles_externally_managed_are_skipped() {
        let p = proposal(
            json!({"reason": "throttles_externally_managed",
                   "unsafeReasons": ["throttles_externally_managed"]}),
            false,
        );
        assert!(
            matches!(activity(Some(&p), 120_000, 2_000), Work::Nothing(ref t) if t.contains("throttles_externally_managed"))
        );
    }
}
