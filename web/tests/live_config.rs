//! Topic configuration and the broker default configuration, read live from a simulated cluster.

mod live_common;

use std::collections::BTreeSet;

use ballast_kafka::{AlterConfigOp, ConfigResource, NewTopic};
use live_common::{assert_error, serve, Harness};
use serde_json::Value;

fn names(data: &Value) -> BTreeSet<String> {
    data["entries"]
        .as_array()
        .expect("entries")
        .iter()
        .map(|e| e["name"].as_str().expect("name").to_string())
        .collect()
}

fn entry<'a>(data: &'a Value, name: &str) -> &'a Value {
    data["entries"]
        .as_array()
        .expect("entries")
        .iter()
        .find(|e| e["name"] == name)
        .unwrap_or_else(|| panic!("no entry {name} in {data}"))
}

async fn with_orders_topic() -> Harness {
    let h = Harness::start().await;
    h.create_topic(
        NewTopic::new("web-orders", 3, 2)
            .config("retention.ms", "3600000")
            .config("cleanup.policy", "compact"),
    )
    .await;
    h
}

#[tokio::test]
async fn topic_config_lists_every_entry_with_source_and_flags() {
    let h = with_orders_topic().await;
    let data = h.data("/api/v1/topics/web-orders/config").await;
    assert_eq!(data["topic"], "web-orders");
    let truth = h
        .kafka
        .describe_config(&ConfigResource::Topic("web-orders".into()))
        .await
        .expect("describe");
    let expected: BTreeSet<String> = truth.iter().map(|e| e.name.clone()).collect();
    assert_eq!(names(&data), expected, "every entry the cluster reports");
    assert_eq!(data["count"], expected.len());
    let retention = entry(&data, "retention.ms");
    assert_eq!(retention["value"], "3600000");
    assert_eq!(retention["source"], "DYNAMIC_TOPIC_CONFIG");
    assert_eq!(retention["isDefault"], false);
    assert_eq!(retention["readOnly"], false);
    assert_eq!(retention["sensitive"], false);
    assert!(retention["synonyms"].is_array());
    let untouched = entry(&data, "segment.bytes");
    assert_ne!(untouched["source"], "DYNAMIC_TOPIC_CONFIG");
}

#[tokio::test]
async fn explicit_topic_config_holds_only_the_topics_own_overrides() {
    let h = with_orders_topic().await;
    let data = h.data("/api/v1/topics/web-orders/config/explicit").await;
    assert_eq!(
        names(&data),
        BTreeSet::from(["cleanup.policy".to_string(), "retention.ms".to_string()])
    );
    assert_eq!(entry(&data, "cleanup.policy")["value"], "compact");
    assert_eq!(data["count"], 2);
}

#[tokio::test]
async fn topic_config_key_filter_is_a_case_insensitive_substring() {
    let h = with_orders_topic().await;
    let data = h
        .data("/api/v1/topics/web-orders/config?keyFilter=RETENTION")
        .await;
    let found = names(&data);
    assert!(found.contains("retention.ms"), "{found:?}");
    assert!(found.iter().all(|n| n.contains("retention")), "{found:?}");
}

#[tokio::test]
async fn config_defaults_show_the_controllers_configuration_by_default() {
    let h = Harness::start().await;
    let controller = h.sim.truth().controller;
    let data = h.data("/api/v1/config/defaults").await;
    assert_eq!(data["broker"], controller);
    assert_eq!(data["controller"], true);
    let truth = h
        .kafka
        .describe_config(&ConfigResource::Broker(controller))
        .await
        .expect("describe broker");
    assert_eq!(data["total"], truth.len());
    assert_eq!(data["count"], truth.len());
    assert_eq!(
        entry(&data, "log.retention.hours")["source"],
        "DEFAULT_CONFIG"
    );
    assert_eq!(entry(&data, "log.retention.hours")["isDefault"], true);
    assert_eq!(
        entry(&data, "auto.create.topics.enable")["source"],
        "STATIC_BROKER_CONFIG"
    );
}

#[tokio::test]
async fn config_defaults_show_cluster_wide_dynamic_defaults_and_other_brokers_on_request() {
    let h = Harness::start().await;
    let results = h
        .kafka
        .incremental_alter_configs(
            &[(
                ConfigResource::BrokerDefaults,
                vec![AlterConfigOp::Set {
                    name: "log.retention.ms".into(),
                    value: "7200000".into(),
                }],
            )],
            false,
        )
        .await
        .expect("alter");
    assert!(results[0].error.is_none(), "{:?}", results[0].error);
    let controller = h.sim.truth().controller;
    let other = h
        .sim
        .truth()
        .brokers
        .iter()
        .map(|b| b.id)
        .find(|id| *id != controller)
        .expect("a second broker");
    let data = h
        .data(&format!(
            "/api/v1/config/defaults?broker={other}&keyFilter=Log.Retention"
        ))
        .await;
    assert_eq!(data["broker"], other);
    assert_eq!(data["controller"], false);
    assert!(names(&data).iter().all(|n| n.contains("log.retention")));
    assert!(data["count"].as_u64() < data["total"].as_u64());
    let ms = entry(&data, "log.retention.ms");
    assert_eq!(ms["value"], "7200000");
    assert_eq!(ms["source"], "DYNAMIC_DEFAULT_BROKER_CONFIG");
}

#[tokio::test]
async fn unknown_topics_and_brokers_are_404_and_malformed_queries_400() {
    let h = Harness::start().await;
    for path in [
        "/api/v1/topics/nope/config",
        "/api/v1/topics/nope/config/explicit",
        "/api/v1/config/defaults?broker=99",
    ] {
        let (status, body) = h.get(path).await;
        assert_error(status, &body, 404);
    }
    for path in [
        "/api/v1/config/defaults?broker=x",
        "/api/v1/config/defaults?brokers=1",
        "/api/v1/topics/nope/config?limit=3",
    ] {
        let (status, body) = h.get(path).await;
        assert_error(status, &body, 400);
    }
}

#[tokio::test]
async fn an_unreachable_cluster_is_a_503_envelope() {
    let (base, _dir) = serve("127.0.0.1:9").await;
    let response = reqwest::get(format!("{base}/api/v1/config/defaults"))
        .await
        .expect("request");
    assert_eq!(response.status().as_u16(), 503);
    let body: Value = response.json().await.expect("json");
    let details = assert_error(503, &body, 503);
    assert!(details.contains("127.0.0.1:9"), "{details}");
}

#[tokio::test]
async fn config_defaults_follow_the_quorum_leader_not_the_broker_metadata_names_per_answer() {
    let h = Harness::start().await;
    // KRaft: Metadata names a live broker per answer; the active controller is the quorum's
    // leader, moved here to broker 3.
    h.sim.move_controller(3).expect("move the quorum leader");
    for _ in 0..6 {
        let data = h
            .data("/api/v1/config/defaults?keyFilter=log.retention")
            .await;
        assert_eq!(data["broker"], 3, "{data}");
        assert_eq!(data["controller"], true);
    }
}
