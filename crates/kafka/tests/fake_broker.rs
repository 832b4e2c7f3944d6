//! The client against a tiny in-test broker: version negotiation, routing, retries, timeouts,
//! dropped connections.

mod support;

use std::sync::Arc;
use std::time::{Duration, Instant};

use ballast_kafka::{Client, ClientConfig, Error, NewTopic, OffsetSpec, TopicPartition};
use kafka_protocol::messages::create_topics_response::CreatableTopicResult;
use kafka_protocol::messages::describe_cluster_response::DescribeClusterBroker;
use kafka_protocol::messages::describe_configs_response::{
    DescribeConfigsResourceResult, DescribeConfigsResult, DescribeConfigsSynonym,
};
use kafka_protocol::messages::describe_groups_response::{DescribedGroup, DescribedGroupMember};
use kafka_protocol::messages::describe_log_dirs_response::{
    DescribeLogDirsPartition, DescribeLogDirsResult, DescribeLogDirsTopic,
};
use kafka_protocol::messages::find_coordinator_response::Coordinator;
use kafka_protocol::messages::list_offsets_response::{
    ListOffsetsPartitionResponse, ListOffsetsTopicResponse,
};
use kafka_protocol::messages::offset_fetch_response::{
    OffsetFetchResponseGroup, OffsetFetchResponsePartition, OffsetFetchResponsePartitions,
    OffsetFetchResponseTopic, OffsetFetchResponseTopics,
};
use kafka_protocol::messages::{
    ApiKey, BrokerId, CreateTopicsRequest, CreateTopicsResponse, DescribeClusterResponse,
    DescribeLogDirsResponse, FindCoordinatorRequest, FindCoordinatorResponse, ListOffsetsRequest,
    ListOffsetsResponse, OffsetFetchRequest, OffsetFetchResponse, TopicName,
};
use kafka_protocol::messages::{
    ConsumerProtocolAssignment, DescribeConfigsRequest, DescribeConfigsResponse,
    DescribeGroupsRequest, DescribeGroupsResponse,
};
use kafka_protocol::protocol::Encodable;
use kafka_protocol::protocol::StrBytes;
use support::{answer, no_handler, topic, ClusterState, FakeCluster, Handler, Reply, Request};

fn fast(bootstrap: &str) -> ClientConfig {
    ClientConfig::plaintext(bootstrap)
        .with_retries(3, Duration::from_millis(10))
        .with_request_timeout(Duration::from_secs(5))
        .with_connect_timeout(Duration::from_secs(2))
}

fn handler(
    f: impl Fn(&Request, &mut ClusterState) -> Option<Reply> + Send + Sync + 'static,
) -> Handler {
    Arc::new(f)
}

fn describe_cluster_answer(request: &Request) -> Reply {
    let mut response = DescribeClusterResponse::default();
    response.cluster_id = StrBytes::from_static_str("fake-cluster");
    response.controller_id = BrokerId(1);
    let mut b = DescribeClusterBroker::default();
    b.broker_id = BrokerId(1);
    b.host = StrBytes::from_static_str("127.0.0.1");
    b.port = 1;
    response.brokers = vec![b];
    answer(request, &response)
}

/// ListOffsets answered by each broker with offset = broker * 100 + partition.
fn list_offsets_answer(request: &Request, state: &ClusterState) -> Reply {
    let req: ListOffsetsRequest = request.decode();
    let mut response = ListOffsetsResponse::default();
    for t in req.topics {
        let mut rt = ListOffsetsTopicResponse::default();
        rt.name = t.name.clone();
        for p in t.partitions {
            let mut rp = ListOffsetsPartitionResponse::default();
            rp.partition_index = p.partition_index;
            if state.leader_of(&t.name.0, p.partition_index) == Some(request.broker) {
                rp.offset = i64::from(request.broker * 100 + p.partition_index);
                rp.timestamp = -1;
            } else {
                rp.error_code = 6;
                rp.offset = -1;
            }
            rt.partitions.push(rp);
        }
        response.topics.push(rt);
    }
    answer(request, &response)
}

#[tokio::test]
async fn connect_falls_back_from_api_versions_v3_to_what_the_broker_offers() {
    let cluster = FakeCluster::start(1, vec![topic("t", &[1])], no_handler()).await;
    cluster
        .state()
        .api_ranges
        .insert(ApiKey::ApiVersions as i16, Some((0, 2)));
    let client = Client::connect(fast(&cluster.bootstrap())).await.unwrap();
    assert_eq!(client.cached_metadata().topics.len(), 1);
    let versions: Vec<i16> = cluster
        .state()
        .requests(ApiKey::ApiVersions)
        .iter()
        .filter(|l| l.connection == 1)
        .map(|l| l.version)
        .collect();
    assert_eq!(versions, vec![3, 2]);
}

#[tokio::test]
async fn requests_use_the_highest_version_both_sides_speak() {
    let cluster = FakeCluster::start(1, vec![topic("t", &[1])], no_handler()).await;
    cluster
        .state()
        .api_ranges
        .insert(ApiKey::Metadata as i16, Some((0, 5)));
    let client = Client::connect(fast(&cluster.bootstrap())).await.unwrap();
    client.refresh_metadata().await.unwrap();
    let versions: Vec<i16> = cluster
        .state()
        .requests(ApiKey::Metadata)
        .iter()
        .map(|l| l.version)
        .collect();
    assert!(versions.iter().all(|v| *v == 5), "{versions:?}");
}

#[tokio::test]
async fn an_api_the_broker_cannot_speak_is_a_typed_unsupported_version_error() {
    let cluster = FakeCluster::start(1, vec![topic("t", &[1])], no_handler()).await;
    // ListOffsets v0 only: below kafka-protocol's minimum (v1)
    cluster
        .state()
        .api_ranges
        .insert(ApiKey::ListOffsets as i16, Some((0, 0)));
    cluster
        .state()
        .api_ranges
        .insert(ApiKey::DescribeCluster as i16, None);
    let client = Client::connect(fast(&cluster.bootstrap())).await.unwrap();
    let err = client
        .list_offsets(&[TopicPartition::new("t", 0)], OffsetSpec::Latest)
        .await
        .unwrap_err();
    match &err {
        Error::UnsupportedVersion {
            api,
            broker,
            broker_versions,
            ..
        } => {
            assert_eq!(*api, "ListOffsets");
            assert!(broker.contains("127.0.0.1"), "{broker}");
            assert_eq!(*broker_versions, Some((0, 0)));
        }
        other => panic!("{other:?}"),
    }
    let err = client.describe_cluster().await.unwrap_err();
    assert!(
        matches!(
            err,
            Error::UnsupportedVersion {
                broker_versions: None,
                ..
            }
        ),
        "{err:?}"
    );
    assert!(
        err.to_string().contains("does not support DescribeCluster"),
        "{err}"
    );
}

#[tokio::test]
async fn list_offsets_are_sent_to_each_partition_leader() {
    let cluster = FakeCluster::start(
        3,
        vec![topic("t", &[1, 2, 3, 1])],
        handler(|r, s| {
            (r.api_key == ApiKey::ListOffsets as i16).then(|| list_offsets_answer(r, s))
        }),
    )
    .await;
    let client = Client::connect(fast(&cluster.bootstrap())).await.unwrap();
    let tps: Vec<TopicPartition> = (0..4).map(|p| TopicPartition::new("t", p)).collect();
    let offsets = client.list_offsets(&tps, OffsetSpec::Latest).await.unwrap();
    let got: Vec<(i32, Option<i64>)> = offsets.iter().map(|o| (o.partition, o.offset)).collect();
    assert_eq!(
        got,
        vec![
            (0, Some(100)),
            (1, Some(201)),
            (2, Some(302)),
            (3, Some(103))
        ]
    );
    assert!(offsets.iter().all(|o| o.error.is_none()));
    let mut brokers: Vec<i32> = cluster
        .state()
        .requests(ApiKey::ListOffsets)
        .iter()
        .map(|l| l.broker)
        .collect();
    brokers.sort_unstable();
    assert_eq!(brokers, vec![1, 2, 3], "one request per leader");
}

#[tokio::test]
async fn not_leader_or_follower_refreshes_metadata_and_retries_on_the_new_leader() {
    let cluster = FakeCluster::start(
        2,
        vec![topic("t", &[1])],
        handler(|r, s| {
            if r.api_key != ApiKey::ListOffsets as i16 {
                return None;
            }
            if r.broker == 1 {
                // leadership moves to broker 2; broker 1 says so
                s.set_leader("t", 0, 2);
            }
            Some(list_offsets_answer(r, s))
        }),
    )
    .await;
    let client = Client::connect(fast(&cluster.bootstrap())).await.unwrap();
    let metadata_before = cluster.state().requests(ApiKey::Metadata).len();
    let offsets = client
        .list_offsets(&[TopicPartition::new("t", 0)], OffsetSpec::Earliest)
        .await
        .unwrap();
    assert_eq!(offsets[0].offset, Some(200));
    assert_eq!(offsets[0].error, None);
    assert!(cluster.state().requests(ApiKey::Metadata).len() > metadata_before);
    assert_eq!(
        client
            .cached_metadata()
            .leader(&TopicPartition::new("t", 0)),
        Some(2)
    );
}

#[tokio::test]
async fn a_partition_error_that_persists_is_reported_on_that_partition() {
    let cluster = FakeCluster::start(
        1,
        vec![topic("t", &[1, 1])],
        handler(|r, s| {
            if r.api_key != ApiKey::ListOffsets as i16 {
                return None;
            }
            let Reply::Answer(_) = list_offsets_answer(r, s) else {
                return None;
            };
            let req: ListOffsetsRequest = r.decode();
            let mut response = ListOffsetsResponse::default();
            for t in req.topics {
                let mut rt = ListOffsetsTopicResponse::default();
                rt.name = t.name.clone();
                for p in t.partitions {
                    let mut rp = ListOffsetsPartitionResponse::default();
                    rp.partition_index = p.partition_index;
                    if p.partition_index == 1 {
                        rp.error_code = 29; // TOPIC_AUTHORIZATION_FAILED
                    } else {
                        rp.offset = 5;
                    }
                    rt.partitions.push(rp);
                }
                response.topics.push(rt);
            }
            Some(answer(r, &response))
        }),
    )
    .await;
    let client = Client::connect(fast(&cluster.bootstrap())).await.unwrap();
    let offsets = client
        .list_offsets(
            &[
                TopicPartition::new("t", 0),
                TopicPartition::new("t", 1),
                TopicPartition::new("missing", 0),
            ],
            OffsetSpec::Latest,
        )
        .await
        .unwrap();
    assert_eq!(offsets[0].offset, Some(5));
    assert_eq!(offsets[1].offset, None);
    assert_eq!(
        offsets[1].error.as_ref().map(|e| e.name),
        Some("TOPIC_AUTHORIZATION_FAILED")
    );
    assert_eq!(
        offsets[2].error.as_ref().map(|e| e.name),
        Some("UNKNOWN_TOPIC_OR_PARTITION")
    );
    assert_eq!(
        cluster.state().requests(ApiKey::ListOffsets).len(),
        1,
        "a non-retriable partition error is not retried"
    );
}

#[tokio::test]
async fn a_broker_that_never_answers_times_out_and_its_connection_is_replaced() {
    let cluster = FakeCluster::start(
        1,
        vec![],
        handler(|r, s| {
            if r.api_key != ApiKey::DescribeCluster as i16 {
                return None;
            }
            if s.count("describe") == 1 {
                return Some(Reply::Silent);
            }
            Some(describe_cluster_answer(r))
        }),
    )
    .await;
    let config = fast(&cluster.bootstrap())
        .with_request_timeout(Duration::from_millis(300))
        .with_retries(0, Duration::from_millis(10));
    let client = Client::connect(config).await.unwrap();
    let started = Instant::now();
    let err = client.describe_cluster().await.unwrap_err();
    assert!(started.elapsed() < Duration::from_secs(3));
    match &err {
        Error::Timeout { broker, api, after } => {
            assert_eq!(*api, "DescribeCluster");
            assert!(broker.starts_with("1 (127.0.0.1:"), "{broker}");
            assert_eq!(*after, Duration::from_millis(300));
        }
        other => panic!("{other:?}"),
    }
    assert!(err.is_retriable());
    let described = client.describe_cluster().await.unwrap();
    assert_eq!(described.cluster_id, "fake-cluster");
    let connections: Vec<usize> = cluster
        .state()
        .requests(ApiKey::DescribeCluster)
        .iter()
        .map(|l| l.connection)
        .collect();
    assert_eq!(connections.len(), 2);
    assert_ne!(
        connections[0], connections[1],
        "the silent connection was replaced"
    );
}

#[tokio::test]
async fn a_broker_that_closes_the_connection_mid_request_is_retried_on_a_new_connection() {
    let cluster = FakeCluster::start(
        1,
        vec![],
        handler(|r, s| {
            if r.api_key != ApiKey::DescribeCluster as i16 {
                return None;
            }
            if s.count("describe") <= 2 {
                return Some(Reply::Close);
            }
            Some(describe_cluster_answer(r))
        }),
    )
    .await;
    let client = Client::connect(fast(&cluster.bootstrap())).await.unwrap();
    let described = client.describe_cluster().await.unwrap();
    assert_eq!(described.brokers.len(), 1);
    assert_eq!(cluster.state().requests(ApiKey::DescribeCluster).len(), 3);
}

#[tokio::test]
async fn a_closed_connection_without_retries_is_a_disconnected_error_naming_the_broker() {
    let cluster = FakeCluster::start(
        1,
        vec![],
        handler(|r, _| (r.api_key == ApiKey::DescribeCluster as i16).then_some(Reply::Close)),
    )
    .await;
    let config = fast(&cluster.bootstrap()).with_retries(0, Duration::from_millis(10));
    let client = Client::connect(config).await.unwrap();
    let err = client.describe_cluster().await.unwrap_err();
    assert!(
        matches!(
            err,
            Error::Disconnected {
                api: "DescribeCluster",
                ..
            }
        ),
        "{err:?}"
    );
    let text = err.to_string();
    assert!(
        text.starts_with("broker 1 (127.0.0.1:")
            && text.ends_with("closed the connection during DescribeCluster"),
        "{text}"
    );
}

#[tokio::test]
async fn bootstrap_tries_each_address_until_one_answers() {
    let cluster = FakeCluster::start(1, vec![topic("t", &[1])], no_handler()).await;
    let closed = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let bootstrap = format!("127.0.0.1:{closed},{}", cluster.bootstrap());
    let client = Client::connect(fast(&bootstrap)).await.unwrap();
    assert_eq!(client.cached_metadata().brokers.len(), 1);

    let err = Client::connect(fast(&format!("127.0.0.1:{closed}")))
        .await
        .unwrap_err();
    assert!(matches!(err, Error::NoBrokerReachable { .. }), "{err:?}");
    assert!(
        err.to_string().contains(&format!("127.0.0.1:{closed}")),
        "{err}"
    );
}

#[tokio::test]
async fn metadata_reports_brokers_racks_controller_and_partitions() {
    let mut t = topic("orders", &[1, 2]);
    t.partitions[1].replicas = vec![2, 1];
    let cluster = FakeCluster::start(2, vec![t], no_handler()).await;
    let client = Client::connect(fast(&cluster.bootstrap())).await.unwrap();
    let metadata = client.metadata(None).await.unwrap();
    assert_eq!(metadata.cluster_id.as_deref(), Some("fake-cluster"));
    assert_eq!(metadata.controller_id, Some(1));
    assert_eq!(metadata.brokers.len(), 2);
    assert_eq!(metadata.brokers[1].rack.as_deref(), Some("rack-0"));
    let p1 = metadata
        .partition(&TopicPartition::new("orders", 1))
        .unwrap();
    assert_eq!(p1.leader, Some(2));
    assert_eq!(p1.replicas, vec![2, 1]);
    assert_eq!(p1.isr, vec![2, 1]);
    let named = client
        .metadata(Some(&["orders".to_string(), "nope".to_string()]))
        .await
        .unwrap();
    assert_eq!(
        named
            .topic("nope")
            .and_then(|t| t.error.as_ref())
            .map(|e| e.name),
        Some("UNKNOWN_TOPIC_OR_PARTITION")
    );
}

#[tokio::test]
async fn group_requests_go_to_the_coordinator_and_follow_not_coordinator() {
    let cluster = FakeCluster::start(
        3,
        vec![topic("t", &[1])],
        handler(|r, s| {
            if r.api_key == ApiKey::FindCoordinator as i16 {
                let req: FindCoordinatorRequest = r.decode();
                let node = if s.count("find") == 1 { 2 } else { 3 };
                let port = s.brokers.iter().find(|(id, _)| *id == node).unwrap().1;
                let mut response = FindCoordinatorResponse::default();
                if r.version >= 4 {
                    for key in req.coordinator_keys {
                        let mut c = Coordinator::default();
                        c.key = key;
                        c.node_id = BrokerId(node);
                        c.host = StrBytes::from_static_str("127.0.0.1");
                        c.port = i32::from(port);
                        response.coordinators.push(c);
                    }
                } else {
                    response.node_id = BrokerId(node);
                    response.host = StrBytes::from_static_str("127.0.0.1");
                    response.port = i32::from(port);
                }
                return Some(answer(r, &response));
            }
            if r.api_key == ApiKey::OffsetFetch as i16 {
                let _req: OffsetFetchRequest = r.decode();
                let code = if r.broker == 3 { 0 } else { 16 };
                let mut response = OffsetFetchResponse::default();
                if r.version >= 8 {
                    let mut g = OffsetFetchResponseGroup::default();
                    g.group_id = kafka_protocol::messages::GroupId(StrBytes::from_static_str("g"));
                    g.error_code = code;
                    if code == 0 {
                        let mut t = OffsetFetchResponseTopics::default();
                        t.name = TopicName(StrBytes::from_static_str("t"));
                        let mut p = OffsetFetchResponsePartitions::default();
                        p.partition_index = 0;
                        p.committed_offset = 7;
                        t.partitions.push(p);
                        g.topics.push(t);
                    }
                    response.groups.push(g);
                } else {
                    response.error_code = code;
                    if code == 0 {
                        let mut t = OffsetFetchResponseTopic::default();
                        t.name = TopicName(StrBytes::from_static_str("t"));
                        let mut p = OffsetFetchResponsePartition::default();
                        p.partition_index = 0;
                        p.committed_offset = 7;
                        t.partitions.push(p);
                        response.topics.push(t);
                    }
                }
                return Some(answer(r, &response));
            }
            None
        }),
    )
    .await;
    let client = Client::connect(fast(&cluster.bootstrap())).await.unwrap();
    let offsets = client.committed_offsets("g", None).await.unwrap();
    assert_eq!(offsets.len(), 1);
    assert_eq!(offsets[0].offset, Some(7));
    assert_eq!(cluster.state().requests(ApiKey::FindCoordinator).len(), 2);
    let fetched_at: Vec<i32> = cluster
        .state()
        .requests(ApiKey::OffsetFetch)
        .iter()
        .map(|l| l.broker)
        .collect();
    assert_eq!(fetched_at, vec![2, 3]);
    // the coordinator is cached now
    client.committed_offsets("g", None).await.unwrap();
    assert_eq!(cluster.state().requests(ApiKey::FindCoordinator).len(), 2);
}

#[tokio::test]
async fn topic_admin_goes_to_the_controller_and_reports_errors_per_topic() {
    let cluster = FakeCluster::start(
        2,
        vec![topic("exists", &[1])],
        handler(|r, s| {
            if r.api_key != ApiKey::CreateTopics as i16 {
                return None;
            }
            let req: CreateTopicsRequest = r.decode();
            let mut response = CreateTopicsResponse::default();
            for t in req.topics {
                let mut result = CreatableTopicResult::default();
                result.name = t.name.clone();
                if r.broker != 2 {
                    // the controller moved to broker 2
                    s.controller = 2;
                    result.error_code = 41;
                } else if t.name.0.as_str() == "exists" {
                    result.error_code = 36;
                    result.error_message =
                        Some(StrBytes::from_static_str("Topic 'exists' already exists."));
                }
                response.topics.push(result);
            }
            Some(answer(r, &response))
        }),
    )
    .await;
    let client = Client::connect(fast(&cluster.bootstrap())).await.unwrap();
    let results = client
        .create_topics(
            &[NewTopic::new("exists", 1, 1), NewTopic::new("fresh", 3, 2)],
            false,
        )
        .await
        .unwrap();
    assert_eq!(results[0].name, "exists");
    let e = results[0].error.as_ref().unwrap();
    assert_eq!(e.name, "TOPIC_ALREADY_EXISTS");
    assert_eq!(e.message.as_deref(), Some("Topic 'exists' already exists."));
    assert_eq!(results[1].name, "fresh");
    assert_eq!(results[1].error, None);
    let brokers: Vec<i32> = cluster
        .state()
        .requests(ApiKey::CreateTopics)
        .iter()
        .map(|l| l.broker)
        .collect();
    assert_eq!(
        brokers,
        vec![1, 2],
        "not controller, then the new controller"
    );
}

#[tokio::test]
async fn describe_log_dirs_is_sent_to_the_named_broker() {
    let cluster = FakeCluster::start(
        3,
        vec![topic("t", &[1, 2, 3])],
        handler(|r, _| {
            if r.api_key != ApiKey::DescribeLogDirs as i16 {
                return None;
            }
            let mut response = DescribeLogDirsResponse::default();
            let mut dir = DescribeLogDirsResult::default();
            dir.log_dir = StrBytes::from_string(format!("/data/{}", r.broker));
            dir.total_bytes = 1000;
            dir.usable_bytes = 600;
            let mut t = DescribeLogDirsTopic::default();
            t.name = TopicName(StrBytes::from_static_str("t"));
            let mut p = DescribeLogDirsPartition::default();
            p.partition_index = r.broker - 1;
            p.partition_size = 123;
            p.offset_lag = 4;
            t.partitions.push(p);
            dir.topics.push(t);
            response.results.push(dir);
            Some(answer(r, &response))
        }),
    )
    .await;
    let client = Client::connect(fast(&cluster.bootstrap())).await.unwrap();
    let dirs = client.describe_log_dirs(3, None).await.unwrap();
    assert_eq!(dirs.broker, 3);
    assert_eq!(dirs.dirs[0].path, "/data/3");
    assert_eq!(dirs.dirs[0].total_bytes, Some(1000));
    assert_eq!(dirs.dirs[0].usable_bytes, Some(600));
    assert_eq!(dirs.dirs[0].replicas[0].partition, 2);
    assert_eq!(dirs.dirs[0].replicas[0].size, 123);
    assert_eq!(dirs.dirs[0].replicas[0].offset_lag, 4);
    assert_eq!(
        cluster
            .state()
            .requests(ApiKey::DescribeLogDirs)
            .iter()
            .map(|l| l.broker)
            .collect::<Vec<_>>(),
        vec![3]
    );
    let all = client.describe_all_log_dirs().await.unwrap();
    assert_eq!(all.len(), 3);
    for (id, result) in all {
        assert_eq!(result.unwrap().dirs[0].path, format!("/data/{id}"));
    }
    assert!(matches!(
        client.describe_log_dirs(9, None).await,
        Err(Error::UnknownBroker(9))
    ));
}

fn find_coordinator_answer(request: &Request, state: &ClusterState, node: i32) -> Reply {
    let req: FindCoordinatorRequest = request.decode();
    let port = i32::from(state.brokers.iter().find(|(id, _)| *id == node).unwrap().1);
    let mut response = FindCoordinatorResponse::default();
    if request.version >= 4 {
        for key in req.coordinator_keys {
            let mut c = Coordinator::default();
            c.key = key;
            c.node_id = BrokerId(node);
            c.host = StrBytes::from_static_str("127.0.0.1");
            c.port = port;
            response.coordinators.push(c);
        }
    } else {
        response.node_id = BrokerId(node);
        response.host = StrBytes::from_static_str("127.0.0.1");
        response.port = port;
    }
    answer(request, &response)
}

#[tokio::test]
async fn describe_groups_decodes_member_assignments() {
    let cluster = FakeCluster::start(
        2,
        vec![topic("orders", &[1, 2])],
        handler(|r, s| {
            if r.api_key == ApiKey::FindCoordinator as i16 {
                return Some(find_coordinator_answer(r, s, 2));
            }
            if r.api_key != ApiKey::DescribeGroups as i16 {
                return None;
            }
            assert_eq!(r.broker, 2, "sent to the coordinator");
            let req: DescribeGroupsRequest = r.decode();
            let mut response = DescribeGroupsResponse::default();
            for g in req.groups {
                let mut group = DescribedGroup::default();
                group.group_id = g.clone();
                if g.0.as_str() == "billing" {
                    group.group_state = StrBytes::from_static_str("Stable");
                    group.protocol_type = StrBytes::from_static_str("consumer");
                    group.protocol_data = StrBytes::from_static_str("range");
                    let mut assignment = ConsumerProtocolAssignment::default();
                    let mut tp = kafka_protocol::messages::consumer_protocol_assignment::TopicPartition::default();
                    tp.topic = TopicName(StrBytes::from_static_str("orders"));
                    tp.partitions = vec![1, 0];
                    assignment.assigned_partitions.push(tp);
                    let mut bytes = bytes::BytesMut::new();
                    bytes.extend_from_slice(&1i16.to_be_bytes());
                    assignment.encode(&mut bytes, 1).unwrap();
                    let mut m = DescribedGroupMember::default();
                    m.member_id = StrBytes::from_static_str("consumer-1-abc");
                    m.client_id = StrBytes::from_static_str("consumer-1");
                    m.client_host = StrBytes::from_static_str("/10.0.0.7");
                    m.member_assignment = bytes.freeze();
                    group.members.push(m);
                } else {
                    group.group_state = StrBytes::from_static_str("Dead");
                }
                response.groups.push(group);
            }
            Some(answer(r, &response))
        }),
    )
    .await;
    // A broker before KIP-848 (no ConsumerGroupDescribe, no ShareGroupDescribe): "gone" stays
    // as DescribeGroups answered it.
    for api in [ApiKey::ConsumerGroupDescribe, ApiKey::ShareGroupDescribe] {
        cluster.state().api_ranges.insert(api as i16, None);
    }
    let client = Client::connect(fast(&cluster.bootstrap())).await.unwrap();
    let groups = client
        .describe_groups(&["billing".to_string(), "gone".to_string()])
        .await
        .unwrap();
    assert_eq!(groups.len(), 2);
    let billing = &groups[0];
    assert_eq!(billing.group_id, "billing");
    assert_eq!(billing.state, "Stable");
    assert_eq!(billing.protocol, "range");
    assert_eq!(billing.coordinator, Some(2));
    assert_eq!(billing.members[0].client_id, "consumer-1");
    assert_eq!(billing.members[0].host, "/10.0.0.7");
    assert_eq!(billing.members[0].assignment[0].topic, "orders");
    assert_eq!(billing.members[0].assignment[0].partitions, vec![0, 1]);
    assert_eq!(groups[1].state, "Dead");
    assert!(groups[1].members.is_empty());
}

/// A consumer group (KIP-848) on a broker that does not offer ConsumerGroupDescribe: classic
/// DescribeGroups does not know it, its coordinator lists it, and the answer says which API is
/// missing (UNSUPPORTED_VERSION) instead of "not found"; a group nobody lists stays not found.
#[tokio::test]
async fn a_listed_group_no_offered_api_describes_says_which_api_is_missing_not_that_it_is_unknown()
{
    use kafka_protocol::messages::list_groups_response::ListedGroup;
    use kafka_protocol::messages::{GroupId, ListGroupsResponse};
    let cluster = FakeCluster::start(
        2,
        vec![topic("orders", &[1, 2])],
        handler(|r, s| {
            if r.api_key == ApiKey::FindCoordinator as i16 {
                return Some(find_coordinator_answer(r, s, 2));
            }
            if r.api_key == ApiKey::ListGroups as i16 {
                let mut response = ListGroupsResponse::default();
                if r.broker == 2 {
                    let mut g = ListedGroup::default();
                    g.group_id = GroupId(StrBytes::from_static_str("kip848"));
                    g.protocol_type = StrBytes::from_static_str("consumer");
                    g.group_state = StrBytes::from_static_str("Stable");
                    g.group_type = StrBytes::from_static_str("consumer");
                    response.groups.push(g);
                }
                return Some(answer(r, &response));
            }
            if r.api_key != ApiKey::DescribeGroups as i16 {
                return None;
            }
            let req: DescribeGroupsRequest = r.decode();
            let mut response = DescribeGroupsResponse::default();
            for g in req.groups {
                let mut group = DescribedGroup::default();
                group.group_state = StrBytes::from_static_str("Dead");
                group.error_code = 69;
                group.error_message = Some(StrBytes::from_string(if g.0.as_str() == "kip848" {
                    format!("Group {} is not a classic group.", g.0.as_str())
                } else {
                    format!("Group {} not found.", g.0.as_str())
                }));
                group.group_id = g;
                response.groups.push(group);
            }
            Some(answer(r, &response))
        }),
    )
    .await;
    cluster
        .state()
        .api_ranges
        .insert(ApiKey::ConsumerGroupDescribe as i16, None);
    let client = Client::connect(fast(&cluster.bootstrap())).await.unwrap();
    let groups = client
        .describe_groups(&["kip848".to_string(), "nobody".to_string()])
        .await
        .unwrap();
    let kip848 = &groups[0];
    assert_eq!(kip848.group_type.as_deref(), Some("consumer"));
    assert_eq!(kip848.state, "Stable", "the listed state");
    assert_eq!(kip848.coordinator, Some(2));
    let e = kip848.error.as_ref().expect("not described");
    assert_eq!(e.name, "UNSUPPORTED_VERSION");
    assert_eq!(
        e.message.as_deref(),
        Some("group kip848 is a consumer group and cannot be described: broker 2 does not offer ConsumerGroupDescribe")
    );
    let nobody = groups[1].error.as_ref().expect("unknown");
    assert_eq!(nobody.name, "GROUP_ID_NOT_FOUND");
    assert_eq!(nobody.message.as_deref(), Some("Group nobody not found."));
}

#[tokio::test]
async fn describe_configs_routes_broker_resources_to_that_broker_and_reports_sources() {
    let cluster = FakeCluster::start(
        3,
        vec![topic("t", &[1])],
        handler(|r, _| {
            if r.api_key != ApiKey::DescribeConfigs as i16 {
                return None;
            }
            let req: DescribeConfigsRequest = r.decode();
            assert!(req.include_synonyms);
            let mut response = DescribeConfigsResponse::default();
            for resource in req.resources {
                let mut result = DescribeConfigsResult::default();
                result.resource_type = resource.resource_type;
                result.resource_name = resource.resource_name.clone();
                if resource.resource_type == 4 {
                    assert_eq!(resource.resource_name.as_str(), r.broker.to_string());
                }
                if resource.resource_name.as_str() == "missing" {
                    result.error_code = 3;
                    result.error_message =
                        Some(StrBytes::from_static_str("Topic missing does not exist"));
                }
                let mut entry = DescribeConfigsResourceResult::default();
                entry.name = StrBytes::from_static_str("retention.ms");
                entry.value = Some(StrBytes::from_static_str("1000"));
                entry.config_source = 1;
                let mut synonym = DescribeConfigsSynonym::default();
                synonym.name = StrBytes::from_static_str("log.retention.ms");
                synonym.value = Some(StrBytes::from_static_str("604800000"));
                synonym.source = 5;
                entry.synonyms.push(synonym);
                let mut default = DescribeConfigsResourceResult::default();
                default.name = StrBytes::from_static_str("cleanup.policy");
                default.value = Some(StrBytes::from_static_str("delete"));
                default.config_source = 5;
                result.configs = vec![entry, default];
                response.results.push(result);
            }
            Some(answer(r, &response))
        }),
    )
    .await;
    let client = Client::connect(fast(&cluster.bootstrap())).await.unwrap();
    let results = client
        .describe_configs(&[
            ballast_kafka::ConfigResource::Topic("t".into()),
            ballast_kafka::ConfigResource::Broker(3),
            ballast_kafka::ConfigResource::Topic("missing".into()),
        ])
        .await
        .unwrap();
    assert_eq!(results.len(), 3);
    let topic = &results[0];
    assert_eq!(
        topic.resource,
        ballast_kafka::ConfigResource::Topic("t".into())
    );
    let cleanup = &topic.entries[0];
    assert_eq!(cleanup.name, "cleanup.policy");
    assert!(cleanup.is_default);
    assert_eq!(cleanup.source, ballast_kafka::ConfigSource::DefaultConfig);
    let retention = &topic.entries[1];
    assert_eq!(
        retention.source,
        ballast_kafka::ConfigSource::DynamicTopicConfig
    );
    assert!(!retention.is_default);
    assert_eq!(retention.synonyms[0].name, "log.retention.ms");
    assert_eq!(
        results[1].resource,
        ballast_kafka::ConfigResource::Broker(3)
    );
    assert_eq!(
        results[2].error.as_ref().map(|e| e.name),
        Some("UNKNOWN_TOPIC_OR_PARTITION")
    );
    let brokers: Vec<i32> = cluster
        .state()
        .requests(ApiKey::DescribeConfigs)
        .iter()
        .map(|l| l.broker)
        .collect();
    assert!(brokers.contains(&3), "{brokers:?}");
    let json = serde_json::to_value(&results[0]).unwrap();
    assert_eq!(json["entries"][0]["source"], "DEFAULT_CONFIG");
    assert_eq!(json["entries"][0]["isDefault"], true);

    let err = client
        .describe_config(&ballast_kafka::ConfigResource::Topic("missing".into()))
        .await
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "DescribeConfigs failed: UNKNOWN_TOPIC_OR_PARTITION (Topic missing does not exist)"
    );
}

#[tokio::test]
async fn on_a_zookeeper_cluster_without_describe_quorum_the_active_controller_is_metadatas() {
    let cluster = FakeCluster::start(3, vec![topic("t", &[1, 2, 3])], no_handler()).await;
    {
        let mut state = cluster.state();
        state.controller = 2;
        // A ZooKeeper-based broker does not offer DescribeQuorum.
        state.api_ranges.insert(ApiKey::DescribeQuorum as i16, None);
    }
    let client = Client::connect(fast(&cluster.bootstrap())).await.unwrap();
    let active = client.active_controller().await.expect("active controller");
    assert_eq!(active.id, Some(2));
    assert_eq!(active.source, "metadata");
    assert!(active.quorum.is_none());
    let software = client.broker_software().await.expect("software");
    assert_eq!(
        software.metadata_mode,
        ballast_kafka::MetadataMode::Zookeeper
    );
    let err = client.describe_quorum().await.unwrap_err();
    assert!(
        matches!(
            err,
            Error::UnsupportedVersion {
                broker_versions: None,
                ..
            }
        ),
        "{err:?}"
    );
}
