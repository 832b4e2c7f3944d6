//! The observed view: state tables replaced by every sample, readings pruned and downsampled.

mod common;

use ballast_schema::{
    BrokerReading, ClusterFacts, Downsample, ObservedBroker, ObservedGroup, ObservedGroupOffset,
    ObservedLogDir, ObservedPartition, ObservedReplica, ObservedTopic, ObservedWrite,
    PartitionCounter, PartitionRates, PartitionReading, ReadingsPolicy,
};
use common::fresh_store;

const MIN: i64 = 60_000;
const HOUR: i64 = 60 * MIN;
const DAY: i64 = 24 * HOUR;

fn broker(id: i32, alive: bool, at: i64) -> ObservedBroker {
    ObservedBroker {
        broker_id: id,
        host: alive.then(|| "127.0.0.1".to_string()),
        port: alive.then_some(9092 + id),
        rack: alive.then(|| format!("r{id}")),
        alive,
        first_seen_ms: alive.then_some(at),
        last_seen_ms: alive.then_some(at),
        log_dirs_read: alive,
        log_dirs_error: None,
    }
}

fn partition(topic: &str, p: i32, latest: i64) -> ObservedPartition {
    ObservedPartition {
        topic: topic.into(),
        partition: p,
        leader: Some(1),
        leader_epoch: Some(3),
        replicas: vec![1, 2],
        isr: vec![1, 2],
        offline_replicas: vec![],
        adding: vec![],
        removing: vec![],
        size_bytes: Some(1000),
        avg_size_bytes: Some(990.5),
        earliest_offset: Some(0),
        local_start_offset: None,
        latest_offset: Some(latest),
        offsets_at_ms: Some(1),
        produced_total: latest,
        consumed_total: latest / 2,
        rates: Some(PartitionRates {
            producer_msg_rate: 10.0,
            producer_byte_rate: 1000.0,
            consumer_msg_rate: 5.0,
            consumer_byte_rate: 500.0,
            window_ms: 30 * MIN,
        }),
    }
}

fn sample(at: i64, topics: &[&str]) -> ObservedWrite {
    let mut w = ObservedWrite {
        cluster: ClusterFacts {
            cluster_id: Some("c1".into()),
            controller_id: Some(1),
            sampled_at_ms: at,
            sample_duration_ms: 12,
            brokers: 2,
            log_dirs_read: 2,
            partitions: topics.len() as u32,
            offsets_read: topics.len() as u32,
            groups: 1,
            groups_read: 1,
            detail: serde_json::json!({"rssBytes": 1}),
            controller_source: Some("quorum".into()),
            metadata_mode: Some("kraft".into()),
            kafka_version_min: Some("3.5".into()),
            kafka_version_max: Some("3.6".into()),
            quorum: Some(serde_json::json!({"leaderId": 1, "leaderEpoch": 4, "voters": []})),
        },
        brokers: vec![broker(1, true, at), broker(2, true, at)],
        ..ObservedWrite::default()
    };
    for t in topics {
        w.topics.push(ObservedTopic {
            name: t.to_string(),
            topic_id: None,
            partitions: 1,
            replication_factor: 2,
            internal: false,
            compacted: false,
            min_insync: Some(1),
            retention_ms: Some(7 * DAY),
            retention_bytes: None,
            cleanup_policy: Some("delete".into()),
            remote_storage: Some(false),
        });
        w.partitions.push(partition(t, 0, 100));
        for b in [1, 2] {
            w.replicas.push(ObservedReplica {
                topic: t.to_string(),
                partition: 0,
                broker_id: b,
                is_future: false,
                log_dir: Some("/d0".into()),
                size_bytes: Some(1000),
                offset_lag: Some(0),
                lag_bytes: Some(if b == 1 { 0 } else { 250 }),
            });
        }
        w.group_offsets.push(ObservedGroupOffset {
            group_id: "g".into(),
            topic: t.to_string(),
            partition: 0,
            committed_offset: 50,
            lag: Some(50),
        });
    }
    w.groups.push(ObservedGroup {
        group_id: "g".into(),
        state: Some("Stable".into()),
        protocol_type: "consumer".into(),
        members: Some(1),
        coordinator: Some(1),
        offsets_read: true,
    });
    w.log_dirs.push(ObservedLogDir {
        broker_id: 1,
        path: "/d0".into(),
        error: None,
        total_bytes: Some(1 << 40),
        usable_bytes: Some(1 << 39),
        used_bytes: 1000,
        replicas: 1,
    });
    w
}

fn reading(broker_id: i32, at_ms: i64, v: f64) -> BrokerReading {
    BrokerReading {
        broker_id,
        at_ms,
        resolution_ms: 0,
        values: [Some(v), Some(v), None, Some(v), Some(v), Some(v), Some(v)],
    }
}

#[test]
fn no_view_exists_before_the_first_sample() {
    let (_dir, store) = fresh_store();
    assert_eq!(store.observed_generation().unwrap(), None);
    assert_eq!(store.observed_cluster().unwrap(), None);
    assert_eq!(store.observed_view().unwrap(), None);
}

#[test]
fn every_sample_replaces_the_state_tables_and_bumps_the_generation() {
    let (_dir, store) = fresh_store();
    let first = sample(1000, &["a", "b"]);
    assert_eq!(store.write_observed(&first).unwrap().generation, 1);
    let view = store.observed_view().unwrap().unwrap();
    assert_eq!(view.cluster.generation, 1);
    assert_eq!(view.cluster.first_sampled_at_ms, 1000);
    assert_eq!(view.cluster.facts, first.cluster);
    assert_eq!(view.topics, first.topics);
    assert_eq!(view.partitions, first.partitions);
    assert_eq!(view.replicas, first.replicas);
    assert_eq!(view.groups, first.groups);
    assert_eq!(view.group_offsets, first.group_offsets);
    assert_eq!(view.log_dirs, first.log_dirs);

    // Topic `a` was deleted: nothing of it remains; history length is kept.
    let second = sample(2000, &["b"]);
    assert_eq!(store.write_observed(&second).unwrap().generation, 2);
    assert_eq!(store.observed_generation().unwrap(), Some(2));
    let view = store.observed_view().unwrap().unwrap();
    assert_eq!(view.cluster.first_sampled_at_ms, 1000);
    assert_eq!(view.cluster.facts.sampled_at_ms, 2000);
    let topics: Vec<&str> = view.topics.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(topics, ["b"]);
    assert_eq!(view.partitions.len(), 1);
    assert!(view.replicas.iter().all(|r| r.topic == "b"));
    assert!(view.group_offsets.iter().all(|o| o.topic == "b"));
}

#[test]
fn the_planning_view_is_the_whole_views_cluster_brokers_topics_and_partitions_without_the_rest() {
    let (_dir, store) = fresh_store();
    assert_eq!(store.observed_view_for_planning().unwrap(), None);
    let mut w = sample(1000, &["a", "b"]);
    w.brokers.push(broker(3, true, 1000));
    store.write_observed(&w).unwrap();
    // Broker 3 went down: the stored view keeps its rack, as planning needs.
    w.brokers[2] = broker(3, false, 2000);
    w.cluster.sampled_at_ms = 2000;
    store.write_observed(&w).unwrap();
    let whole = store.observed_view().unwrap().unwrap();
    let planning = store.observed_view_for_planning().unwrap().unwrap();
    assert_eq!(planning.cluster, whole.cluster);
    assert_eq!(planning.brokers, whole.brokers);
    assert_eq!(planning.topics, whole.topics);
    assert_eq!(planning.partitions, whole.partitions);
    assert!(!whole.replicas.is_empty() && !whole.group_offsets.is_empty());
    assert!(planning.replicas.is_empty());
    assert!(planning.log_dirs.is_empty());
    assert!(planning.groups.is_empty());
    assert!(planning.group_offsets.is_empty());
    assert!(planning.latest_readings.is_empty());
}

#[test]
fn a_partition_without_two_readings_has_null_rates() {
    let (_dir, store) = fresh_store();
    let mut w = sample(1000, &["a"]);
    w.partitions[0].rates = None;
    w.partitions[0].size_bytes = None;
    store.write_observed(&w).unwrap();
    let view = store.observed_view().unwrap().unwrap();
    assert_eq!(view.partitions[0].rates, None);
    assert_eq!(view.partitions[0].size_bytes, None);
}

#[test]
fn a_broker_that_went_down_keeps_its_identity_and_a_forgotten_one_goes() {
    let (_dir, store) = fresh_store();
    let mut w = sample(1000, &["a"]);
    w.brokers.push(broker(3, true, 1000));
    store.write_observed(&w).unwrap();

    // Broker 2 is down (still holds replicas); broker 3 is gone and holds nothing.
    let mut w = sample(5000, &["a"]);
    w.brokers = vec![broker(1, true, 5000), broker(2, false, 5000)];
    store.write_observed(&w).unwrap();
    let view = store.observed_view().unwrap().unwrap();
    let ids: Vec<i32> = view.brokers.iter().map(|b| b.broker_id).collect();
    assert_eq!(ids, [1, 2]);
    let down = &view.brokers[1];
    assert!(!down.alive);
    assert_eq!(down.host.as_deref(), Some("127.0.0.1"));
    assert_eq!(down.rack.as_deref(), Some("r2"));
    assert_eq!(down.first_seen_ms, Some(1000));
    assert_eq!(down.last_seen_ms, Some(1000));
    let up = &view.brokers[0];
    assert_eq!(
        (up.first_seen_ms, up.last_seen_ms),
        (Some(1000), Some(5000))
    );
}

#[test]
fn counters_older_than_the_rate_window_are_pruned_and_cleared_ones_restart() {
    let (_dir, store) = fresh_store();
    let policy = ReadingsPolicy {
        counters_ms: 30 * MIN,
        retention_ms: 7 * DAY,
        downsample: vec![],
        partition_downsample: vec![],
    };
    let counter = |p: i32, at_ms: i64| PartitionCounter {
        topic: "a".into(),
        partition: p,
        at_ms,
        produced_total: at_ms / 1000,
        consumed_total: 0,
        size_bytes: Some(1),
    };
    for i in 0..40 {
        let at = i * MIN;
        let mut w = sample(at, &["a"]);
        w.counters = vec![counter(0, at), counter(1, at)];
        w.policy = Some(policy.clone());
        if i == 39 {
            w.cleared_counters = vec![("a".into(), 1)];
        }
        store.write_observed(&w).unwrap();
    }
    let counters = store.partition_counters().unwrap();
    let of = |p: i32| -> Vec<i64> {
        counters
            .iter()
            .filter(|c| c.partition == p)
            .map(|c| c.at_ms)
            .collect()
    };
    // Window [39 min - 30 min, 39 min]: readings 9..=39.
    assert_eq!(of(0), (9..40).map(|i| i * MIN).collect::<Vec<_>>());
    // Partition 1's counters restarted at the last sample.
    assert_eq!(of(1), vec![39 * MIN]);
}

#[test]
fn broker_readings_are_downsampled_with_age_and_dropped_after_the_retention() {
    let (_dir, store) = fresh_store();
    let policy = ReadingsPolicy {
        counters_ms: 30 * MIN,
        retention_ms: 7 * DAY,
        downsample: vec![
            Downsample {
                after_ms: DAY,
                resolution_ms: 10 * MIN,
            },
            Downsample {
                after_ms: 3 * DAY,
                resolution_ms: HOUR,
            },
        ],
        partition_downsample: vec![],
    };
    // Eight days of one reading per minute for one broker, written a day at a time.
    let start = 100 * DAY;
    let end = start + 8 * DAY;
    let mut at = start;
    while at < end {
        let mut w = sample(at, &[]);
        let day_end = (at + DAY).min(end);
        while at < day_end {
            // The value is the minute of the hour, so a 10-minute average is bucket start + 4.5.
            w.readings.push(reading(1, at, ((at / MIN) % 60) as f64));
            at += MIN;
        }
        w.cluster.sampled_at_ms = at - MIN;
        w.policy = Some(policy.clone());
        store.write_observed(&w).unwrap();
    }
    let now = end - MIN;
    let all = store.broker_readings(Some(1), 0, i64::MAX).unwrap();
    assert!(all.iter().all(|r| r.at_ms >= now - 7 * DAY), "retention");
    let raw: Vec<&BrokerReading> = all.iter().filter(|r| r.resolution_ms == 0).collect();
    let ten: Vec<&BrokerReading> = all.iter().filter(|r| r.resolution_ms == 10 * MIN).collect();
    let hourly: Vec<&BrokerReading> = all.iter().filter(|r| r.resolution_ms == HOUR).collect();
    assert!(raw.iter().all(|r| r.at_ms >= now - DAY - 10 * MIN));
    assert!(raw.len() >= 24 * 60 && raw.len() <= 24 * 60 + 10);
    assert!(ten.iter().all(|r| r.at_ms % (10 * MIN) == 0));
    assert!(ten.iter().all(|r| r.at_ms >= now - 3 * DAY - HOUR));
    assert!(hourly.iter().all(|r| r.at_ms % HOUR == 0));
    assert!(!ten.is_empty() && !hourly.is_empty());
    // Averages: unknown stays unknown, known values are averaged.
    let t = ten[0];
    assert_eq!(t.values[2], None);
    let minute = ((t.at_ms / MIN) % 60) as f64;
    assert!((t.values[0].unwrap() - (minute + 4.5)).abs() < 1e-9);
    assert!((hourly[0].values[0].unwrap() - 29.5).abs() < 1e-9);
    // Roughly a day raw, two days at 10 minutes and four at an hour.
    assert!(all.len() < 24 * 60 + 2 * 144 + 4 * 24 + 50, "{}", all.len());
}

#[test]
fn partition_readings_are_folded_daily_after_a_day_and_dropped_after_the_retention() {
    let (_dir, store) = fresh_store();
    let policy = ReadingsPolicy {
        counters_ms: 30 * MIN,
        retention_ms: 7 * DAY,
        downsample: vec![],
        partition_downsample: vec![Downsample {
            after_ms: DAY,
            resolution_ms: DAY,
        }],
    };
    // Nine days of hourly readings of two partitions of "a"; the rate is the hour of the day and
    // partition 1's size is unknown.
    let start = 100 * DAY;
    for h in 0..9 * 24 {
        let at = start + h * HOUR;
        let mut w = sample(at, &["a"]);
        for p in 0..2 {
            w.partition_readings.push(PartitionReading {
                topic: "a".into(),
                partition: p,
                at_ms: at,
                resolution_ms: 0,
                values: [
                    (p == 0).then_some(1000.0),
                    Some((h % 24) as f64),
                    None,
                    None,
                    None,
                ],
            });
        }
        w.policy = Some(policy.clone());
        store.write_observed(&w).unwrap();
    }
    let now = start + (9 * 24 - 1) * HOUR;
    assert_eq!(store.latest_partition_reading_ms().unwrap(), Some(now));
    let all = store.partition_readings("a", None, 0, i64::MAX).unwrap();
    assert!(all.iter().all(|r| r.at_ms >= now - 7 * DAY), "retention");
    let one = store.partition_readings("a", Some(0), 0, i64::MAX).unwrap();
    assert!(one.iter().all(|r| r.partition == 0));
    let raw: Vec<&PartitionReading> = one.iter().filter(|r| r.resolution_ms == 0).collect();
    let daily: Vec<&PartitionReading> = one.iter().filter(|r| r.resolution_ms == DAY).collect();
    assert!(
        raw.iter().all(|r| r.at_ms >= now - 2 * DAY),
        "raw for about a day"
    );
    assert!(raw.len() >= 24 && raw.len() <= 48, "{}", raw.len());
    assert!((5..=7).contains(&daily.len()), "{}", daily.len());
    for d in &daily {
        assert_eq!(d.at_ms % DAY, 0);
        assert_eq!(d.values[0], Some(1000.0));
        // A whole day of hours 0..23 averages 11.5.
        assert!((d.values[1].unwrap() - 11.5).abs() < 1e-9, "{:?}", d.values);
        assert_eq!(d.values[2], None, "unknown stays unknown");
    }
    let p1 = store.partition_readings("a", Some(1), 0, i64::MAX).unwrap();
    assert!(p1.iter().all(|r| r.values[0].is_none()));
    assert!(store
        .partition_readings("b", None, 0, i64::MAX)
        .unwrap()
        .is_empty());
}

#[test]
fn the_view_carries_the_newest_readings_of_every_broker() {
    let (_dir, store) = fresh_store();
    let mut w = sample(1000, &["a"]);
    w.readings = vec![reading(1, 1000, 1.0), reading(2, 1000, 2.0)];
    store.write_observed(&w).unwrap();
    let mut w = sample(2000, &["a"]);
    w.readings = vec![reading(1, 2000, 3.0), reading(2, 2000, 4.0)];
    store.write_observed(&w).unwrap();
    let view = store.observed_view().unwrap().unwrap();
    let latest: Vec<(i32, i64, Option<f64>)> = view
        .latest_readings
        .iter()
        .map(|r| (r.broker_id, r.at_ms, r.values[0]))
        .collect();
    assert_eq!(latest, [(1, 2000, Some(3.0)), (2, 2000, Some(4.0))]);
    assert_eq!(
        view.latest_readings[0].get(ballast_model::Load::LeaderCount),
        Some(3.0)
    );
}

#[test]
fn the_observers_totals_and_offsets_can_be_reloaded_without_the_whole_view() {
    let (_dir, store) = fresh_store();
    let w = sample(1000, &["a", "b"]);
    store.write_observed(&w).unwrap();
    let totals = store.partition_totals().unwrap();
    assert_eq!(totals.len(), 2);
    assert_eq!(
        (
            totals[0].topic.as_str(),
            totals[0].latest_offset,
            totals[0].produced_total,
            totals[0].consumed_total
        ),
        ("a", Some(100), 100, 50)
    );
    assert_eq!(store.group_offsets().unwrap(), w.group_offsets);
}

#[test]
fn the_brokers_a_write_leaves_in_the_view_are_the_ones_it_says_it_leaves() {
    let (_dir, store) = fresh_store();
    assert!(store.observed_brokers().unwrap().is_empty());
    let mut first = sample(1_000, &["t"]);
    first.brokers = vec![
        broker(1, true, 1_000),
        broker(2, true, 1_000),
        broker(3, true, 1_000),
    ];
    let before = store.observed_brokers().unwrap();
    let expected = first.brokers_after(&before);
    store.write_observed(&first).unwrap();
    assert_eq!(store.observed_brokers().unwrap(), expected);
    // Broker 1 moves rack, 2 goes down (no host, port or rack: keeps them), 3 is forgotten,
    // 4 is new, and 1 is named twice (the second merges into the first).
    let mut second = sample(2_000, &["t"]);
    let mut moved = broker(1, true, 2_000);
    moved.rack = Some("r9".into());
    let mut again = broker(1, true, 2_500);
    again.host = None;
    again.rack = Some("r9".into());
    again.log_dirs_error = Some("timeout".into());
    second.brokers = vec![
        moved,
        broker(2, false, 2_000),
        broker(4, true, 2_000),
        again,
    ];
    let before = store.observed_brokers().unwrap();
    let expected = second.brokers_after(&before);
    store.write_observed(&second).unwrap();
    let view = store.observed_view().unwrap().expect("view");
    assert_eq!(view.brokers, expected);
    assert_eq!(store.observed_brokers().unwrap(), expected);
    let ids: Vec<i32> = expected.iter().map(|b| b.broker_id).collect();
    assert_eq!(ids, vec![1, 2, 4]);
    assert_eq!(expected[0].rack.as_deref(), Some("r9"));
    assert_eq!(expected[0].host.as_deref(), Some("127.0.0.1"));
    assert_eq!(expected[0].first_seen_ms, Some(1_000));
    assert_eq!(expected[0].last_seen_ms, Some(2_500));
    assert_eq!(
        expected[1].rack.as_deref(),
        Some("r2"),
        "a down broker keeps its rack"
    );
    assert!(!expected[1].alive);
}
