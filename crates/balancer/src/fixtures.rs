//! What the unit tests build clusters from.

use ballast_model::snapshot::{Snapshot, SnapshotBroker, SnapshotPartition, SNAPSHOT_FORMAT};
use ballast_model::BrokerState;

/// Partition `i` of `topic` on `replicas` (the first leads), every replica in sync, `size` bytes,
/// no traffic.
pub fn partition(topic: &str, i: i32, replicas: &[i32], size: u64) -> SnapshotPartition {
    SnapshotPartition {
        topic: topic.to_string(),
        partition: i,
        replicas: replicas.to_vec(),
        leader: replicas.first().copied(),
        isr: None,
        size_bytes: size,
        compacted: false,
        min_insync_replicas: 1,
        producer_msg_rate: 0.0,
        producer_byte_rate: 0.0,
        consumer_msg_rate: 0.0,
        consumer_byte_rate: 0.0,
        last_moved_at: None,
    }
}

/// A snapshot of brokers 1 to `brokers`, alive, without racks, holding `partitions`.
pub fn cluster(brokers: i32, partitions: Vec<SnapshotPartition>) -> Snapshot {
    Snapshot {
        format: SNAPSHOT_FORMAT.to_string(),
        taken_at: "2026-11-21T10:00:00Z".into(),
        cluster_id: None,
        brokers: (1..=brokers)
            .map(|id| SnapshotBroker {
                id,
                rack: None,
                state: BrokerState::Alive,
            })
            .collect(),
        partitions,
    }
}
