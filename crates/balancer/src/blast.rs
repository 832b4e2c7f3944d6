//! Blast radius: what the failure of a broker, a list of brokers or a whole rack does to the
//! partitions of a snapshot: which go offline, under or at min ISR, where each lost leadership
//! fails over, how many bytes must be copied to restore the replication factor and how long that
//! takes at the throttle, and which consumer groups notice.
//!
//! Pure: no IO, no clock. Lists are bounded by `limit` (counts are not) and ordered by topic and
//! partition, groups by id, brokers by id. Shapes: `docs/api/simulation.md`.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};

use ballast_model::snapshot::Snapshot;
use ballast_model::{BrokerId, BrokerState};
use serde::{Deserialize, Serialize};

use crate::whatif::{list_limit, InputError, Transfer};

/// Entries of each list by default, and at most.
pub const LISTED: usize = 100;
pub const LISTED_MAX: usize = 1000;

/// `POST /api/v1/blast-radius/analyze`: exactly one of `brokerId`, `brokerIds`, `rack`.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct BlastRequest {
    #[serde(default)]
    pub broker_id: Option<i64>,
    #[serde(default)]
    pub broker_ids: Option<Vec<i64>>,
    #[serde(default)]
    pub rack: Option<String>,
    /// Entries per list; omitted or 0: [`LISTED`], at most [`LISTED_MAX`].
    #[serde(default)]
    pub limit: Option<i64>,
}

/// A consumer group and the partitions it has committed offsets on.
#[derive(Debug, Clone, PartialEq)]
pub struct ConsumerGroup {
    pub group_id: String,
    pub coordinator: Option<BrokerId>,
    pub partitions: Vec<(String, i32)>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct FailureSummary {
    /// `broker`, `brokers` or `rack`.
    pub kind: &'static str,
    pub rack: Option<String>,
    pub brokers: Vec<BrokerId>,
    /// Brokers of the failure that are down already.
    pub already_down: Vec<BrokerId>,
    /// Brokers still alive after the failure.
    pub brokers_remaining: usize,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Summary {
    /// Partitions with a replica on a failed broker.
    pub partitions_affected: usize,
    pub offline: usize,
    pub under_min_isr: usize,
    pub at_min_isr: usize,
    /// Online, above min ISR, but fewer in-sync replicas than replicas.
    pub under_replicated: usize,
    pub leaders_lost: usize,
    pub leaders_failed_over: usize,
    pub replicas_lost: usize,
    pub topics_affected: usize,
    pub consumer_groups_affected: usize,
}

/// An affected partition, before and after the failure.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PartitionImpact {
    pub topic: String,
    pub partition: i32,
    pub replicas: Vec<BrokerId>,
    pub leader_before: Option<BrokerId>,
    pub leader_after: Option<BrokerId>,
    pub isr_before: Vec<BrokerId>,
    pub isr_after: Vec<BrokerId>,
    /// Replicas on live brokers after the failure (in sync or not).
    pub live_replicas: Vec<BrokerId>,
    pub min_insync_replicas: i32,
    /// `offline`, `underMinIsr`, `atMinIsr`, `underReplicated` or `healthy`.
    pub status_before: &'static str,
    pub status_after: &'static str,
    pub size_bytes: u64,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PartitionList {
    pub count: usize,
    pub truncated: bool,
    pub partitions: Vec<PartitionImpact>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct LeaderChange {
    pub topic: String,
    pub partition: i32,
    pub from: BrokerId,
    /// The first live in-sync replica in replica order; None: the partition goes offline.
    pub to: Option<BrokerId>,
}

/// Leadership a broker takes over, and the traffic that comes with it.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct LeaderGain {
    pub broker_id: BrokerId,
    pub leaders_gained: usize,
    pub producer_msg_rate: f64,
    pub producer_byte_rate: f64,
    pub consumer_msg_rate: f64,
    pub consumer_byte_rate: f64,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Leadership {
    pub lost: usize,
    pub failed_over: usize,
    /// Lost leaderships with no live in-sync replica to take over.
    pub offline: usize,
    pub changes: Vec<LeaderChange>,
    pub changes_truncated: bool,
    pub by_broker: Vec<LeaderGain>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Destination {
    pub broker_id: BrokerId,
    pub replicas: usize,
    pub bytes: u64,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ReReplication {
    /// Replicas on failed brokers.
    pub replicas_lost: usize,
    /// Of those, replicas of partitions still online: copying them restores the replication
    /// factor.
    pub replicas_to_rebuild: usize,
    pub bytes_to_replicate: u64,
    /// Replicas of offline partitions: nothing to copy from until a replica comes back.
    pub replicas_unavailable: usize,
    pub bytes_unavailable: u64,
    /// Replicas to rebuild that no live broker can take (every one already holds the partition).
    pub replicas_without_destination: usize,
    pub bytes_without_destination: u64,
    /// Where the copies would go (brokers that take load, the same rack as the lost replica
    /// first, then the fewest bytes received), by broker id.
    pub destinations: Vec<Destination>,
    /// The copies that have a destination, at the throttle.
    pub transfer: Transfer,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct AffectedGroup {
    pub group_id: String,
    /// Committed partitions that go offline.
    pub offline_partitions: usize,
    /// Committed partitions whose leader moves to another broker.
    pub leader_moved_partitions: usize,
    /// The group's coordinator is on a failed broker.
    pub coordinator_lost: bool,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct GroupList {
    pub count: usize,
    pub truncated: bool,
    pub groups: Vec<AffectedGroup>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TopicImpact {
    pub topic: String,
    pub partitions: usize,
    pub affected_partitions: usize,
    pub offline: usize,
    pub under_min_isr: usize,
    pub at_min_isr: usize,
    pub leaders_lost: usize,
    pub replicas_lost: usize,
    pub bytes_to_replicate: u64,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TopicList {
    pub count: usize,
    pub truncated: bool,
    /// Worst first: offline, under min ISR, at min ISR, leaders lost, then by name.
    pub topics: Vec<TopicImpact>,
}

/// The answer of a blast-radius analysis.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct BlastRadius {
    pub failure: FailureSummary,
    pub summary: Summary,
    pub offline: PartitionList,
    pub under_min_isr: PartitionList,
    pub at_min_isr: PartitionList,
    pub leadership: Leadership,
    pub re_replication: ReReplication,
    pub consumer_groups: GroupList,
    pub topics: TopicList,
}

/// The failed brokers named by a request, or which field is wrong.
pub fn failed_brokers(
    snapshot: &Snapshot,
    request: &BlastRequest,
) -> Result<(&'static str, Option<String>, BTreeSet<BrokerId>), InputError> {
    let known: BTreeSet<BrokerId> = snapshot.brokers.iter().map(|b| b.id).collect();
    let given = [
        request.broker_id.is_some(),
        request.broker_ids.is_some(),
        request.rack.is_some(),
    ]
    .iter()
    .filter(|g| **g)
    .count();
    if given != 1 {
        return Err(InputError::new(
            "brokerId",
            "give exactly one of brokerId, brokerIds or rack",
        ));
    }
    let check = |field: String, v: i64| -> Result<BrokerId, InputError> {
        let id = BrokerId::try_from(v)
            .map_err(|_| InputError::new(&field, format!("{v} is not a broker id")))?;
        if known.contains(&id) {
            Ok(id)
        } else {
            Err(InputError::new(
                field,
                format!("broker {id} is not in the cluster"),
            ))
        }
    };
    if let Some(v) = request.broker_id {
        let id = check("brokerId".to_string(), v)?;
        return Ok(("broker", None, BTreeSet::from([id])));
    }
    if let Some(list) = &request.broker_ids {
        if list.is_empty() {
            return Err(InputError::new("brokerIds", "must not be empty"));
        }
        let mut ids = BTreeSet::new();
        for (k, v) in list.iter().enumerate() {
            let field = format!("brokerIds[{k}]");
            let id = check(field.clone(), *v)?;
            if !ids.insert(id) {
                return Err(InputError::new(
                    field,
                    format!("broker {id} is listed twice"),
                ));
            }
        }
        return Ok(("brokers", None, ids));
    }
    let rack = request.rack.clone().unwrap_or_default();
    let ids: BTreeSet<BrokerId> = snapshot
        .brokers
        .iter()
        .filter(|b| b.rack.as_deref() == Some(rack.as_str()))
        .map(|b| b.id)
        .collect();
    if ids.is_empty() {
        let racks: BTreeSet<&str> = snapshot
            .brokers
            .iter()
            .filter_map(|b| b.rack.as_deref())
            .collect();
        let listed = if racks.is_empty() {
            "the cluster has no racks".to_string()
        } else {
            format!(
                "racks: {}",
                racks.into_iter().take(20).collect::<Vec<_>>().join(", ")
            )
        };
        return Err(InputError::new(
            "rack",
            format!("no broker is on rack {rack:?} ({listed})"),
        ));
    }
    Ok(("rack", Some(rack), ids))
}

fn status(leader: Option<BrokerId>, isr: usize, replicas: usize, min_isr: i32) -> &'static str {
    let min = i64::from(min_isr.max(1));
    let isr = isr as i64;
    if leader.is_none() {
        "offline"
    } else if isr < min {
        "underMinIsr"
    } else if isr == min {
        "atMinIsr"
    } else if isr < replicas as i64 {
        "underReplicated"
    } else {
        "healthy"
    }
}

/// Analyses the failure `request` names on `snapshot`. `groups` are the consumer groups with
/// their committed partitions; `throttle_bytes_per_sec` (0 = unknown) gives the copy time.
pub fn analyze(
    snapshot: &Snapshot,
    groups: &[ConsumerGroup],
    request: &BlastRequest,
    throttle_bytes_per_sec: f64,
) -> Result<BlastRadius, InputError> {
    let limit = list_limit("limit", request.limit, LISTED, LISTED_MAX)?;
    let (kind, rack_name, failed) = failed_brokers(snapshot, request)?;
    let state: HashMap<BrokerId, BrokerState> =
        snapshot.brokers.iter().map(|b| (b.id, b.state)).collect();
    let racks: HashMap<BrokerId, Option<&str>> = snapshot
        .brokers
        .iter()
        .map(|b| (b.id, b.rack.as_deref()))
        .collect();
    let live =
        |b: &BrokerId| !failed.contains(b) && state.get(b).is_some_and(|s| *s != BrokerState::Down);
    let mut takers: Vec<BrokerId> = snapshot
        .brokers
        .iter()
        .filter(|b| b.state.takes_load() && !failed.contains(&b.id))
        .map(|b| b.id)
        .collect();
    takers.sort_unstable();
    let already_down: Vec<BrokerId> = failed
        .iter()
        .copied()
        .filter(|b| state.get(b) == Some(&BrokerState::Down))
        .collect();
    let remaining = snapshot.brokers.iter().filter(|b| live(&b.id)).count();

    let mut parts: Vec<&ballast_model::snapshot::SnapshotPartition> =
        snapshot.partitions.iter().collect();
    parts.sort_by(|a, b| (a.topic.as_str(), a.partition).cmp(&(b.topic.as_str(), b.partition)));

    let mut summary = Summary::default();
    let mut offline = PartitionList::default();
    let mut under_min = PartitionList::default();
    let mut at_min = PartitionList::default();
    let mut leadership = Leadership::default();
    let mut gains: BTreeMap<BrokerId, LeaderGain> = BTreeMap::new();
    let mut topics: BTreeMap<&str, TopicImpact> = BTreeMap::new();
    let mut offline_set: HashSet<(&str, i32)> = HashSet::new();
    let mut moved_set: HashSet<(&str, i32)> = HashSet::new();
    let mut incoming: BTreeMap<BrokerId, (usize, u64)> = BTreeMap::new();
    let mut copies: Vec<(Option<BrokerId>, BrokerId, u64)> = Vec::new();
    let (mut lost_total, mut rebuild, mut rebuild_bytes) = (0usize, 0usize, 0u64);
    let (mut unavailable, mut unavailable_bytes) = (0usize, 0u64);
    let (mut homeless, mut homeless_bytes) = (0usize, 0u64);

    for p in parts {
        let t = topics
            .entry(p.topic.as_str())
            .or_insert_with(|| TopicImpact {
                topic: p.topic.clone(),
                ..TopicImpact::default()
            });
        t.partitions += 1;
        let lost: Vec<BrokerId> = p
            .replicas
            .iter()
            .copied()
            .filter(|r| failed.contains(r))
            .collect();
        if lost.is_empty() {
            continue;
        }
        let isr_before: Vec<BrokerId> = p.isr_or_replicas().to_vec();
        let isr_after: Vec<BrokerId> = isr_before.iter().copied().filter(|r| live(r)).collect();
        let live_replicas: Vec<BrokerId> = p.replicas.iter().copied().filter(|r| live(r)).collect();
        // Kafka's controller: the leader stays if it lives; otherwise the first replica in
        // assignment order that is alive and in sync (no unclean election).
        let leader_after = match p.leader {
            Some(l) if live(&l) => Some(l),
            Some(_) => p.replicas.iter().copied().find(|r| isr_after.contains(r)),
            None => None,
        };
        let before = status(
            p.leader,
            isr_before.len(),
            p.replicas.len(),
            p.min_insync_replicas,
        );
        let after = status(
            leader_after,
            isr_after.len(),
            p.replicas.len(),
            p.min_insync_replicas,
        );
        let key = (p.topic.as_str(), p.partition);

        summary.partitions_affected += 1;
        t.affected_partitions += 1;
        t.replicas_lost += lost.len();
        lost_total += lost.len();

        if let Some(from) = p.leader.filter(|l| !live(l)) {
            leadership.lost += 1;
            t.leaders_lost += 1;
            match leader_after {
                Some(to) => {
                    leadership.failed_over += 1;
                    moved_set.insert(key);
                    let g = gains.entry(to).or_insert_with(|| LeaderGain {
                        broker_id: to,
                        ..LeaderGain::default()
                    });
                    g.leaders_gained += 1;
                    g.producer_msg_rate += p.producer_msg_rate;
                    g.producer_byte_rate += p.producer_byte_rate;
                    g.consumer_msg_rate += p.consumer_msg_rate;
                    g.consumer_byte_rate += p.consumer_byte_rate;
                }
                None => leadership.offline += 1,
            }
            if leadership.changes.len() < limit {
                leadership.changes.push(LeaderChange {
                    topic: p.topic.clone(),
                    partition: p.partition,
                    from,
                    to: leader_after,
                });
            } else {
                leadership.changes_truncated = true;
            }
        }

        // Re-replication: copies of the lost replicas from the (new) leader.
        if leader_after.is_none() {
            unavailable += lost.len();
            unavailable_bytes =
                unavailable_bytes.saturating_add(p.size_bytes.saturating_mul(lost.len() as u64));
        } else {
            let mut holders: Vec<BrokerId> = p
                .replicas
                .iter()
                .copied()
                .filter(|r| !failed.contains(r))
                .collect();
            for l in &lost {
                rebuild += 1;
                rebuild_bytes = rebuild_bytes.saturating_add(p.size_bytes);
                t.bytes_to_replicate = t.bytes_to_replicate.saturating_add(p.size_bytes);
                let lost_rack = racks.get(l).copied().flatten();
                let best = takers
                    .iter()
                    .copied()
                    .filter(|d| !holders.contains(d))
                    .min_by_key(|d| {
                        let r = racks.get(d).copied().flatten();
                        let same = r.is_some() && r == lost_rack;
                        let used = r.is_some()
                            && holders.iter().any(|h| racks.get(h).copied().flatten() == r);
                        let got = incoming.get(d).map_or(0, |x| x.1);
                        (!same, used, got, *d)
                    });
                match best {
                    Some(d) => {
                        holders.push(d);
                        let e = incoming.entry(d).or_default();
                        e.0 += 1;
                        e.1 = e.1.saturating_add(p.size_bytes);
                        copies.push((leader_after, d, p.size_bytes));
                    }
                    None => {
                        homeless += 1;
                        homeless_bytes = homeless_bytes.saturating_add(p.size_bytes);
                    }
                }
            }
        }

        let impact = || PartitionImpact {
            topic: p.topic.clone(),
            partition: p.partition,
            replicas: p.replicas.clone(),
            leader_before: p.leader,
            leader_after,
            isr_before: isr_before.clone(),
            isr_after: isr_after.clone(),
            live_replicas: live_replicas.clone(),
            min_insync_replicas: p.min_insync_replicas,
            status_before: before,
            status_after: after,
            size_bytes: p.size_bytes,
        };
        let list = match after {
            "offline" => {
                offline_set.insert(key);
                t.offline += 1;
                summary.offline += 1;
                Some(&mut offline)
            }
            "underMinIsr" => {
                t.under_min_isr += 1;
                summary.under_min_isr += 1;
                Some(&mut under_min)
            }
            "atMinIsr" => {
                t.at_min_isr += 1;
                summary.at_min_isr += 1;
                Some(&mut at_min)
            }
            "underReplicated" => {
                summary.under_replicated += 1;
                None
            }
            _ => None,
        };
        if let Some(list) = list {
            list.count += 1;
            if list.partitions.len() < limit {
                list.partitions.push(impact());
            } else {
                list.truncated = true;
            }
        }
    }

    // Consumer groups with committed offsets on partitions that go offline or change leader,
    // or whose coordinator fails.
    let mut by_group: BTreeMap<&str, AffectedGroup> = BTreeMap::new();
    for g in groups {
        let (mut off, mut moved) = (0usize, 0usize);
        let mut seen: HashSet<(&str, i32)> = HashSet::new();
        for (topic, partition) in &g.partitions {
            let key = (topic.as_str(), *partition);
            if !seen.insert(key) {
                continue;
            }
            off += usize::from(offline_set.contains(&key));
            moved += usize::from(moved_set.contains(&key));
        }
        let coordinator_lost = g.coordinator.is_some_and(|c| failed.contains(&c));
        if off + moved == 0 && !coordinator_lost {
            continue;
        }
        let e = by_group
            .entry(g.group_id.as_str())
            .or_insert_with(|| AffectedGroup {
                group_id: g.group_id.clone(),
                offline_partitions: 0,
                leader_moved_partitions: 0,
                coordinator_lost: false,
            });
        e.offline_partitions += off;
        e.leader_moved_partitions += moved;
        e.coordinator_lost |= coordinator_lost;
    }
    let group_count = by_group.len();
    let consumer_groups = GroupList {
        count: group_count,
        truncated: group_count > limit,
        groups: by_group.into_values().take(limit).collect(),
    };

    let mut affected_topics: Vec<TopicImpact> = topics
        .into_values()
        .filter(|t| t.affected_partitions > 0)
        .collect();
    affected_topics.sort_by(|a, b| {
        (b.offline, b.under_min_isr, b.at_min_isr, b.leaders_lost)
            .cmp(&(a.offline, a.under_min_isr, a.at_min_isr, a.leaders_lost))
            .then_with(|| a.topic.cmp(&b.topic))
    });
    let topic_count = affected_topics.len();
    affected_topics.truncate(limit);

    summary.leaders_lost = leadership.lost;
    summary.leaders_failed_over = leadership.failed_over;
    summary.replicas_lost = lost_total;
    summary.topics_affected = topic_count;
    summary.consumer_groups_affected = group_count;
    leadership.by_broker = gains.into_values().collect();

    Ok(BlastRadius {
        failure: FailureSummary {
            kind,
            rack: rack_name,
            brokers: failed.iter().copied().collect(),
            already_down,
            brokers_remaining: remaining,
        },
        summary,
        offline,
        under_min_isr: under_min,
        at_min_isr: at_min,
        leadership,
        re_replication: ReReplication {
            replicas_lost: lost_total,
            replicas_to_rebuild: rebuild,
            bytes_to_replicate: rebuild_bytes,
            replicas_unavailable: unavailable,
            bytes_unavailable: unavailable_bytes,
            replicas_without_destination: homeless,
            bytes_without_destination: homeless_bytes,
            destinations: incoming
                .into_iter()
                .map(|(broker_id, (replicas, bytes))| Destination {
                    broker_id,
                    replicas,
                    bytes,
                })
                .collect(),
            transfer: Transfer::estimate(&copies, throttle_bytes_per_sec),
        },
        consumer_groups,
        topics: TopicList {
            count: topic_count,
            truncated: topic_count > limit,
            topics: affected_topics,
        },
    })
}
