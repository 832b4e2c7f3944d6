//! What-if simulation: one test per rule, named after it.

mod common;

use ballast_balancer::whatif::{simulate, Scenario, WhatIf, WhatIfRequest};
use ballast_balancer::Policy;
use ballast_model::snapshot::Snapshot;
use ballast_model::{BrokerId, BrokerState, CostClass};
use common::{Cluster, GIB, NOW_MS};

/// Bytes per second of the throttle used in these tests (50 MB/s).
const THROTTLE: f64 = 50e6;

fn request(json: &str) -> WhatIfRequest {
    serde_json::from_str(json).expect("request parses")
}

fn run(c: &Cluster, json: &str) -> WhatIf {
    c.snapshot.validate().expect("test snapshot is valid");
    simulate(
        &c.snapshot,
        &request(json),
        &Policy::default(),
        NOW_MS,
        THROTTLE,
    )
    .expect("valid scenario")
}

/// The field an invalid request is refused for.
fn refused(c: &Cluster, json: &str) -> String {
    match simulate(
        &c.snapshot,
        &request(json),
        &Policy::default(),
        NOW_MS,
        THROTTLE,
    ) {
        Ok(_) => panic!("{json} was accepted"),
        Err(e) => {
            assert!(!e.problem.is_empty());
            e.field
        }
    }
}

fn broker(w: &WhatIf, id: BrokerId) -> &ballast_balancer::whatif::BrokerChange {
    w.brokers
        .iter()
        .find(|b| b.broker_id == id)
        .expect("broker listed")
}

/// Index of diskBytes in the seven loads.
const DISK: usize = 2;
const LEADERS: usize = 0;
const PRODUCER_BYTES: usize = 4;

/// Three brokers on racks r1..r3, 24 partitions of 1 GiB with replication factor 2, evenly
/// placed.
fn three_brokers() -> Cluster {
    Cluster::new(3, 3)
        .topic("t", 24, GIB, |i| vec![i % 3 + 1, (i + 1) % 3 + 1])
        .rates("t", 100.0, 100_000.0)
}

/// Every broker's replicas in the final placement, rebuilt from the moves.
fn placement_after(c: &Cluster, w: &WhatIf) -> Snapshot {
    let mut s = c.snapshot.clone();
    for m in &w.moves {
        if let Some(p) = s
            .partitions
            .iter_mut()
            .find(|p| p.topic == m.topic && p.partition == m.partition)
        {
            p.replicas = m.replicas_after.clone();
            p.leader = m.leader_after;
        }
    }
    s
}

#[test]
fn adding_a_broker_makes_the_plan_move_data_onto_it_and_shows_its_loads_after() {
    let c = three_brokers();
    let w = run(&c, r#"{"scenarios": [{"type": "addBrokers", "count": 1}]}"#);
    assert_eq!(w.scenarios[0].broker_ids, vec![4]);
    let b = broker(&w, 4);
    assert_eq!(b.change, "added");
    assert_eq!(b.loads, None, "a new broker has no loads before");
    assert_eq!(b.loads_before_moves.0[DISK], 0.0);
    assert!(b.loads_after.0[DISK] > 0.0, "{:?}", b.loads_after);
    assert!(b.loads_after.0[LEADERS] > 0.0);
    assert!(w.moves.iter().any(|m| m.replicas_after.contains(&4)));
    assert!(w.moves.iter().all(|m| m.cause == "balance"));
    assert!(w.movement.bytes > 0);
    assert_eq!(
        w.movement.bytes,
        w.moves.iter().map(|m| m.bytes).sum::<u64>()
    );
    // Fair share of disk falls from 16 GiB (48 GiB on 3 brokers) to 12 GiB.
    assert_eq!(w.fair_share.before.0[DISK], 16.0 * GIB as f64);
    assert_eq!(w.fair_share.after.0[DISK], 12.0 * GIB as f64);
    let d = b.distance_after.0[DISK].expect("the new broker takes load");
    assert!(d.abs() <= 10.0, "new broker at {d}% of fair share");
    assert!(w.plan.recommended, "{:?}", w.plan.reason);
}

#[test]
fn added_brokers_are_numbered_after_the_highest_id_and_spread_over_the_emptiest_racks() {
    let c = Cluster::new(3, 2).topic("t", 6, GIB, |i| vec![i % 3 + 1]);
    // r1 holds brokers 1 and 3, r2 holds broker 2.
    let w = run(&c, r#"{"scenarios": [{"type": "addBrokers", "count": 2}]}"#);
    assert_eq!(w.scenarios[0].broker_ids, vec![4, 5]);
    assert_eq!(broker(&w, 4).rack.as_deref(), Some("r2"));
    assert_eq!(broker(&w, 5).rack.as_deref(), Some("r1"));
    let named = run(
        &c,
        r#"{"scenarios": [{"type": "addBrokers", "brokerIds": [10, 11], "rack": "r9"}]}"#,
    );
    assert_eq!(broker(&named, 11).rack.as_deref(), Some("r9"));
}

#[test]
fn a_replication_factor_increase_adds_a_replica_to_every_partition_and_counts_its_bytes() {
    let c = Cluster::new(4, 0).topic("t", 12, GIB, |i| vec![i % 4 + 1, (i + 1) % 4 + 1]);
    let w = run(
        &c,
        r#"{"scenarios": [{"type": "changeReplicationFactor", "topic": "t", "replicationFactor": 3}]}"#,
    );
    let after = placement_after(&c, &w);
    assert!(after.partitions.iter().all(|p| p.replicas.len() == 3));
    let rf_moves: Vec<_> = w
        .moves
        .iter()
        .filter(|m| m.cause == "replication-factor")
        .collect();
    assert_eq!(rf_moves.len(), 12);
    assert!(rf_moves.iter().all(|m| m.bytes >= GIB));
    assert_eq!(w.movement.replicas_added, 12 + w.movement.replicas_removed);
    assert!(w.movement.bytes >= 12 * GIB);
    // The extra replicas are spread: 36 replicas on 4 brokers, 9 each.
    for id in 1..=4 {
        let n = after
            .partitions
            .iter()
            .filter(|p| p.replicas.contains(&id))
            .count();
        assert_eq!(n, 9, "broker {id}");
    }
    // bytes / throttle
    let expected = (w.movement.bytes as f64 / THROTTLE * 100.0).round() / 100.0;
    assert_eq!(w.movement.transfer.estimated_seconds, Some(expected));
}

#[test]
fn a_replication_factor_decrease_removes_followers_and_copies_nothing() {
    let c = Cluster::new(3, 0).topic("t", 6, GIB, |i| {
        vec![i % 3 + 1, (i + 1) % 3 + 1, (i + 2) % 3 + 1]
    });
    let w = run(
        &c,
        r#"{"scenarios": [{"type": "changeReplicationFactor", "topic": "t", "replicationFactor": 2}]}"#,
    );
    let rf: Vec<_> = w
        .moves
        .iter()
        .filter(|m| m.cause == "replication-factor")
        .collect();
    assert_eq!(rf.len(), 6);
    for m in rf {
        assert_eq!(m.replicas_after.len(), 2);
        assert_eq!(m.leader_after, m.leader_before, "the leader stays");
        assert_eq!(m.bytes, 0);
        assert_eq!(m.cost_class, CostClass::LeaderOnly);
    }
}

#[test]
fn removing_a_broker_drains_every_replica_off_it() {
    let c = Cluster::new(4, 0)
        .topic("t", 16, GIB, |i| vec![i % 4 + 1, (i + 1) % 4 + 1])
        .rates("t", 100.0, 100_000.0);
    let w = run(
        &c,
        r#"{"scenarios": [{"type": "removeBrokers", "brokerIds": [4]}]}"#,
    );
    let after = placement_after(&c, &w);
    assert!(after.partitions.iter().all(|p| !p.replicas.contains(&4)));
    let b = broker(&w, 4);
    assert_eq!(b.change, "removed");
    assert!(!b.takes_load_after);
    assert_eq!(b.loads_after.0, [0.0; 7]);
    assert!(b.distance_after.0.iter().all(Option::is_none));
    assert!(w.moves.iter().any(|m| m.cause == "broker-removal"));
    assert!(w
        .warnings
        .iter()
        .all(|x| x.code != "removed_broker_not_drained"));
    // Fair share is the cluster's total over the brokers that stay: 16 leaders on 3.
    assert_eq!(w.fair_share.after.0[LEADERS], 16.0 / 3.0);
    // Eight partitions had a replica on broker 4: 8 GiB to copy.
    assert_eq!(w.movement.by_cause["broker-removal"].bytes, 8 * GIB);
}

#[test]
fn removing_a_broker_while_another_is_down_still_moves_its_replicas() {
    let c = Cluster::new(5, 0)
        .topic("t", 10, GIB, |i| vec![i % 5 + 1, (i + 1) % 5 + 1])
        .state(5, BrokerState::Down);
    let w = run(
        &c,
        r#"{"scenarios": [{"type": "decommissionBrokers", "brokerIds": [4]}]}"#,
    );
    let after = placement_after(&c, &w);
    assert!(after.partitions.iter().all(|p| !p.replicas.contains(&4)));
    assert!(w.plan.balance_hold);
    assert!(w.warnings.iter().any(|x| x.code == "balance_hold"));
    assert!(w.moves.iter().any(|m| m.cause == "repair"));
}

#[test]
fn scaling_traffic_scales_the_rates_of_the_topic_before_any_move() {
    let c = three_brokers().part("quiet", 0, &[1], GIB);
    let w = run(
        &c,
        r#"{"scenarios": [{"type": "scaleTraffic", "topic": "t", "factor": 3, "sizeFactor": 2}]}"#,
    );
    for b in &w.brokers {
        let before = b.loads.as_ref().expect("existing broker").0;
        assert_eq!(
            b.loads_before_moves.0[PRODUCER_BYTES],
            3.0 * before[PRODUCER_BYTES]
        );
    }
    // Disk: t doubles (16 → 32 GiB per broker), quiet's 1 GiB on broker 1 does not.
    assert_eq!(broker(&w, 1).loads_before_moves.0[DISK], 33.0 * GIB as f64);
    assert_eq!(w.scenarios[0].partitions, Some(24));
}

#[test]
fn an_added_topic_is_spread_over_racks_and_counted_in_the_loads() {
    let c = Cluster::new(6, 3).topic("t", 6, GIB, |i| vec![i % 6 + 1]);
    let w = run(
        &c,
        r#"{"scenarios": [{"type": "addTopic", "topic": "events", "partitions": 6,
            "replicationFactor": 3, "sizeBytes": 6e9, "producerByteRate": 6e6}]}"#,
    );
    let t = &w.added_topics[0];
    assert_eq!((t.partitions, t.replication_factor), (6, 3));
    for p in &t.placement {
        let racks: std::collections::BTreeSet<i32> =
            p.replicas.iter().map(|b| (b - 1) % 3).collect();
        assert_eq!(racks.len(), 3, "{p:?}");
    }
    let produced: f64 = w
        .brokers
        .iter()
        .map(|b| b.loads_after.0[PRODUCER_BYTES])
        .sum();
    assert_eq!(produced, 6e6);
    let disk: f64 = w.brokers.iter().map(|b| b.loads_after.0[DISK]).sum();
    assert_eq!(disk, 6.0 * GIB as f64 + 18e9);
    assert!(
        w.moves.iter().all(|m| m.topic != "events"),
        "creating a topic is no move"
    );
}

#[test]
fn a_replication_factor_above_the_broker_count_is_capped_and_warned() {
    let c = Cluster::new(3, 0).topic("t", 3, GIB, |i| vec![i % 3 + 1]);
    let w = run(
        &c,
        r#"{"scenarios": [{"type": "changeReplicationFactor", "topic": "t", "replicationFactor": 5}]}"#,
    );
    assert!(w
        .warnings
        .iter()
        .any(|x| x.code == "replication_factor_above_brokers" && x.scenario == Some(0)));
    let after = placement_after(&c, &w);
    assert!(after.partitions.iter().all(|p| p.replicas.len() == 3));
}

#[test]
fn a_rack_layout_that_cannot_hold_the_replication_factor_is_warned() {
    let c = Cluster::new(4, 2).topic("t", 4, GIB, |i| vec![i % 4 + 1, (i + 1) % 4 + 1]);
    let w = run(
        &c,
        r#"{"scenarios": [{"type": "changeReplicationFactor", "topic": "t", "replicationFactor": 3}]}"#,
    );
    assert!(
        w.warnings
            .iter()
            .any(|x| x.code == "replication_factor_above_racks"),
        "{:?}",
        w.warnings
    );
}

#[test]
fn a_replication_factor_at_or_below_min_isr_is_warned() {
    let mut c = Cluster::new(3, 0).topic("t", 3, GIB, |i| {
        vec![i % 3 + 1, (i + 1) % 3 + 1, (i + 2) % 3 + 1]
    });
    for p in &mut c.snapshot.partitions {
        p.min_insync_replicas = 2;
    }
    let at = run(
        &c,
        r#"{"scenarios": [{"type": "changeReplicationFactor", "topic": "t", "replicationFactor": 2}]}"#,
    );
    assert!(at
        .warnings
        .iter()
        .any(|x| x.code == "replication_factor_at_min_isr"));
    let below = run(
        &c,
        r#"{"scenarios": [{"type": "changeReplicationFactor", "topic": "t", "replicationFactor": 1}]}"#,
    );
    assert!(below
        .warnings
        .iter()
        .any(|x| x.code == "replication_factor_below_min_isr"));
}

#[test]
fn scenarios_apply_in_order() {
    let c = three_brokers();
    let w = run(
        &c,
        r#"{"scenarios": [
            {"type": "addTopic", "topic": "n", "partitions": 3, "replicationFactor": 1, "producerByteRate": 300},
            {"type": "scaleTraffic", "topic": "n", "factor": 2}
        ]}"#,
    );
    let produced: f64 = w
        .brokers
        .iter()
        .map(|b| b.loads_after.0[PRODUCER_BYTES])
        .sum();
    // t: 24 partitions of 100 kB/s; n: 300 B/s doubled.
    assert_eq!(produced, 24.0 * 100_000.0 + 600.0);
    // The other way round the topic does not exist yet.
    let field = refused(
        &c,
        r#"{"scenarios": [
            {"type": "scaleTraffic", "topic": "n", "factor": 2},
            {"type": "addTopic", "topic": "n", "partitions": 3, "replicationFactor": 1}
        ]}"#,
    );
    assert_eq!(field, "scenarios[0].topic");
}

#[test]
fn invalid_scenarios_are_refused_naming_the_field() {
    let c = three_brokers();
    let cases = [
        (r#"{"scenarios": []}"#, "scenarios"),
        (
            r#"{"scenarios": [{"type": "changeReplicationFactor", "topic": "nope", "replicationFactor": 3}]}"#,
            "scenarios[0].topic",
        ),
        (
            r#"{"scenarios": [{"type": "changeReplicationFactor", "topic": "t", "replicationFactor": 0}]}"#,
            "scenarios[0].replicationFactor",
        ),
        (
            r#"{"scenarios": [{"type": "scaleTraffic", "factor": -1}]}"#,
            "scenarios[0].factor",
        ),
        (
            r#"{"scenarios": [{"type": "scaleTraffic", "factor": 2, "topic": "nope"}]}"#,
            "scenarios[0].topic",
        ),
        (
            r#"{"scenarios": [{"type": "removeBrokers", "brokerIds": [1, 2, 3]}]}"#,
            "scenarios[0].brokerIds",
        ),
        (
            r#"{"scenarios": [{"type": "removeBrokers", "brokerIds": [9]}]}"#,
            "scenarios[0].brokerIds[0]",
        ),
        (
            r#"{"scenarios": [{"type": "removeBrokers", "brokerIds": [1, 1]}]}"#,
            "scenarios[0].brokerIds[1]",
        ),
        (
            r#"{"scenarios": [{"type": "addBrokers", "brokerIds": [2]}]}"#,
            "scenarios[0].brokerIds[0]",
        ),
        (
            r#"{"scenarios": [{"type": "addBrokers", "brokerIds": [7, 7]}]}"#,
            "scenarios[0].brokerIds[1]",
        ),
        (
            r#"{"scenarios": [{"type": "addBrokers", "count": 2, "brokerIds": [7]}]}"#,
            "scenarios[0].count",
        ),
        (
            r#"{"scenarios": [{"type": "addBrokers", "count": 0}]}"#,
            "scenarios[0].count",
        ),
        (
            r#"{"scenarios": [{"type": "addBrokers"}]}"#,
            "scenarios[0].count",
        ),
        (
            r#"{"scenarios": [{"type": "addBrokers", "count": 1},
                              {"type": "addTopic", "topic": "t", "partitions": 1, "replicationFactor": 1}]}"#,
            "scenarios[1].topic",
        ),
        (
            r#"{"scenarios": [{"type": "addTopic", "topic": "a b", "partitions": 1, "replicationFactor": 1}]}"#,
            "scenarios[0].topic",
        ),
        (
            r#"{"scenarios": [{"type": "addTopic", "topic": "n", "partitions": 0, "replicationFactor": 1}]}"#,
            "scenarios[0].partitions",
        ),
        (
            r#"{"scenarios": [{"type": "addTopic", "topic": "n", "partitions": 1, "replicationFactor": 1, "producerByteRate": -5}]}"#,
            "scenarios[0].producerByteRate",
        ),
        (
            r#"{"scenarios": [{"type": "scaleTraffic", "factor": 2}], "limit": -1}"#,
            "limit",
        ),
    ];
    for (json, field) in cases {
        assert_eq!(refused(&c, json), field, "{json}");
    }
}

#[test]
fn the_same_request_gives_the_same_answer_whatever_the_input_order() {
    let c = three_brokers();
    let mut shuffled = c.snapshot.clone();
    shuffled.partitions.reverse();
    shuffled.brokers.reverse();
    let req = request(
        r#"{"scenarios": [{"type": "addBrokers", "count": 2},
            {"type": "changeReplicationFactor", "topic": "t", "replicationFactor": 3}]}"#,
    );
    let a = simulate(&c.snapshot, &req, &Policy::default(), NOW_MS, THROTTLE).expect("valid");
    let b = simulate(&shuffled, &req, &Policy::default(), NOW_MS, THROTTLE).expect("valid");
    assert_eq!(
        serde_json::to_string(&a).expect("json"),
        serde_json::to_string(&b).expect("json")
    );
}

#[test]
fn the_moves_list_is_bounded_by_limit_but_totals_are_not() {
    let c = three_brokers();
    let w = run(
        &c,
        r#"{"scenarios": [{"type": "changeReplicationFactor", "topic": "t", "replicationFactor": 3}], "limit": 5}"#,
    );
    assert_eq!(w.moves.len(), 5);
    assert!(w.moves_truncated);
    assert!(w.movement.moves >= 24);
}

#[test]
fn scenario_json_names_are_the_documented_ones() {
    let r = request(
        r#"{"scenarios": [{"type": "removeBrokers", "brokerIds": [1]}, {"type": "decommissionBrokers", "brokerIds": [2]}]}"#,
    );
    assert!(r
        .scenarios
        .iter()
        .enumerate()
        .all(|(i, s)| matches!(s.scenario(i), Ok(Scenario::RemoveBrokers { .. }))));
}

#[test]
fn a_broker_already_in_maintenance_is_drained_and_its_moves_say_so() {
    let c = Cluster::new(4, 0)
        .topic("t", 8, GIB, |i| vec![i % 4 + 1, (i + 1) % 4 + 1])
        .state(4, BrokerState::Maintenance);
    let w = run(
        &c,
        r#"{"scenarios": [{"type": "scaleTraffic", "factor": 1}]}"#,
    );
    assert!(
        w.moves.iter().any(|m| m.cause == "maintenance"),
        "{:?}",
        w.moves
    );
    let after = placement_after(&c, &w);
    assert!(after.partitions.iter().all(|p| !p.replicas.contains(&4)));
}

#[test]
fn added_partitions_count_in_the_leader_and_replica_loads_and_a_lower_total_is_refused() {
    let c = Cluster::new(6, 3).topic("t", 6, GIB, |i| vec![i % 6 + 1, (i + 1) % 6 + 1]);
    let w = run(
        &c,
        r#"{"scenarios": [{"type": "addPartitions", "topic": "t", "partitions": 12}]}"#,
    );
    assert_eq!(w.scenarios[0].partitions, Some(6), "{:?}", w.scenarios);
    let leaders: f64 = w.brokers.iter().map(|b| b.loads_after.0[LEADERS]).sum();
    assert_eq!(leaders, 12.0, "every new partition is led");
    let disk: f64 = w.brokers.iter().map(|b| b.loads_after.0[DISK]).sum();
    assert_eq!(disk, 12.0 * GIB as f64, "new partitions hold nothing yet");
    assert_eq!(
        refused(
            &c,
            r#"{"scenarios": [{"type": "addPartitions", "topic": "t", "partitions": 6}]}"#
        ),
        "scenarios[0].partitions"
    );
    assert_eq!(
        refused(
            &c,
            r#"{"scenarios": [{"type": "addPartitions", "topic": "nope", "partitions": 9}]}"#
        ),
        "scenarios[0].topic"
    );
}

#[test]
fn a_deleted_topic_takes_its_disk_and_leaders_off_every_broker() {
    let c = Cluster::new(3, 0)
        .topic("t", 3, GIB, |i| vec![i % 3 + 1])
        .topic("gone", 3, GIB, |i| vec![i % 3 + 1, (i + 1) % 3 + 1]);
    let w = run(
        &c,
        r#"{"scenarios": [{"type": "deleteTopic", "topic": "gone"}]}"#,
    );
    let disk: f64 = w.brokers.iter().map(|b| b.loads_after.0[DISK]).sum();
    assert_eq!(disk, 3.0 * GIB as f64);
    let leaders: f64 = w.brokers.iter().map(|b| b.loads_after.0[LEADERS]).sum();
    assert_eq!(leaders, 3.0);
    assert!(
        w.moves.iter().all(|m| m.topic != "gone"),
        "deleting is no move"
    );
}
