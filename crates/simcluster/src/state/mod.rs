//! The cluster model: brokers, topics, partitions, logs, groups, configs, ACLs, quotas and
//! reassignments. Plain and synchronous: every mutation takes `now` (sim milliseconds since the
//! epoch) explicitly, and [`Cluster::advance`] moves simulated time forward.

pub mod acls;
pub mod configs;
pub mod groups;
pub mod lag;
pub mod log;
pub mod quotas;
pub mod reassign;

use std::collections::{BTreeMap, BTreeSet, HashMap};

use kafka_protocol::protocol::StrBytes;

pub use self::acls::Acl;
pub use self::groups::{Committed, Group, GroupKind, Member};
pub use self::log::StoredLog;
pub use self::reassign::{MoveRecord, MoveState, MoveTruth, Reassignment};

pub type BrokerId = i32;

/// Kafka error codes used by the model and the handlers.
pub mod err {
    pub const NONE: i16 = 0;
    pub const OFFSET_OUT_OF_RANGE: i16 = 1;
    pub const CORRUPT_MESSAGE: i16 = 2;
    pub const UNKNOWN_TOPIC_OR_PARTITION: i16 = 3;
    pub const LEADER_NOT_AVAILABLE: i16 = 5;
    pub const NOT_LEADER_OR_FOLLOWER: i16 = 6;
    pub const MESSAGE_TOO_LARGE: i16 = 10;
    pub const COORDINATOR_NOT_AVAILABLE: i16 = 15;
    pub const NOT_COORDINATOR: i16 = 16;
    pub const INVALID_TOPIC_EXCEPTION: i16 = 17;
    pub const NOT_ENOUGH_REPLICAS: i16 = 19;
    pub const INVALID_REQUIRED_ACKS: i16 = 21;
    pub const ILLEGAL_GENERATION: i16 = 22;
    pub const INCONSISTENT_GROUP_PROTOCOL: i16 = 23;
    pub const INVALID_GROUP_ID: i16 = 24;
    pub const UNKNOWN_MEMBER_ID: i16 = 25;
    pub const REBALANCE_IN_PROGRESS: i16 = 27;
    pub const UNSUPPORTED_SASL_MECHANISM: i16 = 33;
    pub const ILLEGAL_SASL_STATE: i16 = 34;
    pub const UNSUPPORTED_VERSION: i16 = 35;
    pub const TOPIC_ALREADY_EXISTS: i16 = 36;
    pub const INVALID_PARTITIONS: i16 = 37;
    pub const INVALID_REPLICATION_FACTOR: i16 = 38;
    pub const INVALID_REPLICA_ASSIGNMENT: i16 = 39;
    pub const INVALID_CONFIG: i16 = 40;
    pub const INVALID_REQUEST: i16 = 42;
    pub const TRANSACTIONAL_ID_AUTHORIZATION_FAILED: i16 = 53;
    pub const KAFKA_STORAGE_ERROR: i16 = 56;
    pub const LOG_DIR_NOT_FOUND: i16 = 57;
    pub const SASL_AUTHENTICATION_FAILED: i16 = 58;
    pub const REPLICA_NOT_AVAILABLE: i16 = 9;
    pub const NON_EMPTY_GROUP: i16 = 68;
    pub const GROUP_ID_NOT_FOUND: i16 = 69;
    pub const FENCED_LEADER_EPOCH: i16 = 74;
    pub const UNKNOWN_LEADER_EPOCH: i16 = 75;
    pub const MEMBER_ID_REQUIRED: i16 = 79;
    pub const PREFERRED_LEADER_NOT_AVAILABLE: i16 = 80;
    pub const ELIGIBLE_LEADERS_NOT_AVAILABLE: i16 = 83;
    pub const ELECTION_NOT_NEEDED: i16 = 84;
    pub const NO_REASSIGNMENT_IN_PROGRESS: i16 = 85;
    pub const INVALID_RECORD: i16 = 87;
    pub const UNKNOWN_TOPIC_ID: i16 = 100;
}

/// An error of one item in a response: a Kafka error code and a message.
#[derive(Debug, Clone, PartialEq)]
pub struct ApiError {
    pub code: i16,
    pub message: String,
}

impl ApiError {
    pub fn new(code: i16, message: impl Into<String>) -> Self {
        ApiError {
            code,
            message: message.into(),
        }
    }
}

#[derive(Debug, Clone)]
pub struct Broker {
    pub id: BrokerId,
    pub rack: Option<String>,
    /// The port it listens on (0 until bound).
    pub port: u16,
    pub up: bool,
    /// `maintenance` in the snapshot: alive, reported back as such.
    pub maintenance: bool,
    pub down_since: Option<i64>,
    /// DYNAMIC_BROKER_CONFIG overrides of this broker.
    pub configs: BTreeMap<String, String>,
}

/// Producer and consumer rates of one partition, per second.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Rates {
    pub producer_msg: f64,
    pub producer_byte: f64,
    pub consumer_msg: f64,
    pub consumer_byte: f64,
}

impl Rates {
    /// Average message size in bytes implied by the producer rates (1 KiB when unknown).
    pub fn msg_bytes(&self) -> f64 {
        if self.producer_msg > 0.0 && self.producer_byte > 0.0 {
            (self.producer_byte / self.producer_msg).max(1.0)
        } else {
            1024.0
        }
    }
}

/// What only a few partitions need; boxed to keep [`Partition`] small.
#[derive(Debug, Clone, Default)]
pub struct Extra {
    pub reassignment: Option<Reassignment>,
    /// Replicas catching up after their broker came back: (broker, bytes still to copy).
    pub catchup: Vec<(BrokerId, f64)>,
    /// Records produced by real clients.
    pub stored: StoredLog,
    /// Replicas moved to another log dir with AlterReplicaLogDirs: (broker, dir index).
    pub dir_overrides: Vec<(BrokerId, u8)>,
    /// A tiered topic (`remote.storage.enable`, KIP-405): the bytes offloaded to remote storage
    /// and no longer in the brokers' local logs (not in `Partition::size`), and the first offset
    /// still local (ListOffsets EARLIEST_LOCAL).
    pub remote_bytes: f64,
    pub local_start: Option<f64>,
    /// Eligible leader replicas (KIP-966) as last set when the ISR shrank below
    /// `min.insync.replicas`: see [`Partition::eligible_leader_replicas`].
    pub elr: Vec<BrokerId>,
}

#[derive(Debug, Clone)]
pub struct Partition {
    /// `replicas[0]` is the preferred leader. During a reassignment: target then the rest of
    /// the originals (KIP-455).
    pub replicas: Vec<BrokerId>,
    pub isr: Vec<BrokerId>,
    /// -1 when offline.
    pub leader: BrokerId,
    pub leader_epoch: i32,
    /// Offsets and size as reals so slow rates accumulate; offsets are their floor.
    pub log_start: f64,
    pub log_end: f64,
    pub size: f64,
    pub rates: Rates,
    pub last_moved_at: Option<i64>,
    pub extra: Option<Box<Extra>>,
}

impl Partition {
    /// Records an ISR shrink for the eligible leader replicas (KIP-966, on by default in a new
    /// Kafka 4.1 cluster): when the new ISR is below `min_isr`, the replicas that were in the ISR
    /// or the ELR and are not in the new ISR are eligible; otherwise the ELR is cleared.
    pub fn isr_shrank(&mut self, old_isr: &[BrokerId], min_isr: i32) {
        if (self.isr.len() as i32) >= min_isr {
            if let Some(extra) = self.extra.as_mut() {
                extra.elr.clear();
            }
            return;
        }
        let isr = self.isr.clone();
        let extra = self.extra_mut();
        let mut elr: Vec<BrokerId> = old_isr
            .iter()
            .chain(extra.elr.iter())
            .copied()
            .filter(|b| !isr.contains(b))
            .collect();
        elr.sort_unstable();
        elr.dedup();
        extra.elr = elr;
    }

    /// The ELR as DescribeTopicPartitions answers it: empty while the ISR holds at least
    /// `min_isr` replicas (Kafka clears it then), else the recorded ELR less the replicas back in
    /// the ISR and those no longer assigned, in id order. The simulator's last known ELR is
    /// always empty: it keeps the last ISR member in the ISR, as Kafka without ELR does.
    pub fn eligible_leader_replicas(&self, min_isr: i32) -> Vec<BrokerId> {
        if (self.isr.len() as i32) >= min_isr {
            return Vec::new();
        }
        self.extra
            .as_ref()
            .map(|e| {
                e.elr
                    .iter()
                    .copied()
                    .filter(|b| !self.isr.contains(b) && self.replicas.contains(b))
                    .collect()
            })
            .unwrap_or_default()
    }

    pub fn high_watermark(&self) -> i64 {
        self.log_end.floor() as i64
    }

    pub fn log_start_offset(&self) -> i64 {
        (self.log_start.floor() as i64).min(self.high_watermark())
    }

    /// The first offset in the local log (ListOffsets -4): a tiered partition's local start,
    /// else the log start.
    pub fn local_start_offset(&self) -> i64 {
        let local = self
            .extra
            .as_ref()
            .and_then(|e| e.local_start)
            .map_or(self.log_start_offset(), |l| l.floor() as i64);
        local
            .max(self.log_start_offset())
            .min(self.high_watermark())
    }

    /// Bytes held only in remote storage (0 unless the topic is tiered).
    pub fn remote_bytes(&self) -> f64 {
        self.extra.as_ref().map_or(0.0, |e| e.remote_bytes)
    }

    /// Splits a tiered partition's log (`size` + remote bytes) into its local part, at most
    /// `local_retention_bytes` (when not negative, as `local.retention.bytes`), and the part
    /// offloaded to remote storage, which moves the first local offset up.
    pub fn tier(&mut self, local_retention_bytes: i64) {
        let remote = self.remote_bytes();
        let total = self.size + remote;
        let local = if local_retention_bytes >= 0 {
            total.min(local_retention_bytes as f64)
        } else {
            total
        };
        if local >= total {
            // Everything is local (again): nothing held only remotely.
            if let Some(e) = self.extra.as_mut() {
                e.remote_bytes = 0.0;
                e.local_start = None;
            }
            return;
        }
        let msg_bytes = self.rates.msg_bytes();
        let start = self.log_start;
        let end = self.log_end;
        self.size = local;
        let e = self.extra_mut();
        e.remote_bytes = total - local;
        e.local_start = Some((start + (total - local) / msg_bytes).min(end));
    }

    pub fn extra_mut(&mut self) -> &mut Extra {
        self.extra.get_or_insert_with(Default::default)
    }

    pub fn reassignment(&self) -> Option<&Reassignment> {
        self.extra.as_ref().and_then(|e| e.reassignment.as_ref())
    }

    pub fn catchup_remaining(&self, broker: BrokerId) -> Option<f64> {
        self.extra
            .as_ref()
            .and_then(|e| e.catchup.iter().find(|(b, _)| *b == broker))
            .map(|(_, r)| *r)
    }

    pub fn stored(&self) -> Option<&StoredLog> {
        self.extra.as_ref().map(|e| &e.stored)
    }

    /// Timestamp of a synthetic record at `offset`, derived from the produce rate.
    pub fn timestamp_of(&self, offset: i64, now: i64) -> i64 {
        let behind = (self.high_watermark() - offset).max(0) as f64;
        if self.rates.producer_msg > 0.0 {
            now - (behind / self.rates.producer_msg * 1000.0) as i64
        } else {
            now - 3_600_000 - behind as i64
        }
    }

    /// The first synthetic offset whose timestamp is at or after `ts`, if any.
    fn synthetic_offset_for_timestamp(&self, ts: i64, now: i64) -> Option<i64> {
        let hw = self.high_watermark();
        let start = self.log_start_offset();
        if hw == start || ts > now {
            return None;
        }
        let mut offset = if self.rates.producer_msg > 0.0 {
            let back = ((now - ts) as f64 / 1000.0 * self.rates.producer_msg).floor() as i64;
            hw - back
        } else {
            let base = now - 3_600_000;
            hw - (base - ts).max(0)
        };
        offset = offset.max(start);
        // Offsets held by produced batches are not synthetic.
        while let Some(b) = self.stored().and_then(|s| s.first_from(offset)) {
            if b.base > offset {
                break;
            }
            offset = b.last + 1;
        }
        (offset < hw).then_some(offset)
    }

    /// ListOffsets by timestamp: the first offset whose record's timestamp is at or after `ts`,
    /// with that timestamp. Produced records keep their own timestamps.
    pub fn offset_for_timestamp(&self, ts: i64, now: i64) -> Option<(i64, i64)> {
        let start = self.log_start_offset();
        let stored = self
            .stored()
            .and_then(|s| s.first_at_or_after(ts))
            .filter(|(o, _)| *o >= start);
        let synthetic = self
            .synthetic_offset_for_timestamp(ts, now)
            .map(|o| (o, self.timestamp_of(o, now)));
        match (stored, synthetic) {
            (Some(a), Some(b)) => Some(if a.0 <= b.0 { a } else { b }),
            (a, b) => a.or(b),
        }
    }

    /// ListOffsets MAX_TIMESTAMP: the record with the largest timestamp.
    pub fn max_timestamp_offset(&self, now: i64) -> Option<(i64, i64)> {
        let hw = self.high_watermark();
        if hw <= self.log_start_offset() {
            return None;
        }
        let stored = self.stored().and_then(|s| s.max_timestamp());
        let last_stored = self
            .stored()
            .and_then(|s| s.batches.back())
            .is_some_and(|b| b.last == hw - 1);
        let synthetic = (!last_stored).then(|| (hw - 1, self.timestamp_of(hw - 1, now)));
        match (stored, synthetic) {
            (Some(a), Some(b)) => Some(if a.1 > b.1 { a } else { b }),
            (a, b) => a.or(b),
        }
    }
}

#[derive(Debug, Clone)]
pub struct Topic {
    pub name: String,
    pub name_sb: StrBytes,
    pub id: u128,
    /// TOPIC_CONFIG overrides.
    pub configs: BTreeMap<String, String>,
    pub partitions: Vec<Partition>,
}

/// The model of one simulated cluster.
/// A dedicated controller: whether it runs, and since when it is stopped.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Voter {
    pub up: bool,
    pub down_since: Option<i64>,
}

#[derive(Debug)]
pub struct Cluster {
    pub cluster_id: String,
    pub host: String,
    pub brokers: BTreeMap<BrokerId, Broker>,
    pub topics: BTreeMap<String, Topic>,
    pub topic_ids: HashMap<u128, String>,
    /// DYNAMIC_DEFAULT_BROKER_CONFIG values (resource name "").
    pub broker_defaults: BTreeMap<String, String>,
    pub groups: BTreeMap<String, Group>,
    pub acls: Vec<Acl>,
    pub quotas: quotas::Quotas,
    /// The active controller: the leader of the KRaft metadata quorum (every broker is a voter,
    /// combined mode). -1 while no broker is up.
    pub controller: BrokerId,
    /// The quorum's leader epoch: grows with every election.
    pub controller_epoch: i32,
    /// Dedicated controllers (`process.roles=controller`), by id: voters of the metadata quorum
    /// that are no broker; the brokers then observe the quorum. Empty: combined mode, every
    /// broker a voter.
    pub dedicated_controllers: BTreeMap<BrokerId, Voter>,
    /// Metadata and DescribeCluster answers so far: picks the controller id they report (on
    /// KRaft a live broker the answering broker picks at random, not the active controller).
    pub controller_answers: u64,
    /// Bytes per second one replica copy gets when nothing throttles it.
    pub link_speed: f64,
    pub now_ms: i64,
    pub started_ms: i64,
    /// Partitions with a reassignment or a catching-up replica.
    pub active: BTreeSet<(String, i32)>,
    pub moves: MoveTruth,
    pub next_producer_id: i64,
    /// Listener name for `listeners` (PLAINTEXT, SSL, SASL_PLAINTEXT, SASL_SSL).
    pub security_protocol: String,
    pub sasl_mechanisms: Vec<String>,
    /// Log directories per broker, and the capacity of each.
    pub log_dirs: Vec<String>,
    pub log_dir_capacity: u64,
    /// What DescribeConfigs and DescribeClientQuotas show while a change is on its way to the
    /// brokers (KRaft's metadata lag).
    pub lag: lag::MetadataLag,
    /// Group coordinators, cached while the live brokers stay the same.
    pub coordinators: groups::CoordinatorCache,
    /// Partitions and committed group offsets the last advance walked.
    advance_work: usize,
    /// Every broker's replicas, built on first use and dropped whenever a placement changes
    /// ([`Cluster::placement_changed`]): DescribeLogDirs walks its own broker's replicas, not
    /// every partition of the cluster.
    replica_index: Option<ReplicaIndex>,
}

/// The replicas of every broker as (topic ordinal in name order, partition index), ordered.
#[derive(Debug, Default)]
pub struct ReplicaIndex {
    /// Topics and partitions when it was built: a topic created or deleted, or partitions
    /// added, make it stale even where no one called [`Cluster::placement_changed`].
    topics: usize,
    partitions: usize,
    by_broker: HashMap<BrokerId, Vec<(u32, u32)>>,
}

/// What a partition looks like when created: sizes, rates and placement.
#[derive(Debug, Clone)]
pub struct NewPartition {
    pub replicas: Vec<BrokerId>,
    pub leader: Option<BrokerId>,
    pub isr: Vec<BrokerId>,
    pub size: f64,
    pub rates: Rates,
    pub last_moved_at: Option<i64>,
}

impl Cluster {
    pub fn new(cluster_id: String, now: i64, link_speed: f64) -> Self {
        Cluster {
            cluster_id,
            host: "127.0.0.1".into(),
            brokers: BTreeMap::new(),
            topics: BTreeMap::new(),
            topic_ids: HashMap::new(),
            broker_defaults: BTreeMap::new(),
            groups: BTreeMap::new(),
            acls: Vec::new(),
            quotas: Default::default(),
            controller: -1,
            controller_epoch: 0,
            dedicated_controllers: BTreeMap::new(),
            controller_answers: 0,
            link_speed,
            now_ms: now,
            started_ms: now,
            active: BTreeSet::new(),
            moves: MoveTruth::default(),
            next_producer_id: 1000,
            security_protocol: "PLAINTEXT".into(),
            sasl_mechanisms: Vec::new(),
            log_dirs: vec![
                "/var/lib/kafka/data-0".into(),
                "/var/lib/kafka/data-1".into(),
            ],
            log_dir_capacity: 4 << 40,
            lag: lag::MetadataLag::default(),
            coordinators: groups::CoordinatorCache::default(),
            replica_index: None,
            advance_work: 0,
        }
    }

    /// How many items (partitions and committed group offsets) an advance walks, as of the last.
    pub fn advance_work(&self) -> usize {
        self.advance_work
    }

    /// Forgets the per-broker replica index: to be called by anything that changes a
    /// partition's replicas (reassignments; topics and partitions added or deleted are noticed
    /// by the index itself).
    pub fn placement_changed(&mut self) {
        self.replica_index = None;
    }

    /// Builds the per-broker replica index unless it is current ([`Cluster::replicas_of`]
    /// reads it).
    pub fn index_replicas(&mut self) {
        let partitions = self.partition_count();
        let fresh = self
            .replica_index
            .as_ref()
            .is_some_and(|i| i.topics == self.topics.len() && i.partitions == partitions);
        if !fresh {
            let mut by_broker: HashMap<BrokerId, Vec<(u32, u32)>> = HashMap::new();
            for (t, topic) in self.topics.values().enumerate() {
                for (i, p) in topic.partitions.iter().enumerate() {
                    for b in &p.replicas {
                        by_broker.entry(*b).or_default().push((t as u32, i as u32));
                    }
                }
            }
            self.replica_index = Some(ReplicaIndex {
                topics: self.topics.len(),
                partitions,
                by_broker,
            });
        }
    }

    /// The replicas broker `broker` holds, as (topic, partition index, partition) in topic-name
    /// then partition order: the same replicas and order as walking every partition of every
    /// topic and keeping those whose replicas name the broker. Walks them all when the index is
    /// not current ([`Cluster::index_replicas`] first).
    pub fn replicas_of(&self, broker: BrokerId) -> Vec<(&Topic, usize, &Partition)> {
        let current = self
            .replica_index
            .as_ref()
            .filter(|i| i.topics == self.topics.len() && i.partitions == self.partition_count());
        let Some(index) = current else {
            return self
                .topics
                .values()
                .flat_map(|t| {
                    t.partitions
                        .iter()
                        .enumerate()
                        .filter(|(_, p)| p.replicas.contains(&broker))
                        .map(move |(i, p)| (t, i, p))
                })
                .collect();
        };
        let topics: Vec<&Topic> = self.topics.values().collect();
        index
            .by_broker
            .get(&broker)
            .map(|entries| {
                entries
                    .iter()
                    .filter_map(|(t, i)| {
                        let topic = topics.get(*t as usize)?;
                        let p = topic.partitions.get(*i as usize)?;
                        Some((*topic, *i as usize, p))
                    })
                    .collect()
            })
            .unwrap_or_default()
    }

    // ---------------------------------------------------------------- brokers

    pub fn add_broker(&mut self, id: BrokerId, rack: Option<String>, up: bool, now: i64) {
        self.brokers.insert(
            id,
            Broker {
                id,
                rack,
                port: 0,
                up,
                maintenance: false,
                down_since: if up { None } else { Some(now) },
                configs: BTreeMap::new(),
            },
        );
        if self.controller < 0 || !self.voter_up(self.controller) {
            self.elect_controller();
        }
    }

    /// Whether voter `id` runs: a dedicated controller's own state, else its broker's.
    pub fn voter_up(&self, id: BrokerId) -> bool {
        if self.dedicated_controllers.is_empty() {
            self.is_up(id)
        } else {
            self.dedicated_controllers.get(&id).is_some_and(|v| v.up)
        }
    }

    /// Replaces the voters by dedicated controllers `ids` (all up); the first leads, in a new
    /// epoch.
    pub fn set_dedicated_controllers(&mut self, ids: &[BrokerId]) {
        self.dedicated_controllers = ids
            .iter()
            .map(|id| {
                (
                    *id,
                    Voter {
                        up: true,
                        down_since: None,
                    },
                )
            })
            .collect();
        self.controller = -1;
        self.elect_controller();
    }

    /// Stops (`up` false) or starts a dedicated controller; a stopped leader hands the quorum's
    /// leadership to another voter that is up. False when `id` is no dedicated controller.
    pub fn set_controller_up(&mut self, id: BrokerId, up: bool, now: i64) -> bool {
        let Some(v) = self.dedicated_controllers.get_mut(&id) else {
            return false;
        };
        if v.up != up {
            v.up = up;
            v.down_since = if up { None } else { Some(now) };
        }
        if !up && self.controller == id || self.controller < 0 {
            self.elect_controller();
        }
        true
    }

    pub fn is_up(&self, id: BrokerId) -> bool {
        self.brokers.get(&id).is_some_and(|b| b.up)
    }

    pub fn alive_brokers(&self) -> impl Iterator<Item = &Broker> {
        self.brokers.values().filter(|b| b.up)
    }

    fn elect_controller(&mut self) {
        let id = if self.dedicated_controllers.is_empty() {
            self.alive_brokers().map(|b| b.id).next().unwrap_or(-1)
        } else {
            // A leader needs a majority of the voters up.
            let up: Vec<BrokerId> = self
                .dedicated_controllers
                .iter()
                .filter(|(_, v)| v.up)
                .map(|(id, _)| *id)
                .collect();
            if up.len() * 2 > self.dedicated_controllers.len() {
                up[0]
            } else {
                -1
            }
        };
        self.controller = id;
        if id >= 0 {
            self.controller_epoch += 1;
        }
    }

    /// Makes broker `id` (up) the quorum leader, the active controller, in a new epoch.
    pub fn move_controller(&mut self, id: BrokerId) -> bool {
        if !self.voter_up(id) {
            return false;
        }
        if self.controller != id {
            self.controller = id;
            self.controller_epoch += 1;
        }
        true
    }

    /// The controller id a Metadata or DescribeCluster answer of `answering` reports: like
    /// KRaft's `getRandomAliveBrokerId`, a live broker picked per answer (pseudo-randomly, from
    /// the answering broker and a counter), which is usually not the active controller.
    pub fn reported_controller(&mut self, answering: BrokerId) -> BrokerId {
        self.controller_answers = self.controller_answers.wrapping_add(1);
        let alive: Vec<BrokerId> = self.alive_brokers().map(|b| b.id).collect();
        if alive.is_empty() {
            return -1;
        }
        let h = crate::util::mix64(self.controller_answers ^ ((answering as u64) << 32));
        alive[(h % alive.len() as u64) as usize]
    }

    /// The metadata log's end offset at `at_ms`: KRaft appends a record at least every 500 ms
    /// (`metadata.max.idle.interval.ms`), so it grows with time.
    pub fn metadata_offset(&self, at_ms: i64) -> i64 {
        (at_ms - self.started_ms).max(0) / 500 + 1
    }

    /// Stops a broker: it leaves every ISR, its leaderships fail over, the controller moves.
    pub fn stop_broker(&mut self, id: BrokerId, now: i64) -> bool {
        self.advance(now);
        let Some(broker) = self.brokers.get_mut(&id) else {
            return false;
        };
        if !broker.up {
            return true;
        }
        broker.up = false;
        broker.down_since = Some(now);
        let up: BTreeSet<BrokerId> = self.alive_brokers().map(|b| b.id).collect();
        let default_unclean = self.broker_default_value("unclean.leader.election.enable");
        let min_isr: HashMap<String, i32> = self
            .topics
            .keys()
            .map(|t| (t.clone(), self.min_insync(t)))
            .collect();
        for topic in self.topics.values_mut() {
            let unclean = topic
                .configs
                .get("unclean.leader.election.enable")
                .map(String::as_str)
                .or(default_unclean.as_deref())
                == Some("true");
            let min_isr = min_isr.get(&topic.name).copied().unwrap_or(1);
            for p in topic.partitions.iter_mut() {
                if !p.replicas.contains(&id) {
                    continue;
                }
                if p.isr.contains(&id) && p.isr.len() > 1 {
                    let old = p.isr.clone();
                    p.isr.retain(|b| *b != id);
                    p.isr_shrank(&old, min_isr);
                }
                if p.leader == id {
                    elect(p, &up, unclean);
                }
            }
        }
        if self.controller == id {
            self.elect_controller();
        }
        tracing::info!(broker = id, "broker stopped");
        true
    }

    /// Starts a stopped broker: offline partitions it can lead get it back as leader; its other
    /// replicas catch up on what was produced while it was down, then rejoin the ISR.
    pub fn start_broker(&mut self, id: BrokerId, now: i64) -> bool {
        self.advance(now);
        let Some(broker) = self.brokers.get_mut(&id) else {
            return false;
        };
        if broker.up {
            return true;
        }
        let down_for = broker
            .down_since
            .map(|t| ((now - t).max(0)) as f64 / 1000.0)
            .unwrap_or(0.0);
        broker.up = true;
        broker.down_since = None;
        let up: BTreeSet<BrokerId> = self.alive_brokers().map(|b| b.id).collect();
        let default_unclean = self.broker_default_value("unclean.leader.election.enable");
        let mut active = Vec::new();
        for topic in self.topics.values_mut() {
            let unclean = topic
                .configs
                .get("unclean.leader.election.enable")
                .map(String::as_str)
                .or(default_unclean.as_deref())
                == Some("true");
            for (index, p) in topic.partitions.iter_mut().enumerate() {
                if !p.replicas.contains(&id) {
                    continue;
                }
                if p.leader < 0 {
                    elect(p, &up, unclean);
                }
                if p.isr.contains(&id) {
                    continue;
                }
                let missed = (p.rates.producer_byte * down_for).min(p.size.max(0.0));
                let extra = p.extra_mut();
                if extra
                    .reassignment
                    .as_ref()
                    .is_some_and(|r| r.adding.contains(&id))
                {
                    continue;
                }
                if missed <= 0.0 {
                    extra.catchup.retain(|(b, _)| *b != id);
                    p.isr.push(id);
                } else {
                    match extra.catchup.iter_mut().find(|(b, _)| *b == id) {
                        Some(entry) => entry.1 += missed,
                        None => extra.catchup.push((id, missed)),
                    }
                    active.push((topic.name.clone(), index as i32));
                }
            }
        }
        self.active.extend(active);
        if self.controller < 0 {
            self.elect_controller();
        }
        tracing::info!(broker = id, "broker started");
        true
    }

    // ---------------------------------------------------------------- topics

    pub fn topic_id_for(name: &str) -> u128 {
        let h1 = crate::util::fnv1a(&[name.as_bytes(), b"topic-id"]);
        let h2 = crate::util::mix64(h1 ^ 0x5151_5151);
        let mut id = ((h1 as u128) << 64) | h2 as u128;
        // A version-4 style UUID, never nil.
        id &= !(0xF000u128 << 64);
        id |= 0x4000u128 << 64;
        id
    }

    /// Adds a topic; partitions get their leader (given, else the first alive ISR member).
    pub fn insert_topic(
        &mut self,
        name: &str,
        configs: BTreeMap<String, String>,
        partitions: Vec<NewPartition>,
    ) {
        let id = Self::topic_id_for(name);
        self.placement_changed();
        let up: BTreeSet<BrokerId> = self.alive_brokers().map(|b| b.id).collect();
        let parts = partitions
            .into_iter()
            .map(|np| self.make_partition(np, &up))
            .collect();
        self.topic_ids.insert(id, name.to_string());
        self.topics.insert(
            name.to_string(),
            Topic {
                name: name.to_string(),
                name_sb: StrBytes::from_string(name.to_string()),
                id,
                configs,
                partitions: parts,
            },
        );
    }

    pub fn make_partition(&self, np: NewPartition, up: &BTreeSet<BrokerId>) -> Partition {
        let isr: Vec<BrokerId> = if np.isr.is_empty() {
            np.replicas.clone()
        } else {
            np.isr.clone()
        };
        // A down broker is not in sync, unless it is the last one (as Kafka keeps it).
        let mut live_isr: Vec<BrokerId> = isr.iter().copied().filter(|b| up.contains(b)).collect();
        if live_isr.is_empty() {
            live_isr = isr.clone();
        }
        let leader = match np.leader {
            Some(l) if up.contains(&l) && live_isr.contains(&l) => l,
            Some(_) | None => np
                .replicas
                .iter()
                .copied()
                .find(|b| up.contains(b) && live_isr.contains(b))
                .unwrap_or(-1),
        };
        let msg_bytes = np.rates.msg_bytes();
        let end = (np.size / msg_bytes).floor();
        Partition {
            replicas: np.replicas,
            isr: live_isr,
            leader,
            leader_epoch: 0,
            log_start: 0.0,
            log_end: end,
            size: np.size,
            rates: np.rates,
            last_moved_at: np.last_moved_at,
            extra: None,
        }
    }

    pub fn topic_by_id(&self, id: u128) -> Option<&Topic> {
        self.topic_ids.get(&id).and_then(|n| self.topics.get(n))
    }

    pub fn delete_topic(&mut self, name: &str) -> bool {
        self.placement_changed();
        match self.topics.remove(name) {
            Some(t) => {
                self.topic_ids.remove(&t.id);
                self.lag.forget(&lag::ConfigKey::Topic(name.to_string()));
                self.active.retain(|(n, _)| n != name);
                for g in self.groups.values_mut() {
                    g.offsets.remove(name);
                    if let Some(sim) = g.sim.as_mut() {
                        sim.subscriptions.retain(|(n, _)| n != name);
                    }
                }
                true
            }
            None => false,
        }
    }

    pub fn partition(&self, topic: &str, partition: i32) -> Option<&Partition> {
        let p = usize::try_from(partition).ok()?;
        self.topics.get(topic)?.partitions.get(p)
    }

    pub fn partition_mut(&mut self, topic: &str, partition: i32) -> Option<&mut Partition> {
        let p = usize::try_from(partition).ok()?;
        self.topics.get_mut(topic)?.partitions.get_mut(p)
    }

    pub fn partition_count(&self) -> usize {
        self.topics.values().map(|t| t.partitions.len()).sum()
    }

    /// Rack-aware round-robin placement in the spirit of Kafka's: brokers ordered alternating
    /// racks; each partition starts one broker further; later replicas avoid racks already used
    /// until every rack has one.
    pub fn place(
        &self,
        topic: &str,
        first_partition: i32,
        count: i32,
        replication_factor: usize,
    ) -> Result<Vec<Vec<BrokerId>>, ApiError> {
        let alive: Vec<&Broker> = self.alive_brokers().filter(|b| !b.maintenance).collect();
        let alive: Vec<&Broker> = if alive.is_empty() {
            self.alive_brokers().collect()
        } else {
            alive
        };
        if replication_factor == 0 || replication_factor > alive.len() {
            return Err(ApiError::new(
                err::INVALID_REPLICATION_FACTOR,
                format!(
                    "Unable to replicate the partition {replication_factor} time(s): The target replication factor of {replication_factor} cannot be reached because only {} broker(s) are registered.",
                    alive.len()
                ),
            ));
        }
        let ordered: Vec<(BrokerId, Option<String>)> = rack_alternating(&alive)
            .into_iter()
            .map(|(id, rack)| (id, rack.map(str::to_string)))
            .collect();
        let start = (crate::util::fnv1a(&[topic.as_bytes()]) % ordered.len() as u64) as usize;
        let out = (first_partition..first_partition + count)
            .map(|p| crate::scenario::place_one(&ordered, start + p as usize, replication_factor))
            .collect();
        Ok(out)
    }

    // ---------------------------------------------------------------- elections

    /// Preferred leader election for one partition.
    pub fn elect_preferred(&mut self, topic: &str, partition: i32) -> Result<(), ApiError> {
        let up: BTreeSet<BrokerId> = self.alive_brokers().map(|b| b.id).collect();
        let p = self.partition_mut(topic, partition).ok_or_else(|| {
            ApiError::new(
                err::UNKNOWN_TOPIC_OR_PARTITION,
                "This server does not host this topic-partition.",
            )
        })?;
        let Some(&preferred) = p.replicas.first() else {
            return Err(ApiError::new(
                err::PREFERRED_LEADER_NOT_AVAILABLE,
                "The partition has no replicas",
            ));
        };
        if p.leader == preferred {
            return Err(ApiError::new(
                err::ELECTION_NOT_NEEDED,
                "Leader election not needed for topic partition.",
            ));
        }
        if !up.contains(&preferred) || !p.isr.contains(&preferred) {
            return Err(ApiError::new(
                err::PREFERRED_LEADER_NOT_AVAILABLE,
                format!(
                    "Failed to elect leader for partition {topic}-{partition} under strategy PreferredReplicaPartitionLeaderElectionStrategy"
                ),
            ));
        }
        p.leader = preferred;
        p.leader_epoch += 1;
        Ok(())
    }

    /// Unclean election: for an offline partition, any alive replica becomes leader.
    pub fn elect_unclean(&mut self, topic: &str, partition: i32) -> Result<(), ApiError> {
        let up: BTreeSet<BrokerId> = self.alive_brokers().map(|b| b.id).collect();
        let p = self.partition_mut(topic, partition).ok_or_else(|| {
            ApiError::new(
                err::UNKNOWN_TOPIC_OR_PARTITION,
                "This server does not host this topic-partition.",
            )
        })?;
        if p.leader >= 0 {
            return Err(ApiError::new(
                err::ELECTION_NOT_NEEDED,
                "Leader election not needed for topic partition.",
            ));
        }
        if !elect(p, &up, true) {
            return Err(ApiError::new(
                err::ELIGIBLE_LEADERS_NOT_AVAILABLE,
                format!("No alive replica for partition {topic}-{partition}"),
            ));
        }
        Ok(())
    }

    // ---------------------------------------------------------------- time

    /// Moves simulated time to `now`: logs grow and are trimmed by retention, simulated groups
    /// commit, copies progress, reassignments complete, caught-up replicas rejoin the ISR.
    pub fn advance(&mut self, now: i64) {
        if now <= self.now_ms {
            return;
        }
        let dt = (now - self.now_ms) as f64 / 1000.0;
        self.now_ms = now;
        if self.lag.pending() {
            self.lag.settle(now);
        }
        self.grow_logs(dt);
        let offsets = self.progress_groups(dt);
        self.progress_copies(dt, now);
        self.advance_work = self.partition_count() + offsets;
    }

    fn grow_logs(&mut self, dt: f64) {
        let defaults = self.topic_defaults_for_retention();
        for topic in self.topics.values_mut() {
            let policy = topic
                .configs
                .get("cleanup.policy")
                .map(String::as_str)
                .unwrap_or(defaults.cleanup_policy.as_str());
            let compacted = policy.contains("compact");
            let deletes = policy.contains("delete");
            let retention_bytes = topic
                .configs
                .get("retention.bytes")
                .and_then(|v| v.parse::<i64>().ok())
                .unwrap_or(defaults.retention_bytes);
            let retention_ms = topic
                .configs
                .get("retention.ms")
                .and_then(|v| v.parse::<i64>().ok())
                .unwrap_or(defaults.retention_ms);
            let tiered = topic
                .configs
                .get("remote.storage.enable")
                .is_some_and(|v| v.eq_ignore_ascii_case("true"));
            let local_retention = topic
                .configs
                .get("local.retention.bytes")
                .and_then(|v| v.parse::<i64>().ok())
                .unwrap_or(-2);
            for p in topic.partitions.iter_mut() {
                let msgs = p.rates.producer_msg * dt;
                let bytes = p.rates.producer_byte * dt;
                if msgs <= 0.0 && bytes <= 0.0 {
                    continue;
                }
                p.log_end += msgs;
                if compacted && !deletes {
                    // A compacted topic holds its steady size: old versions go as new come.
                    continue;
                }
                // A tiered log's retention counts its remote part too; the split into local
                // and remote follows below.
                let remote = if tiered { p.remote_bytes() } else { 0.0 };
                if let Some(e) = p.extra.as_mut().filter(|_| remote > 0.0) {
                    e.remote_bytes = 0.0;
                }
                p.size += remote;
                let before = p.size;
                p.size += bytes;
                let mut excess = 0.0;
                if retention_ms > 0 && p.rates.producer_byte > 0.0 {
                    // Time retention: once the log holds retention.ms of data, segments are
                    // deleted as fast as new ones are written.
                    let cap = p.rates.producer_byte * retention_ms as f64 / 1000.0;
                    let cap = cap.max(before);
                    if p.size > cap {
                        excess += p.size - cap;
                        p.size = cap;
                    }
                }
                if retention_bytes >= 0 && p.size > retention_bytes as f64 {
                    excess += p.size - retention_bytes as f64;
                    p.size = retention_bytes as f64;
                }
                if excess > 0.0 {
                    let msg_bytes = p.rates.msg_bytes();
                    p.log_start = (p.log_start + excess / msg_bytes).min(p.log_end);
                    if let Some(extra) = p.extra.as_mut() {
                        extra.stored.trim_before(p.log_start.floor() as i64);
                    }
                }
                if tiered {
                    p.tier(local_retention);
                }
            }
        }
    }

    /// Offloads the part of each partition of a tiered topic (`remote.storage.enable=true`)
    /// beyond its `local.retention.bytes` to remote storage at once, as Kafka's remote log
    /// manager does segment by segment.
    pub fn apply_tiering(&mut self, topic: &str) {
        let Some(t) = self.topics.get_mut(topic) else {
            return;
        };
        if !t
            .configs
            .get("remote.storage.enable")
            .is_some_and(|v| v.eq_ignore_ascii_case("true"))
        {
            return;
        }
        let local_retention = t
            .configs
            .get("local.retention.bytes")
            .and_then(|v| v.parse::<i64>().ok())
            .unwrap_or(-2);
        for p in t.partitions.iter_mut() {
            p.tier(local_retention);
        }
    }

    /// Applies a changed retention to a topic at once (Kafka deletes old segments on its next
    /// retention check).
    pub fn apply_retention(&mut self, topic: &str) {
        let defaults = self.topic_defaults_for_retention();
        let Some(t) = self.topics.get_mut(topic) else {
            return;
        };
        let retention_bytes = t
            .configs
            .get("retention.bytes")
            .and_then(|v| v.parse::<i64>().ok())
            .unwrap_or(defaults.retention_bytes);
        let retention_ms = t
            .configs
            .get("retention.ms")
            .and_then(|v| v.parse::<i64>().ok())
            .unwrap_or(defaults.retention_ms);
        let policy = t
            .configs
            .get("cleanup.policy")
            .map(String::as_str)
            .unwrap_or(defaults.cleanup_policy.as_str());
        if !policy.contains("delete") {
            return;
        }
        for p in t.partitions.iter_mut() {
            let mut cap = f64::INFINITY;
            if retention_bytes >= 0 {
                cap = retention_bytes as f64;
            }
            if retention_ms >= 0 && p.rates.producer_byte > 0.0 {
                cap = cap.min(p.rates.producer_byte * retention_ms as f64 / 1000.0);
            }
            if p.size > cap {
                let excess = p.size - cap;
                p.size = cap;
                p.log_start = (p.log_start + excess / p.rates.msg_bytes()).min(p.log_end);
                if let Some(extra) = p.extra.as_mut() {
                    extra.stored.trim_before(p.log_start.floor() as i64);
                }
            }
        }
    }

    /// Simulated groups commit what they consumed; returns how many offsets were walked.
    fn progress_groups(&mut self, dt: f64) -> usize {
        let mut walked = 0;
        for group in self.groups.values_mut() {
            let Some(sim) = group.sim.as_ref() else {
                continue;
            };
            if group.members.is_empty() {
                continue;
            }
            for (topic_name, share) in &sim.subscriptions {
                let Some(topic) = self.topics.get(topic_name) else {
                    continue;
                };
                walked += topic.partitions.len();
                if !group.offsets.contains_key(topic_name) {
                    group.offsets.insert(topic_name.clone(), Vec::new());
                }
                let Some(offsets) = group.offsets.get_mut(topic_name) else {
                    continue;
                };
                if offsets.len() < topic.partitions.len() {
                    offsets.resize(topic.partitions.len(), None);
                }
                for (i, p) in topic.partitions.iter().enumerate() {
                    let step = p.rates.consumer_msg * share * dt;
                    let slot = &mut offsets[i];
                    let current = slot.as_ref().map(|c| c.offset).unwrap_or(p.log_start);
                    let next = (current + step)
                        .min(p.log_end.floor())
                        .max(p.log_start.floor());
                    *slot = Some(Committed {
                        offset: next,
                        leader_epoch: p.leader_epoch,
                        metadata: None,
                    });
                }
            }
        }
        walked
    }

    /// The broker-level value of a config as the cluster default sees it (dynamic default, then
    /// static, then default).
    pub fn broker_default_value(&self, name: &str) -> Option<String> {
        if let Some(v) = self.broker_defaults.get(name) {
            return Some(v.clone());
        }
        configs::static_broker_value(self, None, name)
            .or_else(|| configs::broker_def(name).and_then(|d| d.default.map(str::to_string)))
    }
}

/// Elects a leader for a partition whose leader is gone: the first alive ISR member in replica
/// order, or with `unclean` any alive replica. Returns whether a leader was found.
fn elect(p: &mut Partition, up: &BTreeSet<BrokerId>, unclean: bool) -> bool {
    let clean = p
        .replicas
        .iter()
        .copied()
        .find(|b| up.contains(b) && p.isr.contains(b));
    let choice = match clean {
        Some(b) => Some(b),
        None if unclean => p.replicas.iter().copied().find(|b| up.contains(b)),
        None => None,
    };
    match choice {
        Some(b) => {
            if !p.isr.contains(&b) {
                p.isr = vec![b];
            }
            if p.isr.iter().any(|x| !up.contains(x)) && p.isr.len() > 1 {
                p.isr.retain(|x| up.contains(x));
            }
            p.leader = b;
            p.leader_epoch += 1;
            true
        }
        None => {
            if p.leader >= 0 {
                p.leader = -1;
                p.leader_epoch += 1;
            }
            false
        }
    }
}

fn rack_alternating<'a>(brokers: &[&'a Broker]) -> Vec<(BrokerId, Option<&'a str>)> {
    let mut by_rack: BTreeMap<Option<&str>, Vec<BrokerId>> = BTreeMap::new();
    for b in brokers {
        by_rack.entry(b.rack.as_deref()).or_default().push(b.id);
    }
    let mut out = Vec::new();
    let longest = by_rack.values().map(Vec::len).max().unwrap_or(0);
    for i in 0..longest {
        for (rack, ids) in &by_rack {
            if let Some(id) = ids.get(i) {
                out.push((*id, *rack));
            }
        }
    }
    out
}

/// Topic config defaults as inherited from the brokers, for the model's own use.
pub struct RetentionDefaults {
    pub cleanup_policy: String,
    pub retention_bytes: i64,
    pub retention_ms: i64,
}

impl Cluster {
    pub fn topic_defaults_for_retention(&self) -> RetentionDefaults {
        let get = |name: &str| configs::topic_value(self, None, name).0;
        RetentionDefaults {
            cleanup_policy: get("cleanup.policy").unwrap_or_else(|| "delete".into()),
            retention_bytes: get("retention.bytes")
                .and_then(|v| v.parse().ok())
                .unwrap_or(-1),
            retention_ms: get("retention.ms")
                .and_then(|v| v.parse().ok())
                .unwrap_or(604_800_000),
        }
    }

    /// The effective value of a topic config (override, then broker synonyms, then default).
    pub fn topic_config(&self, topic: &str, name: &str) -> Option<String> {
        configs::topic_value(self, self.topics.get(topic), name).0
    }

    pub fn min_insync(&self, topic: &str) -> i32 {
        self.topic_config(topic, "min.insync.replicas")
            .and_then(|v| v.parse().ok())
            .unwrap_or(1)
    }

    pub fn is_compacted(&self, topic: &str) -> bool {
        self.topic_config(topic, "cleanup.policy")
            .is_some_and(|v| v.contains("compact"))
    }

    /// Log dir index of a replica.
    pub fn dir_of(&self, topic: &str, p: &Partition, index: i32, broker: BrokerId) -> usize {
        if let Some(extra) = p.extra.as_ref() {
            if let Some((_, d)) = extra.dir_overrides.iter().find(|(b, _)| *b == broker) {
                return *d as usize;
            }
        }
        let n = self.log_dirs.len().max(1);
        (crate::util::fnv1a(&[topic.as_bytes()]) as usize + index as usize + broker as usize) % n
    }
}

#[cfg(test)]
mod replica_index_tests {
    use super::*;
    use crate::scenario::{generate, load, GenerateParams};

    /// What walking every partition of every topic finds for `broker`.
    fn walked(c: &Cluster, broker: BrokerId) -> Vec<(String, usize, Vec<BrokerId>)> {
        let mut out = Vec::new();
        for t in c.topics.values() {
            for (i, p) in t.partitions.iter().enumerate() {
                if p.replicas.contains(&broker) {
                    out.push((t.name.clone(), i, p.replicas.clone()));
                }
            }
        }
        out
    }

    fn indexed(c: &mut Cluster, broker: BrokerId) -> Vec<(String, usize, Vec<BrokerId>)> {
        c.index_replicas();
        assert!(c.replica_index.is_some());
        c.replicas_of(broker)
            .into_iter()
            .map(|(t, i, p)| (t.name.clone(), i, p.replicas.clone()))
            .collect()
    }

    fn every_broker_matches(c: &mut Cluster) {
        let ids: Vec<BrokerId> = c.brokers.keys().copied().collect();
        for b in ids {
            let truth = walked(c, b);
            assert_eq!(indexed(c, b), truth, "broker {b}");
        }
    }

    #[test]
    fn a_brokers_replicas_from_the_index_are_those_of_walking_every_partition_through_placement_changes(
    ) {
        let snapshot = generate(&GenerateParams {
            brokers: 6,
            topics: 8,
            partitions_per_topic: 5,
            ..GenerateParams::default()
        });
        let mut c = load(&snapshot, 1_000, 125e6).expect("load");
        every_broker_matches(&mut c);

        // A reassignment: while it runs (target plus the replicas being removed), cancelled,
        // and again until it completes.
        let topic = c.topics.keys().next().cloned().expect("a topic");
        let before = c.partition(&topic, 0).expect("partition").replicas.clone();
        let target: Vec<BrokerId> = c
            .brokers
            .keys()
            .copied()
            .filter(|b| !before.contains(b))
            .take(before.len())
            .collect();
        c.reassign(&topic, 0, target.clone(), false, 2_000)
            .expect("reassign");
        every_broker_matches(&mut c);
        c.cancel_reassignment(&topic, 0, 3_000).expect("cancel");
        every_broker_matches(&mut c);
        c.reassign(&topic, 0, target.clone(), false, 4_000)
            .expect("reassign");
        let mut now = 4_000;
        while c
            .partition(&topic, 0)
            .is_some_and(|p| p.reassignment().is_some())
        {
            now += 60_000;
            c.advance(now);
            assert!(now < 100_000_000, "the reassignment completes");
        }
        assert_eq!(c.partition(&topic, 0).expect("p").replicas, target);
        every_broker_matches(&mut c);

        // Topics deleted and created, partitions added.
        c.delete_topic(&topic);
        every_broker_matches(&mut c);
        let replicas = c.place("fresh", 0, 3, 2).expect("placement");
        let news: Vec<NewPartition> = replicas
            .into_iter()
            .map(|replicas| NewPartition {
                isr: replicas.clone(),
                replicas,
                leader: None,
                size: 0.0,
                rates: Rates::default(),
                last_moved_at: None,
            })
            .collect();
        c.insert_topic("fresh", BTreeMap::new(), news);
        every_broker_matches(&mut c);
        let up: BTreeSet<BrokerId> = c.alive_brokers().map(|b| b.id).collect();
        let more = c.make_partition(
            NewPartition {
                replicas: vec![1, 2],
                leader: None,
                isr: vec![1, 2],
                size: 0.0,
                rates: Rates::default(),
                last_moved_at: None,
            },
            &up,
        );
        if let Some(t) = c.topics.get_mut("fresh") {
            // As CreatePartitions does, but without telling the index: it notices the count.
            t.partitions.push(more);
        }
        every_broker_matches(&mut c);
    }
}
