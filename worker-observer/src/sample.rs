//! Reading the cluster: one [`Sample`] is everything ballast learns in one pass (placement,
//! replica sizes, offsets, consumer progress, topic settings). Rates come from two samples:
//! producer msg/s from log-end-offset deltas, consumer msg/s from committed-offset deltas summed
//! over groups, byte rates from msg/s times the partition's bytes per message. No broker plugin.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::Arc;
use std::time::Instant;

use ballast_kafka::{
    Client, ConfigResource, GroupListing, KafkaVersionRange, MetadataMode, OffsetSpec,
};
use ballast_model::snapshot::{Snapshot, SnapshotBroker, SnapshotPartition, SNAPSHOT_FORMAT};
use ballast_model::{BrokerId, BrokerState, TopicPartition};
use tracing::warn;

/// The topic settings a sample reads (DescribeConfigs of these keys only, no synonyms).
const TOPIC_SETTINGS: [&str; 5] = [
    "cleanup.policy",
    "min.insync.replicas",
    "retention.ms",
    "retention.bytes",
    "remote.storage.enable",
];

/// What one pass over the cluster saw.
#[derive(Debug, Clone, Default)]
pub struct Sample {
    pub at_ms: i64,
    pub cluster_id: Option<String>,
    /// The active controller: on KRaft the metadata quorum's leader (DescribeQuorum), on
    /// ZooKeeper Metadata's controller id. Metadata's on KRaft is a broker the answering broker
    /// picks, never used.
    pub controller_id: Option<BrokerId>,
    /// `quorum`, `metadata` or `unknown` (KRaft, DescribeQuorum failed).
    pub controller_source: &'static str,
    /// From a broker's ApiVersions: KRaft or ZooKeeper (None: not read).
    pub metadata_mode: Option<MetadataMode>,
    /// The Kafka releases that broker's ApiVersions fit.
    pub kafka_version: Option<KafkaVersionRange>,
    /// The KRaft metadata quorum (None off KRaft or when it could not be read).
    pub quorum: Option<ballast_kafka::QuorumDescription>,
    /// Eligible leader replicas (KIP-966) by DescribeTopicPartitions: None where the brokers do
    /// not offer it (before Kafka 3.8, ZooKeeper), Err when it failed.
    pub elr: Option<Result<Vec<ballast_kafka::PartitionElr>, String>>,
    /// Brokers in the metadata: id and rack.
    pub brokers: BTreeMap<BrokerId, Option<String>>,
    /// Host and port of every broker in the metadata.
    pub addresses: BTreeMap<BrokerId, (String, i32)>,
    pub topics: BTreeMap<String, TopicMeta>,
    /// Every partition of the metadata with what was read of it: placement, offsets and the
    /// logs its brokers reported. One entry per partition (not one map per kind of read keyed
    /// by partition): one key, one string, and derive reads a partition in one place.
    pub partitions: BTreeMap<TopicPartition, Placement>,
    /// Current replicas a broker reported in its log dirs of partitions missing from the
    /// metadata read before (a topic created or deleted meanwhile): they count in its disk.
    pub stray_replicas: BTreeMap<(TopicPartition, BrokerId), ReplicaLog>,
    /// Replicas being moved between log dirs of a broker (AlterReplicaLogDirs).
    pub future_replicas: BTreeMap<(TopicPartition, BrokerId), ReplicaLog>,
    /// The log dirs of every broker of the metadata, or why they could not be read.
    pub log_dirs: BTreeMap<BrokerId, Result<Vec<DirInfo>, String>>,
    /// Committed offsets by group, then partition; a group whose offsets could not be read is
    /// missing here but listed in `groups`.
    pub committed: BTreeMap<String, BTreeMap<TopicPartition, i64>>,
    pub groups: BTreeMap<String, GroupInfo>,
    pub compacted: BTreeSet<String>,
    pub min_insync: BTreeMap<String, i32>,
    /// Why the consumer groups could not be listed (then `groups` and `committed` are empty).
    pub groups_error: Option<String>,
    /// How long each step took, in milliseconds (for the benchmark and the heartbeat).
    pub timings: Vec<(&'static str, u64)>,
}

/// What a tick reports of its sample once the sample itself is dropped.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Summary {
    pub brokers: Vec<BrokerId>,
    pub topics: usize,
    pub partitions: usize,
    pub replicas: usize,
    pub groups: usize,
    pub group_offsets: usize,
    pub timings: Vec<(&'static str, u64)>,
}

impl Summary {
    pub fn of(s: &Sample) -> Summary {
        Summary {
            brokers: s.brokers.keys().copied().collect(),
            topics: s.topics.len(),
            partitions: s.partitions.len(),
            replicas: s.replica_count(),
            groups: s.groups.len(),
            group_offsets: s.committed.values().map(|c| c.len()).sum(),
            timings: s.timings.clone(),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Default)]
pub struct TopicMeta {
    pub id: Option<String>,
    pub internal: bool,
    pub retention_ms: Option<i64>,
    pub retention_bytes: Option<i64>,
    pub cleanup_policy: Option<String>,
    /// `remote.storage.enable` (tiered storage, KIP-405); None when not read.
    pub remote_storage: Option<bool>,
}

/// A partition as one sample saw it: its placement from the metadata and what the other reads
/// found of it.
#[derive(Debug, Clone, PartialEq)]
pub struct Placement {
    pub replicas: Vec<BrokerId>,
    pub leader: Option<BrokerId>,
    pub isr: Vec<BrokerId>,
    pub leader_epoch: Option<i32>,
    pub offline_replicas: Vec<BrokerId>,
    /// Log start and log end offsets (ListOffsets earliest and latest); None when not read.
    pub earliest: Option<i64>,
    pub latest: Option<i64>,
    /// A tiered topic's partition: the first offset in the leader's local log (ListOffsets
    /// EARLIEST_LOCAL, -4); None when the topic is not tiered or it was not read. The offsets
    /// from `earliest` up to it are held only in remote storage, and the sizes in `logs`
    /// (DescribeLogDirs) count the local log only.
    pub earliest_local: Option<i64>,
    /// Every current replica its brokers reported in their log dirs, in broker order (a
    /// broker may still report a replica it no longer holds in the metadata).
    pub logs: Vec<(BrokerId, ReplicaLog)>,
    /// A reassignment in progress: replicas being added and removed.
    pub reassigning: Option<Box<(Vec<BrokerId>, Vec<BrokerId>)>>,
}

impl Placement {
    pub fn new(replicas: Vec<BrokerId>, leader: Option<BrokerId>, isr: Vec<BrokerId>) -> Self {
        Self {
            replicas,
            leader,
            isr,
            leader_epoch: None,
            offline_replicas: Vec::new(),
            earliest: None,
            latest: None,
            earliest_local: None,
            logs: Vec::new(),
            reassigning: None,
        }
    }

    /// The log broker `broker` reported for its current replica of this partition.
    pub fn log(&self, broker: BrokerId) -> Option<&ReplicaLog> {
        self.logs
            .iter()
            .find(|(b, _)| *b == broker)
            .map(|(_, log)| log)
    }

    /// Records a replica's log (one per broker: a second report replaces the first).
    pub fn set_log(&mut self, broker: BrokerId, log: ReplicaLog) {
        match self.logs.binary_search_by_key(&broker, |(b, _)| *b) {
            Ok(i) => self.logs[i].1 = log,
            Err(i) => self.logs.insert(i, (broker, log)),
        }
    }

    /// The messages the sizes in `logs` hold: from the first local offset (a tiered topic's
    /// earliest-local, else the log start) to the log end. None when an offset was not read.
    pub fn local_messages(&self) -> Option<i64> {
        let start = self.earliest_local.or(self.earliest)?;
        Some((self.latest? - start).max(0))
    }

    /// The size of the partition: its leader's replica, else the largest replica read.
    pub fn size(&self) -> Option<u64> {
        self.leader
            .and_then(|l| self.log(l))
            .or_else(|| {
                self.replicas
                    .iter()
                    .filter_map(|r| self.log(*r))
                    .max_by_key(|log| log.size)
            })
            .map(|log| log.size)
    }
}

/// One replica as its broker's DescribeLogDirs reported it.
#[derive(Debug, Clone, PartialEq)]
pub struct ReplicaLog {
    /// The log dir, shared by every replica in it.
    pub dir: Arc<str>,
    pub size: u64,
    pub offset_lag: i64,
}

/// One log directory of a broker.
#[derive(Debug, Clone, PartialEq)]
pub struct DirInfo {
    pub path: String,
    pub error: Option<String>,
    pub total_bytes: Option<i64>,
    pub usable_bytes: Option<i64>,
    pub used_bytes: i64,
    pub replicas: i64,
}

#[derive(Debug, Clone, PartialEq, Default)]
pub struct GroupInfo {
    pub state: Option<String>,
    pub protocol_type: String,
    pub members: Option<i32>,
    pub coordinator: Option<BrokerId>,
}

impl Sample {
    /// The size of a partition: its leader's replica, else the largest replica read.
    pub fn partition_size(&self, tp: &TopicPartition) -> Option<u64> {
        self.partitions.get(tp).and_then(Placement::size)
    }

    /// The size broker `broker` reported for its current replica of `tp`.
    pub fn replica_size(&self, tp: &TopicPartition, broker: BrokerId) -> Option<u64> {
        match self.partitions.get(tp) {
            Some(p) => p.log(broker).map(|r| r.size),
            None => self
                .stray_replicas
                .get(&(tp.clone(), broker))
                .map(|r| r.size),
        }
    }

    /// Every current replica read: (partition, broker, log).
    pub fn replica_logs(&self) -> impl Iterator<Item = (&TopicPartition, BrokerId, &ReplicaLog)> {
        self.partitions
            .iter()
            .flat_map(|(tp, p)| p.logs.iter().map(move |(b, log)| (tp, *b, log)))
            .chain(
                self.stray_replicas
                    .iter()
                    .map(|((tp, b), log)| (tp, *b, log)),
            )
    }

    /// How many current replicas were read.
    pub fn replica_count(&self) -> usize {
        self.partitions
            .values()
            .map(|p| p.logs.len())
            .sum::<usize>()
            + self.stray_replicas.len()
    }
}

fn step(timings: &mut Vec<(&'static str, u64)>, name: &'static str, since: &mut Instant) {
    timings.push((name, since.elapsed().as_millis() as u64));
    *since = Instant::now();
}

/// Reads one sample. Parts that fail (a broker's log dirs, a group's offsets, topic configs) are
/// logged and left out: a partial view is still a view, and the next sample tries again. Only a
/// cluster whose metadata cannot be read fails the sample.
///
/// After the metadata every read is independent of the others, so they are all sent at once:
/// DescribeLogDirs to every broker, ListOffsets (earliest and latest) to every leader,
/// ListGroups to every broker then DescribeGroups and OffsetFetch (many groups a request) to
/// every coordinator, DescribeConfigs of every topic, ListPartitionReassignments. Each step's
/// timing is its own wall time from the moment they were sent.
pub async fn take(client: &Client, now_ms: i64) -> Result<Sample, ballast_kafka::Error> {
    let mut clock = Instant::now();
    let mut timings = Vec::new();
    let meta = client.refresh_metadata().await?;
    let mut s = Sample {
        at_ms: now_ms,
        cluster_id: meta.cluster_id.clone(),
        controller_id: meta.controller_id,
        controller_source: "metadata",
        ..Sample::default()
    };
    match client.broker_software().await {
        Ok(software) => {
            s.metadata_mode = Some(software.metadata_mode);
            s.kafka_version = Some(software.kafka_version);
        }
        Err(e) => warn!(error = %e, "broker software not read"),
    }
    if s.metadata_mode == Some(MetadataMode::Kraft) {
        // Metadata's controller id on KRaft is a broker the answering broker picks: the active
        // controller is the quorum's leader.
        match client.describe_quorum().await {
            Ok(quorum) => {
                s.controller_id = quorum.leader_id;
                s.controller_source = "quorum";
                s.quorum = Some(quorum);
            }
            Err(e) => {
                warn!(error = %e, "metadata quorum not read: the active controller is unknown");
                s.controller_id = None;
                s.controller_source = "unknown";
            }
        }
        s.elr = match client.describe_topic_partitions(&[]).await {
            Ok(list) => Some(Ok(list)),
            Err(ballast_kafka::Error::UnsupportedVersion { .. }) => None,
            Err(e) => {
                warn!(error = %e, "eligible leader replicas not read");
                Some(Err(e.to_string()))
            }
        };
    }
    for b in &meta.brokers {
        s.brokers.insert(b.id, b.rack.clone());
        s.addresses.insert(b.id, (b.host.clone(), b.port));
    }
    let mut all = Vec::new();
    for t in meta.topics.iter().filter(|t| t.error.is_none()) {
        s.topics.insert(
            t.name.clone(),
            TopicMeta {
                id: t.id.clone(),
                internal: t.internal,
                ..TopicMeta::default()
            },
        );
        for p in t
            .partitions
            .iter()
            .filter(|p| p.error.is_none() || !p.replicas.is_empty())
        {
            let tp = TopicPartition::new(t.name.clone(), p.partition);
            all.push(tp.clone());
            s.partitions.insert(
                tp,
                Placement {
                    leader_epoch: p.leader_epoch,
                    offline_replicas: p.offline_replicas.clone(),
                    ..Placement::new(p.replicas.clone(), p.leader, p.isr.clone())
                },
            );
        }
    }
    let broker_ids: Vec<BrokerId> = meta.brokers.iter().map(|b| b.id).collect();
    drop(meta);
    step(&mut timings, "metadata", &mut clock);

    let topics: Vec<ConfigResource> = s
        .topics
        .keys()
        .map(|t| ConfigResource::Topic(t.clone()))
        .collect();
    let sent = Instant::now();
    let timed = |name: &'static str| move || (name, sent.elapsed().as_millis() as u64);
    let (log_dirs, offsets, groups, configs, reassignments) = tokio::join!(
        async {
            let r = client.describe_log_dirs_of(&broker_ids).await;
            (r, timed("logDirs")())
        },
        async {
            let r = tokio::join!(
                client.list_offsets(&all, OffsetSpec::Earliest),
                client.list_offsets(&all, OffsetSpec::Latest)
            );
            (r, timed("offsets")())
        },
        async {
            let r = read_groups(client, &broker_ids).await;
            (r, timed("groups")())
        },
        async {
            let r = if topics.is_empty() {
                Ok(Vec::new())
            } else {
                client
                    .describe_config_values(&topics, &TOPIC_SETTINGS)
                    .await
            };
            (r, timed("configs")())
        },
        async {
            let r = client.list_partition_reassignments(None).await;
            (r, timed("reassignments")())
        },
    );
    drop(all);
    drop(topics);

    // The reads are filed under their partition through a hash index (hundreds of thousands
    // of look-ups: a B-tree of partition keys compares topic names at every level).
    let (keys, mut parts): (Vec<TopicPartition>, Vec<Placement>) =
        std::mem::take(&mut s.partitions).into_iter().unzip();
    let at: HashMap<(&str, i32), usize> = keys
        .iter()
        .enumerate()
        .map(|(i, tp)| ((tp.topic.as_str(), tp.partition), i))
        .collect();

    let (log_dirs, took) = log_dirs;
    timings.push(took);
    for (broker, dirs) in log_dirs {
        match dirs {
            Ok(dirs) => {
                let mut infos = Vec::with_capacity(dirs.dirs.len());
                for d in dirs.dirs {
                    let dir: Arc<str> = Arc::from(d.path.as_str());
                    infos.push(DirInfo {
                        used_bytes: d.used_bytes(),
                        replicas: d.replicas.len() as i64,
                        error: d.error.as_ref().map(|e| e.to_string()),
                        total_bytes: d.total_bytes,
                        usable_bytes: d.usable_bytes,
                        path: d.path.clone(),
                    });
                    for r in d.replicas {
                        let log = ReplicaLog {
                            dir: dir.clone(),
                            size: u64::try_from(r.size).unwrap_or(0),
                            offset_lag: r.offset_lag.max(0),
                        };
                        let known = at.get(&(r.topic.as_str(), r.partition)).copied();
                        match (r.is_future, known) {
                            (false, Some(i)) => parts[i].set_log(broker, log),
                            (true, _) => {
                                let tp = TopicPartition::new(r.topic, r.partition);
                                s.future_replicas.insert((tp, broker), log);
                            }
                            (false, None) => {
                                let tp = TopicPartition::new(r.topic, r.partition);
                                s.stray_replicas.insert((tp, broker), log);
                            }
                        }
                    }
                }
                s.log_dirs.insert(broker, Ok(infos));
            }
            Err(e) => {
                warn!(broker, error = %e, "log dirs not read");
                s.log_dirs
                    .insert(broker, Err(ballast_runtime::error_chain(&e)));
            }
        }
    }

    let ((earliest, latest), took) = offsets;
    timings.push(took);
    for (listed, latest) in [(earliest?, false), (latest?, true)] {
        for o in listed {
            if let (None, Some(offset)) = (&o.error, o.offset) {
                if let Some(p) = at
                    .get(&(o.topic.as_str(), o.partition))
                    .and_then(|i| parts.get_mut(*i))
                {
                    if latest {
                        p.latest = Some(offset);
                    } else {
                        p.earliest = Some(offset);
                    }
                }
            }
        }
    }

    let (groups, took) = groups;
    timings.push(took);
    s.groups = groups.groups;
    s.committed = groups.committed;
    s.groups_error = groups.error;

    let (configs, took) = configs;
    timings.push(took);
    match configs {
        Ok(configs) => {
            for rc in configs {
                let ConfigResource::Topic(name) = &rc.resource else {
                    continue;
                };
                let Some(meta) = s.topics.get_mut(name) else {
                    continue;
                };
                for e in &rc.entries {
                    let Some(v) = e.value.as_deref() else {
                        continue;
                    };
                    match e.name.as_str() {
                        "cleanup.policy" => {
                            if v.split(',').any(|p| p.trim() == "compact") {
                                s.compacted.insert(name.clone());
                            }
                            meta.cleanup_policy = Some(v.to_string());
                        }
                        "min.insync.replicas" => {
                            if let Ok(n) = v.parse() {
                                s.min_insync.insert(name.clone(), n);
                            }
                        }
                        "retention.ms" => meta.retention_ms = v.parse().ok(),
                        "retention.bytes" => meta.retention_bytes = v.parse().ok(),
                        "remote.storage.enable" => {
                            meta.remote_storage = Some(v.trim().eq_ignore_ascii_case("true"))
                        }
                        _ => {}
                    }
                }
            }
        }
        Err(e) => warn!(error = %e, "topic configs not read"),
    }

    let (reassignments, took) = reassignments;
    timings.push(took);
    match reassignments {
        Ok(list) => {
            for r in list {
                if let Some(p) = at
                    .get(&(r.topic.as_str(), r.partition))
                    .and_then(|i| parts.get_mut(*i))
                {
                    p.reassigning = Some(Box::new((r.adding, r.removing)));
                }
            }
        }
        Err(e) => warn!(error = %e, "reassignments not listed"),
    }
    // Tiered topics (known once their configs are read): where each partition's local log
    // starts (ListOffsets EARLIEST_LOCAL), so the remote offsets are told apart from the local
    // ones. Only their partitions are asked, after the other reads.
    let tiered: Vec<TopicPartition> = keys
        .iter()
        .filter(|tp| {
            s.topics
                .get(&tp.topic)
                .is_some_and(|t| t.remote_storage == Some(true))
        })
        .cloned()
        .collect();
    if !tiered.is_empty() {
        let local_sent = Instant::now();
        match client
            .list_offsets(&tiered, OffsetSpec::EarliestLocal)
            .await
        {
            Ok(listed) => {
                for o in listed {
                    if let (None, Some(offset)) = (&o.error, o.offset) {
                        if let Some(p) = at
                            .get(&(o.topic.as_str(), o.partition))
                            .and_then(|i| parts.get_mut(*i))
                        {
                            p.earliest_local = Some(offset);
                        }
                    } else if let Some(e) = &o.error {
                        warn!(topic = %o.topic, partition = o.partition, error = %e, "earliest local offset not read");
                    }
                }
            }
            Err(e) => warn!(error = %e, "earliest local offsets not read"),
        }
        timings.push(("localOffsets", local_sent.elapsed().as_millis() as u64));
    }
    drop(at);
    s.partitions = keys.into_iter().zip(parts).collect();
    step(&mut timings, "allReads", &mut clock);
    s.timings = timings;
    Ok(s)
}

/// What the group reads found.
struct GroupsRead {
    groups: BTreeMap<String, GroupInfo>,
    committed: BTreeMap<String, BTreeMap<TopicPartition, i64>>,
    error: Option<String>,
}

/// Every consumer group (ListGroups on every broker), described (DescribeGroups) and with its
/// committed offsets (OffsetFetch, many groups a request), both sent to every coordinator at
/// once.
async fn read_groups(client: &Client, brokers: &[BrokerId]) -> GroupsRead {
    let mut read = GroupsRead {
        groups: BTreeMap::new(),
        committed: BTreeMap::new(),
        error: None,
    };
    let listing = match client.list_groups_on(brokers).await {
        Ok(listing) => listing,
        Err(e) => {
            // Without the listing no group is read this time; the history keeps every group's
            // last offsets so consumption is counted once they are read again.
            warn!(error = %e, "consumer groups not listed");
            read.error = Some(ballast_runtime::error_chain(&e));
            return read;
        }
    };
    let ids: Vec<String> = listing.iter().map(|g| g.group_id.clone()).collect();
    // A share group (KIP-932) commits no offsets: its backlog starts at its share-partition
    // start offsets (DescribeShareGroupOffsets), read in their place.
    let (shares, others): (Vec<String>, Vec<String>) = {
        let (s, o): (Vec<&GroupListing>, Vec<&GroupListing>) = listing
            .iter()
            .partition(|g| g.group_type.as_deref() == Some("share"));
        (
            s.into_iter().map(|g| g.group_id.clone()).collect(),
            o.into_iter().map(|g| g.group_id.clone()).collect(),
        )
    };
    for g in listing {
        read.groups.insert(
            g.group_id,
            GroupInfo {
                state: g.state,
                protocol_type: g.protocol_type,
                members: None,
                coordinator: Some(g.coordinator),
            },
        );
    }
    if ids.is_empty() {
        return read;
    }
    let (described, offsets, share_offsets) = tokio::join!(
        client.describe_groups(&ids),
        client.committed_offsets_of_groups(&others),
        async {
            if shares.is_empty() {
                Ok(Vec::new())
            } else {
                client.share_group_offsets(&shares).await
            }
        }
    );
    let offsets = match (offsets, share_offsets) {
        (Ok(mut o), Ok(s)) => {
            o.extend(s);
            Ok(o)
        }
        (Err(e), _) | (_, Err(e)) => Err(e),
    };
    match described {
        Ok(described) => {
            for d in described.into_iter().filter(|d| d.error.is_none()) {
                if let Some(g) = read.groups.get_mut(&d.group_id) {
                    g.state = Some(d.state);
                    g.members = i32::try_from(d.members.len()).ok();
                    if !d.protocol_type.is_empty() {
                        g.protocol_type = d.protocol_type;
                    }
                    if d.coordinator.is_some() {
                        g.coordinator = d.coordinator;
                    }
                }
            }
        }
        Err(e) => warn!(error = %e, "groups not described"),
    }
    match offsets {
        Ok(offsets) => {
            for g in offsets {
                if let Some(e) = &g.error {
                    warn!(group = %g.group_id, error = %e, "committed offsets not read");
                    continue;
                }
                let entry = read.committed.entry(g.group_id).or_default();
                for o in g.offsets.into_iter().filter(|o| o.error.is_none()) {
                    if let Some(offset) = o.offset {
                        entry.insert(TopicPartition::new(o.topic, o.partition), offset);
                    }
                }
            }
        }
        Err(e) => warn!(error = %e, "committed offsets not read"),
    }
    read
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
        let size = place.size().unwrap_or(0);
        // The size is the local log's (DescribeLogDirs): bytes per message over the messages
        // it holds, not over those a tiered topic keeps only remotely.
        let messages = place.local_messages().unwrap_or(0) as f64;
        let bytes_per_msg = if messages > 0.0 {
            size as f64 / messages
        } else {
            0.0
        };
        let produced = rate(
            first.partitions.get(tp).and_then(|p| p.latest),
            place.latest,
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
        let mut p = Placement::new(vec![1, 2], Some(1), vec![1]);
        p.set_log(
            1,
            ReplicaLog {
                dir: "/d".into(),
                size: 1_000_000,
                offset_lag: 0,
            },
        );
        p.earliest = Some(0);
        p.latest = Some(latest);
        s.partitions.insert(tp(0), p);
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
    fn a_tiered_partitions_disk_is_its_local_log_and_bytes_per_message_count_local_messages() {
        // 1,000,000 local bytes (DescribeLogDirs) hold offsets 9,000..11,000; 0..9,000 are
        // remote only. The planner's size is the local one, and a message is 500 bytes.
        let tiered = |at_ms, latest| {
            let mut s = sample(at_ms, latest, 0);
            if let Some(p) = s.partitions.get_mut(&tp(0)) {
                p.earliest_local = Some(9_000);
            }
            s
        };
        let snap = snapshot(&tiered(0, 10_000), &tiered(10_000, 11_000), "now".into());
        let p = &snap.partitions[0];
        assert_eq!(p.size_bytes, 1_000_000);
        assert_eq!(p.producer_msg_rate, 100.0);
        assert!((p.producer_byte_rate - 100.0 * 500.0).abs() < 1e-6);
        let mut place = Placement::new(vec![1], Some(1), vec![1]);
        place.earliest = Some(0);
        place.latest = Some(11_000);
        assert_eq!(place.local_messages(), Some(11_000));
        place.earliest_local = Some(9_000);
        assert_eq!(place.local_messages(), Some(2_000));
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
