//! Consumer groups: simulated groups whose members commit at their consume rates, groups created
//! by offset commits of real clients, coordinators, and the offset rules of the real broker.

use std::collections::{BTreeMap, HashMap};

use bytes::{BufMut, Bytes, BytesMut};
use kafka_protocol::messages::consumer_protocol_assignment::{
    ConsumerProtocolAssignment, TopicPartition,
};
use kafka_protocol::messages::ConsumerProtocolSubscription;
use kafka_protocol::protocol::{Encodable, StrBytes};

use super::{err, ApiError, BrokerId, Cluster};

#[derive(Debug, Clone, PartialEq)]
pub struct Committed {
    /// Real so slow consume rates accumulate; reported as its floor.
    pub offset: f64,
    pub leader_epoch: i32,
    pub metadata: Option<String>,
}

#[derive(Debug, Clone)]
pub struct Member {
    pub member_id: String,
    pub client_id: String,
    pub host: String,
}

/// A simulated group's subscriptions: (topic, share of the partition's consumer rate).
#[derive(Debug, Clone, Default)]
pub struct SimGroup {
    pub subscriptions: Vec<(String, f64)>,
}

/// A group's type, as Kafka 4.1's ListGroups names it (v5+ `groupType`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum GroupKind {
    /// The classic protocol (JoinGroup/SyncGroup); DescribeGroups describes it.
    #[default]
    Classic,
    /// KIP-848 (`group.protocol=consumer`): ConsumerGroupDescribe describes it; DescribeGroups
    /// answers GROUP_ID_NOT_FOUND "Group g is not a classic group." (Kafka 4.1).
    Consumer,
    /// KIP-932: ShareGroupDescribe describes it; it commits no offsets.
    Share,
    /// KIP-1071 (Kafka 4.1 early access): listed; described by StreamsGroupDescribe, which the
    /// simulator does not offer (nor does ballast's client speak it).
    Streams,
}

impl GroupKind {
    pub fn as_str(self) -> &'static str {
        match self {
            GroupKind::Classic => "classic",
            GroupKind::Consumer => "consumer",
            GroupKind::Share => "share",
            GroupKind::Streams => "streams",
        }
    }

    pub fn parse(s: &str) -> Option<GroupKind> {
        match s.to_ascii_lowercase().as_str() {
            "classic" => Some(GroupKind::Classic),
            "consumer" => Some(GroupKind::Consumer),
            "share" => Some(GroupKind::Share),
            "streams" => Some(GroupKind::Streams),
            _ => None,
        }
    }
}

#[derive(Debug, Clone)]
pub struct Group {
    pub id: String,
    /// The group's type; a group made by an offset commit is classic.
    pub kind: GroupKind,
    pub protocol_type: String,
    pub protocol: String,
    pub generation: i32,
    pub members: Vec<Member>,
    pub offsets: BTreeMap<String, Vec<Option<Committed>>>,
    pub sim: Option<SimGroup>,
}

impl Group {
    pub fn state(&self) -> &'static str {
        if self.members.is_empty() {
            "Empty"
        } else {
            "Stable"
        }
    }

    pub fn committed(&self, topic: &str, partition: i32) -> Option<&Committed> {
        self.offsets
            .get(topic)?
            .get(usize::try_from(partition).ok()?)?
            .as_ref()
    }

    /// Topics a simulated group's members are subscribed to.
    pub fn subscribed_topics(&self) -> Vec<String> {
        let mut topics: Vec<String> = self
            .sim
            .as_ref()
            .map(|s| s.subscriptions.iter().map(|(t, _)| t.clone()).collect())
            .unwrap_or_default();
        topics.sort();
        topics
    }
}

/// The coordinator of a group: the alive broker with the highest hash of (key, broker), so that
/// only the groups of a stopped broker move.
pub fn coordinator(c: &Cluster, key: &str) -> Option<BrokerId> {
    rendezvous(key, c.alive_brokers().map(|b| b.id))
}

/// The live broker `key` hashes highest with.
fn rendezvous(key: &str, alive: impl Iterator<Item = BrokerId>) -> Option<BrokerId> {
    alive
        .map(|id| {
            let h = crate::util::fnv1a(&[key.as_bytes(), &id.to_be_bytes()]);
            (crate::util::mix64(h), id)
        })
        .max()
        .map(|(_, id)| id)
}

/// Every group's coordinator ([`coordinator`]) while the live brokers stay the same: ListGroups
/// asks every broker for the groups it coordinates, and without it each answer hashed every
/// group against every broker.
#[derive(Debug, Default)]
pub struct CoordinatorCache {
    alive: Vec<BrokerId>,
    by_group: HashMap<String, BrokerId>,
}

impl CoordinatorCache {
    /// The cached coordinator of `group` (after [`refresh_coordinators`]).
    pub fn get(&self, group: &str) -> Option<BrokerId> {
        self.by_group.get(group).copied()
    }
}

/// Caches the coordinator of every group of `c.groups` (a stale entry of a deleted group may
/// remain; it is never asked for).
pub fn refresh_coordinators(c: &mut Cluster) {
    let alive: Vec<BrokerId> = c.alive_brokers().map(|b| b.id).collect();
    let Cluster {
        groups,
        coordinators,
        ..
    } = c;
    if coordinators.alive != alive {
        coordinators.alive = alive;
        coordinators.by_group.clear();
    }
    for id in groups.keys() {
        if !coordinators.by_group.contains_key(id) {
            if let Some(b) = rendezvous(id, coordinators.alive.iter().copied()) {
                coordinators.by_group.insert(id.clone(), b);
            }
        }
    }
}

/// ConsumerProtocolSubscription bytes (version 0 with its 2-byte version prefix).
pub fn subscription_bytes(topics: &[String]) -> Bytes {
    let mut sub = ConsumerProtocolSubscription::default();
    sub.topics = topics
        .iter()
        .map(|t| StrBytes::from_string(t.clone()))
        .collect();
    encode_versioned(&sub, 0)
}

/// ConsumerProtocolAssignment bytes (version 0 with its 2-byte version prefix).
pub fn assignment_bytes(assigned: &[(String, Vec<i32>)]) -> Bytes {
    let mut a = ConsumerProtocolAssignment::default();
    a.assigned_partitions = assigned
        .iter()
        .map(|(t, ps)| {
            let mut tp = TopicPartition::default();
            tp.topic = StrBytes::from_string(t.clone()).into();
            tp.partitions = ps.clone();
            tp
        })
        .collect();
    encode_versioned(&a, 0)
}

fn encode_versioned<T: Encodable>(value: &T, version: i16) -> Bytes {
    let mut buf = BytesMut::new();
    buf.put_i16(version);
    if value.encode(&mut buf, version).is_err() {
        return Bytes::new();
    }
    buf.freeze()
}

/// One offset to commit.
#[derive(Debug, Clone)]
pub struct CommitItem {
    pub topic: String,
    pub partition: i32,
    pub offset: i64,
    pub leader_epoch: i32,
    pub metadata: Option<String>,
}

impl Cluster {
    /// Partitions assigned to the `index`-th member of a simulated group (round robin).
    pub fn member_assignment(&self, group: &Group, index: usize) -> Vec<(String, Vec<i32>)> {
        let n = group.members.len().max(1);
        group
            .subscribed_topics()
            .into_iter()
            .filter_map(|t| {
                let count = self.topics.get(&t)?.partitions.len();
                let ps: Vec<i32> = (0..count)
                    .filter(|i| i % n == index)
                    .map(|i| i as i32)
                    .collect();
                Some((t, ps))
            })
            .filter(|(_, ps)| !ps.is_empty())
            .collect()
    }

    /// OffsetCommit with the real broker's group rules: only an empty or unknown group accepts
    /// commits from outside a generation.
    pub fn commit_offsets(
        &mut self,
        group_id: &str,
        generation: i32,
        member_id: &str,
        items: Vec<CommitItem>,
    ) -> Vec<(String, i32, i16)> {
        let group_error = match self.groups.get(group_id) {
            // A share group commits no offsets (Kafka 4.1 answers so).
            Some(g) if g.kind == GroupKind::Share => Some(err::GROUP_ID_NOT_FOUND),
            Some(g) if !g.members.is_empty() => {
                if !g.members.iter().any(|m| m.member_id == member_id) {
                    Some(err::UNKNOWN_MEMBER_ID)
                } else if generation != g.generation {
                    Some(err::ILLEGAL_GENERATION)
                } else {
                    None
                }
            }
            Some(_) if generation >= 0 => Some(err::ILLEGAL_GENERATION),
            Some(_) => None,
            None if generation >= 0 => Some(err::ILLEGAL_GENERATION),
            None if group_id.is_empty() => Some(err::INVALID_GROUP_ID),
            None => None,
        };
        if let Some(code) = group_error {
            return items
                .into_iter()
                .map(|i| (i.topic, i.partition, code))
                .collect();
        }
        let mut results = Vec::new();
        let mut accepted = Vec::new();
        for item in items {
            let count = self.topics.get(&item.topic).map(|t| t.partitions.len());
            let known = count.is_some_and(|n| item.partition >= 0 && (item.partition as usize) < n);
            let code = if known {
                err::NONE
            } else {
                err::UNKNOWN_TOPIC_OR_PARTITION
            };
            if known {
                accepted.push((item, count.unwrap_or(0)));
            } else {
                results.push((item.topic, item.partition, code));
            }
        }
        let group = self
            .groups
            .entry(group_id.to_string())
            .or_insert_with(|| Group {
                id: group_id.to_string(),
                kind: GroupKind::Classic,
                protocol_type: String::new(),
                protocol: String::new(),
                generation: 0,
                members: Vec::new(),
                offsets: BTreeMap::new(),
                sim: None,
            });
        for (item, count) in accepted {
            let slots = group.offsets.entry(item.topic.clone()).or_default();
            if slots.len() < count {
                slots.resize(count, None);
            }
            slots[item.partition as usize] = Some(Committed {
                offset: item.offset as f64,
                leader_epoch: item.leader_epoch,
                metadata: item.metadata,
            });
            results.push((item.topic, item.partition, err::NONE));
        }
        results
    }

    /// A simulated group of `kind` whose `members` consume every partition of `topic` at the
    /// topic's consumer rate, from its log start (a share group's start offset advances so).
    /// Errors: an existing group id, an unknown topic, no member.
    pub fn add_group(
        &mut self,
        id: &str,
        kind: GroupKind,
        topic: &str,
        members: usize,
    ) -> Result<(), String> {
        if id.is_empty() || self.groups.contains_key(id) {
            return Err(format!("group {id:?} exists or is empty"));
        }
        if !self.topics.contains_key(topic) {
            return Err(format!("unknown topic {topic}"));
        }
        if members == 0 || members > 100 {
            return Err("members: 1 to 100".into());
        }
        let seed = crate::util::fnv1a(&[id.as_bytes()]);
        let members = (0..members)
            .map(|m| {
                let tag = crate::util::mix64(seed ^ m as u64);
                Member {
                    // KIP-848 member ids are 22-character base64 UUIDs chosen by the client.
                    member_id: format!("{:016x}{:06x}", tag, m),
                    client_id: format!("{id}-client-{m}"),
                    host: format!("/10.1.0.{}", 10 + m),
                }
            })
            .collect();
        let (protocol_type, protocol) = match kind {
            GroupKind::Classic => ("consumer", "range"),
            GroupKind::Consumer => ("consumer", "uniform"),
            GroupKind::Share => ("share", "simple"),
            GroupKind::Streams => ("streams", ""),
        };
        self.groups.insert(
            id.to_string(),
            Group {
                id: id.to_string(),
                kind,
                protocol_type: protocol_type.into(),
                protocol: protocol.into(),
                generation: 1,
                members,
                offsets: BTreeMap::new(),
                sim: Some(SimGroup {
                    subscriptions: vec![(topic.to_string(), 1.0)],
                }),
            },
        );
        Ok(())
    }

    /// The group's members leave (its consumers stopped): it is Empty, its offsets stay.
    pub fn stop_group(&mut self, id: &str) -> Result<(), String> {
        let g = self
            .groups
            .get_mut(id)
            .ok_or_else(|| format!("unknown group {id}"))?;
        g.members.clear();
        g.generation += 1;
        Ok(())
    }

    /// DeleteGroups: NON_EMPTY_GROUP while members exist.
    pub fn delete_group(&mut self, group_id: &str) -> Result<(), ApiError> {
        match self.groups.get(group_id) {
            None => Err(ApiError::new(
                err::GROUP_ID_NOT_FOUND,
                "The group id does not exist.",
            )),
            Some(g) if !g.members.is_empty() => Err(ApiError::new(
                err::NON_EMPTY_GROUP,
                "The group is not empty.",
            )),
            Some(_) => {
                self.groups.remove(group_id);
                Ok(())
            }
        }
    }
}

#[cfg(test)]
mod coordinator_cache_tests {
    use super::*;
    use crate::scenario::{generate, load, GenerateParams};

    #[test]
    fn cached_coordinators_are_the_hashed_ones_and_follow_brokers_going_down() {
        let snapshot = generate(&GenerateParams {
            groups: Some(30),
            ..GenerateParams::default()
        });
        let mut c = load(&snapshot, 1_000, 125e6).expect("load");
        refresh_coordinators(&mut c);
        for id in c.groups.keys() {
            assert_eq!(c.coordinators.get(id), coordinator(&c, id), "{id}");
        }
        let ids: Vec<String> = c.groups.keys().cloned().collect();
        let busiest = c.coordinators.get(&ids[0]).expect("a coordinator");
        if let Some(b) = c.brokers.get_mut(&busiest) {
            b.up = false;
        }
        refresh_coordinators(&mut c);
        for id in &ids {
            assert_eq!(c.coordinators.get(id), coordinator(&c, id), "{id}");
            assert_ne!(c.coordinators.get(id), Some(busiest), "{id}");
        }
    }
}
