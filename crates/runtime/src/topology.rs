//! The topology as the planner sees it, built from the observed view: shared by the observer
//! (proposals), the web process (what-if, apply checks) and the executor (pre-flight), so the
//! three agree on one fingerprint.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use ballast_model::snapshot::{Snapshot, SnapshotBroker, SnapshotPartition, SNAPSHOT_FORMAT};
use ballast_model::{BrokerId, BrokerState};
use ballast_schema::{Cooldown, ObservedView};

use crate::format_rfc3339_ms;

/// The replicas (and in-sync replicas) a plan starts from: without the ones a reassignment in
/// progress is only adding. Their data is still being copied, so counting them would plan on a
/// half-moved layout (a broker receiving a copy would look full already, and the source it is
/// copied from would count twice). Kept when that would leave no replica or drop the leader.
pub fn planned_replicas(p: &ballast_schema::ObservedPartition) -> (Vec<BrokerId>, Vec<BrokerId>) {
    if p.adding.is_empty() {
        return (p.replicas.clone(), p.isr.clone());
    }
    let kept: Vec<BrokerId> = p
        .replicas
        .iter()
        .copied()
        .filter(|r| !p.adding.contains(r))
        .collect();
    if kept.is_empty() || p.leader.is_some_and(|l| !kept.contains(&l)) {
        return (p.replicas.clone(), p.isr.clone());
    }
    let isr = p.isr.iter().copied().filter(|r| kept.contains(r)).collect();
    (kept, isr)
}

/// A `ballast.snapshot/v1` of the observed view: brokers (down when not alive), every partition
/// with its placement, window-averaged size (compacted topics: their steady size), rolling rates
/// (0 until known) and `lastMovedAt` from the cooldowns.
pub fn snapshot_from_view(view: &ObservedView, cooldowns: &[Cooldown]) -> Snapshot {
    snapshot_with_maintenance(view, cooldowns, &BTreeSet::new())
}

/// [`snapshot_from_view`] with the brokers an operator put in maintenance in state
/// `maintenance` (the planner drains them and plans nothing onto them).
pub fn snapshot_with_maintenance(
    view: &ObservedView,
    cooldowns: &[Cooldown],
    maintenance: &BTreeSet<BrokerId>,
) -> Snapshot {
    snapshot_of_parts(
        &ViewParts {
            facts: &view.cluster.facts,
            brokers: &view.brokers,
            topics: &view.topics,
            partitions: &view.partitions,
        },
        cooldowns,
        maintenance,
    )
}

/// The parts of a view a snapshot is made of: the view read back, or (the observer, while it
/// writes them) the sample's own rows, as the store keeps them — brokers as the write leaves
/// them (`ObservedWrite::brokers_after`), topics unique, partitions unique and ordered by topic
/// and partition.
pub struct ViewParts<'a> {
    pub facts: &'a ballast_schema::ClusterFacts,
    pub brokers: &'a [ballast_schema::ObservedBroker],
    pub topics: &'a [ballast_schema::ObservedTopic],
    pub partitions: &'a [ballast_schema::ObservedPartition],
}

/// [`snapshot_with_maintenance`] of a view's parts.
pub fn snapshot_of_parts(
    view: &ViewParts<'_>,
    cooldowns: &[Cooldown],
    maintenance: &BTreeSet<BrokerId>,
) -> Snapshot {
    let topics: HashMap<&str, &ballast_schema::ObservedTopic> =
        view.topics.iter().map(|t| (t.name.as_str(), t)).collect();
    let moved: HashMap<(&str, i32), i64> = cooldowns
        .iter()
        .map(|c| ((c.topic.as_str(), c.partition), c.moved_at_ms))
        .collect();
    let mut brokers: BTreeMap<BrokerId, SnapshotBroker> = view
        .brokers
        .iter()
        .map(|b| {
            (
                b.broker_id,
                SnapshotBroker {
                    id: b.broker_id,
                    rack: b.rack.clone(),
                    state: if maintenance.contains(&b.broker_id) {
                        BrokerState::Maintenance
                    } else if b.alive {
                        BrokerState::Alive
                    } else {
                        BrokerState::Down
                    },
                },
            )
        })
        .collect();
    let mut partitions = Vec::with_capacity(view.partitions.len());
    for p in view.partitions {
        for r in &p.replicas {
            brokers.entry(*r).or_insert(SnapshotBroker {
                id: *r,
                rack: None,
                state: BrokerState::Down,
            });
        }
        let topic = topics.get(p.topic.as_str());
        let size = p
            .avg_size_bytes
            .or(p.size_bytes.map(|s| s as f64))
            .unwrap_or(0.0)
            .max(0.0);
        let rates = p.rates.unwrap_or(ballast_schema::PartitionRates {
            producer_msg_rate: 0.0,
            producer_byte_rate: 0.0,
            consumer_msg_rate: 0.0,
            consumer_byte_rate: 0.0,
            window_ms: 0,
        });
        let (replicas, isr) = planned_replicas(p);
        partitions.push(SnapshotPartition {
            topic: p.topic.clone(),
            partition: p.partition,
            replicas,
            leader: p.leader,
            isr: Some(isr),
            size_bytes: size.round() as u64,
            compacted: topic.is_some_and(|t| t.compacted),
            min_insync_replicas: topic.and_then(|t| t.min_insync).unwrap_or(1),
            producer_msg_rate: rates.producer_msg_rate,
            producer_byte_rate: rates.producer_byte_rate,
            consumer_msg_rate: rates.consumer_msg_rate,
            consumer_byte_rate: rates.consumer_byte_rate,
            last_moved_at: moved
                .get(&(p.topic.as_str(), p.partition))
                .map(|ms| format_rfc3339_ms(*ms)),
        });
    }
    Snapshot {
        format: SNAPSHOT_FORMAT.to_string(),
        taken_at: format_rfc3339_ms(view.facts.sampled_at_ms),
        cluster_id: view.facts.cluster_id.clone(),
        brokers: brokers.into_values().collect(),
        partitions,
    }
}

/// FNV-1a, 64 bits: stable across builds and platforms.
pub fn fnv1a(bytes: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in bytes {
        h ^= u64::from(*b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h
}

pub fn state_name(s: BrokerState) -> &'static str {
    match s {
        BrokerState::Alive => "alive",
        BrokerState::Down => "down",
        BrokerState::Maintenance => "maintenance",
    }
}

/// A stable hash of the topology: brokers with their states and every partition's replicas, in
/// id order (input order does not matter).
pub fn fingerprint(snapshot: &Snapshot) -> String {
    let mut brokers: Vec<(BrokerId, &'static str)> = snapshot
        .brokers
        .iter()
        .map(|b| (b.id, state_name(b.state)))
        .collect();
    brokers.sort_unstable();
    let mut parts: Vec<(&str, i32, &[BrokerId])> = snapshot
        .partitions
        .iter()
        .map(|p| (p.topic.as_str(), p.partition, p.replicas.as_slice()))
        .collect();
    parts.sort_unstable();
    let mut text = String::new();
    for (id, state) in brokers {
        text.push_str(&format!("b{id}:{state};"));
    }
    for (topic, partition, replicas) in parts {
        text.push_str(&format!(
            "p{}:{topic}/{partition}:{replicas:?};",
            topic.len()
        ));
    }
    format!("{:016x}", fnv1a(text.as_bytes()))
}

/// The planner's policy from the service's settings. The observer, `ballast plan` and the web
/// process's what-if all build it here, so they follow the same rules.
pub fn policy(
    balance: &ballast_config::BalanceConfig,
    move_cooldown: std::time::Duration,
) -> ballast_balancer::Policy {
    ballast_balancer::Policy {
        threshold_pct: balance.threshold_percent,
        floor_bytes_per_sec: balance.floor.bytes_per_sec,
        floor_disk_bytes: balance.floor.disk_bytes as f64,
        cooldown_ms: i64::try_from(move_cooldown.as_millis()).unwrap_or(i64::MAX),
        max_partitions: balance.proposal_max_partitions,
        workers: balance.workers,
        parallel_min_chunk: ballast_balancer::PARALLEL_MIN_CHUNK,
        measuring: [None; 7],
    }
}

#[cfg(test)]
mod planned_tests {
    use super::*;

    fn partition(
        replicas: &[i32],
        isr: &[i32],
        adding: &[i32],
        leader: i32,
    ) -> ballast_schema::ObservedPartition {
        ballast_schema::ObservedPartition {
            topic: "orders".into(),
            partition: 0,
            leader: Some(leader),
            leader_epoch: None,
            replicas: replicas.to_vec(),
            isr: isr.to_vec(),
            offline_replicas: Vec::new(),
            adding: adding.to_vec(),
            removing: Vec::new(),
            size_bytes: None,
            avg_size_bytes: None,
            earliest_offset: None,
            local_start_offset: None,
            latest_offset: None,
            offsets_at_ms: None,
            produced_total: 0,
            consumed_total: 0,
            rates: None,
        }
    }

    #[test]
    fn a_plan_ignores_replicas_a_reassignment_in_progress_is_only_adding() {
        // [1,2,3] moving to [4,2,3]: Kafka lists [4,2,3,1] with 4 adding and 1 removing.
        let p = partition(&[4, 2, 3, 1], &[2, 3, 1], &[4], 2);
        assert_eq!(planned_replicas(&p), (vec![2, 3, 1], vec![2, 3, 1]));
        // Nothing in progress: as observed.
        let p = partition(&[1, 2, 3], &[1, 2], &[], 1);
        assert_eq!(planned_replicas(&p), (vec![1, 2, 3], vec![1, 2]));
    }

    #[test]
    fn an_added_replica_that_already_leads_is_kept() {
        let p = partition(&[4, 2, 1], &[4, 2, 1], &[4], 4);
        assert_eq!(planned_replicas(&p), (vec![4, 2, 1], vec![4, 2, 1]));
    }
}
