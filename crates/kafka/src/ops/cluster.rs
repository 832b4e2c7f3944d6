//! DescribeCluster, DescribeLogDirs, ListOffsets.

use std::collections::{BTreeMap, HashMap, HashSet};

use ballast_model::{BrokerId, TopicPartition};
use kafka_protocol::messages::describe_log_dirs_request::DescribableLogDirTopic;
use kafka_protocol::messages::list_offsets_request::{ListOffsetsPartition, ListOffsetsTopic};
use kafka_protocol::messages::{
    BrokerId as WireBrokerId, DescribeClusterRequest, DescribeLogDirsRequest, ListOffsetsRequest,
};

use crate::client::{join_all, topic_name, Client};
use crate::codes;
use crate::error::{code_invalidates_metadata, Error, ItemError, Result};
use crate::types::{
    BrokerInfo, ClusterDescription, ListedOffset, LogDir, LogDirs, OffsetSpec, ReplicaLogInfo,
};

/// Code used for a partition whose leader could not be reached at all.
const NETWORK_EXCEPTION: i16 = 13;

impl Client {
    /// DescribeCluster (Kafka 2.8+): cluster id, controller, brokers with racks, and (v2+)
    /// fenced brokers.
    pub async fn describe_cluster(&self) -> Result<ClusterDescription> {
        self.retrying("DescribeCluster", || async {
            let conn = self.any_connection().await?;
            let version = conn.version::<DescribeClusterRequest>()?;
            let mut request = DescribeClusterRequest::default();
            if version >= 2 {
                request.include_fenced_brokers = true;
            }
            let response = conn.send(&request, version).await?;
            if response.error_code != 0 {
                return Err(Error::kafka(
                    "DescribeCluster",
                    response.error_code,
                    response.error_message.map(|m| m.to_string()),
                ));
            }
            let mut brokers = Vec::new();
            let mut fenced_brokers = Vec::new();
            for b in response.brokers {
                if b.is_fenced {
                    fenced_brokers.push(b.broker_id.0);
                }
                brokers.push(BrokerInfo {
                    id: b.broker_id.0,
                    host: b.host.to_string(),
                    port: b.port,
                    rack: b.rack.map(|r| r.to_string()),
                });
            }
            brokers.sort_by_key(|b| b.id);
            fenced_brokers.sort_unstable();
            Ok(ClusterDescription {
                cluster_id: response.cluster_id.to_string(),
                controller_id: (response.controller_id.0 >= 0).then_some(response.controller_id.0),
                brokers,
                fenced_brokers,
            })
        })
        .await
    }

    /// DescribeLogDirs on one broker: every log directory with its replicas (size, offset lag,
    /// future flag) and, on Kafka 3.3+, the volume's total and usable bytes. `topics` limits the
    /// replicas reported (None = all).
    pub async fn describe_log_dirs(
        &self,
        broker: BrokerId,
        topics: Option<&[String]>,
    ) -> Result<LogDirs> {
        let metadata = self.metadata_with_broker(broker).await?;
        let filter: Option<Vec<DescribableLogDirTopic>> = match topics {
            None => None,
            Some(names) => {
                let metadata = self.metadata_with_topics(names).await.unwrap_or(metadata);
                Some(
                    names
                        .iter()
                        .map(|name| {
                            let mut t = DescribableLogDirTopic::default();
                            t.topic = topic_name(name);
                            t.partitions = metadata
                                .topic(name)
                                .map(|t| t.partitions.iter().map(|p| p.partition).collect())
                                .unwrap_or_default();
                            t
                        })
                        .collect(),
                )
            }
        };
        let filter = &filter;
        self.retrying("DescribeLogDirs", move || async move {
            let conn = self.connection(broker).await?;
            let version = conn.version::<DescribeLogDirsRequest>()?;
            let mut request = DescribeLogDirsRequest::default();
            request.topics = filter.clone();
            let response = conn.send(&request, version).await?;
            if response.error_code != 0 {
                return Err(Error::kafka("DescribeLogDirs", response.error_code, None));
            }
            let mut dirs: Vec<LogDir> = response
                .results
                .into_iter()
                .map(|r| {
                    let mut replicas: Vec<ReplicaLogInfo> = r
                        .topics
                        .into_iter()
                        .flat_map(|t| {
                            let topic = t.name.0.to_string();
                            t.partitions.into_iter().map(move |p| ReplicaLogInfo {
                                topic: topic.clone(),
                                partition: p.partition_index,
                                size: p.partition_size,
                                offset_lag: p.offset_lag,
                                is_future: p.is_future_key,
                            })
                        })
                        .collect();
                    replicas.sort_by(|a, b| {
                        (&a.topic, a.partition, a.is_future).cmp(&(
                            &b.topic,
                            b.partition,
                            b.is_future,
                        ))
                    });
                    LogDir {
                        path: r.log_dir.to_string(),
                        error: ItemError::from_code(r.error_code, None),
                        total_bytes: (version >= 4 && r.total_bytes >= 0).then_some(r.total_bytes),
                        usable_bytes: (version >= 4 && r.usable_bytes >= 0)
                            .then_some(r.usable_bytes),
                        replicas,
                    }
                })
                .collect();
            dirs.sort_by(|a, b| a.path.cmp(&b.path));
            Ok(LogDirs { broker, dirs })
        })
        .await
    }

    /// DescribeLogDirs on every broker of the metadata, concurrently; one result per broker.
    pub async fn describe_all_log_dirs(&self) -> Result<Vec<(BrokerId, Result<LogDirs>)>> {
        let metadata = self.refresh_metadata().await?;
        let ids: Vec<BrokerId> = metadata.brokers.iter().map(|b| b.id).collect();
        Ok(self.describe_log_dirs_of(&ids).await)
    }

    /// DescribeLogDirs on each of `brokers` (from metadata the caller just read), all at once;
    /// one result per broker, in order.
    pub async fn describe_log_dirs_of(
        &self,
        brokers: &[BrokerId],
    ) -> Vec<(BrokerId, Result<LogDirs>)> {
        let results = join_all(
            brokers
                .iter()
                .map(|id| self.describe_log_dirs(*id, None))
                .collect(),
        )
        .await;
        brokers.iter().copied().zip(results).collect()
    }

    /// ListOffsets for each partition, sent to the partition leaders (grouped, concurrently).
    /// Partitions whose leader moved are retried after a metadata refresh; what still fails is
    /// reported in that partition's `error`. Results come in the order of `partitions`
    /// (duplicates removed).
    pub async fn list_offsets(
        &self,
        partitions: &[TopicPartition],
        spec: OffsetSpec,
    ) -> Result<Vec<ListedOffset>> {
        // Partitions by position in `order`, found through a hash index: hundreds of thousands
        // of partitions on a large cluster, where B-trees of partition keys compare topic
        // names at every level.
        let mut at: HashMap<(&str, i32), usize> = HashMap::with_capacity(partitions.len());
        let mut order: Vec<&TopicPartition> = Vec::with_capacity(partitions.len());
        for tp in partitions {
            at.entry((tp.topic.as_str(), tp.partition))
                .or_insert_with(|| {
                    order.push(tp);
                    order.len() - 1
                });
        }
        let mut done: Vec<Option<ListedOffset>> = vec![None; order.len()];
        let mut pending: Vec<usize> = (0..order.len()).collect();
        let mut tries = 0u32;
        loop {
            let mut named: HashSet<&str> = HashSet::new();
            let topics: Vec<String> = pending
                .iter()
                .map(|i| order[*i].topic.as_str())
                .filter(|t| named.insert(t))
                .map(str::to_string)
                .collect();
            let metadata = self.metadata_with_topics(&topics).await?;
            let mut by_leader: BTreeMap<BrokerId, Vec<usize>> = BTreeMap::new();
            let mut retry: Vec<usize> = Vec::new();
            for i in pending.drain(..) {
                let tp = order[i];
                match metadata.partition(tp) {
                    None => {
                        done[i] = Some(failed(tp, codes::UNKNOWN_TOPIC_OR_PARTITION, None));
                    }
                    Some(p) => match p.leader {
                        Some(leader) => by_leader.entry(leader).or_default().push(i),
                        None => {
                            done[i] = Some(failed(tp, codes::LEADER_NOT_AVAILABLE, None));
                            retry.push(i);
                        }
                    },
                }
            }
            let requests: Vec<_> = by_leader
                .into_iter()
                .map(|(leader, ids)| {
                    let tps: Vec<TopicPartition> = ids.iter().map(|i| order[*i].clone()).collect();
                    async move {
                        let result = self.list_offsets_on(leader, &tps, spec).await;
                        (ids, result)
                    }
                })
                .collect();
            for (ids, result) in join_all(requests).await {
                match result {
                    Ok(listed) => {
                        for offset in listed {
                            let Some(&i) = at.get(&(offset.topic.as_str(), offset.partition))
                            else {
                                continue;
                            };
                            let again = offset.error.as_ref().is_some_and(|e| {
                                e.is_retriable() || code_invalidates_metadata(e.code)
                            });
                            if again {
                                retry.push(i);
                            }
                            done[i] = Some(offset);
                        }
                        // Not answered (now or before): unknown to its leader.
                        for i in &ids {
                            if done[*i].is_none() {
                                done[*i] = Some(failed(
                                    order[*i],
                                    codes::UNKNOWN_TOPIC_OR_PARTITION,
                                    None,
                                ));
                            }
                        }
                    }
                    Err(e) => {
                        let again = e.is_retriable();
                        for i in ids {
                            let tp = order[i];
                            let offset = match &e {
                                Error::Kafka { code, message, .. } => {
                                    failed(tp, *code, message.clone())
                                }
                                other => failed(tp, NETWORK_EXCEPTION, Some(other.to_string())),
                            };
                            done[i] = Some(offset);
                            if again {
                                retry.push(i);
                            }
                        }
                        if !again {
                            return Err(e);
                        }
                    }
                }
            }
            if retry.is_empty() || tries >= self.inner.config.retries {
                break;
            }
            tries += 1;
            tracing::debug!(
                partitions = retry.len(),
                attempt = tries,
                "retrying listoffsets"
            );
            self.backoff_and_refresh(tries).await;
            pending = retry;
        }
        Ok(done.into_iter().flatten().collect())
    }

    /// One ListOffsets request to `leader`.
    async fn list_offsets_on(
        &self,
        leader: BrokerId,
        partitions: &[TopicPartition],
        spec: OffsetSpec,
    ) -> Result<Vec<ListedOffset>> {
        let conn = self.connection(leader).await?;
        let version = conn.version::<ListOffsetsRequest>()?;
        if version < spec.min_version() {
            // The broker cannot answer this lookup (EARLIEST_LOCAL needs ListOffsets v8,
            // Kafka 3.6+): each partition says so rather than receiving another offset.
            return Ok(partitions
                .iter()
                .map(|tp| {
                    failed(
                        tp,
                        codes::UNSUPPORTED_VERSION,
                        Some(format!(
                            "ListOffsets v{version}: this lookup needs v{} or newer",
                            spec.min_version()
                        )),
                    )
                })
                .collect());
        }
        let mut by_topic: BTreeMap<&str, Vec<i32>> = BTreeMap::new();
        for tp in partitions {
            by_topic.entry(&tp.topic).or_default().push(tp.partition);
        }
        let mut request = ListOffsetsRequest::default();
        request.replica_id = WireBrokerId(-1);
        request.topics = by_topic
            .into_iter()
            .map(|(topic, parts)| {
                let mut t = ListOffsetsTopic::default();
                t.name = topic_name(topic);
                t.partitions = parts
                    .into_iter()
                    .map(|p| {
                        let mut lp = ListOffsetsPartition::default();
                        lp.partition_index = p;
                        lp.timestamp = spec.wire();
                        lp
                    })
                    .collect();
                t
            })
            .collect();
        if version >= 10 {
            request.timeout_ms =
                i32::try_from(self.inner.config.request_timeout.as_millis()).unwrap_or(i32::MAX);
        }
        let response = conn.send(&request, version).await?;
        let mut out = Vec::new();
        for t in response.topics {
            let topic = t.name.0.to_string();
            for p in t.partitions {
                let error = ItemError::from_code(p.error_code, None);
                let ok = error.is_none() && p.offset >= 0;
                out.push(ListedOffset {
                    topic: topic.clone(),
                    partition: p.partition_index,
                    offset: ok.then_some(p.offset),
                    timestamp: (ok && matches!(spec, OffsetSpec::Timestamp(_)) && p.timestamp >= 0)
                        .then_some(p.timestamp),
                    leader_epoch: (ok && version >= 4 && p.leader_epoch >= 0)
                        .then_some(p.leader_epoch),
                    error,
                });
            }
        }
        Ok(out)
    }
}

fn failed(tp: &TopicPartition, code: i16, message: Option<String>) -> ListedOffset {
    ListedOffset {
        topic: tp.topic.clone(),
        partition: tp.partition,
        offset: None,
        timestamp: None,
        leader_epoch: None,
        error: ItemError::from_code(code, message),
    }
}
