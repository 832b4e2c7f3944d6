//! Every operation, at every version of its API that the client may negotiate, builds a request
//! that encodes and that a broker decodes (kafka-protocol refuses to encode a field the version
//! lacks). The in-test broker offers exactly one version at a time and answers defaults.

mod support;

use std::sync::Arc;
use std::time::Duration;

use ballast_kafka::{
    Acks, AclBinding, AclFilter, AclOperation, AclPatternType, AclPermissionType, AclResourceType,
    AlterConfigOp, Client, ClientConfig, Compression, ConfigResource, ElectionType, Error,
    NewPartitions, NewTopic, OffsetSpec, ProduceRecord, QuotaAlteration, QuotaEntity, QuotaFilter,
    QuotaName, ReplicaLogDirMove, TopicPartition,
};
use kafka_protocol::messages::find_coordinator_response::Coordinator;
use kafka_protocol::messages::*;
use kafka_protocol::protocol::{Decodable, StrBytes};
use support::{answer, topic, ClusterState, FakeCluster, Handler, Reply, Request};

macro_rules! defaults {
    ($r:expr, $notes:expr, $( $key:ident => $req:ty, $resp:ty );* $(;)?) => {
        match ApiKey::try_from($r.api_key).ok()? {
            $( ApiKey::$key => {
                if let Err(e) = <$req>::decode(&mut $r.body.clone(), $r.version) {
                    $notes.push(format!("{} v{} does not decode: {e}", stringify!($key), $r.version));
                }
                Some(answer($r, &<$resp>::default()))
            } )*
            _ => None,
        }
    };
}

fn handler() -> Handler {
    Arc::new(|r: &Request, s: &mut ClusterState| -> Option<Reply> {
        if r.api_key == ApiKey::FindCoordinator as i16 {
            let req = FindCoordinatorRequest::decode(&mut r.body.clone(), r.version);
            let Ok(req) = req else {
                s.notes
                    .push(format!("FindCoordinator v{} does not decode", r.version));
                return Some(Reply::Close);
            };
            let port = i32::from(s.brokers[0].1);
            let mut response = FindCoordinatorResponse::default();
            if r.version >= 4 {
                for key in req.coordinator_keys {
                    let mut c = Coordinator::default();
                    c.key = key;
                    c.node_id = BrokerId(1);
                    c.host = StrBytes::from_static_str("127.0.0.1");
                    c.port = port;
                    response.coordinators.push(c);
                }
            } else {
                response.node_id = BrokerId(1);
                response.host = StrBytes::from_static_str("127.0.0.1");
                response.port = port;
            }
            return Some(answer(r, &response));
        }
        // Every group unknown to classic DescribeGroups and to ConsumerGroupDescribe (as Kafka 4
        // answers a share group), so a describe goes on to the typed APIs.
        if r.api_key == ApiKey::DescribeGroups as i16 {
            let Ok(req) = DescribeGroupsRequest::decode(&mut r.body.clone(), r.version) else {
                s.notes
                    .push(format!("DescribeGroups v{} does not decode", r.version));
                return Some(Reply::Close);
            };
            let mut response = DescribeGroupsResponse::default();
            for g in req.groups {
                let mut d = describe_groups_response::DescribedGroup::default();
                d.group_id = g;
                d.group_state = StrBytes::from_static_str("Dead");
                d.error_code = 69;
                response.groups.push(d);
            }
            return Some(answer(r, &response));
        }
        if r.api_key == ApiKey::ConsumerGroupDescribe as i16 {
            let Ok(req) = ConsumerGroupDescribeRequest::decode(&mut r.body.clone(), r.version)
            else {
                s.notes.push(format!(
                    "ConsumerGroupDescribe v{} does not decode",
                    r.version
                ));
                return Some(Reply::Close);
            };
            let mut response = ConsumerGroupDescribeResponse::default();
            for g in req.group_ids {
                let mut d = consumer_group_describe_response::DescribedGroup::default();
                d.group_id = g;
                d.error_code = 69;
                response.groups.push(d);
            }
            return Some(answer(r, &response));
        }
        let notes = &mut s.notes;
        defaults!(r, notes,
            ShareGroupDescribe => ShareGroupDescribeRequest, ShareGroupDescribeResponse;
            DescribeShareGroupOffsets => DescribeShareGroupOffsetsRequest, DescribeShareGroupOffsetsResponse;
            DescribeCluster => DescribeClusterRequest, DescribeClusterResponse;
            DescribeQuorum => DescribeQuorumRequest, DescribeQuorumResponse;
            DescribeLogDirs => DescribeLogDirsRequest, DescribeLogDirsResponse;
            ListOffsets => ListOffsetsRequest, ListOffsetsResponse;
            DescribeConfigs => DescribeConfigsRequest, DescribeConfigsResponse;
            IncrementalAlterConfigs => IncrementalAlterConfigsRequest, IncrementalAlterConfigsResponse;
            CreateTopics => CreateTopicsRequest, CreateTopicsResponse;
            DeleteTopics => DeleteTopicsRequest, DeleteTopicsResponse;
            CreatePartitions => CreatePartitionsRequest, CreatePartitionsResponse;
            AlterPartitionReassignments => AlterPartitionReassignmentsRequest, AlterPartitionReassignmentsResponse;
            ListPartitionReassignments => ListPartitionReassignmentsRequest, ListPartitionReassignmentsResponse;
            ElectLeaders => ElectLeadersRequest, ElectLeadersResponse;
            AlterReplicaLogDirs => AlterReplicaLogDirsRequest, AlterReplicaLogDirsResponse;
            DescribeAcls => DescribeAclsRequest, DescribeAclsResponse;
            CreateAcls => CreateAclsRequest, CreateAclsResponse;
            DeleteAcls => DeleteAclsRequest, DeleteAclsResponse;
            DescribeClientQuotas => DescribeClientQuotasRequest, DescribeClientQuotasResponse;
            AlterClientQuotas => AlterClientQuotasRequest, AlterClientQuotasResponse;
            ListGroups => ListGroupsRequest, ListGroupsResponse;
            OffsetFetch => OffsetFetchRequest, OffsetFetchResponse;
            OffsetCommit => OffsetCommitRequest, OffsetCommitResponse;
            DeleteGroups => DeleteGroupsRequest, DeleteGroupsResponse;
            Fetch => FetchRequest, FetchResponse;
            Produce => ProduceRequest, ProduceResponse;
        )
    })
}

fn tp() -> TopicPartition {
    TopicPartition::new("t", 0)
}

fn binding() -> AclBinding {
    AclBinding {
        resource_type: AclResourceType::Topic,
        resource_name: "t".into(),
        pattern_type: AclPatternType::Literal,
        principal: "User:alice".into(),
        host: "*".into(),
        operation: AclOperation::Read,
        permission_type: AclPermissionType::Allow,
    }
}

/// Runs the operation that uses `api`; only the request matters here.
async fn run(client: &Client, api: ApiKey) -> Result<(), Error> {
    let tps = [tp()];
    match api {
        ApiKey::Metadata => client.metadata(Some(&["t".to_string()])).await.map(drop),
        ApiKey::DescribeCluster => client.describe_cluster().await.map(drop),
        ApiKey::DescribeQuorum => client.describe_quorum().await.map(drop),
        ApiKey::DescribeLogDirs => client
            .describe_log_dirs(1, Some(&["t".to_string()]))
            .await
            .map(drop),
        ApiKey::ListOffsets => client
            .list_offsets(&tps, OffsetSpec::Timestamp(5))
            .await
            .map(drop),
        ApiKey::DescribeConfigs => client
            .describe_configs(&[ConfigResource::Topic("t".into()), ConfigResource::Broker(1)])
            .await
            .map(drop),
        ApiKey::IncrementalAlterConfigs => client
            .incremental_alter_configs(
                &[(
                    ConfigResource::Topic("t".into()),
                    vec![
                        AlterConfigOp::Set {
                            name: "retention.ms".into(),
                            value: "1000".into(),
                        },
                        AlterConfigOp::Delete {
                            name: "cleanup.policy".into(),
                        },
                    ],
                )],
                true,
            )
            .await
            .map(drop),
        ApiKey::CreateTopics => client
            .create_topics(
                &[NewTopic::new("n", 3, 1).config("retention.ms", "1")],
                false,
            )
            .await
            .map(drop),
        ApiKey::DeleteTopics => client.delete_topics(&["t".to_string()]).await.map(drop),
        ApiKey::CreatePartitions => client
            .create_partitions(
                &[NewPartitions {
                    topic: "t".into(),
                    total_count: 2,
                    assignments: Some(vec![vec![1]]),
                }],
                false,
            )
            .await
            .map(drop),
        ApiKey::AlterPartitionReassignments => client
            .alter_partition_reassignments(&[
                (tp(), Some(vec![1])),
                (TopicPartition::new("t", 1), None),
            ])
            .await
            .map(drop),
        ApiKey::ListPartitionReassignments => {
            client.list_partition_reassignments(Some(&tps)).await?;
            client.list_partition_reassignments(None).await.map(drop)
        }
        ApiKey::ElectLeaders => {
            client
                .elect_leaders(ElectionType::Preferred, Some(&tps))
                .await?;
            client
                .elect_leaders(ElectionType::Preferred, None)
                .await
                .map(drop)
        }
        ApiKey::AlterReplicaLogDirs => client
            .alter_replica_log_dirs(
                1,
                &[ReplicaLogDirMove {
                    topic: "t".into(),
                    partition: 0,
                    path: "/data/b".into(),
                }],
            )
            .await
            .map(drop),
        ApiKey::DescribeAcls => client.describe_acls(&AclFilter::all()).await.map(drop),
        ApiKey::CreateAcls => client.create_acls(&[binding()]).await.map(drop),
        ApiKey::DeleteAcls => client
            .delete_acls(&[AclFilter::exact(&binding())])
            .await
            .map(drop),
        ApiKey::DescribeClientQuotas => client
            .describe_client_quotas(&QuotaFilter::all())
            .await
            .map(drop),
        ApiKey::AlterClientQuotas => client
            .alter_client_quotas(
                &[QuotaAlteration {
                    entity: QuotaEntity {
                        user: Some(QuotaName::Default),
                        client_id: Some(QuotaName::name("app")),
                        ip: None,
                    },
                    ops: vec![
                        ("producer_byte_rate".into(), Some(1024.0)),
                        ("consumer_byte_rate".into(), None),
                    ],
                }],
                true,
            )
            .await
            .map(drop),
        ApiKey::ListGroups => client.list_groups().await.map(drop),
        ApiKey::DescribeShareGroupOffsets => client
            .share_group_offsets(&["g".to_string()])
            .await
            .map(drop),
        ApiKey::DescribeGroups
        | ApiKey::FindCoordinator
        | ApiKey::ConsumerGroupDescribe
        | ApiKey::ShareGroupDescribe => client
            .describe_groups(&["g".to_string(), "h".to_string()])
            .await
            .map(drop),
        ApiKey::OffsetFetch => {
            client.committed_offsets("g", Some(&tps)).await?;
            match client.committed_offsets("g", None).await {
                // v1 cannot ask for all partitions (v2+, Kafka 0.10.2+, can)
                Err(Error::UnsupportedVersion { .. }) => Ok(()),
                other => other.map(drop),
            }
        }
        ApiKey::OffsetCommit => client.commit_offsets("g", &[(tp(), 5)]).await.map(drop),
        ApiKey::DeleteGroups => client.delete_groups(&["g".to_string()]).await.map(drop),
        ApiKey::Fetch => client.fetch(&tp(), 0, 1024).await.map(drop),
        ApiKey::Produce => {
            let records = [ProduceRecord::new(Some(b"k"), Some(b"v")).with_header("h", None)];
            client
                .produce(&tp(), &records, Acks::Leader, Compression::Lz4)
                .await?;
            client
                .produce(&tp(), &records, Acks::None, Compression::None)
                .await
                .map(drop)
        }
        other => panic!("no operation for {other:?}"),
    }
}

/// The versions the client may use for `api` (kafka-protocol's request range, capped like the
/// client). `ApiKey::valid_versions` may be wider (it includes response-only versions).
fn client_range(api: ApiKey) -> (i16, i16) {
    use kafka_protocol::protocol::Message;
    let v = api.valid_versions();
    let max = match api {
        ApiKey::Fetch | ApiKey::Produce => 12,
        ApiKey::OffsetFetch => OffsetFetchRequest::VERSIONS.max,
        ApiKey::OffsetCommit => OffsetCommitRequest::VERSIONS.max,
        _ => v.max,
    };
    let min = match api {
        ApiKey::ShareGroupDescribe => ShareGroupDescribeRequest::VERSIONS.min,
        _ => v.min,
    };
    (min, max)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_operation_encodes_every_version_it_may_negotiate() {
    let apis = [
        ApiKey::Metadata,
        ApiKey::DescribeCluster,
        ApiKey::DescribeQuorum,
        ApiKey::DescribeLogDirs,
        ApiKey::ListOffsets,
        ApiKey::DescribeConfigs,
        ApiKey::IncrementalAlterConfigs,
        ApiKey::CreateTopics,
        ApiKey::DeleteTopics,
        ApiKey::CreatePartitions,
        ApiKey::AlterPartitionReassignments,
        ApiKey::ListPartitionReassignments,
        ApiKey::ElectLeaders,
        ApiKey::AlterReplicaLogDirs,
        ApiKey::DescribeAcls,
        ApiKey::CreateAcls,
        ApiKey::DeleteAcls,
        ApiKey::DescribeClientQuotas,
        ApiKey::AlterClientQuotas,
        ApiKey::ListGroups,
        ApiKey::DescribeGroups,
        ApiKey::ConsumerGroupDescribe,
        ApiKey::ShareGroupDescribe,
        ApiKey::DescribeShareGroupOffsets,
        ApiKey::FindCoordinator,
        ApiKey::OffsetFetch,
        ApiKey::OffsetCommit,
        ApiKey::DeleteGroups,
        ApiKey::Fetch,
        ApiKey::Produce,
    ];
    let cluster = FakeCluster::start(1, vec![topic("t", &[1, 1])], handler()).await;
    let mut failures = Vec::new();
    for api in apis {
        let (min, max) = client_range(api);
        for version in min..=max {
            {
                let mut state = cluster.state();
                state.api_ranges.clear();
                state
                    .api_ranges
                    .insert(api as i16, Some((version, version)));
                state.log.clear();
            }
            let config = ClientConfig::plaintext(&cluster.bootstrap())
                .with_retries(0, Duration::from_millis(1))
                .with_request_timeout(Duration::from_secs(5));
            let client = Client::connect(config).await.unwrap();
            let result = run(&client, api).await;
            if let Err(e) = &result {
                let text = format!("{e:?}");
                if text.contains("cannot encode") || matches!(e, Error::UnsupportedVersion { .. }) {
                    failures.push(format!("{api:?} v{version}: {e}"));
                }
            }
            let state = cluster.state();
            if !state
                .log
                .iter()
                .any(|l| l.api_key == api as i16 && l.version == version)
            {
                failures.push(format!("{api:?} v{version}: not sent ({result:?})"));
            }
        }
    }
    failures.extend(cluster.state().notes.iter().cloned());
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
