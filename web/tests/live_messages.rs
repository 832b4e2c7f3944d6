//! Messages read live from a simulated cluster: ranges (start, end, offset, time, filters), one
//! message, watermarks, and the server-sent-event tail.

mod live_common;

use std::time::Duration;

use ballast_kafka::{Acks, Compression, NewTopic, ProduceRecord, TopicPartition};
use live_common::{assert_error, Harness};
use serde_json::Value;

const BASE_MS: i64 = 1_700_000_000_000;

/// `web-events`: partition 0 holds 30 records (key `order-i`, value `{"n": i}` except every tenth
/// value, which is binary `ff 00 i`; header `trace=t<i>`; timestamps BASE + i s), partition 1
/// holds 5 (key `user-i`, value `hello i`, BASE + 0.5 s + i s), partition 2 is empty.
async fn cluster_with_messages() -> Harness {
    let h = Harness::start().await;
    h.create_topic(NewTopic::new("web-events", 3, 2)).await;
    let orders: Vec<ProduceRecord> = (0..30)
        .map(|i| {
            let value = if i % 10 == 0 {
                vec![0xff, 0x00, i as u8]
            } else {
                format!("{{\"n\": {i}}}").into_bytes()
            };
            ProduceRecord::new(Some(format!("order-{i}").as_bytes()), Some(&value))
                .with_timestamp(BASE_MS + i * 1000)
                .with_header("trace", Some(format!("t{i}").as_bytes()))
        })
        .collect();
    let users: Vec<ProduceRecord> = (0..5)
        .map(|i| {
            ProduceRecord::new(
                Some(format!("user-{i}").as_bytes()),
                Some(format!("hello {i}").as_bytes()),
            )
            .with_timestamp(BASE_MS + 500 + i * 1000)
        })
        .collect();
    for (partition, records) in [(0, orders), (1, users)] {
        h.kafka
            .produce(
                &TopicPartition::new("web-events", partition),
                &records,
                Acks::All,
                Compression::Lz4,
            )
            .await
            .expect("produce");
    }
    h
}

fn messages(data: &Value) -> Vec<Value> {
    data["messages"].as_array().expect("messages").clone()
}

fn keys(data: &Value) -> Vec<String> {
    messages(data)
        .iter()
        .map(|m| m["key"].as_str().unwrap_or("<null>").to_string())
        .collect()
}

fn offsets(data: &Value) -> Vec<i64> {
    messages(data)
        .iter()
        .map(|m| m["offset"].as_i64().unwrap())
        .collect()
}

#[tokio::test]
async fn a_range_from_the_start_shows_keys_values_headers_and_timestamps() {
    let h = cluster_with_messages().await;
    let data = h
        .data("/api/v1/topics/web-events/messages?partition=0&from=earliest&limit=5")
        .await;
    assert_eq!(data["from"], "earliest");
    assert_eq!(data["count"], 5);
    assert_eq!(offsets(&data), [0, 1, 2, 3, 4]);
    let first = &messages(&data)[1];
    assert_eq!(first["partition"], 0);
    assert_eq!(first["key"], "order-1");
    assert_eq!(first["keyEncoding"], "text");
    assert_eq!(first["value"], "{\"n\": 1}");
    assert_eq!(first["valueEncoding"], "text");
    assert_eq!(first["valueSize"], 8);
    assert_eq!(first["timestamp"], BASE_MS + 1000);
    assert_eq!(first["timestampIso"], "2023-11-14T22:13:21.000Z");
    assert_eq!(first["timestampType"], "CreateTime");
    assert_eq!(
        first["headers"],
        serde_json::json!([{"key": "trace", "value": "t1", "valueEncoding": "text"}])
    );
    assert_eq!(first["truncated"], false);
    let binary = &messages(&data)[0];
    assert_eq!(binary["value"], "/wAA");
    assert_eq!(binary["valueEncoding"], "base64");
    let cursor = &data["partitions"][0];
    assert_eq!(cursor["lowWatermark"], 0);
    assert_eq!(cursor["highWatermark"], 30);
    assert_eq!(cursor["startOffset"], 0);
    assert_eq!(cursor["nextOffset"], 5);
}

#[tokio::test]
async fn a_range_defaults_to_the_latest_twenty_and_clamps_the_limit_at_fifty() {
    let h = cluster_with_messages().await;
    let latest = h
        .data("/api/v1/topics/web-events/messages?partition=0")
        .await;
    assert_eq!(latest["from"], "latest");
    assert_eq!(latest["limit"], 20);
    assert_eq!(offsets(&latest), (10..30).collect::<Vec<_>>());
    let all = h
        .data("/api/v1/topics/web-events/messages?partition=0&from=earliest&limit=5000")
        .await;
    assert_eq!(all["limit"], 50);
    assert_eq!(all["count"], 30);
    let zero = h
        .data("/api/v1/topics/web-events/messages?partition=0&from=earliest&limit=0")
        .await;
    assert_eq!(zero["count"], 20);
}

#[tokio::test]
async fn a_range_starts_at_an_offset_or_a_time() {
    let h = cluster_with_messages().await;
    let at = h
        .data("/api/v1/topics/web-events/messages?partition=0&offset=12&limit=3")
        .await;
    assert_eq!(offsets(&at), [12, 13, 14]);
    assert_eq!(at["partitions"][0]["nextOffset"], 15);
    let since = h
        .data(&format!(
            "/api/v1/topics/web-events/messages?timestamp={}",
            BASE_MS + 25_000
        ))
        .await;
    assert_eq!(
        keys(&since),
        ["order-25", "order-26", "order-27", "order-28", "order-29"]
    );
}

#[tokio::test]
async fn a_range_over_every_partition_is_in_time_order() {
    let h = cluster_with_messages().await;
    let first = h
        .data("/api/v1/topics/web-events/messages?from=earliest&limit=4")
        .await;
    assert_eq!(first["partition"], Value::Null);
    assert_eq!(keys(&first), ["order-0", "user-0", "order-1", "user-1"]);
    assert_eq!(first["partitions"].as_array().map(Vec::len), Some(3));
    // partition 0 continues after order-1, partition 1 after user-1
    assert_eq!(first["partitions"][0]["nextOffset"], 2);
    assert_eq!(first["partitions"][1]["nextOffset"], 2);
    let everything = h
        .data("/api/v1/topics/web-events/messages?from=earliest&limit=50")
        .await;
    assert_eq!(everything["count"], 35);
    let newest = h.data("/api/v1/topics/web-events/messages?limit=3").await;
    assert_eq!(keys(&newest), ["order-27", "order-28", "order-29"]);
}

#[tokio::test]
async fn key_and_value_filters_select_messages_from_either_end() {
    let h = cluster_with_messages().await;
    let users = h
        .data("/api/v1/topics/web-events/messages?from=earliest&keyFilter=user-")
        .await;
    assert_eq!(users["count"], 5);
    assert_eq!(users["keyFilter"], "user-");
    let one = h
        .data("/api/v1/topics/web-events/messages?valueFilter=hello%203")
        .await;
    assert_eq!(keys(&one), ["user-3"]);
    // "n": 1 matches 1 and 11 to 19 (10 is binary): the newest three
    let newest = h
        .data("/api/v1/topics/web-events/messages?partition=0&valueFilter=%22n%22:%201&limit=3")
        .await;
    assert_eq!(offsets(&newest), [17, 18, 19]);
    let oldest = h
        .data("/api/v1/topics/web-events/messages?partition=0&from=earliest&valueFilter=%22n%22:%201&limit=3")
        .await;
    assert_eq!(offsets(&oldest), [1, 11, 12]);
    assert_eq!(oldest["partitions"][0]["nextOffset"], 13);
    assert!(oldest["scanned"].as_u64().unwrap() >= 13);
}

#[tokio::test]
async fn one_message_is_shown_whole_and_offsets_outside_the_log_are_404() {
    let h = cluster_with_messages().await;
    let data = h.data("/api/v1/topics/web-events/messages/0/7").await;
    assert_eq!(data["topic"], "web-events");
    assert_eq!(data["partition"], 0);
    assert_eq!(data["offset"], 7);
    assert_eq!(data["key"], "order-7");
    assert_eq!(data["value"], "{\"n\": 7}");
    assert_eq!(data["headers"][0]["value"], "t7");
    let binary = h.data("/api/v1/topics/web-events/messages/0/20").await;
    assert_eq!(binary["value"], "/wAU");
    for path in [
        "/api/v1/topics/web-events/messages/0/30",
        "/api/v1/topics/web-events/messages/0/999",
        "/api/v1/topics/web-events/messages/2/0",
        "/api/v1/topics/web-events/messages/9/0",
        "/api/v1/topics/nope/messages/0/0",
    ] {
        let (status, body) = h.get(path).await;
        assert_error(status, &body, 404);
    }
    for path in [
        "/api/v1/topics/web-events/messages/x/0",
        "/api/v1/topics/web-events/messages/0/-1",
        "/api/v1/topics/web-events/messages/0/1?raw=true",
    ] {
        let (status, body) = h.get(path).await;
        assert_error(status, &body, 400);
    }
}

#[tokio::test]
async fn watermarks_give_each_partitions_low_high_and_message_count() {
    let h = cluster_with_messages().await;
    let data = h.data("/api/v1/topics/web-events/watermarks").await;
    assert_eq!(data["topic"], "web-events");
    assert_eq!(data["partitionCount"], 3);
    assert_eq!(data["totalMessages"], 35);
    let rows: Vec<(i64, i64, i64, i64)> = data["partitions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            assert!(p["leader"].is_i64(), "{p}");
            (
                p["partition"].as_i64().unwrap(),
                p["lowWatermark"].as_i64().unwrap(),
                p["highWatermark"].as_i64().unwrap(),
                p["messages"].as_i64().unwrap(),
            )
        })
        .collect();
    assert_eq!(rows, [(0, 0, 30, 30), (1, 0, 5, 5), (2, 0, 0, 0)]);
}

#[tokio::test]
async fn synthetic_traffic_is_browsable_too() {
    let h = cluster_with_messages().await;
    let topic = h.sim.snapshot().partitions[0].topic.clone();
    let data = h
        .data(&format!(
            "/api/v1/topics/{topic}/messages?partition=0&limit=2"
        ))
        .await;
    assert_eq!(data["count"], 2);
    let m = &messages(&data)[1];
    assert_eq!(m["key"], format!("key-{}", m["offset"]));
}

#[tokio::test]
async fn a_filter_that_matches_nothing_stops_at_the_scan_budget() {
    let h = cluster_with_messages().await;
    h.sim
        .add_topic(&ballast_simcluster::NewTopic {
            name: "web-big".into(),
            partitions: 1,
            replication_factor: 1,
            size_bytes: 5_000_000,
            producer_msg_rate: 10.0,
            producer_byte_rate: 1_000.0,
            consumer_msg_rate: 0.0,
            consumer_byte_rate: 0.0,
            configs: Default::default(),
        })
        .expect("add topic");
    let marks = h.data("/api/v1/topics/web-big/watermarks").await;
    assert!(
        marks["totalMessages"].as_i64() > Some(20_000),
        "a log longer than the budget: {marks}"
    );
    for from in ["earliest", "latest"] {
        let data = h
            .data(&format!(
                "/api/v1/topics/web-big/messages?partition=0&from={from}&keyFilter=no-such-key"
            ))
            .await;
        assert_eq!(data["count"], 0, "{from}");
        assert_eq!(data["scanLimitReached"], true, "{from}");
        let scanned = data["scanned"].as_u64().unwrap();
        assert!((1_000..=10_000).contains(&scanned), "{from}: {scanned}");
    }
}

#[tokio::test]
async fn bad_message_queries_are_400_and_unknown_topics_or_partitions_404() {
    let h = cluster_with_messages().await;
    for path in [
        "/api/v1/topics/web-events/messages?partition=x",
        "/api/v1/topics/web-events/messages?partition=-1",
        "/api/v1/topics/web-events/messages?limit=-1",
        "/api/v1/topics/web-events/messages?from=middle",
        "/api/v1/topics/web-events/messages?offset=3",
        "/api/v1/topics/web-events/messages?partition=0&offset=3&from=earliest",
        "/api/v1/topics/web-events/messages?timestamp=yesterday",
        "/api/v1/topics/web-events/messages?search=x",
        "/api/v1/topics/web-events/watermarks?partition=0",
        "/api/v1/topics/web-events/messages/tail?partition=x",
        "/api/v1/topics/web-events/messages/tail?keepalive=0",
    ] {
        let (status, body) = h.get(path).await;
        assert_error(status, &body, 400);
    }
    for path in [
        "/api/v1/topics/nope/messages",
        "/api/v1/topics/nope/watermarks",
        "/api/v1/topics/nope/messages/tail",
        "/api/v1/topics/web-events/messages?partition=7",
        "/api/v1/topics/web-events/messages/tail?partition=7",
    ] {
        let (status, body) = h.get(path).await;
        assert_error(status, &body, 404);
    }
}

// ---------------------------------------------------------------------------------------------
// the tail

/// Reads server-sent events from a streaming response.
struct Sse {
    response: reqwest::Response,
    buffer: String,
}

impl Sse {
    async fn open(h: &Harness, path: &str) -> Sse {
        let response = h.http.get(h.url(path)).send().await.expect("request");
        assert_eq!(response.status().as_u16(), 200);
        assert_eq!(
            response.headers()["content-type"].to_str().unwrap(),
            "text/event-stream"
        );
        Sse {
            response,
            buffer: String::new(),
        }
    }

    /// The next block (event or comment), within 10 s.
    async fn next_block(&mut self) -> String {
        let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
        loop {
            if let Some(end) = self.buffer.find("\n\n") {
                let block = self.buffer[..end].to_string();
                self.buffer.drain(..end + 2);
                return block;
            }
            let chunk = tokio::time::timeout_at(deadline, self.response.chunk())
                .await
                .expect("an event within 10 s")
                .expect("stream")
                .expect("stream still open");
            self.buffer
                .push_str(std::str::from_utf8(&chunk).expect("utf-8"));
        }
    }

    /// The next event named `name` (skipping comments and other events): its data as JSON.
    async fn next_event(&mut self, name: &str) -> Value {
        loop {
            let block = self.next_block().await;
            let event = block.lines().find_map(|l| l.strip_prefix("event: "));
            if event == Some(name) {
                let data: String = block
                    .lines()
                    .filter_map(|l| l.strip_prefix("data: "))
                    .collect();
                return serde_json::from_str(&data).expect("json data");
            }
        }
    }
}

async fn produce(h: &Harness, partition: i32, key: &str) {
    h.kafka
        .produce(
            &TopicPartition::new("web-events", partition),
            &[ProduceRecord::new(Some(key.as_bytes()), Some(b"live"))],
            Acks::All,
            Compression::None,
        )
        .await
        .expect("produce");
}

#[tokio::test]
async fn the_tail_delivers_a_record_produced_after_subscribing() {
    let h = cluster_with_messages().await;
    let mut tail = Sse::open(&h, "/api/v1/topics/web-events/messages/tail").await;
    let subscribed = tail.next_event("subscribed").await;
    assert_eq!(subscribed["topic"], "web-events");
    assert_eq!(
        subscribed["partitions"],
        serde_json::json!([
            {"partition": 0, "offset": 30},
            {"partition": 1, "offset": 5},
            {"partition": 2, "offset": 0}
        ])
    );
    produce(&h, 2, "live-1").await;
    let message = tail.next_event("message").await;
    assert_eq!(message["key"], "live-1");
    assert_eq!(message["value"], "live");
    assert_eq!(message["partition"], 2);
    assert_eq!(message["offset"], 0);
    produce(&h, 0, "live-2").await;
    let next = tail.next_event("message").await;
    assert_eq!(
        (next["key"].as_str(), next["offset"].as_i64()),
        (Some("live-2"), Some(30))
    );
}

#[tokio::test]
async fn the_tail_follows_one_partition_with_filters() {
    let h = cluster_with_messages().await;
    let mut tail = Sse::open(
        &h,
        "/api/v1/topics/web-events/messages/tail?partition=1&keyFilter=keep",
    )
    .await;
    tail.next_event("subscribed").await;
    produce(&h, 0, "keep-elsewhere").await;
    produce(&h, 1, "drop-1").await;
    produce(&h, 1, "keep-1").await;
    let message = tail.next_event("message").await;
    assert_eq!(message["key"], "keep-1");
    assert_eq!(message["partition"], 1);
}

#[tokio::test]
async fn the_tail_sends_keepalive_comments_while_idle() {
    let h = cluster_with_messages().await;
    let mut tail = Sse::open(&h, "/api/v1/topics/web-events/messages/tail?keepalive=1").await;
    tail.next_event("subscribed").await;
    let block = tail.next_block().await;
    assert_eq!(block, ": keepalive");
}
