//! Evidence from software we did not write: the client against librdkafka's mock cluster
//! (`rdkafka::mocking::MockCluster`), with data produced and offsets committed by librdkafka
//! itself. What the mock cannot do is asserted as today's behaviour and written down in
//! crates/kafka/README.md.

use std::collections::BTreeMap;
use std::time::Duration;

use ballast_kafka::{
    Acks, Client, ClientConfig, Compression, Error, OffsetSpec, ProduceRecord, TopicPartition,
};
use rdkafka::config::ClientConfig as RdConfig;
use rdkafka::consumer::{BaseConsumer, CommitMode, Consumer};
use rdkafka::mocking::MockCluster;
use rdkafka::producer::{BaseProducer, BaseRecord, Producer};
use rdkafka::{Message, Offset, TopicPartitionList};

fn config(bootstrap: &str) -> ClientConfig {
    ClientConfig::plaintext(bootstrap)
        .with_retries(5, Duration::from_millis(50))
        .with_request_timeout(Duration::from_secs(10))
}

fn rd_producer(bootstrap: &str, compression: &str) -> BaseProducer {
    RdConfig::new()
        .set("bootstrap.servers", bootstrap)
        .set("compression.type", compression)
        .set("linger.ms", "5")
        .create()
        .expect("rdkafka producer")
}

/// Produces `count` records to `topic`/`partition` with librdkafka: key `k{i}`, value `v{i}`.
fn produce_with_librdkafka(
    bootstrap: &str,
    topic: &str,
    partition: i32,
    count: usize,
    compression: &str,
) {
    let producer = rd_producer(bootstrap, compression);
    for i in 0..count {
        let key = format!("k{i}");
        let value = format!("v{i}-{}", "payload".repeat(i % 5));
        producer
            .send(
                BaseRecord::to(topic)
                    .partition(partition)
                    .key(&key)
                    .payload(&value),
            )
            .map_err(|(e, _)| e)
            .expect("enqueue");
    }
    producer.flush(Duration::from_secs(10)).expect("flush");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reads_metadata_from_librdkafka_mock_cluster() {
    let mock = MockCluster::new(3).unwrap();
    mock.create_topic("orders", 4, 3).unwrap();
    mock.create_topic("audit", 1, 1).unwrap();
    mock.broker_rack(2, "rack-b").unwrap();
    let bootstrap = mock.bootstrap_servers();
    let client = Client::connect(config(&bootstrap)).await.unwrap();
    let metadata = client.metadata(None).await.unwrap();

    assert_eq!(
        metadata.brokers.iter().map(|b| b.id).collect::<Vec<_>>(),
        vec![1, 2, 3]
    );
    assert_eq!(
        metadata.broker(2).and_then(|b| b.rack.as_deref()),
        Some("rack-b")
    );
    // the mock never sets its controller id: it reports 0, which is no broker (see README)
    assert_eq!(metadata.controller_id, Some(0));
    let orders = metadata.topic("orders").unwrap();
    assert_eq!(orders.partitions.len(), 4);
    for p in &orders.partitions {
        let leader = p.leader.expect("every mock partition has a leader");
        assert_eq!(p.replicas.len(), 3);
        assert!(p.replicas.contains(&leader));
        assert_eq!(p.isr.len(), 3);
        assert!(p.error.is_none());
    }
    assert_eq!(
        metadata.topic("audit").unwrap().partitions[0]
            .replicas
            .len(),
        1
    );

    // librdkafka's own view of the same cluster agrees on every leader and replica set
    let rd: BaseConsumer = RdConfig::new()
        .set("bootstrap.servers", &bootstrap)
        .create()
        .unwrap();
    let rd_metadata = tokio::task::spawn_blocking(move || {
        rd.fetch_metadata(Some("orders"), Duration::from_secs(10))
            .map(|m| {
                m.topics()[0]
                    .partitions()
                    .iter()
                    .map(|p| (p.id(), p.leader(), p.replicas().to_vec()))
                    .collect::<Vec<_>>()
            })
    })
    .await
    .unwrap()
    .unwrap();
    for (id, leader, replicas) in rd_metadata {
        let ours = orders
            .partitions
            .iter()
            .find(|p| p.partition == id)
            .unwrap();
        assert_eq!(ours.leader, Some(leader));
        assert_eq!(ours.replicas, replicas);
    }

    // after the mock moves a leader, a refresh sees it
    let tp = TopicPartition::new("orders", 0);
    let old = metadata.leader(&tp).unwrap();
    let new = if old == 1 { 2 } else { 1 };
    mock.partition_leader("orders", 0, Some(new)).unwrap();
    let refreshed = client.refresh_metadata().await.unwrap();
    assert_eq!(refreshed.leader(&tp), Some(new));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn lists_offsets_from_librdkafka_mock_cluster() {
    let mock = MockCluster::new(3).unwrap();
    mock.create_topic("events", 3, 2).unwrap();
    let bootstrap = mock.bootstrap_servers();
    let b = bootstrap.clone();
    tokio::task::spawn_blocking(move || {
        produce_with_librdkafka(&b, "events", 0, 10, "none");
        produce_with_librdkafka(&b, "events", 1, 4, "none");
    })
    .await
    .unwrap();
    let client = Client::connect(config(&bootstrap)).await.unwrap();
    let tps: Vec<TopicPartition> = (0..3).map(|p| TopicPartition::new("events", p)).collect();
    let earliest = client
        .list_offsets(&tps, OffsetSpec::Earliest)
        .await
        .unwrap();
    let latest = client.list_offsets(&tps, OffsetSpec::Latest).await.unwrap();
    assert_eq!(
        earliest.iter().map(|o| o.offset).collect::<Vec<_>>(),
        vec![Some(0), Some(0), Some(0)]
    );
    assert_eq!(
        latest.iter().map(|o| o.offset).collect::<Vec<_>>(),
        vec![Some(10), Some(4), Some(0)]
    );
    assert!(latest.iter().all(|o| o.error.is_none()));

    // the same answer after the mock moves a leader (NOT_LEADER → refresh → new leader)
    let tp = TopicPartition::new("events", 0);
    let old = client.cached_metadata().leader(&tp).unwrap();
    let new = if old == 3 { 1 } else { old + 1 };
    mock.partition_leader("events", 0, Some(new)).unwrap();
    let moved = client
        .list_offsets(std::slice::from_ref(&tp), OffsetSpec::Latest)
        .await
        .unwrap();
    assert_eq!(moved[0].offset, Some(10), "{moved:?}");
    assert_eq!(client.cached_metadata().leader(&tp), Some(new));

    // a lookup by timestamp: the mock does not index timestamps (see README)
    let by_time = client
        .list_offsets(&[tp], OffsetSpec::Timestamp(0))
        .await
        .unwrap();
    assert!(by_time[0].error.is_none(), "{by_time:?}");
    assert_eq!(
        by_time[0].offset, None,
        "the mock answers -1 for every timestamp lookup"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fetches_what_librdkafka_produced_from_the_mock_cluster() {
    let mock = MockCluster::new(3).unwrap();
    // librdkafka is built here without zlib and zstd: it produces none, snappy and lz4
    let codecs = ["none", "snappy", "lz4"];
    for (i, _) in codecs.iter().enumerate() {
        mock.create_topic(&format!("fetch-{i}"), 1, 3).unwrap();
    }
    let bootstrap = mock.bootstrap_servers();
    let b = bootstrap.clone();
    tokio::task::spawn_blocking(move || {
        for (i, codec) in codecs.iter().enumerate() {
            produce_with_librdkafka(&b, &format!("fetch-{i}"), 0, 25, codec);
        }
    })
    .await
    .unwrap();
    let client = Client::connect(config(&bootstrap)).await.unwrap();
    for (i, codec) in codecs.iter().enumerate() {
        let tp = TopicPartition::new(format!("fetch-{i}"), 0);
        let records = client.fetch_range(&tp, 0, 25, 1024 * 1024).await.unwrap();
        assert_eq!(records.len(), 25, "{codec}");
        for (n, r) in records.iter().enumerate() {
            assert_eq!(r.offset, n as i64, "{codec}");
            assert_eq!(
                r.key.as_deref(),
                Some(format!("k{n}").as_bytes()),
                "{codec}"
            );
            assert_eq!(
                r.value.as_deref(),
                Some(format!("v{n}-{}", "payload".repeat(n % 5)).as_bytes()),
                "{codec}"
            );
        }
        // a fetch from the middle starts at the offset asked for
        let middle = client.fetch(&tp, 10, 1024 * 1024).await.unwrap();
        assert_eq!(
            middle.records.first().map(|r| r.offset),
            Some(10),
            "{codec}"
        );
        assert_eq!(middle.high_watermark, 25);
        // a small max_bytes still makes progress (the broker returns at least one batch)
        let small = client.fetch(&tp, 0, 64).await.unwrap();
        assert!(!small.records.is_empty(), "{codec}");
        assert!(small.next_offset > 0);
    }
    let err = client
        .fetch(&TopicPartition::new("fetch-0", 0), 1000, 1024)
        .await
        .unwrap_err();
    assert_eq!(err.kafka_code(), Some(1), "OFFSET_OUT_OF_RANGE: {err}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn librdkafka_reads_what_we_produce_to_the_mock_cluster() {
    let mock = MockCluster::new(3).unwrap();
    mock.create_topic("ours", 2, 3).unwrap();
    let bootstrap = mock.bootstrap_servers();
    let client = Client::connect(config(&bootstrap)).await.unwrap();
    // librdkafka here is built without zlib and zstd and stops at a batch it cannot decode:
    // partition 1 gets the codecs it reads, partition 0 the others (read back by our fetch)
    let mut expected = BTreeMap::new();
    let mut next = 0;
    let zero = TopicPartition::new("ours", 0);
    for (i, compression) in [Compression::Gzip, Compression::Zstd]
        .into_iter()
        .enumerate()
    {
        let records = vec![ProduceRecord::new(
            Some(b"k"),
            Some(format!("{compression:?}").as_bytes()),
        )];
        let result = client
            .produce(&zero, &records, Acks::Leader, compression)
            .await
            .unwrap();
        assert_eq!(result.base_offset, Some(i as i64));
    }
    let back = client.fetch_range(&zero, 0, 2, 1 << 20).await.unwrap();
    assert_eq!(
        back.iter()
            .map(|r| r.value.clone().unwrap())
            .collect::<Vec<_>>(),
        vec![&b"Gzip"[..], &b"Zstd"[..]]
    );
    let tp = TopicPartition::new("ours", 1);
    for compression in [Compression::None, Compression::Snappy, Compression::Lz4] {
        let records: Vec<ProduceRecord> = (0..5)
            .map(|i| {
                ProduceRecord::new(
                    Some(format!("{compression:?}-{i}").as_bytes()),
                    Some(b"value"),
                )
                .with_timestamp(1_700_000_000_000)
            })
            .collect();
        let result = client
            .produce(&tp, &records, Acks::All, compression)
            .await
            .unwrap();
        assert_eq!(result.base_offset, Some(next), "{compression:?}");
        for i in 0..5 {
            expected.insert(next + i, format!("{compression:?}-{i}"));
        }
        next += 5;
    }
    // our own fetch reads all five codecs back
    let ours = client.fetch_range(&tp, 0, next, 1 << 20).await.unwrap();
    assert_eq!(ours.len() as i64, next);

    // librdkafka reads what it can decode (it is built without zlib and zstd here)
    let b = bootstrap.clone();
    let seen = tokio::task::spawn_blocking(move || {
        let consumer: BaseConsumer = RdConfig::new()
            .set("bootstrap.servers", &b)
            .set("group.id", "reader")
            .set("enable.auto.commit", "false")
            .create()
            .unwrap();
        let mut tpl = TopicPartitionList::new();
        tpl.add_partition_offset("ours", 1, Offset::Beginning)
            .unwrap();
        consumer.assign(&tpl).unwrap();
        let mut seen = BTreeMap::new();
        let deadline = std::time::Instant::now() + Duration::from_secs(15);
        while std::time::Instant::now() < deadline {
            match consumer.poll(Duration::from_millis(200)) {
                Some(Ok(m)) => {
                    let key = m.key().map(|k| String::from_utf8_lossy(k).into_owned());
                    seen.insert(m.offset(), key.unwrap_or_default());
                }
                Some(Err(e)) => {
                    seen.insert(-1 - seen.len() as i64, format!("error: {e}"));
                }
                None => {
                    if seen.keys().filter(|k| **k >= 0).count() >= 15 {
                        break;
                    }
                }
            }
        }
        seen
    })
    .await
    .unwrap();
    for (offset, key) in &expected {
        assert_eq!(seen.get(offset), Some(key), "librdkafka read {seen:?}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reads_committed_offsets_of_a_librdkafka_group_from_the_mock_cluster() {
    let mock = MockCluster::new(3).unwrap();
    mock.create_topic("orders", 2, 3).unwrap();
    let bootstrap = mock.bootstrap_servers();
    let b = bootstrap.clone();
    tokio::task::spawn_blocking(move || {
        produce_with_librdkafka(&b, "orders", 0, 10, "none");
        let consumer: BaseConsumer = RdConfig::new()
            .set("bootstrap.servers", &b)
            .set("group.id", "billing")
            .set("enable.auto.commit", "false")
            .create()
            .unwrap();
        let mut tpl = TopicPartitionList::new();
        tpl.add_partition_offset("orders", 0, Offset::Offset(7))
            .unwrap();
        tpl.add_partition_offset("orders", 1, Offset::Offset(0))
            .unwrap();
        consumer.commit(&tpl, CommitMode::Sync).unwrap();
    })
    .await
    .unwrap();

    let client = Client::connect(config(&bootstrap)).await.unwrap();
    let both = [
        TopicPartition::new("orders", 0),
        TopicPartition::new("orders", 1),
    ];
    let committed = client
        .committed_offsets("billing", Some(&both))
        .await
        .unwrap();
    let got: Vec<(String, i32, Option<i64>)> = committed
        .iter()
        .map(|c| (c.topic.clone(), c.partition, c.offset))
        .collect();
    assert_eq!(
        got,
        vec![
            ("orders".to_string(), 0, Some(7)),
            ("orders".to_string(), 1, Some(0))
        ]
    );
    // the mock cannot answer "all partitions of the group" (null topics): it echoes the null
    // array where Kafka's schema forbids one, and the answer does not decode (see README)
    let err = client.committed_offsets("billing", None).await.unwrap_err();
    match &err {
        Error::Protocol { detail, .. } => assert!(detail.contains("offsetfetch"), "{detail}"),
        other => panic!("{other:?}"),
    }

    // our simple-form commit (generation -1) resets the empty group; librdkafka-visible state
    let results = client
        .commit_offsets("billing", &[(TopicPartition::new("orders", 0), 2)])
        .await
        .unwrap();
    assert_eq!(results[0].error, None);
    let after = client
        .committed_offsets("billing", Some(&[TopicPartition::new("orders", 0)]))
        .await
        .unwrap();
    assert_eq!(after[0].offset, Some(2));

    // the mock implements neither ListGroups nor DescribeGroups nor DeleteGroups: typed errors
    let err = client.list_groups().await.unwrap_err();
    assert!(
        matches!(
            err,
            Error::UnsupportedVersion {
                api: "ListGroups",
                broker_versions: None,
                ..
            }
        ),
        "{err:?}"
    );
    let err = client
        .describe_groups(&["billing".to_string()])
        .await
        .unwrap_err();
    assert!(
        matches!(
            err,
            Error::UnsupportedVersion {
                api: "DescribeGroups",
                ..
            }
        ),
        "{err:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn admin_apis_missing_from_the_mock_cluster_fail_with_typed_errors() {
    let mock = MockCluster::new(1).unwrap();
    mock.create_topic("t", 1, 1).unwrap();
    let client = Client::connect(config(&mock.bootstrap_servers()))
        .await
        .unwrap();
    let unsupported = |r: Result<(), Error>, api: &str| match r {
        Err(Error::UnsupportedVersion {
            api: a,
            broker_versions: None,
            ..
        }) if a == api => {}
        other => panic!("{api}: {other:?}"),
    };
    unsupported(
        client.describe_cluster().await.map(|_| ()),
        "DescribeCluster",
    );
    unsupported(
        client.describe_log_dirs(1, None).await.map(|_| ()),
        "DescribeLogDirs",
    );
    unsupported(
        client
            .describe_config(&ballast_kafka::ConfigResource::Topic("t".into()))
            .await
            .map(|_| ()),
        "DescribeConfigs",
    );
    unsupported(
        client
            .create_topics(&[ballast_kafka::NewTopic::new("x", 1, 1)], false)
            .await
            .map(|_| ()),
        "CreateTopics",
    );
    unsupported(
        client.list_partition_reassignments(None).await.map(|_| ()),
        "ListPartitionReassignments",
    );
    unsupported(
        client
            .describe_acls(&ballast_kafka::AclFilter::all())
            .await
            .map(|_| ()),
        "DescribeAcls",
    );
    unsupported(
        client
            .describe_client_quotas(&ballast_kafka::QuotaFilter::all())
            .await
            .map(|_| ()),
        "DescribeClientQuotas",
    );
}
