//! The simulation rules, observed through the real wire protocol.

mod common;

use std::time::{Duration, Instant};

use common::*;
use kafka_protocol::messages::*;

const TOPIC: i8 = 2;
const BROKER: i8 = 4;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_100_mb_partition_moved_at_a_10_mb_s_throttle_takes_about_10_s() {
    let sim = start(
        snapshot(
            brokers(4),
            vec![partition("big", 0, &[1, 2, 3], 100_000_000)],
        ),
        1.0,
    )
    .await;
    let admin = Admin::new(&sim);
    // Throttles as kafka-reassign-partitions sets them: leader side on the current replicas,
    // follower side on the new one, and a rate on the brokers involved.
    assert_eq!(
        admin
            .alter_configs(
                BROKER,
                "4",
                &[("follower.replication.throttled.rate", Some("10000000"))]
            )
            .await,
        0
    );
    assert_eq!(
        admin
            .alter_configs(
                BROKER,
                "1",
                &[("leader.replication.throttled.rate", Some("10000000"))]
            )
            .await,
        0
    );
    assert_eq!(
        admin
            .alter_configs(
                TOPIC,
                "big",
                &[
                    ("leader.replication.throttled.replicas", Some("0:1,0:2,0:3")),
                    ("follower.replication.throttled.replicas", Some("0:4")),
                ],
            )
            .await,
        0
    );
    let started = Instant::now();
    assert_eq!(admin.reassign("big", 0, Some(&[4, 2, 3])).await, (0, None));
    let ongoing = admin.ongoing().await;
    assert_eq!(
        ongoing,
        vec![("big".to_string(), 0, vec![4, 2, 3, 1], vec![4], vec![1])]
    );
    let done = wait_for(Duration::from_secs(20), || async {
        admin.ongoing().await.is_empty().then_some(())
    })
    .await;
    let elapsed = started.elapsed().as_secs_f64();
    assert!(done.is_some(), "the move did not finish within 20 s");
    assert!(
        (8.0..=13.0).contains(&elapsed),
        "100 MB at 10 MB/s took {elapsed:.1} s"
    );
    let p = admin.partition("big", 0).await;
    assert_eq!(
        p.replica_nodes.iter().map(|b| b.0).collect::<Vec<_>>(),
        vec![4, 2, 3]
    );
    assert_eq!(
        p.leader_id.0, 4,
        "the removed leader hands over to the first in-sync target"
    );
    let truth = sim.truth();
    let moved = &truth.reassignments.finished[0];
    assert!(
        moved.record.limited_by.contains("followerThrottle")
            || moved.record.limited_by.contains("leaderThrottle")
    );
    assert!(
        !moved.record.limited_by.contains("link"),
        "{:?}",
        moved.record.limited_by
    );
    assert!(
        moved.record.peak_rate <= 10_000_001.0,
        "peak {}",
        moved.record.peak_rate
    );
    assert!((moved.record.bytes_copied - 100e6).abs() < 1.0);
    let rate = moved.average_rate;
    assert!((8e6..=11e6).contains(&rate), "average rate {rate}");
    let b4 = truth
        .throttles
        .brokers
        .iter()
        .find(|b| b.broker == Some(4))
        .expect("broker 4 throttle");
    assert_eq!(b4.follower_rate, Some(1e7));
    assert_eq!(
        truth.throttles.topics[0].follower_replicas.as_deref(),
        Some("0:4")
    );
    sim.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unthrottled_move_copies_at_the_link_speed() {
    let sim = start_with(
        snapshot(brokers(3), vec![partition("t", 0, &[1, 2], 200_000_000)]),
        |c| c.link_speed = 100e6,
    )
    .await;
    let admin = Admin::new(&sim);
    let started = Instant::now();
    assert_eq!(admin.reassign("t", 0, Some(&[1, 3])).await.0, 0);
    wait_for(Duration::from_secs(10), || async {
        admin.ongoing().await.is_empty().then_some(())
    })
    .await
    .expect("move finishes");
    let secs = started.elapsed().as_secs_f64();
    assert!(
        (1.5..=3.5).contains(&secs),
        "200 MB at 100 MB/s took {secs:.1} s"
    );
    let truth = sim.truth();
    assert!(truth.reassignments.finished[0]
        .record
        .limited_by
        .contains("link"));
    sim.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stopped_brokers_leaders_fail_over_and_return_with_preferred_election() {
    let parts = (0..6)
        .map(|p| {
            let r = [1 + p % 3, 1 + (p + 1) % 3, 1 + (p + 2) % 3];
            partition("t", p, &r, 1000)
        })
        .collect();
    let sim = start(snapshot(brokers(3), parts), 1.0).await;
    let admin = Admin::new(&sim);
    assert_eq!(sim.truth().controller, 1);
    sim.stop_broker(1).await.expect("stop 1");
    assert!(
        Client::connect(&admin.addrs[&1]).await.is_err(),
        "a stopped broker refuses connections"
    );
    let md = admin.metadata().await;
    assert_eq!(
        md.brokers.iter().map(|b| b.node_id.0).collect::<Vec<_>>(),
        vec![2, 3]
    );
    assert!(
        [2, 3].contains(&md.controller_id.0),
        "metadata names a live broker as controller (KRaft)"
    );
    assert_eq!(sim.truth().controller, 2, "the quorum leader moves");
    for p in &md.topics[0].partitions {
        let replicas: Vec<i32> = p.replica_nodes.iter().map(|b| b.0).collect();
        assert_ne!(p.leader_id.0, 1);
        assert!(
            !p.isr_nodes.iter().any(|b| b.0 == 1),
            "broker 1 left the isr"
        );
        assert_eq!(
            p.offline_replicas.iter().map(|b| b.0).collect::<Vec<_>>(),
            vec![1]
        );
        let expected = replicas
            .iter()
            .copied()
            .find(|b| *b != 1)
            .expect("another replica");
        assert_eq!(
            p.leader_id.0, expected,
            "lowest index in replica order takes over"
        );
        if replicas[0] == 1 {
            assert!(p.leader_epoch > 0, "a new leader bumps the epoch");
        }
    }
    sim.start_broker(1).await.expect("start 1");
    let md = admin.metadata().await;
    for p in &md.topics[0].partitions {
        assert!(
            p.isr_nodes.iter().any(|b| b.0 == 1),
            "broker 1 rejoins the isr"
        );
        assert_ne!(p.leader_id.0, 1, "leadership does not return by itself");
    }
    let results = admin.elect_preferred("t", &[0, 1, 2, 3, 4, 5]).await;
    for (p, code) in results {
        if p % 3 == 0 {
            assert_eq!(code, 0, "partition {p} elected its preferred leader");
        } else {
            assert_eq!(code, 84, "partition {p}: ELECTION_NOT_NEEDED");
        }
    }
    let md = admin.metadata().await;
    for p in &md.topics[0].partitions {
        assert_eq!(p.leader_id.0, p.replica_nodes[0].0);
    }
    sim.shutdown().await;
}

/// A restarted broker listens on its old port, as a real broker does; when another socket was
/// given that port while it was down (a cluster on free ports: another process's connection), it
/// takes another free port, which the metadata names, instead of failing to start.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_restarted_broker_whose_old_port_was_taken_listens_on_another() {
    let parts = vec![partition("t", 0, &[1, 2, 3], 1000)];
    let sim = start(snapshot(brokers(3), parts), 1.0).await;
    let old = sim.broker_address(2).expect("broker 2");
    sim.stop_broker(2).await.expect("stop 2");
    let squatter =
        std::net::TcpListener::bind(&old).expect("the old port is free while it is down");
    sim.start_broker(2).await.expect("it starts anyway");
    let new = sim.broker_address(2).expect("broker 2");
    assert_ne!(new, old);
    assert!(Client::connect(&new).await.is_ok(), "it listens on {new}");
    let admin = Admin::new(&sim);
    let md = admin.metadata().await;
    let named = md
        .brokers
        .iter()
        .find(|b| b.node_id.0 == 2)
        .map(|b| format!("{}:{}", b.host.as_str(), b.port))
        .expect("broker 2 in the metadata");
    assert_eq!(named, new);
    drop(squatter);
    sim.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_partition_goes_offline_when_no_replica_is_left() {
    let sim = start(
        snapshot(
            brokers(3),
            vec![
                partition("t", 0, &[1, 2], 1000),
                partition("t", 1, &[3, 2], 1000),
            ],
        ),
        1.0,
    )
    .await;
    let admin = Admin::new(&sim);
    sim.stop_broker(1).await.expect("stop");
    sim.stop_broker(2).await.expect("stop");
    let md = admin.metadata().await;
    let p0 = &md.topics[0].partitions[0];
    assert_eq!(p0.leader_id.0, -1);
    assert_eq!(p0.error_code, 5, "LEADER_NOT_AVAILABLE");
    assert_eq!(
        p0.isr_nodes.iter().map(|b| b.0).collect::<Vec<_>>(),
        vec![2],
        "the last in-sync replica stays in the isr"
    );
    assert_eq!(md.topics[0].partitions[1].leader_id.0, 3);
    assert_eq!(sim.truth().offline_partitions, 1);
    // Unclean election has nothing to elect while every replica is down.
    let mut c = admin.any().await;
    let mut req = ElectLeadersRequest::default();
    req.election_type = 1;
    let mut tp = elect_leaders_request::TopicPartitions::default();
    tp.topic = sb("t").into();
    tp.partitions = vec![0];
    req.topic_partitions = Some(vec![tp]);
    let resp = c.send(&req, 1).await.expect("elect");
    assert_eq!(
        resp.replica_election_results[0].partition_result[0].error_code,
        83
    );
    // The last in-sync replica coming back leads again.
    sim.start_broker(2).await.expect("start");
    assert_eq!(admin.leader("t", 0).await, 2);
    assert_eq!(sim.truth().offline_partitions, 0);
    sim.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancelling_a_reassignment_restores_the_original_replicas() {
    let sim = start(
        snapshot(brokers(4), vec![partition("t", 0, &[1, 2], 50_000_000)]),
        1.0,
    )
    .await;
    let admin = Admin::new(&sim);
    admin
        .alter_configs(
            BROKER,
            "",
            &[("follower.replication.throttled.rate", Some("1000"))],
        )
        .await;
    admin
        .alter_configs(
            TOPIC,
            "t",
            &[("follower.replication.throttled.replicas", Some("*"))],
        )
        .await;
    assert_eq!(admin.reassign("t", 0, Some(&[3, 4])).await.0, 0);
    assert_eq!(
        admin.ongoing().await,
        vec![("t".to_string(), 0, vec![3, 4, 1, 2], vec![3, 4], vec![1, 2])]
    );
    let p = admin.partition("t", 0).await;
    assert_eq!(
        p.replica_nodes.len(),
        4,
        "replicas are target plus originals during the move"
    );
    assert_eq!(admin.reassign("t", 0, None).await.0, 0);
    assert!(admin.ongoing().await.is_empty());
    let p = admin.partition("t", 0).await;
    assert_eq!(
        p.replica_nodes.iter().map(|b| b.0).collect::<Vec<_>>(),
        vec![1, 2]
    );
    assert_eq!(
        p.isr_nodes.iter().map(|b| b.0).collect::<Vec<_>>(),
        vec![1, 2]
    );
    assert_eq!(p.leader_id.0, 1);
    let (code, msg) = admin.reassign("t", 0, None).await;
    assert_eq!(code, 85, "NO_REASSIGNMENT_IN_PROGRESS: {msg:?}");
    let truth = sim.truth();
    assert_eq!(truth.reassignments.finished.len(), 1);
    assert_eq!(
        format!("{:?}", truth.reassignments.finished[0].record.state),
        "Cancelled"
    );
    sim.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancelling_a_reassignment_keeps_the_current_lists_order_as_kafka_does_which_can_scramble_the_original(
) {
    let sim = start(
        snapshot(
            brokers(3),
            vec![
                partition("t", 0, &[1, 2], 50_000_000),
                partition("t", 1, &[2, 1], 50_000_000),
            ],
        ),
        1.0,
    )
    .await;
    let admin = Admin::new(&sim);
    admin
        .alter_configs(
            BROKER,
            "",
            &[("follower.replication.throttled.rate", Some("1000"))],
        )
        .await;
    admin
        .alter_configs(
            TOPIC,
            "t",
            &[("follower.replication.throttled.replicas", Some("*"))],
        )
        .await;
    // [1,2] -> [3,2]: Kafka lists the target then the removed replicas: [3,2,1].
    assert_eq!(admin.reassign("t", 0, Some(&[3, 2])).await.0, 0);
    assert_eq!(admin.reassign("t", 1, Some(&[3, 1])).await.0, 0);
    assert_eq!(
        admin.ongoing().await,
        vec![
            ("t".to_string(), 0, vec![3, 2, 1], vec![3], vec![1]),
            ("t".to_string(), 1, vec![3, 1, 2], vec![3], vec![2]),
        ]
    );
    assert_eq!(admin.reassign("t", 0, None).await.0, 0);
    assert_eq!(admin.reassign("t", 1, None).await.0, 0);
    // The adding replica leaves, the rest keep the current order: the set is back, not the order.
    let p = admin.partition("t", 0).await;
    assert_eq!(
        p.replica_nodes.iter().map(|b| b.0).collect::<Vec<_>>(),
        vec![2, 1]
    );
    assert_eq!(p.leader_id.0, 1, "leadership stays where it was");
    let p = admin.partition("t", 1).await;
    assert_eq!(
        p.replica_nodes.iter().map(|b| b.0).collect::<Vec<_>>(),
        vec![1, 2]
    );
    assert_eq!(p.leader_id.0, 2);
    // A reassignment to the same set in another order completes at once: nothing is copied.
    assert_eq!(admin.reassign("t", 0, Some(&[1, 2])).await.0, 0);
    assert!(admin.ongoing().await.is_empty());
    let p = admin.partition("t", 0).await;
    assert_eq!(
        p.replica_nodes.iter().map(|b| b.0).collect::<Vec<_>>(),
        vec![1, 2]
    );
    sim.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reassignments_to_unknown_or_stopped_brokers_are_refused() {
    let sim = start(
        snapshot(brokers(3), vec![partition("t", 0, &[1, 2], 10)]),
        1.0,
    )
    .await;
    let admin = Admin::new(&sim);
    assert_eq!(admin.reassign("t", 0, Some(&[1, 9])).await.0, 39);
    assert_eq!(admin.reassign("t", 0, Some(&[1, 1])).await.0, 39);
    assert_eq!(admin.reassign("nope", 0, Some(&[1, 2])).await.0, 3);
    sim.stop_broker(3).await.expect("stop");
    assert_eq!(admin.reassign("t", 0, Some(&[1, 3])).await.0, 39);
    sim.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn logs_grow_at_the_produce_rate() {
    let mut p = partition("t", 0, &[1, 2], 0);
    p.producer_msg_rate = 1000.0;
    p.producer_byte_rate = 100_000.0;
    let sim = start(snapshot(brokers(2), vec![p]), 10.0).await;
    let admin = Admin::new(&sim);
    let t0 = sim.now_ms();
    let (_, end0) = admin.offsets("t", 0).await;
    tokio::time::sleep(Duration::from_millis(1000)).await;
    let t1 = sim.now_ms();
    let (start1, end1) = admin.offsets("t", 0).await;
    let secs = (t1 - t0) as f64 / 1000.0;
    let grown = (end1 - end0) as f64;
    assert!(
        (grown / secs - 1000.0).abs() < 150.0,
        "grew {grown} in {secs} sim s"
    );
    assert_eq!(start1, 0);
    // Size follows the byte rate (DescribeLogDirs, sent to the leader).
    let mut c = admin.to(1).await;
    let mut req = DescribeLogDirsRequest::default();
    req.topics = None;
    let resp = c.send(&req, 4).await.expect("log dirs");
    let size: i64 = resp
        .results
        .iter()
        .flat_map(|r| r.topics.iter())
        .flat_map(|t| t.partitions.iter())
        .map(|p| p.partition_size)
        .sum();
    assert!(
        size as f64 >= end1 as f64 * 100.0 * 0.9,
        "size {size} for {end1} messages of 100 bytes"
    );
    sim.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn retention_bytes_trims_the_log_start() {
    let mut p = partition("t", 0, &[1], 0);
    p.producer_msg_rate = 1000.0;
    p.producer_byte_rate = 100_000.0;
    let sim = start(snapshot(brokers(1), vec![p]), 20.0).await;
    let admin = Admin::new(&sim);
    assert_eq!(
        admin
            .alter_configs(TOPIC, "t", &[("retention.bytes", Some("500000"))])
            .await,
        0
    );
    tokio::time::sleep(Duration::from_millis(600)).await;
    let (start, end) = admin.offsets("t", 0).await;
    assert!(start > 0, "log start moved ({start}..{end})");
    assert!(
        ((end - start) as f64 - 5000.0).abs() < 200.0,
        "holds 500 kB = 5000 messages: {start}..{end}"
    );
    sim.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn consumer_groups_commit_at_their_consume_rate() {
    let parts = (0..2)
        .map(|i| {
            let mut p = partition("t", i, &[1, 2], 0);
            p.producer_msg_rate = 200.0;
            p.producer_byte_rate = 20_000.0;
            // One group reading at half the produce rate.
            p.consumer_msg_rate = 100.0;
            p.consumer_byte_rate = 10_000.0;
            p
        })
        .collect();
    let sim = start(snapshot(brokers(2), parts), 10.0).await;
    let admin = Admin::new(&sim);
    let group = "t-consumer-0";
    let fetch = || async {
        let mut c = admin.coordinator(group).await;
        let mut req = OffsetFetchRequest::default();
        let mut g = offset_fetch_request::OffsetFetchRequestGroup::default();
        g.group_id = sb(group).into();
        g.topics = None;
        req.groups = vec![g];
        let resp = c.send(&req, 8).await.expect("offset fetch");
        assert_eq!(resp.groups[0].error_code, 0);
        let t = &resp.groups[0].topics[0];
        assert_eq!(t.name.as_str(), "t");
        t.partitions
            .iter()
            .map(|p| p.committed_offset)
            .collect::<Vec<i64>>()
    };
    let t0 = sim.now_ms();
    let o0 = fetch().await;
    tokio::time::sleep(Duration::from_millis(1000)).await;
    let o1 = fetch().await;
    let secs = (sim.now_ms() - t0) as f64 / 1000.0;
    for (a, b) in o0.iter().zip(o1.iter()) {
        let rate = (b - a) as f64 / secs;
        assert!(
            (rate - 100.0).abs() < 20.0,
            "committed {rate}/s, expected 100/s"
        );
    }
    let (_, end) = admin.offsets("t", 0).await;
    assert!(
        end - o1[0] > 500,
        "lag grows when consumers read slower than producers"
    );
    sim.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn max_concurrent_moves_per_broker_is_recorded() {
    let parts = (0..3)
        .map(|p| partition("t", p, &[1, 2], 10_000_000))
        .collect();
    let sim = start(snapshot(brokers(4), parts), 1.0).await;
    let admin = Admin::new(&sim);
    admin
        .alter_configs(
            BROKER,
            "",
            &[("follower.replication.throttled.rate", Some("1000"))],
        )
        .await;
    admin
        .alter_configs(
            TOPIC,
            "t",
            &[("follower.replication.throttled.replicas", Some("*"))],
        )
        .await;
    for p in 0..3 {
        assert_eq!(admin.reassign("t", p, Some(&[4, 2])).await.0, 0);
    }
    assert_eq!(
        admin.reassign("t", 0, Some(&[3, 2])).await.0,
        0,
        "a new target replaces the old one"
    );
    let truth = sim.truth();
    let b = |id: i32| {
        truth
            .brokers
            .iter()
            .find(|b| b.id == id)
            .expect("broker")
            .clone()
    };
    assert_eq!(b(4).max_concurrent_moves_as_destination, 3);
    assert_eq!(b(3).max_concurrent_moves_as_destination, 1);
    assert_eq!(
        b(1).max_concurrent_moves_as_participant,
        3,
        "removing and leading"
    );
    assert_eq!(b(2).max_concurrent_moves_as_destination, 0);
    assert_eq!(truth.reassignments.in_flight.len(), 3);
    sim.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_restarted_broker_catches_up_before_rejoining_the_isr() {
    let mut p = partition("t", 0, &[1, 2], 1_000_000);
    p.producer_msg_rate = 1000.0;
    p.producer_byte_rate = 5_000_000.0;
    // 5 MB missed at 2 MB/s: about 2.5 s of catching up.
    let sim = start_with(snapshot(brokers(2), vec![p]), |c| c.link_speed = 2e6).await;
    let admin = Admin::new(&sim);
    sim.stop_broker(2).await.expect("stop");
    tokio::time::sleep(Duration::from_millis(1000)).await;
    sim.start_broker(2).await.expect("start");
    let p = admin.partition("t", 0).await;
    assert_eq!(
        p.isr_nodes.iter().map(|b| b.0).collect::<Vec<_>>(),
        vec![1],
        "still catching up"
    );
    let back = wait_for(Duration::from_secs(10), || async {
        let p = admin.partition("t", 0).await;
        (p.isr_nodes.len() == 2).then_some(())
    })
    .await;
    assert!(
        back.is_some(),
        "broker 2 rejoins the isr after copying what it missed"
    );
    sim.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_snapshot_loads_and_reads_back_as_it_was() {
    let mut s = snapshot(brokers(4), vec![]);
    s.brokers[2].state = ballast_model::BrokerState::Maintenance;
    s.brokers[3].state = ballast_model::BrokerState::Down;
    let mut a = partition("orders", 0, &[1, 2, 3], 1_073_741_824);
    a.min_insync_replicas = 2;
    a.producer_msg_rate = 120.5;
    a.producer_byte_rate = 61440.0;
    a.consumer_msg_rate = 241.0;
    a.consumer_byte_rate = 122880.0;
    a.last_moved_at = Some("2026-11-20T09:00:00Z".into());
    let mut b = partition("orders", 1, &[2, 1, 3], 5_000);
    b.min_insync_replicas = 2;
    b.isr = Some(vec![2, 1]);
    let mut c = partition("state", 0, &[3, 1], 7_000);
    c.compacted = true;
    let mut d = partition("cold", 0, &[4], 9_000);
    d.leader = None;
    s.partitions = vec![a, b, c, d];
    let sim = start(s.clone(), 1.0).await;
    let back = sim.snapshot();
    assert_eq!(back.brokers, s.brokers);
    assert_eq!(back.cluster_id, s.cluster_id);
    let mut want = s.partitions.clone();
    want.sort_by(|x, y| (&x.topic, x.partition).cmp(&(&y.topic, y.partition)));
    for (w, g) in want.iter().zip(back.partitions.iter()) {
        let mut g = g.clone();
        // Sizes grow with traffic while the test runs; compare the rest exactly.
        assert!(g.size_bytes >= w.size_bytes && g.size_bytes - w.size_bytes < 1_000_000);
        g.size_bytes = w.size_bytes;
        assert_eq!(&g, w);
    }
    assert_eq!(back.partitions.len(), want.len());
    let md = Admin::new(&sim).metadata().await;
    let cold = md
        .topics
        .iter()
        .find(|t| t.name.as_ref().map(|n| n.as_str()) == Some("cold"))
        .expect("cold");
    assert_eq!(cold.partitions[0].leader_id.0, -1);
    sim.shutdown().await;
}

fn quorum_request() -> DescribeQuorumRequest {
    let mut p = describe_quorum_request::PartitionData::default();
    p.partition_index = 0;
    let mut t = describe_quorum_request::TopicData::default();
    t.topic_name = TopicName(sb("__cluster_metadata"));
    t.partitions = vec![p];
    let mut req = DescribeQuorumRequest::default();
    req.topics = vec![t];
    req
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn like_kraft_metadata_names_a_live_broker_per_answer_and_describe_quorum_names_the_active_controller(
) {
    let sim = start(
        snapshot(brokers(3), vec![partition("t", 0, &[1, 2, 3], 1000)]),
        1.0,
    )
    .await;
    let admin = Admin::new(&sim);
    sim.move_controller(2).expect("move the quorum leader");
    assert_eq!(sim.truth().controller, 2);
    let mut seen = std::collections::BTreeSet::new();
    for broker in [1, 2, 3] {
        let mut c = admin.to(broker).await;
        for _ in 0..10 {
            let mut req = MetadataRequest::default();
            req.topics = Some(Vec::new());
            let md = c.send(&req, 12).await.expect("metadata");
            assert!((1..=3).contains(&md.controller_id.0));
            seen.insert(md.controller_id.0);
        }
        for version in 0..=2 {
            let q = c
                .send(&quorum_request(), version)
                .await
                .expect("describequorum");
            assert_eq!(q.error_code, 0);
            let p = &q.topics[0].partitions[0];
            assert_eq!(p.leader_id.0, 2, "every broker names the quorum leader");
            assert!(p.leader_epoch >= 2, "a moved leadership is a new epoch");
            assert_eq!(
                p.current_voters
                    .iter()
                    .map(|r| r.replica_id.0)
                    .collect::<Vec<_>>(),
                vec![1, 2, 3]
            );
            assert!(p
                .current_voters
                .iter()
                .all(|r| r.log_end_offset == p.high_watermark));
            assert_eq!(q.nodes.len(), if version >= 2 { 3 } else { 0 });
        }
    }
    assert!(
        seen.len() > 1,
        "the controller id in Metadata varies between answers: {seen:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stopped_quorum_leader_hands_over_and_falls_behind_the_metadata_log() {
    let sim = start(
        snapshot(brokers(3), vec![partition("t", 0, &[1, 2, 3], 1000)]),
        50.0,
    )
    .await;
    let admin = Admin::new(&sim);
    let before = sim.truth();
    assert_eq!(before.controller, 1);
    sim.stop_broker(1).await.expect("stop 1");
    tokio::time::sleep(Duration::from_millis(100)).await;
    let mut c = admin.to(3).await;
    let q = c.send(&quorum_request(), 1).await.expect("describequorum");
    let p = &q.topics[0].partitions[0];
    assert_eq!(p.leader_id.0, 2);
    assert!(p.leader_epoch > before.controller_epoch);
    let stopped = p
        .current_voters
        .iter()
        .find(|r| r.replica_id.0 == 1)
        .expect("voter 1");
    assert!(
        stopped.log_end_offset < p.high_watermark,
        "a stopped voter lags: {} < {}",
        stopped.log_end_offset,
        p.high_watermark
    );
    assert!(
        sim.move_controller(1).is_err(),
        "a stopped broker cannot lead"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn describe_log_dirs_reports_no_offset_lag_for_current_logs_as_kafka_does() {
    let sim = start(
        snapshot(brokers(3), vec![partition("t", 0, &[1, 2, 3], 100_000)]),
        1.0,
    )
    .await;
    sim.set_rates(
        "t",
        None,
        &ballast_simcluster::RatesUpdate {
            producer_msg_rate: Some(100.0),
            producer_byte_rate: Some(10_000.0),
            ..Default::default()
        },
    )
    .expect("rates");
    sim.stop_broker(3).await.expect("stop 3");
    tokio::time::sleep(Duration::from_millis(300)).await;
    sim.start_broker(3).await.expect("start 3");
    let admin = Admin::new(&sim);
    for broker in [1, 2, 3] {
        let mut c = admin.to(broker).await;
        let dirs = c
            .send(&DescribeLogDirsRequest::default(), 4)
            .await
            .expect("describelogdirs");
        for r in &dirs.results {
            for t in &r.topics {
                for p in &t.partitions {
                    assert_eq!(
                        p.offset_lag, 0,
                        "broker {broker}: a current log's offset lag is 0"
                    );
                }
            }
        }
    }
}
