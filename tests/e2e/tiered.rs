//! Tiered topics (KIP-405) end to end on the simulator: a topic with `remote.storage.enable`
//! whose old segments are offloaded. Its partitions' sizes, a broker's disk and a move's copy
//! are the local bytes (what DescribeLogDirs reports and a reassignment copies); the offsets held
//! only remotely are told apart by ListOffsets' earliest-local offset; the remote bytes, which
//! Kafka reports to no client, are an estimate that says so.

use std::collections::BTreeMap;
use std::time::Duration;

use ballast_simcluster::{GenerateParams, NewTopic};
use serde_json::{json, Value};

use crate::cluster::Sim;
use crate::support::{wait_for, Service};

const LOCAL: u64 = 2_000_000;

fn get(service: &Service, path: &str) -> Value {
    let r = reqwest::blocking::get(service.url(path)).expect("request");
    assert_eq!(r.status().as_u16(), 200, "{path}");
    r.json().expect("json")
}

#[test]
fn a_tiered_partitions_size_disk_and_move_cost_are_its_local_bytes_and_its_remote_offsets_are_kafkas(
) {
    let sim = Sim::start_with(
        GenerateParams {
            brokers: 3,
            racks: 3,
            topics: 1,
            partitions_per_topic: 3,
            ..GenerateParams::default()
        },
        1.0,
    );
    // 10 MB per partition at 1,000 bytes a message, of which the last 2 MB stay local.
    sim.add_topic(&NewTopic {
        name: "tiered".into(),
        partitions: 3,
        replication_factor: 2,
        size_bytes: 10_000_000,
        producer_msg_rate: 50.0,
        producer_byte_rate: 50_000.0,
        consumer_msg_rate: 0.0,
        consumer_byte_rate: 0.0,
        configs: BTreeMap::from([
            ("remote.storage.enable".to_string(), "true".to_string()),
            ("local.retention.bytes".to_string(), LOCAL.to_string()),
        ]),
    });
    // The redistribution preview is licensed.
    let license = crate::license::dev_license();
    let service = Service::start_with(&[
        ("LICENSE_STRING", license.as_str()),
        ("BALLAST_KAFKA_BOOTSTRAP_SERVERS", sim.bootstrap.as_str()),
        ("BALLAST_SAMPLE_INTERVAL", "1s"),
    ]);

    let rows: Vec<Value> = wait_for(Duration::from_secs(30), "tiered partition rows", || {
        let body = reqwest::blocking::get(service.url("/api/v1/partitions?topic=tiered"))
            .ok()?
            .json::<Value>()
            .ok()?;
        let rows = body["data"]["partitions"].as_array()?.clone();
        (rows.len() == 3 && rows.iter().all(|r| r["localStartOffset"].is_i64())).then_some(rows)
    });
    let truth = sim.tiered_logs();
    let offsets = sim.log_offsets();
    for r in &rows {
        let p = r["partition"].as_i64().expect("partition") as i32;
        let (local_start, local_size, remote_bytes) = truth[&("tiered".to_string(), p)];
        let (log_start, _) = offsets[&("tiered".to_string(), p)];
        assert_eq!(r["remoteStorage"], true, "{r}");
        // The local log only, as DescribeLogDirs reports it, never the remote part.
        assert_eq!(r["sizeBytes"], local_size, "{r}");
        assert_eq!(local_size, LOCAL);
        assert!(remote_bytes >= 7_000_000, "{remote_bytes}");
        // The simulator moves on while the service reads: offsets within a few seconds' growth.
        let seen_local = r["localStartOffset"].as_i64().expect("local start");
        assert!(
            (seen_local - local_start).abs() <= 200,
            "{r} vs {local_start}"
        );
        assert_eq!(r["earliestOffset"], log_start, "{r}");
        let remote = r["remoteOffsets"].as_i64().expect("remote offsets");
        assert_eq!(remote, seen_local - log_start, "{r}");
        // 8 MB over 1,000-byte messages are remote.
        assert!((7_800..=8_200).contains(&remote), "{r}");
        let estimate = r["remoteBytesEstimate"].as_i64().expect("estimate");
        assert!(
            (estimate - remote_bytes as i64).abs() <= 300_000,
            "{estimate} vs {remote_bytes}"
        );
    }

    let search: Value = reqwest::blocking::Client::new()
        .post(service.url("/api/v1/topics/search"))
        .json(&json!({ "query": "tiered", "match": "exact" }))
        .send()
        .and_then(|r| r.json())
        .expect("search");
    let topic = &search["data"]["topics"][0];
    assert_eq!(topic["remoteStorage"], true, "{topic}");
    assert_eq!(topic["sizeBytes"], 3 * LOCAL, "{topic}");
    assert_eq!(topic["replicaBytes"], 2 * 3 * LOCAL, "{topic}");
    let basis = topic["remoteBytesBasis"].as_str().expect("basis");
    assert!(
        basis.contains("estimate") || basis.contains("x the local log"),
        "{basis}"
    );
    assert!(basis.contains("reports no remote size"), "{basis}");

    // A broker's disk is the local bytes of its replicas.
    let dirs = get(&service, "/api/v1/cluster/logdirs?topic=tiered");
    let replica_rows = dirs["data"]["partitions"].as_array().expect("rows");
    assert_eq!(replica_rows.len(), 6, "{dirs}");
    assert!(
        replica_rows.iter().all(|r| r["sizeBytes"] == LOCAL),
        "{dirs}"
    );

    // A move's cost is what a reassignment copies: the local bytes of each added replica.
    let preview: Value = reqwest::blocking::Client::new()
        .post(service.url("/api/v1/topics/tiered/redistribute"))
        .json(&json!({ "preview": true, "brokers": [1, 2] }))
        .send()
        .and_then(|r| r.json())
        .expect("preview");
    let moves = preview["data"]["totalMoves"].as_u64().expect("moves");
    assert!(moves > 0, "{preview}");
    assert_eq!(
        preview["data"]["estimatedBytes"],
        moves * LOCAL,
        "{preview}"
    );

    // The dashboard's topic page shows both.
    let page = reqwest::blocking::get(service.url("/ui/topics/tiered"))
        .and_then(|r| r.text())
        .expect("topic page");
    assert!(page.contains("Size on brokers (local)"), "{page}");
    assert!(page.contains("offsets held only remotely"), "{page}");
    assert!(page.contains("remote only"), "{page}");
}
