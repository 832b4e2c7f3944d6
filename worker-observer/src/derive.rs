//! From samples to what the observer writes: monotonic counters, rolling rates, per-broker loads.
//! Pure: no IO and no clock, so every rule here is a unit test.
//!
//! Rules:
//! - `produced_total` grows by the log-end offset's increase between readings. A log end that
//!   went backwards (a recreated topic, a truncated log) adds nothing and restarts the partition's
//!   rate window: its rate is null until it has two readings again, never negative or a spike.
//! - `consumed_total` grows by every group's committed-offset increase, summed over groups. A
//!   committed offset that went backwards (an offset reset) adds nothing; a group with no members
//!   (the only state in which offsets can be reset) adds at most what was produced meanwhile, so a
//!   reset to the log end is not read as consumption. New groups add nothing on their first reading.
//! - Rates run from the oldest counter inside `BALLAST_RATE_WINDOW` to the newest reading. A
//!   counter is kept every window/10 (about ten per window); a partition whose offsets could not
//!   be read keeps its rate from the readings it has.
//! - Byte rates are message rates times the partition's bytes per message (size ÷ messages held).
//! - Partition size is averaged over the window (compacted topics: the median, their steady size).
//! - Broker loads: leaders and followers counted from the assignment, disk from the sizes every
//!   broker reported for its replicas (unknown when its log dirs were not read), rates summed over
//!   the partitions it leads.

use std::collections::{BTreeMap, BTreeSet, HashMap, VecDeque};

use ballast_model::{BrokerId, Load, TopicPartition};
use ballast_schema::{
    BrokerReading, ClusterFacts, Downsample, ObservedBroker, ObservedGroup, ObservedGroupOffset,
    ObservedLogDir, ObservedPartition, ObservedReplica, ObservedTopic, ObservedWrite,
    PartitionCounter, PartitionRates, PartitionReading, PartitionTotals, ReadingsPolicy,
};

use crate::sample::{Placement, Sample};

const MINUTE_MS: i64 = 60_000;
const HOUR_MS: i64 = 60 * MINUTE_MS;
const DAY_MS: i64 = 24 * HOUR_MS;

/// Broker readings older than a day are kept as 10-minute averages, older than three days as
/// hourly averages (until `BALLAST_READINGS_RETENTION`).
pub const DOWNSAMPLE: [Downsample; 2] = [
    Downsample {
        after_ms: DAY_MS,
        resolution_ms: 10 * MINUTE_MS,
    },
    Downsample {
        after_ms: 3 * DAY_MS,
        resolution_ms: HOUR_MS,
    },
];

/// Partition readings older than a day are kept as daily averages (until
/// `BALLAST_READINGS_RETENTION`): 24 hourly readings plus one a day, per partition.
pub const PARTITION_DOWNSAMPLE: [Downsample; 1] = [Downsample {
    after_ms: DAY_MS,
    resolution_ms: DAY_MS,
}];

/// The durations the derivation follows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Windows {
    /// `BALLAST_RATE_WINDOW`
    pub rate_window_ms: i64,
    /// `BALLAST_READINGS_RETENTION`
    pub retention_ms: i64,
    /// `BALLAST_PARTITION_READINGS_INTERVAL`: how often partition readings are written.
    pub partition_reading_ms: i64,
}

impl Windows {
    /// A counter is kept at most this often per partition.
    pub fn counter_step_ms(&self) -> i64 {
        (self.rate_window_ms / 10).max(1)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Counter {
    at_ms: i64,
    produced: i64,
    consumed: i64,
    size: Option<i64>,
}

#[derive(Debug, Clone, Default)]
struct PartHistory {
    /// The last log-end offset read, and when.
    latest: Option<i64>,
    offsets_at_ms: Option<i64>,
    produced: i64,
    consumed: i64,
    counters: VecDeque<Counter>,
}

/// What the observer remembers between samples. Everything in it is also in the store, so a
/// restarted observer carries on from [`History::from_store`].
#[derive(Debug, Clone, Default)]
pub struct History {
    partitions: HashMap<TopicPartition, PartHistory>,
    /// The last committed offsets read, by group then partition.
    committed: HashMap<String, BTreeMap<TopicPartition, i64>>,
    /// When partition readings were last written (from the store after a restart).
    last_partition_reading_ms: Option<i64>,
}

impl History {
    /// Rebuilds the history from what the store kept (after a restart): every partition's
    /// totals, the last committed offsets and the counters inside the rate window.
    pub fn from_store(
        totals: Vec<PartitionTotals>,
        offsets: Vec<ObservedGroupOffset>,
        counters: Vec<PartitionCounter>,
    ) -> History {
        let mut h = History::default();
        for p in totals {
            h.partitions.insert(
                TopicPartition::new(p.topic, p.partition),
                PartHistory {
                    latest: p.latest_offset,
                    offsets_at_ms: p.offsets_at_ms,
                    produced: p.produced_total,
                    consumed: p.consumed_total,
                    counters: VecDeque::new(),
                },
            );
        }
        for o in offsets {
            h.committed.entry(o.group_id).or_default().insert(
                TopicPartition::new(o.topic, o.partition),
                o.committed_offset,
            );
        }
        for c in counters {
            if let Some(p) = h
                .partitions
                .get_mut(&TopicPartition::new(c.topic, c.partition))
            {
                p.counters.push_back(Counter {
                    at_ms: c.at_ms,
                    produced: c.produced_total,
                    consumed: c.consumed_total,
                    size: c.size_bytes,
                });
            }
        }
        h
    }

    /// Carries the partition readings' cadence over a restart: the next ones are written
    /// `BALLAST_PARTITION_READINGS_INTERVAL` after `at_ms`.
    pub fn set_last_partition_reading(&mut self, at_ms: Option<i64>) {
        self.last_partition_reading_ms = at_ms;
    }

    /// How many partitions the history follows.
    pub fn len(&self) -> usize {
        self.partitions.len()
    }

    pub fn is_empty(&self) -> bool {
        self.partitions.is_empty()
    }

    /// Folds `sample` into the history and returns everything to write for it. The sample is
    /// taken apart as it is read (each partition's reads are dropped once its rows are made,
    /// and the committed offsets become the history's), so the two are never held twice.
    pub fn observe(
        &mut self,
        mut s: Sample,
        windows: Windows,
        facts: ClusterFacts,
    ) -> ObservedWrite {
        let now = s.at_ms;
        let step = windows.counter_step_ms();
        let mut w = ObservedWrite {
            cluster: facts,
            policy: Some(ReadingsPolicy {
                counters_ms: windows.rate_window_ms,
                retention_ms: windows.retention_ms,
                downsample: DOWNSAMPLE.to_vec(),
                partition_downsample: PARTITION_DOWNSAMPLE.to_vec(),
            }),
            ..ObservedWrite::default()
        };
        let partition_readings = self
            .last_partition_reading_ms
            .is_none_or(|t| now - t >= windows.partition_reading_ms);

        // The partitions in order, each found by binary search: per-partition sums are vectors
        // along it instead of maps keyed by partition.
        let parts: Vec<(TopicPartition, Placement)> =
            std::mem::take(&mut s.partitions).into_iter().collect();
        let index = |tp: &TopicPartition| parts.binary_search_by(|(k, _)| k.cmp(tp)).ok();

        // Deleted partitions: forget them and their counters.
        let gone: Vec<TopicPartition> = self
            .partitions
            .keys()
            .filter(|tp| index(tp).is_none())
            .cloned()
            .collect();
        for tp in gone {
            self.partitions.remove(&tp);
            w.cleared_counters.push((tp.topic, tp.partition));
        }

        // Produced since the previous reading (None when not known).
        let produced_delta = |i: usize| -> Option<i64> {
            let (tp, place) = &parts[i];
            let latest = place.latest?;
            let prev = self.partitions.get(tp)?.latest?;
            (latest >= prev).then_some(latest - prev)
        };

        // Consumed since the previous reading, summed over groups.
        let mut consumed_delta: Vec<i64> = vec![0; parts.len()];
        for (group, offsets) in &s.committed {
            let idle = s
                .groups
                .get(group)
                .is_some_and(|g| g.members == Some(0) || g.state.as_deref() == Some("Empty"));
            let Some(before) = self.committed.get(group) else {
                continue;
            };
            for (tp, offset) in offsets {
                let (Some(prev), Some(i)) = (before.get(tp), index(tp)) else {
                    continue;
                };
                let mut delta = (offset - prev).max(0);
                if idle {
                    delta = delta.min(produced_delta(i).unwrap_or(0));
                }
                consumed_delta[i] += delta;
            }
        }

        // Groups and their offsets, before the offsets become the history's.
        for (group, info) in &s.groups {
            w.groups.push(ObservedGroup {
                group_id: group.clone(),
                state: info.state.clone(),
                protocol_type: info.protocol_type.clone(),
                members: info.members,
                coordinator: info.coordinator,
                offsets_read: s.committed.contains_key(group),
            });
        }
        for (group, offsets) in &s.committed {
            for (tp, offset) in offsets {
                let lag = index(tp)
                    .and_then(|i| parts[i].1.latest)
                    .map(|l| (l - offset).max(0));
                w.group_offsets.push(ObservedGroupOffset {
                    group_id: group.clone(),
                    topic: tp.topic.clone(),
                    partition: tp.partition,
                    committed_offset: *offset,
                    lag,
                });
            }
        }
        let groups_read = s
            .groups
            .keys()
            .filter(|g| s.committed.contains_key(*g))
            .count() as u32;

        // Future replicas (log-dir moves), with their lag behind the current replica; written
        // after the current ones.
        let mut disk: BTreeMap<BrokerId, i64> = BTreeMap::new();
        let mut future_rows = Vec::with_capacity(s.future_replicas.len());
        for ((tp, broker), log) in &s.future_replicas {
            let current = match index(tp) {
                Some(i) => parts[i].1.log(*broker).map(|r| r.size),
                None => s.replica_size(tp, *broker),
            };
            *disk.entry(*broker).or_default() += log.size as i64;
            future_rows.push(ObservedReplica {
                lag_bytes: current.map(|c| c.saturating_sub(log.size) as i64),
                topic: tp.topic.clone(),
                partition: tp.partition,
                broker_id: *broker,
                is_future: true,
                log_dir: Some(log.dir.to_string()),
                size_bytes: Some(log.size as i64),
                offset_lag: Some(log.offset_lag),
            });
        }
        for ((_, broker), log) in &s.stray_replicas {
            *disk.entry(*broker).or_default() += log.size as i64;
        }

        let Sample {
            at_ms: _,
            cluster_id,
            controller_id,
            controller_source,
            metadata_mode,
            kafka_version,
            quorum,
            elr: _,
            brokers,
            addresses,
            topics,
            partitions,
            stray_replicas: _,
            future_replicas: _,
            log_dirs,
            committed,
            groups,
            compacted,
            min_insync,
            groups_error,
            timings: _,
        } = s;

        // The committed offsets read become the history's. Groups that are gone are forgotten;
        // groups listed but unread keep their last offsets (all of them when the listing itself
        // failed).
        self.committed.extend(committed);
        if groups_error.is_none() {
            self.committed.retain(|g, _| groups.contains_key(g));
        }
        drop(groups);

        let mut loads: BTreeMap<BrokerId, [f64; 7]> = BTreeMap::new();
        let mut referenced: BTreeSet<BrokerId> = BTreeSet::new();
        let mut topic_partitions: BTreeMap<String, (i32, i32)> = BTreeMap::new();
        let partition_count = parts.len() as u32;
        let mut offsets_read = 0u32;
        debug_assert!(partitions.is_empty(), "taken apart above");
        for ((tp, place), consumed) in parts.into_iter().zip(consumed_delta) {
            let h = match self.partitions.get_mut(&tp) {
                Some(h) => h,
                None => self.partitions.entry(tp.clone()).or_default(),
            };
            let latest = place.latest;
            offsets_read += u32::from(latest.is_some());
            if let Some(l) = latest {
                match h.latest {
                    Some(prev) if l < prev => {
                        // Backwards: restart the window for this partition.
                        h.counters.clear();
                        w.cleared_counters.push((tp.topic.clone(), tp.partition));
                    }
                    Some(prev) => h.produced += l - prev,
                    None => {}
                }
                h.latest = Some(l);
                h.offsets_at_ms = Some(now);
            }
            h.consumed += consumed;
            let size = place.size().map(|v| v as i64);

            while h
                .counters
                .front()
                .is_some_and(|c| c.at_ms < now - windows.rate_window_ms)
            {
                h.counters.pop_front();
            }
            if latest.is_some() && h.counters.back().is_none_or(|c| now - c.at_ms >= step) {
                let c = Counter {
                    at_ms: now,
                    produced: h.produced,
                    consumed: h.consumed,
                    size,
                };
                h.counters.push_back(c);
                w.counters.push(PartitionCounter {
                    topic: tp.topic.clone(),
                    partition: tp.partition,
                    at_ms: now,
                    produced_total: c.produced,
                    consumed_total: c.consumed,
                    size_bytes: c.size,
                });
            }

            let earliest = place.earliest;
            let earliest_local = place.earliest_local;
            // The size is the local log's (DescribeLogDirs): bytes per message are counted over
            // the messages it holds, from a tiered partition's first local offset.
            let messages = match (earliest_local.or(earliest), h.latest) {
                (Some(e), Some(l)) if l > e => Some((l - e) as f64),
                _ => None,
            };
            let bytes_per_msg = match (size, messages) {
                (Some(b), Some(m)) => b as f64 / m,
                _ => 0.0,
            };
            let rates = match (h.counters.front(), h.offsets_at_ms) {
                (Some(oldest), Some(newest_at)) if newest_at > oldest.at_ms => {
                    let seconds = (newest_at - oldest.at_ms) as f64 / 1000.0;
                    let produced = (h.produced - oldest.produced).max(0) as f64 / seconds;
                    let consumed = (h.consumed - oldest.consumed).max(0) as f64 / seconds;
                    Some(PartitionRates {
                        producer_msg_rate: produced,
                        producer_byte_rate: produced * bytes_per_msg,
                        consumer_msg_rate: consumed,
                        consumer_byte_rate: consumed * bytes_per_msg,
                        window_ms: newest_at - oldest.at_ms,
                    })
                }
                _ => None,
            };
            let compacted = compacted.contains(&tp.topic);
            let avg_size = average_size(h.counters.iter().filter_map(|c| c.size), size, compacted);

            // Loads.
            referenced.extend(place.replicas.iter().copied());
            for b in &place.replicas {
                let l = loads.entry(*b).or_insert([0.0; 7]);
                if Some(*b) == place.leader {
                    l[0] += 1.0;
                    if let Some(r) = &rates {
                        l[3] += r.producer_msg_rate;
                        l[4] += r.producer_byte_rate;
                        l[5] += r.consumer_msg_rate;
                        l[6] += r.consumer_byte_rate;
                    }
                } else {
                    l[1] += 1.0;
                }
            }
            match topic_partitions.get_mut(tp.topic.as_str()) {
                Some(t) => {
                    t.0 += 1;
                    t.1 = t.1.max(place.replicas.len() as i32);
                }
                None => {
                    topic_partitions.insert(tp.topic.clone(), (1, place.replicas.len() as i32));
                }
            }

            for (b, log) in &place.logs {
                *disk.entry(*b).or_default() += log.size as i64;
            }
            let leader_size = place.leader.and_then(|l| place.log(l)).map(|r| r.size);
            for b in &place.replicas {
                let log = place.log(*b);
                w.replicas.push(ObservedReplica {
                    lag_bytes: follower_lag_bytes(place.leader == Some(*b), leader_size, log),
                    topic: tp.topic.clone(),
                    partition: tp.partition,
                    broker_id: *b,
                    is_future: false,
                    log_dir: log.map(|r| r.dir.to_string()),
                    size_bytes: log.map(|r| r.size as i64),
                    offset_lag: log.map(|r| r.offset_lag),
                });
            }
            if partition_readings {
                w.partition_readings.push(PartitionReading {
                    topic: tp.topic.clone(),
                    partition: tp.partition,
                    at_ms: now,
                    resolution_ms: 0,
                    values: [
                        avg_size,
                        rates.as_ref().map(|r| r.producer_msg_rate),
                        rates.as_ref().map(|r| r.producer_byte_rate),
                        rates.as_ref().map(|r| r.consumer_msg_rate),
                        rates.as_ref().map(|r| r.consumer_byte_rate),
                    ],
                });
            }
            let (adding, removing) = place.reassigning.map(|r| *r).unwrap_or_default();
            w.partitions.push(ObservedPartition {
                topic: tp.topic,
                partition: tp.partition,
                leader: place.leader,
                leader_epoch: place.leader_epoch,
                replicas: place.replicas,
                isr: place.isr,
                offline_replicas: place.offline_replicas,
                adding,
                removing,
                size_bytes: size,
                avg_size_bytes: avg_size,
                earliest_offset: earliest,
                local_start_offset: earliest_local,
                latest_offset: h.latest,
                offsets_at_ms: h.offsets_at_ms,
                produced_total: h.produced,
                consumed_total: h.consumed,
                rates,
            });
        }
        if partition_readings {
            self.last_partition_reading_ms = Some(now);
        }
        w.replicas.extend(future_rows);

        for (name, meta) in topics {
            let (partitions, rf) = topic_partitions
                .get(name.as_str())
                .copied()
                .unwrap_or((0, 0));
            w.topics.push(ObservedTopic {
                topic_id: meta.id,
                partitions,
                replication_factor: rf,
                internal: meta.internal,
                compacted: compacted.contains(&name),
                min_insync: min_insync.get(&name).copied(),
                retention_ms: meta.retention_ms,
                retention_bytes: meta.retention_bytes,
                cleanup_policy: meta.cleanup_policy,
                remote_storage: meta.remote_storage,
                name,
            });
        }

        // Brokers: those in the metadata, and those that hold replicas but are missing (down).
        let all_brokers: BTreeSet<BrokerId> = brokers.keys().copied().chain(referenced).collect();
        let mut log_dirs_read = 0;
        for id in &all_brokers {
            let alive = brokers.contains_key(id);
            let dirs = log_dirs.get(id);
            let read = matches!(dirs, Some(Ok(_)));
            log_dirs_read += u32::from(read);
            let (host, port) = addresses
                .get(id)
                .map_or((None, None), |(h, p)| (Some(h.clone()), Some(*p)));
            w.brokers.push(ObservedBroker {
                broker_id: *id,
                host,
                port,
                rack: brokers.get(id).cloned().flatten(),
                alive,
                first_seen_ms: alive.then_some(now),
                last_seen_ms: alive.then_some(now),
                log_dirs_read: read,
                log_dirs_error: match dirs {
                    Some(Err(e)) => Some(e.clone()),
                    None if !alive => Some("broker is not in the metadata".into()),
                    _ => None,
                },
            });
            if let Some(Ok(dirs)) = dirs {
                for d in dirs {
                    w.log_dirs.push(ObservedLogDir {
                        broker_id: *id,
                        path: d.path.clone(),
                        error: d.error.clone(),
                        total_bytes: d.total_bytes,
                        usable_bytes: d.usable_bytes,
                        used_bytes: d.used_bytes,
                        replicas: d.replicas,
                    });
                }
            }
            let l = loads.get(id).copied().unwrap_or([0.0; 7]);
            let mut values: [Option<f64>; 7] = l.map(Some);
            values[load_index(Load::DiskBytes)] =
                read.then(|| disk.get(id).copied().unwrap_or(0) as f64);
            w.readings.push(BrokerReading {
                broker_id: *id,
                at_ms: now,
                resolution_ms: 0,
                values,
            });
        }

        let c = &mut w.cluster;
        c.sampled_at_ms = now;
        c.cluster_id = cluster_id;
        c.controller_id = controller_id;
        c.controller_source = Some(controller_source.to_string());
        c.metadata_mode = metadata_mode.map(|m| m.as_str().to_string());
        c.kafka_version_min = kafka_version.as_ref().and_then(|v| v.min.clone());
        c.kafka_version_max = kafka_version.as_ref().and_then(|v| v.max.clone());
        c.quorum = quorum.as_ref().and_then(|q| serde_json::to_value(q).ok());
        c.brokers = brokers.len() as u32;
        c.log_dirs_read = log_dirs_read;
        c.partitions = partition_count;
        c.offsets_read = offsets_read;
        c.groups = w.groups.len() as u32;
        c.groups_read = groups_read;
        w
    }
}

/// Position of a load in [`Load::ALL`] (and in [`BrokerReading::values`]).
/// A replica's lag behind its leader in bytes: the leader's size minus its own, never below 0
/// (retention may trim a follower first); 0 for the leader; None when either size is unknown.
/// DescribeLogDirs' offset lag is no follower lag (Kafka 3.5+ reports 0 for current logs).
pub fn follower_lag_bytes(
    is_leader: bool,
    leader_size: Option<u64>,
    log: Option<&crate::sample::ReplicaLog>,
) -> Option<i64> {
    let own = log?.size;
    if is_leader {
        return Some(0);
    }
    leader_size.map(|l| i64::try_from(l.saturating_sub(own)).unwrap_or(i64::MAX))
}

pub fn load_index(load: Load) -> usize {
    Load::ALL.iter().position(|l| *l == load).unwrap_or(0)
}

/// The window's average size (the median for compacted topics), counting the current size.
fn average_size(
    kept: impl Iterator<Item = i64>,
    current: Option<i64>,
    compacted: bool,
) -> Option<f64> {
    let mut sizes: Vec<i64> = kept.chain(current).collect();
    if sizes.is_empty() {
        return None;
    }
    if compacted {
        sizes.sort_unstable();
        let n = sizes.len();
        return Some(if n % 2 == 1 {
            sizes[n / 2] as f64
        } else {
            (sizes[n / 2 - 1] + sizes[n / 2]) as f64 / 2.0
        });
    }
    Some(sizes.iter().map(|v| *v as f64).sum::<f64>() / sizes.len() as f64)
}

#[cfg(test)]
mod tests {

    #[test]
    fn follower_lag_is_the_leaders_size_minus_the_followers_never_below_zero() {
        let log = |size| crate::sample::ReplicaLog {
            dir: "/d".into(),
            size,
            offset_lag: 0,
        };
        assert_eq!(
            follower_lag_bytes(false, Some(10_000_000), Some(&log(6_900_000))),
            Some(3_100_000)
        );
        assert_eq!(
            follower_lag_bytes(true, Some(10_000_000), Some(&log(10_000_000))),
            Some(0)
        );
        // Retention trimmed the follower later than the leader: no negative lag.
        assert_eq!(
            follower_lag_bytes(false, Some(5_000), Some(&log(6_000))),
            Some(0)
        );
        assert_eq!(
            follower_lag_bytes(false, None, Some(&log(6_000))),
            None,
            "leader unread"
        );
        assert_eq!(
            follower_lag_bytes(false, Some(5_000), None),
            None,
            "follower unread"
        );
    }
    use super::*;
    use crate::sample::{GroupInfo, Placement, ReplicaLog, TopicMeta};

    const WINDOWS: Windows = Windows {
        rate_window_ms: 30 * MINUTE_MS,
        retention_ms: 7 * DAY_MS,
        partition_reading_ms: HOUR_MS,
    };

    fn tp(p: i32) -> TopicPartition {
        TopicPartition::new("t", p)
    }

    /// A sample of topic `t` with one partition per (latest, committed) pair, led by broker 1.
    fn sample(at_ms: i64, parts: &[(i64, i64)]) -> Sample {
        let mut s = Sample {
            at_ms,
            ..Sample::default()
        };
        s.brokers.insert(1, Some("r1".into()));
        s.brokers.insert(2, Some("r2".into()));
        s.topics.insert("t".into(), TopicMeta::default());
        s.groups.insert(
            "g".into(),
            GroupInfo {
                state: Some("Stable".into()),
                protocol_type: "consumer".into(),
                members: Some(1),
                coordinator: Some(1),
            },
        );
        for (i, (latest, committed)) in parts.iter().enumerate() {
            let p = tp(i as i32);
            let mut place = Placement::new(vec![1, 2], Some(1), vec![1, 2]);
            for b in [1, 2] {
                place.set_log(
                    b,
                    ReplicaLog {
                        dir: "/d".into(),
                        size: 100 * (*latest).max(0) as u64,
                        offset_lag: 0,
                    },
                );
            }
            place.earliest = Some(0);
            place.latest = Some(*latest);
            s.partitions.insert(p.clone(), place);
            s.committed
                .entry("g".into())
                .or_default()
                .insert(p, *committed);
        }
        s
    }

    fn observe(h: &mut History, s: &Sample) -> ObservedWrite {
        h.observe(s.clone(), WINDOWS, ClusterFacts::default())
    }

    fn rates(w: &ObservedWrite, p: i32) -> Option<PartitionRates> {
        w.partitions
            .iter()
            .find(|x| x.partition == p)
            .and_then(|x| x.rates)
    }

    #[test]
    fn partition_readings_are_written_every_interval_with_the_window_rates_and_size() {
        let mut h = History::default();
        let first = observe(&mut h, &sample(0, &[(1000, 500), (0, 0)]));
        assert_eq!(
            first.partition_readings.len(),
            2,
            "the first sample writes them"
        );
        assert_eq!(first.partition_readings[0].values[1], None, "no rate yet");
        let mid = observe(
            &mut h,
            &sample(30 * MINUTE_MS, &[(181_000, 90_500), (0, 0)]),
        );
        assert!(mid.partition_readings.is_empty(), "not before the interval");
        let due = observe(&mut h, &sample(HOUR_MS, &[(361_000, 180_500), (0, 0)]));
        assert_eq!(due.partition_readings.len(), 2);
        let r = &due.partition_readings[0];
        let rates = rates(&due, 0).expect("rates after three readings");
        assert_eq!((r.topic.as_str(), r.partition, r.at_ms), ("t", 0, HOUR_MS));
        assert_eq!(r.values[1], Some(rates.producer_msg_rate));
        assert_eq!(r.values[2], Some(rates.producer_byte_rate));
        assert_eq!(r.values[3], Some(rates.consumer_msg_rate));
        assert_eq!(r.values[4], Some(rates.consumer_byte_rate));
        let avg = due.partitions[0].avg_size_bytes;
        assert!(avg.is_some());
        assert_eq!(r.values[0], avg);

        // A restarted observer keeps the cadence from the store.
        let mut restarted = History::default();
        restarted.set_last_partition_reading(Some(HOUR_MS));
        let w = observe(
            &mut restarted,
            &sample(HOUR_MS + MINUTE_MS, &[(1, 1), (0, 0)]),
        );
        assert!(w.partition_readings.is_empty());
    }

    #[test]
    fn a_new_partition_has_no_rate_until_its_second_reading() {
        let mut h = History::default();
        let w = observe(&mut h, &sample(0, &[(1000, 500)]));
        assert_eq!(rates(&w, 0), None);
        let w = observe(&mut h, &sample(60_000, &[(7000, 3500)]));
        let r = rates(&w, 0).expect("a rate after two readings");
        assert_eq!(r.producer_msg_rate, 100.0);
        assert_eq!(r.consumer_msg_rate, 50.0);
        // 100 bytes per message.
        assert_eq!(r.producer_byte_rate, 10_000.0);
        assert_eq!(r.window_ms, 60_000);
    }

    #[test]
    fn rates_average_over_the_window_from_the_oldest_counter_inside_it() {
        let mut h = History::default();
        let mut last = None;
        // 100 msg/s for 40 minutes, then 200 msg/s for 20 minutes: the 30-minute window ending
        // at 60 min holds 10 min at 100 and 20 min at 200 (within a counter step).
        let mut latest = 0;
        for minute in 0..=60 {
            let s = sample(minute * MINUTE_MS, &[(latest, latest)]);
            last = Some(observe(&mut h, &s));
            latest += if minute < 40 { 6_000 } else { 12_000 };
        }
        let r = rates(&last.unwrap(), 0).unwrap();
        assert!(r.window_ms >= 27 * MINUTE_MS && r.window_ms <= 30 * MINUTE_MS);
        let expected = (100.0 * (r.window_ms as f64 - 20.0 * 60_000.0) + 200.0 * 20.0 * 60_000.0)
            / r.window_ms as f64;
        assert!(
            (r.producer_msg_rate - expected).abs() < 1.0,
            "{r:?} vs {expected}"
        );
        assert!(
            (r.consumer_msg_rate - expected).abs() < 1.0,
            "consumption follows"
        );
        // About ten counters per window are kept, not one per sample.
        assert!(h.partitions[&tp(0)].counters.len() <= 11);
    }

    #[test]
    fn a_log_end_that_goes_backwards_restarts_the_window_without_a_negative_or_spiking_rate() {
        let mut h = History::default();
        observe(&mut h, &sample(0, &[(10_000, 10_000)]));
        observe(&mut h, &sample(60_000, &[(16_000, 16_000)]));
        // The topic was recreated: offsets start again near 0.
        let w = observe(&mut h, &sample(120_000, &[(100, 0)]));
        assert_eq!(rates(&w, 0), None, "the window restarts");
        assert_eq!(w.cleared_counters, vec![("t".to_string(), 0)]);
        let w = observe(&mut h, &sample(180_000, &[(6_100, 6_000)]));
        let r = rates(&w, 0).unwrap();
        assert_eq!(r.producer_msg_rate, 100.0);
        assert_eq!(r.consumer_msg_rate, 100.0);
        // The totals never went down.
        let p = &w.partitions[0];
        assert_eq!(p.produced_total, 6_000 + 6_000);
    }

    #[test]
    fn an_offset_reset_is_not_consumption() {
        let mut h = History::default();
        observe(&mut h, &sample(0, &[(10_000, 10_000)]));
        // Reset to the beginning: no negative rate.
        let w = observe(&mut h, &sample(60_000, &[(16_000, 0)]));
        let r = rates(&w, 0).unwrap();
        assert_eq!(r.consumer_msg_rate, 0.0);
        // An idle group reset forward to the log end reads as at most what was produced.
        let mut s = sample(120_000, &[(22_000, 22_000)]);
        s.groups.get_mut("g").unwrap().members = Some(0);
        s.groups.get_mut("g").unwrap().state = Some("Empty".into());
        let w = observe(&mut h, &s);
        let r = rates(&w, 0).unwrap();
        assert!(r.consumer_msg_rate <= r.producer_msg_rate, "{r:?}");
    }

    #[test]
    fn a_new_group_adds_nothing_on_its_first_reading() {
        let mut h = History::default();
        observe(&mut h, &sample(0, &[(10_000, 10_000)]));
        let mut s = sample(60_000, &[(16_000, 16_000)]);
        s.groups.insert("new".into(), GroupInfo::default());
        s.committed
            .entry("new".into())
            .or_default()
            .insert(tp(0), 15_000);
        let w = observe(&mut h, &s);
        assert_eq!(rates(&w, 0).unwrap().consumer_msg_rate, 100.0);
    }

    #[test]
    fn a_partition_whose_offsets_are_unreadable_keeps_its_rate_and_catches_up() {
        let mut h = History::default();
        observe(&mut h, &sample(0, &[(0, 0)]));
        observe(&mut h, &sample(60_000, &[(6_000, 6_000)]));
        // The leader is down: no offsets this time.
        let mut s = sample(120_000, &[(0, 0)]);
        for p in s.partitions.values_mut() {
            p.latest = None;
        }
        s.committed.clear();
        let w = observe(&mut h, &s);
        assert_eq!(rates(&w, 0).unwrap().producer_msg_rate, 100.0);
        assert!(w.counters.is_empty());
        // Back: the messages produced meanwhile count once.
        let w = observe(&mut h, &sample(180_000, &[(18_000, 18_000)]));
        let r = rates(&w, 0).unwrap();
        assert_eq!(r.producer_msg_rate, 100.0);
        assert_eq!(r.consumer_msg_rate, 100.0);
    }

    #[test]
    fn a_failed_group_listing_loses_no_consumption() {
        let mut h = History::default();
        observe(&mut h, &sample(0, &[(0, 0)]));
        let mut s = sample(60_000, &[(6_000, 6_000)]);
        s.groups.clear();
        s.committed.clear();
        s.groups_error = Some("timeout".into());
        let w = observe(&mut h, &s);
        assert_eq!(rates(&w, 0).unwrap().consumer_msg_rate, 0.0);
        // Read again: what was consumed meanwhile counts.
        let w = observe(&mut h, &sample(120_000, &[(12_000, 12_000)]));
        assert_eq!(rates(&w, 0).unwrap().consumer_msg_rate, 100.0);
    }

    #[test]
    fn deleted_partitions_are_forgotten_with_their_counters() {
        let mut h = History::default();
        observe(&mut h, &sample(0, &[(0, 0), (0, 0)]));
        let w = observe(&mut h, &sample(60_000, &[(10, 10)]));
        assert_eq!(w.cleared_counters, vec![("t".to_string(), 1)]);
        assert_eq!(w.partitions.len(), 1);
        assert_eq!(h.len(), 1);
    }

    #[test]
    fn broker_loads_count_leaders_followers_disk_and_led_rates() {
        let mut h = History::default();
        observe(&mut h, &sample(0, &[(0, 0), (0, 0)]));
        let mut s = sample(10_000, &[(1000, 500), (2000, 1000)]);
        // Broker 2's log dirs were not read: its disk is unknown.
        s.log_dirs.insert(1, Ok(vec![]));
        s.log_dirs.insert(2, Err("timeout".into()));
        // Broker 3 holds a replica but is not in the metadata.
        s.partitions.get_mut(&tp(1)).unwrap().replicas.push(3);
        let w = observe(&mut h, &s);
        let by_id: BTreeMap<i32, &BrokerReading> =
            w.readings.iter().map(|r| (r.broker_id, r)).collect();
        let b1 = by_id[&1];
        assert_eq!(b1.get(Load::LeaderCount), Some(2.0));
        assert_eq!(b1.get(Load::FollowerCount), Some(0.0));
        assert_eq!(b1.get(Load::DiskBytes), Some(100.0 * 3000.0));
        assert_eq!(b1.get(Load::ProducerMsgRate), Some(300.0));
        assert_eq!(b1.get(Load::ConsumerMsgRate), Some(150.0));
        let b2 = by_id[&2];
        assert_eq!(b2.get(Load::FollowerCount), Some(2.0));
        assert_eq!(b2.get(Load::DiskBytes), None);
        assert_eq!(b2.get(Load::ProducerMsgRate), Some(0.0));
        let b3 = w.brokers.iter().find(|b| b.broker_id == 3).unwrap();
        assert!(!b3.alive);
        assert_eq!(by_id[&3].get(Load::FollowerCount), Some(1.0));
        assert_eq!(w.cluster.log_dirs_read, 1);
    }

    #[test]
    fn a_leader_change_moves_the_led_rates_to_the_new_leader_without_a_spike() {
        let mut h = History::default();
        observe(&mut h, &sample(0, &[(0, 0)]));
        let w = observe(&mut h, &sample(10_000, &[(1000, 500)]));
        let before = rates(&w, 0).unwrap();
        // Broker 2 takes over leadership; traffic carries on at the same pace.
        let mut s = sample(20_000, &[(2000, 1000)]);
        if let Some(p) = s.partitions.get_mut(&tp(0)) {
            p.leader = Some(2);
        }
        let w = observe(&mut h, &s);
        let after = rates(&w, 0).unwrap();
        assert_eq!(after.producer_msg_rate, before.producer_msg_rate);
        assert_eq!(after.consumer_msg_rate, before.consumer_msg_rate);
        let load = |b: i32, l: Load| {
            w.readings
                .iter()
                .find(|r| r.broker_id == b)
                .and_then(|r| r.get(l))
        };
        assert_eq!(load(1, Load::ProducerMsgRate), Some(0.0));
        assert_eq!(load(2, Load::ProducerMsgRate), Some(100.0));
        assert_eq!(load(2, Load::LeaderCount), Some(1.0));
        assert_eq!(load(1, Load::FollowerCount), Some(1.0));
    }

    #[test]
    fn retention_deleting_old_segments_gives_no_negative_or_spiking_rate() {
        let mut h = History::default();
        observe(&mut h, &sample(0, &[(0, 0)]));
        observe(&mut h, &sample(10_000, &[(1000, 1000)]));
        // The log start jumps forward and the replicas shrink; the log end keeps growing.
        let mut s = sample(20_000, &[(2000, 2000)]);
        let p = s.partitions.get_mut(&tp(0)).unwrap();
        p.earliest = Some(1900);
        for (_, r) in p.logs.iter_mut() {
            r.size = 100 * 100;
        }
        let w = observe(&mut h, &s);
        let r = rates(&w, 0).unwrap();
        assert_eq!(r.producer_msg_rate, 100.0);
        assert_eq!(r.consumer_msg_rate, 100.0);
        // Still 100 bytes per message: the byte rate neither spikes nor goes negative.
        assert_eq!(r.producer_byte_rate, 10_000.0);
    }

    #[test]
    fn compacted_topics_count_at_their_steady_size() {
        let sizes = [100, 100, 100, 5_000];
        assert_eq!(
            average_size(sizes.iter().copied(), Some(100), true),
            Some(100.0)
        );
        assert_eq!(
            average_size(sizes.iter().copied(), Some(100), false),
            Some(1080.0)
        );
        assert_eq!(average_size(std::iter::empty(), None, false), None);
    }

    #[test]
    fn history_rebuilt_from_the_store_carries_on_where_it_stopped() {
        let mut h = History::default();
        let mut writes = Vec::new();
        for minute in 0..5 {
            let latest = minute * 6_000;
            writes.push(observe(
                &mut h,
                &sample(minute * MINUTE_MS, &[(latest, latest)]),
            ));
        }
        let last = writes.last().unwrap();
        let totals: Vec<PartitionTotals> = last
            .partitions
            .iter()
            .map(|p| PartitionTotals {
                topic: p.topic.clone(),
                partition: p.partition,
                latest_offset: p.latest_offset,
                offsets_at_ms: p.offsets_at_ms,
                produced_total: p.produced_total,
                consumed_total: p.consumed_total,
            })
            .collect();
        let counters: Vec<PartitionCounter> =
            writes.iter().flat_map(|w| w.counters.clone()).collect();
        let mut restarted = History::from_store(totals, last.group_offsets.clone(), counters);
        let mut original = h.clone();
        let s = sample(5 * MINUTE_MS, &[(30_000, 30_000)]);
        let a = observe(&mut original, &s);
        let b = observe(&mut restarted, &s);
        assert_eq!(a.partitions, b.partitions);
        assert_eq!(rates(&b, 0).unwrap().producer_msg_rate, 100.0);
    }
}
