//! `ballast.snapshot/v1` and `ballast.plan/v1`: the JSON contracts of
//! `shared/contracts/snapshot-v1.md`. Add fields, never rename or remove them.

use serde::{Deserialize, Serialize};

use crate::{BrokerId, BrokerState};

pub const SNAPSHOT_FORMAT: &str = "ballast.snapshot/v1";
pub const PLAN_FORMAT: &str = "ballast.plan/v1";

/// A cluster at one moment: brokers, and every partition with its placement, size and rates.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Snapshot {
    pub format: String,
    /// ISO 8601 UTC.
    pub taken_at: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cluster_id: Option<String>,
    pub brokers: Vec<SnapshotBroker>,
    pub partitions: Vec<SnapshotPartition>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SnapshotBroker {
    pub id: BrokerId,
    /// None when the cluster has no rack layout.
    #[serde(default)]
    pub rack: Option<String>,
    pub state: BrokerState,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SnapshotPartition {
    pub topic: String,
    pub partition: i32,
    /// `replicas[0]` is the preferred leader.
    pub replicas: Vec<BrokerId>,
    /// None for an offline partition.
    #[serde(default)]
    pub leader: Option<BrokerId>,
    /// Omitted means every replica is in sync.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub isr: Option<Vec<BrokerId>>,
    /// Size of one replica in bytes (a compacted topic: its steady size).
    #[serde(default)]
    pub size_bytes: u64,
    #[serde(default)]
    pub compacted: bool,
    #[serde(default = "default_min_isr")]
    pub min_insync_replicas: i32,
    #[serde(default)]
    pub producer_msg_rate: f64,
    #[serde(default)]
    pub producer_byte_rate: f64,
    #[serde(default)]
    pub consumer_msg_rate: f64,
    #[serde(default)]
    pub consumer_byte_rate: f64,
    /// ISO 8601 UTC of the last move by ballast; feeds the move cooldown.
    #[serde(default)]
    pub last_moved_at: Option<String>,
}

fn default_min_isr() -> i32 {
    1
}

impl SnapshotPartition {
    /// The in-sync replicas, defaulting to every replica when omitted.
    pub fn isr_or_replicas(&self) -> &[BrokerId] {
        self.isr.as_deref().unwrap_or(&self.replicas)
    }
}

/// Why a snapshot cannot be used.
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum SnapshotError {
    #[error("format is {found:?}, expected {SNAPSHOT_FORMAT:?}")]
    Format { found: String },
    #[error("broker {0} is listed twice")]
    DuplicateBroker(BrokerId),
    #[error("partition {topic}-{partition} is listed twice")]
    DuplicatePartition { topic: String, partition: i32 },
    #[error("partition {topic}-{partition}: {problem}")]
    Partition {
        topic: String,
        partition: i32,
        problem: String,
    },
}

impl Snapshot {
    /// Checks what serde cannot: the format tag, unique ids, replicas on known brokers, rates, and
    /// that every `lastMovedAt` is a timestamp.
    pub fn validate(&self) -> Result<(), SnapshotError> {
        if self.format != SNAPSHOT_FORMAT {
            return Err(SnapshotError::Format {
                found: self.format.clone(),
            });
        }
        let mut ids = std::collections::BTreeSet::new();
        for b in &self.brokers {
            if !ids.insert(b.id) {
                return Err(SnapshotError::DuplicateBroker(b.id));
            }
        }
        let mut seen = std::collections::BTreeSet::new();
        for p in &self.partitions {
            let fail = |problem: String| SnapshotError::Partition {
                topic: p.topic.clone(),
                partition: p.partition,
                problem,
            };
            if !seen.insert((p.topic.as_str(), p.partition)) {
                return Err(SnapshotError::DuplicatePartition {
                    topic: p.topic.clone(),
                    partition: p.partition,
                });
            }
            if p.topic.is_empty() || p.partition < 0 {
                return Err(fail(
                    "needs a topic name and a partition number of 0 or more".into(),
                ));
            }
            if p.replicas.is_empty() {
                return Err(fail("has no replicas".into()));
            }
            let mut rs = std::collections::BTreeSet::new();
            for r in &p.replicas {
                if !ids.contains(r) {
                    return Err(fail(format!("replica on unknown broker {r}")));
                }
                if !rs.insert(*r) {
                    return Err(fail(format!("broker {r} holds two replicas")));
                }
            }
            if let Some(l) = p.leader {
                if !rs.contains(&l) {
                    return Err(fail(format!("leader {l} is not a replica")));
                }
            }
            if let Some(isr) = &p.isr {
                if let Some(r) = isr.iter().find(|r| !rs.contains(r)) {
                    return Err(fail(format!("in-sync replica {r} is not a replica")));
                }
            }
            let rates = [
                p.producer_msg_rate,
                p.producer_byte_rate,
                p.consumer_msg_rate,
                p.consumer_byte_rate,
            ];
            if rates.iter().any(|r| !r.is_finite() || *r < 0.0) {
                return Err(fail("rates must be finite and not negative".into()));
            }
            // A `lastMovedAt` that cannot be read would silently lift the move cooldown.
            if let Some(at) = &p.last_moved_at {
                if crate::time::parse_rfc3339_ms(at).is_none() {
                    return Err(fail(format!(
                        "lastMovedAt {at:?} is not an ISO 8601 timestamp (e.g. 2026-11-21T09:45:00Z)"
                    )));
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const EXAMPLE: &str = r#"{
      "format": "ballast.snapshot/v1",
      "takenAt": "2026-11-21T10:00:00Z",
      "clusterId": "optional string",
      "brokers": [
        {"id": 1, "rack": "r1", "state": "alive"},
        {"id": 2, "rack": "r2", "state": "alive"},
        {"id": 3, "rack": "r3", "state": "maintenance"},
        {"id": 4, "rack": null, "state": "down"}
      ],
      "partitions": [
        {"topic": "orders", "partition": 0, "replicas": [1, 2, 3], "leader": 1, "isr": [1, 2, 3],
         "sizeBytes": 1073741824, "compacted": false, "minInsyncReplicas": 2,
         "producerMsgRate": 120.5, "producerByteRate": 61440.0,
         "consumerMsgRate": 241.0, "consumerByteRate": 122880.0,
         "lastMovedAt": null},
        {"topic": "orders", "partition": 1, "replicas": [2, 1]}
      ]
    }"#;

    #[test]
    fn the_contract_example_parses_with_defaults_for_missing_fields() {
        let snapshot: Snapshot = serde_json::from_str(EXAMPLE).expect("parse");
        snapshot.validate().expect("valid");
        assert_eq!(snapshot.brokers[2].state, BrokerState::Maintenance);
        assert_eq!(snapshot.brokers[3].rack, None);
        let p = &snapshot.partitions[1];
        assert_eq!(p.leader, None);
        assert_eq!(p.isr_or_replicas(), [2, 1]);
        assert_eq!(p.min_insync_replicas, 1);
        assert!(!p.compacted);
        assert_eq!(p.producer_msg_rate, 0.0);
        assert_eq!(p.last_moved_at, None);
    }

    #[test]
    fn a_snapshot_round_trips_through_json() {
        let snapshot: Snapshot = serde_json::from_str(EXAMPLE).expect("parse");
        let text = serde_json::to_string(&snapshot).expect("write");
        let again: Snapshot = serde_json::from_str(&text).expect("reparse");
        assert_eq!(snapshot, again);
        assert!(text.contains("\"sizeBytes\":1073741824"));
        assert!(text.contains("\"minInsyncReplicas\":2"));
    }

    #[test]
    fn invalid_snapshots_say_why() {
        let mut s: Snapshot = serde_json::from_str(EXAMPLE).expect("parse");
        s.partitions[1].replicas = vec![2, 9];
        assert_eq!(
            s.validate(),
            Err(SnapshotError::Partition {
                topic: "orders".into(),
                partition: 1,
                problem: "replica on unknown broker 9".into()
            })
        );
        s.partitions[1].replicas = vec![2, 2];
        assert!(s.validate().is_err());
        s.format = "other".into();
        assert!(matches!(s.validate(), Err(SnapshotError::Format { .. })));
    }

    #[test]
    fn a_malformed_last_moved_at_is_refused_because_it_would_lift_the_cooldown() {
        let mut s: Snapshot = serde_json::from_str(EXAMPLE).expect("parse");
        s.partitions[0].last_moved_at = Some("2026-11-21T09:45:00Z".into());
        assert_eq!(s.validate(), Ok(()));
        s.partitions[0].last_moved_at = Some("21/11/2026 09:45".into());
        let err = s.validate().expect_err("malformed lastMovedAt");
        assert!(
            matches!(&err, SnapshotError::Partition { problem, .. } if problem.contains("lastMovedAt")),
            "{err}"
        );
        assert!(err.to_string().contains("\"21/11/2026 09:45\""), "{err}");
    }
}
