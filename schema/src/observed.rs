//! What the observer knows about the cluster: state tables replaced by every sample
//! (`cluster_*`, `consumer_group*`) and readings (`broker_readings`, `partition_counters`).
//!
//! One successful sample is one [`ObservedWrite`], written by [`Store::write_observed`] in a single
//! `BEGIN IMMEDIATE` transaction with prepared statements, so readers always see one whole sample
//! and a 60,000-partition cluster is written in well under a second. Readers take the whole view
//! at once ([`Store::observed_view`]) and notice a new one through [`Store::observed_generation`].

use ballast_model::{BrokerId, Load};
use rusqlite::{params, OptionalExtension, Row, Transaction};
use serde::{Deserialize, Serialize};

use crate::util::{json_col, json_text};
use crate::{Store, StoreError};

/// Cluster-level facts of one sample and how much of the cluster it could read.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
#[serde(rename_all = "camelCase")]
pub struct ClusterFacts {
    pub cluster_id: Option<String>,
    /// The active controller: on KRaft the metadata quorum's leader (DescribeQuorum), on
    /// ZooKeeper Metadata's controller id; None when there is none or it could not be read
    /// (`controller_source` says which).
    pub controller_id: Option<BrokerId>,
    /// `quorum`, `metadata` or `unknown` (KRaft, DescribeQuorum failed); None before it was read.
    #[serde(default)]
    pub controller_source: Option<String>,
    /// `kraft` or `zookeeper`, from ApiVersions (DescribeQuorum offered or not).
    #[serde(default)]
    pub metadata_mode: Option<String>,
    /// The Apache Kafka releases the brokers' ApiVersions fit, inclusive ("3.5"); None:
    /// unbounded on that side (or not read, then `metadata_mode` is None too).
    #[serde(default)]
    pub kafka_version_min: Option<String>,
    #[serde(default)]
    pub kafka_version_max: Option<String>,
    /// The KRaft metadata quorum as DescribeQuorum reported it (JSON: leaderId, leaderEpoch,
    /// highWatermark, voters, observers); None off KRaft or when it could not be read.
    #[serde(default)]
    pub quorum: Option<serde_json::Value>,
    /// When the sample was taken (its `now`).
    pub sampled_at_ms: i64,
    /// How long reading the cluster took.
    pub sample_duration_ms: i64,
    /// Brokers in the metadata.
    pub brokers: u32,
    /// Brokers whose log dirs were read.
    pub log_dirs_read: u32,
    pub partitions: u32,
    /// Partitions whose log-end offset was read.
    pub offsets_read: u32,
    pub groups: u32,
    /// Groups whose committed offsets were read.
    pub groups_read: u32,
    /// Free-form JSON the observer adds (its memory, write time, ...).
    pub detail: serde_json::Value,
}

/// The latest sample's facts as stored, with the bookkeeping the store adds.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ObservedCluster {
    /// Grows by one with every written sample.
    pub generation: i64,
    /// When the observer first wrote a sample into this database (history length).
    pub first_sampled_at_ms: i64,
    #[serde(flatten)]
    pub facts: ClusterFacts,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ObservedBroker {
    pub broker_id: BrokerId,
    pub host: Option<String>,
    pub port: Option<i32>,
    pub rack: Option<String>,
    /// In the latest metadata.
    pub alive: bool,
    /// On write: None keeps the stored value (a broker seen before keeps its first sighting).
    pub first_seen_ms: Option<i64>,
    /// On write: None keeps the stored value (a down broker keeps when it was last seen).
    pub last_seen_ms: Option<i64>,
    pub log_dirs_read: bool,
    pub log_dirs_error: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ObservedLogDir {
    pub broker_id: BrokerId,
    pub path: String,
    /// e.g. `KAFKA_STORAGE_ERROR` for an offline directory.
    pub error: Option<String>,
    pub total_bytes: Option<i64>,
    pub usable_bytes: Option<i64>,
    /// Bytes of the replicas in the directory.
    pub used_bytes: i64,
    pub replicas: i64,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ObservedTopic {
    pub name: String,
    pub topic_id: Option<String>,
    pub partitions: i32,
    pub replication_factor: i32,
    pub internal: bool,
    pub compacted: bool,
    pub min_insync: Option<i32>,
    pub retention_ms: Option<i64>,
    pub retention_bytes: Option<i64>,
    pub cleanup_policy: Option<String>,
    /// `remote.storage.enable` (tiered storage, KIP-405); None when not read.
    #[serde(default)]
    pub remote_storage: Option<bool>,
}

/// Rolling rates of a partition, averaged over `window_ms`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PartitionRates {
    pub producer_msg_rate: f64,
    pub producer_byte_rate: f64,
    pub consumer_msg_rate: f64,
    pub consumer_byte_rate: f64,
    pub window_ms: i64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ObservedPartition {
    pub topic: String,
    pub partition: i32,
    pub leader: Option<BrokerId>,
    pub leader_epoch: Option<i32>,
    /// Assignment order: the first is the preferred leader.
    pub replicas: Vec<BrokerId>,
    pub isr: Vec<BrokerId>,
    pub offline_replicas: Vec<BrokerId>,
    /// Replicas being added / removed by a reassignment in progress.
    pub adding: Vec<BrokerId>,
    pub removing: Vec<BrokerId>,
    /// Current size (the leader's replica, else the largest replica read); None if none was read.
    pub size_bytes: Option<i64>,
    /// Size averaged over the rate window (compacted topics: the median, their steady size).
    pub avg_size_bytes: Option<f64>,
    pub earliest_offset: Option<i64>,
    /// A tiered topic's partition: the first offset in its leader's local log (ListOffsets
    /// EARLIEST_LOCAL); the offsets from `earliest_offset` up to it are held only remotely.
    /// None when the topic is not tiered or the offset was not read.
    #[serde(default)]
    pub local_start_offset: Option<i64>,
    pub latest_offset: Option<i64>,
    /// When `latest_offset` was read.
    pub offsets_at_ms: Option<i64>,
    /// Messages appended since the observer first saw the partition (monotonic).
    pub produced_total: i64,
    /// Messages consumed, summed over groups, since the observer first saw it (monotonic).
    pub consumed_total: i64,
    /// None until the partition has two readings.
    pub rates: Option<PartitionRates>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ObservedReplica {
    pub topic: String,
    pub partition: i32,
    pub broker_id: BrokerId,
    pub is_future: bool,
    /// None when the broker's log dirs were not read or do not hold the replica.
    pub log_dir: Option<String>,
    pub size_bytes: Option<i64>,
    /// DescribeLogDirs' offset lag as the broker reports it: on Kafka 3.5+ 0 for a current log
    /// (its high watermark minus its log end offset), meaningful only for a future replica.
    pub offset_lag: Option<i64>,
    /// How far the replica is behind its leader in bytes: the leader's size minus its own, never
    /// below 0; 0 for the leader; for a future replica the current replica's size on the same
    /// broker minus its own. None when either size is unknown.
    #[serde(default)]
    pub lag_bytes: Option<i64>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ObservedGroup {
    pub group_id: String,
    pub state: Option<String>,
    pub protocol_type: String,
    pub members: Option<i32>,
    pub coordinator: Option<BrokerId>,
    pub offsets_read: bool,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ObservedGroupOffset {
    pub group_id: String,
    pub topic: String,
    pub partition: i32,
    pub committed_offset: i64,
    pub lag: Option<i64>,
}

/// One broker's seven loads at one instant, indexed like [`Load::ALL`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct BrokerReading {
    pub broker_id: BrokerId,
    pub at_ms: i64,
    /// 0 for a raw sample; the bucket width for a downsampled average.
    pub resolution_ms: i64,
    pub values: [Option<f64>; 7],
}

/// One partition's size and four rates at one instant (the rates as averaged over the rate
/// window then): `values` is indexed like [`PartitionReading::NAMES`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PartitionReading {
    pub topic: String,
    pub partition: i32,
    pub at_ms: i64,
    /// 0 for a reading as sampled; the bucket width for a downsampled average.
    pub resolution_ms: i64,
    pub values: [Option<f64>; 5],
}

impl PartitionReading {
    /// The API names of `values`, in order.
    pub const NAMES: [&'static str; 5] = [
        "sizeBytes",
        "producerMsgRate",
        "producerByteRate",
        "consumerMsgRate",
        "consumerByteRate",
    ];
}

impl BrokerReading {
    pub fn get(&self, load: Load) -> Option<f64> {
        let i = Load::ALL.iter().position(|l| *l == load).unwrap_or(0);
        self.values[i]
    }
}

/// A partition's counters at one sample.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PartitionCounter {
    pub topic: String,
    pub partition: i32,
    pub at_ms: i64,
    pub produced_total: i64,
    pub consumed_total: i64,
    pub size_bytes: Option<i64>,
}

/// A partition's counters as the latest sample left them (what the observer needs to carry on).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PartitionTotals {
    pub topic: String,
    pub partition: i32,
    pub latest_offset: Option<i64>,
    pub offsets_at_ms: Option<i64>,
    pub produced_total: i64,
    pub consumed_total: i64,
}

/// Older broker readings are replaced by one average per `resolution_ms` bucket once they are
/// older than `after_ms`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Downsample {
    pub after_ms: i64,
    pub resolution_ms: i64,
}

/// How long readings are kept, relative to the sample's `sampled_at_ms`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ReadingsPolicy {
    /// Counters older than this are deleted (the rate window).
    pub counters_ms: i64,
    /// Broker readings older than this are deleted.
    pub retention_ms: i64,
    /// Downsampling tiers of broker readings, finest first.
    pub downsample: Vec<Downsample>,
    /// Downsampling tiers of partition readings, finest first (kept as long as broker ones).
    pub partition_downsample: Vec<Downsample>,
}

/// Everything one successful sample writes.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ObservedWrite {
    pub cluster: ClusterFacts,
    pub brokers: Vec<ObservedBroker>,
    pub log_dirs: Vec<ObservedLogDir>,
    pub topics: Vec<ObservedTopic>,
    pub partitions: Vec<ObservedPartition>,
    pub replicas: Vec<ObservedReplica>,
    pub groups: Vec<ObservedGroup>,
    pub group_offsets: Vec<ObservedGroupOffset>,
    pub readings: Vec<BrokerReading>,
    /// Partition readings to add (every `BALLAST_PARTITION_READINGS_INTERVAL`, else empty).
    pub partition_readings: Vec<PartitionReading>,
    /// Counters to add.
    pub counters: Vec<PartitionCounter>,
    /// Partitions whose stored counters are dropped before `counters` are added (deleted
    /// partitions, and counters that went backwards: their rate window restarts).
    pub cleared_counters: Vec<(String, i32)>,
    pub policy: Option<ReadingsPolicy>,
}

impl ObservedWrite {
    /// The brokers [`Store::write_observed`] leaves in the view (ordered by id) when `stored` are
    /// the brokers stored before it: the ones this write names, each merged into its stored row
    /// as the write does (host and port kept when not given, a broker that is not alive keeps
    /// its rack, the first sighting kept, the last one kept when not given; a broker named twice
    /// merges twice), the others forgotten. The observer plans the sample it is writing with
    /// them while the write runs.
    pub fn brokers_after(&self, stored: &[ObservedBroker]) -> Vec<ObservedBroker> {
        let mut rows: std::collections::BTreeMap<BrokerId, ObservedBroker> =
            stored.iter().map(|b| (b.broker_id, b.clone())).collect();
        let named: std::collections::BTreeSet<BrokerId> =
            self.brokers.iter().map(|b| b.broker_id).collect();
        rows.retain(|id, _| named.contains(id));
        for b in &self.brokers {
            match rows.get_mut(&b.broker_id) {
                None => {
                    rows.insert(b.broker_id, b.clone());
                }
                Some(old) => {
                    *old = ObservedBroker {
                        broker_id: b.broker_id,
                        host: b.host.clone().or_else(|| old.host.clone()),
                        port: b.port.or(old.port),
                        rack: if b.alive {
                            b.rack.clone()
                        } else {
                            old.rack.clone()
                        },
                        alive: b.alive,
                        first_seen_ms: old.first_seen_ms.or(b.first_seen_ms),
                        last_seen_ms: b.last_seen_ms.or(old.last_seen_ms),
                        log_dirs_read: b.log_dirs_read,
                        log_dirs_error: b.log_dirs_error.clone(),
                    };
                }
            }
        }
        rows.into_values().collect()
    }
}

/// The whole current view, read in one transaction.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ObservedView {
    pub cluster: ObservedCluster,
    pub brokers: Vec<ObservedBroker>,
    pub log_dirs: Vec<ObservedLogDir>,
    pub topics: Vec<ObservedTopic>,
    /// Ordered by topic and partition.
    pub partitions: Vec<ObservedPartition>,
    /// Ordered by topic, partition, broker.
    pub replicas: Vec<ObservedReplica>,
    pub groups: Vec<ObservedGroup>,
    pub group_offsets: Vec<ObservedGroupOffset>,
    /// The readings of the newest sample (one per broker).
    pub latest_readings: Vec<BrokerReading>,
}

/// Which parts of the view a read fills.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ViewParts {
    All,
    Planning,
}

/// What [`Store::write_observed`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct WriteStats {
    pub generation: i64,
    pub rows_written: u64,
    pub counters_pruned: u64,
    pub readings_pruned: u64,
    pub readings_downsampled: u64,
}

fn ids_text(ids: &[BrokerId]) -> String {
    let mut s = String::with_capacity(2 + ids.len() * 4);
    s.push('[');
    for (i, id) in ids.iter().enumerate() {
        if i > 0 {
            s.push(',');
        }
        s.push_str(&id.to_string());
    }
    s.push(']');
    s
}

fn ids_col(row: &Row<'_>, idx: usize) -> rusqlite::Result<Vec<BrokerId>> {
    let s: String = row.get(idx)?;
    serde_json::from_str(&s).map_err(|e| {
        rusqlite::Error::FromSqlConversionFailure(idx, rusqlite::types::Type::Text, Box::new(e))
    })
}

const CLUSTER_COLUMNS: &str = "generation, first_sampled_at_ms, cluster_id, controller_id,
    sampled_at_ms, sample_duration_ms, brokers, log_dirs_read, partitions, offsets_read, groups,
    groups_read, detail, controller_source, metadata_mode, kafka_version_min, kafka_version_max,
    quorum";

fn cluster_from_row(r: &Row<'_>) -> rusqlite::Result<ObservedCluster> {
    Ok(ObservedCluster {
        generation: r.get(0)?,
        first_sampled_at_ms: r.get(1)?,
        facts: ClusterFacts {
            cluster_id: r.get(2)?,
            controller_id: r.get(3)?,
            sampled_at_ms: r.get(4)?,
            sample_duration_ms: r.get(5)?,
            brokers: r.get(6)?,
            log_dirs_read: r.get(7)?,
            partitions: r.get(8)?,
            offsets_read: r.get(9)?,
            groups: r.get(10)?,
            groups_read: r.get(11)?,
            detail: json_col(r, 12)?,
            controller_source: r.get(13)?,
            metadata_mode: r.get(14)?,
            kafka_version_min: r.get(15)?,
            kafka_version_max: r.get(16)?,
            quorum: {
                let text: Option<String> = r.get(17)?;
                text.and_then(|t| serde_json::from_str(&t).ok())
            },
        },
    })
}

const READING_COLUMNS: &str = "broker_id, at_ms, resolution_ms, leader_count, follower_count,
    disk_bytes, producer_msg_rate, producer_byte_rate, consumer_msg_rate, consumer_byte_rate";

fn reading_from_row(r: &Row<'_>) -> rusqlite::Result<BrokerReading> {
    Ok(BrokerReading {
        broker_id: r.get(0)?,
        at_ms: r.get(1)?,
        resolution_ms: r.get(2)?,
        values: [
            r.get(3)?,
            r.get(4)?,
            r.get(5)?,
            r.get(6)?,
            r.get(7)?,
            r.get(8)?,
            r.get(9)?,
        ],
    })
}

const BROKERS_SELECT: &str = "SELECT broker_id, host, port, rack, alive, first_seen_ms,
    last_seen_ms, log_dirs_read, log_dirs_error FROM cluster_brokers ORDER BY broker_id";

fn read_brokers(conn: &rusqlite::Connection) -> Result<Vec<ObservedBroker>, StoreError> {
    Ok(conn
        .prepare_cached(BROKERS_SELECT)?
        .query_map([], |r| {
            Ok(ObservedBroker {
                broker_id: r.get(0)?,
                host: r.get(1)?,
                port: r.get(2)?,
                rack: r.get(3)?,
                alive: r.get(4)?,
                first_seen_ms: r.get(5)?,
                last_seen_ms: r.get(6)?,
                log_dirs_read: r.get(7)?,
                log_dirs_error: r.get(8)?,
            })
        })?
        .collect::<Result<Vec<_>, _>>()?)
}

fn insert_reading(tx: &Transaction<'_>, r: &BrokerReading) -> Result<(), StoreError> {
    let v = &r.values;
    tx.prepare_cached(
        "INSERT INTO broker_readings (broker_id, at_ms, resolution_ms, leader_count,
            follower_count, disk_bytes, producer_msg_rate, producer_byte_rate, consumer_msg_rate,
            consumer_byte_rate)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)
         ON CONFLICT (broker_id, at_ms) DO UPDATE SET resolution_ms = excluded.resolution_ms,
            leader_count = excluded.leader_count, follower_count = excluded.follower_count,
            disk_bytes = excluded.disk_bytes, producer_msg_rate = excluded.producer_msg_rate,
            producer_byte_rate = excluded.producer_byte_rate,
            consumer_msg_rate = excluded.consumer_msg_rate,
            consumer_byte_rate = excluded.consumer_byte_rate",
    )?
    .execute(params![
        r.broker_id,
        r.at_ms,
        r.resolution_ms,
        v[0],
        v[1],
        v[2],
        v[3],
        v[4],
        v[5],
        v[6]
    ])?;
    Ok(())
}

/// A readings table: its key columns (besides `at_ms`) and its value columns (REAL, NULL =
/// unknown). Both readings tables share `at_ms` and `resolution_ms`.
struct ReadingsTable {
    name: &'static str,
    keys: &'static [&'static str],
    values: &'static [&'static str],
}

const BROKER_READINGS: ReadingsTable = ReadingsTable {
    name: "broker_readings",
    keys: &["broker_id"],
    values: &[
        "leader_count",
        "follower_count",
        "disk_bytes",
        "producer_msg_rate",
        "producer_byte_rate",
        "consumer_msg_rate",
        "consumer_byte_rate",
    ],
};

const PARTITION_READINGS: ReadingsTable = ReadingsTable {
    name: "partition_readings",
    keys: &["topic", "partition"],
    values: &[
        "size_bytes",
        "producer_msg_rate",
        "producer_byte_rate",
        "consumer_msg_rate",
        "consumer_byte_rate",
    ],
};

/// A key column's value, ordered (topics are text, ids integers).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
enum KeyValue {
    Int(i64),
    Text(String),
}

impl rusqlite::ToSql for KeyValue {
    fn to_sql(&self) -> rusqlite::Result<rusqlite::types::ToSqlOutput<'_>> {
        match self {
            KeyValue::Int(v) => v.to_sql(),
            KeyValue::Text(v) => v.to_sql(),
        }
    }
}

impl rusqlite::types::FromSql for KeyValue {
    fn column_result(v: rusqlite::types::ValueRef<'_>) -> rusqlite::types::FromSqlResult<Self> {
        match v {
            rusqlite::types::ValueRef::Integer(i) => Ok(KeyValue::Int(i)),
            _ => String::column_result(v).map(KeyValue::Text),
        }
    }
}

/// Replaces raw (or finer) readings of `table` older than `before_ms` by one average per key and
/// `resolution_ms` bucket, each value over the rows that know it. Only whole buckets are folded,
/// so a bucket is written once. Returns the rows folded.
fn downsample(
    tx: &Transaction<'_>,
    table: &ReadingsTable,
    before_ms: i64,
    resolution_ms: i64,
) -> Result<u64, StoreError> {
    if resolution_ms <= 0 {
        return Ok(0);
    }
    // Whole buckets only: the last bucket that ends at or before `before_ms`.
    let cutoff = before_ms.div_euclid(resolution_ms) * resolution_ms;
    let (name, nk, nv) = (table.name, table.keys.len(), table.values.len());
    let keys = table.keys.join(", ");
    let values = table.values.join(", ");
    type Bucket = (Vec<f64>, Vec<u32>);
    let mut buckets: std::collections::BTreeMap<(Vec<KeyValue>, i64), Bucket> =
        std::collections::BTreeMap::new();
    let mut folded = 0u64;
    {
        let mut stmt = tx.prepare_cached(&format!(
            "SELECT {keys}, at_ms, {values} FROM {name}
             WHERE at_ms < ?1 AND resolution_ms < ?2"
        ))?;
        let mut rows = stmt.query(params![cutoff, resolution_ms])?;
        while let Some(r) = rows.next()? {
            let key = (0..nk)
                .map(|i| r.get::<_, KeyValue>(i))
                .collect::<Result<Vec<_>, _>>()?;
            let at_ms: i64 = r.get(nk)?;
            let bucket = at_ms.div_euclid(resolution_ms) * resolution_ms;
            let entry = buckets
                .entry((key, bucket))
                .or_insert_with(|| (vec![0.0; nv], vec![0; nv]));
            for i in 0..nv {
                if let Some(v) = r.get::<_, Option<f64>>(nk + 1 + i)? {
                    entry.0[i] += v;
                    entry.1[i] += 1;
                }
            }
            folded += 1;
        }
    }
    if folded == 0 {
        return Ok(0);
    }
    tx.prepare_cached(&format!(
        "DELETE FROM {name} WHERE at_ms < ?1 AND resolution_ms < ?2"
    ))?
    .execute(params![cutoff, resolution_ms])?;
    let placeholders = (1..=nk + 2 + nv)
        .map(|i| format!("?{i}"))
        .collect::<Vec<_>>()
        .join(", ");
    let mut insert = tx.prepare_cached(&format!(
        "INSERT OR REPLACE INTO {name} ({keys}, at_ms, resolution_ms, {values})
         VALUES ({placeholders})"
    ))?;
    for ((key, at_ms), (sums, counts)) in buckets {
        let mut args: Vec<Box<dyn rusqlite::ToSql>> = Vec::with_capacity(nk + 2 + nv);
        for k in key {
            args.push(Box::new(k));
        }
        args.push(Box::new(at_ms));
        args.push(Box::new(resolution_ms));
        for i in 0..nv {
            args.push(Box::new(
                (counts[i] > 0).then(|| sums[i] / f64::from(counts[i])),
            ));
        }
        insert.execute(rusqlite::params_from_iter(args.iter()))?;
    }
    Ok(folded)
}

impl Store {
    /// Writes one sample: replaces every state table, appends readings and counters, prunes and
    /// downsamples per `w.policy`; one transaction. Returns the new generation and counts.
    pub fn write_observed(&self, w: &ObservedWrite) -> Result<WriteStats, StoreError> {
        let now_ms = w.cluster.sampled_at_ms;
        self.write(|tx| {
            let mut stats = WriteStats::default();
            let previous: Option<(i64, i64)> = tx
                .prepare_cached("SELECT generation, first_sampled_at_ms FROM cluster_state")?
                .query_row([], |r| Ok((r.get(0)?, r.get(1)?)))
                .optional()?;
            let generation = previous.map_or(1, |(g, _)| g + 1);
            let first = previous.map_or(now_ms, |(_, f)| f);
            let c = &w.cluster;
            tx.prepare_cached(
                "INSERT INTO cluster_state (id, generation, first_sampled_at_ms, cluster_id,
                    controller_id, sampled_at_ms, sample_duration_ms, brokers, log_dirs_read,
                    partitions, offsets_read, groups, groups_read, detail, controller_source,
                    metadata_mode, kafka_version_min, kafka_version_max, quorum)
                 VALUES (1, ?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15,
                    ?16, ?17, ?18)
                 ON CONFLICT (id) DO UPDATE SET generation = excluded.generation,
                    first_sampled_at_ms = excluded.first_sampled_at_ms,
                    cluster_id = excluded.cluster_id, controller_id = excluded.controller_id,
                    sampled_at_ms = excluded.sampled_at_ms,
                    sample_duration_ms = excluded.sample_duration_ms,
                    brokers = excluded.brokers, log_dirs_read = excluded.log_dirs_read,
                    partitions = excluded.partitions, offsets_read = excluded.offsets_read,
                    groups = excluded.groups, groups_read = excluded.groups_read,
                    detail = excluded.detail, controller_source = excluded.controller_source,
                    metadata_mode = excluded.metadata_mode,
                    kafka_version_min = excluded.kafka_version_min,
                    kafka_version_max = excluded.kafka_version_max, quorum = excluded.quorum",
            )?
            .execute(params![
                generation,
                first,
                c.cluster_id,
                c.controller_id,
                c.sampled_at_ms,
                c.sample_duration_ms.max(0),
                c.brokers,
                c.log_dirs_read,
                c.partitions,
                c.offsets_read,
                c.groups,
                c.groups_read,
                json_text(&c.detail),
                c.controller_source,
                c.metadata_mode,
                c.kafka_version_min,
                c.kafka_version_max,
                c.quorum.as_ref().map(json_text),
            ])?;
            stats.generation = generation;

            // Brokers: upsert the ones named, forget the others.
            let stored: Vec<BrokerId> = tx
                .prepare_cached("SELECT broker_id FROM cluster_brokers")?
                .query_map([], |r| r.get(0))?
                .collect::<Result<_, _>>()?;
            let named: std::collections::BTreeSet<BrokerId> =
                w.brokers.iter().map(|b| b.broker_id).collect();
            for id in stored.iter().filter(|id| !named.contains(id)) {
                tx.prepare_cached("DELETE FROM cluster_brokers WHERE broker_id = ?1")?
                    .execute([id])?;
            }
            for b in &w.brokers {
                tx.prepare_cached(
                    "INSERT INTO cluster_brokers (broker_id, host, port, rack, alive,
                        first_seen_ms, last_seen_ms, log_dirs_read, log_dirs_error)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)
                     ON CONFLICT (broker_id) DO UPDATE SET
                        host = coalesce(excluded.host, host), port = coalesce(excluded.port, port),
                        rack = CASE WHEN excluded.alive = 1 THEN excluded.rack ELSE rack END,
                        alive = excluded.alive,
                        first_seen_ms = coalesce(first_seen_ms, excluded.first_seen_ms),
                        last_seen_ms = coalesce(excluded.last_seen_ms, last_seen_ms),
                        log_dirs_read = excluded.log_dirs_read,
                        log_dirs_error = excluded.log_dirs_error",
                )?
                .execute(params![
                    b.broker_id,
                    b.host,
                    b.port,
                    b.rack,
                    b.alive,
                    b.first_seen_ms,
                    b.last_seen_ms,
                    b.log_dirs_read,
                    b.log_dirs_error,
                ])?;
            }

            tx.execute_batch(
                "DELETE FROM cluster_log_dirs; DELETE FROM cluster_topics;
                 DELETE FROM cluster_partitions; DELETE FROM cluster_replicas;
                 DELETE FROM consumer_groups; DELETE FROM consumer_group_offsets;",
            )?;
            let mut rows = w.brokers.len() as u64;
            {
                let mut stmt = tx.prepare_cached(
                    "INSERT INTO cluster_log_dirs (broker_id, path, error, total_bytes,
                        usable_bytes, used_bytes, replicas) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)
                     ON CONFLICT DO NOTHING",
                )?;
                for d in &w.log_dirs {
                    stmt.execute(params![
                        d.broker_id,
                        d.path,
                        d.error,
                        d.total_bytes,
                        d.usable_bytes,
                        d.used_bytes,
                        d.replicas
                    ])?;
                }
                rows += w.log_dirs.len() as u64;
            }
            {
                let mut stmt = tx.prepare_cached(
                    "INSERT INTO cluster_topics (name, topic_id, partitions, replication_factor,
                        internal, compacted, min_insync, retention_ms, retention_bytes,
                        cleanup_policy, remote_storage)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)
                     ON CONFLICT DO NOTHING",
                )?;
                for t in &w.topics {
                    stmt.execute(params![
                        t.name,
                        t.topic_id,
                        t.partitions,
                        t.replication_factor,
                        t.internal,
                        t.compacted,
                        t.min_insync,
                        t.retention_ms,
                        t.retention_bytes,
                        t.cleanup_policy,
                        t.remote_storage
                    ])?;
                }
                rows += w.topics.len() as u64;
            }
            {
                let mut stmt = tx.prepare_cached(
                    "INSERT INTO cluster_partitions (topic, partition, leader, leader_epoch,
                        replicas, isr, offline_replicas, adding, removing, size_bytes,
                        avg_size_bytes, earliest_offset, latest_offset, offsets_at_ms,
                        produced_total, consumed_total, producer_msg_rate, producer_byte_rate,
                        consumer_msg_rate, consumer_byte_rate, rate_window_ms, local_start_offset)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15,
                        ?16, ?17, ?18, ?19, ?20, ?21, ?22)
                     ON CONFLICT DO NOTHING",
                )?;
                for p in &w.partitions {
                    let r = p.rates.as_ref();
                    stmt.execute(params![
                        p.topic,
                        p.partition,
                        p.leader,
                        p.leader_epoch,
                        ids_text(&p.replicas),
                        ids_text(&p.isr),
                        ids_text(&p.offline_replicas),
                        ids_text(&p.adding),
                        ids_text(&p.removing),
                        p.size_bytes,
                        p.avg_size_bytes,
                        p.earliest_offset,
                        p.latest_offset,
                        p.offsets_at_ms,
                        p.produced_total,
                        p.consumed_total,
                        r.map(|r| r.producer_msg_rate),
                        r.map(|r| r.producer_byte_rate),
                        r.map(|r| r.consumer_msg_rate),
                        r.map(|r| r.consumer_byte_rate),
                        r.map(|r| r.window_ms),
                        p.local_start_offset,
                    ])?;
                }
                rows += w.partitions.len() as u64;
            }
            {
                let mut stmt = tx.prepare_cached(
                    "INSERT INTO cluster_replicas (topic, partition, broker_id, is_future,
                        log_dir, size_bytes, offset_lag, lag_bytes)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)
                     ON CONFLICT DO NOTHING",
                )?;
                for r in &w.replicas {
                    stmt.execute(params![
                        r.topic,
                        r.partition,
                        r.broker_id,
                        r.is_future,
                        r.log_dir,
                        r.size_bytes,
                        r.offset_lag,
                        r.lag_bytes
                    ])?;
                }
                rows += w.replicas.len() as u64;
            }
            {
                let mut stmt = tx.prepare_cached(
                    "INSERT INTO consumer_groups (group_id, state, protocol_type, members,
                        coordinator, offsets_read) VALUES (?1, ?2, ?3, ?4, ?5, ?6)
                     ON CONFLICT DO NOTHING",
                )?;
                for g in &w.groups {
                    stmt.execute(params![
                        g.group_id,
                        g.state,
                        g.protocol_type,
                        g.members,
                        g.coordinator,
                        g.offsets_read
                    ])?;
                }
                rows += w.groups.len() as u64;
            }
            {
                let mut stmt = tx.prepare_cached(
                    "INSERT INTO consumer_group_offsets (group_id, topic, partition,
                        committed_offset, lag) VALUES (?1, ?2, ?3, ?4, ?5)
                     ON CONFLICT DO NOTHING",
                )?;
                for o in &w.group_offsets {
                    stmt.execute(params![
                        o.group_id,
                        o.topic,
                        o.partition,
                        o.committed_offset,
                        o.lag
                    ])?;
                }
                rows += w.group_offsets.len() as u64;
            }

            // Readings.
            for r in &w.readings {
                insert_reading(tx, r)?;
            }
            rows += w.readings.len() as u64;
            {
                let mut clear = tx.prepare_cached(
                    "DELETE FROM partition_counters WHERE topic = ?1 AND partition = ?2",
                )?;
                for (topic, partition) in &w.cleared_counters {
                    clear.execute(params![topic, partition])?;
                }
                let mut stmt = tx.prepare_cached(
                    "INSERT INTO partition_counters (topic, partition, at_ms, produced_total,
                        consumed_total, size_bytes) VALUES (?1, ?2, ?3, ?4, ?5, ?6)
                     ON CONFLICT (topic, partition, at_ms) DO UPDATE SET
                        produced_total = excluded.produced_total,
                        consumed_total = excluded.consumed_total, size_bytes = excluded.size_bytes",
                )?;
                for c in &w.counters {
                    stmt.execute(params![
                        c.topic,
                        c.partition,
                        c.at_ms,
                        c.produced_total,
                        c.consumed_total,
                        c.size_bytes
                    ])?;
                }
                rows += w.counters.len() as u64;
            }
            {
                let mut stmt = tx.prepare_cached(
                    "INSERT OR REPLACE INTO partition_readings (topic, partition, at_ms,
                        resolution_ms, size_bytes, producer_msg_rate, producer_byte_rate,
                        consumer_msg_rate, consumer_byte_rate)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
                )?;
                for r in &w.partition_readings {
                    let v = &r.values;
                    stmt.execute(params![
                        r.topic,
                        r.partition,
                        r.at_ms,
                        r.resolution_ms,
                        v[0],
                        v[1],
                        v[2],
                        v[3],
                        v[4]
                    ])?;
                }
                rows += w.partition_readings.len() as u64;
            }
            stats.rows_written = rows;

            if let Some(policy) = &w.policy {
                stats.counters_pruned = tx
                    .prepare_cached("DELETE FROM partition_counters WHERE at_ms < ?1")?
                    .execute([now_ms.saturating_sub(policy.counters_ms)])?
                    as u64;
                stats.readings_pruned = tx
                    .prepare_cached("DELETE FROM broker_readings WHERE at_ms < ?1")?
                    .execute([now_ms.saturating_sub(policy.retention_ms)])?
                    as u64;
                stats.readings_pruned += tx
                    .prepare_cached("DELETE FROM partition_readings WHERE at_ms < ?1")?
                    .execute([now_ms.saturating_sub(policy.retention_ms)])?
                    as u64;
                for (table, tiers) in [
                    (&BROKER_READINGS, &policy.downsample),
                    (&PARTITION_READINGS, &policy.partition_downsample),
                ] {
                    for tier in tiers {
                        stats.readings_downsampled += downsample(
                            tx,
                            table,
                            now_ms.saturating_sub(tier.after_ms),
                            tier.resolution_ms,
                        )?;
                    }
                }
            }
            Ok(stats)
        })
    }

    /// The generation of the current view, None before the first sample. Cheap: readers call it
    /// to decide whether their copy of the view is still current.
    pub fn observed_generation(&self) -> Result<Option<i64>, StoreError> {
        let conn = self.conn()?;
        let mut stmt = conn.prepare_cached("SELECT generation FROM cluster_state WHERE id = 1")?;
        Ok(stmt.query_row([], |r| r.get(0)).optional()?)
    }

    /// The latest sample's cluster facts, None before the first sample.
    pub fn observed_cluster(&self) -> Result<Option<ObservedCluster>, StoreError> {
        let conn = self.conn()?;
        let mut stmt =
            conn.prepare_cached(&format!("SELECT {CLUSTER_COLUMNS} FROM cluster_state"))?;
        Ok(stmt.query_row([], cluster_from_row).optional()?)
    }

    /// The brokers of the current view, ordered by id (empty before the first sample).
    pub fn observed_brokers(&self) -> Result<Vec<ObservedBroker>, StoreError> {
        let conn = self.conn()?;
        read_brokers(&conn)
    }

    /// The whole current view in one read transaction, None before the first sample.
    pub fn observed_view(&self) -> Result<Option<ObservedView>, StoreError> {
        self.read_view(ViewParts::All)
    }

    /// The part of the current view planning reads, in one read transaction: the cluster facts,
    /// brokers, topics and partitions exactly as [`Store::observed_view`] has them; replicas, log
    /// dirs, groups, group offsets and readings are left empty (at 60,000 partitions they are
    /// three quarters of the view's rows). None before the first sample.
    pub fn observed_view_for_planning(&self) -> Result<Option<ObservedView>, StoreError> {
        self.read_view(ViewParts::Planning)
    }

    fn read_view(&self, parts: ViewParts) -> Result<Option<ObservedView>, StoreError> {
        let all = parts == ViewParts::All;
        self.read(|tx| {
            let Some(cluster) = tx
                .prepare_cached(&format!("SELECT {CLUSTER_COLUMNS} FROM cluster_state"))?
                .query_row([], cluster_from_row)
                .optional()?
            else {
                return Ok(None);
            };
            let brokers = read_brokers(tx)?;
            let log_dirs = if !all {
                Vec::new()
            } else {
                tx.prepare_cached(
                    "SELECT broker_id, path, error, total_bytes, usable_bytes, used_bytes, replicas
                     FROM cluster_log_dirs ORDER BY broker_id, path",
                )?
                .query_map([], |r| {
                    Ok(ObservedLogDir {
                        broker_id: r.get(0)?,
                        path: r.get(1)?,
                        error: r.get(2)?,
                        total_bytes: r.get(3)?,
                        usable_bytes: r.get(4)?,
                        used_bytes: r.get(5)?,
                        replicas: r.get(6)?,
                    })
                })?
                .collect::<Result<Vec<_>, _>>()?
            };
            let topics = tx
                .prepare_cached(
                    "SELECT name, topic_id, partitions, replication_factor, internal, compacted,
                        min_insync, retention_ms, retention_bytes, cleanup_policy, remote_storage
                     FROM cluster_topics ORDER BY name",
                )?
                .query_map([], |r| {
                    Ok(ObservedTopic {
                        name: r.get(0)?,
                        topic_id: r.get(1)?,
                        partitions: r.get(2)?,
                        replication_factor: r.get(3)?,
                        internal: r.get(4)?,
                        compacted: r.get(5)?,
                        min_insync: r.get(6)?,
                        retention_ms: r.get(7)?,
                        retention_bytes: r.get(8)?,
                        cleanup_policy: r.get(9)?,
                        remote_storage: r.get(10)?,
                    })
                })?
                .collect::<Result<Vec<_>, _>>()?;
            let partitions = tx
                .prepare_cached(
                    "SELECT topic, partition, leader, leader_epoch, replicas, isr,
                        offline_replicas, adding, removing, size_bytes, avg_size_bytes,
                        earliest_offset, latest_offset, offsets_at_ms, produced_total,
                        consumed_total, producer_msg_rate, producer_byte_rate, consumer_msg_rate,
                        consumer_byte_rate, rate_window_ms, local_start_offset
                     FROM cluster_partitions ORDER BY topic, partition",
                )?
                .query_map([], |r| {
                    let rates = match (
                        r.get::<_, Option<f64>>(16)?,
                        r.get::<_, Option<f64>>(17)?,
                        r.get::<_, Option<f64>>(18)?,
                        r.get::<_, Option<f64>>(19)?,
                        r.get::<_, Option<i64>>(20)?,
                    ) {
                        (Some(pm), Some(pb), Some(cm), Some(cb), Some(w)) => Some(PartitionRates {
                            producer_msg_rate: pm,
                            producer_byte_rate: pb,
                            consumer_msg_rate: cm,
                            consumer_byte_rate: cb,
                            window_ms: w,
                        }),
                        _ => None,
                    };
                    Ok(ObservedPartition {
                        topic: r.get(0)?,
                        partition: r.get(1)?,
                        leader: r.get(2)?,
                        leader_epoch: r.get(3)?,
                        replicas: ids_col(r, 4)?,
                        isr: ids_col(r, 5)?,
                        offline_replicas: ids_col(r, 6)?,
                        adding: ids_col(r, 7)?,
                        removing: ids_col(r, 8)?,
                        size_bytes: r.get(9)?,
                        avg_size_bytes: r.get(10)?,
                        earliest_offset: r.get(11)?,
                        local_start_offset: r.get(21)?,
                        latest_offset: r.get(12)?,
                        offsets_at_ms: r.get(13)?,
                        produced_total: r.get(14)?,
                        consumed_total: r.get(15)?,
                        rates,
                    })
                })?
                .collect::<Result<Vec<_>, _>>()?;
            let replicas = if !all {
                Vec::new()
            } else {
                tx
                .prepare_cached(
                    "SELECT topic, partition, broker_id, is_future, log_dir, size_bytes, offset_lag,
                        lag_bytes
                     FROM cluster_replicas ORDER BY topic, partition, broker_id, is_future",
                )?
                .query_map([], |r| {
                    Ok(ObservedReplica {
                        topic: r.get(0)?,
                        partition: r.get(1)?,
                        broker_id: r.get(2)?,
                        is_future: r.get(3)?,
                        log_dir: r.get(4)?,
                        size_bytes: r.get(5)?,
                        offset_lag: r.get(6)?,
                        lag_bytes: r.get(7)?,
                    })
                })?
                .collect::<Result<Vec<_>, _>>()?
            };
            let groups = if !all {
                Vec::new()
            } else {
                tx.prepare_cached(
                    "SELECT group_id, state, protocol_type, members, coordinator, offsets_read
                     FROM consumer_groups ORDER BY group_id",
                )?
                .query_map([], |r| {
                    Ok(ObservedGroup {
                        group_id: r.get(0)?,
                        state: r.get(1)?,
                        protocol_type: r.get(2)?,
                        members: r.get(3)?,
                        coordinator: r.get(4)?,
                        offsets_read: r.get(5)?,
                    })
                })?
                .collect::<Result<Vec<_>, _>>()?
            };
            let group_offsets = if !all {
                Vec::new()
            } else {
                tx.prepare_cached(
                    "SELECT group_id, topic, partition, committed_offset, lag
                     FROM consumer_group_offsets ORDER BY group_id, topic, partition",
                )?
                .query_map([], |r| {
                    Ok(ObservedGroupOffset {
                        group_id: r.get(0)?,
                        topic: r.get(1)?,
                        partition: r.get(2)?,
                        committed_offset: r.get(3)?,
                        lag: r.get(4)?,
                    })
                })?
                .collect::<Result<Vec<_>, _>>()?
            };
            let latest_readings = if !all {
                Vec::new()
            } else {
                tx.prepare_cached(&format!(
                    "SELECT {READING_COLUMNS} FROM broker_readings
                     WHERE at_ms = (SELECT max(at_ms) FROM broker_readings)
                     ORDER BY broker_id"
                ))?
                .query_map([], reading_from_row)?
                .collect::<Result<Vec<_>, _>>()?
            };
            Ok(Some(ObservedView {
                cluster,
                brokers,
                log_dirs,
                topics,
                partitions,
                replicas,
                groups,
                group_offsets,
                latest_readings,
            }))
        })
    }

    /// Broker readings with `since_ms <= at_ms < until_ms`, of one broker or all, ordered by
    /// broker and time.
    pub fn broker_readings(
        &self,
        broker_id: Option<BrokerId>,
        since_ms: i64,
        until_ms: i64,
    ) -> Result<Vec<BrokerReading>, StoreError> {
        let conn = self.conn()?;
        let mut stmt = conn.prepare_cached(&format!(
            "SELECT {READING_COLUMNS} FROM broker_readings
             WHERE at_ms >= ?1 AND at_ms < ?2 AND (?3 IS NULL OR broker_id = ?3)
             ORDER BY broker_id, at_ms"
        ))?;
        let rows = stmt.query_map(params![since_ms, until_ms, broker_id], reading_from_row)?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// Partition readings of `topic` (one partition, or all of them) in `[since_ms, until_ms)`,
    /// ordered by partition and time.
    pub fn partition_readings(
        &self,
        topic: &str,
        partition: Option<i32>,
        since_ms: i64,
        until_ms: i64,
    ) -> Result<Vec<PartitionReading>, StoreError> {
        let conn = self.conn()?;
        let mut stmt = conn.prepare_cached(
            "SELECT topic, partition, at_ms, resolution_ms, size_bytes, producer_msg_rate,
                producer_byte_rate, consumer_msg_rate, consumer_byte_rate
             FROM partition_readings
             WHERE topic = ?1 AND (?2 IS NULL OR partition = ?2) AND at_ms >= ?3 AND at_ms < ?4
             ORDER BY partition, at_ms",
        )?;
        let rows = stmt.query_map(params![topic, partition, since_ms, until_ms], |r| {
            Ok(PartitionReading {
                topic: r.get(0)?,
                partition: r.get(1)?,
                at_ms: r.get(2)?,
                resolution_ms: r.get(3)?,
                values: [r.get(4)?, r.get(5)?, r.get(6)?, r.get(7)?, r.get(8)?],
            })
        })?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// When the newest partition readings were taken (None before the first): the observer
    /// carries its cadence across restarts with it.
    pub fn latest_partition_reading_ms(&self) -> Result<Option<i64>, StoreError> {
        let conn = self.conn()?;
        let mut stmt = conn.prepare_cached("SELECT max(at_ms) FROM partition_readings")?;
        Ok(stmt.query_row([], |r| r.get(0))?)
    }

    /// Every partition's counters as the latest sample left them, ordered by topic and partition
    /// (the observer reloads them after a restart; lighter than [`Store::observed_view`]).
    pub fn partition_totals(&self) -> Result<Vec<PartitionTotals>, StoreError> {
        let conn = self.conn()?;
        let mut stmt = conn.prepare_cached(
            "SELECT topic, partition, latest_offset, offsets_at_ms, produced_total, consumed_total
             FROM cluster_partitions ORDER BY topic, partition",
        )?;
        let rows = stmt.query_map([], |r| {
            Ok(PartitionTotals {
                topic: r.get(0)?,
                partition: r.get(1)?,
                latest_offset: r.get(2)?,
                offsets_at_ms: r.get(3)?,
                produced_total: r.get(4)?,
                consumed_total: r.get(5)?,
            })
        })?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// The committed offsets of the latest sample, ordered by group, topic and partition.
    pub fn group_offsets(&self) -> Result<Vec<ObservedGroupOffset>, StoreError> {
        let conn = self.conn()?;
        let mut stmt = conn.prepare_cached(
            "SELECT group_id, topic, partition, committed_offset, lag
             FROM consumer_group_offsets ORDER BY group_id, topic, partition",
        )?;
        let rows = stmt.query_map([], |r| {
            Ok(ObservedGroupOffset {
                group_id: r.get(0)?,
                topic: r.get(1)?,
                partition: r.get(2)?,
                committed_offset: r.get(3)?,
                lag: r.get(4)?,
            })
        })?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// Every stored partition counter, ordered by topic, partition and time (the observer reloads
    /// its rate window from them after a restart).
    pub fn partition_counters(&self) -> Result<Vec<PartitionCounter>, StoreError> {
        let conn = self.conn()?;
        let mut stmt = conn.prepare_cached(
            "SELECT topic, partition, at_ms, produced_total, consumed_total, size_bytes
             FROM partition_counters ORDER BY topic, partition, at_ms",
        )?;
        let rows = stmt.query_map([], |r| {
            Ok(PartitionCounter {
                topic: r.get(0)?,
                partition: r.get(1)?,
                at_ms: r.get(2)?,
                produced_total: r.get(3)?,
                consumed_total: r.get(4)?,
                size_bytes: r.get(5)?,
            })
        })?;
        Ok(rows.collect::<Result<_, _>>()?)
    }
}
