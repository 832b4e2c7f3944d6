//! The harness of the `observed_*` tests: the web router over a database that holds an observed
//! view written by hand, so every figure an endpoint reports is known in advance.

#![allow(dead_code)]

use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};

use ballast_config::{Config, RawConfig};
use ballast_schema::{
    BrokerReading, ClusterFacts, Observation, ObservedBroker, ObservedGroup, ObservedGroupOffset,
    ObservedLogDir, ObservedPartition, ObservedReplica, ObservedTopic, ObservedWrite,
    PartitionRates, Store,
};
use serde_json::Value;

pub const MIB: f64 = 1024.0 * 1024.0;

pub fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64)
}

pub struct Harness {
    pub store: Store,
    pub base: String,
    pub http: reqwest::Client,
    _dir: tempfile::TempDir,
}

impl Harness {
    /// The router over an empty database (no sample yet).
    pub async fn empty() -> Harness {
        let dir = tempfile::tempdir().expect("temp dir");
        let db = dir.path().join("ballast.db");
        Store::migrate(&db).expect("migrate");
        let store = Store::open(&db).expect("open store");
        let raw = RawConfig::from_pairs(
            [
                ("BALLAST_KAFKA_BOOTSTRAP_SERVERS", "127.0.0.1:9"),
                ("BALLAST_DATA_DIR", dir.path().to_str().expect("utf-8 path")),
                ("BALLAST_READY_STALE_AFTER", "3m"),
            ]
            .map(|(k, v)| (k.to_string(), v.to_string())),
            None,
        )
        .expect("raw config");
        let config = Config::from_raw(&raw).expect("valid config");
        let state = ballast_web::AppState::new(
            store.clone(),
            Arc::new(config),
            Arc::new(ballast_runtime::SystemClock),
        );
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind");
        let addr = listener.local_addr().expect("address");
        tokio::spawn(async move {
            let _ = axum::serve(listener, ballast_web::router(state)).await;
        });
        Harness {
            store,
            base: format!("http://{addr}"),
            http: reqwest::Client::new(),
            _dir: dir,
        }
    }

    /// The router over the [`fixture`] cluster, observed twice (the second time just now).
    pub async fn with_fixture() -> Harness {
        let h = Harness::empty().await;
        let now = now_ms();
        h.store
            .write_observed(&fixture(now - 60_000, true))
            .unwrap();
        h.store
            .write_observed(&fixture(now - 1_000, false))
            .unwrap();
        h.observed(now - 1_000, true);
        h
    }

    /// Records the observer's latest attempt at `at_ms`.
    pub fn observed(&self, at_ms: i64, ok: bool) {
        self.store
            .record_observation(&Observation {
                kind: "brokers".into(),
                observed_at_ms: at_ms,
                ok,
                error: (!ok).then(|| "connection refused".to_string()),
                detail: serde_json::json!({}),
            })
            .unwrap();
    }

    pub fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }

    /// GET `path`: the status and the JSON body.
    pub async fn get(&self, path: &str) -> (u16, Value) {
        let response = self.http.get(self.url(path)).send().await.expect("request");
        let status = response.status().as_u16();
        let body = response.json().await.expect("json body");
        (status, body)
    }

    pub async fn text(&self, path: &str) -> (u16, String) {
        let response = self.http.get(self.url(path)).send().await.expect("request");
        let status = response.status().as_u16();
        (status, response.text().await.expect("text body"))
    }

    /// GET `path` expecting 200: the envelope's `data`.
    pub async fn data(&self, path: &str) -> Value {
        let (status, body) = self.get(path).await;
        assert_eq!(status, 200, "GET {path}: {body}");
        assert_eq!(body["success"], true, "GET {path}: {body}");
        body["data"].clone()
    }

    pub async fn post(&self, path: &str, body: &str) -> (u16, Value) {
        let response = self
            .http
            .post(self.url(path))
            .header("content-type", "application/json")
            .body(body.to_string())
            .send()
            .await
            .expect("request");
        let status = response.status().as_u16();
        (status, response.json().await.expect("json body"))
    }
}

/// Asserts the general error envelope with status `expected`; returns the details.
pub fn assert_error(status: u16, body: &Value, expected: u16) -> String {
    assert_eq!(status, expected, "{body}");
    assert_eq!(body["success"], false, "{body}");
    assert!(
        body["error"].as_str().is_some_and(|e| !e.is_empty()),
        "{body}"
    );
    body["details"].as_str().expect("details").to_string()
}

fn rates(producer_msg: f64, bytes_per_msg: f64, consumer_msg: f64) -> Option<PartitionRates> {
    Some(PartitionRates {
        producer_msg_rate: producer_msg,
        producer_byte_rate: producer_msg * bytes_per_msg,
        consumer_msg_rate: consumer_msg,
        consumer_byte_rate: consumer_msg * bytes_per_msg,
        window_ms: 1_800_000,
    })
}

struct P {
    topic: &'static str,
    partition: i32,
    replicas: Vec<i32>,
    leader: Option<i32>,
    isr: Vec<i32>,
    size: i64,
    rates: Option<PartitionRates>,
    /// Offset lag per replica (None: unknown).
    lags: Vec<Option<i64>>,
    adding: Vec<i32>,
}

/// The fixture cluster. Brokers 1..=3 on racks r1..r3 and broker 4 on r1, which is down in the
/// second sample (`first` false). In the second sample:
/// - `orders`: 6 partitions, RF 3, min.insync 2, 100 msg/s of 1 KiB in and out each except
///   orders-2 (2000 msg/s: a hot partition, 4.8× the topic's mean); one consumer group.
///   orders-0 is under-replicated by follower lag (broker 3 out of sync, lag 500); orders-1 is on
///   brokers 1, 4, 2 (racks r1, r1, r2: not rack aware) and under-replicated (broker 4 down).
/// - `clicks`: 2 partitions, RF 2, 16 and 8 MiB/s produced (12 MiB/s per partition, above twice
///   the 5 MiB/s target).
/// - `audit`: 1 partition on brokers 2, 3, 4 with min.insync 2 and only broker 2 in sync:
///   under-replicated (broker_down) and under min ISR.
/// - `moving`: 1 partition gaining replica 3 by a reassignment (out of sync: reassignment).
/// - `dead`: 1 partition whose only replica is on broker 4: offline.
/// - `idle`: 30 partitions, RF 1, no traffic, 100 bytes each.
/// - `__consumer_offsets`: internal, 1 partition.
pub fn fixture(at_ms: i64, first: bool) -> ObservedWrite {
    let kib = 1024.0;
    let mut parts: Vec<P> = Vec::new();
    for p in 0..6 {
        let (replicas, isr, lags) = match p {
            0 => (
                vec![1, 2, 3],
                vec![1, 2],
                vec![Some(0), Some(10), Some(500)],
            ),
            1 if first => (
                vec![1, 4, 2],
                vec![1, 4, 2],
                vec![Some(0), Some(5), Some(5)],
            ),
            1 => (vec![1, 4, 2], vec![1, 2], vec![Some(0), None, Some(5)]),
            _ => {
                let a = (p % 3) + 1;
                let b = (a % 3) + 1;
                let c = (b % 3) + 1;
                (
                    vec![a, b, c],
                    vec![a, b, c],
                    vec![Some(0), Some(1), Some(2)],
                )
            }
        };
        parts.push(P {
            topic: "orders",
            partition: p,
            leader: Some(replicas[0]),
            replicas,
            isr,
            size: 1_000_000_000,
            rates: if p == 2 {
                rates(2000.0, kib, 2000.0)
            } else {
                rates(100.0, kib, 100.0)
            },
            lags,
            adding: vec![],
        });
    }
    for p in 0..2 {
        let msgs = if p == 0 { 16.0 * kib } else { 8.0 * kib };
        parts.push(P {
            topic: "clicks",
            partition: p,
            replicas: vec![p + 1, p + 2],
            leader: Some(p + 1),
            isr: vec![p + 1, p + 2],
            size: 2_000_000_000,
            rates: rates(msgs, kib, 0.0),
            lags: vec![Some(0), Some(0)],
            adding: vec![],
        });
    }
    let four_up = first;
    parts.push(P {
        topic: "audit",
        partition: 0,
        replicas: vec![2, 3, 4],
        leader: Some(2),
        isr: if four_up { vec![2, 3, 4] } else { vec![2] },
        size: 10_000_000,
        rates: rates(1.0, 100.0, 0.0),
        lags: vec![Some(0), Some(0), if four_up { Some(0) } else { None }],
        adding: vec![],
    });
    parts.push(P {
        topic: "moving",
        partition: 0,
        replicas: vec![1, 2, 3],
        leader: Some(1),
        isr: vec![1, 2],
        size: 5_000_000,
        rates: rates(2.0, 100.0, 0.0),
        lags: vec![Some(0), Some(0), Some(40)],
        adding: vec![3],
    });
    parts.push(P {
        topic: "dead",
        partition: 0,
        replicas: vec![4],
        leader: if four_up { Some(4) } else { None },
        isr: vec![4],
        size: 1_000,
        rates: None,
        lags: vec![if four_up { Some(0) } else { None }],
        adding: vec![],
    });
    for p in 0..30 {
        parts.push(P {
            topic: "idle",
            partition: p,
            replicas: vec![(p % 3) + 1],
            leader: Some((p % 3) + 1),
            isr: vec![(p % 3) + 1],
            size: 100,
            rates: rates(0.0, 0.0, 0.0),
            lags: vec![Some(0)],
            adding: vec![],
        });
    }
    parts.push(P {
        topic: "__consumer_offsets",
        partition: 0,
        replicas: vec![1, 2, 3],
        leader: Some(1),
        isr: vec![1, 2, 3],
        size: 1_000,
        rates: rates(1.0, 100.0, 0.0),
        lags: vec![Some(0), Some(0), Some(0)],
        adding: vec![],
    });
    parts.sort_by(|a, b| (a.topic, a.partition).cmp(&(b.topic, b.partition)));

    let mut w = ObservedWrite {
        cluster: ClusterFacts {
            cluster_id: Some("fixture".into()),
            controller_id: Some(1),
            sampled_at_ms: at_ms,
            sample_duration_ms: 250,
            brokers: if four_up { 4 } else { 3 },
            log_dirs_read: if four_up { 4 } else { 3 },
            partitions: parts.len() as u32,
            offsets_read: parts.len() as u32 - u32::from(!four_up),
            groups: 1,
            groups_read: 1,
            detail: serde_json::json!({"observerRssBytes": 50_000_000}),
            controller_source: Some("quorum".into()),
            metadata_mode: Some("kraft".into()),
            kafka_version_min: Some("3.5".into()),
            kafka_version_max: Some("3.6".into()),
            quorum: Some(serde_json::json!({
                "leaderId": 1, "leaderEpoch": 4, "highWatermark": 1537,
                "voters": [
                    {"id": 1, "logEndOffset": 1537, "lag": 0},
                    {"id": 2, "logEndOffset": 1537, "lag": 0},
                    {"id": 3, "logEndOffset": 1530, "lag": 7}
                ],
                "observers": []
            })),
        },
        ..ObservedWrite::default()
    };
    for id in 1..=4 {
        let alive = id != 4 || four_up;
        w.brokers.push(ObservedBroker {
            broker_id: id,
            host: alive.then(|| "127.0.0.1".into()),
            port: alive.then_some(9090 + id),
            rack: alive.then(|| format!("r{}", if id == 4 { 1 } else { id })),
            alive,
            first_seen_ms: alive.then_some(at_ms),
            last_seen_ms: alive.then_some(at_ms),
            log_dirs_read: alive,
            log_dirs_error: (!alive).then(|| "broker is not in the metadata".into()),
        });
        if alive {
            let used: i64 = parts
                .iter()
                .filter(|p| p.replicas.contains(&id))
                .map(|p| p.size)
                .sum();
            w.log_dirs.push(ObservedLogDir {
                broker_id: id,
                path: "/var/lib/kafka/data-0".into(),
                error: None,
                total_bytes: Some(4 << 40),
                usable_bytes: Some(3 << 40),
                used_bytes: used,
                replicas: parts.iter().filter(|p| p.replicas.contains(&id)).count() as i64,
            });
        }
    }
    let mut topics: Vec<&str> = parts.iter().map(|p| p.topic).collect();
    topics.dedup();
    for t in topics {
        let of: Vec<&P> = parts.iter().filter(|p| p.topic == t).collect();
        w.topics.push(ObservedTopic {
            name: t.into(),
            topic_id: None,
            partitions: of.len() as i32,
            replication_factor: of[0].replicas.len() as i32,
            internal: t.starts_with("__"),
            compacted: t == "__consumer_offsets",
            min_insync: Some(if t == "orders" || t == "audit" { 2 } else { 1 }),
            retention_ms: Some(604_800_000),
            retention_bytes: None,
            cleanup_policy: Some(
                if t.starts_with("__") {
                    "compact"
                } else {
                    "delete"
                }
                .into(),
            ),
            remote_storage: Some(false),
        });
    }
    for p in &parts {
        for (b, lag) in p.replicas.iter().zip(&p.lags) {
            let alive = *b != 4 || four_up;
            w.replicas.push(ObservedReplica {
                topic: p.topic.into(),
                partition: p.partition,
                broker_id: *b,
                is_future: false,
                log_dir: alive.then(|| "/var/lib/kafka/data-0".into()),
                size_bytes: alive.then_some(p.size),
                // As Kafka 3.5+: DescribeLogDirs' offset lag is 0 for a current log; the
                // follower's lag behind its leader is in bytes.
                offset_lag: alive.then_some(0),
                lag_bytes: if alive { *lag } else { None },
            });
        }
        w.partitions.push(ObservedPartition {
            topic: p.topic.into(),
            partition: p.partition,
            leader: p.leader,
            leader_epoch: Some(1),
            replicas: p.replicas.clone(),
            isr: p.isr.clone(),
            offline_replicas: vec![],
            adding: p.adding.clone(),
            removing: vec![],
            size_bytes: p.leader.map(|_| p.size),
            avg_size_bytes: p.leader.map(|_| p.size as f64),
            earliest_offset: Some(0),
            local_start_offset: None,
            latest_offset: Some(1_000_000),
            offsets_at_ms: Some(at_ms),
            produced_total: 1_000,
            consumed_total: 500,
            rates: p.rates,
        });
        if p.topic == "orders" {
            w.group_offsets.push(ObservedGroupOffset {
                group_id: "orders-app".into(),
                topic: p.topic.into(),
                partition: p.partition,
                committed_offset: 999_000,
                lag: Some(1_000),
            });
        }
    }
    w.groups.push(ObservedGroup {
        group_id: "orders-app".into(),
        state: Some("Stable".into()),
        protocol_type: "consumer".into(),
        members: Some(2),
        coordinator: Some(1),
        offsets_read: true,
    });
    for b in &w.brokers {
        let id = b.broker_id;
        let led: Vec<&P> = parts.iter().filter(|p| p.leader == Some(id)).collect();
        let sum = |f: fn(&PartitionRates) -> f64| -> f64 {
            led.iter().filter_map(|p| p.rates.as_ref()).map(f).sum()
        };
        w.readings.push(BrokerReading {
            broker_id: id,
            at_ms,
            resolution_ms: 0,
            values: [
                Some(led.len() as f64),
                Some(
                    parts
                        .iter()
                        .filter(|p| p.replicas.contains(&id) && p.leader != Some(id))
                        .count() as f64,
                ),
                b.alive.then(|| {
                    parts
                        .iter()
                        .filter(|p| p.replicas.contains(&id))
                        .map(|p| p.size as f64)
                        .sum()
                }),
                Some(sum(|r| r.producer_msg_rate)),
                Some(sum(|r| r.producer_byte_rate)),
                Some(sum(|r| r.consumer_msg_rate)),
                Some(sum(|r| r.consumer_byte_rate)),
            ],
        });
    }
    w
}

/// One Prometheus sample: name, labels, value.
pub type Sample = (String, Vec<(String, String)>, f64);

/// Parses the Prometheus text format: every sample line as (name, labels, value); panics on a
/// line that is neither a comment nor a well-formed sample.
pub fn parse_prometheus(text: &str) -> Vec<Sample> {
    let mut out = Vec::new();
    for line in text.lines() {
        if line.is_empty() || line.starts_with('#') {
            if let Some(rest) = line.strip_prefix("# TYPE ") {
                let kind = rest.split_whitespace().nth(1).expect("a type");
                assert!(
                    ["counter", "gauge", "histogram", "summary", "untyped"].contains(&kind),
                    "{line}"
                );
            }
            continue;
        }
        let (series, value) = line.rsplit_once(' ').expect("name and value");
        let value: f64 = match value {
            "+Inf" => f64::INFINITY,
            "-Inf" => f64::NEG_INFINITY,
            v => v
                .parse()
                .unwrap_or_else(|_| panic!("bad value in {line:?}")),
        };
        let (name, labels) = match series.split_once('{') {
            None => (series.to_string(), Vec::new()),
            Some((name, rest)) => {
                let inner = rest.strip_suffix('}').expect("closing brace");
                let labels = inner
                    .split("\",")
                    .filter(|l| !l.is_empty())
                    .map(|l| {
                        let (k, v) = l.split_once("=\"").expect("label=\"value\"");
                        (k.to_string(), v.trim_end_matches('"').to_string())
                    })
                    .collect();
                (name.to_string(), labels)
            }
        };
        assert!(
            name.chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == ':'),
            "{line}"
        );
        out.push((name, labels, value));
    }
    out
}
