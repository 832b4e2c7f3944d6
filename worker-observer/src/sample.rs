//! Reading the cluster: one [`Sample`] is everything ballast learns in one pass (placement,
//! replica sizes, offsets, consumer progress, topic settings). Rates come from two samples:
//! producer msg/s from log-end-offset deltas, consumer msg/s from committed-offset deltas summed
//! over groups, byte rates from msg/s times the partition's bytes per message. No broker plugin.

use std::collections::{BTreeMap, BTreeSet};

use ballast_kafka::{Client, ConfigResource, OffsetSpec};
use ballast_model::snapshot::{Snapshot, SnapshotBroker, SnapshotPartition, SNAPSHOT_FORMAT};
use ballast_model::{BrokerId, BrokerState, TopicPartition};
use tracing::warn;

/// What one pass over the cluster saw.
#[derive(Debug, Clone, Default)]
pub struct Sample {
    pub at_ms: i64,
    pub cluster_id: Option<String>,
    /// Brokers in the metadata: id and rack.
    pub brokers: BTreeMap<BrokerId, Option<String>>,
    pub partitions: BTreeMap<TopicPartition, Placement>,
    /// Size of every replica, by partition and broker.
    pub replica_sizes: BTreeMap<(TopicPartition, BrokerId), u64>,
    pub earliest: BTreeMap<TopicPartition, i64>,
    pub latest: BTreeMap<TopicPartition, i64>,
    /// Committed offsets by group, then partition.
    pub committed: BTreeMap<String, BTreeMap<TopicPartition, i64>>,
    pub compacted: BTreeSet<String>,
    pub min_insync: BTreeMap<String, i32>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Placement {
    pub replicas: Vec<BrokerId>,
    pub leader: Option<BrokerId>,
    pub isr: Vec<BrokerId>,
}

/// Reads one sample. Parts that fail (a broker's log dirs, a group's offsets) are logged and
/// left out: a partial view is still a view, and the next sample tries again.
pub async fn take(client: &Client, now_ms: i64) -> Result<Sample, ballast_kafka::Error> {
    let meta = client.metadata(None).await?;
    let mut s = Sample {
        at_ms: now_ms,
        cluster_id: meta.cluster_id.clone(),
        ..Sample::default()
    };
    for b in &meta.brokers {
        s.brokers.insert(b.id, b.rack.clone());
    }
    let mut all = Vec::new();
    for t in meta.topics.iter().filter(|t| t.error.is_none()) {
        for p in t.partitions.iter().filter(|p| p.error.is_none()) {
            let tp = TopicPartition::new(t.name.clone(), p.partition);
            all.push(tp.clone());
            s.partitions.insert(
                tp,
                Placement {
                    replicas: p.replicas.clone(),
                    leader: p.leader,
                    isr: p.isr.clone(),
                },
            );
        }
    }
    for (broker, dirs) in client.describe_all_log_dirs().await? {
        match dirs {
            Ok(dirs) => {
                for r in dirs
                    .dirs
                    .iter()
                    .flat_map(|d| &d.replicas)
                    .filter(|r| !r.is_future)
                {
                    let tp = TopicPartition::new(r.topic.clone(), r.partition);
                    s.replica_sizes
                        .insert((tp, broker), u64::try_from(r.size).unwrap_or(0));
                }
            }
            Err(e) => warn!(broker, error = %e, "log dirs not read"),
        }
    }
    for (spec, into) in [
        (OffsetSpec::Earliest, &mut s.earliest),
        (OffsetSpec::Latest, &mut s.latest),
    ] {
        for o in client.list_offsets(&all, spec).await? {
            if let (None, Some(offset)) = (&o.error, o.offset) {
                into.insert(TopicPartition::new(o.topic, o.partition), offset);
            }
        }
    }
    for group in client.list_groups().await? {
        match client.committed_offsets(&group.group_id, None).await {
            Ok(offsets) => {
                let entry = s.committed.entry(group.group_id.clone()).or_default();
                for o in offsets.into_iter().filter(|o| o.error.is_none()) {
                    if let Some(offset) = o.offset {
                        entry.insert(TopicPartition::new(o.topic, o.partition), offset);
                    }
                }
            }
            Err(e) => warn!(group = %group.group_id, error = %e, "committed offsets not read"),
        }
    }
    let topics: Vec<ConfigResource> = meta
        .topics
        .iter()
        .map(|t| ConfigResource::Topic(t.name.clone()))
        .collect();
    if !topics.is_empty() {
        for rc in client.describe_configs(&topics).await? {
            let ConfigResource::Topic(name) = &rc.resource else {
                continue;
            };
            for e in &rc.entries {
                match (e.name.as_str(), e.value.as_deref()) {
                    ("cleanup.policy", Some(v)) if v.split(',').any(|p| p.trim() == "compact") => {
                        s.compacted.insert(name.clone());
                    }
                    ("min.insync.replicas", Some(v)) => {
                        if let Ok(n) = v.parse() {
                            s.min_insync.insert(name.clone(), n);
                        }
                    }
                    _ => {}
                }
            }
        }
    }
    Ok(s)
}

/// Per-second growth of a counter between two samples; a counter that went backwards (a
/// recreated partition, an offset reset) gives 0, never a negative rate.
fn rate(before: Option<i64>, after: Option<i64>, seconds: f64) -> f64 {
    match (before, after) {
        (Some(b), Some(a)) if a >= b && seconds > 0.0 => (a - b) as f64 / seconds,
        _ => 0.0,
    }
}

/// A `ballast.snapshot/v1` from two samples of the same cluster (`first` earlier).
pub fn snapshot(first: &Sample, second: &Sample, taken_at: String) -> Snapshot {
    let seconds = (second.at_ms - first.at_ms) as f64 / 1000.0;
    let mut referenced: BTreeSet<BrokerId> = BTreeSet::new();
    let mut partitions = Vec::with_capacity(second.partitions.len());
    for (tp, place) in &second.partitions {
        referenced.extend(place.replicas.iter().copied());
        // A partition's size is its leader's replica size, else the largest replica.
        let size = place
            .leader
            .and_then(|l| second.replica_sizes.get(&(tp.clone(), l)).copied())
            .or_else(|| {
                place
                    .replicas
                    .iter()
                    .filter_map(|r| second.replica_sizes.get(&(tp.clone(), *r)).copied())
                    .max()
            })
            .unwrap_or(0);
        let messages = match (second.earliest.get(tp), second.latest.get(tp)) {
            (Some(e), Some(l)) if l > e => (l - e) as f64,
            _ => 0.0,
        };
        let bytes_per_msg = if messages > 0.0 {
            size as f64 / messages
        } else {
            0.0
        };
        let produced = rate(
            first.latest.get(tp).copied(),
            second.latest.get(tp).copied(),
            seconds,
        );
        let consumed: f64 = second
            .committed
            .iter()
            .map(|(group, offsets)| {
                let before = first.committed.get(group).and_then(|o| o.get(tp)).copied();
                rate(before, offsets.get(tp).copied(), seconds)
            })
            .sum();
        partitions.push(SnapshotPartition {
            topic: tp.topic.clone(),
            partition: tp.partition,
            replicas: place.replicas.clone(),
            leader: place.leader,
            isr: Some(place.isr.clone()),
            size_bytes: size,
            compacted: second.compacted.contains(&tp.topic),
            min_insync_replicas: second.min_insync.get(&tp.topic).copied().unwrap_or(1),
            producer_msg_rate: produced,
            producer_byte_rate: produced * bytes_per_msg,
            consumer_msg_rate: consumed,
            consumer_byte_rate: consumed * bytes_per_msg,
            last_moved_at: None,
        });
    }
    // Brokers that hold replicas but are missing from the metadata are down.
    let mut brokers: Vec<SnapshotBroker> = second
        .brokers
        .iter()
        .map(|(id, rack)| SnapshotBroker {
            id: *id,
            rack: rack.clone(),
            state: BrokerState::Alive,
        })
        .collect();
    for id in referenced
        .iter()
        .filter(|id| !second.brokers.contains_key(id))
    {
        brokers.push(SnapshotBroker {
            id: *id,
            rack: None,
            state: BrokerState::Down,
        });
    }
    brokers.sort_by_key(|b| b.id);
    Snapshot {
        format: SNAPSHOT_FORMAT.to_string(),
        taken_at,
        cluster_id: second.cluster_id.clone(),
        brokers,
        partitions,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tp(p: i32) -> TopicPartition {
        TopicPartition::new("t", p)
    }

    fn sample(at_ms: i64, latest: i64, committed: i64) -> Sample {
        let mut s = Sample {
            at_ms,
            ..Sample::default()
        };
        s.brokers.insert(1, Some("r1".into()));
        s.partitions.insert(
            tp(0),
            Placement {
                replicas: vec![1, 2],
                leader: Some(1),
                isr: vec![1],
            },
        );
        s.replica_sizes.insert((tp(0), 1), 1_000_000);
        s.earliest.insert(tp(0), 0);
        s.latest.insert(tp(0), latest);
        s.committed
            .entry("g".into())
            .or_default()
            .insert(tp(0), committed);
        s
    }

    #[test]
    fn rates_come_from_offset_deltas_and_bytes_per_message() {
        let snap = snapshot(
            &sample(0, 10_000, 5_000),
            &sample(10_000, 11_000, 5_500),
            "now".into(),
        );
        let p = &snap.partitions[0];
        assert_eq!(p.producer_msg_rate, 100.0);
        assert_eq!(p.consumer_msg_rate, 50.0);
        // 1,000,000 bytes over 11,000 messages.
        assert!((p.producer_byte_rate - 100.0 * 1_000_000.0 / 11_000.0).abs() < 1e-6);
        assert_eq!(p.size_bytes, 1_000_000);
    }

    #[test]
    fn counters_that_go_backwards_give_no_negative_rate() {
        let snap = snapshot(
            &sample(0, 10_000, 9_000),
            &sample(10_000, 50, 10),
            "now".into(),
        );
        let p = &snap.partitions[0];
        assert_eq!(p.producer_msg_rate, 0.0);
        assert_eq!(p.consumer_msg_rate, 0.0);
    }

    #[test]
    fn brokers_holding_replicas_but_missing_from_metadata_are_down() {
        let snap = snapshot(&sample(0, 1, 1), &sample(1000, 2, 2), "now".into());
        let states: Vec<(BrokerId, BrokerState)> =
            snap.brokers.iter().map(|b| (b.id, b.state)).collect();
        assert_eq!(
            states,
            vec![(1, BrokerState::Alive), (2, BrokerState::Down)]
        );
        snap.validate().expect("a valid snapshot");
    }
}
