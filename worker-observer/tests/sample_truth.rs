//! One sample against the simulator's own truth: the reads sent at once and batched (log dirs
//! of every broker, offsets of every leader, committed offsets of many groups a request) give
//! exactly what the cluster holds and what the one-at-a-time reads give.

use std::collections::BTreeMap;
use std::time::Duration;

use ballast_kafka::{Client, ClientConfig, OffsetSpec, TopicPartition};
use ballast_observer::sample;
use ballast_simcluster::{GenerateParams, Scenario, SimCluster, SimConfig};

/// A cluster whose clock all but stands still, so the truth read after the sample is the one it
/// read.
async fn frozen(groups: u32) -> (SimCluster, Client) {
    let sim = SimCluster::start(SimConfig {
        scenario: Scenario::Generate(GenerateParams {
            brokers: 6,
            racks: 3,
            topics: 12,
            partitions_per_topic: 6,
            groups: Some(groups),
            seed: 5,
            ..GenerateParams::default()
        }),
        speed: 1e-9,
        tick: Duration::from_millis(20),
        ..SimConfig::default()
    })
    .await
    .expect("simulated cluster starts");
    let client = Client::connect(ClientConfig::plaintext(&sim.bootstrap()))
        .await
        .expect("client connects");
    (sim, client)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sample_holds_every_groups_committed_offsets_and_every_partitions_offsets_as_the_cluster_does(
) {
    let (sim, client) = frozen(30).await;
    let s = sample::take(&client, 0).await.expect("a sample");

    let truth = sim.committed_offsets();
    assert_eq!(truth.len(), 30);
    assert_eq!(
        s.groups.keys().collect::<Vec<_>>(),
        truth.keys().collect::<Vec<_>>()
    );
    let read: BTreeMap<String, BTreeMap<(String, i32), i64>> = s
        .committed
        .iter()
        .map(|(g, offsets)| {
            let offsets = offsets
                .iter()
                .map(|(tp, o)| ((tp.topic.clone(), tp.partition), *o))
                .collect();
            (g.clone(), offsets)
        })
        .collect();
    assert_eq!(read, truth);

    let logs = sim.log_offsets();
    assert_eq!(s.partitions.len(), logs.len());
    for ((topic, partition), (start, end)) in &logs {
        let tp = TopicPartition::new(topic.clone(), *partition);
        let p = &s.partitions[&tp];
        assert_eq!(p.earliest, Some(*start), "{tp}");
        assert_eq!(p.latest, Some(*end), "{tp}");
    }
    // Every replica of every partition was read from its broker's log dirs.
    let replicas: usize = s.partitions.values().map(|p| p.replicas.len()).sum();
    assert_eq!(s.replica_count(), replicas);
    assert!(s.stray_replicas.is_empty());
    assert!(s
        .partitions
        .values()
        .all(|p| p.replicas.iter().all(|b| p.log(*b).is_some())));
    assert!(s.log_dirs.values().all(Result::is_ok));
    assert!(s.groups_error.is_none());
    sim.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn committed_offsets_of_many_groups_in_one_request_are_those_read_one_group_at_a_time() {
    let (sim, client) = frozen(40).await;
    let mut ids: Vec<String> = sim.committed_offsets().into_keys().collect();
    // A group that does not exist reads as no offsets, as on Kafka.
    ids.push("no-such-group".to_string());
    let batched = client
        .committed_offsets_of_groups(&ids)
        .await
        .expect("batched read");
    assert_eq!(batched.len(), ids.len());
    for (g, b) in ids.iter().zip(&batched) {
        assert_eq!(&b.group_id, g);
        assert!(b.error.is_none(), "{g}: {:?}", b.error);
        let one = client.committed_offsets(g, None).await.expect("one group");
        assert_eq!(b.offsets, one, "{g}");
    }
    assert!(batched.last().is_some_and(|b| b.offsets.is_empty()));
    // Latest offsets from every leader at once are the log ends.
    let logs = sim.log_offsets();
    let tps: Vec<TopicPartition> = logs
        .keys()
        .map(|(t, p)| TopicPartition::new(t.clone(), *p))
        .collect();
    let latest = client
        .list_offsets(&tps, OffsetSpec::Latest)
        .await
        .expect("offsets");
    for o in latest {
        assert_eq!(
            o.offset,
            logs.get(&(o.topic.clone(), o.partition)).map(|l| l.1)
        );
    }
    sim.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tick_stores_every_partitions_offsets_every_replicas_log_and_every_groups_offsets_and_lag_as_the_cluster_holds_them(
) {
    let (sim, client) = frozen(25).await;
    let dir = tempfile::tempdir().expect("temp dir");
    let db = dir.path().join("ballast.db");
    ballast_schema::Store::migrate(&db).expect("migrate");
    let store = ballast_schema::Store::open(&db).expect("open");
    let windows = ballast_observer::derive::Windows {
        rate_window_ms: 60_000,
        retention_ms: 3_600_000,
        partition_reading_ms: 1,
    };
    let mut history = None;
    let report = ballast_observer::tick(&client, &store, &mut history, windows, 1_000)
        .await
        .expect("a tick");
    let view = store.observed_view().expect("view").expect("a view");
    let truth = sim.truth();
    let logs = sim.log_offsets();

    // Partitions: the log start and end of every one.
    assert_eq!(view.partitions.len(), logs.len());
    assert_eq!(report.summary.partitions, logs.len());
    for p in &view.partitions {
        let (start, end) = logs[&(p.topic.clone(), p.partition)];
        assert_eq!(
            (p.earliest_offset, p.latest_offset),
            (Some(start), Some(end)),
            "{}-{}",
            p.topic,
            p.partition
        );
    }
    // Replicas: every one with its log dir and size; the partition's size is its leader's.
    let mut per_broker: BTreeMap<i32, usize> = BTreeMap::new();
    let mut disk: BTreeMap<i32, i64> = BTreeMap::new();
    for r in &view.replicas {
        assert!(!r.is_future);
        assert!(r.log_dir.is_some() && r.size_bytes.is_some(), "{r:?}");
        *per_broker.entry(r.broker_id).or_default() += 1;
        *disk.entry(r.broker_id).or_default() += r.size_bytes.unwrap_or(0);
        let p = view
            .partitions
            .iter()
            .find(|p| p.topic == r.topic && p.partition == r.partition)
            .expect("its partition");
        if p.leader == Some(r.broker_id) {
            assert_eq!(p.size_bytes, r.size_bytes);
        }
    }
    for b in &truth.brokers {
        assert_eq!(per_broker.get(&b.id).copied().unwrap_or(0), b.replicas);
    }
    for reading in &view.latest_readings {
        assert_eq!(
            reading.get(ballast_model::Load::DiskBytes),
            Some(disk.get(&reading.broker_id).copied().unwrap_or(0) as f64),
            "broker {}",
            reading.broker_id
        );
    }
    // Groups: every committed offset, lagging the log end by the difference.
    let committed = sim.committed_offsets();
    assert_eq!(view.groups.len(), committed.len());
    assert!(view.groups.iter().all(|g| g.offsets_read));
    let stored: BTreeMap<String, BTreeMap<(String, i32), i64>> =
        view.group_offsets.iter().fold(BTreeMap::new(), |mut m, o| {
            m.entry(o.group_id.clone())
                .or_default()
                .insert((o.topic.clone(), o.partition), o.committed_offset);
            m
        });
    let committed: BTreeMap<String, BTreeMap<(String, i32), i64>> = committed
        .into_iter()
        .filter(|(_, offsets)| !offsets.is_empty())
        .collect();
    assert_eq!(stored, committed);
    for o in &view.group_offsets {
        let end = logs[&(o.topic.clone(), o.partition)].1;
        assert_eq!(o.lag, Some((end - o.committed_offset).max(0)));
    }
    sim.shutdown().await;
}
