//! Topic and partition administration, sent to the controller named by Metadata (ZooKeeper
//! clusters need it; KRaft brokers forward): CreateTopics, DeleteTopics, CreatePartitions,
//! AlterPartitionReassignments, ListPartitionReassignments, ElectLeaders. AlterReplicaLogDirs
//! goes to the broker that holds the replicas.

use std::collections::BTreeMap;

use ballast_model::{BrokerId, TopicPartition};
use kafka_protocol::messages::alter_partition_reassignments_request::{
    ReassignablePartition, ReassignableTopic,
};
use kafka_protocol::messages::alter_replica_log_dirs_request::{
    AlterReplicaLogDir, AlterReplicaLogDirTopic,
};
use kafka_protocol::messages::create_partitions_request::{
    CreatePartitionsAssignment, CreatePartitionsTopic,
};
use kafka_protocol::messages::create_topics_request::{
    CreatableReplicaAssignment, CreatableTopic, CreatableTopicConfig,
};
use kafka_protocol::messages::delete_topics_request::DeleteTopicState;
use kafka_protocol::messages::elect_leaders_request::TopicPartitions as ElectTopicPartitions;
use kafka_protocol::messages::list_partition_reassignments_request::ListPartitionReassignmentsTopics;
use kafka_protocol::messages::{
    AlterPartitionReassignmentsRequest, AlterReplicaLogDirsRequest, BrokerId as WireBrokerId,
    CreatePartitionsRequest, CreateTopicsRequest, DeleteTopicsRequest, ElectLeadersRequest,
    ListPartitionReassignmentsRequest,
};

use crate::client::{str_bytes, topic_name, Client};
use crate::codes;
use crate::error::{Error, ItemError, Result};
use crate::types::{
    ElectionType, NewPartitions, NewTopic, PartitionResult, Reassignment, ReplicaLogDirMove,
    TopicResult,
};

fn timeout_ms(client: &Client) -> i32 {
    i32::try_from(client.inner.config.request_timeout.as_millis()).unwrap_or(i32::MAX)
}

/// A NOT_CONTROLLER on any item means the request reached the wrong broker: retry it whole.
fn not_controller(api: &'static str, codes_seen: impl IntoIterator<Item = i16>) -> Result<()> {
    if codes_seen.into_iter().any(|c| c == codes::NOT_CONTROLLER) {
        return Err(Error::kafka(api, codes::NOT_CONTROLLER, None));
    }
    Ok(())
}

fn group_partitions(partitions: &[TopicPartition]) -> BTreeMap<&str, Vec<i32>> {
    let mut by_topic: BTreeMap<&str, Vec<i32>> = BTreeMap::new();
    for tp in partitions {
        let parts = by_topic.entry(tp.topic.as_str()).or_default();
        if !parts.contains(&tp.partition) {
            parts.push(tp.partition);
        }
    }
    by_topic
}

impl Client {
    /// CreateTopics. One result per topic, in order; a topic that exists comes back with
    /// TOPIC_ALREADY_EXISTS (also after a retry of a create that had succeeded).
    pub async fn create_topics(
        &self,
        topics: &[NewTopic],
        validate_only: bool,
    ) -> Result<Vec<TopicResult>> {
        self.retrying("CreateTopics", move || async move {
            let conn = self.controller_connection().await?;
            let version = conn.version::<CreateTopicsRequest>()?;
            let mut request = CreateTopicsRequest::default();
            request.timeout_ms = timeout_ms(self);
            request.validate_only = validate_only;
            for topic in topics {
                let mut t = CreatableTopic::default();
                t.name = topic_name(&topic.name);
                if topic.assignments.is_empty() {
                    match (topic.partitions, topic.replication_factor) {
                        (Some(p), Some(r)) => {
                            t.num_partitions = p;
                            t.replication_factor = r;
                        }
                        _ if version >= 4 => {
                            t.num_partitions = topic.partitions.unwrap_or(-1);
                            t.replication_factor = topic.replication_factor.unwrap_or(-1);
                        }
                        _ => {
                            return Err(Error::InvalidArgument(format!(
                                "topic {}: the broker needs partitions and replication factor",
                                topic.name
                            )))
                        }
                    }
                } else {
                    t.num_partitions = -1;
                    t.replication_factor = -1;
                    t.assignments = topic
                        .assignments
                        .iter()
                        .map(|(p, replicas)| {
                            let mut a = CreatableReplicaAssignment::default();
                            a.partition_index = *p;
                            a.broker_ids = replicas.iter().map(|b| WireBrokerId(*b)).collect();
                            a
                        })
                        .collect();
                }
                t.configs = topic
                    .configs
                    .iter()
                    .map(|(k, v)| {
                        let mut c = CreatableTopicConfig::default();
                        c.name = str_bytes(k);
                        c.value = Some(str_bytes(v));
                        c
                    })
                    .collect();
                request.topics.push(t);
            }
            let response = conn.send(&request, version).await?;
            not_controller("CreateTopics", response.topics.iter().map(|t| t.error_code))?;
            Ok(topic_results(
                topics.iter().map(|t| t.name.as_str()),
                &response.topics,
                |t| Some(t.name.0.as_str()),
                |t| {
                    (
                        t.error_code,
                        t.error_message.as_ref().map(|m| m.to_string()),
                    )
                },
            ))
        })
        .await
    }

    /// DeleteTopics by name. One result per topic, in order.
    pub async fn delete_topics(&self, names: &[String]) -> Result<Vec<TopicResult>> {
        self.retrying("DeleteTopics", move || async move {
            let conn = self.controller_connection().await?;
            let version = conn.version::<DeleteTopicsRequest>()?;
            let mut request = DeleteTopicsRequest::default();
            request.timeout_ms = timeout_ms(self);
            if version >= 6 {
                request.topics = names
                    .iter()
                    .map(|n| {
                        let mut t = DeleteTopicState::default();
                        t.name = Some(topic_name(n));
                        t
                    })
                    .collect();
            } else {
                request.topic_names = names.iter().map(|n| topic_name(n)).collect();
            }
            let response = conn.send(&request, version).await?;
            not_controller(
                "DeleteTopics",
                response.responses.iter().map(|t| t.error_code),
            )?;
            Ok(topic_results(
                names.iter().map(String::as_str),
                &response.responses,
                |t| t.name.as_ref().map(|n| n.0.as_str()),
                |t| {
                    (
                        t.error_code,
                        t.error_message.as_ref().map(|m| m.to_string()),
                    )
                },
            ))
        })
        .await
    }

    /// CreatePartitions: raise topics to a new total partition count. One result per topic.
    pub async fn create_partitions(
        &self,
        topics: &[NewPartitions],
        validate_only: bool,
    ) -> Result<Vec<TopicResult>> {
        self.retrying("CreatePartitions", move || async move {
            let conn = self.controller_connection().await?;
            let version = conn.version::<CreatePartitionsRequest>()?;
            let mut request = CreatePartitionsRequest::default();
            request.timeout_ms = timeout_ms(self);
            request.validate_only = validate_only;
            request.topics = topics
                .iter()
                .map(|np| {
                    let mut t = CreatePartitionsTopic::default();
                    t.name = topic_name(&np.topic);
                    t.count = np.total_count;
                    t.assignments = np.assignments.as_ref().map(|all| {
                        all.iter()
                            .map(|replicas| {
                                let mut a = CreatePartitionsAssignment::default();
                                a.broker_ids = replicas.iter().map(|b| WireBrokerId(*b)).collect();
                                a
                            })
                            .collect()
                    });
                    t
                })
                .collect();
            let response = conn.send(&request, version).await?;
            not_controller(
                "CreatePartitions",
                response.results.iter().map(|t| t.error_code),
            )?;
            Ok(topic_results(
                topics.iter().map(|np| np.topic.as_str()),
                &response.results,
                |t| Some(t.name.0.as_str()),
                |t| {
                    (
                        t.error_code,
                        t.error_message.as_ref().map(|m| m.to_string()),
                    )
                },
            ))
        })
        .await
    }

    /// AlterPartitionReassignments (Kafka 2.4+): `Some(replicas)` submits a reassignment,
    /// `None` cancels the ongoing one. One result per partition, in order; a request-level error
    /// (e.g. CLUSTER_AUTHORIZATION_FAILED) is returned as the error.
    pub async fn alter_partition_reassignments(
        &self,
        moves: &[(TopicPartition, Option<Vec<BrokerId>>)],
    ) -> Result<Vec<PartitionResult>> {
        self.retrying("AlterPartitionReassignments", move || async move {
            let conn = self.controller_connection().await?;
            let version = conn.version::<AlterPartitionReassignmentsRequest>()?;
            let mut request = AlterPartitionReassignmentsRequest::default();
            request.timeout_ms = timeout_ms(self);
            let mut by_topic: BTreeMap<&str, Vec<ReassignablePartition>> = BTreeMap::new();
            for (tp, replicas) in moves {
                let mut p = ReassignablePartition::default();
                p.partition_index = tp.partition;
                p.replicas = replicas
                    .as_ref()
                    .map(|r| r.iter().map(|b| WireBrokerId(*b)).collect());
                by_topic.entry(tp.topic.as_str()).or_default().push(p);
            }
            request.topics = by_topic
                .into_iter()
                .map(|(name, partitions)| {
                    let mut t = ReassignableTopic::default();
                    t.name = topic_name(name);
                    t.partitions = partitions;
                    t
                })
                .collect();
            let response = conn.send(&request, version).await?;
            if response.error_code != 0 {
                return Err(Error::kafka(
                    "AlterPartitionReassignments",
                    response.error_code,
                    response.error_message.map(|m| m.to_string()),
                ));
            }
            let results: Vec<PartitionResult> = moves
                .iter()
                .map(|(tp, _)| {
                    let found = response
                        .responses
                        .iter()
                        .filter(|t| t.name.0.as_str() == tp.topic)
                        .flat_map(|t| t.partitions.iter())
                        .find(|p| p.partition_index == tp.partition);
                    PartitionResult {
                        topic: tp.topic.clone(),
                        partition: tp.partition,
                        error: match found {
                            Some(p) => ItemError::from_code(
                                p.error_code,
                                p.error_message.as_ref().map(|m| m.to_string()),
                            ),
                            None => missing(),
                        },
                    }
                })
                .collect();
            not_controller(
                "AlterPartitionReassignments",
                results
                    .iter()
                    .filter_map(|r| r.error.as_ref().map(|e| e.code)),
            )?;
            Ok(results)
        })
        .await
    }

    /// ListPartitionReassignments (Kafka 2.4+): the ongoing reassignments, of the given
    /// partitions or (None) of the whole cluster, sorted by topic and partition.
    pub async fn list_partition_reassignments(
        &self,
        partitions: Option<&[TopicPartition]>,
    ) -> Result<Vec<Reassignment>> {
        self.retrying("ListPartitionReassignments", move || async move {
            let conn = self.controller_connection().await?;
            let version = conn.version::<ListPartitionReassignmentsRequest>()?;
            let mut request = ListPartitionReassignmentsRequest::default();
            request.timeout_ms = timeout_ms(self);
            request.topics = partitions.map(|tps| {
                group_partitions(tps)
                    .into_iter()
                    .map(|(name, parts)| {
                        let mut t = ListPartitionReassignmentsTopics::default();
                        t.name = topic_name(name);
                        t.partition_indexes = parts;
                        t
                    })
                    .collect()
            });
            let response = conn.send(&request, version).await?;
            if response.error_code != 0 {
                return Err(Error::kafka(
                    "ListPartitionReassignments",
                    response.error_code,
                    response.error_message.map(|m| m.to_string()),
                ));
            }
            let mut out: Vec<Reassignment> = response
                .topics
                .into_iter()
                .flat_map(|t| {
                    let topic = t.name.0.to_string();
                    t.partitions.into_iter().map(move |p| Reassignment {
                        topic: topic.clone(),
                        partition: p.partition_index,
                        replicas: p.replicas.into_iter().map(|b| b.0).collect(),
                        adding: p.adding_replicas.into_iter().map(|b| b.0).collect(),
                        removing: p.removing_replicas.into_iter().map(|b| b.0).collect(),
                    })
                })
                .collect();
            out.sort_by(|a, b| (&a.topic, a.partition).cmp(&(&b.topic, b.partition)));
            Ok(out)
        })
        .await
    }

    /// ElectLeaders: preferred (any version) or unclean (v1+, Kafka 2.4+) election for the given
    /// partitions, or (None) for every partition that needs one. One result per partition the
    /// controller reports; ELECTION_NOT_NEEDED means the preferred leader already leads.
    pub async fn elect_leaders(
        &self,
        election: ElectionType,
        partitions: Option<&[TopicPartition]>,
    ) -> Result<Vec<PartitionResult>> {
        self.retrying("ElectLeaders", move || async move {
            let conn = self.controller_connection().await?;
            let version = conn.version::<ElectLeadersRequest>()?;
            let mut request = ElectLeadersRequest::default();
            request.timeout_ms = timeout_ms(self);
            match (election, version) {
                (ElectionType::Preferred, _) => request.election_type = 0,
                (ElectionType::Unclean, v) if v >= 1 => request.election_type = 1,
                (ElectionType::Unclean, _) => {
                    return Err(Error::UnsupportedVersion {
                        api: "ElectLeaders",
                        broker: conn.label().to_string(),
                        broker_versions: Some((0, 0)),
                        client_versions: (1, 2),
                    })
                }
            }
            request.topic_partitions = partitions.map(|tps| {
                group_partitions(tps)
                    .into_iter()
                    .map(|(name, parts)| {
                        let mut t = ElectTopicPartitions::default();
                        t.topic = topic_name(name);
                        t.partitions = parts;
                        t
                    })
                    .collect()
            });
            let response = conn.send(&request, version).await?;
            if response.error_code != 0 {
                return Err(Error::kafka("ElectLeaders", response.error_code, None));
            }
            let mut out: Vec<PartitionResult> = response
                .replica_election_results
                .into_iter()
                .flat_map(|t| {
                    let topic = t.topic.0.to_string();
                    t.partition_result
                        .into_iter()
                        .map(move |p| PartitionResult {
                            topic: topic.clone(),
                            partition: p.partition_id,
                            error: ItemError::from_code(
                                p.error_code,
                                p.error_message.map(|m| m.to_string()),
                            ),
                        })
                })
                .collect();
            not_controller(
                "ElectLeaders",
                out.iter().filter_map(|r| r.error.as_ref().map(|e| e.code)),
            )?;
            out.sort_by(|a, b| (&a.topic, a.partition).cmp(&(&b.topic, b.partition)));
            Ok(out)
        })
        .await
    }

    /// AlterReplicaLogDirs on `broker`: move its replicas of these partitions to other log
    /// directories of the same broker. One result per move, in order.
    pub async fn alter_replica_log_dirs(
        &self,
        broker: BrokerId,
        moves: &[ReplicaLogDirMove],
    ) -> Result<Vec<PartitionResult>> {
        self.metadata_with_broker(broker).await?;
        self.retrying("AlterReplicaLogDirs", move || async move {
            let conn = self.connection(broker).await?;
            let version = conn.version::<AlterReplicaLogDirsRequest>()?;
            let mut by_dir: BTreeMap<&str, BTreeMap<&str, Vec<i32>>> = BTreeMap::new();
            for m in moves {
                by_dir
                    .entry(m.path.as_str())
                    .or_default()
                    .entry(m.topic.as_str())
                    .or_default()
                    .push(m.partition);
            }
            let mut request = AlterReplicaLogDirsRequest::default();
            request.dirs = by_dir
                .into_iter()
                .map(|(path, topics)| {
                    let mut d = AlterReplicaLogDir::default();
                    d.path = str_bytes(path);
                    d.topics = topics
                        .into_iter()
                        .map(|(name, partitions)| {
                            let mut t = AlterReplicaLogDirTopic::default();
                            t.name = topic_name(name);
                            t.partitions = partitions;
                            t
                        })
                        .collect();
                    d
                })
                .collect();
            let response = conn.send(&request, version).await?;
            Ok(moves
                .iter()
                .map(|m| {
                    let found = response
                        .results
                        .iter()
                        .filter(|t| t.topic_name.0.as_str() == m.topic)
                        .flat_map(|t| t.partitions.iter())
                        .find(|p| p.partition_index == m.partition);
                    PartitionResult {
                        topic: m.topic.clone(),
                        partition: m.partition,
                        error: match found {
                            Some(p) => ItemError::from_code(p.error_code, None),
                            None => missing(),
                        },
                    }
                })
                .collect())
        })
        .await
    }
}

/// The item was not in the broker's answer.
/// One result per requested topic, in request order: the answer's item for that name (its error
/// code and message), or an error when the broker's answer does not mention it.
fn topic_results<'a, T>(
    requested: impl Iterator<Item = &'a str>,
    answered: &[T],
    name_of: impl Fn(&T) -> Option<&str>,
    error_of: impl Fn(&T) -> (i16, Option<String>),
) -> Vec<TopicResult> {
    requested
        .map(|name| {
            let error = match answered.iter().find(|t| name_of(t) == Some(name)) {
                Some(t) => {
                    let (code, message) = error_of(t);
                    ItemError::from_code(code, message)
                }
                None => missing(),
            };
            TopicResult {
                name: name.to_string(),
                error,
            }
        })
        .collect()
}

fn missing() -> Option<ItemError> {
    Some(ItemError {
        code: -1,
        name: "UNKNOWN_SERVER_ERROR",
        message: Some("the broker's answer does not mention this item".to_string()),
    })
}
