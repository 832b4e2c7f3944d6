//! DescribeTopicPartitions (Kafka 3.8+, KIP-966): each partition's eligible leader replicas
//! (ELR) and last known ELR, which Metadata does not carry.

use kafka_protocol::messages::describe_topic_partitions_request::{Cursor, TopicRequest};
use kafka_protocol::messages::describe_topic_partitions_response::DescribeTopicPartitionsResponsePartition;
use kafka_protocol::messages::DescribeTopicPartitionsRequest;

use crate::client::{topic_name, Client};
use crate::error::{Error, Result};
use crate::types::PartitionElr;

/// Partitions one answer carries at most (Kafka's default limit is 2,000).
const PAGE: i32 = 2_000;

impl Client {
    /// DescribeTopicPartitions of `topics` (every topic when empty), page after page: each
    /// partition's ISR, eligible leader replicas and last known ELR. A broker that does not offer
    /// it (before 3.8, or ZooKeeper) answers [`Error::UnsupportedVersion`]. Topics that answer an
    /// error are left out.
    pub async fn describe_topic_partitions(&self, topics: &[String]) -> Result<Vec<PartitionElr>> {
        let mut out = Vec::new();
        let mut cursor: Option<Cursor> = None;
        loop {
            let page_cursor = cursor.clone();
            let response = self
                .retrying("DescribeTopicPartitions", || {
                    let page_cursor = page_cursor.clone();
                    async move {
                        let conn = self.any_connection().await?;
                        let version = conn.version::<DescribeTopicPartitionsRequest>()?;
                        let mut request = DescribeTopicPartitionsRequest::default();
                        request.topics = topics
                            .iter()
                            .map(|t| {
                                let mut r = TopicRequest::default();
                                r.name = topic_name(t);
                                r
                            })
                            .collect();
                        request.response_partition_limit = PAGE;
                        request.cursor = page_cursor;
                        conn.send(&request, version).await
                    }
                })
                .await?;
            for t in response.topics {
                let Some(name) = t.name.as_ref().map(|n| n.0.to_string()) else {
                    continue;
                };
                if t.error_code != 0 {
                    continue;
                }
                out.extend(
                    t.partitions
                        .iter()
                        .filter(|p| described(p.error_code))
                        .map(|p| elr_of(&name, p)),
                );
            }
            match response.next_cursor {
                Some(next) => {
                    let mut c = Cursor::default();
                    c.topic_name = next.topic_name;
                    c.partition_index = next.partition_index;
                    if cursor.as_ref().is_some_and(|old| {
                        old.topic_name == c.topic_name && old.partition_index == c.partition_index
                    }) {
                        return Err(Error::Protocol {
                            broker: "DescribeTopicPartitions".into(),
                            detail: "the answer's cursor did not move".into(),
                        });
                    }
                    cursor = Some(c);
                }
                None => break,
            }
        }
        out.sort_by(|a, b| (&a.topic, a.partition).cmp(&(&b.topic, b.partition)));
        Ok(out)
    }
}

/// Whether a partition's answer describes it: no error, or LEADER_NOT_AVAILABLE (an offline
/// partition, still with its ISR and ELR: the partitions ELR matters most for).
fn described(error_code: i16) -> bool {
    error_code == 0 || error_code == LEADER_NOT_AVAILABLE
}

const LEADER_NOT_AVAILABLE: i16 = 5;

fn ids(list: &Option<Vec<kafka_protocol::messages::BrokerId>>) -> Option<Vec<i32>> {
    list.as_ref().map(|l| {
        let mut v: Vec<i32> = l.iter().map(|b| b.0).collect();
        v.sort_unstable();
        v
    })
}

fn elr_of(topic: &str, p: &DescribeTopicPartitionsResponsePartition) -> PartitionElr {
    PartitionElr {
        topic: topic.to_string(),
        partition: p.partition_index,
        leader: (p.leader_id.0 >= 0).then_some(p.leader_id.0),
        isr: p.isr_nodes.iter().map(|b| b.0).collect(),
        eligible_leader_replicas: ids(&p.eligible_leader_replicas),
        last_known_elr: ids(&p.last_known_elr),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use kafka_protocol::messages::BrokerId;

    #[test]
    fn a_partition_names_its_eligible_leader_replicas_and_last_known_elr() {
        let mut p = DescribeTopicPartitionsResponsePartition::default();
        p.partition_index = 2;
        p.leader_id = BrokerId(1);
        p.isr_nodes = vec![BrokerId(1)];
        p.eligible_leader_replicas = Some(vec![BrokerId(3), BrokerId(2)]);
        p.last_known_elr = None;
        let e = elr_of("t", &p);
        assert_eq!(e.partition, 2);
        assert_eq!(e.leader, Some(1));
        assert_eq!(e.eligible_leader_replicas, Some(vec![2, 3]));
        assert_eq!(e.last_known_elr, None);
    }

    #[test]
    fn an_offline_partition_is_described_with_its_elr_and_other_errors_are_not() {
        assert!(described(0));
        assert!(described(LEADER_NOT_AVAILABLE));
        assert!(!described(3));
    }
}
