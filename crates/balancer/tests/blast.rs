//! Blast radius: one test per rule, named after it.

mod common;

use ballast_balancer::blast::{analyze, BlastRadius, BlastRequest, ConsumerGroup};
use ballast_model::BrokerState;
use common::{Cluster, GIB};

/// 100 MB/s.
const THROTTLE: f64 = 100e6;

fn request(json: &str) -> BlastRequest {
    serde_json::from_str(json).expect("request parses")
}

fn blast(c: &Cluster, groups: &[ConsumerGroup], json: &str) -> BlastRadius {
    c.snapshot.validate().expect("test snapshot is valid");
    analyze(&c.snapshot, groups, &request(json), THROTTLE).expect("valid request")
}

fn refused(c: &Cluster, json: &str) -> String {
    match analyze(&c.snapshot, &[], &request(json), THROTTLE) {
        Ok(_) => panic!("{json} was accepted"),
        Err(e) => {
            assert!(!e.problem.is_empty());
            e.field
        }
    }
}

fn set_isr(c: &mut Cluster, topic: &str, partition: i32, isr: &[i32], min_isr: i32) {
    for p in &mut c.snapshot.partitions {
        if p.topic == topic && p.partition == partition {
            p.isr = Some(isr.to_vec());
            p.min_insync_replicas = min_isr;
        }
    }
}

#[test]
fn a_broker_that_is_the_only_in_sync_replica_of_a_partition_takes_it_offline() {
    let mut c = Cluster::new(3, 0)
        .part("t", 0, &[1, 2, 3], GIB)
        .part("t", 1, &[2, 3, 1], GIB);
    // t-0: only broker 1 is in sync.
    set_isr(&mut c, "t", 0, &[1], 1);
    let b = blast(&c, &[], r#"{"brokerId": 1}"#);
    assert_eq!(b.summary.offline, 1);
    assert_eq!(b.offline.count, 1);
    let p = &b.offline.partitions[0];
    assert_eq!((p.topic.as_str(), p.partition), ("t", 0));
    assert_eq!(p.leader_after, None);
    assert_eq!(p.status_after, "offline");
    assert_eq!(p.live_replicas, vec![2, 3], "out-of-sync replicas remain");
    // Nothing to copy from: its lost replica is unavailable, not re-replicated.
    assert_eq!(b.re_replication.replicas_unavailable, 1);
    assert_eq!(b.re_replication.bytes_unavailable, GIB);
    // t-1 stays online with two in-sync replicas.
    assert_eq!(b.summary.partitions_affected, 2);
    assert_eq!(b.leadership.offline, 1);
}

#[test]
fn failover_goes_to_the_first_live_in_sync_replica_in_replica_order() {
    let mut c =
        Cluster::new(4, 0)
            .part("t", 0, &[1, 2, 3, 4], GIB)
            .part("t", 1, &[1, 4, 3, 2], GIB);
    // t-0: broker 2 is out of sync, so broker 3 (next in replica order) takes over.
    set_isr(&mut c, "t", 0, &[1, 3, 4], 1);
    let b = blast(&c, &[], r#"{"brokerId": 1}"#);
    let to: Vec<(i32, Option<i32>)> = b
        .leadership
        .changes
        .iter()
        .map(|x| (x.partition, x.to))
        .collect();
    assert_eq!(to, vec![(0, Some(3)), (1, Some(4))]);
    assert_eq!(b.leadership.lost, 2);
    assert_eq!(b.leadership.failed_over, 2);
    let gained: Vec<(i32, usize)> = b
        .leadership
        .by_broker
        .iter()
        .map(|g| (g.broker_id, g.leaders_gained))
        .collect();
    assert_eq!(gained, vec![(3, 1), (4, 1)]);
}

#[test]
fn partitions_below_and_at_min_isr_after_the_failure_are_counted_apart() {
    let mut c = Cluster::new(3, 0)
        .part("a", 0, &[1, 2], GIB)
        .part("b", 0, &[1, 2, 3], GIB)
        .part("c", 0, &[2, 3], GIB);
    set_isr(&mut c, "a", 0, &[1, 2], 2);
    set_isr(&mut c, "b", 0, &[1, 2, 3], 2);
    let b = blast(&c, &[], r#"{"brokerId": 1}"#);
    assert_eq!(b.summary.under_min_isr, 1);
    assert_eq!(b.under_min_isr.partitions[0].topic, "a");
    assert_eq!(b.summary.at_min_isr, 1);
    assert_eq!(b.at_min_isr.partitions[0].topic, "b");
    assert_eq!(b.at_min_isr.partitions[0].status_before, "healthy");
    // c has no replica on broker 1: unaffected.
    assert_eq!(b.summary.partitions_affected, 2);
}

#[test]
fn a_rack_failure_fails_every_broker_on_the_rack() {
    // Six brokers on three racks (r1: 1, 4; r2: 2, 5; r3: 3, 6), replication factor 3 over
    // three racks, min ISR 2.
    let mut c = Cluster::new(6, 3).topic("t", 6, GIB, |i| {
        vec![i % 6 + 1, (i + 1) % 6 + 1, (i + 2) % 6 + 1]
    });
    for p in &mut c.snapshot.partitions {
        p.min_insync_replicas = 2;
    }
    let b = blast(&c, &[], r#"{"rack": "r1"}"#);
    assert_eq!(b.failure.kind, "rack");
    assert_eq!(b.failure.brokers, vec![1, 4]);
    assert_eq!(b.failure.brokers_remaining, 4);
    assert_eq!(
        b.summary.offline, 0,
        "every partition has a replica elsewhere"
    );
    // Every partition loses exactly its one replica on r1 and sits at min ISR.
    assert_eq!(b.summary.partitions_affected, 6);
    assert_eq!(b.summary.at_min_isr, 6);
    assert_eq!(b.summary.leaders_lost, 2);
    assert_eq!(b.re_replication.replicas_to_rebuild, 6);
    assert_eq!(b.re_replication.bytes_to_replicate, 6 * GIB);
    assert_eq!(b.re_replication.replicas_without_destination, 0);
    assert_eq!(b.topics.topics[0].at_min_isr, 6);
}

#[test]
fn re_replication_time_is_bytes_over_the_throttle_rate() {
    let c = Cluster::new(4, 0).topic("t", 8, GIB, |i| vec![i % 4 + 1, (i + 1) % 4 + 1]);
    let b = blast(&c, &[], r#"{"brokerId": 2}"#);
    let r = &b.re_replication;
    // Broker 2 holds 4 of the 16 replicas.
    assert_eq!(r.replicas_lost, 4);
    assert_eq!(r.bytes_to_replicate, 4 * GIB);
    assert_eq!(r.transfer.bytes, 4 * GIB);
    assert_eq!(r.transfer.throttle_bytes_per_sec, THROTTLE);
    let expected = ((4 * GIB) as f64 / THROTTLE * 100.0).round() / 100.0;
    assert_eq!(r.transfer.estimated_seconds, Some(expected));
    // Copies spread over the three brokers left, so in parallel it is quicker.
    let parallel = r
        .transfer
        .estimated_seconds_parallel
        .expect("throttle known");
    assert!(parallel < expected, "{parallel} vs {expected}");
    let received: u64 = r.destinations.iter().map(|d| d.bytes).sum();
    assert_eq!(received, 4 * GIB);
    // Without a throttle there is no time.
    let none = analyze(&c.snapshot, &[], &request(r#"{"brokerId": 2}"#), 0.0).expect("valid");
    assert_eq!(none.re_replication.transfer.estimated_seconds, None);
}

#[test]
fn lost_replicas_are_rebuilt_on_the_same_rack_first() {
    // r1: 1, 3; r2: 2, 4. t-0 on brokers 1 and 2: the copy of broker 1's replica goes to 3.
    let c = Cluster::new(4, 2).part("t", 0, &[1, 2], GIB);
    let b = blast(&c, &[], r#"{"brokerId": 1}"#);
    let to: Vec<i32> = b
        .re_replication
        .destinations
        .iter()
        .map(|d| d.broker_id)
        .collect();
    assert_eq!(to, vec![3]);
}

#[test]
fn replicas_no_live_broker_can_take_are_counted_without_destination() {
    let c = Cluster::new(2, 0).part("t", 0, &[1, 2], GIB);
    let b = blast(&c, &[], r#"{"brokerId": 1}"#);
    assert_eq!(b.re_replication.replicas_without_destination, 1);
    assert_eq!(b.re_replication.bytes_without_destination, GIB);
    assert_eq!(b.re_replication.transfer.bytes, 0);
}

#[test]
fn consumer_groups_with_offsets_on_offline_or_failed_over_partitions_are_affected() {
    let mut c = Cluster::new(3, 0)
        .part("t", 0, &[1, 2], GIB)
        .part("t", 1, &[1], GIB)
        .part("t", 2, &[2, 3], GIB);
    set_isr(&mut c, "t", 0, &[1, 2], 1);
    let groups = vec![
        ConsumerGroup {
            group_id: "b-app".into(),
            coordinator: Some(3),
            partitions: vec![("t".into(), 0), ("t".into(), 1)],
        },
        ConsumerGroup {
            group_id: "a-app".into(),
            coordinator: Some(2),
            partitions: vec![("t".into(), 2)],
        },
        ConsumerGroup {
            group_id: "c-app".into(),
            coordinator: Some(1),
            partitions: vec![],
        },
    ];
    let b = blast(&c, &groups, r#"{"brokerId": 1}"#);
    let seen: Vec<(&str, usize, usize, bool)> = b
        .consumer_groups
        .groups
        .iter()
        .map(|g| {
            (
                g.group_id.as_str(),
                g.offline_partitions,
                g.leader_moved_partitions,
                g.coordinator_lost,
            )
        })
        .collect();
    // a-app only reads t-2, untouched; b-app reads t-0 (fails over) and t-1 (offline); c-app's
    // coordinator is on broker 1.
    assert_eq!(seen, vec![("b-app", 1, 1, false), ("c-app", 0, 0, true)]);
    assert_eq!(b.summary.consumer_groups_affected, 2);
}

#[test]
fn a_broker_already_down_is_reported_as_such() {
    let c = Cluster::new(3, 0)
        .part("t", 0, &[1, 2], GIB)
        .state(2, BrokerState::Down);
    let b = blast(&c, &[], r#"{"brokerIds": [1, 2]}"#);
    assert_eq!(b.failure.kind, "brokers");
    assert_eq!(b.failure.already_down, vec![2]);
    assert_eq!(b.failure.brokers_remaining, 1);
}

#[test]
fn per_topic_summaries_put_the_worst_topic_first_and_lists_are_bounded() {
    let mut c = Cluster::new(3, 0)
        .topic("a", 5, GIB, |_| vec![1, 2])
        .topic("z", 5, GIB, |_| vec![1]);
    for p in 0..5 {
        set_isr(&mut c, "a", p, &[1, 2], 1);
    }
    let b = blast(&c, &[], r#"{"brokerId": 1, "limit": 2}"#);
    assert_eq!(b.topics.topics[0].topic, "z", "offline partitions first");
    assert_eq!(b.topics.topics[0].offline, 5);
    assert_eq!(b.offline.count, 5);
    assert_eq!(b.offline.partitions.len(), 2);
    assert!(b.offline.truncated);
    assert!(b.leadership.changes_truncated);
    assert_eq!(b.leadership.lost, 10);
}

#[test]
fn unknown_brokers_and_racks_are_refused_naming_the_field() {
    let c = Cluster::new(3, 3).part("t", 0, &[1, 2], GIB);
    let cases = [
        (r#"{"brokerId": 9}"#, "brokerId"),
        (r#"{"brokerIds": [1, 9]}"#, "brokerIds[1]"),
        (r#"{"brokerIds": [1, 1]}"#, "brokerIds[1]"),
        (r#"{"brokerIds": []}"#, "brokerIds"),
        (r#"{"rack": "r9"}"#, "rack"),
        (r#"{}"#, "brokerId"),
        (r#"{"brokerId": 1, "rack": "r1"}"#, "brokerId"),
        (r#"{"brokerId": 1, "limit": -3}"#, "limit"),
    ];
    for (json, field) in cases {
        assert_eq!(refused(&c, json), field, "{json}");
    }
}

#[test]
fn the_answer_does_not_depend_on_input_order() {
    let c = Cluster::new(6, 3).topic("t", 12, GIB, |i| vec![i % 6 + 1, (i + 1) % 6 + 1]);
    let mut shuffled = c.snapshot.clone();
    shuffled.partitions.reverse();
    shuffled.brokers.reverse();
    let req = request(r#"{"rack": "r2"}"#);
    let a = analyze(&c.snapshot, &[], &req, THROTTLE).expect("valid");
    let b = analyze(&shuffled, &[], &req, THROTTLE).expect("valid");
    assert_eq!(
        serde_json::to_string(&a).expect("json"),
        serde_json::to_string(&b).expect("json")
    );
}
