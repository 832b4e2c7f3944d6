//! Admin APIs: configs with their sources, topics, ACL filters, quotas, groups, log dirs.

mod common;

use common::*;
use kafka_protocol::messages::*;

const TOPIC: i8 = 2;
const BROKER: i8 = 4;

fn scenario() -> ballast_model::snapshot::Snapshot {
    let mut parts = Vec::new();
    for p in 0..3 {
        let mut x = partition("orders", p, &[1 + p % 3, 1 + (p + 1) % 3], 1_000_000);
        x.producer_msg_rate = 10.0;
        x.producer_byte_rate = 1000.0;
        x.consumer_msg_rate = 10.0;
        x.consumer_byte_rate = 1000.0;
        parts.push(x);
    }
    snapshot(brokers(3), parts)
}

/// A cluster whose describes show every change at once: for the tests of what a describe
/// answers (sources, synonyms, validation, matching). The metadata lag has its own test.
async fn start_without_lag() -> ballast_simcluster::SimCluster {
    start_with(scenario(), |c| c.metadata_lag = std::time::Duration::ZERO).await
}

async fn describe(
    admin: &Admin,
    resource_type: i8,
    name: &str,
    keys: &[&str],
) -> Vec<describe_configs_response::DescribeConfigsResourceResult> {
    let mut c = admin.any().await;
    let mut req = DescribeConfigsRequest::default();
    let mut res = describe_configs_request::DescribeConfigsResource::default();
    res.resource_type = resource_type;
    res.resource_name = sb(name);
    res.configuration_keys = Some(keys.iter().map(|k| sb(k)).collect());
    req.resources = vec![res];
    req.include_synonyms = true;
    req.include_documentation = true;
    let resp = c.send(&req, 4).await.expect("describe configs");
    assert_eq!(
        resp.results[0].error_code, 0,
        "{:?}",
        resp.results[0].error_message
    );
    resp.results[0].configs.clone()
}

fn find<'a>(
    configs: &'a [describe_configs_response::DescribeConfigsResourceResult],
    name: &str,
) -> &'a describe_configs_response::DescribeConfigsResourceResult {
    configs
        .iter()
        .find(|c| c.name.as_str() == name)
        .unwrap_or_else(|| panic!("config {name}"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn configs_report_their_sources_and_synonyms() {
    let sim = start_without_lag().await;
    let admin = Admin::new(&sim);
    let configs = describe(
        &admin,
        TOPIC,
        "orders",
        &["retention.ms", "cleanup.policy", "min.insync.replicas"],
    )
    .await;
    assert_eq!(configs.len(), 3);
    let retention = find(&configs, "retention.ms");
    assert_eq!(
        retention.value.as_ref().map(|v| v.as_str()),
        Some("604800000")
    );
    assert_eq!(retention.config_source, 5, "DEFAULT_CONFIG");
    assert_eq!(retention.config_type, 5, "LONG");
    assert!(retention.documentation.is_some());
    assert!(retention
        .synonyms
        .iter()
        .any(|s| s.name.as_str() == "log.retention.hours"
            && s.value.as_ref().map(|v| v.as_str()) == Some("168")));
    // A cluster-wide default, then a per-broker value, then a topic override.
    assert_eq!(
        admin
            .alter_configs(BROKER, "", &[("log.retention.ms", Some("86400000"))])
            .await,
        0
    );
    let r = describe(&admin, TOPIC, "orders", &["retention.ms"]).await;
    assert_eq!(r[0].value.as_ref().map(|v| v.as_str()), Some("86400000"));
    assert_eq!(r[0].config_source, 3, "DYNAMIC_DEFAULT_BROKER_CONFIG");
    assert_eq!(
        admin
            .alter_configs(TOPIC, "orders", &[("retention.ms", Some("3600000"))])
            .await,
        0
    );
    let r = describe(&admin, TOPIC, "orders", &["retention.ms"]).await;
    assert_eq!(r[0].config_source, 1, "TOPIC_CONFIG");
    let sources: Vec<i8> = r[0].synonyms.iter().map(|s| s.source).collect();
    assert_eq!(&sources[..3], &[1, 3, 5], "topic, dynamic default, default");
    assert_eq!(
        admin
            .alter_configs(
                BROKER,
                "2",
                &[("leader.replication.throttled.rate", Some("1000"))]
            )
            .await,
        0
    );
    let b = describe(
        &admin,
        BROKER,
        "2",
        &[
            "leader.replication.throttled.rate",
            "broker.id",
            "num.io.threads",
            "auto.create.topics.enable",
        ],
    )
    .await;
    assert_eq!(
        find(&b, "leader.replication.throttled.rate").config_source,
        2,
        "DYNAMIC_BROKER_CONFIG"
    );
    assert_eq!(
        find(&b, "broker.id").config_source,
        4,
        "STATIC_BROKER_CONFIG"
    );
    assert!(find(&b, "broker.id").read_only);
    assert_eq!(find(&b, "num.io.threads").config_source, 5);
    assert_eq!(
        find(&b, "auto.create.topics.enable")
            .value
            .as_ref()
            .map(|v| v.as_str()),
        Some("false")
    );
    // Deleting the override falls back.
    assert_eq!(
        admin
            .alter_configs(TOPIC, "orders", &[("retention.ms", None)])
            .await,
        0
    );
    let r = describe(&admin, TOPIC, "orders", &["retention.ms"]).await;
    assert_eq!(r[0].config_source, 3);
    sim.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn config_changes_are_validated_like_kafka_does() {
    let sim = start_without_lag().await;
    let admin = Admin::new(&sim);
    assert_eq!(
        admin
            .alter_configs(TOPIC, "orders", &[("no.such.config", Some("1"))])
            .await,
        40
    );
    assert_eq!(
        admin
            .alter_configs(TOPIC, "orders", &[("retention.ms", Some("soon"))])
            .await,
        40
    );
    assert_eq!(
        admin
            .alter_configs(
                TOPIC,
                "orders",
                &[("follower.replication.throttled.replicas", Some("0-1"))]
            )
            .await,
        40
    );
    assert_eq!(
        admin
            .alter_configs(TOPIC, "nope", &[("retention.ms", Some("1"))])
            .await,
        3
    );
    assert_eq!(
        admin
            .alter_configs(BROKER, "1", &[("broker.id", Some("7"))])
            .await,
        42,
        "read-only"
    );
    assert_eq!(
        admin
            .alter_configs(BROKER, "x", &[("num.io.threads", Some("7"))])
            .await,
        42
    );
    // APPEND and SUBTRACT on a list; validate_only changes nothing.
    let mut c = admin.any().await;
    let op = |name: &str, op: i8, value: &str| {
        let mut a = incremental_alter_configs_request::AlterableConfig::default();
        a.name = sb(name);
        a.config_operation = op;
        a.value = Some(sb(value));
        a
    };
    let mut req = IncrementalAlterConfigsRequest::default();
    let mut res = incremental_alter_configs_request::AlterConfigsResource::default();
    res.resource_type = TOPIC;
    res.resource_name = sb("orders");
    res.configs = vec![op("leader.replication.throttled.replicas", 2, "0:1,1:2")];
    req.resources = vec![res.clone()];
    assert_eq!(
        c.send(&req, 1).await.expect("alter").responses[0].error_code,
        0
    );
    res.configs = vec![op("leader.replication.throttled.replicas", 3, "0:1")];
    req.resources = vec![res.clone()];
    assert_eq!(
        c.send(&req, 1).await.expect("alter").responses[0].error_code,
        0
    );
    res.configs = vec![op("cleanup.policy", 0, "compact")];
    req.resources = vec![res];
    req.validate_only = true;
    assert_eq!(
        c.send(&req, 1).await.expect("alter").responses[0].error_code,
        0
    );
    let r = describe(
        &admin,
        TOPIC,
        "orders",
        &["leader.replication.throttled.replicas", "cleanup.policy"],
    )
    .await;
    assert_eq!(
        find(&r, "leader.replication.throttled.replicas")
            .value
            .as_ref()
            .map(|v| v.as_str()),
        Some("1:2")
    );
    assert_eq!(
        find(&r, "cleanup.policy")
            .value
            .as_ref()
            .map(|v| v.as_str()),
        Some("delete")
    );
    // Legacy AlterConfigs replaces every override.
    let mut req = AlterConfigsRequest::default();
    let mut res = alter_configs_request::AlterConfigsResource::default();
    res.resource_type = TOPIC;
    res.resource_name = sb("orders");
    let mut a = alter_configs_request::AlterableConfig::default();
    a.name = sb("segment.bytes");
    a.value = Some(sb("1048576"));
    res.configs = vec![a];
    req.resources = vec![res];
    assert_eq!(
        c.send(&req, 2).await.expect("alter").responses[0].error_code,
        0
    );
    let r = describe(
        &admin,
        TOPIC,
        "orders",
        &["leader.replication.throttled.replicas", "segment.bytes"],
    )
    .await;
    assert_eq!(
        find(&r, "leader.replication.throttled.replicas").config_source,
        5
    );
    assert_eq!(find(&r, "segment.bytes").config_source, 1);
    sim.shutdown().await;
}

fn creatable(name: &str, partitions: i32, rf: i16) -> create_topics_request::CreatableTopic {
    let mut t = create_topics_request::CreatableTopic::default();
    t.name = sb(name).into();
    t.num_partitions = partitions;
    t.replication_factor = rf;
    t
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn topics_are_created_rack_aware_validated_and_deleted() {
    let sim = start(scenario(), 1.0).await;
    let admin = Admin::new(&sim);
    let mut c = admin.any().await;
    let mut with_assignment = creatable("placed", -1, -1);
    let mut a = create_topics_request::CreatableReplicaAssignment::default();
    a.partition_index = 0;
    a.broker_ids = vec![BrokerId(3), BrokerId(1)];
    with_assignment.assignments = vec![a];
    let mut with_config = creatable("compacted", 2, 2);
    let mut cfg = create_topics_request::CreatableTopicConfig::default();
    cfg.name = sb("cleanup.policy");
    cfg.value = Some(sb("compact"));
    with_config.configs = vec![cfg];
    let mut req = CreateTopicsRequest::default();
    req.topics = vec![
        creatable("fresh", 6, 3),
        creatable("orders", 1, 1),
        creatable("bad name!", 1, 1),
        creatable("too-wide", 1, 4),
        with_assignment,
        with_config,
        creatable("defaults", -1, -1),
    ];
    let resp = c.send(&req, 7).await.expect("create");
    let codes: Vec<i16> = resp.topics.iter().map(|t| t.error_code).collect();
    assert_eq!(codes, vec![0, 36, 17, 38, 0, 0, 0]);
    assert_eq!(resp.topics[0].num_partitions, 6);
    assert_eq!(
        resp.topics[6].replication_factor, 3,
        "default.replication.factor is 3 here"
    );
    assert!(!resp.topics[0].topic_id.is_nil());
    let md = admin.metadata().await;
    let fresh = md
        .topics
        .iter()
        .find(|t| t.name.as_ref().map(|n| n.as_str()) == Some("fresh"))
        .expect("fresh");
    for p in &fresh.partitions {
        let mut racks: Vec<i32> = p.replica_nodes.iter().map(|b| (b.0 - 1) % 3).collect();
        racks.sort();
        racks.dedup();
        assert_eq!(racks.len(), 3, "one replica per rack");
    }
    let leaders: std::collections::BTreeSet<i32> =
        fresh.partitions.iter().map(|p| p.leader_id.0).collect();
    assert_eq!(leaders.len(), 3, "leaders spread");
    let placed = md
        .topics
        .iter()
        .find(|t| t.name.as_ref().map(|n| n.as_str()) == Some("placed"))
        .expect("placed");
    assert_eq!(
        placed.partitions[0].replica_nodes,
        vec![BrokerId(3), BrokerId(1)]
    );
    // validate_only creates nothing.
    let mut req = CreateTopicsRequest::default();
    req.topics = vec![creatable("ghost", 1, 1)];
    req.validate_only = true;
    assert_eq!(
        c.send(&req, 7).await.expect("create").topics[0].error_code,
        0
    );
    // CreatePartitions grows a topic and refuses to shrink it.
    let mut req = CreatePartitionsRequest::default();
    let mut t = create_partitions_request::CreatePartitionsTopic::default();
    t.name = sb("fresh").into();
    t.count = 8;
    t.assignments = None;
    let mut shrink = t.clone();
    shrink.name = sb("orders").into();
    shrink.count = 1;
    req.topics = vec![t, shrink];
    let resp = c.send(&req, 3).await.expect("create partitions");
    assert_eq!(
        resp.results
            .iter()
            .map(|r| r.error_code)
            .collect::<Vec<_>>(),
        vec![0, 37]
    );
    // DeleteTopics by name (v5) and by id (v6).
    let md = admin.metadata().await;
    let id = md
        .topics
        .iter()
        .find(|t| t.name.as_ref().map(|n| n.as_str()) == Some("placed"))
        .expect("placed")
        .topic_id;
    let mut req = DeleteTopicsRequest::default();
    req.topic_names = vec![sb("fresh").into(), sb("ghost").into()];
    let resp = c.send(&req, 5).await.expect("delete");
    assert_eq!(
        resp.responses
            .iter()
            .map(|r| r.error_code)
            .collect::<Vec<_>>(),
        vec![0, 3]
    );
    let mut req = DeleteTopicsRequest::default();
    let mut st = delete_topics_request::DeleteTopicState::default();
    st.name = None;
    st.topic_id = id;
    req.topics = vec![st];
    let resp = c.send(&req, 6).await.expect("delete");
    assert_eq!(resp.responses[0].error_code, 0);
    assert_eq!(
        resp.responses[0].name.as_ref().map(|n| n.as_str()),
        Some("placed")
    );
    let md = admin.metadata().await;
    let names: Vec<String> = md
        .topics
        .iter()
        .filter_map(|t| t.name.as_ref().map(|n| n.to_string()))
        .collect();
    assert_eq!(names, vec!["compacted", "defaults", "orders"]);
    sim.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn acl_filters_follow_kafka_semantics() {
    let sim = start(scenario(), 1.0).await;
    let mut c = Admin::new(&sim).any().await;
    let creation = |name: &str, pattern: i8, principal: &str, op: i8| {
        let mut a = create_acls_request::AclCreation::default();
        a.resource_type = 2;
        a.resource_name = sb(name);
        a.resource_pattern_type = pattern;
        a.principal = sb(principal);
        a.host = sb("*");
        a.operation = op;
        a.permission_type = 3;
        a
    };
    let mut req = CreateAclsRequest::default();
    req.creations = vec![
        creation("orders", 3, "User:alice", 3),
        creation("*", 3, "User:bob", 4),
        creation("ord", 4, "User:carol", 8),
        creation("payments", 3, "User:dave", 3),
        creation("orders", 3, "alice", 3),
        creation("orders", 2, "User:erin", 3),
    ];
    let resp = c.send(&req, 3).await.expect("create acls");
    assert_eq!(
        resp.results
            .iter()
            .map(|r| r.error_code)
            .collect::<Vec<_>>(),
        vec![0, 0, 0, 0, 42, 42]
    );
    let describe = |pattern: i8, name: Option<&str>| {
        let mut r = DescribeAclsRequest::default();
        r.resource_type_filter = 1;
        r.resource_name_filter = name.map(sb);
        r.principal_filter = None;
        r.host_filter = None;
        r.pattern_type_filter = pattern;
        r.operation = 1;
        r.permission_type = 1;
        r
    };
    let principals = |resp: &DescribeAclsResponse| {
        let mut p: Vec<String> = resp
            .resources
            .iter()
            .flat_map(|r| r.acls.iter().map(|a| a.principal.to_string()))
            .collect();
        p.sort();
        p
    };
    let matched = c
        .send(&describe(2, Some("orders")), 3)
        .await
        .expect("describe");
    assert_eq!(matched.error_code, 0, "{:?}", matched.error_message);
    assert_eq!(
        principals(&matched),
        vec!["User:alice", "User:bob", "User:carol"]
    );
    let any = c
        .send(&describe(1, Some("orders")), 3)
        .await
        .expect("describe");
    assert_eq!(principals(&any), vec!["User:alice"]);
    let all = c.send(&describe(1, None), 3).await.expect("describe");
    assert_eq!(principals(&all).len(), 4);
    let mut del = DeleteAclsRequest::default();
    let mut f = delete_acls_request::DeleteAclsFilter::default();
    f.resource_type_filter = 1;
    f.resource_name_filter = None;
    f.principal_filter = None;
    f.host_filter = None;
    f.pattern_type_filter = 4;
    f.operation = 1;
    f.permission_type = 1;
    del.filters = vec![f];
    let resp = c.send(&del, 3).await.expect("delete");
    assert_eq!(resp.filter_results[0].matching_acls.len(), 1);
    assert_eq!(
        resp.filter_results[0].matching_acls[0].principal.as_str(),
        "User:carol"
    );
    let all = c.send(&describe(1, None), 3).await.expect("describe");
    assert_eq!(principals(&all).len(), 3);
    sim.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn client_quotas_match_exact_default_and_any_entities() {
    let sim = start_without_lag().await;
    let mut c = Admin::new(&sim).any().await;
    let entry = |entity: &[(&str, Option<&str>)], key: &str, value: f64| {
        let mut e = alter_client_quotas_request::EntryData::default();
        e.entity = entity
            .iter()
            .map(|(t, n)| {
                let mut d = alter_client_quotas_request::EntityData::default();
                d.entity_type = sb(t);
                d.entity_name = n.map(sb);
                d
            })
            .collect();
        let mut op = alter_client_quotas_request::OpData::default();
        op.key = sb(key);
        op.value = value;
        e.ops = vec![op];
        e
    };
    let mut req = AlterClientQuotasRequest::default();
    req.entries = vec![
        entry(&[("user", Some("alice"))], "producer_byte_rate", 1024.0),
        entry(&[("user", None)], "consumer_byte_rate", 2048.0),
        entry(
            &[("user", Some("alice")), ("client-id", Some("app"))],
            "request_percentage",
            50.0,
        ),
        entry(
            &[("ip", Some("10.0.0.1"))],
            "connection_creation_rate",
            10.0,
        ),
        entry(
            &[("ip", Some("10.0.0.1")), ("user", Some("x"))],
            "connection_creation_rate",
            10.0,
        ),
        entry(&[("user", Some("bob"))], "no_such_quota", 1.0),
    ];
    let resp = c.send(&req, 1).await.expect("alter quotas");
    assert_eq!(
        resp.entries
            .iter()
            .map(|e| e.error_code)
            .collect::<Vec<_>>(),
        vec![0, 0, 0, 0, 42, 42]
    );
    let describe = |components: &[(&str, i8, Option<&str>)], strict: bool| {
        let mut r = DescribeClientQuotasRequest::default();
        r.components = components
            .iter()
            .map(|(t, m, n)| {
                let mut d = describe_client_quotas_request::ComponentData::default();
                d.entity_type = sb(t);
                d.match_type = *m;
                d._match = n.map(sb);
                d
            })
            .collect();
        r.strict = strict;
        r
    };
    let count = |r: &DescribeClientQuotasResponse| r.entries.as_ref().map_or(0, |e| e.len());
    let exact = c
        .send(&describe(&[("user", 0, Some("alice"))], false), 1)
        .await
        .expect("describe");
    assert_eq!(count(&exact), 2, "alice alone and alice with a client id");
    let strict = c
        .send(&describe(&[("user", 0, Some("alice"))], true), 1)
        .await
        .expect("describe");
    assert_eq!(count(&strict), 1);
    let default = c
        .send(&describe(&[("user", 1, None)], false), 1)
        .await
        .expect("describe");
    assert_eq!(count(&default), 1);
    let specified = c
        .send(&describe(&[("user", 2, None)], false), 1)
        .await
        .expect("describe");
    assert_eq!(count(&specified), 2);
    let all = c.send(&describe(&[], false), 1).await.expect("describe");
    assert_eq!(count(&all), 4);
    sim.shutdown().await;
}

/// The value of `name` on topic `orders` as a describe answers it now.
async fn orders_value(admin: &Admin, name: &str) -> Option<String> {
    describe(admin, TOPIC, "orders", &[name]).await[0]
        .value
        .as_ref()
        .map(|v| v.to_string())
}

/// Polls `f` every 20 ms until it is true or 5 s pass.
async fn eventually<F, Fut>(mut f: F) -> bool
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = bool>,
{
    for _ in 0..250 {
        if f().await {
            return true;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    false
}

/// As on a KRaft cluster, the controller accepts a config or quota change at once (and builds the
/// next change on it) but describes show it only once the brokers applied it, a moment later.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn config_and_quota_changes_are_described_only_after_the_metadata_lag() {
    let sim = start_with(scenario(), |c| {
        c.metadata_lag = std::time::Duration::from_millis(400)
    })
    .await;
    let admin = Admin::new(&sim);
    assert_eq!(
        admin
            .alter_configs(TOPIC, "orders", &[("retention.ms", Some("3600000"))])
            .await,
        0
    );
    assert_eq!(
        orders_value(&admin, "retention.ms").await.as_deref(),
        Some("604800000"),
        "right after the change: the old value"
    );
    assert!(
        eventually(|| async {
            orders_value(&admin, "retention.ms").await.as_deref() == Some("3600000")
        })
        .await,
        "the change shows once applied"
    );

    // Two changes in a row: the second builds on the first, which no describe showed yet.
    let mut c = admin.any().await;
    let op = |op: i8, value: &str| {
        let mut a = incremental_alter_configs_request::AlterableConfig::default();
        a.name = sb("leader.replication.throttled.replicas");
        a.config_operation = op;
        a.value = Some(sb(value));
        let mut res = incremental_alter_configs_request::AlterConfigsResource::default();
        res.resource_type = TOPIC;
        res.resource_name = sb("orders");
        res.configs = vec![a];
        let mut req = IncrementalAlterConfigsRequest::default();
        req.resources = vec![res];
        req
    };
    for req in [op(2, "0:1,1:2"), op(3, "0:1")] {
        assert_eq!(
            c.send(&req, 1).await.expect("alter").responses[0].error_code,
            0
        );
    }
    assert!(
        eventually(|| async {
            orders_value(&admin, "leader.replication.throttled.replicas")
                .await
                .as_deref()
                == Some("1:2")
        })
        .await
    );

    // A quota: absent right after it was set, there a moment later; the same for its removal.
    let quota = |remove: bool| {
        let mut e = alter_client_quotas_request::EntryData::default();
        let mut d = alter_client_quotas_request::EntityData::default();
        d.entity_type = sb("user");
        d.entity_name = Some(sb("alice"));
        e.entity = vec![d];
        let mut o = alter_client_quotas_request::OpData::default();
        o.key = sb("producer_byte_rate");
        o.value = 1024.0;
        o.remove = remove;
        e.ops = vec![o];
        let mut req = AlterClientQuotasRequest::default();
        req.entries = vec![e];
        req
    };
    let described = || async {
        let mut c = admin.any().await;
        let r = c
            .send(&DescribeClientQuotasRequest::default(), 1)
            .await
            .expect("describe quotas");
        r.entries.as_ref().map_or(0, |e| e.len())
    };
    let resp = c.send(&quota(false), 1).await.expect("alter quotas");
    assert_eq!(resp.entries[0].error_code, 0);
    assert_eq!(
        described().await,
        0,
        "right after the change: not there yet"
    );
    assert!(eventually(|| async { described().await == 1 }).await);
    let resp = c.send(&quota(true), 1).await.expect("alter quotas");
    assert_eq!(resp.entries[0].error_code, 0);
    assert_eq!(described().await, 1, "right after the removal: still there");
    assert!(eventually(|| async { described().await == 0 }).await);
    sim.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn group_apis_follow_the_real_brokers_rules() {
    let sim = start(scenario(), 1.0).await;
    let admin = Admin::new(&sim);
    let group = "orders-consumer-0";
    let mut coord = admin.coordinator(group).await;
    // Only the coordinator lists and describes a group.
    let mut listed = Vec::new();
    for id in [1, 2, 3] {
        let resp = admin
            .to(id)
            .await
            .send(&ListGroupsRequest::default(), 4)
            .await
            .expect("list groups");
        listed.extend(
            resp.groups
                .iter()
                .map(|g| (g.group_id.to_string(), g.group_state.to_string())),
        );
    }
    assert_eq!(listed, vec![(group.to_string(), "Stable".to_string())]);
    let mut req = DescribeGroupsRequest::default();
    req.groups = vec![sb(group).into()];
    let resp = coord.send(&req, 5).await.expect("describe");
    assert_eq!(resp.groups[0].group_state.as_str(), "Stable");
    assert_eq!(resp.groups[0].protocol_type.as_str(), "consumer");
    assert_eq!(resp.groups[0].members.len(), 3);
    let mut unknown = DescribeGroupsRequest::default();
    unknown.groups = vec![sb("nobody").into()];
    let dead = admin
        .coordinator("nobody")
        .await
        .send(&unknown, 5)
        .await
        .expect("describe");
    assert_eq!(dead.groups[0].group_state.as_str(), "Dead");
    let v6 = admin
        .coordinator("nobody")
        .await
        .send(&unknown, 6)
        .await
        .expect("describe");
    assert_eq!(v6.groups[0].error_code, 69, "GROUP_ID_NOT_FOUND from v6");
    let member = resp.groups[0].members[0].member_id.to_string();
    // OffsetCommit from outside a stable group is refused; an unknown group accepts it.
    let commit = |group: &str, generation: i32, member: &str| {
        let mut r = OffsetCommitRequest::default();
        r.group_id = sb(group).into();
        r.generation_id_or_member_epoch = generation;
        r.member_id = sb(member);
        let mut t = offset_commit_request::OffsetCommitRequestTopic::default();
        t.name = sb("orders").into();
        let mut p = offset_commit_request::OffsetCommitRequestPartition::default();
        p.partition_index = 0;
        p.committed_offset = 42;
        t.partitions = vec![p];
        r.topics = vec![t];
        r
    };
    let code = |r: &OffsetCommitResponse| r.topics[0].partitions[0].error_code;
    assert_eq!(
        code(&coord.send(&commit(group, -1, ""), 8).await.expect("commit")),
        25,
        "UNKNOWN_MEMBER_ID"
    );
    assert_eq!(
        code(
            &coord
                .send(&commit(group, 7, &member), 8)
                .await
                .expect("commit")
        ),
        22,
        "ILLEGAL_GENERATION"
    );
    assert_eq!(
        code(
            &coord
                .send(&commit(group, 1, &member), 8)
                .await
                .expect("commit")
        ),
        0
    );
    let mut other = admin.coordinator("tool-group").await;
    assert_eq!(
        code(
            &other
                .send(&commit("tool-group", -1, ""), 8)
                .await
                .expect("commit")
        ),
        0
    );
    // DeleteGroups: non-empty refused, empty deleted, unknown not found.
    let mut req = DeleteGroupsRequest::default();
    req.groups_names = vec![sb("tool-group").into()];
    assert_eq!(
        other.send(&req, 2).await.expect("delete").results[0].error_code,
        0
    );
    assert_eq!(
        other.send(&req, 2).await.expect("delete").results[0].error_code,
        69
    );
    req.groups_names = vec![sb(group).into()];
    assert_eq!(
        coord.send(&req, 2).await.expect("delete").results[0].error_code,
        68
    );
    // The wrong broker says NOT_COORDINATOR.
    let coordinator_id = {
        let mut c = admin.any().await;
        let mut fc = FindCoordinatorRequest::default();
        fc.key = sb(group);
        c.send(&fc, 3).await.expect("find").node_id.0
    };
    let not_it = [1, 2, 3]
        .into_iter()
        .find(|b| *b != coordinator_id)
        .expect("another broker");
    let resp = admin.to(not_it).await.send(&req, 2).await.expect("delete");
    assert_eq!(resp.results[0].error_code, 16);
    sim.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn log_dirs_describe_each_brokers_replicas_and_replicas_move_between_dirs() {
    let sim = start(scenario(), 1.0).await;
    let admin = Admin::new(&sim);
    let mut b1 = admin.to(1).await;
    let mut req = DescribeLogDirsRequest::default();
    req.topics = None;
    let resp = b1.send(&req, 4).await.expect("log dirs");
    assert_eq!(resp.results.len(), 2, "two log dirs per broker");
    let mut held: Vec<(String, i32, i32)> = Vec::new();
    for (d, r) in resp.results.iter().enumerate() {
        assert!(r.total_bytes > 0 && r.usable_bytes <= r.total_bytes);
        for t in &r.topics {
            for p in &t.partitions {
                assert!(p.partition_size >= 1_000_000);
                held.push((t.name.to_string(), p.partition_index, d as i32));
            }
        }
    }
    held.sort();
    // Broker 1 holds orders-0 (1,2) and orders-2 (3,1).
    assert_eq!(
        held.iter()
            .map(|(t, p, _)| (t.as_str(), *p))
            .collect::<Vec<_>>(),
        vec![("orders", 0), ("orders", 2)]
    );
    let (_, _, dir) = &held[0];
    let target = if *dir == 0 {
        "/var/lib/kafka/data-1"
    } else {
        "/var/lib/kafka/data-0"
    };
    let mut alter = AlterReplicaLogDirsRequest::default();
    let mut d = alter_replica_log_dirs_request::AlterReplicaLogDir::default();
    d.path = sb(target);
    let mut t = alter_replica_log_dirs_request::AlterReplicaLogDirTopic::default();
    t.name = sb("orders").into();
    t.partitions = vec![0, 1];
    d.topics = vec![t];
    alter.dirs = vec![d];
    let resp = b1.send(&alter, 2).await.expect("alter log dirs");
    let codes: Vec<i16> = resp.results[0]
        .partitions
        .iter()
        .map(|p| p.error_code)
        .collect();
    assert_eq!(codes, vec![0, 9], "orders-1 has no replica on broker 1");
    let resp = b1.send(&req, 4).await.expect("log dirs");
    let moved = resp.results.iter().position(|r| {
        r.topics
            .iter()
            .any(|t| t.partitions.iter().any(|p| p.partition_index == 0))
    });
    assert_eq!(
        moved
            .map(|i| resp.results[i].log_dir.to_string())
            .as_deref(),
        Some(target)
    );
    sim.shutdown().await;
}
