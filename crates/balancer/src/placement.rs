//! Where new replicas go: a new topic's partitions, partitions added to a topic, and the replicas
//! a replication-factor change adds or drops. The topic lifecycle operations
//! (`ballast_ops::topic_lifecycle`), self-healing's replication-factor loop and the what-if
//! scenarios all place replicas here, so the cluster gets what the simulation showed.
//!
//! The rules, in order, for each new replica (the leader first):
//! 1. only brokers that take load (up, not in maintenance), never one the partition already has;
//! 2. a rack the partition does not use yet (rack awareness);
//! 3. no broker given more than one beyond the topic's even share (rounded up) of its replicas
//!    (for a leader: of its leaders too) while another broker can take it, so no broker serves
//!    most of a topic;
//! 4. no broker pushed beyond the trigger above its fair share of leaders (for a leader) or of
//!    replicas, where another broker can take it (fair shares counted with the new replicas);
//! 5. within the topic's even share before one beyond it, then the fewest replicas (for a
//!    leader: leaders) of the topic;
//! 6. then the fewest of the whole cluster, then the least disk, then the lowest id.
//!
//! A replica dropped by a lower replication factor is a follower, never the leader: first one on
//! a broker that takes no load, then one whose rack keeps another replica, then the one on the
//! broker holding the most replicas of the topic, then the last in the list.
//!
//! Pure and deterministic: the same snapshot gives the same placement.

use std::collections::{BTreeSet, HashMap};

use ballast_model::snapshot::{Snapshot, SnapshotPartition};
use ballast_model::BrokerId;

/// Per-broker counts that steer where new replicas go.
#[derive(Default, Clone, Copy)]
pub(crate) struct Counts {
    pub(crate) replicas: u64,
    pub(crate) leaders: u64,
    pub(crate) disk: u64,
}

/// Counts of the whole cluster and of one topic, by broker.
#[derive(Default)]
pub(crate) struct Tallies {
    all: HashMap<BrokerId, Counts>,
    topic: HashMap<BrokerId, Counts>,
}

impl Tallies {
    pub(crate) fn of(snap: &Snapshot, topic: &str) -> Tallies {
        let mut t = Tallies::default();
        for p in &snap.partitions {
            let same = p.topic == topic;
            for r in &p.replicas {
                let lead = p.leader == Some(*r);
                t.add(*r, lead, p.size_bytes, same);
            }
        }
        t
    }

    pub(crate) fn add(&mut self, b: BrokerId, leader: bool, size: u64, same_topic: bool) {
        let bump = |c: &mut Counts| {
            c.replicas += 1;
            c.leaders += u64::from(leader);
            c.disk = c.disk.saturating_add(size);
        };
        bump(self.all.entry(b).or_default());
        if same_topic {
            bump(self.topic.entry(b).or_default());
        }
    }

    pub(crate) fn remove(&mut self, b: BrokerId, size: u64) {
        for map in [&mut self.all, &mut self.topic] {
            if let Some(c) = map.get_mut(&b) {
                c.replicas = c.replicas.saturating_sub(1);
                c.disk = c.disk.saturating_sub(size);
            }
        }
    }

    pub(crate) fn all(&self, b: BrokerId) -> Counts {
        self.all.get(&b).copied().unwrap_or_default()
    }

    pub(crate) fn topic(&self, b: BrokerId) -> Counts {
        self.topic.get(&b).copied().unwrap_or_default()
    }
}

/// The most leaders and replicas a broker may hold before it is beyond the trigger above its
/// fair share (rule 3); `None` places without that rule (the what-if scenarios as before).
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Caps {
    pub(crate) leaders: u64,
    pub(crate) replicas: u64,
    /// The topic's even share (rounded up) of its leaders and replicas.
    pub(crate) topic_leaders: u64,
    pub(crate) topic_replicas: u64,
}

impl Caps {
    /// Fair shares over `eligible` brokers once `new_leaders` and `new_replicas` (of `topic`)
    /// are added, `trigger_pct` above them; the topic's even shares.
    fn of(
        snap: &Snapshot,
        topic: &str,
        eligible: usize,
        new_leaders: u64,
        new_replicas: u64,
        trigger_pct: f64,
    ) -> Caps {
        let count = |only_topic: bool| {
            snap.partitions
                .iter()
                .filter(|p| !only_topic || p.topic == topic)
                .fold((0u64, 0u64), |(l, r), p| {
                    (
                        l + u64::from(p.leader.is_some()),
                        r + p.replicas.len() as u64,
                    )
                })
        };
        let (leaders, replicas) = count(false);
        let (topic_leaders, topic_replicas) = count(true);
        let n = eligible.max(1) as u64;
        let cap =
            |total: u64| ((total as f64 / n as f64) * (1.0 + trigger_pct / 100.0)).floor() as u64;
        Caps {
            leaders: cap(leaders + new_leaders),
            replicas: cap(replicas + new_replicas),
            topic_leaders: (topic_leaders + new_leaders).div_ceil(n),
            topic_replicas: (topic_replicas + new_replicas).div_ceil(n),
        }
    }
}

/// The best broker for a new replica of a partition held by `holders` (the rules above).
pub(crate) fn pick(
    eligible: &[BrokerId],
    holders: &[BrokerId],
    racks: &HashMap<BrokerId, Option<String>>,
    tallies: &Tallies,
    leader: bool,
    caps: Option<Caps>,
) -> Option<BrokerId> {
    let rack = |b: &BrokerId| racks.get(b).and_then(|r| r.as_deref());
    eligible
        .iter()
        .filter(|b| !holders.contains(b))
        .min_by_key(|b| {
            let r = rack(b);
            let rack_used = r.is_some() && holders.iter().any(|h| rack(h) == r);
            let (t, a) = (tallies.topic(**b), tallies.all(**b));
            // How far beyond the topic's even share the broker would go (0: within it).
            let over_topic = caps.map_or(0, |c| {
                let over = |have: u64, share: u64| (have + 1).saturating_sub(share);
                if leader {
                    over(t.replicas, c.topic_replicas).max(over(t.leaders, c.topic_leaders))
                } else {
                    over(t.replicas, c.topic_replicas)
                }
            });
            let beyond = caps.is_some_and(|c| {
                a.replicas + 1 > c.replicas || (leader && a.leaders + 1 > c.leaders)
            });
            let (first, second) = if leader {
                (t.leaders, a.leaders)
            } else {
                (t.replicas, a.replicas)
            };
            (
                rack_used,
                over_topic > 1,
                beyond,
                over_topic,
                first,
                t.replicas,
                second,
                a.disk,
                **b,
            )
        })
        .copied()
}

/// The replicas of one new partition of `size` bytes, the leader first, each picked by the rules
/// above and counted in `tallies` (fewer than `rf` when too few brokers are eligible).
pub(crate) fn place_one(
    eligible: &[BrokerId],
    racks: &HashMap<BrokerId, Option<String>>,
    tallies: &mut Tallies,
    rf: usize,
    size: u64,
    caps: Option<Caps>,
) -> Vec<BrokerId> {
    let mut replicas: Vec<BrokerId> = Vec::with_capacity(rf);
    while replicas.len() < rf {
        let leader = replicas.is_empty();
        let Some(b) = pick(eligible, &replicas, racks, tallies, leader, caps) else {
            break;
        };
        tallies.add(b, leader, size, true);
        replicas.push(b);
    }
    replicas
}

/// Brokers that take load, by id.
pub(crate) fn eligible(snap: &Snapshot) -> Vec<BrokerId> {
    let mut ids: Vec<BrokerId> = snap
        .brokers
        .iter()
        .filter(|b| b.state.takes_load())
        .map(|b| b.id)
        .collect();
    ids.sort_unstable();
    ids
}

pub(crate) fn racks(snap: &Snapshot) -> HashMap<BrokerId, Option<String>> {
    snap.brokers
        .iter()
        .map(|b| (b.id, b.rack.clone()))
        .collect()
}

/// Why replicas could not be placed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PlaceError {
    /// Fewer brokers take load than the replication factor asks for.
    TooFewBrokers {
        replication_factor: usize,
        eligible: usize,
    },
    /// The topic has no partition in the snapshot.
    UnknownTopic(String),
    /// A named partition is not in the topic.
    UnknownPartition(i32),
}

impl std::fmt::Display for PlaceError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            PlaceError::TooFewBrokers {
                replication_factor,
                eligible,
            } => write!(
                f,
                "replication factor {replication_factor} needs {replication_factor} brokers that take load (up and not in maintenance); the cluster has {eligible}"
            ),
            PlaceError::UnknownTopic(t) => write!(f, "topic {t} is not in the cluster"),
            PlaceError::UnknownPartition(p) => write!(f, "partition {p} is not in the topic"),
        }
    }
}

impl std::error::Error for PlaceError {}

/// One partition's replicas, the leader first.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Placed {
    pub partition: i32,
    pub replicas: Vec<BrokerId>,
}

/// Places `count` new partitions of `topic` (numbered from `first`) with `rf` replicas each:
/// a new topic (`first` 0) or partitions added to one. `trigger_pct` is the proposals' trigger
/// (rule 3). The snapshot should be the cluster as the planner sees it (brokers in maintenance
/// marked so).
pub fn new_partitions(
    snapshot: &Snapshot,
    topic: &str,
    first: i32,
    count: usize,
    rf: usize,
    trigger_pct: f64,
) -> Result<Vec<Placed>, PlaceError> {
    let eligible = eligible(snapshot);
    if rf == 0 || rf > eligible.len() {
        return Err(PlaceError::TooFewBrokers {
            replication_factor: rf,
            eligible: eligible.len(),
        });
    }
    let racks = racks(snapshot);
    let mut tallies = Tallies::of(snapshot, topic);
    let caps = Caps::of(
        snapshot,
        topic,
        eligible.len(),
        count as u64,
        (count * rf) as u64,
        trigger_pct,
    );
    let mut placed = Vec::with_capacity(count);
    for i in 0..count {
        let replicas = place_one(&eligible, &racks, &mut tallies, rf, 0, Some(caps));
        placed.push(Placed {
            partition: first.saturating_add(i32::try_from(i).unwrap_or(i32::MAX)),
            replicas,
        });
    }
    Ok(placed)
}

/// What a replication-factor change does to one partition.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Resized {
    pub partition: i32,
    pub before: Vec<BrokerId>,
    pub after: Vec<BrokerId>,
}

/// What [`resize`] did, for the what-if answer.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub(crate) struct Resizing {
    pub(crate) added: usize,
    pub(crate) dropped: usize,
    pub(crate) touched: usize,
    /// Partitions left short of the factor (too few brokers).
    pub(crate) short: usize,
    pub(crate) min_isr: i64,
    pub(crate) old_rfs: BTreeSet<usize>,
}

/// Sets the replication factor of `topic`'s partitions (those in `only`, or all) to `rf` in
/// `snap`, placing added replicas and choosing dropped ones by the rules above. `trigger_pct`:
/// rules 3 and 4, or neither. Partitions stay in `snap`'s order; each keeps its leader.
pub(crate) fn resize(
    snap: &mut Snapshot,
    topic: &str,
    only: Option<&BTreeSet<i32>>,
    rf: usize,
    trigger_pct: Option<f64>,
) -> Resizing {
    let eligible = eligible(snap);
    let eligible_set: BTreeSet<BrokerId> = eligible.iter().copied().collect();
    let racks = racks(snap);
    let rack = |b: &BrokerId| racks.get(b).cloned().flatten();
    let mut tallies = Tallies::of(snap, topic);
    let in_scope =
        |p: &SnapshotPartition| p.topic == topic && only.is_none_or(|o| o.contains(&p.partition));
    let added_replicas: u64 = snap
        .partitions
        .iter()
        .filter(|p| in_scope(p))
        .map(|p| rf.saturating_sub(p.replicas.len()) as u64)
        .sum();
    let caps = trigger_pct.map(|t| Caps::of(snap, topic, eligible.len(), 0, added_replicas, t));
    let mut r = Resizing {
        min_isr: 1,
        ..Resizing::default()
    };
    for p in snap.partitions.iter_mut().filter(|p| in_scope(p)) {
        r.min_isr = r.min_isr.max(i64::from(p.min_insync_replicas));
        r.old_rfs.insert(p.replicas.len());
        let mut isr: Vec<BrokerId> = p.isr_or_replicas().to_vec();
        let before = p.replicas.len();
        while p.replicas.len() < rf {
            match pick(&eligible, &p.replicas, &racks, &tallies, false, caps) {
                Some(b) => {
                    p.replicas.push(b);
                    isr.push(b);
                    tallies.add(b, false, p.size_bytes, true);
                    r.added += 1;
                }
                None => {
                    r.short += 1;
                    break;
                }
            }
        }
        while p.replicas.len() > rf {
            let leader = p.leader.filter(|l| p.replicas.contains(l));
            let victim = p
                .replicas
                .iter()
                .enumerate()
                .filter(|(_, b)| Some(**b) != leader)
                .max_by_key(|(pos, b)| {
                    let r = rack(b);
                    let shared = r.is_some() && p.replicas.iter().any(|o| o != *b && rack(o) == r);
                    (
                        !eligible_set.contains(b),
                        shared,
                        tallies.topic(**b).replicas,
                        *pos,
                    )
                })
                .map(|(pos, b)| (pos, *b));
            let Some((pos, b)) = victim else { break };
            p.replicas.remove(pos);
            isr.retain(|r| *r != b);
            tallies.remove(b, p.size_bytes);
            r.dropped += 1;
        }
        if p.replicas.len() != before {
            r.touched += 1;
        }
        p.isr = Some(isr);
    }
    r
}

/// The partitions of `topic` (those in `only`, or all) at replication factor `rf`: every one
/// whose replicas change, with its replicas before and after. `trigger_pct` is rule 3.
pub fn replication_factor(
    snapshot: &Snapshot,
    topic: &str,
    only: Option<&BTreeSet<i32>>,
    rf: usize,
    trigger_pct: f64,
) -> Result<Vec<Resized>, PlaceError> {
    let before: Vec<&SnapshotPartition> = snapshot
        .partitions
        .iter()
        .filter(|p| p.topic == topic)
        .collect();
    if before.is_empty() {
        return Err(PlaceError::UnknownTopic(topic.to_string()));
    }
    if let Some(missing) = only
        .into_iter()
        .flatten()
        .find(|n| !before.iter().any(|p| p.partition == **n))
    {
        return Err(PlaceError::UnknownPartition(*missing));
    }
    let eligible = eligible(snapshot).len();
    if rf == 0 || rf > eligible {
        return Err(PlaceError::TooFewBrokers {
            replication_factor: rf,
            eligible,
        });
    }
    let mut after = snapshot.clone();
    resize(&mut after, topic, only, rf, Some(trigger_pct));
    let old: HashMap<i32, &Vec<BrokerId>> =
        before.iter().map(|p| (p.partition, &p.replicas)).collect();
    let mut out: Vec<Resized> = after
        .partitions
        .iter()
        .filter(|p| p.topic == topic)
        .filter_map(|p| {
            let b = old.get(&p.partition)?;
            (**b != p.replicas).then(|| Resized {
                partition: p.partition,
                before: (*b).clone(),
                after: p.replicas.clone(),
            })
        })
        .collect();
    out.sort_by_key(|r| r.partition);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use ballast_model::snapshot::SnapshotBroker;
    use ballast_model::BrokerState;

    fn broker(id: BrokerId, rack: &str, state: BrokerState) -> SnapshotBroker {
        SnapshotBroker {
            id,
            rack: Some(rack.into()),
            state,
        }
    }

    fn part(topic: &str, n: i32, replicas: &[BrokerId]) -> SnapshotPartition {
        SnapshotPartition {
            topic: topic.into(),
            partition: n,
            replicas: replicas.to_vec(),
            leader: replicas.first().copied(),
            isr: None,
            size_bytes: 1000,
            compacted: false,
            min_insync_replicas: 1,
            producer_msg_rate: 0.0,
            producer_byte_rate: 0.0,
            consumer_msg_rate: 0.0,
            consumer_byte_rate: 0.0,
            last_moved_at: None,
        }
    }

    /// Six brokers over three racks; broker 1 leads and holds far more than its share.
    fn cluster() -> Snapshot {
        let brokers = (1..=6)
            .map(|id| {
                broker(
                    id,
                    ["a", "b", "c"][(id as usize - 1) % 3],
                    BrokerState::Alive,
                )
            })
            .collect();
        let mut partitions = Vec::new();
        // Rack-aware pairs, every one led by broker 1 (rack a).
        for n in 0..12 {
            partitions.push(part("old", n, &[1, [2, 3, 5, 6][n as usize % 4]]));
        }
        Snapshot {
            brokers,
            partitions,
            format: "ballast.snapshot/v1".into(),
            taken_at: "2026-11-29T00:00:00Z".into(),
            cluster_id: None,
        }
    }

    #[test]
    fn a_new_topic_spreads_leaders_and_replicas_evenly_rack_aware_and_spares_the_overloaded_broker()
    {
        let snap = cluster();
        let placed = new_partitions(&snap, "new", 0, 6, 3, 10.0).expect("placed");
        assert_eq!(placed.len(), 6);
        let mut leaders: HashMap<BrokerId, usize> = HashMap::new();
        let mut replicas: HashMap<BrokerId, usize> = HashMap::new();
        for p in &placed {
            assert_eq!(p.replicas.len(), 3);
            let racks: BTreeSet<BrokerId> = p.replicas.iter().map(|b| (b - 1) % 3).collect();
            assert_eq!(racks.len(), 3, "one replica a rack: {p:?}");
            *leaders.entry(p.replicas[0]).or_default() += 1;
            for b in &p.replicas {
                *replicas.entry(*b).or_default() += 1;
            }
        }
        // Broker 1 already leads 12 partitions (fair share after: 18/6 = 3): it leads none.
        assert_eq!(leaders.get(&1), None, "{leaders:?}");
        // Broker 1 holds 12 of the 24 replicas (fair share after: 42/6 = 7): of rack a's six
        // replicas of the new topic, its other broker, 4, takes one beyond the topic's even
        // share (3) before broker 1 takes any; the other racks' spread evenly.
        assert_eq!(replicas.get(&1), Some(&2), "{replicas:?}");
        assert_eq!(replicas.get(&4), Some(&4), "{replicas:?}");
        for b in [2, 3, 5, 6] {
            assert_eq!(replicas.get(&b), Some(&3), "{replicas:?}");
        }
    }

    #[test]
    fn no_replica_is_placed_on_a_broker_in_maintenance_or_down() {
        let mut snap = cluster();
        snap.brokers[2].state = BrokerState::Maintenance;
        snap.brokers[3].state = BrokerState::Down;
        let placed = new_partitions(&snap, "new", 0, 8, 2, 10.0).expect("placed");
        assert!(placed
            .iter()
            .all(|p| !p.replicas.contains(&3) && !p.replicas.contains(&4)));
        assert_eq!(
            new_partitions(&snap, "new", 0, 1, 5, 10.0),
            Err(PlaceError::TooFewBrokers {
                replication_factor: 5,
                eligible: 4
            })
        );
    }

    #[test]
    fn added_partitions_are_numbered_after_the_last_and_even_the_topic() {
        let snap = cluster();
        let placed = new_partitions(&snap, "old", 12, 4, 2, 10.0).expect("placed");
        assert_eq!(
            placed.iter().map(|p| p.partition).collect::<Vec<_>>(),
            vec![12, 13, 14, 15]
        );
        assert!(placed.iter().all(|p| p.replicas[0] != 1));
    }

    #[test]
    fn a_higher_replication_factor_adds_a_replica_on_a_rack_the_partition_lacks_and_keeps_the_others(
    ) {
        let snap = cluster();
        let changed = replication_factor(&snap, "old", None, 3, 10.0).expect("planned");
        assert_eq!(changed.len(), 12);
        for c in &changed {
            assert_eq!(c.after.len(), 3);
            assert_eq!(&c.after[..2], &c.before[..], "kept in order: {c:?}");
            let racks: BTreeSet<BrokerId> = c.after.iter().map(|b| (b - 1) % 3).collect();
            assert_eq!(racks.len(), 3, "{c:?}");
        }
    }

    #[test]
    fn a_lower_replication_factor_drops_a_follower_never_the_leader_and_only_named_partitions() {
        let mut snap = cluster();
        for p in &mut snap.partitions {
            p.replicas.push(if p.replicas.contains(&3) { 6 } else { 3 });
        }
        let only: BTreeSet<i32> = [0, 5].into();
        let changed = replication_factor(&snap, "old", Some(&only), 2, 10.0).expect("planned");
        assert_eq!(
            changed.iter().map(|c| c.partition).collect::<Vec<_>>(),
            vec![0, 5]
        );
        for c in &changed {
            assert_eq!(c.after.len(), 2);
            assert_eq!(c.after[0], c.before[0], "the leader stays");
        }
        assert_eq!(
            replication_factor(&snap, "old", Some(&[99].into()), 2, 10.0),
            Err(PlaceError::UnknownPartition(99))
        );
        assert_eq!(
            replication_factor(&snap, "nope", None, 2, 10.0),
            Err(PlaceError::UnknownTopic("nope".into()))
        );
    }

    #[test]
    fn the_same_snapshot_gives_the_same_placement() {
        let snap = cluster();
        assert_eq!(
            new_partitions(&snap, "new", 0, 9, 2, 10.0),
            new_partitions(&snap, "new", 0, 9, 2, 10.0)
        );
    }
}
