//! DescribeQuorum (the KRaft metadata quorum and its leader, the active controller) and what the
//! brokers' ApiVersions answers say about the Kafka they run.

use kafka_protocol::messages::describe_quorum_request::{PartitionData, TopicData};
use kafka_protocol::messages::describe_quorum_response::{Node, ReplicaState};
use kafka_protocol::messages::DescribeQuorumRequest;

use crate::client::{topic_name, Client};
use crate::error::{Error, Result};
use crate::types::{
    ActiveController, BrokerSoftware, MetadataMode, QuorumDescription, QuorumListener, QuorumNode,
    QuorumReplica,
};
use crate::versions::{infer_kafka_version, metadata_mode, DESCRIBE_QUORUM};

/// The metadata log's topic; its partition 0 is the quorum.
const METADATA_TOPIC: &str = "__cluster_metadata";

impl Client {
    /// DescribeQuorum (KRaft; v1+ from Kafka 3.3 adds fetch times, v2 from 3.9 node endpoints):
    /// the metadata quorum's leader (the active controller), epoch, high watermark, voters and
    /// observers with their log end offsets and lag. Sent to any broker, which forwards it to
    /// the controller quorum. A ZooKeeper-based cluster answers
    /// [`Error::UnsupportedVersion`] with `broker_versions: None`.
    pub async fn describe_quorum(&self) -> Result<QuorumDescription> {
        self.retrying("DescribeQuorum", || async {
            let conn = self.any_connection().await?;
            let version = conn.version::<DescribeQuorumRequest>()?;
            let mut partition = PartitionData::default();
            partition.partition_index = 0;
            let mut topic = TopicData::default();
            topic.topic_name = topic_name(METADATA_TOPIC);
            topic.partitions = vec![partition];
            let mut request = DescribeQuorumRequest::default();
            request.topics = vec![topic];
            let response = conn.send(&request, version).await?;
            if response.error_code != 0 {
                return Err(Error::kafka(
                    "DescribeQuorum",
                    response.error_code,
                    response.error_message.map(|m| m.to_string()),
                ));
            }
            let partition = response
                .topics
                .into_iter()
                .filter(|t| t.topic_name.0.as_str() == METADATA_TOPIC)
                .flat_map(|t| t.partitions)
                .find(|p| p.partition_index == 0)
                .ok_or_else(|| Error::Protocol {
                    broker: conn.label().to_string(),
                    detail: format!("describequorum answer lacks {METADATA_TOPIC}-0"),
                })?;
            if partition.error_code != 0 {
                return Err(Error::kafka(
                    "DescribeQuorum",
                    partition.error_code,
                    partition.error_message.map(|m| m.to_string()),
                ));
            }
            let mut quorum = quorum_from_wire(
                partition.leader_id.0,
                partition.leader_epoch,
                partition.high_watermark,
                &partition.current_voters,
                &partition.observers,
                version >= 1,
            );
            quorum.nodes = nodes_from_wire(&response.nodes);
            Ok(quorum)
        })
        .await
    }

    /// What one broker (any, round-robin) offered in ApiVersions, with the metadata mode and
    /// the Kafka releases inferred from it.
    pub async fn broker_software(&self) -> Result<BrokerSoftware> {
        let conn = self.any_connection().await?;
        let api_versions = conn.api_versions().triples();
        Ok(BrokerSoftware {
            broker: conn.broker(),
            metadata_mode: metadata_mode(&api_versions),
            kafka_version: infer_kafka_version(&api_versions),
            api_versions,
        })
    }

    /// The active controller: on KRaft (a broker offers DescribeQuorum) the leader of the
    /// metadata quorum, on ZooKeeper Metadata's controller id (fresh). Metadata's and
    /// DescribeCluster's controller id on KRaft is a broker the answering broker picks, not the
    /// active controller.
    pub async fn active_controller(&self) -> Result<ActiveController> {
        let conn = self.any_connection().await?;
        let kraft = conn.api_versions().range(DESCRIBE_QUORUM).is_some();
        drop(conn);
        if kraft {
            let quorum = self.describe_quorum().await?;
            return Ok(ActiveController {
                id: quorum.leader_id,
                source: "quorum",
                quorum: Some(quorum),
            });
        }
        let metadata = self.refresh_metadata().await?;
        Ok(ActiveController {
            id: metadata.controller_id,
            source: "metadata",
            quorum: None,
        })
    }

    /// The metadata mode of the broker [`Self::broker_software`] would ask, without a request
    /// beyond opening its connection.
    pub async fn metadata_mode(&self) -> Result<MetadataMode> {
        let conn = self.any_connection().await?;
        Ok(metadata_mode(&conn.api_versions().triples()))
    }
}

/// The voters' endpoints of a v2 answer, by id.
fn nodes_from_wire(nodes: &[Node]) -> Vec<QuorumNode> {
    let mut out: Vec<QuorumNode> = nodes
        .iter()
        .map(|n| QuorumNode {
            id: n.node_id.0,
            listeners: n
                .listeners
                .iter()
                .map(|l| QuorumListener {
                    name: l.name.to_string(),
                    host: l.host.to_string(),
                    port: l.port,
                })
                .collect(),
        })
        .collect();
    out.sort_by_key(|n| n.id);
    out
}

/// The typed quorum from DescribeQuorum's partition fields; lag is the leader's log end offset
/// minus the replica's (as `kafka-metadata-quorum.sh` computes it), never below 0. Fetch and
/// catch-up ages are measured against the leader's own timestamps in the same answer (Kafka
/// reports its current time as the leader's fetch time).
fn quorum_from_wire(
    leader_id: i32,
    leader_epoch: i32,
    high_watermark: i64,
    voters: &[ReplicaState],
    observers: &[ReplicaState],
    times: bool,
) -> QuorumDescription {
    let leader_end = voters
        .iter()
        .find(|r| r.replica_id.0 == leader_id)
        .map(|r| r.log_end_offset)
        .filter(|o| *o >= 0);
    let leader_now = voters
        .iter()
        .find(|r| r.replica_id.0 == leader_id)
        .map(|r| r.last_fetch_timestamp)
        .filter(|t| times && *t >= 0);
    let age = |t: i64| match leader_now {
        Some(now) if times && t >= 0 => Some((now - t).max(0)),
        _ => None,
    };
    let replica = |r: &ReplicaState| {
        let end = (r.log_end_offset >= 0).then_some(r.log_end_offset);
        QuorumReplica {
            fetch_age_ms: age(r.last_fetch_timestamp),
            caught_up_age_ms: age(r.last_caught_up_timestamp),
            id: r.replica_id.0,
            log_end_offset: end,
            lag: match (leader_end, end) {
                (Some(l), Some(e)) => Some((l - e).max(0)),
                _ => None,
            },
            last_fetch_ms: (times && r.last_fetch_timestamp >= 0).then_some(r.last_fetch_timestamp),
            last_caught_up_ms: (times && r.last_caught_up_timestamp >= 0)
                .then_some(r.last_caught_up_timestamp),
        }
    };
    let mut voters: Vec<QuorumReplica> = voters.iter().map(replica).collect();
    let mut observers: Vec<QuorumReplica> = observers.iter().map(replica).collect();
    voters.sort_by_key(|r| r.id);
    observers.sort_by_key(|r| r.id);
    QuorumDescription {
        leader_id: (leader_id >= 0).then_some(leader_id),
        leader_epoch,
        high_watermark,
        voters,
        observers,
        nodes: Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use kafka_protocol::messages::BrokerId;

    fn state(id: i32, end: i64, fetch: i64) -> ReplicaState {
        let mut r = ReplicaState::default();
        r.replica_id = BrokerId(id);
        r.log_end_offset = end;
        r.last_fetch_timestamp = fetch;
        r.last_caught_up_timestamp = fetch;
        r
    }

    #[test]
    fn the_quorum_leader_is_the_active_controller_and_lag_is_behind_the_leaders_log_end() {
        let voters = [state(3, 90, 1), state(1, 100, 2), state(2, 100, 3)];
        let observers = [state(4, 95, 4)];
        let q = quorum_from_wire(1, 7, 100, &voters, &observers, true);
        assert_eq!(q.leader_id, Some(1));
        assert_eq!(q.leader_epoch, 7);
        assert_eq!(q.high_watermark, 100);
        assert_eq!(
            q.voters.iter().map(|r| (r.id, r.lag)).collect::<Vec<_>>(),
            vec![(1, Some(0)), (2, Some(0)), (3, Some(10))]
        );
        assert_eq!(q.replica(4).and_then(|r| r.lag), Some(5));
        assert_eq!(q.max_follower_lag(), 10);
        assert_eq!(q.replica(2).and_then(|r| r.last_fetch_ms), Some(3));
    }

    #[test]
    fn fetch_and_catch_up_ages_are_measured_against_the_leaders_own_time_in_the_answer() {
        // The leader (1) reports its own current time (10_000) as its fetch time; voter 3
        // last fetched 7 s before it; voter 2 is unknown to a newly elected leader (-1).
        let voters = [state(1, 100, 10_000), state(2, -1, -1), state(3, 90, 3_000)];
        let q = quorum_from_wire(1, 7, 100, &voters, &[], true);
        assert_eq!(q.replica(1).and_then(|r| r.fetch_age_ms), Some(0));
        assert_eq!(q.replica(3).and_then(|r| r.fetch_age_ms), Some(7_000));
        assert_eq!(q.replica(3).and_then(|r| r.caught_up_age_ms), Some(7_000));
        assert_eq!(q.replica(2).and_then(|r| r.fetch_age_ms), None);
        // Without a leader there is no time to measure against.
        let q = quorum_from_wire(-1, 7, 100, &voters, &[], true);
        assert!(q.voters.iter().all(|r| r.fetch_age_ms.is_none()));
    }

    #[test]
    fn a_v2_answer_names_each_voters_endpoints() {
        use kafka_protocol::messages::describe_quorum_response::Listener;
        let mut l = Listener::default();
        l.name = "CONTROLLER".into();
        l.host = "10.0.0.1".into();
        l.port = 9093;
        let mut n = Node::default();
        n.node_id = BrokerId(101);
        n.listeners = vec![l];
        let nodes = nodes_from_wire(&[n]);
        assert_eq!(nodes.len(), 1);
        assert_eq!(nodes[0].id, 101);
        assert_eq!(
            nodes[0].listeners,
            vec![QuorumListener {
                name: "CONTROLLER".into(),
                host: "10.0.0.1".into(),
                port: 9093
            }]
        );
    }

    #[test]
    fn a_quorum_without_a_leader_names_none_and_no_lag() {
        let voters = [state(1, 100, -1), state(2, -1, -1)];
        let q = quorum_from_wire(-1, 3, 100, &voters, &[], false);
        assert_eq!(q.leader_id, None);
        assert!(q.voters.iter().all(|r| r.lag.is_none()));
        assert_eq!(q.replica(2).and_then(|r| r.log_end_offset), None);
        assert_eq!(
            q.replica(1).and_then(|r| r.last_fetch_ms),
            None,
            "v0 has no times"
        );
    }
}
