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
        assert_eq!(s.earliest.get(&tp), Some(start), "{tp}");
        assert_eq!(s.latest.get(&tp), Some(end), "{tp}");
    }
    // Every replica of every partition was read from its broker's log dirs.
    let replicas: usize = s.partitions.values().map(|p| p.replicas.len()).sum();
    assert_eq!(s.replicas.len(), replicas);
    assert!(s.partitions.iter().all(|(tp, p)| p
        .replicas
        .iter()
        .all(|b| s.replicas.contains_key(&(tp.clone(), *b)))));
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
