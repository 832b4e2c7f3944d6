//! Structural limits are reported only when proven: the constraint and the numbers that show no
//! plan can do better. Each real limit has a look-alike that a plan does balance.

mod common;

use common::{load, Cluster, GIB};

/// Rack a = {1}, rack b = {2, 3}; every partition of RF 2 has a replica in each rack.
fn racks(c: Cluster, a: &[i32]) -> Cluster {
    let mut c = c;
    for b in &mut c.snapshot.brokers {
        b.rack = Some(if a.contains(&b.id) { "a" } else { "b" }.to_string());
    }
    c
}

#[test]
fn a_rack_that_must_hold_more_than_its_brokers_fair_share_is_a_proven_limit() {
    let c = racks(
        Cluster::new(3, 0).topic("t", 12, GIB, |i| vec![1, 2 + i % 2]),
        &[1],
    );
    let p = c.plan();
    let l = p
        .structural_limits
        .iter()
        .find(|l| l.broker_id == 1 && l.load.name() == "diskBytes")
        .expect("a disk limit on broker 1");
    assert_eq!(l.cause, "rack layout");
    // 12 partitions span both racks: rack a (one broker) holds 12 GiB against fair share 8.
    let proof = l.proof.as_deref().expect("a proof");
    for words in [
        "rack a",
        "1 broker",
        "12 partitions",
        "12.00 GiB",
        "8.00 GiB",
        "50.0%",
    ] {
        assert!(proof.contains(words), "{words:?} in {proof}");
    }
    assert_eq!(l.bound, Some(50.0));
}

#[test]
fn the_same_rack_layout_with_room_in_the_rack_is_not_a_limit() {
    // Rack a = {1, 4}; broker 4 is empty: rack a must hold 12 GiB over two brokers, 6 each,
    // fair share (6 GiB): the plan moves half of broker 1's replicas to broker 4.
    let c = racks(
        Cluster::new(4, 0).topic("t", 12, GIB, |i| vec![1, 2 + i % 2]),
        &[1, 4],
    );
    let p = c.plan();
    assert!(p.structural_limits.is_empty(), "{:?}", p.structural_limits);
    assert!(load(&p, "diskBytes").max_distance_after <= 5.0);
    // Every copy goes from broker 1 to its rack-mate; leadership may change besides.
    assert!(p.moves.iter().filter(|m| m.bytes > 0).all(|m| {
        m.replicas_before.contains(&1)
            && m.replicas_after.contains(&4)
            && !m.replicas_after.contains(&1)
    }));
    assert_eq!(p.estimated_bytes, 6 * GIB);
}

#[test]
fn a_partition_larger_than_fair_share_is_a_proven_limit_with_its_size() {
    let c = Cluster::new(2, 0)
        .part("big", 0, &[1], 10 * GIB)
        .topic("small", 4, GIB / 4, |_| vec![2]);
    let p = c.plan();
    let l = p
        .structural_limits
        .iter()
        .find(|l| l.broker_id == 1 && l.load.name() == "diskBytes")
        .expect("a disk limit on broker 1");
    assert_eq!(l.cause, "large partition");
    let proof = l.proof.as_deref().expect("a proof");
    // 10 GiB against fair share 5.5 GiB: 81.8% above.
    for words in ["big/0", "10.00 GiB", "5.50 GiB", "81.8%"] {
        assert!(proof.contains(words), "{words:?} in {proof}");
    }
}

#[test]
fn a_hot_broker_that_only_looks_held_by_topic_spread_is_balanced_without_a_limit() {
    // Every count even, every broker at the topic's spread cap (4): no single move is
    // admissible, yet replica exchanges balance disk, so there is no limit to report.
    let mut c = Cluster::new(4, 0);
    for i in 0..16 {
        let broker = i / 4 + 1;
        c = c.part("t", i, &[broker], if broker == 1 { 3 * GIB } else { GIB });
    }
    let p = c.plan();
    assert!(p.structural_limits.is_empty(), "{:?}", p.structural_limits);
    assert!(load(&p, "diskBytes").max_distance_after <= 5.0);
}

#[test]
fn a_placement_limit_no_constraint_proves_is_named_with_the_searchs_reading() {
    // Broker 1 holds three 2 GiB partitions, brokers 2 and 3 one each (fair 10/3 GiB): the
    // search cannot reach 5% on every broker with these sizes, but no constraint proves that
    // no plan can. Disk triggered, so where it ends beyond the threshold structuralLimits names
    // it, with the search's reading as the proof (said as such) and no bound.
    let c = Cluster::new(3, 0)
        .topic("t", 3, 2 * GIB, |_| vec![1])
        .part("u", 0, &[2], 2 * GIB)
        .part("u", 1, &[3], 2 * GIB);
    let p = c.plan();
    let disk = load(&p, "diskBytes");
    assert!(disk.triggered);
    assert!(disk.max_distance_after > 5.0, "{disk:?}");
    let named: Vec<_> = p
        .structural_limits
        .iter()
        .filter(|l| l.load.name() == "diskBytes")
        .collect();
    assert!(!named.is_empty(), "{:?}", p.structural_limits);
    for l in named {
        let proof = l.proof.as_deref().expect("a proof or the search's reading");
        if l.bound.is_none() {
            assert!(
                proof.starts_with("the search's reading, not a proof over every plan"),
                "{proof}"
            );
        }
    }
}
