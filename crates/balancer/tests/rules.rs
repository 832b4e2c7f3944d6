//! One test per balancing rule of the interface specification, named after the rule.

mod common;

use ballast_balancer::{apply_plan, instances, plan, Policy};
use ballast_model::{BrokerState, CostClass};
use common::{load, Cluster, GIB, NOW_MS};

/// Four brokers, replication factor 2; broker 1 holds one replica of every partition, so its
/// disk and follower/leader counts are far above fair share.
fn hot_broker() -> Cluster {
    Cluster::new(4, 0).topic("t", 24, GIB, |i| vec![1, 2 + i % 3])
}

#[test]
fn a_broker_beyond_twice_the_threshold_triggers_moves_until_every_broker_is_within_it() {
    let c = hot_broker();
    let p = c.plan();
    assert!(p.recommended, "{:?}", p.reason);
    let disk = load(&p, "diskBytes");
    assert!(disk.triggered);
    assert!(disk.max_distance_before > 10.0);
    assert!(
        disk.max_distance_after <= 5.0,
        "disk after {}",
        disk.max_distance_after
    );
    let leaders = load(&p, "leaderCount");
    assert!(
        leaders.max_distance_after <= 5.0,
        "leaders after {}",
        leaders.max_distance_after
    );
    assert!(!p.moves.is_empty());
    assert!(p.structural_limits.is_empty(), "{:?}", p.structural_limits);
}

#[test]
fn a_broker_within_twice_the_threshold_triggers_nothing() {
    // Disk 1.036 : 1.04 : 1 : 1 GiB and leaders 11 : 11 : 10 : 10: within 10% everywhere.
    let c = Cluster::new(4, 0)
        .topic("a", 40, GIB / 10, |i| vec![i % 4 + 1])
        .part("b", 0, &[1], GIB * 36 / 1000)
        .part("b", 1, &[2], GIB / 25);
    let p = c.plan();
    let loads: Vec<_> = p
        .loads
        .0
        .iter()
        .map(|(l, s)| (l.name(), s.triggered, s.max_distance_before))
        .collect();
    assert!(p.moves.is_empty(), "{:?} {loads:?}", p.moves);
    assert!(!p.recommended);
    assert_eq!(p.reason.as_deref(), Some("balanced"), "{loads:?}");
    assert!(p.reason_text.is_some());
}

#[test]
fn partitions_moved_in_the_last_30_minutes_are_not_moved_again() {
    let c = hot_broker().moved_at("t", "2026-11-21T09:45:00Z");
    let p = c.plan();
    assert!(p.moves.is_empty(), "{:?}", p.moves);
    assert!(
        p.structural_limits
            .iter()
            .any(|l| l.cause == "recent moves"),
        "{:?}",
        p.structural_limits
    );
    // 31 minutes later they may move again.
    let later = hot_broker().moved_at("t", "2026-11-21T09:29:00Z");
    assert!(!later.plan().moves.is_empty());
}

#[test]
fn a_partition_with_an_unreadable_last_moved_at_stays_in_cooldown() {
    // `Snapshot::validate` refuses it; a planner handed one anyway does not lift the cooldown.
    let c = hot_broker().moved_at("t", "a quarter past nine");
    assert!(c.snapshot.validate().is_err());
    let p = plan(&c.snapshot, &Policy::default(), NOW_MS);
    assert!(p.moves.is_empty(), "{:?}", p.moves);
}

#[test]
fn a_load_below_the_no_traffic_threshold_reads_no_traffic_and_is_not_balanced() {
    // Rates all on broker 1 but tiny: 0.5 msg/s and 500 B/s per broker on average.
    let c = Cluster::new(2, 0)
        .topic("t", 4, 10 * GIB, |i| vec![i % 2 + 1])
        .rates("t", 0.0, 0.0);
    let mut c = c;
    c.snapshot.partitions[0].producer_msg_rate = 1.0;
    c.snapshot.partitions[0].producer_byte_rate = 1000.0;
    let p = c.plan();
    let msgs = load(&p, "producerMsgRate");
    assert!(msgs.no_traffic && !msgs.counted);
    let bytes = load(&p, "producerByteRate");
    assert!(bytes.no_traffic && !bytes.counted);
    assert!(p.moves.is_empty(), "{:?}", p.moves);
}

#[test]
fn disk_below_one_mib_per_broker_reads_no_traffic() {
    let c = Cluster::new(2, 0)
        .part("t", 0, &[1], 1000)
        .part("t", 1, &[1], 1000);
    let p = c.plan();
    assert!(load(&p, "diskBytes").no_traffic);
}

#[test]
fn while_a_broker_is_down_balancing_is_paused_and_only_repairs_are_planned() {
    let c = hot_broker().state(4, BrokerState::Down);
    let p = c.plan();
    assert!(p.balance_hold);
    assert_eq!(p.down_brokers, vec![4]);
    // The proposal reason is the code `balance_held`; the words are in `reasonText`.
    assert_eq!(p.reason.as_deref(), Some("balance_held"));
    assert!(
        p.reason_text
            .as_deref()
            .is_some_and(|t| t.contains("broker 4 down")),
        "{:?}",
        p.reason_text
    );
    let json = serde_json::to_value(&p).expect("json");
    assert_eq!(json["reason"], "balance_held");
    assert!(json["reasonText"].is_string());
    assert!(!p.moves.is_empty());
    for m in &p.moves {
        assert!(
            m.replicas_before.contains(&4),
            "only partitions on the down broker move: {m:?}"
        );
        assert!(!m.replicas_after.contains(&4));
        assert_eq!(m.replicas_after.len(), m.replicas_before.len());
    }
}

#[test]
fn a_repair_moves_a_partition_in_cooldown_because_restoring_replicas_beats_the_cooldown() {
    // Every partition moved 15 minutes ago; broker 4 is down. The repairs go ahead anyway (a
    // deliberate safety choice), and nothing else moves.
    let c = hot_broker()
        .moved_at("t", "2026-11-21T09:45:00Z")
        .state(4, BrokerState::Down);
    let p = c.plan();
    assert!(p.balance_hold);
    let on_4 = c
        .snapshot
        .partitions
        .iter()
        .filter(|x| x.replicas.contains(&4))
        .count();
    assert_eq!(p.moves.len(), on_4, "{:?}", p.moves);
    for m in &p.moves {
        for (b, a) in m.replicas_before.iter().zip(&m.replicas_after) {
            assert!(
                b == a || *b == 4,
                "only the down broker's replica is replaced: {m:?}"
            );
        }
    }
    // The maintenance drain, on the other hand, waits for the cooldown.
    let drain = hot_broker()
        .moved_at("t", "2026-11-21T09:45:00Z")
        .state(4, BrokerState::Maintenance);
    assert!(drain.plan().moves.is_empty());
}

#[test]
fn a_broker_in_maintenance_takes_no_load_and_does_not_hold_balancing() {
    let c = Cluster::new(4, 0)
        .topic("t", 24, GIB, |i| vec![i % 3 + 1, (i + 1) % 3 + 1])
        .state(4, BrokerState::Maintenance);
    let p = c.plan();
    assert!(!p.balance_hold);
    assert!(p.moves.iter().all(|m| !m.replicas_after.contains(&4)));
    assert!((load(&p, "diskBytes").fair_share - 16.0 * GIB as f64).abs() < 1.0);
}

#[test]
fn the_first_plan_after_maintenance_moves_partitions_back_onto_the_returning_broker() {
    // Broker 4 came back empty.
    let c = Cluster::new(4, 0).topic("t", 24, GIB, |i| vec![i % 3 + 1, (i + 1) % 3 + 1]);
    let p = c.plan();
    assert!(p.recommended, "{:?}", p.reason);
    let onto_4 = p
        .moves
        .iter()
        .filter(|m| m.replicas_after.contains(&4))
        .count();
    assert!(onto_4 >= 10, "{onto_4} moves onto the returning broker");
    assert!(load(&p, "diskBytes").max_distance_after <= 5.0);
}

#[test]
fn the_byte_floor_leaves_a_small_byte_rate_difference_alone() {
    // Byte rates differ by 1 MB/s between brokers: below the default 2 MB/s floor.
    let c = Cluster::new(2, 0)
        .topic("t", 2, GIB, |i| vec![i + 1])
        .rates("t", 0.0, 0.0);
    let mut c = c;
    c.snapshot.partitions[0].producer_byte_rate = 1_500_000.0;
    c.snapshot.partitions[1].producer_byte_rate = 500_000.0;
    let p = c.plan();
    let bytes = load(&p, "producerByteRate");
    assert!(bytes.below_floor && !bytes.counted, "{bytes:?}");
    // With a lower floor the same difference counts.
    let p = c.plan_with(&Policy {
        floor_bytes_per_sec: 100_000.0,
        ..Policy::default()
    });
    assert!(load(&p, "producerByteRate").counted);
}

#[test]
fn the_disk_floor_leaves_a_small_disk_difference_alone() {
    let c = Cluster::new(2, 0)
        .part("t", 0, &[1], 3 * GIB)
        .part("t", 1, &[2], GIB);
    let p = c.plan_with(&Policy {
        floor_disk_bytes: 2.0 * GIB as f64,
        ..Policy::default()
    });
    assert!(load(&p, "diskBytes").below_floor);
    assert!(p
        .moves
        .iter()
        .all(|m| m.cost_class == CostClass::LeaderOnly));
}

#[test]
fn leadership_changes_are_preferred_to_copies() {
    // Replicas are even (every broker holds 12), but broker 1 leads everything it holds.
    let c = Cluster::new(3, 0).topic("t", 18, GIB, |i| {
        let a = i % 3 + 1;
        let b = (i + 1) % 3 + 1;
        if a == 1 || b == 1 {
            vec![1, if a == 1 { b } else { a }]
        } else {
            vec![a, b]
        }
    });
    let p = c.plan();
    assert!(p.recommended, "{:?}", p.reason);
    assert!(
        p.moves
            .iter()
            .all(|m| m.cost_class == CostClass::LeaderOnly),
        "{:?}",
        p.moves
    );
    assert_eq!(p.estimated_bytes, 0);
    assert!(load(&p, "leaderCount").max_distance_after <= 5.0);
}

#[test]
fn same_rack_copies_are_preferred_to_cross_rack_copies() {
    // Racks r1 = {1, 3} and r2 = {2, 4}. Brokers 1 and 2 hold everything (RF 1); 3 and 4 are
    // new and empty. Evening it out needs no cross-rack copy at all. (Single-partition topics,
    // so the topic spread cap does not force any destination.)
    let mut c = Cluster::new(4, 2);
    for i in 0..8 {
        c = c
            .part(&format!("a{i}"), 0, &[1], GIB)
            .part(&format!("b{i}"), 0, &[2], GIB);
    }
    let p = c.plan();
    assert!(p.recommended, "{:?}", p.reason);
    assert!(!p.moves.is_empty());
    for m in &p.moves {
        assert_ne!(m.cost_class, CostClass::CrossRack, "{m:?}");
    }
    assert!(load(&p, "diskBytes").max_distance_after <= 5.0);
}

#[test]
fn a_topic_is_not_concentrated_beyond_its_spread_cap() {
    // Topic a: 8 partitions on broker 1 of 4; the cap is ceil(8 / 4) = 2 per broker.
    let c = Cluster::new(4, 0)
        .topic("a", 8, GIB, |_| vec![1])
        .topic("b", 8, GIB, |_| vec![2]);
    let p = c.plan();
    let after = apply_plan(&c.snapshot, &p, None);
    for broker in [3, 4] {
        let count = after
            .partitions
            .iter()
            .filter(|x| x.topic == "a" && x.replicas.contains(&broker))
            .count();
        assert!(count <= 2, "broker {broker} holds {count} partitions of a");
    }
}

#[test]
fn topic_spread_counts_pairs_over_the_cap_and_excess_leaders_before_and_after_the_plan() {
    // Topic a: 8 partitions (RF 1) all on broker 1 of 4: replica cap 2, leader cap 2. Broker 1
    // is over the replica cap (one pair) with 6 leaders too many; b likewise on broker 2.
    let c = Cluster::new(4, 0)
        .topic("a", 8, GIB, |_| vec![1])
        .topic("b", 8, GIB, |_| vec![2]);
    let p = c.plan();
    assert_eq!(p.topic_spread.over_cap, 2);
    assert_eq!(p.topic_spread.excess_leaders, 12);
    // The plan evens disk with 4 partitions per broker: brokers 1 and 2 keep 4 of their topic
    // (still over the cap, 2 leaders too many each). What it leaves is counted the same way on
    // its result.
    assert_eq!(p.topic_spread.projected_over_cap, 2, "{:?}", p.topic_spread);
    assert_eq!(
        p.topic_spread.projected_excess_leaders, 4,
        "{:?}",
        p.topic_spread
    );
    let after = apply_plan(&c.snapshot, &p, None);
    let again = plan(&after, &Policy::default(), NOW_MS);
    assert_eq!(
        again.topic_spread.over_cap,
        p.topic_spread.projected_over_cap
    );
    assert_eq!(
        again.topic_spread.excess_leaders,
        p.topic_spread.projected_excess_leaders
    );
    let json = serde_json::to_value(&p).expect("json");
    for key in [
        "overCap",
        "projectedOverCap",
        "excessLeaders",
        "projectedExcessLeaders",
    ] {
        assert!(json["topicSpread"][key].is_u64(), "{key}");
    }
}

#[test]
fn a_partition_larger_than_the_excess_is_a_structural_limit() {
    // One 10 GiB partition on broker 1, tiny ones elsewhere: no move gets within 5%.
    let c = Cluster::new(2, 0)
        .part("big", 0, &[1], 10 * GIB)
        .topic("small", 4, GIB / 4, |_| vec![2]);
    let p = c.plan();
    let limit = p
        .structural_limits
        .iter()
        .find(|l| l.load.name() == "diskBytes")
        .expect("disk limit");
    assert_eq!(limit.cause, "large partition");
    assert!(!limit.remediation.is_empty());
}

#[test]
fn proposal_max_partitions_caps_the_partitions_moved() {
    let p = hot_broker().plan_with(&Policy {
        max_partitions: Some(3),
        ..Policy::default()
    });
    assert!(p.moves.len() <= 3, "{}", p.moves.len());
    assert!(!p.moves.is_empty());
}

#[test]
fn proposal_max_partitions_bounds_the_whole_plan_including_the_maintenance_drain() {
    // Broker 5 is in maintenance and holds 6 partitions (drained first); broker 1 is hot too,
    // so the search wants more moves after the drain. Cap 4 bounds both together.
    let c = Cluster::new(5, 0)
        .topic("t", 24, GIB, |i| vec![1, 2 + i % 3])
        .topic("m", 6, GIB, |i| vec![5, 2 + i % 3])
        .state(5, BrokerState::Maintenance);
    let uncapped = c.plan();
    assert!(uncapped.moves.len() > 6, "{}", uncapped.moves.len());
    let p = c.plan_with(&Policy {
        max_partitions: Some(4),
        ..Policy::default()
    });
    assert!(p.moves.len() <= 4, "{} moves: {:?}", p.moves.len(), p.moves);
    assert!(!p.moves.is_empty());
    // With room left after the drain, the search may use exactly what is left.
    let p = c.plan_with(&Policy {
        max_partitions: Some(9),
        ..Policy::default()
    });
    assert!(p.moves.len() <= 9, "{} moves", p.moves.len());
    assert!(
        p.moves.iter().filter(|m| m.topic == "m").count() == 6,
        "the drain goes first"
    );
    assert!(p.moves.len() > 6, "the search used the rest of the budget");
}

#[test]
fn worker_threads_never_change_the_plan() {
    let c = Cluster::new(12, 3).topic("t", 600, GIB, |i| vec![1 + i % 4, 5 + i % 4, 9 + i % 2]);
    let run = |workers| {
        let p = c.plan_with(&Policy {
            workers,
            // Small chunks, so this small cluster's steps are split over the threads.
            parallel_min_chunk: 48,
            ..Policy::default()
        });
        assert_eq!(p.search.workers, workers);
        if workers > 1 {
            // The threaded path was taken: steps split their candidates over threads.
            assert!(p.search.parallel_steps > 0, "{:?}", p.search);
            assert!(
                p.search.threads_used > 1 && p.search.threads_used <= workers,
                "{:?}",
                p.search
            );
        } else {
            assert_eq!((p.search.parallel_steps, p.search.threads_used), (0, 1));
        }
        without_thread_counts(p)
    };
    let one = run(1);
    assert!(!one.contains("\"moves\":[]"), "the plan moves something");
    assert!(one == run(4), "plans differ between 1 and 4 workers");
    assert!(one == run(3), "plans differ between 1 and 3 workers");
    assert!(one == run(2), "plans differ between 1 and 2 workers");
}

#[test]
fn replanning_the_planned_result_proposes_nothing() {
    let c = hot_broker();
    let first = c.plan();
    let after = apply_plan(&c.snapshot, &first, None);
    let second = plan(&after, &Policy::default(), NOW_MS);
    assert!(second.moves.is_empty(), "{:?}", second.moves);
}

#[test]
fn the_plan_serializes_as_ballast_plan_v1() {
    let p = hot_broker().plan();
    let json: serde_json::Value = serde_json::to_value(&p).expect("json");
    assert_eq!(json["format"], "ballast.plan/v1");
    assert_eq!(json["recommended"], true);
    let m = &json["moves"][0];
    for key in [
        "topic",
        "partition",
        "replicasBefore",
        "replicasAfter",
        "leaderBefore",
        "leaderAfter",
        "costClass",
        "bytes",
    ] {
        assert!(!m[key].is_null(), "move field {key}: {m}");
    }
    let names: Vec<&String> = json["loads"]
        .as_object()
        .expect("loads map")
        .keys()
        .collect();
    assert_eq!(names.len(), 7);
    for key in [
        "fairShare",
        "counted",
        "noTraffic",
        "maxDistanceBefore",
        "maxDistanceAfter",
    ] {
        assert!(
            !json["loads"]["diskBytes"][key].is_null(),
            "load field {key}"
        );
    }
    assert!(json["estimatedBytes"].as_u64().is_some_and(|b| b > 0));
    assert!(json["structuralLimits"].is_array());
    assert!(json["elapsedMs"].is_number());
}

#[test]
fn a_plan_that_brings_no_broker_within_10_percent_or_halfway_to_5_percent_is_not_recommended() {
    // RF 1: broker 1 holds 16 partitions, brokers 2-4 four each (fair share 7). One partition
    // moved (the cap) leaves broker 1 at +114% and its receiver at -29%, neither within 10% nor
    // halfway to 5%.
    let c = Cluster::new(4, 0).topic("t", 28, GIB, |i| {
        if i < 16 {
            vec![1]
        } else {
            vec![2 + (i - 16) % 3]
        }
    });
    let p = c.plan_with(&Policy {
        max_partitions: Some(1),
        ..Policy::default()
    });
    assert_eq!(p.moves.len(), 1);
    assert!(!p.tripped.is_empty());
    assert!(p.tripped.iter().all(|t| !t.helped), "{:?}", p.tripped);
    assert!(!p.recommended);
    assert_eq!(p.reason.as_deref(), Some("not_beneficial"));
    assert!(p
        .reason_text
        .as_deref()
        .is_some_and(|t| t.contains("quarter of a partition")));
}

fn limit<'a>(
    p: &'a ballast_balancer::Plan,
    broker: i32,
    load_name: &str,
) -> &'a ballast_balancer::StructuralLimit {
    p.structural_limits
        .iter()
        .find(|l| l.broker_id == broker && l.load.name() == load_name)
        .unwrap_or_else(|| {
            panic!(
                "no {load_name} limit for broker {broker}: {:?}",
                p.structural_limits
            )
        })
}

#[test]
fn a_broker_held_by_the_rack_layout_is_a_structural_limit_named_rack_layout() {
    // Rack a = {1}, rack b = {2, 3}; every partition keeps one replica in each rack, so broker 1
    // holds all of them (disk 50% over) and any move off it would lose rack diversity.
    let mut c = Cluster::new(3, 0).topic("t", 12, GIB, |i| vec![1, 2 + i % 2]);
    for b in &mut c.snapshot.brokers {
        b.rack = Some(if b.id == 1 { "a" } else { "b" }.to_string());
    }
    let p = c.plan();
    assert!(
        p.moves.iter().all(|m| m.replicas_after.contains(&1)),
        "{:?}",
        p.moves
    );
    let l = limit(&p, 1, "diskBytes");
    assert_eq!(l.cause, "rack layout");
    assert!(l.remediation.contains("rack"), "{}", l.remediation);
    assert!(l.remediation.contains("broker 1"), "{}", l.remediation);
}

#[test]
fn a_message_rate_that_only_moves_with_byte_rate_is_a_structural_limit_named_messages_vs_bytes() {
    // Broker 1: two partitions of small messages (1000 msg/s, 1 MB/s each); broker 2: two of
    // large messages (50 msg/s, 1 MB/s each). Bytes, disk and counts are even; messages are
    // 2000 against 100, and moving either small partition unbalances bytes and leaders.
    let c = Cluster::new(2, 0)
        .topic("small", 2, GIB, |_| vec![1])
        .topic("large", 2, GIB, |_| vec![2])
        .rates("small", 1000.0, 1_000_000.0)
        .rates("large", 50.0, 1_000_000.0);
    let p = c.plan_with(&Policy {
        floor_bytes_per_sec: 0.0,
        ..Policy::default()
    });
    assert!(p.moves.is_empty(), "{:?}", p.moves);
    let l = limit(&p, 1, "producerMsgRate");
    assert_eq!(l.cause, "messages vs bytes");
    assert!(l.remediation.contains("message sizes"), "{}", l.remediation);
    assert!(
        l.remediation.contains("BALLAST_BALANCE_FLOOR"),
        "{}",
        l.remediation
    );
}

#[test]
fn a_broker_no_move_can_help_is_a_structural_limit_named_no_move_helps() {
    // Broker 1 holds four offline partitions (no leader): nothing on it can move, nothing else
    // brings it closer to fair share of disk.
    let mut c = Cluster::new(2, 0)
        .topic("offline", 4, GIB, |_| vec![1])
        .part("online", 0, &[2], GIB);
    for p in c
        .snapshot
        .partitions
        .iter_mut()
        .filter(|p| p.topic == "offline")
    {
        p.leader = None;
    }
    let p = c.plan();
    assert!(p.moves.is_empty(), "{:?}", p.moves);
    assert_eq!(p.reason.as_deref(), Some("no_move_helps"));
    let l = limit(&p, 1, "diskBytes");
    assert_eq!(l.cause, "no move helps");
    assert!(
        l.remediation.contains("adding capacity"),
        "{}",
        l.remediation
    );
}

#[test]
fn compacted_topics_count_at_their_steady_size() {
    // The snapshot carries a compacted partition's steady size (the observer's window median);
    // the planner counts exactly that, like any other partition's size.
    let c = Cluster::new(4, 0)
        .topic("log", 12, GIB, |i| vec![1 + i % 3])
        .topic("table", 6, 3 * GIB, |_| vec![1]);
    let mut compacted = Cluster::new(4, 0);
    compacted.snapshot = c.snapshot.clone();
    for p in compacted
        .snapshot
        .partitions
        .iter_mut()
        .filter(|p| p.topic == "table")
    {
        p.compacted = true;
    }
    let plain = c.plan();
    let p = compacted.plan();
    let disk = load(&p, "diskBytes");
    assert!((disk.fair_share - (12.0 + 18.0) * GIB as f64 / 4.0).abs() < 1.0);
    assert!(disk.triggered);
    assert!(
        p.moves.iter().any(|m| m.topic == "table"),
        "compacted partitions move like others: {:?}",
        p.moves
    );
    assert_eq!(
        serde_json::to_string(&p).expect("json"),
        serde_json::to_string(&plain).expect("json"),
        "the compacted flag itself changes nothing: the size given is the steady size"
    );
}

#[test]
fn exchanges_looked_for_on_worker_threads_never_change_the_plan() {
    // One broker holds twice the disk of the others while every count is even: the search
    // evens disk with replica exchanges, whose broker pairs are split over the threads (the
    // candidates' scoring is not: the chunk is too large for these steps).
    let s = instances::generate(&instances::Spec::new(
        instances::Kind::HotBroker,
        12,
        1200,
        1,
    ));
    same_plan_for_any_workers(&s, Some(1_000_000), &[2, 3, 4], 1, |p| {
        assert!(
            p.moves.iter().any(|m| m.reason.starts_with("exchange")),
            "the plan exchanges replicas"
        );
    });
}

#[test]
fn leadership_steps_split_over_workers_never_change_the_plan() {
    // Leaders piled on a few brokers, every broker holding more partitions than a step samples:
    // the leadership search's steps rank their sampled partitions in chunks, one per thread,
    // and check and score the first of the merged ranking in chunks; the plan and the search's
    // counts (steps, candidates scored) are what one thread finds.
    let s = instances::generate(&instances::Spec::new(instances::Kind::Leaders, 12, 2400, 1));
    same_plan_for_any_workers(&s, None, &[2, 4, 3], 101, |p| {
        assert!(
            p.moves
                .iter()
                .filter(|m| m.reason.contains("leadership change"))
                .count()
                > 100,
            "the plan changes leadership"
        );
    });
}

#[test]
fn partitions_that_may_leave_their_rack_looked_for_on_worker_threads_never_change_the_plan() {
    // One broker holds twice the disk of the others, and more partitions than a chunk of the
    // scan for those that may leave their rack (1,024, one chunk per thread): its replica
    // steps scan its partitions in chunks on the threads, put back in order.
    let s = instances::generate(&instances::Spec::new(
        instances::Kind::HotBroker,
        12,
        9_000,
        1,
    ));
    same_plan_for_any_workers(&s, Some(1_000_000), &[2, 4], 1, |p| {
        assert!(
            p.moves
                .iter()
                .any(|m| m.cost_class != CostClass::LeaderOnly),
            "the plan copies replicas"
        );
    });
}

#[test]
fn copies_a_broker_looks_for_on_worker_threads_never_change_the_plan() {
    // An empty broker among loaded ones: its replica steps sample the partitions of the
    // brokers it could take copies from in chunks of sources, one chunk per thread, put back
    // in order.
    let s = instances::generate(&instances::Spec::new(
        instances::Kind::NewBroker,
        12,
        2400,
        1,
    ));
    same_plan_for_any_workers(&s, Some(1_000_000), &[2, 4], 51, |p| {
        assert!(
            p.moves
                .iter()
                .filter(|m| m.cost_class != CostClass::LeaderOnly)
                .count()
                > 50,
            "the plan copies replicas to the new broker"
        );
    });
}

#[test]
fn rack_repairs_scored_on_worker_threads_never_change_the_plan() {
    // 64 brokers (two ranges of 32 destinations, one per thread) and about 3% of the
    // partitions on too few racks: each repair scores its candidate copies in ranges of
    // destination brokers on the threads, and the best of the ranges is the copy one thread
    // chooses.
    let s = instances::generate(&instances::Spec::new(instances::Kind::Random, 64, 2400, 1));
    same_plan_for_any_workers(&s, Some(1_000_000), &[2, 4, 3], 40, |p| {
        assert!(p.rack_awareness.repaired > 40, "{:?}", p.rack_awareness);
    });
}

/// Plans `s` with one worker and with each of `more` (`parallel_min_chunk` as given, else the
/// default), checks every plan with `check` and, where this machine has more than one CPU,
/// that a plan with more workers split at least `split` steps over more than one thread (never
/// more than the workers); every plan is the one worker's.
fn same_plan_for_any_workers(
    s: &ballast_model::snapshot::Snapshot,
    min_chunk: Option<usize>,
    more: &[usize],
    split: u64,
    check: impl Fn(&ballast_balancer::Plan),
) {
    // Steps are split over threads, not over more workers than CPUs.
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    let run = |workers| {
        let mut policy = Policy {
            workers,
            ..Policy::default()
        };
        if let Some(chunk) = min_chunk {
            policy.parallel_min_chunk = chunk;
        }
        let p = plan(s, &policy, NOW_MS);
        check(&p);
        if workers > 1 && cpus > 1 {
            assert!(p.search.parallel_steps >= split, "{:?}", p.search);
            assert!(p.search.threads_used > 1 && p.search.threads_used <= workers);
        }
        without_thread_counts(p)
    };
    let one = run(1);
    for &workers in more {
        assert!(
            one == run(workers),
            "plans differ between 1 and {workers} workers"
        );
    }
}

/// A plan as JSON without what depends on the threads that made it (the workers asked for,
/// steps split, threads used), to compare plans made with different workers.
fn without_thread_counts(mut p: ballast_balancer::Plan) -> String {
    p.search.workers = 0;
    p.search.parallel_steps = 0;
    p.search.threads_used = 0;
    serde_json::to_string(&p).expect("json")
}

/// Rates partly read (a minute of a 30-minute window, all of it on broker 1) before their
/// window holds enough readings.
fn rates_still_being_measured() -> (Cluster, Policy) {
    let c = Cluster::new(4, 0)
        .topic("t", 24, GIB, |i| vec![i % 4 + 1])
        .topic("hot", 4, GIB / 100, |_| vec![1])
        .rates("hot", 5_000.0, 5e6);
    let mut policy = Policy::default();
    let m = ballast_balancer::Measuring {
        readings: 2,
        needed: 6,
        remaining_ms: 240_000,
    };
    for load in [
        ballast_model::Load::ProducerMsgRate,
        ballast_model::Load::ProducerByteRate,
        ballast_model::Load::ConsumerMsgRate,
        ballast_model::Load::ConsumerByteRate,
    ] {
        let i = ballast_model::Load::ALL
            .iter()
            .position(|l| *l == load)
            .expect("a load");
        policy.measuring[i] = Some(m);
    }
    (c, policy)
}

#[test]
fn a_load_still_being_measured_is_unknown_never_no_traffic_and_never_balanced() {
    let (c, policy) = rates_still_being_measured();
    let p = c.plan_with(&policy);
    for name in [
        "producerMsgRate",
        "producerByteRate",
        "consumerMsgRate",
        "consumerByteRate",
    ] {
        let s = load(&p, name);
        assert_eq!(s.stop, "measuring", "{name}");
        assert!(!s.no_traffic, "{name}: unknown is not No traffic");
        assert!(!s.counted && !s.triggered, "{name}");
        assert!(s.measuring.is_some(), "{name}");
        assert!(
            s.stop_reason.contains("2 of 6 readings") && s.stop_reason.contains("240 s"),
            "{name}: {}",
            s.stop_reason
        );
    }
    // Nothing moves for the rates broker 1 seems to carry: they are not known yet.
    assert!(
        p.moves.iter().all(|m| !m.reason.contains("Rate")),
        "{:?}",
        p.moves
    );
    // Measured, the same rates trigger moves off broker 1.
    let measured = c.plan();
    assert!(load(&measured, "producerMsgRate").triggered);
    assert!(measured.moves.iter().any(|m| m.reason.contains("Rate")));
}

#[test]
fn a_plan_with_a_load_still_being_measured_is_not_applicable_and_says_which_and_how_long() {
    let (c, policy) = rates_still_being_measured();
    // Disk is far off (broker 1 holds every "hot" partition too) and may be planned, but no
    // plan is applied before the rates are known.
    let c = c.part("big", 0, &[2], 20 * GIB);
    let p = c.plan_with(&policy);
    let readings: Vec<ballast_balancer::Reading> = (0..6)
        .map(|i| ballast_balancer::Reading::of(&p, NOW_MS - (5 - i) * 60_000))
        .collect();
    let d = ballast_balancer::decide(
        &p,
        &ballast_balancer::Context {
            readings: &readings,
            started_at_ms: 0,
            warmup_ms: 0,
            max_gap_ms: 180_000,
            now_ms: NOW_MS,
            throttles_managed: true,
        },
    );
    assert!(!d.application_allowed);
    assert_eq!(d.reason.as_deref(), Some("data_not_ready"));
    assert!(
        d.next_action.contains("producerMsgRate") && d.next_action.contains("2 of 6 readings"),
        "{}",
        d.next_action
    );
}

#[test]
fn a_hot_broker_ends_within_the_threshold_of_disk_at_every_seed() {
    // The hot-broker kind (broker 1's partitions twice as large: at these seeds it holds 1.64 to
    // 2.0 times its fair share of disk while every count is even) at the medium size of issue 40, 60 brokers
    // and 6,000 partitions, seeds 1-5, and at 24 brokers, seeds 1-10: disk triggers and ends
    // within 5% on every broker, so its stop is `within_threshold`, never a limit.
    use instances::{generate, Kind, Spec};
    let sizes: [(i32, usize, std::ops::RangeInclusive<u64>); 2] =
        [(60, 6000, 1..=5), (24, 2400, 1..=10)];
    for (brokers, partitions, seeds) in sizes {
        for seed in seeds {
            let s = generate(&Spec::new(Kind::HotBroker, brokers, partitions, seed));
            let p = plan(&s, &Policy::default(), NOW_MS);
            let disk = load(&p, "diskBytes");
            let at = format!("{brokers}x{partitions} seed {seed}");
            assert!(disk.max_distance_before > 60.0, "{at}: {disk:?}");
            assert!(disk.max_distance_after <= 5.0, "{at}: {disk:?}");
            assert_eq!(disk.stop, "within_threshold", "{at}: {}", disk.stop_reason);
        }
    }
}

#[test]
fn a_load_no_single_move_evens_is_evened_by_two_leadership_changes_that_keep_a_third_brokers_count()
{
    // Where every single move for the farthest broker pushed another load beyond the threshold,
    // the trigger or its floor, the search now also tries two leadership changes at once (a
    // leadership exchange, or a leadership passed on through a third broker whose count stays):
    // `random` 60x3000 (leader count left at 14-22%) and 60x4000 seed 4 (17.5%), `new-broker`
    // 8x500 without racks seeds 2, 8 and 10 (+32.8% to +50.4%) and with two racks seeds 4 and 5
    // (+32.8%, +45.6%), `random` 8x1000 with four racks seed 4 (+13.6%) end disk, leader and
    // follower count within 5%. (A few of each, to keep the test short.)
    use instances::{generate, Kind, Spec};
    let cases = [
        (Kind::Random, 60, 3000, 1, 3),
        (Kind::Random, 60, 3000, 6, 3),
        (Kind::Random, 60, 4000, 4, 3),
        (Kind::NewBroker, 8, 500, 2, 0),
        (Kind::NewBroker, 8, 500, 8, 0),
        (Kind::NewBroker, 8, 500, 10, 0),
        (Kind::NewBroker, 8, 500, 4, 2),
        (Kind::NewBroker, 8, 500, 5, 2),
        (Kind::Random, 8, 1000, 4, 4),
    ];
    for (kind, brokers, partitions, seed, racks) in cases {
        let s = generate(&Spec {
            racks,
            ..Spec::new(kind, brokers, partitions, seed)
        });
        let p = plan(&s, &Policy::default(), NOW_MS);
        let at = format!("{kind} {brokers}x{partitions} seed {seed} racks {racks}");
        for name in ["diskBytes", "leaderCount", "followerCount"] {
            let l = load(&p, name);
            assert!(l.max_distance_after <= 5.0, "{at}: {name} {l:?}");
        }
    }
}
