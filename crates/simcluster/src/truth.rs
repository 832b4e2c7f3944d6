//! The simulator's own truth, for tests and the demo: what really happened, independent of what
//! the wire protocol reports.

use serde::Serialize;

use crate::state::{BrokerId, Cluster, MoveRecord, MoveState};

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Truth {
    pub sim_time_ms: i64,
    pub sim_time: String,
    pub speed: f64,
    pub cluster_id: String,
    /// The active controller, the KRaft quorum's leader (DescribeQuorum); -1 when every
    /// broker is down. Metadata and DescribeCluster report a live broker picked per answer.
    pub controller: BrokerId,
    /// The quorum's leader epoch.
    pub controller_epoch: i32,
    pub brokers: Vec<BrokerTruth>,
    pub topics: usize,
    pub partitions: usize,
    pub offline_partitions: usize,
    pub under_replicated_partitions: usize,
    pub throttles: ThrottleTruth,
    pub reassignments: ReassignmentTruth,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct BrokerTruth {
    pub id: BrokerId,
    pub rack: Option<String>,
    pub port: u16,
    pub up: bool,
    pub leaders: usize,
    pub replicas: usize,
    /// Most concurrent in-flight reassignments it was a destination of.
    pub max_concurrent_moves_as_destination: usize,
    /// Most concurrent in-flight reassignments it took part in (adding, removing, or leading).
    pub max_concurrent_moves_as_participant: usize,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct BrokerThrottle {
    /// None: the cluster-wide default (resource name "").
    pub broker: Option<BrokerId>,
    pub leader_rate: Option<f64>,
    pub follower_rate: Option<f64>,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TopicThrottle {
    pub topic: String,
    pub leader_replicas: Option<String>,
    pub follower_replicas: Option<String>,
}

/// Every replication throttle config currently set.
#[derive(Debug, Clone, Serialize, Default)]
#[serde(rename_all = "camelCase")]
pub struct ThrottleTruth {
    pub brokers: Vec<BrokerThrottle>,
    pub topics: Vec<TopicThrottle>,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct MoveTruthEntry {
    #[serde(flatten)]
    pub record: MoveRecord,
    pub duration_ms: Option<i64>,
    /// Average copy rate over the move so far, bytes per second.
    pub average_rate: f64,
}

#[derive(Debug, Clone, Serialize, Default)]
#[serde(rename_all = "camelCase")]
pub struct ReassignmentTruth {
    pub in_flight: Vec<MoveTruthEntry>,
    pub finished: Vec<MoveTruthEntry>,
}

fn rate_of(value: Option<&String>) -> Option<f64> {
    value.and_then(|v| v.trim().parse::<f64>().ok())
}

pub fn build(c: &Cluster, speed: f64) -> Truth {
    let mut leaders = std::collections::BTreeMap::new();
    let mut replicas = std::collections::BTreeMap::new();
    let mut offline = 0;
    let mut under = 0;
    for t in c.topics.values() {
        for p in &t.partitions {
            if p.leader < 0 {
                offline += 1;
            } else {
                *leaders.entry(p.leader).or_insert(0usize) += 1;
            }
            if p.isr.len() < p.replicas.len() {
                under += 1;
            }
            for r in &p.replicas {
                *replicas.entry(*r).or_insert(0usize) += 1;
            }
        }
    }
    let brokers = c
        .brokers
        .values()
        .map(|b| BrokerTruth {
            id: b.id,
            rack: b.rack.clone(),
            port: b.port,
            up: b.up,
            leaders: leaders.get(&b.id).copied().unwrap_or(0),
            replicas: replicas.get(&b.id).copied().unwrap_or(0),
            max_concurrent_moves_as_destination: c
                .moves
                .max_as_destination
                .get(&b.id)
                .copied()
                .unwrap_or(0),
            max_concurrent_moves_as_participant: c
                .moves
                .max_as_participant
                .get(&b.id)
                .copied()
                .unwrap_or(0),
        })
        .collect();
    let mut throttles = ThrottleTruth::default();
    let lr = "leader.replication.throttled.rate";
    let fr = "follower.replication.throttled.rate";
    if c.broker_defaults.contains_key(lr) || c.broker_defaults.contains_key(fr) {
        throttles.brokers.push(BrokerThrottle {
            broker: None,
            leader_rate: rate_of(c.broker_defaults.get(lr)),
            follower_rate: rate_of(c.broker_defaults.get(fr)),
        });
    }
    for b in c.brokers.values() {
        if b.configs.contains_key(lr) || b.configs.contains_key(fr) {
            throttles.brokers.push(BrokerThrottle {
                broker: Some(b.id),
                leader_rate: rate_of(b.configs.get(lr)),
                follower_rate: rate_of(b.configs.get(fr)),
            });
        }
    }
    for t in c.topics.values() {
        let l = t.configs.get("leader.replication.throttled.replicas");
        let f = t.configs.get("follower.replication.throttled.replicas");
        if l.is_some() || f.is_some() {
            throttles.topics.push(TopicThrottle {
                topic: t.name.clone(),
                leader_replicas: l.cloned(),
                follower_replicas: f.cloned(),
            });
        }
    }
    let mut reassignments = ReassignmentTruth::default();
    for r in &c.moves.history {
        let end = r.ended_ms.unwrap_or(c.now_ms);
        let secs = ((end - r.started_ms) as f64 / 1000.0).max(1e-9);
        let entry = MoveTruthEntry {
            record: r.clone(),
            duration_ms: r.ended_ms.map(|e| e - r.started_ms),
            average_rate: r.bytes_copied / secs,
        };
        if r.state == MoveState::Running {
            reassignments.in_flight.push(entry);
        } else {
            reassignments.finished.push(entry);
        }
    }
    Truth {
        sim_time_ms: c.now_ms,
        sim_time: crate::util::iso8601(c.now_ms),
        speed,
        cluster_id: c.cluster_id.clone(),
        controller: c.controller,
        controller_epoch: c.controller_epoch,
        brokers,
        topics: c.topics.len(),
        partitions: c.partition_count(),
        offline_partitions: offline,
        under_replicated_partitions: under,
        throttles,
        reassignments,
    }
}
