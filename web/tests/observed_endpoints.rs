//! The observed read endpoints over a hand-written view (`observed_common::fixture`): shapes,
//! figures, filters, the 503 while data is unavailable and the error envelope on bad input.

mod mcp_common;
mod observed_common;

use std::collections::BTreeSet;

use observed_common::{assert_error, fixture, now_ms, Harness, MIB};
use serde_json::Value;

fn keys(v: &Value) -> BTreeSet<String> {
    v.as_object()
        .unwrap_or_else(|| panic!("an object: {v}"))
        .keys()
        .cloned()
        .collect()
}

fn set(names: &[&str]) -> BTreeSet<String> {
    names.iter().map(|s| s.to_string()).collect()
}

const READS: [&str; 12] = [
    "/api/v1/cluster",
    "/api/v1/cluster/comprehensive",
    "/api/v1/cluster/logdirs",
    "/api/v1/cluster/health",
    "/api/v1/cluster/follower-lag",
    "/api/v1/partitions",
    "/api/v1/brokers/racks",
    "/api/v1/optimize/partitions",
    "/api/v1/activity/partitions",
    "/api/v1/activity/topics",
    "/api/v1/activity/brokers",
    "/api/v1/cluster/follower-lag?summary=true",
];

#[tokio::test]
async fn every_endpoint_answers_503_before_the_first_sample() {
    let h = Harness::empty().await;
    h.observed(now_ms(), false);
    for path in READS {
        let (status, body) = h.get(path).await;
        let details = assert_error(status, &body, 503);
        assert_eq!(body["error"], "cluster data unavailable", "{path}");
        assert!(details.contains("connection refused"), "{path}: {details}");
    }
    let (status, body) = h.post("/api/v1/topics/search", "{}").await;
    assert_error(status, &body, 503);
}

#[tokio::test]
async fn a_sample_older_than_the_ready_bound_is_unavailable() {
    let h = Harness::empty().await;
    let old = now_ms() - 10 * 60_000;
    h.store.write_observed(&fixture(old, true)).unwrap();
    h.observed(old, true);
    let (status, body) = h.get("/api/v1/cluster").await;
    let details = assert_error(status, &body, 503);
    assert!(details.contains("BALLAST_READY_STALE_AFTER"), "{details}");
}

#[tokio::test]
async fn cluster_gives_counts_rates_and_coverage() {
    let h = Harness::with_fixture().await;
    let d = h.data("/api/v1/cluster").await;
    assert_eq!(d["clusterId"], "fixture");
    assert_eq!(d["controllerId"], 1);
    assert_eq!(d["brokers"]["total"], 4);
    assert_eq!(d["controllerSource"], "quorum");
    assert_eq!(d["metadataMode"], "kraft");
    assert_eq!(
        d["kafkaVersion"],
        serde_json::json!({"min": "3.5", "max": "3.6", "text": "3.5 to 3.6"})
    );
    assert_eq!(d["quorum"]["leaderId"], 1);
    assert_eq!(d["quorum"]["voters"][2]["lag"], 7);
    assert_eq!(d["brokers"]["alive"], 3);
    assert_eq!(d["brokers"]["down"], serde_json::json!([4]));
    assert_eq!(d["topics"], 7);
    assert_eq!(d["internalTopics"], 1);
    assert_eq!(d["partitions"], 42);
    assert_eq!(d["offlinePartitions"], 1);
    assert_eq!(d["underReplicatedPartitions"], 4);
    assert_eq!(d["consumerGroups"], 1);
    assert_eq!(d["racks"], 3);
    assert!(d["historySeconds"].as_i64().unwrap() >= 58);
    // 24 MiB/s of clicks, 2500 KiB/s of orders, 400 B/s of the rest.
    let produced = d["producerByteRate"].as_f64().unwrap();
    assert!(
        (produced - (24.0 * MIB + 2500.0 * 1024.0 + 400.0)).abs() < 1.0,
        "{produced}"
    );
    // The dead partition has no rates and broker 4's log dirs were not read.
    assert_eq!(d["coverage"]["brokers"], 3);
    assert_eq!(d["coverage"]["ratesKnown"], 41);
    assert_eq!(d["coverage"]["complete"], false);
}

#[tokio::test]
async fn rates_are_null_with_coverage_until_partitions_have_two_readings() {
    let h = Harness::empty().await;
    let mut w = fixture(now_ms(), true);
    for p in &mut w.partitions {
        p.rates = None;
    }
    h.store.write_observed(&w).unwrap();
    let d = h.data("/api/v1/cluster").await;
    assert_eq!(d["producerMsgRate"], Value::Null);
    assert_eq!(d["coverage"]["ratesKnown"], 0);
    assert_eq!(d["coverage"]["rates"], 0.0);
    let rows = h.data("/api/v1/partitions?fields=producerMsgRate").await;
    assert!(rows["partitions"]
        .as_array()
        .unwrap()
        .iter()
        .all(|r| r["producerMsgRate"].is_null()));
}

#[tokio::test]
async fn follower_lag_has_the_spec_shape_and_summary_omits_the_lists() {
    let h = Harness::with_fixture().await;
    let d = h.data("/api/v1/cluster/follower-lag").await;
    assert_eq!(
        keys(&d),
        set(&[
            "lag_unit",
            "cluster_total_lag",
            "cluster_max_lag",
            "cluster_total_lag_bytes",
            "cluster_max_lag_bytes",
            "broker_lag",
            "topic_lag",
            "partition_lag",
            "urp_classification"
        ])
    );
    assert_eq!(d["lag_unit"], "bytes");
    assert_eq!(d["cluster_total_lag"], 567);
    assert_eq!(d["cluster_max_lag"], 500);
    assert_eq!(d["cluster_total_lag_bytes"], 567);
    assert_eq!(d["cluster_max_lag_bytes"], 500);
    let brokers = d["broker_lag"].as_array().unwrap();
    for b in brokers {
        assert_eq!(
            keys(b),
            set(&[
                "broker_id",
                "total_lag",
                "max_lag",
                "total_lag_bytes",
                "max_lag_bytes",
                "replica_count"
            ])
        );
        assert_eq!(b["total_lag"], b["total_lag_bytes"]);
        assert_eq!(b["max_lag"], b["max_lag_bytes"]);
    }
    let sum: i64 = brokers
        .iter()
        .map(|b| b["total_lag"].as_i64().unwrap())
        .sum();
    assert_eq!(sum, 567);
    for t in d["topic_lag"].as_array().unwrap() {
        assert_eq!(
            keys(t),
            set(&[
                "topic",
                "total_lag",
                "max_lag",
                "total_lag_bytes",
                "max_lag_bytes",
                "partition_count"
            ])
        );
    }
    let parts = d["partition_lag"].as_array().unwrap();
    assert_eq!(parts[0]["topic"], "orders");
    assert_eq!(parts[0]["partition"], 0);
    for p in parts {
        assert_eq!(keys(p), set(&["topic", "partition", "replicas"]));
        for r in p["replicas"].as_array().unwrap() {
            assert_eq!(
                keys(r),
                set(&["broker_id", "offset_lag", "lag_bytes", "is_leader"])
            );
            assert_eq!(r["offset_lag"], r["lag_bytes"]);
        }
    }
    for u in d["urp_classification"].as_array().unwrap() {
        assert_eq!(
            keys(u),
            set(&["topic", "partition", "cause", "lagging_brokers"])
        );
    }

    let s = h.data("/api/v1/cluster/follower-lag?summary=true").await;
    assert_eq!(
        keys(&s),
        set(&[
            "lag_unit",
            "cluster_total_lag",
            "cluster_max_lag",
            "cluster_total_lag_bytes",
            "cluster_max_lag_bytes",
            "broker_lag"
        ])
    );
    assert_eq!(s["cluster_total_lag"], 567);
    assert_eq!(s["broker_lag"], d["broker_lag"]);
    let f = h.data("/api/v1/cluster/follower-lag?summary=false").await;
    assert_eq!(f, d);
}

#[tokio::test]
async fn urp_classification_names_the_cause_and_the_lagging_brokers() {
    let h = Harness::with_fixture().await;
    let d = h.data("/api/v1/cluster/follower-lag").await;
    let urps: Vec<(String, i64, String, Value)> = d["urp_classification"]
        .as_array()
        .unwrap()
        .iter()
        .map(|u| {
            (
                u["topic"].as_str().unwrap().to_string(),
                u["partition"].as_i64().unwrap(),
                u["cause"].as_str().unwrap().to_string(),
                u["lagging_brokers"].clone(),
            )
        })
        .collect();
    assert_eq!(
        urps,
        vec![
            (
                "audit".into(),
                0,
                "broker_down".into(),
                serde_json::json!([3, 4])
            ),
            (
                "moving".into(),
                0,
                "reassignment".into(),
                serde_json::json!([3])
            ),
            (
                "orders".into(),
                0,
                "follower_lag".into(),
                serde_json::json!([3])
            ),
            (
                "orders".into(),
                1,
                "broker_down".into(),
                serde_json::json!([4])
            ),
        ]
    );
}

#[tokio::test]
async fn follower_lag_filters_by_topic_and_broker() {
    let h = Harness::with_fixture().await;
    let d = h.data("/api/v1/cluster/follower-lag?topic=moving").await;
    assert_eq!(d["cluster_total_lag"], 40);
    assert_eq!(d["topic_lag"].as_array().unwrap().len(), 1);
    let p = &d["partition_lag"][0];
    assert_eq!(
        p["replicas"],
        serde_json::json!([
            {"broker_id": 1, "offset_lag": 0, "lag_bytes": 0, "is_leader": true},
            {"broker_id": 2, "offset_lag": 0, "lag_bytes": 0, "is_leader": false},
            {"broker_id": 3, "offset_lag": 40, "lag_bytes": 40, "is_leader": false},
        ])
    );
    let d = h.data("/api/v1/cluster/follower-lag?broker=3").await;
    assert_eq!(d["cluster_max_lag"], 500);
    let brokers: Vec<i64> = d["broker_lag"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b["broker_id"].as_i64().unwrap())
        .collect();
    assert_eq!(brokers, vec![3]);
    let d = h
        .data("/api/v1/cluster/follower-lag?broker=1&topic=orders&summary=true")
        .await;
    assert!(d.get("partition_lag").is_none());
}

#[tokio::test]
async fn health_lists_offline_under_replicated_and_min_isr_partitions() {
    let h = Harness::with_fixture().await;
    let d = h.data("/api/v1/cluster/health").await;
    assert_eq!(d["status"], "critical");
    assert_eq!(d["brokers"]["down"], serde_json::json!([4]));
    assert_eq!(d["partitions"]["offline"], 1);
    assert_eq!(d["partitions"]["underReplicated"], 4);
    assert_eq!(d["partitions"]["underMinIsr"], 1);
    assert_eq!(d["partitions"]["atMinIsr"], 33);
    assert_eq!(d["offlinePartitions"][0]["topic"], "dead");
    assert_eq!(d["underMinIsrPartitions"][0]["topic"], "audit");
    assert_eq!(
        d["underMinIsrPartitions"][0]["outOfSync"],
        serde_json::json!([3, 4])
    );
    assert_eq!(d["rackAssessment"]["status"], "complete");
    assert_eq!(d["rackAssessment"]["notRackAwarePartitions"], 1);
    let capped = h.data("/api/v1/cluster/health?limit=5").await;
    assert_eq!(capped["atMinIsrPartitions"].as_array().unwrap().len(), 5);
    assert_eq!(capped["partitions"]["atMinIsr"], 33);
    assert_eq!(capped["truncated"], true);
}

#[tokio::test]
async fn partitions_lacking_only_replicas_a_reassignment_is_adding_are_counted_apart() {
    let h = Harness::with_fixture().await;
    let d = h.data("/api/v1/cluster/health").await;
    // Of the four under-replicated partitions, moving-0 lacks only broker 3, which its
    // reassignment is adding; the others lost replicas (broker 4 is down).
    assert_eq!(d["partitions"]["underReplicated"], 4);
    assert_eq!(d["partitions"]["underReplicatedByReassignment"], 1);
}

#[tokio::test]
async fn partitions_minimal_and_fields_choose_the_row_fields() {
    let h = Harness::with_fixture().await;
    let all = h.data("/api/v1/partitions").await;
    assert_eq!(all["total"], 42);
    assert_eq!(all["partitions"].as_array().unwrap().len(), 42);
    let row = &all["partitions"][0];
    assert_eq!(row["topic"], "__consumer_offsets");
    assert!(row.get("producerByteRate").is_some() && row.get("rackAware").is_some());

    let minimal = h.data("/api/v1/partitions?minimal=true").await;
    for r in minimal["partitions"].as_array().unwrap() {
        assert_eq!(
            keys(r),
            set(&["topic", "partition", "leader", "replicas", "isr"])
        );
    }
    let chosen = h
        .data("/api/v1/partitions?fields=sizeBytes,%20leader&topic=orders")
        .await;
    assert_eq!(chosen["total"], 6);
    for r in chosen["partitions"].as_array().unwrap() {
        assert_eq!(keys(r), set(&["topic", "partition", "leader", "sizeBytes"]));
    }
    let page = h
        .data("/api/v1/partitions?topic=idle&limit=5&offset=28")
        .await;
    assert_eq!(page["count"], 2);
    assert_eq!(page["partitions"][0]["partition"], 28);
    let on4 = h.data("/api/v1/partitions?brokerId=4&minimal=true").await;
    assert_eq!(on4["total"], 3);
}

#[tokio::test]
async fn racks_are_assessed_complete_only_when_every_broker_has_a_rack() {
    let h = Harness::with_fixture().await;
    let d = h.data("/api/v1/brokers/racks").await;
    let a = &d["assessment"];
    assert_eq!(a["status"], "complete");
    assert_eq!(a["rackCount"], 3);
    assert_eq!(a["notRackAwarePartitions"], 1);
    assert_eq!(a["notRackAwareDetails"][0]["topic"], "orders");
    assert_eq!(a["notRackAwareDetails"][0]["partition"], 1);
    assert_eq!(a["notRackAwareDetails"][0]["expectedRacks"], 3);
    assert_eq!(a["notRackAwareDetails"][0]["distinctRacks"], 2);
    let r1 = &d["racks"][0];
    assert_eq!(r1["rack"], "r1");
    assert_eq!(r1["brokers"], serde_json::json!([1, 4]));
    assert_eq!(r1["brokersAlive"], 1);

    // A broker without a rack makes the assessment partial: no count is given.
    let h = Harness::empty().await;
    let mut w = fixture(now_ms(), true);
    w.brokers[2].rack = None;
    h.store.write_observed(&w).unwrap();
    let d = h.data("/api/v1/brokers/racks").await;
    assert_eq!(d["assessment"]["status"], "partial");
    assert_eq!(d["assessment"]["notRackAwarePartitions"], Value::Null);
    assert_eq!(d["brokersWithoutRack"], serde_json::json!([3]));
    let mut w = fixture(now_ms(), true);
    for b in &mut w.brokers {
        b.rack = None;
    }
    h.store.write_observed(&w).unwrap();
    let d = h.data("/api/v1/brokers/racks").await;
    assert_eq!(d["assessment"]["status"], "no_racks");
}

#[tokio::test]
async fn logdirs_summary_is_broker_level_and_a_down_broker_reads_null() {
    let h = Harness::with_fixture().await;
    let full = h.data("/api/v1/cluster/logdirs").await;
    let b1 = &full["brokers"][0];
    assert_eq!(b1["brokerId"], 1);
    assert_eq!(b1["dirs"][0]["path"], "/var/lib/kafka/data-0");
    assert!(b1["usedBytes"].as_i64().unwrap() > 0);
    let b4 = &full["brokers"][3];
    assert_eq!(b4["logDirsRead"], false);
    assert_eq!(b4["usedBytes"], Value::Null);
    assert_eq!(full["coverage"]["logDirs"], 1.0);
    assert_eq!(full["topics"][0]["topic"], "orders");
    assert!(full.get("partitions").is_none());

    let summary = h.data("/api/v1/cluster/logdirs?summary=true").await;
    assert!(summary["brokers"][0].get("dirs").is_none());
    assert!(summary.get("topics").is_none());

    let drill = h
        .data("/api/v1/cluster/logdirs?topic=clicks&brokerId=2")
        .await;
    assert_eq!(drill["brokers"].as_array().unwrap().len(), 1);
    let rows = drill["partitions"].as_array().unwrap();
    assert_eq!(rows.len(), 2);
    assert!(rows
        .iter()
        .all(|r| r["brokerId"] == 2 && r["topic"] == "clicks"));
}

#[tokio::test]
async fn comprehensive_summary_omits_partition_arrays() {
    let h = Harness::with_fixture().await;
    let full = h.data("/api/v1/cluster/comprehensive").await;
    let orders = full["topics"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "orders")
        .unwrap()
        .clone();
    assert_eq!(orders["partitions"].as_array().unwrap().len(), 6);
    assert_eq!(orders["partitionCount"], 6);
    assert_eq!(full["brokers"].as_array().unwrap().len(), 4);
    assert_eq!(full["brokers"][0]["loads"]["leaderCount"], 16.0);
    assert_eq!(full["consumerGroups"]["groups"][0]["totalLag"], 6000);
    assert_eq!(full["health"]["offlinePartitions"], 1);

    let summary = h.data("/api/v1/cluster/comprehensive?summary=true").await;
    assert!(summary["topics"]
        .as_array()
        .unwrap()
        .iter()
        .all(|t| t.get("partitions").is_none() && t.get("partitionCount").is_some()));
    assert_eq!(summary["cluster"]["partitions"], 42);
}

/// The names of a search answer's topics, in order.
fn topic_names(data: &Value) -> Vec<&str> {
    data["topics"]
        .as_array()
        .expect("topics")
        .iter()
        .map(|t| t["name"].as_str().expect("a name"))
        .collect()
}

/// The agents' search of every topic (MCP `search_topics` without a query) is shaped once per
/// reading and copied per call: every call alike, the REST search's page with the agents'
/// envelope, its text block the same JSON; a search with a query is made for its call.
#[tokio::test]
async fn the_agents_search_of_every_topic_is_the_rest_search_shaped_once_per_reading() {
    let h = Harness::with_fixture().await;
    let (_, rest) = h.post("/api/v1/topics/search", "{}").await;
    let rest = &rest["data"];
    let (first, text) = mcp_common::call(&h.http, &h.base, "search_topics", Value::Null).await;
    assert_eq!(first, text, "the text block is the structured content");
    assert_eq!(first["topics"], rest["topics"]);
    assert_eq!(first["total"], rest["total"]);
    assert_eq!(first["count"], rest["count"]);
    let args = serde_json::json!({"query": "", "match": "CONTAINS", "limit": 100});
    let (again, _) = mcp_common::call(&h.http, &h.base, "search_topics", args).await;
    assert_eq!(again, first);
    let search = |args: Value| mcp_common::call(&h.http, &h.base, "search_topics", args);
    let (o, _) = search(serde_json::json!({"query": "O"})).await;
    assert_eq!(topic_names(&o), ["moving", "orders"]);
    let (two, _) = search(serde_json::json!({"limit": 2})).await;
    assert_eq!(two["count"], 2);
    assert_eq!(two["truncated"], true);
}

#[tokio::test]
async fn topic_search_matches_names_without_internal_topics_by_default() {
    let h = Harness::with_fixture().await;
    let (status, body) = h.post("/api/v1/topics/search", r#"{"query": "O"}"#).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(topic_names(&body["data"]), ["moving", "orders"]);
    let (_, body) = h
        .post(
            "/api/v1/topics/search",
            r#"{"query": "__*", "match": "glob", "includeInternal": true}"#,
        )
        .await;
    assert_eq!(body["data"]["total"], 1);
    assert_eq!(body["data"]["topics"][0]["name"], "__consumer_offsets");
    let (_, body) = h
        .post("/api/v1/topics/search", r#"{"query": "", "limit": 2}"#)
        .await;
    assert_eq!(body["data"]["total"], 6);
    assert_eq!(body["data"]["count"], 2);
    assert_eq!(body["data"]["truncated"], true);
    let (status, body) = h.post("/api/v1/topics/search", "").await;
    assert_eq!(status, 200);
    assert_eq!(body["data"]["total"], 6);
}

#[tokio::test]
async fn partition_count_recommendations_carry_a_priority_and_a_reason() {
    let h = Harness::with_fixture().await;
    let d = h.data("/api/v1/optimize/partitions").await;
    let recs: Vec<(String, String, String, i64, i64)> = d["recommendations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            assert!(!r["reason"].as_str().unwrap().is_empty());
            (
                r["topic"].as_str().unwrap().to_string(),
                r["priority"].as_str().unwrap().to_string(),
                r["kind"].as_str().unwrap().to_string(),
                r["currentPartitions"].as_i64().unwrap(),
                r["recommendedPartitions"].as_i64().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        recs,
        vec![
            ("clicks".into(), "High".into(), "increase".into(), 2, 6),
            ("idle".into(), "Low".into(), "reduce".into(), 30, 3),
            ("orders".into(), "Low".into(), "skew".into(), 6, 6),
        ]
    );
    assert_eq!(d["byPriority"]["High"], 1);
    assert_eq!(d["byPriority"]["Low"], 2);
    let low = h
        .data("/api/v1/optimize/partitions?priority=Low&limit=1")
        .await;
    assert_eq!(low["total"], 2);
    assert_eq!(low["count"], 1);
    assert_eq!(low["truncated"], true);
    let one = h.data("/api/v1/optimize/partitions?topic=clicks").await;
    assert_eq!(one["total"], 1);
}

#[tokio::test]
async fn activity_scores_are_shares_of_traffic_that_sum_to_100() {
    let h = Harness::with_fixture().await;
    let d = h.data("/api/v1/activity/partitions?limit=1000").await;
    let rows = d["partitions"].as_array().unwrap();
    assert_eq!(d["total"], 42);
    let sum: f64 = rows
        .iter()
        .map(|r| r["activityScore"].as_f64().unwrap())
        .sum();
    assert!((sum - 100.0).abs() < 1e-6, "{sum}");
    // Plain: topic and partition order.
    assert_eq!(rows[0]["topic"], "__consumer_offsets");
    let sorted = h
        .data("/api/v1/activity/partitions?sortBy=producerByteRate&limit=2")
        .await;
    assert_eq!(sorted["partitions"][0]["topic"], "clicks");
    assert_eq!(sorted["partitions"][0]["partition"], 0);
    assert_eq!(sorted["partitions"][0]["level"], "hot");
    assert_eq!(sorted["truncated"], true);
    let dead = h.data("/api/v1/activity/partitions?topic=dead").await;
    assert_eq!(dead["partitions"][0]["level"], "unknown");
    let led = h
        .data("/api/v1/activity/partitions?brokerId=3&limit=1000")
        .await;
    assert!(led["partitions"]
        .as_array()
        .unwrap()
        .iter()
        .all(|r| r["leader"] == 3));

    let topics = h.data("/api/v1/activity/topics").await;
    assert_eq!(topics["topics"][0]["topic"], "clicks");
    let orders = h
        .data("/api/v1/activity/partitions?aggregate=topic&topic=orders")
        .await;
    assert_eq!(orders["topics"][0]["hottestPartition"]["partition"], 2);
    let brokers = h.data("/api/v1/activity/brokers").await;
    let sum: f64 = brokers["brokers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b["activityScore"].as_f64().unwrap())
        .sum();
    assert!((sum - 100.0).abs() < 1e-6, "{sum}");
    assert_eq!(brokers["brokers"].as_array().unwrap().len(), 4);
}

#[tokio::test]
async fn comprehensive_pages_whole_topics_and_names_the_next_page() {
    let h = Harness::with_fixture().await;
    let summary = h.data("/api/v1/cluster/comprehensive?summary=true").await;
    let expected: Vec<(String, u64)> = summary["topics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| {
            (
                t["name"].as_str().unwrap().to_string(),
                t["partitionCount"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(summary["page"]["nextOffset"], Value::Null);
    assert_eq!(summary["page"]["totalTopics"], expected.len());
    assert_eq!(summary["page"]["totalPartitions"], 42);

    // The default page holds the whole (small) cluster.
    let all = h.data("/api/v1/cluster/comprehensive").await;
    assert_eq!(all["page"]["nextOffset"], Value::Null);
    assert_eq!(all["page"]["partitions"], 42);
    assert_eq!(all["page"]["limit"], 500);

    // Small pages: every topic exactly once, whole, in order; a page never exceeds `limit`
    // rows unless it holds a single larger topic; the common parts are on every page.
    let limit = 7u64;
    let mut seen: Vec<(String, u64)> = Vec::new();
    let mut offset = Some(0u64);
    let mut pages = 0;
    while let Some(o) = offset {
        let page = h
            .data(&format!(
                "/api/v1/cluster/comprehensive?limit={limit}&offset={o}"
            ))
            .await;
        pages += 1;
        let topics = page["topics"].as_array().unwrap();
        assert!(!topics.is_empty(), "page at {o} is empty");
        let rows: u64 = topics
            .iter()
            .map(|t| t["partitions"].as_array().unwrap().len() as u64)
            .sum();
        assert!(
            rows <= limit || topics.len() == 1,
            "page at {o}: {rows} rows"
        );
        assert_eq!(page["page"]["partitions"], rows);
        assert_eq!(page["page"]["offset"], o);
        assert_eq!(page["brokers"].as_array().unwrap().len(), 4);
        assert_eq!(page["health"]["offlinePartitions"], 1);
        for t in topics {
            let n = t["partitions"].as_array().unwrap().len() as u64;
            assert_eq!(t["partitionCount"], n, "{} split across pages", t["name"]);
            seen.push((t["name"].as_str().unwrap().to_string(), n));
        }
        offset = page["page"]["nextOffset"].as_u64();
        assert!(pages <= expected.len(), "paging does not end");
    }
    assert_eq!(seen, expected);
    assert!(pages > 1);

    // Past the end: no topics, no next page.
    let past = h
        .data(&format!(
            "/api/v1/cluster/comprehensive?offset={}",
            expected.len() + 5
        ))
        .await;
    assert_eq!(past["topics"].as_array().unwrap().len(), 0);
    assert_eq!(past["page"]["nextOffset"], Value::Null);
}

#[tokio::test]
async fn bad_input_gives_the_error_envelope_with_a_4xx() {
    let h = Harness::with_fixture().await;
    let cases: [(&str, u16); 31] = [
        ("/api/v1/cluster?verbose=true", 400),
        ("/api/v1/cluster/comprehensive?offset=-1", 400),
        ("/api/v1/cluster/comprehensive?limit=many", 400),
        ("/api/v1/cluster/comprehensive?summary=true&limit=10", 400),
        ("/api/v1/brokers/racks?rack=r1", 400),
        ("/api/v1/cluster/follower-lag?sumary=true", 400),
        ("/api/v1/partitions?minimal=true&feilds=leader", 400),
        ("/api/v1/cluster/comprehensive?summary=maybe", 400),
        ("/api/v1/cluster/logdirs?summary=1x", 400),
        ("/api/v1/cluster/logdirs?topic=nope", 404),
        ("/api/v1/cluster/logdirs?brokerId=x", 400),
        ("/api/v1/cluster/logdirs?brokerId=99", 404),
        ("/api/v1/cluster/health?limit=-1", 400),
        ("/api/v1/cluster/follower-lag?summary=maybe", 400),
        ("/api/v1/cluster/follower-lag?broker=x", 400),
        ("/api/v1/cluster/follower-lag?broker=99", 404),
        ("/api/v1/cluster/follower-lag?topic=nope", 404),
        ("/api/v1/partitions?minimal=yes", 400),
        ("/api/v1/partitions?fields=bogus", 400),
        ("/api/v1/partitions?topic=nope", 404),
        ("/api/v1/partitions?brokerId=99", 404),
        ("/api/v1/partitions?limit=ten", 400),
        ("/api/v1/optimize/partitions?priority=urgent", 400),
        ("/api/v1/optimize/partitions?topic=nope", 404),
        ("/api/v1/activity/partitions?sortBy=bogus", 400),
        ("/api/v1/activity/partitions?aggregate=broker", 400),
        ("/api/v1/activity/partitions?topic=nope", 404),
        ("/api/v1/activity/topics?topic=nope", 404),
        ("/api/v1/activity/brokers?brokerId=99", 404),
        ("/api/v1/activity/brokers?sortBy=bogus", 400),
        ("/api/v1/brokers/racks/x", 404),
    ];
    for (path, expected) in cases {
        let (status, body) = h.get(path).await;
        assert_error(status, &body, expected);
    }
    for body in [
        "{",
        r#"{"query": 5}"#,
        r#"{"quer": "x"}"#,
        r#"{"match": "regex"}"#,
        "[]",
    ] {
        let (status, response) = h.post("/api/v1/topics/search", body).await;
        assert_error(status, &response, 400);
    }
}

#[tokio::test]
async fn metrics_expose_rack_assessment_observation_freshness_and_broker_loads() {
    let h = Harness::with_fixture().await;
    let (status, text) = h.text("/metrics").await;
    assert_eq!(status, 200);
    let samples = observed_common::parse_prometheus(&text);
    let value = |name: &str, labels: &[(&str, &str)]| -> Option<f64> {
        samples
            .iter()
            .find(|(n, l, _)| {
                n == name
                    && labels
                        .iter()
                        .all(|(k, v)| l.iter().any(|(lk, lv)| lk == k && lv == v))
            })
            .map(|(_, _, v)| *v)
    };
    assert_eq!(
        value("ballast_cluster_broker_observation_current", &[]),
        Some(1.0)
    );
    assert_eq!(
        value(
            "ballast_cluster_rack_assessment_status",
            &[("status", "complete")]
        ),
        Some(1.0)
    );
    assert_eq!(
        value(
            "ballast_cluster_rack_assessment_status",
            &[("status", "partial")]
        ),
        Some(0.0)
    );
    assert_eq!(
        value("ballast_cluster_not_rack_aware_partitions", &[]),
        Some(1.0)
    );
    assert_eq!(
        value(
            "ballast_broker_load",
            &[("broker_id", "1"), ("load", "leaderCount")]
        ),
        Some(16.0)
    );
    for load in [
        "leaderCount",
        "followerCount",
        "diskBytes",
        "producerMsgRate",
        "producerByteRate",
        "consumerMsgRate",
        "consumerByteRate",
    ] {
        assert!(
            value("ballast_broker_load", &[("broker_id", "2"), ("load", load)]).is_some(),
            "{load}"
        );
    }
    // Broker 4 is down: its disk is unknown, so no diskBytes sample.
    assert_eq!(
        value(
            "ballast_broker_load",
            &[("broker_id", "4"), ("load", "diskBytes")]
        ),
        None
    );
    assert_eq!(
        value("ballast_observer_sample_duration_seconds", &[]),
        Some(0.25)
    );
    assert_eq!(
        value("ballast_cluster_partitions", &[("state", "offline")]),
        Some(1.0)
    );
    assert_eq!(
        value("ballast_cluster_brokers", &[("state", "down")]),
        Some(1.0)
    );
    assert!(value("ballast_observer_resident_memory_bytes", &[]).is_some());
    assert!(value("process_resident_memory_bytes", &[]).is_some());

    // A failed discovery reads 0; a partial rack assessment gives no not-rack-aware count.
    let h = Harness::empty().await;
    let mut w = fixture(now_ms(), true);
    w.brokers[0].rack = None;
    h.store.write_observed(&w).unwrap();
    h.observed(now_ms(), false);
    let (_, text) = h.text("/metrics").await;
    let samples = observed_common::parse_prometheus(&text);
    let names: BTreeSet<&str> = samples.iter().map(|(n, _, _)| n.as_str()).collect();
    assert!(!names.contains("ballast_cluster_not_rack_aware_partitions"));
    let current = samples
        .iter()
        .find(|(n, _, _)| n == "ballast_cluster_broker_observation_current")
        .map(|(_, _, v)| *v);
    assert_eq!(current, Some(0.0));
    assert!(samples
        .iter()
        .any(|(n, l, v)| n == "ballast_cluster_rack_assessment_status"
            && l.iter().any(|(k, val)| k == "status" && val == "partial")
            && *v == 1.0));
}

#[tokio::test]
async fn broker_load_history_gives_each_reading_in_range_and_refuses_bad_ranges() {
    let h = Harness::with_fixture().await;
    // Ten minutes at 300 points: buckets of 2 s, one reading each.
    let since = now_ms() - 600_000;
    let d = h
        .data(&format!("/api/v1/brokers/1/loads/history?since={since}"))
        .await;
    assert_eq!(d["brokerId"], 1);
    let readings = d["readings"].as_u64().expect("count");
    assert!(readings >= 1, "{d}");
    let points = d["points"].as_array().expect("points");
    assert_eq!(points.len() as u64, readings, "one point per reading: {d}");
    assert!(points[0]["values"]["leaderCount"].is_number(), "{d}");
    assert_eq!(d["loads"].as_array().map(Vec::len), Some(7));
    let one = h
        .data("/api/v1/brokers/1/loads/history?load=diskBytes&maxPoints=1")
        .await;
    assert_eq!(
        one["points"].as_array().map(Vec::len),
        Some(1),
        "bucketed: {one}"
    );
    assert_eq!(
        one["points"][0]["values"].as_object().map(|m| m.len()),
        Some(1)
    );
    let all = h.data("/api/v1/brokers/loads/history").await;
    assert_eq!(all["brokers"].as_array().map(Vec::len), Some(4));
    for (path, expected) in [
        ("/api/v1/brokers/99/loads/history", 404),
        ("/api/v1/brokers/1/loads/history?load=bogus", 400),
        ("/api/v1/brokers/1/loads/history?since=yesterday", 400),
        ("/api/v1/brokers/1/loads/history?since=2000&until=1000", 400),
        ("/api/v1/brokers/1/loads/history?maxPoints=0", 400),
    ] {
        let (status, body) = h.get(path).await;
        assert_error(status, &body, expected);
    }
}

#[tokio::test]
async fn partitions_come_in_pages_with_the_next_offset_until_the_last() {
    let h = Harness::with_fixture().await;
    let first = h.data("/api/v1/partitions?limit=10").await;
    assert_eq!(first["count"], 10);
    assert_eq!(first["total"], 42);
    assert_eq!(first["nextOffset"], 10);
    let last = h.data("/api/v1/partitions?limit=10&offset=40").await;
    assert_eq!(last["count"], 2);
    assert!(last.get("nextOffset").is_none(), "{last}");
    // Absent or 0: the default page (1,000 rows) holds all 42 here.
    let all = h.data("/api/v1/partitions?limit=0").await;
    assert_eq!(all["count"], 42);
    assert!(all.get("nextOffset").is_none());
}

#[tokio::test]
async fn follower_lag_partition_lists_are_cut_at_the_limit_and_say_how_many_there_were() {
    let h = Harness::with_fixture().await;
    let all = h.data("/api/v1/cluster/follower-lag").await;
    let rows = all["partition_lag"].as_array().expect("rows").len();
    assert!(rows > 1, "the fixture has lagging partitions: {all}");
    assert!(
        all.get("partition_lag_total").is_none(),
        "not cut: the spec's shape"
    );
    let cut = h.data("/api/v1/cluster/follower-lag?limit=1").await;
    assert_eq!(cut["partition_lag"].as_array().map(Vec::len), Some(1));
    assert_eq!(cut["partition_lag_total"], rows);
    // The figures still cover everything.
    assert_eq!(cut["cluster_total_lag"], all["cluster_total_lag"]);
    assert_eq!(
        cut["partition_lag"][0], all["partition_lag"][0],
        "largest first"
    );
}

#[tokio::test]
async fn a_scrape_counts_every_request_answered_before_it_even_when_scrapes_are_shared() {
    let h = Harness::with_fixture().await;
    let count = |text: &str| -> f64 {
        observed_common::parse_prometheus(text)
            .iter()
            .filter(|(n, l, _)| {
                n == "ballast_http_requests_total"
                    && l.iter()
                        .any(|(k, v)| k == "route" && v == "/api/v1/cluster/health")
            })
            .map(|(_, _, v)| *v)
            .sum()
    };
    for i in 1..=5 {
        let (status, _) = h.get("/api/v1/cluster/health").await;
        assert_eq!(status, 200);
        // Many scrapes at once share renderings; none may predate the request above.
        let scrapes: Vec<_> = (0..20)
            .map(|_| {
                let url = h.url("/metrics");
                tokio::spawn(async move {
                    // On a loaded machine a scrape may find its route full past the queue wait:
                    // that is the documented 503 with Retry-After, and it is asked again.
                    for _ in 0..20 {
                        let r = reqwest::get(url.clone()).await.expect("scrape");
                        let status = r.status().as_u16();
                        let text = r.text().await.expect("text");
                        match status {
                            200 => return text,
                            503 => tokio::time::sleep(std::time::Duration::from_millis(200)).await,
                            other => panic!("a scrape answered {other}: {text}"),
                        }
                    }
                    panic!("every scrape was refused as overloaded")
                })
            })
            .collect();
        for scrape in scrapes {
            let text = scrape.await.expect("scrape task");
            assert_eq!(count(&text), f64::from(i), "after {i} requests");
        }
    }
}

#[tokio::test]
async fn topic_history_sums_partition_readings_and_shows_one_partition() {
    let h = Harness::with_fixture().await;
    let now = now_ms();
    let hour = 3_600_000;
    let mut w = fixture(now - 1_000, false);
    for (k, at) in [now - 2 * hour, now - hour].into_iter().enumerate() {
        for p in 0..6 {
            w.partition_readings.push(ballast_schema::PartitionReading {
                topic: "orders".into(),
                partition: p,
                at_ms: at,
                resolution_ms: 0,
                values: [
                    Some(1000.0 * f64::from(p + 1)),
                    Some(10.0 * (k as f64 + 1.0)),
                    None,
                    None,
                    None,
                ],
            });
        }
    }
    h.store.write_observed(&w).unwrap();

    let topic = h.data("/api/v1/topics/orders/history").await;
    assert_eq!(topic["topic"], "orders");
    assert_eq!(topic["partition"], Value::Null);
    assert_eq!(topic["readings"], 12);
    let points = topic["points"].as_array().unwrap();
    assert_eq!(points.len(), 2);
    // Sizes 1000..6000 sum to 21000; six partitions at 10 then 20 msg/s.
    assert_eq!(points[0]["values"]["sizeBytes"], 21000.0);
    assert_eq!(points[0]["values"]["producerMsgRate"], 60.0);
    assert_eq!(points[1]["values"]["producerMsgRate"], 120.0);
    assert_eq!(points[1]["values"]["consumerByteRate"], Value::Null);
    assert_eq!(points[1]["atMs"], now - hour);

    let one = h.data("/api/v1/topics/orders/history?partition=2").await;
    assert_eq!(one["partition"], 2);
    assert_eq!(one["readings"], 2);
    assert_eq!(one["points"][0]["values"]["sizeBytes"], 3000.0);

    // One bucket for the whole range averages the two readings.
    let coarse = h
        .data("/api/v1/topics/orders/history?partition=2&maxPoints=1")
        .await;
    assert_eq!(coarse["points"][0]["values"]["producerMsgRate"], 15.0);

    let since = now - 90 * 60_000;
    let recent = h
        .data(&format!("/api/v1/topics/orders/history?since={since}"))
        .await;
    assert_eq!(recent["readings"], 6);

    for (path, expected) in [
        ("/api/v1/topics/nope/history", 404),
        ("/api/v1/topics/orders/history?partition=6", 404),
        ("/api/v1/topics/orders/history?partition=-1", 404),
        ("/api/v1/topics/orders/history?partition=x", 400),
        ("/api/v1/topics/orders/history?since=yesterday", 400),
        ("/api/v1/topics/orders/history?maxPoints=0", 400),
        ("/api/v1/topics/orders/history?load=diskBytes", 400),
    ] {
        let (status, body) = h.get(path).await;
        assert_error(status, &body, expected);
    }
}

#[tokio::test]
async fn self_healing_status_and_skip_counter_follow_the_healers_report() {
    let h = Harness::with_fixture().await;
    // Before the healer reports: every reason at 0, nothing reported.
    let before = h.data("/api/v1/self-healing/status").await;
    assert_eq!(before["reported"], false);
    assert_eq!(before["dryRun"], true);
    assert_eq!(before["skippedTotal"]["license_invalid"], 0);
    assert_eq!(before["skippedTotal"].as_object().unwrap().len(), 10);

    let now = now_ms();
    h.store
        .heartbeat(
            "healer",
            42,
            now,
            &serde_json::json!({
                "dryRun": true,
                "license": "invalid",
                "skipped": "license_invalid",
                "lastPassAtMs": now,
                "passes": 3,
                "skippedTotal": { "license_invalid": 2, "dry_run": 1 },
            }),
        )
        .unwrap();
    let status = h.data("/api/v1/self-healing/status").await;
    assert_eq!(status["reported"], true);
    assert_eq!(status["license"], "invalid");
    assert_eq!(status["skipped"], "license_invalid");
    assert_eq!(status["passes"], 3);
    assert_eq!(status["skippedTotal"]["license_invalid"], 2);
    assert_eq!(status["skippedTotal"]["dry_run"], 1);
    assert_eq!(status["skippedTotal"]["cooldown"], 0);
    assert_eq!(status["window"], Value::Null);

    let (code, text) = h.text("/metrics").await;
    assert_eq!(code, 200);
    let samples = observed_common::parse_prometheus(&text);
    let skipped = |reason: &str| {
        samples
            .iter()
            .find(|(n, l, _)| {
                n == "ballast_selfhealing_skipped_total"
                    && l.iter().any(|(k, v)| k == "reason" && v == reason)
            })
            .map(|(_, _, v)| *v)
    };
    assert_eq!(skipped("license_invalid"), Some(2.0));
    assert_eq!(skipped("dry_run"), Some(1.0));
    assert_eq!(skipped("outside_window"), Some(0.0));
}

/// `/api/v1/health` is open to callers without credentials (docs/auth.md: worker states, no
/// cluster data): a worker's report is shown without its lists (the healer's moves name topics,
/// partitions and replicas), which authenticated callers read from the self-healing status.
#[tokio::test]
async fn the_open_health_answer_shows_each_workers_report_without_its_lists() {
    let h = Harness::with_fixture().await;
    let now = now_ms();
    let a_move = serde_json::json!({
        "topic": "secret-payments", "partition": 7, "bytes": 1000,
        "replicasBefore": [1, 2, 3], "replicasAfter": [1, 2, 4],
    });
    h.store
        .heartbeat(
            "healer",
            42,
            now,
            &serde_json::json!({
                "dryRun": true,
                "license": "invalid",
                "passes": 3,
                "skippedTotal": { "license_invalid": 2 },
                "loops": [{
                    "loop": "activity",
                    "moves": [a_move],
                    "lastDryRun": { "atMs": now, "wouldMove": [a_move], "wouldMoveCount": 1 },
                }],
            }),
        )
        .unwrap();
    h.store
        .heartbeat(
            "executor",
            43,
            now,
            &serde_json::json!({
                "report": { "pending": 2, "throttleKept": [{ "topic": "secret-payments" }],
                            "nested": { "topic": "secret-payments" } },
                "roll": null,
            }),
        )
        .unwrap();
    let (code, text) = h.text("/api/v1/health").await;
    assert_eq!(code, 200);
    assert!(
        !text.contains("secret-payments"),
        "no topic name in the open probe: {text}"
    );
    let health: Value = serde_json::from_str(&text).unwrap();
    let worker = |name: &str| {
        health["data"]["workers"]
            .as_array()
            .unwrap()
            .iter()
            .find(|w| w["name"] == name)
            .cloned()
            .unwrap()
    };
    let healer = worker("healer")["detail"].clone();
    assert_eq!(healer["dryRun"], true);
    assert_eq!(healer["license"], "invalid");
    assert_eq!(healer["passes"], 3);
    assert_eq!(healer["skippedTotal"]["license_invalid"], 2);
    assert!(healer.get("loops").is_none(), "{healer}");
    let executor = worker("executor")["detail"].clone();
    assert_eq!(executor["report"]["pending"], 2);
    assert_eq!(executor["roll"], Value::Null);
    // The lists stay for authenticated callers.
    let status = h.data("/api/v1/self-healing/status").await;
    assert!(status.to_string().contains("secret-payments"), "{status}");
}

#[tokio::test]
async fn a_cluster_answer_is_built_once_per_reading_and_served_to_every_client_until_the_next() {
    let h = Harness::with_fixture().await;
    // `ageMs` is the one field set per request; the rest is the reading's.
    let without_age = |mut d: Value| {
        let age = d
            .as_object_mut()
            .and_then(|o| o.remove("ageMs"))
            .and_then(|a| a.as_i64())
            .expect("ageMs");
        (age, d)
    };
    let (age_a, a) = without_age(h.data("/api/v1/cluster").await);
    let (age_b, b) = without_age(h.data("/api/v1/cluster").await);
    assert_eq!(a, b, "the same reading gives every client the same answer");
    // The reading is a second old: its age is measured per request, not kept from the first.
    assert!(age_a >= 1_000 && age_b >= age_a, "{age_a} {age_b}");
    let (_, comprehensive) =
        without_age(h.data("/api/v1/cluster/comprehensive").await["cluster"].clone());
    assert_eq!(
        comprehensive, a,
        "the comprehensive answer carries the same cluster object"
    );
    // The next reading is the next answer.
    let next = now_ms();
    h.store.write_observed(&fixture(next, false)).unwrap();
    let (_, c) = without_age(h.data("/api/v1/cluster").await);
    assert_ne!(c["observedAt"], a["observedAt"]);
    assert_eq!(
        c["observedAt"],
        ballast_runtime::format_rfc3339_ms(next),
        "{c}"
    );
}

#[tokio::test]
async fn an_answer_made_once_per_reading_carries_the_tag_of_its_bytes_and_if_none_match_is_a_304() {
    let h = Harness::with_fixture().await;
    for path in [
        "/api/v1/partitions",
        "/api/v1/cluster/follower-lag",
        "/api/v1/cluster/health",
        "/api/v1/cluster/logdirs",
        "/api/v1/brokers/racks",
        "/api/v1/activity/brokers",
        "/api/v1/optimize/partitions",
    ] {
        let first = h.http.get(h.url(path)).send().await.unwrap();
        assert_eq!(first.status(), 200, "{path}");
        let tag = first.headers()["etag"].to_str().unwrap().to_string();
        let length = first.headers()["content-length"]
            .to_str()
            .unwrap()
            .to_string();
        let body = first.bytes().await.unwrap();
        assert_eq!(
            tag,
            ballast_web::etag::tag(&body),
            "{path}: a strong tag of the bytes"
        );
        assert_eq!(length, body.len().to_string(), "{path}");
        let parsed: Value = serde_json::from_slice(&body).unwrap();
        assert_eq!(parsed["success"], true, "{path}");
        let again = h.http.get(h.url(path)).send().await.unwrap();
        assert_eq!(again.headers()["etag"].to_str().unwrap(), tag, "{path}");
        assert_eq!(again.bytes().await.unwrap(), body, "{path}");
        let cached = h
            .http
            .get(h.url(path))
            .header("If-None-Match", &tag)
            .send()
            .await
            .unwrap();
        assert_eq!(cached.status(), 304, "{path}");
        assert_eq!(cached.headers()["etag"].to_str().unwrap(), tag, "{path}");
        assert!(cached.bytes().await.unwrap().is_empty(), "{path}");
    }
}

#[tokio::test]
async fn an_answer_with_its_age_has_a_weak_tag_of_its_reading_and_is_a_304_until_the_next_reading()
{
    let h = Harness::with_fixture().await;
    for path in ["/api/v1/cluster", "/api/v1/cluster/comprehensive"] {
        let get = |tag: Option<String>| {
            let mut req = h.http.get(h.url(path));
            if let Some(tag) = tag {
                req = req.header("If-None-Match", tag);
            }
            req.send()
        };
        let first = get(None).await.unwrap();
        assert_eq!(first.status(), 200, "{path}");
        let tag = first.headers()["etag"].to_str().unwrap().to_string();
        assert!(tag.starts_with("W/\""), "{path}: {tag}");
        let length = first.headers()["content-length"]
            .to_str()
            .unwrap()
            .to_string();
        let body = first.bytes().await.unwrap();
        assert_eq!(length, body.len().to_string(), "{path}");
        let a: Value = serde_json::from_slice(&body).unwrap();
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        let second = get(None).await.unwrap();
        assert_eq!(second.headers()["etag"].to_str().unwrap(), tag, "{path}");
        let b: Value = second.json().await.unwrap();
        // The age moves per request; the tag names the reading.
        let age = |v: &Value| {
            let cluster = if path.ends_with("comprehensive") {
                &v["data"]["cluster"]
            } else {
                &v["data"]
            };
            cluster["ageMs"].as_i64().expect("ageMs")
        };
        assert!(age(&b) >= age(&a) + 20, "{path}: {} {}", age(&a), age(&b));
        let cached = get(Some(tag.clone())).await.unwrap();
        assert_eq!(cached.status(), 304, "{path}");
        assert!(cached.bytes().await.unwrap().is_empty(), "{path}");
    }
    // The next reading is a 200 under a new tag.
    let before = h.http.get(h.url("/api/v1/cluster")).send().await.unwrap();
    let tag = before.headers()["etag"].to_str().unwrap().to_string();
    h.store.write_observed(&fixture(now_ms(), false)).unwrap();
    let after = h
        .http
        .get(h.url("/api/v1/cluster"))
        .header("If-None-Match", &tag)
        .send()
        .await
        .unwrap();
    assert_eq!(after.status(), 200);
    assert_ne!(after.headers()["etag"].to_str().unwrap(), tag);
}

/// A broker that holds no replica at all (just added) is a row of `broker_lag[]` with 0
/// replicas, as the spec lists brokers; a broker filter naming it answers its row.
#[tokio::test]
async fn follower_lag_lists_every_broker_and_one_holding_no_follower_with_0_replicas() {
    let h = Harness::empty().await;
    let at = now_ms();
    let mut w = fixture(at, true);
    w.brokers.push(ballast_schema::ObservedBroker {
        broker_id: 5,
        host: Some("127.0.0.1".into()),
        port: Some(9095),
        rack: Some("r2".into()),
        alive: true,
        first_seen_ms: Some(at),
        last_seen_ms: Some(at),
        log_dirs_read: true,
        log_dirs_error: None,
    });
    h.store.write_observed(&w).unwrap();
    h.observed(at, true);
    for path in [
        "/api/v1/cluster/follower-lag",
        "/api/v1/cluster/follower-lag?summary=true",
    ] {
        let d = h.data(path).await;
        let rows = d["broker_lag"].as_array().unwrap();
        let ids: Vec<i64> = rows
            .iter()
            .map(|b| b["broker_id"].as_i64().unwrap())
            .collect();
        assert_eq!(ids, vec![1, 2, 3, 4, 5], "{path}");
        let five = &rows[4];
        assert_eq!(five["replica_count"], 0, "{path}");
        assert_eq!(five["total_lag"], 0, "{path}");
        assert_eq!(five["max_lag"], 0, "{path}");
    }
    let d = h.data("/api/v1/cluster/follower-lag?broker=5").await;
    assert_eq!(d["broker_lag"][0]["broker_id"], 5);
    assert_eq!(d["broker_lag"][0]["replica_count"], 0);
}

/// Two log directories on one filesystem report its sizes each (DescribeLogDirs v4+): the
/// broker's capacity counts the filesystem once ("87.3 MiB of 504 GiB" was two directories on
/// one 252 GiB disk); a directory on another filesystem (other free space) adds its own.
#[tokio::test]
async fn a_brokers_capacity_counts_a_filesystem_shared_by_log_dirs_once() {
    const TIB: i64 = 1 << 40;
    let h = Harness::empty().await;
    let at = now_ms();
    let mut w = fixture(at, true);
    let mut second = w
        .log_dirs
        .iter()
        .find(|d| d.broker_id == 1)
        .unwrap()
        .clone();
    second.path = "/var/lib/kafka/data-1".into();
    second.used_bytes = 1000;
    second.replicas = 0;
    w.log_dirs.push(second.clone());
    let mut other = second;
    other.broker_id = 2;
    other.path = "/mnt/disk2".into();
    other.usable_bytes = Some(2 * TIB);
    w.log_dirs.push(other);
    h.store.write_observed(&w).unwrap();
    h.observed(at, true);
    let d = h.data("/api/v1/cluster/logdirs").await;
    let broker = |id: i64| {
        d["brokers"]
            .as_array()
            .unwrap()
            .iter()
            .find(|b| b["brokerId"] == id)
            .unwrap()
            .clone()
    };
    let one = broker(1);
    assert_eq!(one["dirs"].as_array().unwrap().len(), 2);
    assert_eq!(one["totalBytes"], 4 * TIB, "one filesystem, counted once");
    assert_eq!(one["usableBytes"], 3 * TIB);
    assert_eq!(one["filesystems"], 1);
    let two = broker(2);
    assert_eq!(
        two["totalBytes"],
        8 * TIB,
        "same size, other free space: two"
    );
    assert_eq!(two["usableBytes"], 5 * TIB);
    assert_eq!(two["filesystems"], 2);
    assert_eq!(broker(3)["totalBytes"], 4 * TIB);
    assert_eq!(broker(4)["totalBytes"], 4 * TIB);
    assert_eq!(d["totals"]["totalBytes"], 20 * TIB);
    assert_eq!(d["totals"]["usableBytes"], 14 * TIB);
}

#[tokio::test]
async fn partitions_below_min_isr_with_no_eligible_leader_replica_are_at_risk_of_an_unclean_election(
) {
    let h = Harness::with_fixture().await;
    // Without DescribeTopicPartitions (ELR not reported) the risk is not known, not zero.
    let d = h.data("/api/v1/cluster/health").await;
    assert_eq!(d["partitions"]["eligibleLeaderReplicasReported"], false);
    assert_eq!(d["partitions"]["uncleanElectionRisk"], Value::Null);
    assert_eq!(
        d["underMinIsrPartitions"][0]["eligibleLeaderReplicas"],
        Value::Null
    );
    let topic = d["underMinIsrPartitions"][0]["topic"].clone();
    let partition = d["underMinIsrPartitions"][0]["partition"].clone();

    // ELR reported, none for the partition below min ISR: at risk.
    let mut w = fixture(now_ms(), false);
    w.cluster.detail =
        serde_json::json!({"eligibleLeaderReplicas": {"reported": true, "partitions": []}});
    h.store.write_observed(&w).unwrap();
    let d = h.data("/api/v1/cluster/health").await;
    assert_eq!(d["partitions"]["eligibleLeaderReplicasReported"], true);
    assert_eq!(d["partitions"]["uncleanElectionRisk"], 1);
    assert_eq!(d["uncleanElectionRiskPartitions"][0]["topic"], topic);
    assert_eq!(
        d["underMinIsrPartitions"][0]["eligibleLeaderReplicas"],
        serde_json::json!([])
    );

    // An eligible leader replica (3) keeps it safe: no risk, and the row names it.
    let mut w = fixture(now_ms(), false);
    w.cluster.detail = serde_json::json!({"eligibleLeaderReplicas": {"reported": true, "partitions": [[topic, partition, [3], []]]}});
    h.store.write_observed(&w).unwrap();
    let d = h.data("/api/v1/cluster/health").await;
    assert_eq!(d["partitions"]["uncleanElectionRisk"], 0, "{d}");
    assert_eq!(
        d["underMinIsrPartitions"][0]["eligibleLeaderReplicas"],
        serde_json::json!([3])
    );
}

#[tokio::test]
async fn partition_rows_show_eligible_leader_replicas_where_reported_and_null_where_not() {
    let h = Harness::with_fixture().await;
    // Not reported (no DescribeTopicPartitions: before Kafka 3.8, ZooKeeper): unknown, not empty.
    let d = h
        .data("/api/v1/partitions?topic=orders&fields=eligibleLeaderReplicas,lastKnownElr")
        .await;
    let row = d["partitions"][0].clone();
    assert_eq!(row["eligibleLeaderReplicas"], Value::Null, "{row}");
    assert_eq!(row["lastKnownElr"], Value::Null, "{row}");
    let partition = row["partition"].clone();

    // Reported: the partition's lists, and empty lists for the partitions that have none.
    let mut w = fixture(now_ms(), false);
    w.cluster.detail = serde_json::json!({"eligibleLeaderReplicas": {"reported": true, "partitions": [["orders", partition, [3], [2]]]}});
    h.store.write_observed(&w).unwrap();
    let d = h.data("/api/v1/partitions?topic=orders").await;
    let rows = d["partitions"].as_array().cloned().unwrap_or_default();
    let row = rows
        .iter()
        .find(|r| r["partition"] == partition)
        .expect("the partition's row");
    assert_eq!(
        row["eligibleLeaderReplicas"],
        serde_json::json!([3]),
        "{row}"
    );
    assert_eq!(row["lastKnownElr"], serde_json::json!([2]), "{row}");
    let other = rows
        .iter()
        .find(|r| r["partition"] != partition)
        .expect("another partition");
    assert_eq!(
        other["eligibleLeaderReplicas"],
        serde_json::json!([]),
        "{other}"
    );
    assert_eq!(other["lastKnownElr"], serde_json::json!([]), "{other}");
    // The minimal rows leave them out.
    let d = h.data("/api/v1/partitions?topic=orders&minimal=true").await;
    assert!(d["partitions"][0].get("eligibleLeaderReplicas").is_none());
}
