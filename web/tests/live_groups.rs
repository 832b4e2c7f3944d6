//! Consumer groups read live from a simulated cluster: the simulated consumer groups of a busy
//! topic (members with assignments) and a group that only committed offsets (exact lag).

mod live_common;
mod mcp_common;

use std::collections::BTreeSet;

use ballast_kafka::{Acks, Compression, NewTopic, ProduceRecord, TopicPartition};
use ballast_simcluster::NewTopic as SimTopic;
use live_common::{assert_error, Harness};
use serde_json::Value;

/// `web-busy` (3 partitions, consumed twice over: groups `web-busy-consumer-0` and `-1` with
/// three members each) and `web-ledger` (10 records in partition 0, 4 in partition 1) with the
/// group `web-audit` that committed 3 and 4: lag 7 and 0.
async fn cluster_with_groups() -> Harness {
    let h = Harness::start().await;
    h.sim
        .add_topic(&SimTopic {
            name: "web-busy".into(),
            partitions: 3,
            replication_factor: 2,
            size_bytes: 1_000_000,
            producer_msg_rate: 10.0,
            producer_byte_rate: 1_000.0,
            consumer_msg_rate: 20.0,
            consumer_byte_rate: 2_000.0,
            configs: Default::default(),
        })
        .expect("add topic");
    h.create_topic(NewTopic::new("web-ledger", 2, 2)).await;
    for (partition, n) in [(0, 10), (1, 4)] {
        let records: Vec<ProduceRecord> = (0..n)
            .map(|i| ProduceRecord::new(Some(format!("k{i}").as_bytes()), Some(b"v")))
            .collect();
        h.kafka
            .produce(
                &TopicPartition::new("web-ledger", partition),
                &records,
                Acks::All,
                Compression::None,
            )
            .await
            .expect("produce");
    }
    let results = h
        .kafka
        .commit_offsets(
            "web-audit",
            &[
                (TopicPartition::new("web-ledger", 0), 3),
                (TopicPartition::new("web-ledger", 1), 4),
            ],
        )
        .await
        .expect("commit");
    assert!(results.iter().all(|r| r.error.is_none()), "{results:?}");
    h
}

fn rows(data: &Value, key: &str) -> Vec<Value> {
    data[key].as_array().expect(key).clone()
}

fn row<'a>(rows: &'a [Value], group: &str) -> &'a Value {
    rows.iter()
        .find(|g| g["groupId"] == group)
        .unwrap_or_else(|| panic!("no group {group}"))
}

#[tokio::test]
async fn the_list_has_every_group_by_id_with_members_coordinator_and_lag() {
    let h = cluster_with_groups().await;
    let truth = h.kafka.list_groups().await.expect("list groups");
    let data = h.data("/api/v1/consumer-groups?limit=500").await;
    let groups = rows(&data, "groups");
    let ids: Vec<&str> = groups
        .iter()
        .map(|g| g["groupId"].as_str().unwrap())
        .collect();
    let expected: Vec<&str> = truth.iter().map(|g| g.group_id.as_str()).collect();
    assert_eq!(ids, expected, "every group, by id");
    assert_eq!(data["total"], truth.len());
    assert_eq!(data["count"], truth.len());
    assert_eq!(data["truncated"], false);
    let audit = row(&groups, "web-audit");
    assert_eq!(audit["state"], "Empty");
    assert_eq!(audit["members"], 0);
    assert_eq!(audit["totalLag"], 7);
    assert_eq!(audit["topics"], serde_json::json!(["web-ledger"]));
    let busy = row(&groups, "web-busy-consumer-0");
    assert_eq!(busy["state"], "Stable");
    assert_eq!(busy["protocolType"], "consumer");
    assert_eq!(busy["members"], 3);
    assert!(busy["totalLag"].as_i64().is_some_and(|l| l >= 0), "{busy}");
    let coordinator = truth
        .iter()
        .find(|g| g.group_id == "web-busy-consumer-0")
        .unwrap()
        .coordinator;
    assert_eq!(busy["coordinator"], coordinator);
}

#[tokio::test]
async fn the_list_filters_by_state_and_search_and_truncates_at_the_limit() {
    let h = cluster_with_groups().await;
    let data = h.data("/api/v1/consumer-groups?search=WEB-BUSY").await;
    let ids: Vec<String> = rows(&data, "groups")
        .iter()
        .map(|g| g["groupId"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(ids, ["web-busy-consumer-0", "web-busy-consumer-1"]);
    let empty = h.data("/api/v1/consumer-groups?state=empty").await;
    let empty_rows = rows(&empty, "groups");
    assert!(!empty_rows.is_empty());
    assert!(empty_rows.iter().all(|g| g["state"] == "Empty"), "{empty}");
    let one = h.data("/api/v1/consumer-groups?limit=1").await;
    assert_eq!(one["count"], 1);
    assert_eq!(one["truncated"], true);
    assert!(one["total"].as_u64().unwrap() > 1);
    assert!(one["hint"].as_str().is_some_and(|s| s.contains("limit")));
}

#[tokio::test]
async fn the_summary_counts_groups_by_state_and_ranks_the_largest_lag_first() {
    let h = cluster_with_groups().await;
    let total = h.kafka.list_groups().await.expect("list").len();
    let data = h.data("/api/v1/consumer-groups/summary?limit=50").await;
    assert_eq!(data["totalGroups"], total);
    let by_state: u64 = data["byState"]
        .as_object()
        .unwrap()
        .values()
        .map(|v| v.as_u64().unwrap())
        .sum();
    assert_eq!(by_state, total as u64);
    assert!(data["byState"]["Empty"].as_u64() >= Some(1));
    assert!(data["byState"]["Stable"].as_u64() >= Some(2));
    assert!(data["totalMembers"].as_u64() >= Some(6));
    let top = rows(&data, "topLagging");
    let lags: Vec<i64> = top
        .iter()
        .map(|g| g["totalLag"].as_i64().unwrap())
        .collect();
    assert!(
        lags.windows(2).all(|w| w[0] >= w[1]),
        "largest first: {lags:?}"
    );
    assert_eq!(data["totalLag"].as_i64(), Some(lags.iter().sum::<i64>()));
    assert_eq!(row(&top, "web-audit")["totalLag"], 7);
    let one = h.data("/api/v1/consumer-groups/summary?limit=1").await;
    assert_eq!(rows(&one, "topLagging").len(), 1);
}

#[tokio::test]
async fn a_group_shows_its_members_assignments_and_offsets() {
    let h = cluster_with_groups().await;
    let data = h.data("/api/v1/consumer-groups/web-busy-consumer-0").await;
    assert_eq!(data["groupId"], "web-busy-consumer-0");
    assert_eq!(data["state"], "Stable");
    assert_eq!(data["protocol"], "range");
    let members = rows(&data, "members");
    assert_eq!(members.len(), 3);
    let clients: BTreeSet<&str> = members
        .iter()
        .map(|m| m["clientId"].as_str().unwrap())
        .collect();
    assert!(
        clients.contains("web-busy-consumer-0-client-0"),
        "{clients:?}"
    );
    assert!(members
        .iter()
        .all(|m| m["host"].as_str().unwrap().starts_with("/10.0.")));
    let mut assigned: Vec<i64> = members
        .iter()
        .flat_map(|m| m["assignment"].as_array().unwrap().clone())
        .filter(|a| a["topic"] == "web-busy")
        .flat_map(|a| a["partitions"].as_array().unwrap().clone())
        .map(|p| p.as_i64().unwrap())
        .collect();
    assigned.sort_unstable();
    assert_eq!(assigned, [0, 1, 2], "every partition assigned once");
    let offsets = rows(&data, "offsets");
    assert_eq!(offsets.len(), 3);
    for o in &offsets {
        let (committed, end, lag) = (
            o["committedOffset"].as_i64().unwrap(),
            o["logEndOffset"].as_i64().unwrap(),
            o["lag"].as_i64().unwrap(),
        );
        assert_eq!(lag, (end - committed).max(0), "{o}");
        assert!(o["memberId"].is_string(), "owner shown: {o}");
    }
    assert_eq!(data["topics"][0]["topic"], "web-busy");
    assert_eq!(data["topics"][0]["partitions"], 3);
}

#[tokio::test]
async fn a_group_that_only_committed_offsets_shows_its_exact_lag() {
    let h = cluster_with_groups().await;
    let data = h.data("/api/v1/consumer-groups/web-audit").await;
    assert_eq!(data["state"], "Empty");
    assert_eq!(data["members"], serde_json::json!([]));
    assert_eq!(data["totalLag"], 7);
    let offsets = rows(&data, "offsets");
    let got: Vec<(i64, i64, i64, i64)> = offsets
        .iter()
        .map(|o| {
            (
                o["partition"].as_i64().unwrap(),
                o["committedOffset"].as_i64().unwrap(),
                o["logEndOffset"].as_i64().unwrap(),
                o["lag"].as_i64().unwrap(),
            )
        })
        .collect();
    assert_eq!(got, [(0, 3, 10, 7), (1, 4, 4, 0)]);
}

#[tokio::test]
async fn lag_is_per_partition_largest_first_or_by_partition_and_narrowed_by_topic() {
    let h = cluster_with_groups().await;
    let data = h.data("/api/v1/consumer-groups/web-audit/lag").await;
    assert_eq!(data["totalLag"], 7);
    assert_eq!(data["maxLag"], 7);
    assert_eq!(data["partitionCount"], 2);
    let lags: Vec<i64> = rows(&data, "partitions")
        .iter()
        .map(|p| p["lag"].as_i64().unwrap())
        .collect();
    assert_eq!(lags, [7, 0]);
    let by_partition = h
        .data("/api/v1/consumer-groups/web-audit/lag?sort=partition&topic=web-ledger")
        .await;
    let partitions: Vec<i64> = rows(&by_partition, "partitions")
        .iter()
        .map(|p| p["partition"].as_i64().unwrap())
        .collect();
    assert_eq!(partitions, [0, 1]);
    assert_eq!(by_partition["topic"], "web-ledger");
    let other = h
        .data("/api/v1/consumer-groups/web-audit/lag?topic=web-busy")
        .await;
    assert_eq!(
        other["partitionCount"], 0,
        "a topic the group does not read"
    );
}

#[tokio::test]
async fn unknown_groups_and_topics_are_404_and_malformed_queries_400() {
    let h = cluster_with_groups().await;
    for path in [
        "/api/v1/consumer-groups/no-such-group",
        "/api/v1/consumer-groups/no-such-group/lag",
        "/api/v1/consumer-groups/web-audit/lag?topic=no-such-topic",
    ] {
        let (status, body) = h.get(path).await;
        assert_error(status, &body, 404);
    }
    for path in [
        "/api/v1/consumer-groups?limit=-1",
        "/api/v1/consumer-groups?limit=many",
        "/api/v1/consumer-groups?colour=red",
        "/api/v1/consumer-groups/summary?limit=x",
        "/api/v1/consumer-groups/web-audit?verbose=1",
        "/api/v1/consumer-groups/web-audit/lag?sort=size",
    ] {
        let (status, body) = h.get(path).await;
        assert_error(status, &body, 400);
    }
}

#[tokio::test]
async fn the_summary_is_made_once_per_read_and_shared_with_its_tag_and_if_none_match_is_a_304() {
    let h = cluster_with_groups().await;
    let first = h
        .http
        .get(h.url("/api/v1/consumer-groups/summary"))
        .send()
        .await
        .unwrap();
    assert_eq!(first.status(), 200);
    let tag = first.headers()["etag"].to_str().unwrap().to_string();
    let body = first.bytes().await.unwrap();
    assert_eq!(tag, ballast_web::etag::tag(&body));
    let shared: Value = serde_json::from_slice(&body).unwrap();
    // The same figures as the answer made for its parameters (the default limit given).
    let made = h.data("/api/v1/consumer-groups/summary?limit=10").await;
    assert_eq!(shared["data"], made);
    // Within BALLAST_LIVE_READ_MAX_AGE the same read answers: the same bytes, a 304 to its tag.
    let again = h
        .http
        .get(h.url("/api/v1/consumer-groups/summary"))
        .header("If-None-Match", &tag)
        .send()
        .await
        .unwrap();
    assert_eq!(again.status(), 304);
    assert!(again.bytes().await.unwrap().is_empty());
}

#[tokio::test]
async fn the_default_list_is_made_once_per_read_and_shared_with_its_tag_and_if_none_match_is_a_304()
{
    let h = cluster_with_groups().await;
    let get = |tag: Option<String>| {
        let mut request = h.http.get(h.url("/api/v1/consumer-groups"));
        if let Some(tag) = tag {
            request = request.header("If-None-Match", tag);
        }
        request.send()
    };
    let first = get(None).await.unwrap();
    assert_eq!(first.status(), 200);
    let tag = first.headers()["etag"].to_str().unwrap().to_string();
    let body = first.bytes().await.unwrap();
    assert_eq!(tag, ballast_web::etag::tag(&body));
    // Within BALLAST_LIVE_READ_MAX_AGE the same read answers: the same bytes under the same tag.
    let second = get(None).await.unwrap();
    assert_eq!(second.status(), 200);
    assert_eq!(second.headers()["etag"].to_str().unwrap(), tag);
    assert_eq!(second.bytes().await.unwrap(), body, "the same bytes");
    // The same rows as a page made for its own parameters (every group fits either).
    let shared: Value = serde_json::from_slice(&body).unwrap();
    let made = h.data("/api/v1/consumer-groups?limit=500").await;
    assert_eq!(shared["data"], made);
    assert!(!rows(&made, "groups").is_empty());
    // A client holding the tag gets a 304 and no body.
    let again = get(Some(tag)).await.unwrap();
    assert_eq!(again.status(), 304);
    assert!(again.bytes().await.unwrap().is_empty());
}

fn ids_and_states(data: &Value) -> Vec<(String, String)> {
    rows(data, "groups")
        .iter()
        .map(|g| (g["groupId"].to_string(), g["state"].to_string()))
        .collect()
}

/// The agents' default page of groups (MCP `list_consumer_groups` without arguments) is shaped
/// once per read of every group and copied per call: it is the REST default page's groups with
/// the agents' envelope, every call alike while the read is fresh, its text block the same JSON;
/// a filtered page is shaped for its call.
#[tokio::test]
async fn the_agents_default_group_list_is_the_rest_default_page_shaped_once_per_read() {
    let h = cluster_with_groups().await;
    let rest = h.data("/api/v1/consumer-groups").await;
    let (first, text) = mcp_common::call(
        &h.http,
        &h.base,
        "list_consumer_groups",
        serde_json::json!({}),
    )
    .await;
    assert_eq!(first, text, "the text block is the structured content");
    assert_eq!(ids_and_states(&first), ids_and_states(&rest));
    assert_eq!(first["total"], rest["total"]);
    assert_eq!(first["truncated"], false);
    assert_eq!(first["count"], rows(&first, "groups").len(), "{first}");
    let (again, _) = mcp_common::call(
        &h.http,
        &h.base,
        "list_consumer_groups",
        serde_json::json!({"limit": 100}),
    )
    .await;
    assert_eq!(ids_and_states(&again), ids_and_states(&first));
    let (busy, _) = mcp_common::call(
        &h.http,
        &h.base,
        "list_consumer_groups",
        serde_json::json!({"search": "web-busy"}),
    )
    .await;
    let busy_ids: Vec<String> = ids_and_states(&busy)
        .into_iter()
        .map(|(id, _)| id)
        .collect();
    assert_eq!(
        busy_ids,
        ["\"web-busy-consumer-0\"", "\"web-busy-consumer-1\""]
    );
    assert_eq!(busy["total"], 2);
}
