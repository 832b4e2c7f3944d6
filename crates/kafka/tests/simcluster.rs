//! Every client operation against `ballast-simcluster`, a simulated multi-broker cluster that
//! speaks the real wire protocol. Each test starts its own small cluster in-process and checks
//! what the client reports against the simulator's own truth (`snapshot()`, `truth()`), not just
//! that nothing failed.

use std::collections::{BTreeMap, BTreeSet, HashSet};
use std::future::Future;
use std::time::{Duration, Instant};

use ballast_kafka::{
    Acks, AclBinding, AclFilter, AclOperation, AclPatternFilter, AclPatternType, AclPermissionType,
    AclResourceType, AlterConfigOp, Client, ClientConfig, Compression, ConfigEntry, ConfigResource,
    ConfigSource, ElectionType, Error, NewPartitions, NewTopic, OffsetSpec, ProduceRecord,
    QuotaAlteration, QuotaEntity, QuotaEntityType, QuotaFilter, QuotaMatch, QuotaName, Record,
    ReplicaLogDirMove, Sasl, Security, TlsConfig, TopicPartition,
};
use ballast_model::snapshot::Snapshot;
use ballast_simcluster::state::MoveState;
use ballast_simcluster::{
    GenerateParams, Scenario, SecurityConfig, SecurityProtocol, SimCluster, SimConfig, TlsIdentity,
};
use bytes::Bytes;

// ---------------------------------------------------------------------------------------------
// helpers

/// A small generated cluster: `brokers` brokers on 3 racks, 4 topics of 4 partitions, RF 3,
/// replicas of about 20 MB with some traffic.
fn params(brokers: u32) -> GenerateParams {
    GenerateParams {
        brokers,
        racks: 3,
        topics: 4,
        partitions_per_topic: 4,
        replication_factor: 3,
        seed: 7,
        mean_partition_bytes: 20e6,
        mean_msg_rate: 20.0,
        msg_bytes: 200.0,
        ..GenerateParams::default()
    }
}

fn sim_config(params: GenerateParams, speed: f64) -> SimConfig {
    SimConfig {
        scenario: Scenario::Generate(params),
        base_port: 0,
        speed,
        tick: Duration::from_millis(20),
        // These tests check what each request does and answers, so a describe shows a change at
        // once; the simulator's KRaft metadata lag has its own test (simcluster tests/admin.rs).
        metadata_lag: Duration::ZERO,
        ..SimConfig::default()
    }
}

async fn start(params: GenerateParams, speed: f64) -> SimCluster {
    SimCluster::start(sim_config(params, speed))
        .await
        .expect("start the simulated cluster")
}

fn client_config(bootstrap: &str) -> ClientConfig {
    ClientConfig::plaintext(bootstrap)
        .with_connect_timeout(Duration::from_secs(3))
        .with_request_timeout(Duration::from_secs(10))
        .with_retries(5, Duration::from_millis(50))
}

async fn connect(sim: &SimCluster) -> Client {
    Client::connect(client_config(&sim.bootstrap()))
        .await
        .expect("connect to the simulated cluster")
}

/// Polls `check` every 50 ms until it returns Ok, failing the test with the last reason after
/// `within`.
async fn eventually<T, F, Fut>(what: &str, within: Duration, mut check: F) -> T
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<T, String>>,
{
    let deadline = Instant::now() + within;
    loop {
        match check().await {
            Ok(v) => return v,
            Err(last) => {
                if Instant::now() >= deadline {
                    panic!("{what}: not reached within {within:?}; last seen: {last}");
                }
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
        }
    }
}

fn sorted(ids: &[i32]) -> Vec<i32> {
    let mut v = ids.to_vec();
    v.sort_unstable();
    v
}

fn tp(topic: &str, partition: i32) -> TopicPartition {
    TopicPartition::new(topic, partition)
}

fn topics_of(snapshot: &Snapshot) -> Vec<String> {
    let set: BTreeSet<&str> = snapshot
        .partitions
        .iter()
        .map(|p| p.topic.as_str())
        .collect();
    set.into_iter().map(str::to_string).collect()
}

fn partitions_of(snapshot: &Snapshot) -> Vec<TopicPartition> {
    snapshot
        .partitions
        .iter()
        .map(|p| tp(&p.topic, p.partition))
        .collect()
}

/// (topic, partition) → (leader, replicas, sorted ISR).
type Placement = BTreeMap<(String, i32), (Option<i32>, Vec<i32>, Vec<i32>)>;

fn snapshot_placement(snapshot: &Snapshot) -> Placement {
    snapshot
        .partitions
        .iter()
        .map(|p| {
            (
                (p.topic.clone(), p.partition),
                (p.leader, p.replicas.clone(), sorted(p.isr_or_replicas())),
            )
        })
        .collect()
}

fn metadata_placement(md: &ballast_kafka::ClusterMetadata) -> Placement {
    md.topics
        .iter()
        .flat_map(|t| {
            t.partitions.iter().map(move |p| {
                (
                    (t.name.clone(), p.partition),
                    (p.leader, p.replicas.clone(), sorted(&p.isr)),
                )
            })
        })
        .collect()
}

fn entry<'a>(entries: &'a [ConfigEntry], name: &str) -> &'a ConfigEntry {
    entries
        .iter()
        .find(|e| e.name == name)
        .unwrap_or_else(|| panic!("no config entry {name}"))
}

fn error_name(e: &Option<ballast_kafka::ItemError>) -> Option<&'static str> {
    e.as_ref().map(|e| e.name)
}

// ---------------------------------------------------------------------------------------------
// metadata, cluster

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_active_controller_is_the_quorum_leader_not_metadatas_controller_id() {
    let sim = start(params(3), 1.0).await;
    sim.move_controller(3).expect("move the quorum leader");
    let client = connect(&sim).await;
    let mut named = BTreeSet::new();
    for _ in 0..12 {
        named.insert(
            client
                .refresh_metadata()
                .await
                .expect("metadata")
                .controller_id,
        );
        let active = client.active_controller().await.expect("active controller");
        assert_eq!(active.id, Some(3), "the quorum leader, every time");
        assert_eq!(active.source, "quorum");
    }
    assert!(
        named.len() > 1,
        "Metadata's controller id varies: {named:?}"
    );

    let quorum = client.describe_quorum().await.expect("describe quorum");
    let truth = sim.truth();
    assert_eq!(quorum.leader_id, Some(3));
    assert_eq!(quorum.leader_epoch, truth.controller_epoch);
    assert_eq!(
        quorum.voters.iter().map(|v| v.id).collect::<Vec<_>>(),
        vec![1, 2, 3]
    );
    assert!(quorum.observers.is_empty());
    assert_eq!(quorum.max_follower_lag(), 0);
    assert!(quorum.voters.iter().all(|v| v.last_fetch_ms.is_some()));

    sim.stop_broker(3)
        .await
        .expect("stop the active controller");
    let active = client.active_controller().await.expect("active controller");
    assert_eq!(active.id, Some(sim.truth().controller));
    assert_ne!(
        active.id,
        Some(3),
        "leadership moved off the stopped broker"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_simulator_is_inferred_as_kraft_and_kafka_4_1_or_newer() {
    let sim = start(params(3), 1.0).await;
    let client = connect(&sim).await;
    let software = client.broker_software().await.expect("broker software");
    assert_eq!(software.metadata_mode, ballast_kafka::MetadataMode::Kraft);
    assert_eq!(software.kafka_version.min.as_deref(), Some("4.1"));
    assert_eq!(software.kafka_version.max, None);
    assert!(software.broker.is_some_and(|b| (1..=3).contains(&b)));
    assert!(software.api_versions.iter().any(|(k, _, _)| *k == 55));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn metadata_and_describe_cluster_match_the_simulated_brokers_racks_controller_and_placement()
{
    let sim = start(params(3), 1.0).await;
    let client = connect(&sim).await;
    let md = client.metadata(None).await.expect("metadata");
    let snapshot = sim.snapshot();
    let truth = sim.truth();

    assert_eq!(md.cluster_id, snapshot.cluster_id);
    assert_eq!(md.cluster_id.as_deref(), Some(truth.cluster_id.as_str()));
    // KRaft: Metadata's controller id is a live broker the answering broker picks.
    assert!(md.controller_id.is_some_and(|id| md.broker(id).is_some()));
    let brokers: Vec<(i32, String, i32, Option<String>)> = md
        .brokers
        .iter()
        .map(|b| (b.id, b.host.clone(), b.port, b.rack.clone()))
        .collect();
    let expected: Vec<(i32, String, i32, Option<String>)> = truth
        .brokers
        .iter()
        .map(|b| {
            (
                b.id,
                "127.0.0.1".to_string(),
                i32::from(b.port),
                b.rack.clone(),
            )
        })
        .collect();
    assert_eq!(brokers, expected, "brokers with host, port and rack");
    let racks: Vec<(i32, Option<String>)> = snapshot
        .brokers
        .iter()
        .map(|b| (b.id, b.rack.clone()))
        .collect();
    assert_eq!(
        md.brokers
            .iter()
            .map(|b| (b.id, b.rack.clone()))
            .collect::<Vec<_>>(),
        racks
    );
    assert_eq!(
        racks
            .iter()
            .filter_map(|(_, r)| r.clone())
            .collect::<BTreeSet<_>>()
            .len(),
        3,
        "three racks"
    );

    let names: Vec<String> = md.topics.iter().map(|t| t.name.clone()).collect();
    assert_eq!(names, topics_of(&snapshot), "topics, sorted by name");
    assert_eq!(names.len(), truth.topics);
    for t in &md.topics {
        assert!(t.error.is_none(), "{}: {:?}", t.name, t.error);
        assert!(!t.internal);
        assert!(t.id.is_some(), "{} has a topic id", t.name);
        for p in &t.partitions {
            assert!(
                p.error.is_none(),
                "{}-{}: {:?}",
                t.name,
                p.partition,
                p.error
            );
            assert!(p.offline_replicas.is_empty());
        }
    }
    let placement = metadata_placement(&md);
    assert_eq!(placement.len(), truth.partitions);
    assert_eq!(
        placement,
        snapshot_placement(&snapshot),
        "leaders, replicas and ISR"
    );
    assert_eq!(
        *client.cached_metadata(),
        md,
        "metadata(None) refreshes the cache"
    );

    let description = client.describe_cluster().await.expect("describe cluster");
    assert_eq!(Some(description.cluster_id.clone()), md.cluster_id);
    assert!(description
        .controller_id
        .is_some_and(|id| md.broker(id).is_some()));
    assert_eq!(description.brokers, md.brokers);
    assert!(description.fenced_brokers.is_empty());

    let first = names[0].clone();
    let named = client
        .metadata(Some(&[first.clone(), "no-such-topic".to_string()]))
        .await
        .expect("metadata of named topics");
    let known = named.topic(&first).expect("the named topic");
    assert!(known.error.is_none());
    assert_eq!(known, md.topic(&first).expect("in the full metadata"));
    let missing = named
        .topic("no-such-topic")
        .expect("the missing topic is reported");
    assert_eq!(
        error_name(&missing.error),
        Some("UNKNOWN_TOPIC_OR_PARTITION")
    );
    assert_eq!(
        sim.truth().topics,
        truth.topics,
        "asking for a missing topic does not create it"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn describe_log_dirs_reports_every_replica_on_its_broker_with_the_simulated_size() {
    let sim = start(params(3), 1.0).await;
    let client = connect(&sim).await;
    let before = sim.snapshot();
    let all = client
        .describe_all_log_dirs()
        .await
        .expect("describe all log dirs");
    let after = sim.snapshot();

    let ids: Vec<i32> = all.iter().map(|(id, _)| *id).collect();
    assert_eq!(ids, before.brokers.iter().map(|b| b.id).collect::<Vec<_>>());
    let size_before: BTreeMap<(String, i32), u64> = before
        .partitions
        .iter()
        .map(|p| ((p.topic.clone(), p.partition), p.size_bytes))
        .collect();
    let size_after: BTreeMap<(String, i32), u64> = after
        .partitions
        .iter()
        .map(|p| ((p.topic.clone(), p.partition), p.size_bytes))
        .collect();
    for (broker, result) in all {
        let dirs = result.unwrap_or_else(|e| panic!("broker {broker}: {e}"));
        assert_eq!(dirs.broker, broker);
        assert!(dirs.dirs.len() >= 2, "broker {broker} has its log dirs");
        let paths: BTreeSet<&str> = dirs.dirs.iter().map(|d| d.path.as_str()).collect();
        assert_eq!(paths.len(), dirs.dirs.len(), "distinct paths");
        let mut seen: BTreeMap<(String, i32), i64> = BTreeMap::new();
        for dir in &dirs.dirs {
            assert!(dir.error.is_none(), "{}: {:?}", dir.path, dir.error);
            let total = dir.total_bytes.expect("total bytes (DescribeLogDirs v4)");
            let usable = dir.usable_bytes.expect("usable bytes (DescribeLogDirs v4)");
            assert!(
                usable <= total,
                "{}: usable {usable} > total {total}",
                dir.path
            );
            assert!(
                total - usable >= dir.used_bytes(),
                "{}: the volume holds at least its replicas ({} used, {} replica bytes)",
                dir.path,
                total - usable,
                dir.used_bytes()
            );
            for r in &dir.replicas {
                assert!(!r.is_future, "no future replica: {r:?}");
                let key = (r.topic.clone(), r.partition);
                assert!(
                    seen.insert(key.clone(), r.size).is_none(),
                    "broker {broker} reports {key:?} twice"
                );
            }
        }
        let expected: BTreeSet<(String, i32)> = before
            .partitions
            .iter()
            .filter(|p| p.replicas.contains(&broker))
            .map(|p| (p.topic.clone(), p.partition))
            .collect();
        assert_eq!(
            seen.keys().cloned().collect::<BTreeSet<_>>(),
            expected,
            "broker {broker} reports exactly its replicas"
        );
        for (key, size) in &seen {
            let (lo, hi) = (size_before[key], size_after[key]);
            assert!(
                lo as i64 <= *size && *size <= hi as i64,
                "broker {broker} {key:?}: size {size} outside the simulated size {lo}..={hi}"
            );
        }
    }

    let topic = before.partitions[0].topic.clone();
    let only = client
        .describe_log_dirs(1, Some(std::slice::from_ref(&topic)))
        .await
        .expect("describe log dirs of one topic");
    let reported: BTreeSet<i32> = only
        .dirs
        .iter()
        .flat_map(|d| d.replicas.iter())
        .map(|r| {
            assert_eq!(r.topic, topic, "only the asked topic");
            r.partition
        })
        .collect();
    let expected: BTreeSet<i32> = before
        .partitions
        .iter()
        .filter(|p| p.topic == topic && p.replicas.contains(&1))
        .map(|p| p.partition)
        .collect();
    assert_eq!(reported, expected);
}

// ---------------------------------------------------------------------------------------------
// offsets

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn earliest_local_offset_of_a_tiered_partition_is_past_its_log_start_and_its_log_dirs_size_is_local(
) {
    // Simulated time nearly stands still, so the logs do not grow between the reads.
    let sim = start(params(3), 0.001).await;
    // 10 MB per partition at 1,000 bytes a message, 2 MB of it kept locally.
    sim.add_topic(&ballast_simcluster::NewTopic {
        name: "tiered".into(),
        partitions: 2,
        replication_factor: 2,
        size_bytes: 10_000_000,
        producer_msg_rate: 10.0,
        producer_byte_rate: 10_000.0,
        consumer_msg_rate: 0.0,
        consumer_byte_rate: 0.0,
        configs: BTreeMap::from([
            ("remote.storage.enable".to_string(), "true".to_string()),
            ("local.retention.bytes".to_string(), "2000000".to_string()),
        ]),
    })
    .expect("a tiered topic");
    let client = connect(&sim).await;
    let tps = vec![tp("tiered", 0), tp("tiered", 1)];
    let start = client
        .list_offsets(&tps, OffsetSpec::Earliest)
        .await
        .expect("earliest");
    let local = client
        .list_offsets(&tps, OffsetSpec::EarliestLocal)
        .await
        .expect("earliest local");
    let truth = sim.tiered_logs();
    for ((tp, s), l) in tps.iter().zip(&start).zip(&local) {
        assert!(l.error.is_none(), "{l:?}");
        assert_eq!(s.offset, Some(0), "{s:?}");
        let (local_start, local_size, remote) = truth[&(tp.topic.clone(), tp.partition)];
        assert_eq!(l.offset, Some(local_start), "{l:?}");
        assert_eq!(local_start, 8_000, "8 MB of 1,000-byte messages are remote");
        assert_eq!((local_size, remote), (2_000_000, 8_000_000));
    }
    // DescribeLogDirs reports the local log only.
    let dirs = client.describe_all_log_dirs().await.expect("log dirs");
    let sizes: Vec<i64> = dirs
        .iter()
        .filter_map(|(_, d)| d.as_ref().ok())
        .flat_map(|d| d.dirs.iter().flat_map(|dir| dir.replicas.iter()))
        .filter(|r| r.topic == "tiered")
        .map(|r| r.size)
        .collect();
    assert_eq!(sizes, vec![2_000_000; 4]);
    // A topic without remote storage: the first local offset is the log start.
    let snapshot = sim.snapshot();
    let other = partitions_of(&snapshot)
        .into_iter()
        .find(|p| p.topic != "tiered")
        .expect("another topic");
    let start = client
        .list_offsets(std::slice::from_ref(&other), OffsetSpec::Earliest)
        .await
        .expect("earliest");
    let local = client
        .list_offsets(std::slice::from_ref(&other), OffsetSpec::EarliestLocal)
        .await
        .expect("earliest local");
    assert_eq!(start[0].offset, local[0].offset);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn list_offsets_earliest_latest_and_by_timestamp_agree_with_the_log() {
    let sim = start(params(3), 1.0).await;
    let client = connect(&sim).await;
    let snapshot = sim.snapshot();
    let tps = partitions_of(&snapshot);

    let earliest = client
        .list_offsets(&tps, OffsetSpec::Earliest)
        .await
        .expect("earliest");
    let latest = client
        .list_offsets(&tps, OffsetSpec::Latest)
        .await
        .expect("latest");
    assert_eq!(earliest.len(), tps.len());
    assert_eq!(latest.len(), tps.len());
    for ((tp, e), l) in tps.iter().zip(&earliest).zip(&latest) {
        assert_eq!(
            (&e.topic, e.partition),
            (&tp.topic, tp.partition),
            "input order"
        );
        assert_eq!(
            (&l.topic, l.partition),
            (&tp.topic, tp.partition),
            "input order"
        );
        assert!(e.error.is_none() && l.error.is_none(), "{tp}: {e:?} {l:?}");
        let (e, l) = (
            e.offset.expect("earliest offset"),
            l.offset.expect("latest offset"),
        );
        assert!(0 <= e && e <= l, "{tp}: earliest {e} latest {l}");
    }
    // The simulated producers keep writing: the log end moves.
    let first = tps[0].clone();
    let start_offset = latest[0].offset.unwrap_or_default();
    {
        let client = &client;
        let first = &first;
        eventually(
            "the log end offset grows with traffic",
            Duration::from_secs(5),
            move || async move {
                let now = client
                    .list_offsets(std::slice::from_ref(first), OffsetSpec::Latest)
                    .await
                    .map_err(|e| e.to_string())?;
                match now[0].offset {
                    Some(o) if o > start_offset => Ok(()),
                    other => Err(format!("latest {other:?}")),
                }
            },
        )
        .await;
    }

    // Records with known timestamps on a topic without simulated traffic.
    let created = client
        .create_topics(&[NewTopic::new("timestamps", 1, 3)], false)
        .await
        .expect("create topic");
    assert!(created[0].error.is_none(), "{:?}", created[0].error);
    let probe = tp("timestamps", 0);
    let now = sim.now_ms();
    let stamps = [now - 30_000, now - 20_000, now - 10_000];
    for (i, ts) in stamps.iter().enumerate() {
        let record =
            ProduceRecord::new(Some(b"k"), Some(format!("v{i}").as_bytes())).with_timestamp(*ts);
        let result = client
            .produce(&probe, &[record], Acks::All, Compression::None)
            .await
            .expect("produce");
        assert_eq!(result.base_offset, Some(i as i64));
    }
    let one = std::slice::from_ref(&probe);
    let at = |spec| {
        let client = &client;
        async move {
            let r = client.list_offsets(one, spec).await.expect("list offsets");
            assert!(r[0].error.is_none(), "{spec:?}: {:?}", r[0].error);
            (r[0].offset, r[0].timestamp)
        }
    };
    assert_eq!(at(OffsetSpec::Earliest).await.0, Some(0));
    assert_eq!(at(OffsetSpec::Latest).await.0, Some(3));
    // Every lookup first, then one comparison, so a failure shows the whole picture. Times are
    // relative to the first record's timestamp.
    let relative = |(offset, ts): (Option<i64>, Option<i64>)| (offset, ts.map(|t| t - stamps[0]));
    let lookups = [
        (
            "exactly the second record's timestamp",
            stamps[1],
            (Some(1), Some(10_000)),
        ),
        (
            "between the first and the second record",
            stamps[1] - 5_000,
            (Some(1), Some(10_000)),
        ),
        (
            "before every record",
            stamps[0] - 60_000,
            (Some(0), Some(0)),
        ),
        ("after the last record", stamps[2] + 1, (None, None)),
    ];
    let mut got = Vec::new();
    let mut want = Vec::new();
    for (what, ts, expected) in lookups {
        got.push((what, relative(at(OffsetSpec::Timestamp(ts)).await)));
        want.push((what, expected));
    }
    assert_eq!(
        got, want,
        "ListOffsets by timestamp: (offset, timestamp - first record's timestamp) of the first \
         record at or after the timestamp, for records produced at +0 s, +10 s and +20 s"
    );
}

// ---------------------------------------------------------------------------------------------
// configs

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn describe_configs_reports_topic_and_broker_values_with_their_sources() {
    let sim = start(params(3), 1.0).await;
    let client = connect(&sim).await;
    let snapshot = sim.snapshot();
    let part = &snapshot.partitions[0];
    let topic = part.topic.clone();
    let rack2 = snapshot
        .brokers
        .iter()
        .find(|b| b.id == 2)
        .and_then(|b| b.rack.clone());

    let results = client
        .describe_configs(&[
            ConfigResource::Topic(topic.clone()),
            ConfigResource::Broker(2),
            ConfigResource::Topic("no-such-topic".into()),
        ])
        .await
        .expect("describe configs");
    assert_eq!(results.len(), 3);
    assert_eq!(results[0].resource, ConfigResource::Topic(topic.clone()));
    assert_eq!(results[1].resource, ConfigResource::Broker(2));
    assert_eq!(
        error_name(&results[2].error),
        Some("UNKNOWN_TOPIC_OR_PARTITION"),
        "a missing topic is a per-resource error"
    );

    let t = &results[0].entries;
    assert!(results[0].error.is_none());
    let min_isr = entry(t, "min.insync.replicas");
    assert_eq!(min_isr.value, Some(part.min_insync_replicas.to_string()));
    assert_eq!(
        part.min_insync_replicas, 2,
        "RF 3 scenarios use min.insync.replicas 2"
    );
    assert_eq!(min_isr.source, ConfigSource::DynamicTopicConfig);
    assert!(!min_isr.is_default);
    assert_eq!(min_isr.synonyms[0].source, ConfigSource::DynamicTopicConfig);
    assert!(
        min_isr
            .synonyms
            .iter()
            .any(|s| s.source == ConfigSource::DefaultConfig && s.value.as_deref() == Some("1")),
        "the broker default it overrides: {:?}",
        min_isr.synonyms
    );
    let cleanup = entry(t, "cleanup.policy");
    if part.compacted {
        assert_eq!(cleanup.value.as_deref(), Some("compact"));
        assert_eq!(cleanup.source, ConfigSource::DynamicTopicConfig);
    } else {
        assert_eq!(cleanup.value.as_deref(), Some("delete"));
        assert_eq!(cleanup.source, ConfigSource::DefaultConfig);
    }
    let retention = entry(t, "retention.ms");
    assert_eq!(retention.value.as_deref(), Some("604800000"));
    assert_eq!(retention.source, ConfigSource::DefaultConfig);
    assert!(retention.is_default);
    assert!(
        retention
            .synonyms
            .iter()
            .any(|s| s.name == "log.retention.hours" && s.value.as_deref() == Some("168")),
        "{:?}",
        retention.synonyms
    );

    let b = &results[1].entries;
    assert!(results[1].error.is_none());
    let rack = entry(b, "broker.rack");
    assert_eq!(rack.value, rack2, "the rack of the snapshot");
    assert_eq!(rack.source, ConfigSource::StaticBrokerConfig);
    assert!(rack.read_only);
    assert_eq!(entry(b, "broker.id").value.as_deref(), Some("2"));
    let throttle = entry(b, "follower.replication.throttled.rate");
    assert_eq!(throttle.source, ConfigSource::DefaultConfig);
    assert!(throttle.is_default && !throttle.read_only);
    assert_eq!(throttle.value.as_deref(), Some("9223372036854775807"));
    let password = entry(b, "ssl.keystore.password");
    assert!(password.sensitive);
    assert_eq!(password.value, None, "sensitive values are not sent");

    let one = client
        .describe_config(&ConfigResource::Broker(3))
        .await
        .expect("describe config of broker 3");
    assert_eq!(entry(&one, "broker.id").value.as_deref(), Some("3"));
    let err = client
        .describe_config(&ConfigResource::Topic("no-such-topic".into()))
        .await
        .expect_err("a missing topic");
    assert_eq!(err.kafka_code(), Some(3), "{err}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn incremental_alter_configs_sets_then_deletes_a_topic_override() {
    let sim = start(params(3), 1.0).await;
    let client = connect(&sim).await;
    let topics = topics_of(&sim.snapshot());
    let topic = ConfigResource::Topic(topics[0].clone());

    let results = client
        .incremental_alter_configs(
            &[
                (
                    topic.clone(),
                    vec![AlterConfigOp::Set {
                        name: "retention.ms".into(),
                        value: "86400000".into(),
                    }],
                ),
                (
                    ConfigResource::Topic(topics[1].clone()),
                    vec![AlterConfigOp::Set {
                        name: "no.such.config".into(),
                        value: "1".into(),
                    }],
                ),
            ],
            false,
        )
        .await
        .expect("incremental alter configs");
    assert_eq!(results.len(), 2);
    assert_eq!(results[0].resource, topic);
    assert!(results[0].error.is_none(), "{:?}", results[0].error);
    assert_eq!(error_name(&results[1].error), Some("INVALID_CONFIG"));

    let entries = client.describe_config(&topic).await.expect("describe");
    let retention = entry(&entries, "retention.ms");
    assert_eq!(retention.value.as_deref(), Some("86400000"));
    assert_eq!(retention.source, ConfigSource::DynamicTopicConfig);
    assert!(!retention.is_default);

    // validate_only changes nothing.
    let dry = client
        .incremental_alter_configs(
            &[(
                topic.clone(),
                vec![AlterConfigOp::Set {
                    name: "segment.ms".into(),
                    value: "1000".into(),
                }],
            )],
            true,
        )
        .await
        .expect("validate only");
    assert!(dry[0].error.is_none(), "{:?}", dry[0].error);
    let entries = client.describe_config(&topic).await.expect("describe");
    assert_eq!(
        entry(&entries, "segment.ms").source,
        ConfigSource::DefaultConfig
    );

    let results = client
        .incremental_alter_configs(
            &[(
                topic.clone(),
                vec![AlterConfigOp::Delete {
                    name: "retention.ms".into(),
                }],
            )],
            false,
        )
        .await
        .expect("delete override");
    assert!(results[0].error.is_none(), "{:?}", results[0].error);
    let entries = client.describe_config(&topic).await.expect("describe");
    let retention = entry(&entries, "retention.ms");
    assert_eq!(retention.value.as_deref(), Some("604800000"));
    assert_eq!(retention.source, ConfigSource::DefaultConfig);
    assert!(retention.is_default);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn broker_throttle_rates_set_with_incremental_alter_configs_are_the_simulators_throttles() {
    let sim = start(params(3), 1.0).await;
    let client = connect(&sim).await;
    assert!(sim.truth().throttles.brokers.is_empty());

    let results = client
        .incremental_alter_configs(
            &[
                (
                    ConfigResource::Broker(2),
                    vec![AlterConfigOp::Set {
                        name: "follower.replication.throttled.rate".into(),
                        value: "1048576".into(),
                    }],
                ),
                (
                    ConfigResource::BrokerDefaults,
                    vec![AlterConfigOp::Set {
                        name: "leader.replication.throttled.rate".into(),
                        value: "2097152".into(),
                    }],
                ),
                (
                    ConfigResource::Broker(3),
                    vec![AlterConfigOp::Set {
                        name: "num.partitions".into(),
                        value: "3".into(),
                    }],
                ),
            ],
            false,
        )
        .await
        .expect("alter broker configs");
    assert!(results[0].error.is_none(), "{:?}", results[0].error);
    assert!(results[1].error.is_none(), "{:?}", results[1].error);
    assert_eq!(
        error_name(&results[2].error),
        Some("INVALID_REQUEST"),
        "a read-only broker config cannot be set dynamically"
    );

    let throttles: Vec<(Option<i32>, Option<f64>, Option<f64>)> = sim
        .truth()
        .throttles
        .brokers
        .iter()
        .map(|t| (t.broker, t.leader_rate, t.follower_rate))
        .collect();
    assert_eq!(
        throttles,
        vec![
            (None, Some(2_097_152.0), None),
            (Some(2), None, Some(1_048_576.0))
        ]
    );

    let entries = client
        .describe_config(&ConfigResource::Broker(2))
        .await
        .expect("describe broker 2");
    let follower = entry(&entries, "follower.replication.throttled.rate");
    assert_eq!(follower.value.as_deref(), Some("1048576"));
    assert_eq!(follower.source, ConfigSource::DynamicBrokerConfig);
    assert_eq!(
        follower.synonyms.first().map(|s| s.source),
        Some(ConfigSource::DynamicBrokerConfig)
    );
    assert_eq!(
        follower.synonyms.last().map(|s| s.source),
        Some(ConfigSource::DefaultConfig)
    );
    let leader = entry(&entries, "leader.replication.throttled.rate");
    assert_eq!(leader.value.as_deref(), Some("2097152"));
    assert_eq!(leader.source, ConfigSource::DynamicDefaultBrokerConfig);

    let results = client
        .incremental_alter_configs(
            &[
                (
                    ConfigResource::Broker(2),
                    vec![AlterConfigOp::Delete {
                        name: "follower.replication.throttled.rate".into(),
                    }],
                ),
                (
                    ConfigResource::BrokerDefaults,
                    vec![AlterConfigOp::Delete {
                        name: "leader.replication.throttled.rate".into(),
                    }],
                ),
            ],
            false,
        )
        .await
        .expect("remove throttles");
    assert!(results.iter().all(|r| r.error.is_none()), "{results:?}");
    assert!(
        sim.truth().throttles.brokers.is_empty(),
        "throttles removed"
    );
}

// ---------------------------------------------------------------------------------------------
// topics

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn create_topics_places_a_topic_that_metadata_shows_and_delete_topics_removes_it() {
    let sim = start(params(3), 1.0).await;
    let client = connect(&sim).await;
    let existing = topics_of(&sim.snapshot())[0].clone();
    let topics_before = sim.truth().topics;

    let results = client
        .create_topics(
            &[
                NewTopic::new("audit-trail", 6, 2).config("cleanup.policy", "compact"),
                NewTopic::new(existing.clone(), 1, 1),
                NewTopic::new("too-wide", 1, 5),
            ],
            false,
        )
        .await
        .expect("create topics");
    let outcome: Vec<(String, Option<&str>)> = results
        .iter()
        .map(|r| (r.name.clone(), error_name(&r.error)))
        .collect();
    assert_eq!(
        outcome,
        vec![
            ("audit-trail".to_string(), None),
            (existing.clone(), Some("TOPIC_ALREADY_EXISTS")),
            ("too-wide".to_string(), Some("INVALID_REPLICATION_FACTOR")),
        ]
    );

    let dry = client
        .create_topics(&[NewTopic::new("dry-run", 1, 1)], true)
        .await
        .expect("validate only");
    assert!(dry[0].error.is_none(), "{:?}", dry[0].error);

    let md = client.metadata(None).await.expect("metadata");
    assert!(
        md.topic("dry-run").is_none(),
        "validate_only creates nothing"
    );
    assert!(md.topic("too-wide").is_none());
    let created = md.topic("audit-trail").expect("the created topic");
    assert_eq!(created.partitions.len(), 6);
    let rack: BTreeMap<i32, Option<String>> =
        md.brokers.iter().map(|b| (b.id, b.rack.clone())).collect();
    for (i, p) in created.partitions.iter().enumerate() {
        assert_eq!(p.partition, i as i32);
        assert_eq!(p.replicas.len(), 2, "replication factor 2: {p:?}");
        assert_ne!(p.replicas[0], p.replicas[1]);
        assert_ne!(
            rack[&p.replicas[0]], rack[&p.replicas[1]],
            "rack aware: {p:?}"
        );
        assert_eq!(p.leader, Some(p.replicas[0]));
        assert_eq!(sorted(&p.isr), sorted(&p.replicas));
    }
    let snapshot = sim.snapshot();
    let placement = snapshot_placement(&snapshot);
    for p in &created.partitions {
        assert_eq!(
            placement[&("audit-trail".to_string(), p.partition)],
            (p.leader, p.replicas.clone(), sorted(&p.isr)),
            "the simulator placed it as reported"
        );
    }
    assert!(snapshot
        .partitions
        .iter()
        .filter(|p| p.topic == "audit-trail")
        .all(|p| p.compacted));
    assert_eq!(sim.truth().topics, topics_before + 1);
    let entries = client
        .describe_config(&ConfigResource::Topic("audit-trail".into()))
        .await
        .expect("describe the new topic");
    let cleanup = entry(&entries, "cleanup.policy");
    assert_eq!(cleanup.value.as_deref(), Some("compact"));
    assert_eq!(cleanup.source, ConfigSource::DynamicTopicConfig);

    let results = client
        .delete_topics(&["audit-trail".to_string(), "never-was".to_string()])
        .await
        .expect("delete topics");
    let outcome: Vec<(String, Option<&str>)> = results
        .iter()
        .map(|r| (r.name.clone(), error_name(&r.error)))
        .collect();
    assert_eq!(
        outcome,
        vec![
            ("audit-trail".to_string(), None),
            ("never-was".to_string(), Some("UNKNOWN_TOPIC_OR_PARTITION")),
        ]
    );
    let md = client.metadata(None).await.expect("metadata");
    assert!(md.topic("audit-trail").is_none());
    assert!(sim
        .snapshot()
        .partitions
        .iter()
        .all(|p| p.topic != "audit-trail"));
    assert_eq!(sim.truth().topics, topics_before);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn create_partitions_adds_partitions_placed_by_the_controller_or_as_assigned() {
    let sim = start(params(3), 1.0).await;
    let client = connect(&sim).await;
    let topics = topics_of(&sim.snapshot());
    let (grown, assigned) = (topics[0].clone(), topics[1].clone());

    let results = client
        .create_partitions(
            &[
                NewPartitions {
                    topic: grown.clone(),
                    total_count: 6,
                    assignments: None,
                },
                NewPartitions {
                    topic: assigned.clone(),
                    total_count: 5,
                    assignments: Some(vec![vec![3, 1, 2]]),
                },
                NewPartitions {
                    topic: topics[2].clone(),
                    total_count: 2,
                    assignments: None,
                },
            ],
            false,
        )
        .await
        .expect("create partitions");
    assert!(results[0].error.is_none(), "{:?}", results[0].error);
    assert!(results[1].error.is_none(), "{:?}", results[1].error);
    assert_eq!(
        error_name(&results[2].error),
        Some("INVALID_PARTITIONS"),
        "fewer partitions than now"
    );

    let md = client.metadata(None).await.expect("metadata");
    assert_eq!(md.topic(&grown).expect("grown").partitions.len(), 6);
    let new = &md.topic(&assigned).expect("assigned").partitions[4];
    assert_eq!(new.replicas, vec![3, 1, 2]);
    assert_eq!(new.leader, Some(3));
    assert_eq!(metadata_placement(&md), snapshot_placement(&sim.snapshot()));
}

// ---------------------------------------------------------------------------------------------
// reassignments

/// The first partition of the snapshot and a broker that holds no replica of it.
fn partition_and_spare_broker(snapshot: &Snapshot) -> (TopicPartition, Vec<i32>, i32) {
    let p = &snapshot.partitions[0];
    let spare = snapshot
        .brokers
        .iter()
        .map(|b| b.id)
        .find(|b| !p.replicas.contains(b))
        .expect("a broker without a replica of the partition");
    (tp(&p.topic, p.partition), p.replicas.clone(), spare)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_throttled_reassignment_is_listed_with_its_adding_and_removing_replicas_and_cancel_restores_the_placement(
) {
    let sim = start(params(4), 1.0).await;
    let client = connect(&sim).await;
    let snapshot = sim.snapshot();
    let (moving, original, spare) = partition_and_spare_broker(&snapshot);
    let leader = original[0];
    let removed = original[2];
    let target = vec![original[0], original[1], spare];

    // Throttle the copy to a crawl: 1 kB/s on both sides for exactly this partition.
    let p = moving.partition;
    let leader_list = original
        .iter()
        .map(|b| format!("{p}:{b}"))
        .collect::<Vec<_>>()
        .join(",");
    let throttles = client
        .incremental_alter_configs(
            &[
                (
                    ConfigResource::Broker(spare),
                    vec![AlterConfigOp::Set {
                        name: "follower.replication.throttled.rate".into(),
                        value: "1000".into(),
                    }],
                ),
                (
                    ConfigResource::Broker(leader),
                    vec![AlterConfigOp::Set {
                        name: "leader.replication.throttled.rate".into(),
                        value: "1000".into(),
                    }],
                ),
                (
                    ConfigResource::Topic(moving.topic.clone()),
                    vec![
                        AlterConfigOp::Set {
                            name: "leader.replication.throttled.replicas".into(),
                            value: leader_list,
                        },
                        AlterConfigOp::Set {
                            name: "follower.replication.throttled.replicas".into(),
                            value: format!("{p}:{spare}"),
                        },
                    ],
                ),
            ],
            false,
        )
        .await
        .expect("set throttles");
    assert!(throttles.iter().all(|r| r.error.is_none()), "{throttles:?}");
    assert_eq!(sim.truth().throttles.topics.len(), 1);

    let results = client
        .alter_partition_reassignments(&[(moving.clone(), Some(target.clone()))])
        .await
        .expect("submit reassignment");
    assert_eq!(results.len(), 1);
    assert_eq!(
        (&results[0].topic, results[0].partition),
        (&moving.topic, p)
    );
    assert!(results[0].error.is_none(), "{:?}", results[0].error);

    let listed = client
        .list_partition_reassignments(None)
        .await
        .expect("list reassignments");
    assert_eq!(listed.len(), 1, "{listed:?}");
    let r = &listed[0];
    assert_eq!((&r.topic, r.partition), (&moving.topic, p));
    assert_eq!(
        r.replicas,
        vec![original[0], original[1], spare, removed],
        "target, then the replicas leaving"
    );
    assert_eq!(r.adding, vec![spare]);
    assert_eq!(r.removing, vec![removed]);
    let filtered = client
        .list_partition_reassignments(Some(std::slice::from_ref(&moving)))
        .await
        .expect("list one partition");
    assert_eq!(&filtered, &listed);
    let other = tp(&moving.topic, p + 1);
    assert!(client
        .list_partition_reassignments(Some(&[other]))
        .await
        .expect("list another partition")
        .is_empty());

    let md = client
        .metadata(Some(std::slice::from_ref(&moving.topic)))
        .await
        .expect("metadata");
    let during = md.partition(&moving).expect("partition");
    assert_eq!(during.replicas, r.replicas);
    assert_eq!(
        sorted(&during.isr),
        sorted(&original),
        "the new replica is not in sync yet"
    );
    assert_eq!(during.leader, Some(leader));

    // Still running a moment later, copying at the throttled rate.
    tokio::time::sleep(Duration::from_millis(500)).await;
    let truth = sim.truth();
    assert_eq!(truth.reassignments.in_flight.len(), 1);
    let record = &truth.reassignments.in_flight[0].record;
    assert_eq!(record.original_replicas, original);
    assert_eq!(record.target_replicas, target);
    assert!(
        record.limited_by.contains("followerThrottle")
            || record.limited_by.contains("leaderThrottle"),
        "{:?}",
        record.limited_by
    );
    assert!(
        record.bytes_copied < record.partition_bytes / 100.0,
        "{record:?}"
    );
    assert_eq!(
        client
            .list_partition_reassignments(None)
            .await
            .expect("list")
            .len(),
        1
    );

    let results = client
        .alter_partition_reassignments(&[(moving.clone(), None)])
        .await
        .expect("cancel");
    assert!(results[0].error.is_none(), "{:?}", results[0].error);
    assert!(client
        .list_partition_reassignments(None)
        .await
        .expect("list")
        .is_empty());
    let md = client
        .metadata(Some(std::slice::from_ref(&moving.topic)))
        .await
        .expect("metadata");
    let after = md.partition(&moving).expect("partition");
    assert_eq!(after.replicas, original, "placement back to the original");
    assert_eq!(sorted(&after.isr), sorted(&original));
    assert_eq!(after.leader, Some(leader));
    assert_eq!(
        snapshot_placement(&sim.snapshot()),
        snapshot_placement(&snapshot)
    );
    let truth = sim.truth();
    assert!(truth.reassignments.in_flight.is_empty());
    assert_eq!(truth.reassignments.finished.len(), 1);
    assert_eq!(
        truth.reassignments.finished[0].record.state,
        MoveState::Cancelled
    );

    let again = client
        .alter_partition_reassignments(&[(moving.clone(), None)])
        .await
        .expect("cancel again");
    assert_eq!(
        error_name(&again[0].error),
        Some("NO_REASSIGNMENT_IN_PROGRESS")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unthrottled_reassignment_completes_and_metadata_shows_the_target_replicas() {
    let sim = start(params(4), 4.0).await;
    let client = connect(&sim).await;
    let snapshot = sim.snapshot();
    let (moving, original, spare) = partition_and_spare_broker(&snapshot);
    let old_leader = original[0];
    // Replace the leader: leadership must move too.
    let target = vec![spare, original[1], original[2]];

    let results = client
        .alter_partition_reassignments(&[(moving.clone(), Some(target.clone()))])
        .await
        .expect("submit reassignment");
    assert!(results[0].error.is_none(), "{:?}", results[0].error);

    let final_state = {
        let client = &client;
        let moving = &moving;
        let target = &target;
        eventually(
            "metadata shows the target replicas in sync",
            Duration::from_secs(15),
            move || async move {
                let md = client
                    .metadata(Some(std::slice::from_ref(&moving.topic)))
                    .await
                    .map_err(|e| e.to_string())?;
                let p = md.partition(moving).ok_or("no partition")?.clone();
                if p.replicas == *target && sorted(&p.isr) == sorted(target) {
                    Ok(p)
                } else {
                    Err(format!("replicas {:?} isr {:?}", p.replicas, p.isr))
                }
            },
        )
        .await
    };
    let leader = final_state.leader.expect("a leader");
    assert!(
        target.contains(&leader) && leader != old_leader,
        "leader {leader}"
    );
    assert!(client
        .list_partition_reassignments(None)
        .await
        .expect("list")
        .is_empty());
    let truth = sim.truth();
    assert!(truth.reassignments.in_flight.is_empty());
    let done = &truth.reassignments.finished[0].record;
    assert_eq!(done.state, MoveState::Completed);
    assert_eq!(done.target_replicas, target);

    let holds = |dirs: &ballast_kafka::LogDirs| {
        dirs.dirs
            .iter()
            .flat_map(|d| d.replicas.iter())
            .any(|r| r.topic == moving.topic && r.partition == moving.partition)
    };
    let on_spare = client
        .describe_log_dirs(spare, None)
        .await
        .expect("log dirs of the new replica");
    assert!(holds(&on_spare), "broker {spare} holds the moved replica");
    let on_old = client
        .describe_log_dirs(old_leader, None)
        .await
        .expect("log dirs of the removed replica");
    assert!(!holds(&on_old), "broker {old_leader} no longer holds it");
}

// ---------------------------------------------------------------------------------------------
// leader elections

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn preferred_leader_election_returns_leadership_to_the_first_replica_after_a_broker_restart()
{
    let sim = start(params(3), 2.0).await;
    let client = connect(&sim).await;
    let snapshot = sim.snapshot();
    let victim = 1;
    assert!(snapshot
        .partitions
        .iter()
        .all(|p| p.leader == Some(p.replicas[0])));
    let led: BTreeSet<(String, i32)> = snapshot
        .partitions
        .iter()
        .filter(|p| p.leader == Some(victim))
        .map(|p| (p.topic.clone(), p.partition))
        .collect();
    assert!(!led.is_empty(), "broker {victim} leads something");

    sim.stop_broker(victim).await.expect("stop broker");
    {
        let client = &client;
        eventually(
            "leadership moves off the stopped broker",
            Duration::from_secs(10),
            move || async move {
                let md = client.metadata(None).await.map_err(|e| e.to_string())?;
                let still: Vec<_> = md
                    .topics
                    .iter()
                    .flat_map(|t| t.partitions.iter())
                    .filter(|p| {
                        p.leader == Some(victim) || p.leader.is_none() || p.isr.contains(&victim)
                    })
                    .collect();
                if still.is_empty() {
                    Ok(())
                } else {
                    Err(format!(
                        "{} partitions still led by or in sync on {victim}",
                        still.len()
                    ))
                }
            },
        )
        .await;
    }
    sim.start_broker(victim).await.expect("start broker");
    let md = {
        let client = &client;
        eventually(
            "the restarted broker is back in every ISR",
            Duration::from_secs(15),
            move || async move {
                let md = client.metadata(None).await.map_err(|e| e.to_string())?;
                let behind = md
                    .topics
                    .iter()
                    .flat_map(|t| t.partitions.iter())
                    .filter(|p| p.replicas.contains(&victim) && !p.isr.contains(&victim))
                    .count();
                if behind == 0 {
                    Ok(md)
                } else {
                    Err(format!("{behind} replicas of broker {victim} out of sync"))
                }
            },
        )
        .await
    };
    for key in &led {
        let p = md.partition(&tp(&key.0, key.1)).expect("partition");
        assert_ne!(
            p.leader,
            Some(victim),
            "{key:?} has not moved back by itself"
        );
    }

    let results = client
        .elect_leaders(ElectionType::Preferred, None)
        .await
        .expect("elect preferred leaders");
    let elected: BTreeSet<(String, i32)> = results
        .iter()
        .map(|r| {
            assert!(r.error.is_none(), "{r:?}");
            (r.topic.clone(), r.partition)
        })
        .collect();
    assert_eq!(
        elected, led,
        "exactly the partitions whose preferred leader was elsewhere"
    );

    let md = client.metadata(None).await.expect("metadata");
    for t in &md.topics {
        for p in &t.partitions {
            assert_eq!(p.leader, Some(p.replicas[0]), "{}-{}", t.name, p.partition);
        }
    }
    assert_eq!(metadata_placement(&md), snapshot_placement(&sim.snapshot()));

    let one = led.iter().next().map(|(t, p)| tp(t, *p)).expect("one");
    let again = client
        .elect_leaders(ElectionType::Preferred, Some(&[one]))
        .await
        .expect("elect again");
    assert_eq!(error_name(&again[0].error), Some("ELECTION_NOT_NEEDED"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unclean_leader_election_brings_an_offline_partition_back_on_an_out_of_sync_replica() {
    let sim = start(params(3), 1.0).await;
    let client = connect(&sim).await;
    let snapshot = sim.snapshot();
    let part = &snapshot.partitions[0];
    let offline = tp(&part.topic, part.partition);
    let (last_in_sync, others) = (part.replicas[0], &part.replicas[1..]);

    // The others leave the ISR, then the last in-sync replica goes too: the partition is
    // offline. One of the others comes back, out of sync.
    for b in others {
        sim.stop_broker(*b).await.expect("stop");
    }
    sim.stop_broker(last_in_sync).await.expect("stop");
    let back = others[0];
    sim.start_broker(back).await.expect("start");

    let md = {
        let client = &client;
        let offline = &offline;
        eventually(
            "the partition is offline",
            Duration::from_secs(10),
            move || async move {
                let md = client.metadata(None).await.map_err(|e| e.to_string())?;
                match md.partition(offline) {
                    Some(p) if p.leader.is_none() => Ok(md),
                    other => Err(format!("{other:?}")),
                }
            },
        )
        .await
    };
    assert_eq!(md.controller_id, Some(back));
    assert_eq!(sim.truth().offline_partitions, snapshot.partitions.len());

    let preferred = client
        .elect_leaders(
            ElectionType::Preferred,
            Some(std::slice::from_ref(&offline)),
        )
        .await
        .expect("preferred election");
    assert_eq!(
        error_name(&preferred[0].error),
        Some("PREFERRED_LEADER_NOT_AVAILABLE")
    );
    let unclean = client
        .elect_leaders(ElectionType::Unclean, Some(std::slice::from_ref(&offline)))
        .await
        .expect("unclean election");
    assert!(unclean[0].error.is_none(), "{:?}", unclean[0].error);
    let md = client
        .metadata(Some(std::slice::from_ref(&offline.topic)))
        .await
        .expect("metadata");
    let p = md.partition(&offline).expect("partition");
    assert_eq!(p.leader, Some(back));
    assert_eq!(p.isr, vec![back]);
    assert_eq!(
        sim.truth().offline_partitions,
        snapshot.partitions.len() - 1
    );
}

// ---------------------------------------------------------------------------------------------
// log dirs

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn alter_replica_log_dirs_moves_a_replica_to_another_log_dir_of_its_broker() {
    let sim = start(params(3), 2.0).await;
    let client = connect(&sim).await;
    let broker = 1;
    let dirs = client
        .describe_log_dirs(broker, None)
        .await
        .expect("log dirs");
    let from = dirs
        .dirs
        .iter()
        .find(|d| !d.replicas.is_empty())
        .expect("a dir with replicas");
    let to = dirs
        .dirs
        .iter()
        .find(|d| d.path != from.path)
        .expect("another dir")
        .path
        .clone();
    let replica = from.replicas[0].clone();
    let moving = tp(&replica.topic, replica.partition);
    // Another replica of the broker, sent to a directory that does not exist (one partition per
    // request: the answer names partitions, not directories).
    let stray = dirs
        .dirs
        .iter()
        .flat_map(|d| d.replicas.iter())
        .find(|r| (r.topic.as_str(), r.partition) != (moving.topic.as_str(), moving.partition))
        .expect("another replica")
        .clone();
    let other_brokers: Vec<(i32, String)> = {
        let mut v = Vec::new();
        for b in [2, 3] {
            let d = client.describe_log_dirs(b, None).await.expect("log dirs");
            let path = d
                .dirs
                .iter()
                .find(|d| {
                    d.replicas
                        .iter()
                        .any(|r| r.topic == moving.topic && r.partition == moving.partition)
                })
                .map(|d| d.path.clone())
                .expect("the other replicas");
            v.push((b, path));
        }
        v
    };

    let results = client
        .alter_replica_log_dirs(
            broker,
            &[
                ReplicaLogDirMove {
                    topic: moving.topic.clone(),
                    partition: moving.partition,
                    path: to.clone(),
                },
                ReplicaLogDirMove {
                    topic: stray.topic.clone(),
                    partition: stray.partition,
                    path: "/no/such/dir".into(),
                },
            ],
        )
        .await
        .expect("alter replica log dirs");
    assert_eq!(results.len(), 2);
    assert!(results[0].error.is_none(), "{:?}", results[0].error);
    assert_eq!(error_name(&results[1].error), Some("LOG_DIR_NOT_FOUND"));

    {
        let client = &client;
        let moving = &moving;
        let to = &to;
        eventually(
            "the replica lives in the new log dir",
            Duration::from_secs(15),
            move || async move {
                let dirs = client
                    .describe_log_dirs(broker, None)
                    .await
                    .map_err(|e| e.to_string())?;
                let places: Vec<(String, bool)> = dirs
                    .dirs
                    .iter()
                    .flat_map(|d| {
                        d.replicas
                            .iter()
                            .filter(|r| r.topic == moving.topic && r.partition == moving.partition)
                            .map(|r| (d.path.clone(), r.is_future))
                    })
                    .collect();
                if places == vec![(to.clone(), false)] {
                    Ok(())
                } else {
                    Err(format!("replica found at {places:?}"))
                }
            },
        )
        .await;
    }
    let stray_dir = client
        .describe_log_dirs(broker, None)
        .await
        .expect("log dirs")
        .dirs
        .iter()
        .find(|d| {
            d.replicas
                .iter()
                .any(|r| r.topic == stray.topic && r.partition == stray.partition)
        })
        .map(|d| d.path.clone());
    let stray_before = dirs
        .dirs
        .iter()
        .find(|d| {
            d.replicas
                .iter()
                .any(|r| r.topic == stray.topic && r.partition == stray.partition)
        })
        .map(|d| d.path.clone());
    assert_eq!(
        stray_dir, stray_before,
        "the refused move left its replica in place"
    );
    for (b, path) in other_brokers {
        let d = client.describe_log_dirs(b, None).await.expect("log dirs");
        let now = d
            .dirs
            .iter()
            .find(|d| {
                d.replicas
                    .iter()
                    .any(|r| r.topic == moving.topic && r.partition == moving.partition)
            })
            .map(|d| d.path.clone());
        assert_eq!(now, Some(path), "broker {b}'s replica did not move");
    }
}

// ---------------------------------------------------------------------------------------------
// ACLs

fn binding(
    resource_type: AclResourceType,
    name: &str,
    pattern_type: AclPatternType,
    principal: &str,
    operation: AclOperation,
) -> AclBinding {
    AclBinding {
        resource_type,
        resource_name: name.into(),
        pattern_type,
        principal: principal.into(),
        host: "*".into(),
        operation,
        permission_type: AclPermissionType::Allow,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn acls_are_created_described_through_a_filter_and_deleted_by_a_filter() {
    let sim = start(params(3), 1.0).await;
    let client = connect(&sim).await;
    assert!(client
        .describe_acls(&AclFilter::all())
        .await
        .expect("describe")
        .is_empty());

    let alice_read = binding(
        AclResourceType::Topic,
        "orders",
        AclPatternType::Literal,
        "User:alice",
        AclOperation::Read,
    );
    let alice_write = binding(
        AclResourceType::Topic,
        "orders",
        AclPatternType::Literal,
        "User:alice",
        AclOperation::Write,
    );
    let bob_group = binding(
        AclResourceType::Group,
        "app-",
        AclPatternType::Prefixed,
        "User:bob",
        AclOperation::Read,
    );
    let alice_cluster = binding(
        AclResourceType::Cluster,
        "kafka-cluster",
        AclPatternType::Literal,
        "User:alice",
        AclOperation::Describe,
    );
    let all = vec![
        alice_read.clone(),
        alice_write.clone(),
        bob_group.clone(),
        alice_cluster.clone(),
    ];
    let created = client.create_acls(&all).await.expect("create acls");
    assert_eq!(created.len(), 4);
    for (result, b) in created.iter().zip(&all) {
        assert_eq!(&result.binding, b);
        assert!(result.error.is_none(), "{result:?}");
    }

    let described: HashSet<AclBinding> = client
        .describe_acls(&AclFilter::all())
        .await
        .expect("describe all")
        .into_iter()
        .collect();
    assert_eq!(described, all.iter().cloned().collect());

    let alice_topics = AclFilter {
        resource_type: Some(AclResourceType::Topic),
        principal: Some("User:alice".into()),
        ..AclFilter::all()
    };
    let found: HashSet<AclBinding> = client
        .describe_acls(&alice_topics)
        .await
        .expect("describe alice's topic acls")
        .into_iter()
        .collect();
    assert_eq!(
        found,
        [alice_read.clone(), alice_write.clone()]
            .into_iter()
            .collect()
    );

    let matching = AclFilter {
        resource_type: Some(AclResourceType::Group),
        resource_name: Some("app-billing".into()),
        pattern_type: AclPatternFilter::Match,
        ..AclFilter::all()
    };
    assert_eq!(
        client.describe_acls(&matching).await.expect("match filter"),
        vec![bob_group.clone()],
        "a prefixed binding applies to the names it prefixes"
    );

    let orders = AclFilter {
        resource_type: Some(AclResourceType::Topic),
        resource_name: Some("orders".into()),
        pattern_type: AclPatternFilter::Literal,
        ..AclFilter::all()
    };
    let deleted = client
        .delete_acls(std::slice::from_ref(&orders))
        .await
        .expect("delete acls");
    assert_eq!(deleted.len(), 1);
    assert_eq!(deleted[0].filter, orders);
    assert!(deleted[0].error.is_none(), "{:?}", deleted[0].error);
    let gone: HashSet<AclBinding> = deleted[0]
        .deleted
        .iter()
        .map(|d| {
            assert!(d.error.is_none(), "{d:?}");
            d.binding.clone()
        })
        .collect();
    assert_eq!(gone, [alice_read, alice_write].into_iter().collect());

    let left: HashSet<AclBinding> = client
        .describe_acls(&AclFilter::all())
        .await
        .expect("describe")
        .into_iter()
        .collect();
    assert_eq!(
        left,
        [bob_group.clone(), alice_cluster].into_iter().collect()
    );
    assert!(client
        .describe_acls(&orders)
        .await
        .expect("describe")
        .is_empty());

    let exact = client
        .delete_acls(&[AclFilter::exact(&bob_group)])
        .await
        .expect("delete exact");
    assert_eq!(exact[0].deleted.len(), 1);
    assert_eq!(exact[0].deleted[0].binding, bob_group);
}

// ---------------------------------------------------------------------------------------------
// client quotas

fn user(name: &str) -> QuotaEntity {
    QuotaEntity {
        user: Some(QuotaName::name(name)),
        ..QuotaEntity::default()
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn client_quotas_are_set_described_and_removed() {
    let sim = start(params(3), 1.0).await;
    let client = connect(&sim).await;
    assert!(client
        .describe_client_quotas(&QuotaFilter::all())
        .await
        .expect("describe")
        .is_empty());

    let reporting = QuotaEntity {
        user: Some(QuotaName::Default),
        client_id: Some(QuotaName::name("reporting")),
        ip: None,
    };
    let ip = QuotaEntity {
        ip: Some(QuotaName::name("10.0.0.1")),
        ..QuotaEntity::default()
    };
    let results = client
        .alter_client_quotas(
            &[
                QuotaAlteration {
                    entity: user("alice"),
                    ops: vec![
                        ("producer_byte_rate".into(), Some(1_048_576.0)),
                        ("consumer_byte_rate".into(), Some(2_097_152.0)),
                    ],
                },
                QuotaAlteration {
                    entity: reporting.clone(),
                    ops: vec![("request_percentage".into(), Some(50.0))],
                },
                QuotaAlteration {
                    entity: ip,
                    ops: vec![("producer_byte_rate".into(), Some(1.0))],
                },
            ],
            false,
        )
        .await
        .expect("alter quotas");
    assert!(results[0].error.is_none(), "{:?}", results[0].error);
    assert!(results[1].error.is_none(), "{:?}", results[1].error);
    assert_eq!(
        error_name(&results[2].error),
        Some("INVALID_REQUEST"),
        "an ip entity only takes connection_creation_rate"
    );

    let alice_only = QuotaFilter {
        components: vec![(QuotaEntityType::User, QuotaMatch::Exact("alice".into()))],
        strict: false,
    };
    let alice = client
        .describe_client_quotas(&alice_only)
        .await
        .expect("describe alice");
    assert_eq!(alice.len(), 1, "{alice:?}");
    assert_eq!(alice[0].entity, user("alice"));
    assert_eq!(
        alice[0].values,
        BTreeMap::from([
            ("consumer_byte_rate".to_string(), 2_097_152.0),
            ("producer_byte_rate".to_string(), 1_048_576.0),
        ])
    );
    let defaults = client
        .describe_client_quotas(&QuotaFilter {
            components: vec![(QuotaEntityType::User, QuotaMatch::Default)],
            strict: false,
        })
        .await
        .expect("describe default user");
    assert_eq!(defaults.len(), 1, "{defaults:?}");
    assert_eq!(defaults[0].entity, reporting);
    assert_eq!(defaults[0].values.get("request_percentage"), Some(&50.0));
    assert_eq!(
        client
            .describe_client_quotas(&QuotaFilter::all())
            .await
            .expect("describe all")
            .len(),
        2
    );

    let results = client
        .alter_client_quotas(
            &[QuotaAlteration {
                entity: user("alice"),
                ops: vec![("producer_byte_rate".into(), None)],
            }],
            false,
        )
        .await
        .expect("remove one quota");
    assert!(results[0].error.is_none(), "{:?}", results[0].error);
    let alice = client
        .describe_client_quotas(&alice_only)
        .await
        .expect("describe alice");
    assert_eq!(
        alice[0].values,
        BTreeMap::from([("consumer_byte_rate".to_string(), 2_097_152.0)])
    );

    client
        .alter_client_quotas(
            &[
                QuotaAlteration {
                    entity: user("alice"),
                    ops: vec![("consumer_byte_rate".into(), None)],
                },
                QuotaAlteration {
                    entity: reporting,
                    ops: vec![("request_percentage".into(), None)],
                },
            ],
            false,
        )
        .await
        .expect("remove the rest");
    assert!(client
        .describe_client_quotas(&QuotaFilter::all())
        .await
        .expect("describe")
        .is_empty());
}

// ---------------------------------------------------------------------------------------------
// consumer groups

/// Topics the scenario consumes (a consumer rate above zero).
fn consumed_topics(snapshot: &Snapshot) -> BTreeSet<String> {
    snapshot
        .partitions
        .iter()
        .filter(|p| p.consumer_msg_rate > 0.0)
        .map(|p| p.topic.clone())
        .collect()
}

fn topic_of_group(group: &str) -> &str {
    group
        .rsplit_once("-consumer-")
        .map(|(t, _)| t)
        .unwrap_or_else(|| panic!("unexpected group name {group}"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn consumer_groups_are_listed_and_described_with_members_and_decoded_assignments() {
    let sim = start(params(3), 1.0).await;
    let client = connect(&sim).await;
    let snapshot = sim.snapshot();
    let consumed = consumed_topics(&snapshot);
    assert!(!consumed.is_empty(), "the scenario has consumers");
    let partitions: BTreeMap<String, usize> = topics_of(&snapshot)
        .into_iter()
        .map(|t| {
            let n = snapshot.partitions.iter().filter(|p| p.topic == t).count();
            (t, n)
        })
        .collect();
    let brokers: BTreeSet<i32> = snapshot.brokers.iter().map(|b| b.id).collect();

    let groups = client.list_groups().await.expect("list groups");
    assert!(!groups.is_empty());
    let mut sorted_ids: Vec<&str> = groups.iter().map(|g| g.group_id.as_str()).collect();
    sorted_ids.sort_unstable();
    assert_eq!(
        groups
            .iter()
            .map(|g| g.group_id.as_str())
            .collect::<Vec<_>>(),
        sorted_ids,
        "sorted"
    );
    for g in &groups {
        assert_eq!(g.protocol_type, "consumer", "{g:?}");
        assert_eq!(g.state.as_deref(), Some("Stable"), "{g:?}");
        assert!(brokers.contains(&g.coordinator), "{g:?}");
    }
    let group_topics: BTreeSet<String> = groups
        .iter()
        .map(|g| topic_of_group(&g.group_id).to_string())
        .collect();
    assert_eq!(
        group_topics, consumed,
        "every consumed topic has its groups"
    );

    let ids: Vec<String> = groups.iter().map(|g| g.group_id.clone()).collect();
    let described = client.describe_groups(&ids).await.expect("describe groups");
    assert_eq!(described.len(), ids.len());
    let earliest_before = client
        .list_offsets(&partitions_of(&snapshot), OffsetSpec::Earliest)
        .await
        .expect("earliest");
    for (d, listing) in described.iter().zip(&groups) {
        assert_eq!(d.group_id, listing.group_id);
        assert!(d.error.is_none(), "{d:?}");
        assert_eq!(d.state, "Stable");
        assert_eq!(d.protocol_type, "consumer");
        assert_eq!(d.protocol, "range");
        assert_eq!(d.coordinator, Some(listing.coordinator));
        assert!(!d.members.is_empty(), "{d:?}");
        let topic = topic_of_group(&d.group_id);
        let mut assigned: Vec<i32> = Vec::new();
        for m in &d.members {
            assert!(
                !m.member_id.is_empty() && !m.client_id.is_empty() && !m.host.is_empty(),
                "{m:?}"
            );
            for a in &m.assignment {
                assert_eq!(a.topic, topic, "{m:?}");
                assigned.extend(&a.partitions);
            }
        }
        assigned.sort_unstable();
        assert_eq!(
            assigned,
            (0..partitions[topic] as i32).collect::<Vec<_>>(),
            "{}: every partition assigned to exactly one member",
            d.group_id
        );

        let committed = client
            .committed_offsets(&d.group_id, None)
            .await
            .expect("committed offsets");
        let latest: BTreeMap<i32, i64> = client
            .list_offsets(
                &(0..partitions[topic] as i32)
                    .map(|p| tp(topic, p))
                    .collect::<Vec<_>>(),
                OffsetSpec::Latest,
            )
            .await
            .expect("latest")
            .into_iter()
            .map(|o| (o.partition, o.offset.expect("latest")))
            .collect();
        assert_eq!(
            committed
                .iter()
                .map(|c| (c.topic.as_str(), c.partition))
                .collect::<Vec<_>>(),
            (0..partitions[topic] as i32)
                .map(|p| (topic, p))
                .collect::<Vec<_>>(),
            "{}: an offset for every partition of its topic",
            d.group_id
        );
        for c in &committed {
            assert!(c.error.is_none(), "{c:?}");
            let offset = c.offset.expect("a committed offset");
            let start = earliest_before
                .iter()
                .find(|o| o.topic == c.topic && o.partition == c.partition)
                .and_then(|o| o.offset)
                .expect("earliest");
            assert!(
                start <= offset && offset <= latest[&c.partition],
                "{c:?} outside the log {start}..={}",
                latest[&c.partition]
            );
        }
        let one = client
            .committed_offsets(&d.group_id, Some(&[tp(topic, 0)]))
            .await
            .expect("committed offset of one partition");
        assert_eq!(one.len(), 1);
        assert!(one[0].offset.is_some());
    }

    let unknown = client
        .describe_groups(&["no-such-group".to_string()])
        .await
        .expect("describe an unknown group");
    assert!(
        unknown[0].state == "Dead" || error_name(&unknown[0].error) == Some("GROUP_ID_NOT_FOUND"),
        "{unknown:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn offsets_committed_to_a_new_group_read_back_and_only_an_empty_group_can_be_deleted() {
    let sim = start(params(3), 1.0).await;
    let client = connect(&sim).await;
    let snapshot = sim.snapshot();
    let topic = topics_of(&snapshot)[0].clone();
    let group = "ballast-reset".to_string();
    let active = client.list_groups().await.expect("list groups")[0]
        .group_id
        .clone();

    let results = client
        .commit_offsets(
            &group,
            &[
                (tp(&topic, 0), 5),
                (tp(&topic, 1), 7),
                (tp("no-such-topic", 0), 1),
            ],
        )
        .await
        .expect("commit offsets");
    let outcome: Vec<(String, i32, Option<&str>)> = results
        .iter()
        .map(|r| (r.topic.clone(), r.partition, error_name(&r.error)))
        .collect();
    assert_eq!(
        outcome,
        vec![
            (topic.clone(), 0, None),
            (topic.clone(), 1, None),
            (
                "no-such-topic".to_string(),
                0,
                Some("UNKNOWN_TOPIC_OR_PARTITION")
            ),
        ]
    );

    let committed = client
        .committed_offsets(&group, None)
        .await
        .expect("committed offsets");
    let read: Vec<(String, i32, Option<i64>)> = committed
        .iter()
        .map(|c| (c.topic.clone(), c.partition, c.offset))
        .collect();
    assert_eq!(
        read,
        vec![(topic.clone(), 0, Some(5)), (topic.clone(), 1, Some(7))]
    );
    let some = client
        .committed_offsets(&group, Some(&[tp(&topic, 0), tp(&topic, 2)]))
        .await
        .expect("committed offsets of some partitions");
    assert_eq!(
        some.iter()
            .map(|c| (c.partition, c.offset))
            .collect::<Vec<_>>(),
        vec![(0, Some(5)), (2, None)]
    );
    let listed = client.list_groups().await.expect("list groups");
    let mine = listed
        .iter()
        .find(|g| g.group_id == group)
        .expect("the new group is listed");
    assert_eq!(mine.state.as_deref(), Some("Empty"));

    let refused = client
        .commit_offsets(&active, &[(tp(topic_of_group(&active), 0), 0)])
        .await
        .expect("commit to an active group");
    assert_eq!(
        error_name(&refused[0].error),
        Some("UNKNOWN_MEMBER_ID"),
        "an active group refuses a commit from outside its generation"
    );

    let deleted = client
        .delete_groups(&[group.clone(), active.clone(), "never-existed".to_string()])
        .await
        .expect("delete groups");
    let outcome: Vec<(String, Option<&str>)> = deleted
        .iter()
        .map(|r| (r.group_id.clone(), error_name(&r.error)))
        .collect();
    assert_eq!(
        outcome,
        vec![
            (group.clone(), None),
            (active.clone(), Some("NON_EMPTY_GROUP")),
            ("never-existed".to_string(), Some("GROUP_ID_NOT_FOUND")),
        ]
    );
    let listed = client.list_groups().await.expect("list groups");
    assert!(listed.iter().all(|g| g.group_id != group), "deleted");
    assert!(listed.iter().any(|g| g.group_id == active), "still there");
    assert!(client
        .committed_offsets(&group, None)
        .await
        .expect("committed offsets")
        .iter()
        .all(|c| c.offset.is_none()));
}

// ---------------------------------------------------------------------------------------------
// records

fn records_for(compression: Compression, timestamp: i64) -> Vec<ProduceRecord> {
    let tag = format!("{compression:?}");
    let value = format!("{tag} value, repeated so that it compresses. ").repeat(40);
    vec![
        ProduceRecord::new(
            Some(format!("{tag}-key-0").as_bytes()),
            Some(value.as_bytes()),
        )
        .with_header("trace", Some(b"abc-123"))
        .with_header("empty", None)
        .with_timestamp(timestamp),
        ProduceRecord::new(None, Some(format!("{tag} keyless").as_bytes()))
            .with_timestamp(timestamp + 1),
        ProduceRecord::new(Some(format!("{tag}-tombstone").as_bytes()), None)
            .with_timestamp(timestamp + 2),
        ProduceRecord::new(Some(&[0u8, 1, 2, 255]), Some(&[9u8; 300]))
            .with_header("bin", Some(&[0u8, 255]))
            .with_timestamp(timestamp + 3),
    ]
}

fn assert_same(read: &[Record], sent: &[ProduceRecord], base: i64, what: &str) {
    assert_eq!(read.len(), sent.len(), "{what}: record count");
    for (i, (r, s)) in read.iter().zip(sent).enumerate() {
        assert_eq!(r.offset, base + i as i64, "{what}: offset");
        assert_eq!(r.key, s.key, "{what} #{i}: key");
        assert_eq!(r.value, s.value, "{what} #{i}: value");
        assert_eq!(Some(r.timestamp), s.timestamp, "{what} #{i}: timestamp");
        assert!(!r.log_append_time);
        let got: BTreeSet<(String, Option<Bytes>)> = r
            .headers
            .iter()
            .map(|h| (h.key.clone(), h.value.clone()))
            .collect();
        let want: BTreeSet<(String, Option<Bytes>)> = s.headers.iter().cloned().collect();
        assert_eq!(got, want, "{what} #{i}: headers");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn produce_then_fetch_round_trips_keys_values_and_headers_with_every_compression() {
    let sim = start(params(3), 1.0).await;
    let client = connect(&sim).await;
    let created = client
        .create_topics(&[NewTopic::new("round-trip", 1, 3)], false)
        .await
        .expect("create topic");
    assert!(created[0].error.is_none(), "{:?}", created[0].error);
    let target = tp("round-trip", 0);
    let now = sim.now_ms();
    let compressions = [
        Compression::None,
        Compression::Gzip,
        Compression::Snappy,
        Compression::Lz4,
        Compression::Zstd,
    ];
    let mut sent: Vec<(Compression, i64, Vec<ProduceRecord>)> = Vec::new();
    let mut next = 0;
    for (i, c) in compressions.iter().enumerate() {
        let records = records_for(*c, now + 10 * i as i64);
        let acks = if i % 2 == 0 { Acks::All } else { Acks::Leader };
        let result = client
            .produce(&target, &records, acks, *c)
            .await
            .unwrap_or_else(|e| panic!("produce {c:?}: {e}"));
        assert_eq!(result.base_offset, Some(next), "{c:?}");
        assert_eq!(result.log_append_time, None);
        next += records.len() as i64;
        sent.push((*c, result.base_offset.unwrap_or_default(), records));
    }
    for (c, base, records) in &sent {
        let fetched = client
            .fetch(&target, *base, 1 << 20)
            .await
            .unwrap_or_else(|e| panic!("fetch {c:?}: {e}"));
        assert_eq!(fetched.high_watermark, next);
        assert_eq!(fetched.log_start_offset, Some(0));
        let ours: Vec<Record> = fetched
            .records
            .iter()
            .filter(|r| r.offset < base + records.len() as i64)
            .cloned()
            .collect();
        assert_same(&ours, records, *base, &format!("{c:?}"));
    }
    let everything = client
        .fetch_range(&target, 0, next, 4096)
        .await
        .expect("fetch range");
    let all_sent: Vec<ProduceRecord> = sent.iter().flat_map(|(_, _, r)| r.clone()).collect();
    assert_same(&everything, &all_sent, 0, "fetch_range");
    let latest = client
        .list_offsets(std::slice::from_ref(&target), OffsetSpec::Latest)
        .await
        .expect("latest");
    assert_eq!(latest[0].offset, Some(next));

    // Acks::None gets no answer, but the records land.
    let none = client
        .produce(
            &target,
            &[ProduceRecord::new(Some(b"fire"), Some(b"forget"))],
            Acks::None,
            Compression::Lz4,
        )
        .await
        .expect("produce without acks");
    assert_eq!(none.base_offset, None);
    {
        let client = &client;
        let target = &target;
        eventually(
            "the unacknowledged record lands",
            Duration::from_secs(5),
            move || async move {
                let l = client
                    .list_offsets(std::slice::from_ref(target), OffsetSpec::Latest)
                    .await
                    .map_err(|e| e.to_string())?;
                if l[0].offset == Some(next + 1) {
                    Ok(())
                } else {
                    Err(format!("{:?}", l[0].offset))
                }
            },
        )
        .await;
    }

    // Into a partition with simulated traffic: our batch comes back at its offset.
    let busy = partitions_of(&sim.snapshot())[0].clone();
    let records = records_for(Compression::Zstd, now);
    let result = client
        .produce(&busy, &records, Acks::All, Compression::Zstd)
        .await
        .expect("produce to a busy partition");
    let base = result.base_offset.expect("base offset");
    let fetched = client
        .fetch_range(&busy, base, base + records.len() as i64, 1 << 20)
        .await
        .expect("fetch from a busy partition");
    assert_same(&fetched, &records, base, "busy partition");
}

// ---------------------------------------------------------------------------------------------
// security

/// A CA and a server certificate for 127.0.0.1 and localhost signed by it: (CA PEM, identity).
fn tls_material() -> (String, TlsIdentity) {
    use rcgen::{BasicConstraints, CertificateParams, DnType, IsCa, KeyPair};
    let mut ca_params = CertificateParams::new(Vec::<String>::new()).expect("ca params");
    ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    ca_params
        .distinguished_name
        .push(DnType::CommonName, "simcluster test ca");
    let ca_key = KeyPair::generate().expect("ca key");
    let ca = ca_params.self_signed(&ca_key).expect("ca certificate");
    let params = CertificateParams::new(vec!["127.0.0.1".to_string(), "localhost".to_string()])
        .expect("server params");
    let key = KeyPair::generate().expect("server key");
    let cert = params
        .signed_by(&key, &ca, &ca_key)
        .expect("server certificate");
    (
        ca.pem(),
        TlsIdentity {
            cert_pem: cert.pem(),
            key_pem: key.serialize_pem(),
        },
    )
}

fn users() -> Vec<(String, String)> {
    vec![
        ("alice".to_string(), "alice-secret".to_string()),
        ("bob".to_string(), "bob-secret".to_string()),
    ]
}

async fn start_secure(protocol: SecurityProtocol, tls: Option<TlsIdentity>) -> SimCluster {
    let mut config = sim_config(params(3), 1.0);
    config.security = SecurityConfig {
        protocol,
        tls,
        users: users(),
    };
    SimCluster::start(config)
        .await
        .expect("start the secured simulated cluster")
}

/// Reads the cluster through `client` and checks it against the simulator: placement, every
/// broker's log dirs (a connection to each), offsets of every partition (each leader).
async fn reads_the_cluster(client: &Client, sim: &SimCluster) {
    let md = client.metadata(None).await.expect("metadata");
    let snapshot = sim.snapshot();
    assert_eq!(metadata_placement(&md), snapshot_placement(&snapshot));
    for (broker, dirs) in client.describe_all_log_dirs().await.expect("log dirs") {
        dirs.unwrap_or_else(|e| panic!("log dirs of broker {broker}: {e}"));
    }
    let offsets = client
        .list_offsets(&partitions_of(&snapshot), OffsetSpec::Latest)
        .await
        .expect("offsets");
    assert!(offsets
        .iter()
        .all(|o| o.error.is_none() && o.offset.is_some()));
}

fn assert_authentication_error(err: &Error, broker: &str, mechanism: &str) {
    match err {
        Error::Authentication {
            broker: b,
            mechanism: m,
            message,
        } => {
            assert_eq!(b, broker, "the error names the broker");
            assert_eq!(m, mechanism);
            assert!(!message.is_empty(), "with the broker's message");
        }
        other => panic!("expected an authentication error, got {other:?} ({other})"),
    }
    assert!(err.to_string().contains(broker), "{err}");
    assert!(!err.is_retriable());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn scram_sha_512_over_tls_reads_the_cluster_and_a_wrong_password_is_an_authentication_error_naming_the_broker(
) {
    let (ca_pem, identity) = tls_material();
    let dir = tempfile::tempdir().expect("temp dir");
    let ca_file = dir.path().join("ca.pem");
    std::fs::write(&ca_file, &ca_pem).expect("write the CA");
    let sim = start_secure(SecurityProtocol::SaslSsl, Some(identity)).await;
    let first = sim.broker_address(1).expect("broker 1");
    let tls = TlsConfig {
        ca_file: Some(ca_file),
        cert_file: None,
        key_file: None,
    };
    let scram = |password: &str| Sasl::ScramSha512 {
        username: "alice".into(),
        password: password.into(),
    };

    let client = Client::connect(
        client_config(&sim.bootstrap())
            .with_security(Security::SaslSsl(tls.clone(), scram("alice-secret"))),
    )
    .await
    .expect("SCRAM-SHA-512 over TLS with the right password");
    reads_the_cluster(&client, &sim).await;

    let err = Client::connect(
        client_config(&sim.bootstrap())
            .with_security(Security::SaslSsl(tls.clone(), scram("wrong"))),
    )
    .await
    .expect_err("a wrong password is refused");
    assert_authentication_error(&err, &first, "SCRAM-SHA-512");

    let err = Client::connect(
        client_config(&sim.bootstrap()).with_security(Security::SaslSsl(
            tls,
            Sasl::ScramSha512 {
                username: "mallory".into(),
                password: "alice-secret".into(),
            },
        )),
    )
    .await
    .expect_err("an unknown user is refused");
    assert_authentication_error(&err, &first, "SCRAM-SHA-512");

    // Without the CA (system roots) the simulator's certificate is not trusted.
    let err = Client::connect(
        client_config(&sim.bootstrap()).with_security(Security::SaslSsl(
            TlsConfig::default(),
            scram("alice-secret"),
        )),
    )
    .await
    .expect_err("an untrusted certificate");
    match &err {
        Error::Tls { broker, .. } => assert_eq!(broker, &first),
        other => panic!("expected a TLS error, got {other:?} ({other})"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn scram_sha_256_and_plain_over_sasl_plaintext_read_the_cluster_and_refuse_a_wrong_password()
{
    let sim = start_secure(SecurityProtocol::SaslPlaintext, None).await;
    let first = sim.broker_address(1).expect("broker 1");
    let connect_with = |sasl: Sasl| {
        Client::connect(
            client_config(&sim.bootstrap()).with_security(Security::SaslPlaintext(sasl)),
        )
    };

    let client = connect_with(Sasl::ScramSha256 {
        username: "bob".into(),
        password: "bob-secret".into(),
    })
    .await
    .expect("SCRAM-SHA-256");
    reads_the_cluster(&client, &sim).await;
    let client = connect_with(Sasl::Plain {
        username: "alice".into(),
        password: "alice-secret".into(),
    })
    .await
    .expect("PLAIN");
    reads_the_cluster(&client, &sim).await;

    let err = connect_with(Sasl::ScramSha256 {
        username: "bob".into(),
        password: "alice-secret".into(),
    })
    .await
    .expect_err("a wrong SCRAM-SHA-256 password");
    assert_authentication_error(&err, &first, "SCRAM-SHA-256");
    let err = connect_with(Sasl::Plain {
        username: "alice".into(),
        password: "bob-secret".into(),
    })
    .await
    .expect_err("a wrong PLAIN password");
    assert_authentication_error(&err, &first, "PLAIN");

    // A plaintext client gets nothing from a SASL listener.
    let plain = Client::connect(
        client_config(&sim.bootstrap())
            .with_retries(0, Duration::from_millis(10))
            .with_request_timeout(Duration::from_secs(2)),
    )
    .await;
    assert!(plain.is_err(), "no metadata without authentication");
}

/// The `_at` describes ask one named broker (each KRaft broker answers from its own view of the
/// metadata log) and answer what the any-broker describes answer.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn describes_at_a_named_broker_answer_what_any_broker_answers() {
    let sim = start(params(3), 1.0).await;
    let client = connect(&sim).await;
    let topics = topics_of(&sim.snapshot());
    let topic = ConfigResource::Topic(topics[0].clone());
    client
        .incremental_alter_configs(
            &[(
                topic.clone(),
                vec![AlterConfigOp::Set {
                    name: "retention.ms".into(),
                    value: "86400000".into(),
                }],
            )],
            false,
        )
        .await
        .expect("alter");
    client
        .alter_client_quotas(
            &[QuotaAlteration {
                entity: user("alice"),
                ops: vec![("producer_byte_rate".into(), Some(1024.0))],
            }],
            false,
        )
        .await
        .expect("alter quotas");
    let any = client.describe_config(&topic).await.expect("describe");
    let any_quotas = client
        .describe_client_quotas(&QuotaFilter::all())
        .await
        .expect("describe quotas");
    let any_acls = client
        .describe_acls(&AclFilter::all())
        .await
        .expect("describe acls");
    for broker in 1..=3 {
        let at = client
            .describe_configs_at(broker, std::slice::from_ref(&topic))
            .await
            .expect("describe at");
        assert_eq!(at.len(), 1);
        assert!(at[0].error.is_none(), "{:?}", at[0].error);
        assert_eq!(at[0].entries, any, "broker {broker}");
        assert_eq!(
            client
                .describe_client_quotas_at(broker, &QuotaFilter::all())
                .await
                .expect("quotas at"),
            any_quotas
        );
        assert_eq!(
            client
                .describe_acls_at(broker, &AclFilter::all())
                .await
                .expect("acls at"),
            any_acls
        );
    }
    assert!(client
        .describe_configs_at(99, std::slice::from_ref(&topic))
        .await
        .is_err());
}

/// Groups of every type as Kafka 4.1 shows them: ListGroups names each one's type; classic
/// DescribeGroups does not know a consumer (KIP-848) or share (KIP-932) group, so each is
/// described by its own API with its members' epochs, assigned and target partitions; a consumer
/// group commits and resets offsets like a classic one (refused while members are active), a
/// share group's backlog starts at its share-partition start offsets; only an empty group can be
/// deleted, and only a group nobody knows is not found.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_group_type_is_described_by_its_own_api_and_only_an_unknown_group_is_not_found() {
    use ballast_simcluster::state::GroupKind;
    let sim = start(params(3), 1.0).await;
    let snapshot = sim.snapshot();
    let topic = consumed_topics(&snapshot)
        .into_iter()
        .next()
        .expect("a consumed topic");
    let partitions = snapshot
        .partitions
        .iter()
        .filter(|p| p.topic == topic)
        .count();
    sim.add_group("kip848", GroupKind::Consumer, &topic, 2)
        .expect("a consumer group");
    sim.add_group("queue", GroupKind::Share, &topic, 1)
        .expect("a share group");
    let client = connect(&sim).await;

    let listed = client.list_groups().await.expect("list groups");
    let kind = |id: &str| {
        listed.iter().find(|g| g.group_id == id).map(|g| {
            (
                g.group_type.clone(),
                g.protocol_type.clone(),
                g.state.clone(),
            )
        })
    };
    let some = |s: &str| Some(s.to_string());
    assert_eq!(
        kind("kip848"),
        Some((some("consumer"), "consumer".into(), some("Stable")))
    );
    assert_eq!(
        kind("queue"),
        Some((some("share"), "share".into(), some("Stable")))
    );
    let classic = listed
        .iter()
        .find(|g| g.group_type.as_deref() == Some("classic"))
        .expect("the scenario's classic groups")
        .group_id
        .clone();

    let ids = vec![
        classic.clone(),
        "kip848".to_string(),
        "queue".to_string(),
        "nobody".to_string(),
    ];
    let d = client.describe_groups(&ids).await.expect("describe");
    assert_eq!(d[0].group_type.as_deref(), Some("classic"));
    assert_eq!(d[0].group_epoch, None);
    assert!(d[0].members.iter().all(|m| m.member_epoch.is_none()));

    let kip848 = &d[1];
    assert!(kip848.error.is_none(), "{kip848:?}");
    assert_eq!(kip848.group_type.as_deref(), Some("consumer"));
    assert_eq!(kip848.state, "Stable");
    assert_eq!(kip848.protocol, "uniform");
    assert_eq!(kip848.group_epoch, Some(1));
    assert_eq!(kip848.assignment_epoch, Some(1));
    assert_eq!(kip848.members.len(), 2);
    let mut owned: Vec<i32> = Vec::new();
    for m in &kip848.members {
        assert_eq!(m.member_epoch, Some(1));
        assert_eq!(
            m.target_assignment.as_ref(),
            Some(&m.assignment),
            "reconciled"
        );
        owned.extend(
            m.assignment
                .iter()
                .flat_map(|a| a.partitions.iter().copied()),
        );
    }
    owned.sort_unstable();
    assert_eq!(
        owned,
        (0..partitions as i32).collect::<Vec<_>>(),
        "every partition once"
    );

    let queue = &d[2];
    assert!(queue.error.is_none(), "{queue:?}");
    assert_eq!(queue.group_type.as_deref(), Some("share"));
    assert_eq!(queue.protocol, "simple");
    assert_eq!(queue.members.len(), 1);
    assert_eq!(
        queue.members[0].target_assignment, None,
        "no target in a share group"
    );

    let nobody = d[3].error.as_ref().expect("unknown");
    assert_eq!(nobody.name, "GROUP_ID_NOT_FOUND");
    assert_eq!(nobody.message.as_deref(), Some("Group nobody not found."));

    // The consumer group commits as it consumes; the share group commits nothing, its start
    // offsets advance.
    let (committed, starts) = eventually("offsets of both groups", Duration::from_secs(10), || {
        let client = client.clone();
        async move {
            let c = client
                .committed_offsets("kip848", None)
                .await
                .map_err(|e| e.to_string())?;
            let s = client
                .share_group_offsets(&["queue".to_string()])
                .await
                .map_err(|e| e.to_string())?;
            if c.len() == partitions && s[0].offsets.len() == partitions {
                Ok((c, s))
            } else {
                Err(format!("{c:?} {s:?}"))
            }
        }
    })
    .await;
    assert!(committed.iter().all(|o| o.offset.is_some()));
    assert!(starts[0].error.is_none());
    assert!(starts[0].offsets.iter().all(|o| o.offset.is_some()));
    assert!(client
        .committed_offsets("queue", None)
        .await
        .expect("offset fetch")
        .is_empty());

    // Active members: a reset commit and a delete are refused; stopped, both succeed.
    let reset = [(tp(&topic, 0), 0)];
    let refused = client
        .commit_offsets("kip848", &reset)
        .await
        .expect("commit");
    assert_eq!(error_name(&refused[0].error), Some("UNKNOWN_MEMBER_ID"));
    let refused = client
        .delete_groups(&["kip848".to_string()])
        .await
        .expect("delete");
    assert_eq!(error_name(&refused[0].error), Some("NON_EMPTY_GROUP"));
    sim.stop_group("kip848").expect("stop");
    sim.stop_group("queue").expect("stop");
    let d = client
        .describe_groups(&["kip848".to_string()])
        .await
        .expect("describe");
    assert_eq!((d[0].state.as_str(), d[0].members.len()), ("Empty", 0));
    let done = client
        .commit_offsets("kip848", &reset)
        .await
        .expect("commit");
    assert!(done[0].error.is_none(), "{done:?}");
    let share_commit = client
        .commit_offsets("queue", &reset)
        .await
        .expect("commit");
    assert_eq!(
        error_name(&share_commit[0].error),
        Some("GROUP_ID_NOT_FOUND")
    );
    let deleted = client
        .delete_groups(&["kip848".to_string(), "queue".to_string()])
        .await
        .expect("delete");
    assert!(deleted.iter().all(|r| r.error.is_none()), "{deleted:?}");
    let gone = client
        .describe_groups(&["kip848".to_string()])
        .await
        .expect("describe");
    assert_eq!(error_name(&gone[0].error), Some("GROUP_ID_NOT_FOUND"));
}
