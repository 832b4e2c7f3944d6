//! The cluster as observed: its summary (`GET /api/v1/cluster`), the overview
//! (`get_cluster_overview`, `/cluster/comprehensive`), log dirs (`get_cluster_logdirs`), health
//! (`get_cluster_health`), the partition list and the racks (`get_broker_racks`).

use std::collections::BTreeMap;
use std::sync::Arc;

use ballast_model::{BrokerId, Load};
use ballast_runtime::format_rfc3339_ms;
use serde::ser::SerializeMap;
use serde::{Deserialize, Serialize, Serializer};
use serde_json::{json, Value};

use super::{known_broker, known_topic, limit, Aged};
use crate::context::Context;
use crate::error::OpError;
use crate::view::{self, Coverage, View};

// ---------------------------------------------------------------------------------------------
// partition rows

/// A field of a partition row; `/partitions?fields=` names them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Field {
    Topic,
    Partition,
    Leader,
    LeaderEpoch,
    Replicas,
    Isr,
    EligibleLeaderReplicas,
    LastKnownElr,
    OfflineReplicas,
    AddingReplicas,
    RemovingReplicas,
    PreferredLeader,
    LeaderIsPreferred,
    UnderReplicated,
    UnderMinIsr,
    AtMinIsr,
    Offline,
    MinInsyncReplicas,
    RackAware,
    SizeBytes,
    AvgSizeBytes,
    EarliestOffset,
    LatestOffset,
    Messages,
    RemoteStorage,
    LocalStartOffset,
    RemoteOffsets,
    RemoteBytesEstimate,
    ProducerMsgRate,
    ProducerByteRate,
    ConsumerMsgRate,
    ConsumerByteRate,
    RateWindowSeconds,
    FollowerLag,
    ActivityScore,
}

pub const FIELDS: [(&str, Field); 35] = [
    ("topic", Field::Topic),
    ("partition", Field::Partition),
    ("leader", Field::Leader),
    ("leaderEpoch", Field::LeaderEpoch),
    ("replicas", Field::Replicas),
    ("isr", Field::Isr),
    ("eligibleLeaderReplicas", Field::EligibleLeaderReplicas),
    ("lastKnownElr", Field::LastKnownElr),
    ("offlineReplicas", Field::OfflineReplicas),
    ("addingReplicas", Field::AddingReplicas),
    ("removingReplicas", Field::RemovingReplicas),
    ("preferredLeader", Field::PreferredLeader),
    ("leaderIsPreferred", Field::LeaderIsPreferred),
    ("underReplicated", Field::UnderReplicated),
    ("underMinIsr", Field::UnderMinIsr),
    ("atMinIsr", Field::AtMinIsr),
    ("offline", Field::Offline),
    ("minInsyncReplicas", Field::MinInsyncReplicas),
    ("rackAware", Field::RackAware),
    ("sizeBytes", Field::SizeBytes),
    ("avgSizeBytes", Field::AvgSizeBytes),
    ("earliestOffset", Field::EarliestOffset),
    ("latestOffset", Field::LatestOffset),
    ("messages", Field::Messages),
    ("remoteStorage", Field::RemoteStorage),
    ("localStartOffset", Field::LocalStartOffset),
    ("remoteOffsets", Field::RemoteOffsets),
    ("remoteBytesEstimate", Field::RemoteBytesEstimate),
    ("producerMsgRate", Field::ProducerMsgRate),
    ("producerByteRate", Field::ProducerByteRate),
    ("consumerMsgRate", Field::ConsumerMsgRate),
    ("consumerByteRate", Field::ConsumerByteRate),
    ("rateWindowSeconds", Field::RateWindowSeconds),
    ("followerLagBytes", Field::FollowerLag),
    ("activityScore", Field::ActivityScore),
];

const MINIMAL: [Field; 5] = [
    Field::Topic,
    Field::Partition,
    Field::Leader,
    Field::Replicas,
    Field::Isr,
];

fn all_fields() -> Vec<Field> {
    FIELDS.iter().map(|(_, f)| *f).collect()
}

fn field_name(field: Field) -> &'static str {
    FIELDS
        .iter()
        .find(|(_, f)| *f == field)
        .map_or("", |(n, _)| n)
}

/// One partition of the view, with the chosen fields in [`FIELDS`] order.
pub struct PartRow<'a> {
    pub v: &'a View,
    pub i: usize,
    pub fields: &'a [Field],
}

impl Serialize for PartRow<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let p = self.v.partition(self.i);
        let st = &self.v.parts[self.i];
        let rates = p.rates;
        let mut m = s.serialize_map(Some(self.fields.len()))?;
        for f in self.fields {
            let name = field_name(*f);
            match f {
                Field::Topic => m.serialize_entry(name, &p.topic)?,
                Field::Partition => m.serialize_entry(name, &p.partition)?,
                Field::Leader => m.serialize_entry(name, &p.leader)?,
                Field::LeaderEpoch => m.serialize_entry(name, &p.leader_epoch)?,
                Field::Replicas => m.serialize_entry(name, &p.replicas)?,
                Field::Isr => m.serialize_entry(name, &p.isr)?,
                Field::EligibleLeaderReplicas => {
                    m.serialize_entry(name, &elr_of(self.v, &p.topic, p.partition).0)?
                }
                Field::LastKnownElr => {
                    m.serialize_entry(name, &elr_of(self.v, &p.topic, p.partition).1)?
                }
                Field::OfflineReplicas => m.serialize_entry(name, &p.offline_replicas)?,
                Field::AddingReplicas => m.serialize_entry(name, &p.adding)?,
                Field::RemovingReplicas => m.serialize_entry(name, &p.removing)?,
                Field::PreferredLeader => m.serialize_entry(name, &p.replicas.first())?,
                Field::LeaderIsPreferred => m.serialize_entry(
                    name,
                    &(p.leader.is_some() && p.leader == p.replicas.first().copied()),
                )?,
                Field::UnderReplicated => m.serialize_entry(name, &st.under_replicated)?,
                Field::UnderMinIsr => m.serialize_entry(name, &st.under_min_isr)?,
                Field::AtMinIsr => m.serialize_entry(name, &st.at_min_isr)?,
                Field::Offline => m.serialize_entry(name, &st.offline)?,
                Field::MinInsyncReplicas => m.serialize_entry(name, &st.min_isr)?,
                Field::RackAware => m.serialize_entry(name, &st.rack_aware)?,
                Field::SizeBytes => m.serialize_entry(name, &p.size_bytes)?,
                Field::AvgSizeBytes => {
                    m.serialize_entry(name, &p.avg_size_bytes.map(f64::round))?
                }
                Field::EarliestOffset => m.serialize_entry(name, &p.earliest_offset)?,
                Field::LatestOffset => m.serialize_entry(name, &p.latest_offset)?,
                Field::Messages => m.serialize_entry(
                    name,
                    &p.earliest_offset
                        .zip(p.latest_offset)
                        .map(|(e, l)| (l - e).max(0)),
                )?,
                Field::RemoteStorage => {
                    m.serialize_entry(name, &self.v.raw.topics[st.topic].remote_storage)?
                }
                Field::LocalStartOffset => m.serialize_entry(name, &p.local_start_offset)?,
                Field::RemoteOffsets => {
                    m.serialize_entry(name, &tier_of(self.v, self.i).remote_offsets)?
                }
                Field::RemoteBytesEstimate => {
                    m.serialize_entry(name, &tier_of(self.v, self.i).remote_bytes_estimate)?
                }
                Field::ProducerMsgRate => {
                    m.serialize_entry(name, &rates.map(|r| r.producer_msg_rate))?
                }
                Field::ProducerByteRate => {
                    m.serialize_entry(name, &rates.map(|r| r.producer_byte_rate))?
                }
                Field::ConsumerMsgRate => {
                    m.serialize_entry(name, &rates.map(|r| r.consumer_msg_rate))?
                }
                Field::ConsumerByteRate => {
                    m.serialize_entry(name, &rates.map(|r| r.consumer_byte_rate))?
                }
                Field::RateWindowSeconds => {
                    m.serialize_entry(name, &rates.map(|r| r.window_ms as f64 / 1000.0))?
                }
                Field::FollowerLag => m.serialize_entry(name, &st.follower_lag)?,
                Field::ActivityScore => m.serialize_entry(name, &st.score)?,
            }
        }
        m.end()
    }
}

// ---------------------------------------------------------------------------------------------
// tiered topics (KIP-405)

/// What of a partition is held only in remote storage, as far as Kafka tells a client.
/// DescribeLogDirs reports the local log only (`sizeBytes`); ListOffsets tells the log start
/// (-2) from the first local offset (-4), so the offsets `[earliestOffset, localStartOffset)`
/// are remote. Kafka's Admin API gives no remote byte size: `remote_bytes_estimate` is the
/// remote offsets times the local log's bytes per offset, an estimate with that basis.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Tier {
    /// 0 for a topic without remote storage; None when unknown (configs or offsets not read).
    pub remote_offsets: Option<i64>,
    /// 0 for a topic without remote storage; None when unknown or when the local log holds no
    /// message to take bytes per offset from.
    pub remote_bytes_estimate: Option<i64>,
}

/// The basis of every `remoteBytesEstimate`, as the answers say it.
pub const REMOTE_BYTES_BASIS: &str =
    "remote offsets x the local log's bytes per offset (Kafka's Admin API reports no remote size)";

pub fn tier_of(v: &View, i: usize) -> Tier {
    let p = v.partition(i);
    match v.raw.topics[v.parts[i].topic].remote_storage {
        Some(false) => Tier {
            remote_offsets: Some(0),
            remote_bytes_estimate: Some(0),
        },
        None => Tier::default(),
        Some(true) => {
            let remote = p
                .local_start_offset
                .zip(p.earliest_offset)
                .map(|(local, start)| (local - start).max(0));
            let local_messages = p
                .latest_offset
                .zip(p.local_start_offset)
                .map(|(end, local)| end - local);
            let estimate = match (remote, local_messages, p.size_bytes) {
                (Some(0), _, _) => Some(0),
                (Some(r), Some(m), Some(size)) if m > 0 => {
                    Some((r as f64 * size as f64 / m as f64).round() as i64)
                }
                _ => None,
            };
            Tier {
                remote_offsets: remote,
                remote_bytes_estimate: estimate,
            }
        }
    }
}

/// A topic's sums of [`Tier`]: None when any partition's is unknown.
pub fn topic_tier(v: &View, t: usize) -> Tier {
    let mut sum = Tier {
        remote_offsets: Some(0),
        remote_bytes_estimate: Some(0),
    };
    for i in v.topics[t].partitions.clone() {
        let p = tier_of(v, i);
        sum.remote_offsets = sum.remote_offsets.zip(p.remote_offsets).map(|(a, b)| a + b);
        sum.remote_bytes_estimate = sum
            .remote_bytes_estimate
            .zip(p.remote_bytes_estimate)
            .map(|(a, b)| a + b);
    }
    sum
}

// ---------------------------------------------------------------------------------------------
// shared pieces

fn loads_of(values: &[Option<f64>; 7]) -> BTreeMap<&'static str, Option<f64>> {
    Load::ALL
        .iter()
        .zip(values)
        .map(|(l, v)| (l.name(), *v))
        .collect()
}

/// The Kafka releases the brokers' ApiVersions fit: `min`, `max` (inclusive; null: unbounded) and
/// `text` ("3.5 to 3.6", "4.1 or newer"); null before a sample read them.
pub fn kafka_version(facts: &ballast_schema::ClusterFacts) -> Value {
    if facts.metadata_mode.is_none() {
        return Value::Null;
    }
    let range = ballast_kafka::KafkaVersionRange {
        min: facts.kafka_version_min.clone(),
        max: facts.kafka_version_max.clone(),
    };
    json!({ "min": range.min, "max": range.max, "text": range.to_string() })
}

/// The cluster object of a view without `ageMs` (see [`after_age`]).
fn cluster_summary(v: &View) -> Value {
    let facts = &v.raw.cluster.facts;
    let down: Vec<BrokerId> = v
        .raw
        .brokers
        .iter()
        .filter(|b| !b.alive)
        .map(|b| b.broker_id)
        .collect();
    let replica_bytes: Option<i64> = v
        .brokers
        .values()
        .filter_map(|b| b.disk_bytes)
        .reduce(|a, b| a + b);
    let rate = |i: usize| v.rate_sums.map(|s| s[i]);
    json!({
        "clusterId": facts.cluster_id,
        "controllerId": facts.controller_id,
        "controllerSource": facts.controller_source,
        "metadataMode": facts.metadata_mode,
        "kafkaVersion": kafka_version(facts),
        "quorum": facts.quorum,
        "controllers": crate::quorum::controllers(&v.raw, v.quorum.as_ref()),
        "observedAt": v.observed_at(),
        "sampleDurationMs": facts.sample_duration_ms,
        "historySeconds": (v.sampled_at_ms() - v.raw.cluster.first_sampled_at_ms).max(0) / 1000,
        "brokers": {
            "total": v.raw.brokers.len(),
            "alive": v.alive.len(),
            "down": down,
        },
        "racks": v.rack_assessment.rack_count,
        "topics": v.raw.topics.len(),
        "internalTopics": v.raw.topics.iter().filter(|t| t.internal).count(),
        "partitions": v.raw.partitions.len(),
        "replicas": v.replica_count,
        "offlinePartitions": v.offline.len(),
        "underReplicatedPartitions": v.under_replicated.len(),
        "consumerGroups": v.raw.groups.len(),
        "sizeBytes": v.size_bytes,
        "replicaBytes": replica_bytes,
        "producerMsgRate": rate(0),
        "producerByteRate": rate(1),
        "consumerMsgRate": rate(2),
        "consumerByteRate": rate(3),
        "coverage": v.coverage,
    })
}

// ---------------------------------------------------------------------------------------------
// GET /api/v1/cluster

/// The query of an endpoint that takes none: any parameter is refused (a typo is not ignored).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NoQuery {}

/// `GET /api/v1/cluster`: counts, totals and rates of the latest sample, the cluster object
/// with its `ageMs`.
pub async fn get_cluster(ctx: &Context) -> Result<Aged, OpError> {
    let v = view::require(ctx).await?;
    let rest = v.rendered("cluster-rest", || after_age(&v));
    Ok(Aged {
        head: "",
        age_ms: age_of(&v, ctx.clock.now_ms()),
        rest,
    })
}

/// How old the reading of `v` is at `now_ms`, never below 0.
fn age_of(v: &View, now_ms: i64) -> i64 {
    (now_ms - v.sampled_at_ms()).max(0)
}

/// The cluster object after its `ageMs` value (`,"clusterId":…}`), from the text rendered once
/// per view.
fn after_age(v: &View) -> String {
    let rest = v.rendered("cluster", || cluster_summary(v).to_string());
    match rest.get(1..) {
        Some(fields) if fields != "}" => format!(",{fields}"),
        _ => "}".to_string(),
    }
}

// ---------------------------------------------------------------------------------------------
// GET /api/v1/cluster/comprehensive

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct BrokerOut<'a> {
    id: BrokerId,
    host: Option<&'a str>,
    port: Option<i32>,
    rack: Option<&'a str>,
    alive: bool,
    is_controller: bool,
    first_seen_at: Option<String>,
    last_seen_at: Option<String>,
    log_dirs_read: bool,
    log_dirs_error: Option<&'a str>,
    leaders: usize,
    followers: usize,
    replicas: usize,
    future_replicas: usize,
    disk_bytes: Option<i64>,
    loads: BTreeMap<&'static str, Option<f64>>,
    activity_score: f64,
}

fn brokers_out(v: &View) -> Vec<BrokerOut<'_>> {
    let controller = v.raw.cluster.facts.controller_id;
    v.raw
        .brokers
        .iter()
        .map(|b| {
            let st = v.brokers.get(&b.broker_id).cloned().unwrap_or_default();
            BrokerOut {
                id: b.broker_id,
                host: b.host.as_deref(),
                port: b.port,
                rack: b.rack.as_deref(),
                alive: b.alive,
                is_controller: controller == Some(b.broker_id),
                first_seen_at: b.first_seen_ms.map(format_rfc3339_ms),
                last_seen_at: b.last_seen_ms.map(format_rfc3339_ms),
                log_dirs_read: b.log_dirs_read,
                log_dirs_error: b.log_dirs_error.as_deref(),
                leaders: st.leaders,
                followers: st.replicas - st.leaders,
                replicas: st.replicas,
                future_replicas: st.future_replicas,
                disk_bytes: st.disk_bytes,
                loads: loads_of(&st.loads),
                activity_score: st.score,
            }
        })
        .collect()
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TopicOut<'a> {
    name: &'a str,
    topic_id: Option<&'a str>,
    internal: bool,
    compacted: bool,
    partition_count: i32,
    replication_factor: i32,
    min_insync_replicas: Option<i32>,
    retention_ms: Option<i64>,
    retention_bytes: Option<i64>,
    cleanup_policy: Option<&'a str>,
    remote_storage: Option<bool>,
    size_bytes: Option<i64>,
    replica_bytes: Option<i64>,
    remote_offsets: Option<i64>,
    remote_bytes_estimate: Option<i64>,
    remote_bytes_basis: Option<&'static str>,
    producer_msg_rate: Option<f64>,
    producer_byte_rate: Option<f64>,
    consumer_msg_rate: Option<f64>,
    consumer_byte_rate: Option<f64>,
    under_replicated_partitions: usize,
    offline_partitions: usize,
    under_min_isr_partitions: usize,
    activity_score: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    partitions: Option<Vec<PartRow<'a>>>,
}

pub fn topic_out<'a>(v: &'a View, t: usize, rows: Option<&'a [Field]>) -> TopicOut<'a> {
    let topic = &v.raw.topics[t];
    let st = &v.topics[t];
    let tier = topic_tier(v, t);
    TopicOut {
        name: &topic.name,
        topic_id: topic.topic_id.as_deref(),
        internal: topic.internal,
        compacted: topic.compacted,
        partition_count: topic.partitions,
        replication_factor: topic.replication_factor,
        min_insync_replicas: topic.min_insync,
        retention_ms: topic.retention_ms,
        retention_bytes: topic.retention_bytes,
        cleanup_policy: topic.cleanup_policy.as_deref(),
        remote_storage: topic.remote_storage,
        size_bytes: st.size_bytes,
        replica_bytes: st.replica_bytes,
        remote_offsets: tier.remote_offsets,
        remote_bytes_estimate: tier.remote_bytes_estimate,
        remote_bytes_basis: (topic.remote_storage == Some(true)).then_some(REMOTE_BYTES_BASIS),
        producer_msg_rate: st.producer_msg_rate,
        producer_byte_rate: st.producer_byte_rate,
        consumer_msg_rate: st.consumer_msg_rate,
        consumer_byte_rate: st.consumer_byte_rate,
        under_replicated_partitions: st.under_replicated,
        offline_partitions: st.offline,
        under_min_isr_partitions: st.under_min_isr,
        activity_score: st.score,
        partitions: rows.map(|fields| {
            st.partitions
                .clone()
                .map(|i| PartRow { v, i, fields })
                .collect()
        }),
    }
}

/// Partition rows of a `cluster/comprehensive` page by default: its rows carry every field
/// (about 700 bytes each), so a page stays near a third of a megabyte.
pub const COMPREHENSIVE_DEFAULT_LIMIT: usize = 500;

#[derive(Debug, Default, Deserialize, utoipa::IntoParams)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct ComprehensiveQuery {
    /// `true` omits every topic's `partitions` array and gives every topic (default false).
    pub summary: Option<bool>,
    /// Partition rows per page (default 500, at most 100,000; 0 = default). Topics are never
    /// split: a page holds whole topics, at least one.
    pub limit: Option<usize>,
    /// The index of the page's first topic (default 0): the previous page's `page.nextOffset`.
    pub offset: Option<usize>,
}

/// A `cluster/comprehensive` answer: a page of one reading at one time.
pub struct ClusterOverview {
    v: Arc<View>,
    now_ms: i64,
    page: OverviewPage,
}

impl ClusterOverview {
    /// The answer as JSON text.
    pub fn text(&self) -> Arc<String> {
        Arc::new(self.aged().text())
    }

    /// The answer split at its `ageMs`: the rest is the same for every request of one reading
    /// (rendered once per reading for the summary and the default pages).
    pub fn aged(&self) -> Aged {
        Aged {
            head: "{\"cluster\":",
            age_ms: age_of(&self.v, self.now_ms),
            rest: overview_rest(&self.v, self.page),
        }
    }
}

/// Which part of `cluster/comprehensive` a query asks for: every topic without partitions
/// (`summary`), or a page of `n` partition rows from topic `offset`.
#[derive(Debug, Clone, Copy)]
struct OverviewPage {
    summary: bool,
    offset: usize,
    n: usize,
}

/// The operation `get_cluster_overview`: the cluster, brokers, a page of topics (or every topic
/// without partitions), consumer groups, health and rack assessment ([`ClusterOverview`]).
pub async fn get_cluster_overview(
    ctx: &Context,
    q: ComprehensiveQuery,
) -> Result<ClusterOverview, OpError> {
    let summary = q.summary.unwrap_or(false);
    if summary && (q.limit.is_some() || q.offset.is_some()) {
        return Err(OpError::bad_input(
            "invalid query",
            "limit and offset page the partition rows; summary=true has none",
        ));
    }
    let v = view::require(ctx).await?;
    let n = limit(q.limit, COMPREHENSIVE_DEFAULT_LIMIT, PARTITIONS_MAX_LIMIT);
    let offset = q.offset.unwrap_or(0);
    let page = OverviewPage { summary, offset, n };
    Ok(ClusterOverview {
        v,
        now_ms: ctx.clock.now_ms(),
        page,
    })
}

/// The `cluster/comprehensive` answer after the cluster object's `ageMs` value: the same for
/// every request of one reading. Rendered once per view for the summary and the default pages
/// (the part every page shares too).
fn overview_rest(v: &View, page: OverviewPage) -> Arc<String> {
    let OverviewPage { summary, offset, n } = page;
    let make = || {
        let common = v.rendered("comprehensive-common", || comprehensive_common(v));
        let topics = comprehensive_topics(v, summary, offset, n);
        let cluster = after_age(v);
        let mut data = String::with_capacity(common.len() + topics.len() + cluster.len() + 8);
        data.push_str(&cluster);
        data.push(',');
        data.push_str(&topics);
        data.push(',');
        data.push_str(&common);
        data.push('}');
        data
    };
    if summary {
        v.rendered("comprehensive-rest-summary", make)
    } else if n == COMPREHENSIVE_DEFAULT_LIMIT && offset <= v.raw.topics.len() {
        v.rendered(format!("comprehensive-rest:{offset}"), make)
    } else {
        Arc::new(make())
    }
}

/// The topics of one page: `"topics":[..],"page":{..}` (no braces). With `summary`, every topic
/// without its partitions.
fn comprehensive_topics(v: &View, summary: bool, offset: usize, limit: usize) -> String {
    let total_topics = v.raw.topics.len();
    let start = if summary { 0 } else { offset.min(total_topics) };
    let mut end = start;
    let mut rows = 0usize;
    while end < total_topics {
        let count = v.topics[end].partitions.len();
        if !summary && end > start && rows + count > limit {
            break;
        }
        rows += count;
        end += 1;
    }
    let fields = all_fields();
    let with_rows = (!summary).then_some(fields.as_slice());
    let topics: Vec<TopicOut> = (start..end).map(|t| topic_out(v, t, with_rows)).collect();
    #[derive(Serialize)]
    #[serde(rename_all = "camelCase")]
    struct Page {
        offset: usize,
        limit: Option<usize>,
        topics: usize,
        partitions: usize,
        total_topics: usize,
        total_partitions: usize,
        next_offset: Option<usize>,
    }
    let page = Page {
        offset: start,
        limit: (!summary).then_some(limit),
        topics: end - start,
        partitions: if summary { 0 } else { rows },
        total_topics,
        total_partitions: v.raw.partitions.len(),
        next_offset: (end < total_topics).then_some(end),
    };
    let topics = serde_json::to_string(&topics).unwrap_or_else(|_| "[]".into());
    let page = serde_json::to_string(&page).unwrap_or_else(|_| "{}".into());
    format!("\"topics\":{topics},\"page\":{page}")
}

/// Brokers, consumer groups, health, rack assessment and coverage: the same on every page
/// (rendered without the enclosing braces).
fn comprehensive_common(v: &View) -> String {
    let mut by_state: BTreeMap<&str, usize> = BTreeMap::new();
    for g in &v.raw.groups {
        *by_state
            .entry(g.state.as_deref().unwrap_or("Unknown"))
            .or_default() += 1;
    }
    let groups: Vec<Value> = v
        .raw
        .groups
        .iter()
        .zip(&v.group_lag)
        .map(|(g, (partitions, lag))| {
            json!({
                "groupId": g.group_id,
                "state": g.state,
                "protocolType": g.protocol_type,
                "members": g.members,
                "coordinator": g.coordinator,
                "offsetsRead": g.offsets_read,
                "partitions": partitions,
                "totalLag": g.offsets_read.then_some(lag),
            })
        })
        .collect();
    #[derive(Serialize)]
    #[serde(rename_all = "camelCase")]
    struct Common<'a> {
        brokers: Vec<BrokerOut<'a>>,
        consumer_groups: Value,
        health: Value,
        rack_assessment: &'a view::RackAssessment,
        coverage: &'a Coverage,
    }
    let common = Common {
        brokers: brokers_out(v),
        consumer_groups: json!({
            "total": v.raw.groups.len(),
            "byState": by_state,
            "groups": groups,
        }),
        health: health_counts(v),
        rack_assessment: &v.rack_assessment,
        coverage: &v.coverage,
    };
    let json = serde_json::to_string(&common).unwrap_or_else(|_| "{}".into());
    json.get(1..json.len().saturating_sub(1))
        .unwrap_or_default()
        .to_string()
}

// ---------------------------------------------------------------------------------------------
// GET /api/v1/cluster/logdirs

#[derive(Debug, Default, Deserialize, utoipa::IntoParams)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct LogDirsQuery {
    /// `true`: broker level only (no `dirs`, no `topics`).
    pub summary: Option<bool>,
    /// Adds `partitions[]`: the replicas of this topic.
    pub topic: Option<String>,
    /// Only this broker (alias `broker`); adds `partitions[]`: its replicas.
    #[param(value_type = Option<i32>)]
    #[serde(alias = "broker")]
    pub broker_id: Option<BrokerId>,
    /// Rows of `topics` (default 100) and `partitions` (default 1000), at most 100,000.
    pub limit: Option<usize>,
}

/// A broker's disk capacity as its log directories show it, each filesystem counted once.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Capacity {
    pub(crate) total_bytes: i64,
    pub(crate) usable_bytes: i64,
    /// The filesystems its directories lie on, as far as the sizes tell.
    pub(crate) filesystems: usize,
}

/// One broker's capacity from its log directories (DescribeLogDirs v4+, Kafka 3.3+, gives each
/// directory the total and usable bytes of the filesystem holding it: Java's `FileStore` of the
/// directory). Several directories on one filesystem each report that filesystem's figures,
/// so adding them up counts it once per directory ("87.3 MiB of 504 GiB" for two directories
/// on one 252 GiB disk).
///
/// The rule: directories of one broker with the **same total and the same usable bytes** in one
/// answer are one filesystem, counted once. A broker reads both figures of every directory at
/// one moment, so two directories on one filesystem show equal figures (the free space of a
/// filesystem being written to can move between the two reads, and then they count as two: the
/// sizes cannot tell). Two filesystems of the same size with byte-for-byte the same free space
/// are not told apart either, and count once. None when a directory gave no sizes (offline, or
/// a broker before 3.3): unknown, not a smaller figure.
pub(crate) fn capacity(dirs: &[&ballast_schema::ObservedLogDir]) -> Option<Capacity> {
    let mut seen: Vec<(i64, i64)> = Vec::with_capacity(dirs.len());
    for d in dirs {
        let fs = (d.total_bytes?, d.usable_bytes?);
        if !seen.contains(&fs) {
            seen.push(fs);
        }
    }
    Some(Capacity {
        total_bytes: seen.iter().map(|(t, _)| t).sum(),
        usable_bytes: seen.iter().map(|(_, u)| u).sum(),
        filesystems: seen.len(),
    })
}

/// The operation `get_cluster_logdirs`: disk use per broker and log directory with the topics
/// using most space; with a topic and/or broker, their replicas too; as JSON text.
pub async fn get_cluster_logdirs(ctx: &Context, q: LogDirsQuery) -> Result<Arc<String>, OpError> {
    let v = view::require(ctx).await?;
    let topic = q.topic.as_deref().map(|t| known_topic(&v, t)).transpose()?;
    let broker = q.broker_id.map(|b| known_broker(&v, b)).transpose()?;
    let summary = q.summary.unwrap_or(false);
    if topic.is_none() && broker.is_none() && q.limit.is_none() {
        let key = if summary {
            "logdirs-summary"
        } else {
            "logdirs"
        };
        return Ok(v.rendered(key, || logdirs_body(&v, None, None, summary, None)));
    }
    Ok(Arc::new(logdirs_body(&v, topic, broker, summary, q.limit)))
}

fn logdirs_body(
    v: &View,
    topic: Option<usize>,
    broker: Option<BrokerId>,
    summary: bool,
    requested: Option<usize>,
) -> String {
    let drill = topic.is_some() || broker.is_some();

    let brokers: Vec<Value> = v
        .raw
        .brokers
        .iter()
        .filter(|b| broker.is_none_or(|id| id == b.broker_id))
        .map(|b| {
            let dirs: Vec<&ballast_schema::ObservedLogDir> = v
                .raw
                .log_dirs
                .iter()
                .filter(|d| d.broker_id == b.broker_id)
                .collect();
            let used = b.log_dirs_read.then(|| dirs.iter().map(|d| d.used_bytes).sum::<i64>());
            let capacity = b.log_dirs_read.then(|| capacity(&dirs)).flatten();
            let total = capacity.map(|c| c.total_bytes);
            let usable = capacity.map(|c| c.usable_bytes);
            let st = v.brokers.get(&b.broker_id).cloned().unwrap_or_default();
            let mut out = json!({
                "brokerId": b.broker_id,
                "host": b.host,
                "rack": b.rack,
                "alive": b.alive,
                "logDirsRead": b.log_dirs_read,
                "error": b.log_dirs_error,
                "usedBytes": used,
                "totalBytes": total,
                "usableBytes": usable,
                "usedPercent": used.zip(total).filter(|(_, t)| *t > 0).map(|(u, t)| 100.0 * u as f64 / t as f64),
                "replicaCount": b.log_dirs_read.then(|| dirs.iter().map(|d| d.replicas).sum::<i64>()),
                "assignedReplicas": st.replicas,
                "futureReplicas": st.future_replicas,
                "offlineDirs": dirs.iter().filter(|d| d.error.is_some()).count(),
                "filesystems": capacity.map(|c| c.filesystems),
            });
            if !summary {
                out["dirs"] = json!(dirs
                    .iter()
                    .map(|d| json!({
                        "path": d.path,
                        "error": d.error,
                        "totalBytes": d.total_bytes,
                        "usableBytes": d.usable_bytes,
                        "usedBytes": d.used_bytes,
                        "replicaCount": d.replicas,
                    }))
                    .collect::<Vec<_>>());
            }
            out
        })
        .collect();
    // Each broker's filesystems counted once (`capacity`), over the brokers whose every
    // directory gave its sizes.
    let capacities: Vec<Capacity> = v
        .raw
        .brokers
        .iter()
        .filter(|b| b.log_dirs_read)
        .filter_map(|b| {
            let dirs: Vec<&ballast_schema::ObservedLogDir> = v
                .raw
                .log_dirs
                .iter()
                .filter(|d| d.broker_id == b.broker_id)
                .collect();
            capacity(&dirs)
        })
        .collect();
    let totals = json!({
        "usedBytes": v.brokers.values().filter_map(|b| b.disk_bytes).reduce(|a, b| a + b),
        "totalBytes": capacities.iter().map(|c| c.total_bytes).reduce(|a, b| a + b),
        "usableBytes": capacities.iter().map(|c| c.usable_bytes).reduce(|a, b| a + b),
    });
    let mut out = json!({
        "observedAt": v.observed_at(),
        "brokers": brokers,
        "totals": totals,
        "coverage": v.coverage,
    });
    if !summary {
        // Bytes per topic over the replicas in scope, largest first.
        let mut per_topic: Vec<(usize, i64, usize)> = Vec::new();
        for (t, st) in v.topics.iter().enumerate() {
            if topic.is_some_and(|x| x != t) {
                continue;
            }
            let (mut bytes, mut count) = (0i64, 0usize);
            for i in st.partitions.clone() {
                for r in &v.raw.replicas[v.parts[i].replicas.clone()] {
                    if broker.is_none_or(|b| b == r.broker_id) {
                        bytes += r.size_bytes.unwrap_or(0);
                        count += 1;
                    }
                }
            }
            if count > 0 {
                per_topic.push((t, bytes, count));
            }
        }
        per_topic.sort_by(|a, b| {
            b.1.cmp(&a.1)
                .then_with(|| v.raw.topics[a.0].name.cmp(&v.raw.topics[b.0].name))
        });
        let total = per_topic.len();
        let n = limit(requested, 100, 100_000);
        out["topics"] = json!(per_topic
            .iter()
            .take(n)
            .map(|(t, bytes, count)| json!({
                "topic": v.raw.topics[*t].name,
                "sizeBytes": bytes,
                "replicaCount": count,
            }))
            .collect::<Vec<_>>());
        out["totalTopics"] = json!(total);
        out["topicsTruncated"] = json!(total > n);
    }
    if drill {
        // Per-replica rows of the topic and/or broker, largest first.
        let range = match topic {
            Some(t) => v.topics[t].partitions.clone(),
            None => 0..v.raw.partitions.len(),
        };
        let mut rows: Vec<&ballast_schema::ObservedReplica> = Vec::new();
        let first = range.clone().next().map(|i| v.parts[i].replicas.start);
        let last = range.clone().last().map(|i| v.parts[i].replicas.end);
        if let (Some(first), Some(last)) = (first, last) {
            // Future replicas sit among the current ones in `raw.replicas`: take the whole span.
            for r in &v.raw.replicas[first..last] {
                if broker.is_none_or(|b| b == r.broker_id) {
                    rows.push(r);
                }
            }
        }
        rows.sort_by(|a, b| {
            b.size_bytes
                .unwrap_or(-1)
                .cmp(&a.size_bytes.unwrap_or(-1))
                .then_with(|| {
                    (&a.topic, a.partition, a.broker_id).cmp(&(&b.topic, b.partition, b.broker_id))
                })
        });
        let total = rows.len();
        let n = limit(requested, 1000, 100_000);
        out["partitions"] = json!(rows
            .iter()
            .take(n)
            .map(|r| json!({
                "topic": r.topic,
                "partition": r.partition,
                "brokerId": r.broker_id,
                "logDir": r.log_dir,
                "sizeBytes": r.size_bytes,
                "lagBytes": r.lag_bytes,
                "isFuture": r.is_future,
            }))
            .collect::<Vec<_>>());
        out["totalPartitions"] = json!(total);
        out["partitionsTruncated"] = json!(total > n);
    }
    out.to_string()
}

// ---------------------------------------------------------------------------------------------
// GET /api/v1/cluster/health

#[derive(Debug, Default, Deserialize, utoipa::IntoParams)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct HealthQuery {
    /// Rows per partition list, default 100, at most 10,000 (counts are always complete).
    pub limit: Option<usize>,
}

/// Under-replicated partitions whose missing replicas are only ones a reassignment in progress is
/// adding: copies being made, not copies lost.
fn by_reassignment(v: &View) -> usize {
    v.under_replicated
        .iter()
        .filter_map(|&i| v.raw.partitions.get(i))
        .filter(|p| {
            !p.adding.is_empty()
                && p.replicas
                    .iter()
                    .filter(|r| !p.isr.contains(r))
                    .all(|r| p.adding.contains(r))
        })
        .count()
}

fn health_status(v: &View) -> &'static str {
    // No controller is critical; an unknown one (DescribeQuorum could not be read) is not.
    let facts = &v.raw.cluster.facts;
    let critical = (facts.controller_id.is_none()
        && facts.controller_source.as_deref() != Some("unknown"))
        || !v.offline.is_empty()
        || !v.under_min_isr.is_empty()
        || v.alive.len() * 2 <= v.raw.brokers.len()
        || v.quorum.as_ref().is_some_and(|q| q.status == "critical");
    let degraded = v.alive.len() < v.raw.brokers.len()
        || v.quorum.as_ref().is_some_and(|q| q.status != "healthy")
        || !v.under_replicated.is_empty()
        || !v.bad_dirs.is_empty();
    if critical {
        "critical"
    } else if degraded {
        "degraded"
    } else {
        "healthy"
    }
}

fn health_counts(v: &View) -> Value {
    json!({
        "status": health_status(v),
        "brokersAlive": v.alive.len(),
        "brokersDown": v.raw.brokers.len() - v.alive.len(),
        "offlinePartitions": v.offline.len(),
        "underReplicatedPartitions": v.under_replicated.len(),
        "underMinIsrPartitions": v.under_min_isr.len(),
        "atMinIsrPartitions": v.at_min_isr.len(),
        "quorum": quorum_summary(v),
    })
}

/// The quorum's health in a health answer: null off KRaft or when it was not read.
fn quorum_summary(v: &View) -> Value {
    match &v.quorum {
        Some(q) => json!({
            "status": q.status,
            "text": q.text,
            "leaderId": q.leader_id,
            "voters": q.voters,
            "votersUp": q.voters_up,
            "votersUnknown": q.voters_unknown,
            "votersDown": q.voters_down,
            "down": q.nodes.iter().filter(|n| n.up == Some(false)).map(|n| json!({"id": n.id, "role": n.role, "reason": n.down_reason})).collect::<Vec<_>>(),
        }),
        None => Value::Null,
    }
}

// ---------------------------------------------------------------------------------------------
// GET /api/v1/cluster/controllers

/// The operation `get_cluster_controllers`: every voter and observer of the KRaft metadata
/// quorum (id, role, endpoints, leader, lag, fetch and catch-up times, up) with the quorum's
/// health; on ZooKeeper the controller broker. JSON text, rendered once per reading.
pub async fn get_cluster_controllers(ctx: &Context) -> Result<Arc<String>, OpError> {
    let v = view::require(ctx).await?;
    Ok(v.rendered("controllers", || {
        let mut c = crate::quorum::controllers(&v.raw, v.quorum.as_ref());
        c["observedAt"] = json!(v.observed_at());
        c.to_string()
    }))
}

/// The operation `get_cluster_health`: `critical`, `degraded` or `healthy`, with the partitions
/// that make it so, as JSON text.
pub async fn get_cluster_health(ctx: &Context, q: HealthQuery) -> Result<Arc<String>, OpError> {
    let v = view::require(ctx).await?;
    if q.limit.is_none() {
        return Ok(v.rendered("health", || health_body(&v, 100)));
    }
    Ok(Arc::new(health_body(&v, limit(q.limit, 100, 10_000))))
}

pub use crate::view::{elr_of_reading, ElrMap};

/// Eligible leader replicas (KIP-966) of the reading, by partition: None where the brokers do
/// not report them (DescribeTopicPartitions not offered, before Kafka 3.8) or the read failed;
/// a partition not in the map has none.
pub fn eligible_leader_replicas(v: &View) -> Option<&ElrMap> {
    v.elr.as_ref()
}

/// A partition's eligible leader replicas and last known ELR: empty lists where the cluster
/// reports ELR and the partition has none, null (unknown, never empty) where it does not.
fn elr_of<'a>(v: &'a View, topic: &str, partition: i32) -> (&'a Value, &'a Value) {
    static NULL: Value = Value::Null;
    static EMPTY: Value = Value::Array(Vec::new());
    match &v.elr {
        None => (&NULL, &NULL),
        Some(m) => m
            .get(&(topic.to_string(), partition))
            .map_or((&EMPTY, &EMPTY), |(e, l)| (e, l)),
    }
}

/// Partitions below `min.insync.replicas` with no eligible leader replica: a leader lost now
/// leaves only an unclean election (None where ELR is not reported).
fn unclean_election_risk(v: &View, elr: Option<&ElrMap>) -> Option<Vec<usize>> {
    let elr = elr?;
    Some(
        v.under_min_isr
            .iter()
            .copied()
            .filter(|i| {
                let p = v.partition(*i);
                elr.get(&(p.topic.to_string(), p.partition))
                    .is_none_or(|(e, _)| e.as_array().is_none_or(|a| a.is_empty()))
            })
            .collect(),
    )
}

fn health_body(v: &View, n: usize) -> String {
    let elr = eligible_leader_replicas(v);
    let risk = unclean_election_risk(v, elr);
    let rows = |list: &[usize]| -> Vec<Value> {
        list.iter()
            .take(n)
            .map(|i| {
                let p = v.partition(*i);
                let (eligible, last_known) = match elr {
                    None => (Value::Null, Value::Null),
                    Some(m) => m
                        .get(&(p.topic.to_string(), p.partition))
                        .cloned()
                        .unwrap_or((json!([]), json!([]))),
                };
                json!({
                    "eligibleLeaderReplicas": eligible,
                    "lastKnownElr": last_known,
                    "topic": p.topic,
                    "partition": p.partition,
                    "leader": p.leader,
                    "replicas": p.replicas,
                    "isr": p.isr,
                    "outOfSync": p.replicas.iter().filter(|b| !p.isr.contains(b)).collect::<Vec<_>>(),
                    "minInsyncReplicas": v.parts[*i].min_isr,
                })
            })
            .collect()
    };
    let brokers: Vec<Value> = v
        .raw
        .brokers
        .iter()
        .map(|b| {
            json!({
                "id": b.broker_id,
                "alive": b.alive,
                "rack": b.rack,
                "host": b.host,
                "port": b.port,
                "lastSeenAt": b.last_seen_ms.map(format_rfc3339_ms),
                "logDirsRead": b.log_dirs_read,
            })
        })
        .collect();
    let offline_dirs: Vec<Value> = v
        .raw
        .log_dirs
        .iter()
        .filter(|d| d.error.is_some())
        .map(|d| json!({"brokerId": d.broker_id, "path": d.path, "error": d.error}))
        .collect();
    let ra = &v.rack_assessment;
    let truncated = [
        &v.offline,
        &v.under_replicated,
        &v.under_min_isr,
        &v.at_min_isr,
    ]
    .iter()
    .any(|l| l.len() > n);
    json!({
        "status": health_status(v),
        "observedAt": v.observed_at(),
        "controllerId": v.raw.cluster.facts.controller_id,
        "controllerSource": v.raw.cluster.facts.controller_source,
        "quorum": quorum_summary(v),
        "brokers": {
            "total": v.raw.brokers.len(),
            "alive": v.alive.len(),
            "down": v.raw.brokers.iter().filter(|b| !b.alive).map(|b| b.broker_id).collect::<Vec<_>>(),
            "list": brokers,
        },
        "partitions": {
            "total": v.raw.partitions.len(),
            "offline": v.offline.len(),
            "underReplicated": v.under_replicated.len(),
            "underReplicatedByReassignment": by_reassignment(v),
            "underMinIsr": v.under_min_isr.len(),
            "atMinIsr": v.at_min_isr.len(),
            "eligibleLeaderReplicasReported": elr.is_some(),
            "uncleanElectionRisk": risk.as_ref().map(Vec::len),
        },
        "offlinePartitions": rows(&v.offline),
        "uncleanElectionRiskPartitions": risk.as_deref().map(rows),
        "underReplicatedPartitions": rows(&v.under_replicated),
        "underMinIsrPartitions": rows(&v.under_min_isr),
        "atMinIsrPartitions": rows(&v.at_min_isr),
        "truncated": truncated,
        "offlineLogDirs": offline_dirs,
        "rackAssessment": {
            "status": ra.status,
            "notRackAwarePartitions": ra.not_rack_aware_partitions,
            "notRackAwareDetails": ra.not_rack_aware_details,
        },
        "coverage": v.coverage,
    })
    .to_string()
}

// ---------------------------------------------------------------------------------------------
// GET /api/v1/partitions

/// Rows of one page when `limit` is absent or 0.
pub const PARTITIONS_DEFAULT_LIMIT: usize = 1_000;
/// The largest page; a larger `limit` is clamped to it.
pub const PARTITIONS_MAX_LIMIT: usize = 100_000;

fn fields_schema() -> utoipa::openapi::Object {
    let names: Vec<&str> = FIELDS.iter().map(|(n, _)| *n).collect();
    let one = format!("(\\s*({})\\s*)?", names.join("|"));
    crate::schema::string_pattern(&format!("^{one}(,{one})*$"))
}

#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct PartitionsQuery {
    /// Rows with `topic`, `partition`, `leader`, `replicas`, `isr` only.
    minimal: Option<bool>,
    /// Comma-separated field names (`topic` and `partition` are always included); wins over `minimal`.
    #[param(schema_with = fields_schema)]
    fields: Option<String>,
    /// Only this topic.
    topic: Option<String>,
    /// Only partitions with a replica on this broker (alias `broker`).
    #[param(value_type = Option<i32>)]
    #[serde(alias = "broker")]
    broker_id: Option<BrokerId>,
    /// A page: rows (default all).
    limit: Option<usize>,
    /// A page: rows to skip.
    offset: Option<usize>,
}

/// `GET /api/v1/partitions`: every partition, one row each (the chosen fields), in topic and
/// partition order, optionally one topic's or the replicas of one broker, a page of them; as
/// JSON text. The unfiltered lists and one topic's whole list are rendered once per reading.
pub async fn list_partitions(ctx: &Context, q: PartitionsQuery) -> Result<Arc<String>, OpError> {
    let fields: Vec<Field> = match (&q.fields, q.minimal.unwrap_or(false)) {
        (Some(list), _) => {
            let mut chosen = vec![Field::Topic, Field::Partition];
            for name in list.split(',').map(str::trim).filter(|n| !n.is_empty()) {
                let Some((_, f)) = FIELDS.iter().find(|(n, _)| *n == name) else {
                    return Err(OpError::bad_input(
                        "invalid query",
                        format!(
                            "fields: unknown field {name:?}; known: {}",
                            FIELDS
                                .iter()
                                .map(|(n, _)| *n)
                                .collect::<Vec<_>>()
                                .join(", ")
                        ),
                    ));
                };
                if !chosen.contains(f) {
                    chosen.push(*f);
                }
            }
            // Keep the documented order whatever order the caller gave.
            all_fields()
                .into_iter()
                .filter(|f| chosen.contains(f))
                .collect()
        }
        (None, true) => MINIMAL.to_vec(),
        (None, false) => all_fields(),
    };
    let v = view::require(ctx).await?;
    let whole = q.topic.is_none()
        && q.broker_id.is_none()
        && q.limit.is_none()
        && q.offset.is_none()
        && q.fields.is_none();
    if whole {
        // The two unfiltered lists are rendered once per view.
        let key = if fields.len() == MINIMAL.len() {
            "partitions-minimal"
        } else {
            "partitions-all"
        };
        let text = v.rendered(key, || {
            partitions_body(
                &v,
                (0..v.raw.partitions.len()).collect(),
                0,
                PARTITIONS_DEFAULT_LIMIT,
                &fields,
            )
        });
        return Ok(text);
    }
    let topic = q.topic.as_deref().map(|t| known_topic(&v, t)).transpose()?;
    let range = match topic {
        Some(t) => v.topics[t].partitions.clone(),
        None => 0..v.raw.partitions.len(),
    };
    let broker = q.broker_id.map(|b| known_broker(&v, b)).transpose()?;
    if let (Some(t), None, None, None, None) = (topic, broker, q.limit, q.offset, &q.fields) {
        // One topic's whole list, full or minimal, is rendered once per view.
        let key = format!("partitions:{t}:{}", fields.len());
        let text = v.rendered(key, || {
            partitions_body(&v, range.collect(), 0, PARTITIONS_DEFAULT_LIMIT, &fields)
        });
        return Ok(text);
    }
    let selected: Vec<usize> = range
        .filter(|i| broker.is_none_or(|b| v.partition(*i).replicas.contains(&b)))
        .collect();
    let n = match q.limit {
        None | Some(0) => PARTITIONS_DEFAULT_LIMIT,
        Some(n) => n.min(PARTITIONS_MAX_LIMIT),
    };
    Ok(Arc::new(partitions_body(
        &v,
        selected,
        q.offset.unwrap_or(0),
        n,
        &fields,
    )))
}

fn partitions_body(
    v: &View,
    selected: Vec<usize>,
    offset: usize,
    n: usize,
    fields: &[Field],
) -> String {
    let total = selected.len();
    let offset = offset.min(total);
    let rows: Vec<PartRow<'_>> = selected[offset..]
        .iter()
        .take(n)
        .map(|i| PartRow { v, i: *i, fields })
        .collect();
    #[derive(Serialize)]
    #[serde(rename_all = "camelCase")]
    struct Out<'a> {
        observed_at: String,
        total: usize,
        offset: usize,
        count: usize,
        /// The offset of the next page; absent on the last one.
        #[serde(skip_serializing_if = "Option::is_none")]
        next_offset: Option<usize>,
        partitions: Vec<PartRow<'a>>,
        coverage: &'a Coverage,
    }
    serde_json::to_string(&Out {
        observed_at: v.observed_at(),
        total,
        offset,
        count: rows.len(),
        next_offset: (offset + rows.len() < total).then_some(offset + rows.len()),
        partitions: rows,
        coverage: &v.coverage,
    })
    .unwrap_or_else(|_| "{}".into())
}

// ---------------------------------------------------------------------------------------------
// GET /api/v1/brokers/racks

/// The operation `get_broker_racks`: racks, their brokers and load, and the rack assessment, as
/// JSON text.
pub async fn get_broker_racks(ctx: &Context) -> Result<Arc<String>, OpError> {
    let v = view::require(ctx).await?;
    let text = v.rendered("racks", || {
        let mut by_rack: BTreeMap<&str, Vec<BrokerId>> = BTreeMap::new();
        for b in &v.raw.brokers {
            if let Some(r) = b.rack.as_deref() {
                by_rack.entry(r).or_default().push(b.broker_id);
            }
        }
        let racks: Vec<Value> = by_rack
            .iter()
            .map(|(rack, ids)| {
                let (mut leaders, mut replicas, mut disk) = (0usize, 0usize, None::<i64>);
                for id in ids {
                    if let Some(st) = v.brokers.get(id) {
                        leaders += st.leaders;
                        replicas += st.replicas;
                        if let Some(d) = st.disk_bytes {
                            disk = Some(disk.unwrap_or(0) + d);
                        }
                    }
                }
                json!({
                    "rack": rack,
                    "brokers": ids,
                    "brokersAlive": ids.iter().filter(|id| v.alive.contains(id)).count(),
                    "leaders": leaders,
                    "replicas": replicas,
                    "diskBytes": disk,
                })
            })
            .collect();
        json!({
            "observedAt": v.observed_at(),
            "racks": racks,
            "brokersWithoutRack": v.rack_assessment.brokers_without_rack,
            "assessment": v.rack_assessment,
        })
        .to_string()
    });
    Ok(text)
}

#[cfg(test)]
mod tests {
    use super::*;
    use ballast_schema::ObservedLogDir;

    const GIB: i64 = 1 << 30;

    fn dir(path: &str, total: Option<i64>, usable: Option<i64>) -> ObservedLogDir {
        ObservedLogDir {
            broker_id: 1,
            path: path.into(),
            error: None,
            total_bytes: total,
            usable_bytes: usable,
            used_bytes: 0,
            replicas: 0,
        }
    }

    #[test]
    fn log_dirs_sharing_a_filesystem_count_it_once() {
        // What Kafka 4.1 answered for two log dirs on one 252 GiB filesystem.
        let a = dir("/data/a", Some(252 * GIB), Some(200 * GIB));
        let b = dir("/data/b", Some(252 * GIB), Some(200 * GIB));
        assert_eq!(
            capacity(&[&a, &b]),
            Some(Capacity {
                total_bytes: 252 * GIB,
                usable_bytes: 200 * GIB,
                filesystems: 1
            })
        );
    }

    #[test]
    fn log_dirs_on_filesystems_of_one_size_with_different_free_space_count_each() {
        let a = dir("/disk1", Some(500 * GIB), Some(400 * GIB));
        let b = dir("/disk2", Some(500 * GIB), Some(380 * GIB));
        let c = dir("/disk3", Some(1000 * GIB), Some(400 * GIB));
        assert_eq!(
            capacity(&[&a, &b, &c]),
            Some(Capacity {
                total_bytes: 2000 * GIB,
                usable_bytes: 1180 * GIB,
                filesystems: 3
            })
        );
    }

    #[test]
    fn a_log_dir_without_sizes_makes_the_capacity_unknown_not_smaller() {
        let a = dir("/disk1", Some(500 * GIB), Some(400 * GIB));
        let offline = dir("/disk2", None, None);
        assert_eq!(capacity(&[&a, &offline]), None);
        assert_eq!(
            capacity(&[]),
            Some(Capacity {
                total_bytes: 0,
                usable_bytes: 0,
                filesystems: 0
            })
        );
    }
}
