//! Scenarios: generated deterministically from [`GenerateParams`], or loaded from a
//! `ballast.snapshot/v1` document; and the model exported back as a snapshot.

use std::collections::BTreeMap;

use ballast_model::snapshot::{Snapshot, SnapshotBroker, SnapshotPartition, SNAPSHOT_FORMAT};
use ballast_model::BrokerState;

use crate::state::groups::SimGroup;
use crate::state::{Cluster, Group, Member, NewPartition, Rates};
use crate::util::{iso8601, parse_iso8601, Rng};

/// How a generated scenario is unbalanced, so ballast has something to do.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Skew {
    /// Rack-aware round robin: balanced.
    #[default]
    None,
    /// The first broker holds many more replicas and leaders, and bigger partitions.
    HotBroker,
    /// Leadership concentrated on the first half of the brokers.
    Leaders,
    /// The last broker was just added and holds nothing.
    NewBroker,
}

impl std::str::FromStr for Skew {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "none" => Ok(Skew::None),
            "hot-broker" => Ok(Skew::HotBroker),
            "leaders" => Ok(Skew::Leaders),
            "new-broker" => Ok(Skew::NewBroker),
            other => Err(format!(
                "unknown skew {other:?}: expected none, hot-broker, leaders or new-broker"
            )),
        }
    }
}

/// Parameters of a generated scenario. The same parameters give the same cluster.
#[derive(Debug, Clone)]
pub struct GenerateParams {
    pub brokers: u32,
    /// 0: no rack layout.
    pub racks: u32,
    pub topics: u32,
    pub partitions_per_topic: u32,
    pub replication_factor: u32,
    pub seed: u64,
    pub skew: Skew,
    /// Mean size of one replica in bytes (sizes spread log-normally around it).
    pub mean_partition_bytes: f64,
    /// Mean produce rate of one partition, messages per second.
    pub mean_msg_rate: f64,
    /// Average message size in bytes.
    pub msg_bytes: f64,
    /// Id of the first broker; the others follow.
    pub first_broker_id: i32,
    /// Exactly this many consumer groups, spread over the topics from the seed (at most
    /// [`MAX_GROUPS_PER_TOPIC`] a topic, every group with a committed offset on each partition of
    /// its topic); None: 0 to 3 a topic, drawn from the seed (1.4 on average).
    pub groups: Option<u32>,
}

/// The most consumer groups a generated topic has (and a snapshot's consumer rate gives).
pub const MAX_GROUPS_PER_TOPIC: u32 = 4;

/// How many groups each of `topics` topics consumes so that they add up to `groups`: an equal
/// share each, the remainder to topics picked from the seed. Deterministic; at most
/// [`MAX_GROUPS_PER_TOPIC`] a topic (the total is cut there).
pub fn spread_groups(groups: u32, topics: u32, seed: u64) -> Vec<u32> {
    if topics == 0 {
        return Vec::new();
    }
    let groups = groups.min(topics.saturating_mul(MAX_GROUPS_PER_TOPIC));
    let mut counts = vec![groups / topics; topics as usize];
    let mut order: Vec<usize> = (0..topics as usize).collect();
    // Its own stream, so partitions and rates are those of the same seed without `groups`.
    let mut rng = Rng::new(seed ^ 0x6772_6f75_7073);
    for i in (1..order.len()).rev() {
        let j = rng.below(i as u64 + 1) as usize;
        order.swap(i, j);
    }
    for t in order.iter().take((groups % topics) as usize) {
        counts[*t] += 1;
    }
    counts
}

impl Default for GenerateParams {
    fn default() -> Self {
        GenerateParams {
            brokers: 6,
            racks: 3,
            topics: 12,
            partitions_per_topic: 12,
            replication_factor: 3,
            seed: 1,
            skew: Skew::None,
            mean_partition_bytes: 512e6,
            mean_msg_rate: 100.0,
            msg_bytes: 512.0,
            first_broker_id: 1,
            groups: None,
        }
    }
}

const TOPIC_WORDS: &[&str] = &[
    "orders",
    "payments",
    "clicks",
    "inventory",
    "shipments",
    "users",
    "sessions",
    "audit",
    "metrics",
    "invoices",
    "search",
    "alerts",
    "carts",
    "ledger",
    "events",
    "logs",
];

fn topic_name(i: u32) -> String {
    let word = TOPIC_WORDS[i as usize % TOPIC_WORDS.len()];
    let round = i as usize / TOPIC_WORDS.len();
    if round == 0 {
        word.to_string()
    } else {
        format!("{word}-{round}")
    }
}

/// A deterministic scenario as a snapshot document.
pub fn generate(params: &GenerateParams) -> Snapshot {
    let mut rng = Rng::new(params.seed);
    let n = params.brokers.max(1);
    let ids: Vec<i32> = (0..n as i32).map(|i| params.first_broker_id + i).collect();
    let brokers: Vec<SnapshotBroker> = ids
        .iter()
        .enumerate()
        .map(|(i, id)| SnapshotBroker {
            id: *id,
            rack: (params.racks > 0).then(|| format!("rack-{}", i as u32 % params.racks)),
            state: BrokerState::Alive,
        })
        .collect();
    // Placement candidates: every broker except a brand-new one.
    let placeable: Vec<(i32, Option<String>)> = brokers
        .iter()
        .filter(|b| !(params.skew == Skew::NewBroker && n > 1 && b.id == *ids.last().unwrap_or(&0)))
        .map(|b| (b.id, b.rack.clone()))
        .collect();
    let ordered = rack_alternating(&placeable);
    let rf = (params.replication_factor.max(1) as usize).min(ordered.len().max(1));
    let hot = ids[0];
    let group_counts = params
        .groups
        .map(|g| spread_groups(g, params.topics, params.seed));
    let mut partitions = Vec::new();
    for t in 0..params.topics {
        let name = topic_name(t);
        let topic_factor = rng.log_normal(1.0, 0.6);
        let groups = match rng.below(10) {
            0 => 0.0,
            1..=5 => 1.0,
            6..=8 => 2.0,
            _ => 3.0,
        };
        let groups = group_counts
            .as_ref()
            .and_then(|c| c.get(t as usize))
            .map_or(groups, |n| f64::from(*n));
        let compacted = rng.below(12) == 0;
        let min_isr = if rf >= 3 { 2 } else { 1 };
        let start = rng.below(ordered.len().max(1) as u64) as usize;
        for p in 0..params.partitions_per_topic {
            let mut replicas = place_one(&ordered, start + p as usize, rf);
            let mut size = rng.log_normal(params.mean_partition_bytes * topic_factor, 0.8);
            let mut msg_rate = rng.log_normal(params.mean_msg_rate * topic_factor, 0.7);
            match params.skew {
                Skew::HotBroker if rng.below(3) == 0 && !replicas.contains(&hot) => {
                    replicas.pop();
                    replicas.insert(0, hot);
                    size *= 3.0;
                    msg_rate *= 2.0;
                }
                Skew::HotBroker if replicas.contains(&hot) => {
                    replicas.retain(|b| *b != hot);
                    replicas.insert(0, hot);
                    size *= 3.0;
                }
                Skew::Leaders => {
                    let half = ids[ids.len() / 2];
                    if let Some(pos) = replicas.iter().position(|b| *b < half) {
                        let b = replicas.remove(pos);
                        replicas.insert(0, b);
                    }
                }
                _ => {}
            }
            let msg_rate = (msg_rate * 10.0).round() / 10.0;
            let byte_rate = (msg_rate * params.msg_bytes).round();
            partitions.push(SnapshotPartition {
                topic: name.clone(),
                partition: p as i32,
                leader: replicas.first().copied(),
                isr: None,
                replicas,
                size_bytes: size.round() as u64,
                compacted,
                min_insync_replicas: min_isr,
                producer_msg_rate: msg_rate,
                producer_byte_rate: byte_rate,
                consumer_msg_rate: msg_rate * groups,
                consumer_byte_rate: byte_rate * groups,
                last_moved_at: None,
            });
        }
    }
    let mut id_bytes = [0u8; 16];
    id_bytes[..8].copy_from_slice(&rng.next_u64().to_be_bytes());
    id_bytes[8..].copy_from_slice(&rng.next_u64().to_be_bytes());
    use base64::Engine;
    let cluster_id = base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(id_bytes);
    Snapshot {
        format: SNAPSHOT_FORMAT.to_string(),
        taken_at: iso8601(crate::util::wall_ms() / 1000 * 1000),
        cluster_id: Some(cluster_id),
        brokers,
        partitions,
    }
}

fn rack_alternating(brokers: &[(i32, Option<String>)]) -> Vec<(i32, Option<String>)> {
    let mut by_rack: BTreeMap<Option<String>, Vec<i32>> = BTreeMap::new();
    for (id, rack) in brokers {
        by_rack.entry(rack.clone()).or_default().push(*id);
    }
    let longest = by_rack.values().map(Vec::len).max().unwrap_or(0);
    let mut out = Vec::new();
    for i in 0..longest {
        for (rack, ids) in &by_rack {
            if let Some(id) = ids.get(i) {
                out.push((*id, rack.clone()));
            }
        }
    }
    out
}

pub(crate) fn place_one(ordered: &[(i32, Option<String>)], first: usize, rf: usize) -> Vec<i32> {
    let n = ordered.len();
    if n == 0 {
        return Vec::new();
    }
    let racks: std::collections::BTreeSet<&Option<String>> =
        ordered.iter().map(|(_, r)| r).collect();
    // Kafka-style: the rack-alternating list from a rotating start, with a shift that grows
    // every full round so followers spread too; later replicas avoid racks already used until
    // every rack has one.
    let round = first / n;
    let shift = 1 + round % (n.saturating_sub(1)).max(1);
    let (lead, lead_rack) = &ordered[first % n];
    let mut out = vec![*lead];
    let mut used = vec![lead_rack];
    let mut k = 0;
    while out.len() < rf && k < 4 * n {
        let (b, rack) = &ordered[(first + shift * (k + 1) + k / n) % n];
        k += 1;
        if out.contains(b) || (used.len() < racks.len() && used.contains(&rack)) {
            continue;
        }
        out.push(*b);
        if !used.contains(&rack) {
            used.push(rack);
        }
    }
    for (b, _) in ordered {
        if out.len() >= rf {
            break;
        }
        if !out.contains(b) {
            out.push(*b);
        }
    }
    out
}

/// Builds the model from a snapshot: brokers, topics with their configs, partitions with their
/// sizes and rates, and consumer groups derived from the consumer rates.
pub fn load(snapshot: &Snapshot, now: i64, link_speed: f64) -> Result<Cluster, String> {
    snapshot.validate().map_err(|e| e.to_string())?;
    if snapshot.brokers.is_empty() {
        return Err("the scenario has no brokers".into());
    }
    let cluster_id = snapshot
        .cluster_id
        .clone()
        .unwrap_or_else(|| "simcluster".to_string());
    let mut c = Cluster::new(cluster_id, now, link_speed);
    for b in &snapshot.brokers {
        c.add_broker(b.id, b.rack.clone(), b.state != BrokerState::Down, now);
        if let Some(br) = c.brokers.get_mut(&b.id) {
            br.maintenance = b.state == BrokerState::Maintenance;
        }
    }
    let mut topics: BTreeMap<&str, Vec<&SnapshotPartition>> = BTreeMap::new();
    for p in &snapshot.partitions {
        topics.entry(p.topic.as_str()).or_default().push(p);
    }
    for (name, mut parts) in topics {
        parts.sort_by_key(|p| p.partition);
        if parts
            .iter()
            .enumerate()
            .any(|(i, p)| p.partition != i as i32)
        {
            return Err(format!(
                "topic {name} must have partitions numbered 0 to {} without gaps",
                parts.len() - 1
            ));
        }
        let mut configs = BTreeMap::new();
        if parts.iter().any(|p| p.compacted) {
            configs.insert("cleanup.policy".to_string(), "compact".to_string());
        }
        let min_isr = parts
            .iter()
            .map(|p| p.min_insync_replicas)
            .max()
            .unwrap_or(1);
        if min_isr != 1 {
            configs.insert("min.insync.replicas".to_string(), min_isr.to_string());
        }
        let news = parts
            .iter()
            .map(|p| NewPartition {
                replicas: p.replicas.clone(),
                leader: p.leader,
                isr: p.isr_or_replicas().to_vec(),
                size: p.size_bytes as f64,
                rates: Rates {
                    producer_msg: p.producer_msg_rate,
                    producer_byte: p.producer_byte_rate,
                    consumer_msg: p.consumer_msg_rate,
                    consumer_byte: p.consumer_byte_rate,
                },
                last_moved_at: p.last_moved_at.as_deref().and_then(parse_iso8601),
            })
            .collect();
        c.insert_topic(name, configs, news);
        // A snapshot's null leader means offline.
        if let Some(t) = c.topics.get_mut(name) {
            for (p, sp) in t.partitions.iter_mut().zip(parts.iter()) {
                if sp.leader.is_none() {
                    p.leader = -1;
                }
            }
        }
        derive_groups(&mut c, name);
    }
    Ok(c)
}

/// Consumer groups of a topic from its consumer rate: as many groups as the consumer rate is
/// multiples of the producer rate (at least one when anything consumes), sharing it equally.
pub fn derive_groups(c: &mut Cluster, topic: &str) {
    let Some(t) = c.topics.get(topic) else {
        return;
    };
    let produce: f64 = t.partitions.iter().map(|p| p.rates.producer_msg).sum();
    let consume: f64 = t.partitions.iter().map(|p| p.rates.consumer_msg).sum();
    if consume <= 0.0 {
        return;
    }
    let existing: Vec<String> = c
        .groups
        .values()
        .filter(|g| {
            g.sim
                .as_ref()
                .is_some_and(|s| s.subscriptions.iter().any(|(n, _)| n == topic))
        })
        .map(|g| g.id.clone())
        .collect();
    if !existing.is_empty() {
        return;
    }
    let n = if produce > 0.0 {
        (consume / produce)
            .round()
            .clamp(1.0, f64::from(MAX_GROUPS_PER_TOPIC)) as usize
    } else {
        1
    };
    let partitions = t.partitions.len();
    let seed = crate::util::fnv1a(&[topic.as_bytes()]);
    let mut offsets = Vec::with_capacity(partitions);
    for p in &t.partitions {
        // A few seconds of lag behind the log end.
        let lag = (p.rates.consumer_msg / n as f64 * 5.0).floor();
        let offset = (p.log_end.floor() - lag).max(p.log_start.floor());
        offsets.push(Some(crate::state::Committed {
            offset,
            leader_epoch: p.leader_epoch,
            metadata: None,
        }));
    }
    for g in 0..n {
        let id = format!("{topic}-consumer-{g}");
        let members = partitions.clamp(1, 3);
        let members = (0..members)
            .map(|m| {
                let client_id = format!("{id}-client-{m}");
                let tag = crate::util::mix64(seed ^ ((g as u64) << 8) ^ m as u64);
                Member {
                    member_id: format!(
                        "{client_id}-{:08x}-{:04x}-{:04x}-{:04x}-{:012x}",
                        tag >> 32,
                        (tag >> 16) & 0xffff,
                        tag & 0xffff,
                        (tag >> 48) & 0xffff,
                        crate::util::mix64(tag) & 0xffff_ffff_ffff
                    ),
                    client_id,
                    host: format!("/10.0.{}.{}", (seed >> 8) % 250 + 1, 10 + m),
                }
            })
            .collect();
        let mut offsets_map = BTreeMap::new();
        offsets_map.insert(topic.to_string(), offsets.clone());
        c.groups.insert(
            id.clone(),
            Group {
                id,
                kind: crate::state::groups::GroupKind::Classic,
                protocol_type: "consumer".into(),
                protocol: "range".into(),
                generation: 1,
                members,
                offsets: offsets_map,
                sim: Some(SimGroup {
                    subscriptions: vec![(topic.to_string(), 1.0 / n as f64)],
                }),
            },
        );
    }
}

/// The model as a `ballast.snapshot/v1` document.
pub fn export(c: &Cluster) -> Snapshot {
    let brokers = c
        .brokers
        .values()
        .map(|b| SnapshotBroker {
            id: b.id,
            rack: b.rack.clone(),
            state: if !b.up {
                BrokerState::Down
            } else if b.maintenance {
                BrokerState::Maintenance
            } else {
                BrokerState::Alive
            },
        })
        .collect();
    let mut partitions = Vec::with_capacity(c.partition_count());
    for t in c.topics.values() {
        let compacted = c.is_compacted(&t.name);
        let min_isr = c.min_insync(&t.name);
        for (i, p) in t.partitions.iter().enumerate() {
            let isr = if p.isr.len() == p.replicas.len()
                && p.replicas.iter().all(|r| p.isr.contains(r))
            {
                None
            } else {
                Some(p.isr.clone())
            };
            partitions.push(SnapshotPartition {
                topic: t.name.clone(),
                partition: i as i32,
                replicas: p.replicas.clone(),
                leader: (p.leader >= 0).then_some(p.leader),
                isr,
                size_bytes: p.size.max(0.0) as u64,
                compacted,
                min_insync_replicas: min_isr,
                producer_msg_rate: p.rates.producer_msg,
                producer_byte_rate: p.rates.producer_byte,
                consumer_msg_rate: p.rates.consumer_msg,
                consumer_byte_rate: p.rates.consumer_byte,
                last_moved_at: p.last_moved_at.map(iso8601),
            });
        }
    }
    Snapshot {
        format: SNAPSHOT_FORMAT.to_string(),
        taken_at: iso8601(c.now_ms),
        cluster_id: Some(c.cluster_id.clone()),
        brokers,
        partitions,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generation_is_deterministic_for_a_seed() {
        let p = GenerateParams {
            seed: 42,
            ..Default::default()
        };
        let a = generate(&p);
        let b = generate(&p);
        assert_eq!(a.partitions, b.partitions);
        assert_eq!(a.cluster_id, b.cluster_id);
        a.validate().expect("valid");
        let c = generate(&GenerateParams { seed: 43, ..p });
        assert_ne!(a.partitions, c.partitions);
    }

    #[test]
    fn a_generated_cluster_has_exactly_the_groups_asked_for_each_with_committed_offsets() {
        let p = GenerateParams {
            topics: 20,
            partitions_per_topic: 5,
            groups: Some(37),
            ..Default::default()
        };
        let c = load(&generate(&p), 1_000, 125e6).expect("load");
        assert_eq!(c.groups.len(), 37);
        for g in c.groups.values() {
            assert!(!g.offsets.is_empty(), "{} commits nothing", g.id);
            for (topic, slots) in &g.offsets {
                assert_eq!(slots.len(), 5, "{} on {topic}", g.id);
                assert!(slots.iter().all(Option::is_some), "{} on {topic}", g.id);
            }
        }
        // Spread: every topic has one or two of them.
        let topics: BTreeMap<&str, usize> = c.groups.values().fold(BTreeMap::new(), |mut m, g| {
            for t in g.offsets.keys() {
                *m.entry(t.as_str()).or_default() += 1;
            }
            m
        });
        assert_eq!(topics.len(), 20);
        assert!(topics.values().all(|n| (1..=2).contains(n)), "{topics:?}");
        // The same seed gives the same groups; the partitions are those without `groups`.
        let again = load(&generate(&p), 1_000, 125e6).expect("load");
        assert_eq!(
            c.groups.keys().collect::<Vec<_>>(),
            again.groups.keys().collect::<Vec<_>>()
        );
        let plain = generate(&GenerateParams { groups: None, ..p });
        let placed = |s: &Snapshot| {
            s.partitions
                .iter()
                .map(|p| (p.replicas.clone(), p.size_bytes))
                .collect::<Vec<_>>()
        };
        assert_eq!(placed(&generate(&p)), placed(&plain));
    }

    #[test]
    fn generated_groups_stop_at_four_a_topic() {
        assert_eq!(spread_groups(100, 3, 1), vec![4, 4, 4]);
        assert_eq!(spread_groups(5, 0, 1), Vec::<u32>::new());
        let counts = spread_groups(860, 600, 7);
        assert_eq!(counts.iter().sum::<u32>(), 860);
        assert_eq!(counts, spread_groups(860, 600, 7));
    }

    #[test]
    fn generated_replicas_span_racks() {
        let s = generate(&GenerateParams::default());
        let rack_of: BTreeMap<i32, Option<String>> =
            s.brokers.iter().map(|b| (b.id, b.rack.clone())).collect();
        for p in &s.partitions {
            let racks: std::collections::BTreeSet<_> =
                p.replicas.iter().map(|r| rack_of[r].clone()).collect();
            assert_eq!(racks.len(), 3, "{p:?}");
        }
    }

    #[test]
    fn a_new_broker_skew_leaves_the_last_broker_empty() {
        let s = generate(&GenerateParams {
            skew: Skew::NewBroker,
            ..Default::default()
        });
        assert!(s.partitions.iter().all(|p| !p.replicas.contains(&6)));
    }

    #[test]
    fn loading_and_exporting_keeps_placement_and_rates() {
        let s = generate(&GenerateParams::default());
        let c = load(&s, 1_000, 125e6).expect("load");
        let back = export(&c);
        assert_eq!(back.brokers, s.brokers);
        assert_eq!(back.partitions.len(), s.partitions.len());
        let mut want = s.partitions.clone();
        want.sort_by(|a, b| (&a.topic, a.partition).cmp(&(&b.topic, b.partition)));
        for (a, b) in want.iter().zip(back.partitions.iter()) {
            assert_eq!(
                (a.topic.as_str(), a.partition),
                (b.topic.as_str(), b.partition)
            );
            assert_eq!(a.replicas, b.replicas);
            assert_eq!(a.leader, b.leader);
            assert_eq!(a.producer_msg_rate, b.producer_msg_rate);
            assert_eq!(a.consumer_byte_rate, b.consumer_byte_rate);
            assert_eq!(a.compacted, b.compacted);
            assert_eq!(a.min_insync_replicas, b.min_insync_replicas);
        }
    }
}
