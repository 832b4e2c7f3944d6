//! The move kinds on small hand-built clusters where the best plan is known.

mod common;

use ballast_balancer::{apply_plan, plan, Policy};
use ballast_model::CostClass;
use common::{load, Cluster, GIB, NOW_MS};

/// Four brokers, twelve partitions of RF 2 over every pair of brokers twice: six replicas each.
/// The first broker of each pair leads, so brokers 1-4 lead 6, 4, 2 and 0 (fair share 3).
fn leaders_on_few_brokers() -> Cluster {
    let pairs = [[1, 2], [1, 3], [1, 4], [2, 3], [2, 4], [3, 4]];
    Cluster::new(4, 0).topic("t", 12, GIB, |i| pairs[i as usize / 2].to_vec())
}

#[test]
fn leadership_is_evened_by_leadership_changes_alone_when_the_replica_sets_allow_it() {
    let c = leaders_on_few_brokers();
    let p = c.plan();
    assert!(p.recommended, "{:?}", p.reason_text);
    assert_eq!(load(&p, "leaderCount").max_distance_after, 0.0);
    assert_eq!(load(&p, "followerCount").max_distance_after, 0.0);
    assert!(
        p.moves
            .iter()
            .all(|m| m.cost_class == CostClass::LeaderOnly),
        "{:?}",
        p.moves
    );
    assert_eq!(p.estimated_bytes, 0);
    // Broker 1 gives 3, broker 2 gives 1: four changes is the fewest.
    assert_eq!(p.moves.len(), 4, "{:?}", p.moves);
    assert!(p
        .moves
        .iter()
        .all(|m| m.reason.contains("leadership change")));
}

#[test]
fn replica_moves_follow_only_where_leadership_cannot_reach_balance() {
    // Broker 4 holds no replica: leadership alone cannot give it leaders; the plan copies
    // replicas to it and evens leadership among the others without copies where it can.
    let c = Cluster::new(4, 0).topic("t", 12, GIB, |i| match i % 3 {
        0 => vec![1, 2],
        1 => vec![1, 3],
        _ => vec![2, 3],
    });
    let p = c.plan();
    assert!(p.recommended, "{:?}", p.reason_text);
    for name in ["leaderCount", "followerCount", "diskBytes"] {
        assert!(
            load(&p, name).max_distance_after <= 5.0,
            "{name}: {}",
            load(&p, name).max_distance_after
        );
    }
    // Fair share is 6 replicas: broker 4 receives exactly 6 copies, nothing else is copied.
    let copies: u64 = p.moves.iter().map(|m| m.bytes).sum();
    assert_eq!(copies, 6 * GIB, "{:?}", p.moves);
}

/// RF 1, four brokers with four partitions each of one topic: broker 1's are 3 GiB, the
/// others' 1 GiB. Disk is 12 against 4 (fair 6); every count is even, and the topic's spread cap
/// (4 per broker) forbids any broker a fifth partition.
fn hot_broker_with_even_counts() -> Cluster {
    let mut c = Cluster::new(4, 0);
    for i in 0..16 {
        let broker = i / 4 + 1;
        let size = if broker == 1 { 3 * GIB } else { GIB };
        c = c.part("t", i, &[broker], size);
    }
    c
}

#[test]
fn a_hot_broker_with_even_counts_is_evened_by_replica_exchanges() {
    let c = hot_broker_with_even_counts();
    let p = c.plan();
    assert!(p.recommended, "{:?}", p.reason_text);
    assert!(p.structural_limits.is_empty(), "{:?}", p.structural_limits);
    assert_eq!(load(&p, "diskBytes").max_distance_after, 0.0);
    assert_eq!(load(&p, "leaderCount").max_distance_after, 0.0);
    // The best plan: one 3 GiB partition to each other broker, one 1 GiB back from each.
    assert_eq!(p.moves.len(), 6, "{:?}", p.moves);
    assert_eq!(p.estimated_bytes, 12 * GIB);
    assert!(p.moves.iter().all(|m| m.reason.starts_with("exchange")));
}

#[test]
fn an_exchange_shows_as_its_two_moves_with_one_reason() {
    let p = hot_broker_with_even_counts().plan();
    assert!(!p.moves.is_empty());
    for m in &p.moves {
        let twins: Vec<_> = p.moves.iter().filter(|x| x.reason == m.reason).collect();
        assert_eq!(twins.len(), 2, "{}", m.reason);
        let other = twins
            .iter()
            .find(|x| x.partition != m.partition)
            .expect("the other half");
        // The two halves swap brokers.
        assert_eq!(m.replicas_before, other.replicas_after);
        assert_eq!(m.replicas_after, other.replicas_before);
        assert!(m.reason.contains("diskBytes"), "{}", m.reason);
    }
}

#[test]
fn a_single_move_cannot_help_the_hot_broker_but_a_pair_can() {
    // Capped at one partition, the exchange (two partitions) does not fit and no single move
    // is admissible: the plan moves nothing.
    let c = hot_broker_with_even_counts();
    let one = c.plan_with(&Policy {
        max_partitions: Some(1),
        ..Policy::default()
    });
    assert!(one.moves.is_empty(), "{:?}", one.moves);
    let two = c.plan_with(&Policy {
        max_partitions: Some(2),
        ..Policy::default()
    });
    assert_eq!(two.moves.len(), 2, "{:?}", two.moves);
}

#[test]
fn replanning_after_exchanges_proposes_nothing() {
    let c = hot_broker_with_even_counts();
    let first = c.plan();
    let after = apply_plan(&c.snapshot, &first, None);
    let second = plan(&after, &Policy::default(), NOW_MS);
    assert!(second.moves.is_empty(), "{:?}", second.moves);
}
