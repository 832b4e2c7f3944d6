//! The observed view in memory: what the observer last wrote, loaded once per sample and indexed
//! and summarised for the read endpoints and `/metrics`.
//!
//! Requests never scan SQLite: each asks the store for the current generation (one indexed row)
//! and serves from the cached [`View`] of that generation. A new generation is loaded by one
//! request while the others keep answering from the previous view.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::ops::Range;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, OnceLock, RwLock};

use ballast_model::BrokerId;
use ballast_runtime::format_rfc3339_ms;
use ballast_schema::{ObservedPartition, ObservedView, Store, StoreError};
use serde::Serialize;

use crate::context::Context;
use crate::error::OpError;

/// Rows of `notRackAwareDetails` (the MCP `get_cluster_health` limit).
pub const NOT_RACK_AWARE_DETAILS: usize = 20;

/// Per-partition facts derived once per view.
#[derive(Debug, Clone, Default)]
pub struct PartStat {
    pub topic: usize,
    /// The partition's rows in `raw.replicas` (the assignment's replicas and future replicas).
    pub replicas: Range<usize>,
    pub min_isr: i32,
    pub offline: bool,
    pub under_replicated: bool,
    pub under_min_isr: bool,
    pub at_min_isr: bool,
    /// Bytes per second in and out (producer + consumer byte rate), 0 without rates.
    pub traffic: f64,
    /// Messages per second in and out.
    pub messages: f64,
    /// Share of the cluster's traffic in percent (see `docs/api/observed.md`).
    pub score: f64,
    /// Follower lag of the partition in bytes (each follower: its leader's size minus its own),
    /// sum and max over followers with a known lag.
    pub follower_lag: i64,
    pub max_follower_lag: i64,
    /// None while the rack assessment is not complete.
    pub rack_aware: Option<bool>,
}

#[derive(Debug, Clone, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TopicStat {
    pub partitions: Range<usize>,
    pub size_bytes: Option<i64>,
    pub replica_bytes: Option<i64>,
    pub producer_msg_rate: Option<f64>,
    pub producer_byte_rate: Option<f64>,
    pub consumer_msg_rate: Option<f64>,
    pub consumer_byte_rate: Option<f64>,
    pub under_replicated: usize,
    pub offline: usize,
    pub under_min_isr: usize,
    pub traffic: f64,
    pub messages: f64,
    pub score: f64,
    /// Index (into `raw.partitions`) of the busiest partition.
    pub hottest: Option<usize>,
}

#[derive(Debug, Clone, Default)]
pub struct BrokerStat {
    pub leaders: usize,
    pub replicas: usize,
    pub disk_bytes: Option<i64>,
    pub future_replicas: usize,
    pub traffic: f64,
    pub messages: f64,
    pub score: f64,
    pub loads: [Option<f64>; 7],
}

/// How much of the cluster the view covers.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Coverage {
    pub brokers: u32,
    pub log_dirs_read: u32,
    /// Fraction of brokers whose log dirs were read (sizes, disk, follower lag).
    pub log_dirs: f64,
    pub partitions: u32,
    pub offsets_read: u32,
    /// Fraction of partitions whose log-end offset was read.
    pub offsets: f64,
    /// Partitions that have rates (two readings or more).
    pub rates_known: usize,
    /// Fraction of partitions with rates.
    pub rates: f64,
    pub groups: u32,
    pub groups_read: u32,
    pub complete: bool,
}

/// The rack assessment: whether every broker has a rack, and partitions whose replicas are not
/// spread over min(replication factor, racks) racks.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RackAssessment {
    /// `complete` (every broker has a rack), `partial` (some have none), `no_racks` (none has one).
    pub status: &'static str,
    pub rack_count: usize,
    pub brokers_with_rack: usize,
    pub brokers_without_rack: Vec<BrokerId>,
    /// Only for a complete assessment; null otherwise.
    pub not_rack_aware_partitions: Option<usize>,
    pub topics_affected: Option<usize>,
    pub not_rack_aware_details: Vec<NotRackAware>,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct NotRackAware {
    pub topic: String,
    pub partition: i32,
    pub replicas: Vec<BrokerId>,
    pub racks: Vec<Option<String>>,
    pub distinct_racks: usize,
    pub expected_racks: usize,
}

pub const RACK_STATUSES: [&str; 3] = ["complete", "partial", "no_racks"];

pub struct View {
    pub generation: i64,
    pub raw: ObservedView,
    pub parts: Vec<PartStat>,
    pub topics: Vec<TopicStat>,
    pub topic_index: HashMap<String, usize>,
    pub brokers: BTreeMap<BrokerId, BrokerStat>,
    pub broker_index: HashMap<BrokerId, usize>,
    pub alive: BTreeSet<BrokerId>,
    /// Log dirs with an error, by broker.
    pub bad_dirs: BTreeSet<(BrokerId, String)>,
    pub coverage: Coverage,
    pub rack_assessment: RackAssessment,
    /// Sum of partitions' traffic (bytes/s) and messages (msg/s).
    pub cluster_traffic: f64,
    pub cluster_messages: f64,
    pub median_partition_bytes: Option<f64>,
    /// Partitions (indexes into `raw.partitions`) by health condition.
    pub offline: Vec<usize>,
    pub under_replicated: Vec<usize>,
    pub under_min_isr: Vec<usize>,
    pub at_min_isr: Vec<usize>,
    /// Cluster sums of the partitions' producer/consumer msg and byte rates; None before any
    /// partition has rates.
    pub rate_sums: Option<[f64; 4]>,
    /// Sum of partition sizes; None when no size was read.
    pub size_bytes: Option<i64>,
    pub replica_count: usize,
    /// Per group (aligned with `raw.groups`): partitions with a committed offset, and total lag.
    pub group_lag: Vec<(usize, i64)>,
    /// Cached serialised answers (per view) of the common parameter sets, by a key naming them.
    pub rendered: Mutex<HashMap<String, Arc<String>>>,
    /// Cached partition orders (per sort key).
    pub orders: Mutex<HashMap<&'static str, Arc<Vec<usize>>>>,
    /// Answers shaped once per view as values, for a door that takes values (MCP), by a key
    /// naming them.
    pub shaped: Mutex<HashMap<&'static str, Arc<crate::kept::Kept>>>,
    /// The metadata quorum of the reading, assessed with `BALLAST_QUORUM_FETCH_TIMEOUT` when the
    /// view is loaded (None off KRaft, when it was not read, or before [`View::with_quorum`]).
    pub quorum: Option<crate::quorum::Quorum>,
    /// Eligible leader replicas (KIP-966) and last known ELR by partition, as the reading's
    /// DescribeTopicPartitions reported them; None where the brokers do not report them.
    pub elr: Option<ElrMap>,
}

fn fraction(part: u32, whole: u32) -> f64 {
    if whole == 0 {
        1.0
    } else {
        f64::from(part) / f64::from(whole)
    }
}

impl View {
    /// Every partition's size in bytes, by topic and partition (0 when not known).
    pub fn partition_sizes(&self) -> BTreeMap<(String, i32), u64> {
        self.raw
            .partitions
            .iter()
            .map(|p| {
                (
                    (p.topic.clone(), p.partition),
                    p.size_bytes.unwrap_or(0).max(0) as u64,
                )
            })
            .collect()
    }

    /// The view with its quorum assessed (`BALLAST_QUORUM_FETCH_TIMEOUT` in ms).
    pub fn with_quorum(mut self, fetch_timeout_ms: i64) -> View {
        self.quorum = crate::quorum::assess(&self.raw, fetch_timeout_ms);
        self
    }

    pub fn build(raw: ObservedView) -> View {
        let topic_index: HashMap<String, usize> = raw
            .topics
            .iter()
            .enumerate()
            .map(|(i, t)| (t.name.clone(), i))
            .collect();
        let broker_index: HashMap<BrokerId, usize> = raw
            .brokers
            .iter()
            .enumerate()
            .map(|(i, b)| (b.broker_id, i))
            .collect();
        let racks: HashMap<BrokerId, Option<String>> = raw
            .brokers
            .iter()
            .map(|b| (b.broker_id, b.rack.clone()))
            .collect();
        let alive: BTreeSet<BrokerId> = raw
            .brokers
            .iter()
            .filter(|b| b.alive)
            .map(|b| b.broker_id)
            .collect();
        let bad_dirs: BTreeSet<(BrokerId, String)> = raw
            .log_dirs
            .iter()
            .filter(|d| d.error.is_some())
            .map(|d| (d.broker_id, d.path.clone()))
            .collect();

        // Replica ranges: both lists are ordered by topic and partition.
        let mut parts: Vec<PartStat> = Vec::with_capacity(raw.partitions.len());
        let mut r = 0;
        let reps = &raw.replicas;
        for p in &raw.partitions {
            while r < reps.len()
                && (reps[r].topic.as_str(), reps[r].partition) < (p.topic.as_str(), p.partition)
            {
                r += 1;
            }
            let start = r;
            while r < reps.len() && reps[r].topic == p.topic && reps[r].partition == p.partition {
                r += 1;
            }
            let topic = topic_index.get(&p.topic).copied().unwrap_or(usize::MAX);
            let min_isr = raw
                .topics
                .get(topic)
                .and_then(|t| t.min_insync)
                .unwrap_or(1);
            let isr = p.isr.len() as i32;
            let rates = p.rates;
            let mut stat = PartStat {
                topic,
                replicas: start..r,
                min_isr,
                offline: p.leader.is_none(),
                under_replicated: p.isr.len() < p.replicas.len(),
                under_min_isr: isr < min_isr,
                at_min_isr: isr == min_isr,
                traffic: rates.map_or(0.0, |r| r.producer_byte_rate + r.consumer_byte_rate),
                messages: rates.map_or(0.0, |r| r.producer_msg_rate + r.consumer_msg_rate),
                ..PartStat::default()
            };
            for rep in &reps[start..r] {
                if rep.is_future || Some(rep.broker_id) == p.leader {
                    continue;
                }
                if let Some(lag) = rep.lag_bytes {
                    stat.follower_lag += lag;
                    stat.max_follower_lag = stat.max_follower_lag.max(lag);
                }
            }
            parts.push(stat);
        }

        // Cluster traffic and activity scores.
        let cluster_traffic: f64 = parts.iter().map(|p| p.traffic).sum();
        let cluster_messages: f64 = parts.iter().map(|p| p.messages).sum();
        let share = |traffic: f64, messages: f64| -> f64 {
            if cluster_traffic > 0.0 {
                100.0 * traffic / cluster_traffic
            } else if cluster_messages > 0.0 {
                100.0 * messages / cluster_messages
            } else {
                0.0
            }
        };
        for p in &mut parts {
            p.score = share(p.traffic, p.messages);
        }

        // Topics.
        let mut topics: Vec<TopicStat> = vec![TopicStat::default(); raw.topics.len()];
        let mut i = 0;
        while i < raw.partitions.len() {
            let start = i;
            let topic = parts[i].topic;
            while i < raw.partitions.len() && parts[i].topic == topic {
                i += 1;
            }
            let Some(t) = topics.get_mut(topic) else {
                continue;
            };
            t.partitions = start..i;
            let mut hottest: Option<(usize, f64)> = None;
            for (k, (p, s)) in raw.partitions[start..i]
                .iter()
                .zip(&parts[start..i])
                .enumerate()
            {
                let k = start + k;
                add_opt(&mut t.size_bytes, p.size_bytes);
                for rep in &raw.replicas[s.replicas.clone()] {
                    add_opt(&mut t.replica_bytes, rep.size_bytes);
                }
                if let Some(r) = p.rates {
                    add_f(&mut t.producer_msg_rate, r.producer_msg_rate);
                    add_f(&mut t.producer_byte_rate, r.producer_byte_rate);
                    add_f(&mut t.consumer_msg_rate, r.consumer_msg_rate);
                    add_f(&mut t.consumer_byte_rate, r.consumer_byte_rate);
                }
                t.under_replicated += usize::from(s.under_replicated);
                t.offline += usize::from(s.offline);
                t.under_min_isr += usize::from(s.under_min_isr);
                t.traffic += s.traffic;
                t.messages += s.messages;
                if s.traffic > 0.0 && hottest.is_none_or(|(_, v)| s.traffic > v) {
                    hottest = Some((k, s.traffic));
                }
            }
            t.hottest = hottest.map(|(k, _)| k);
            t.score = share(t.traffic, t.messages);
        }

        // Brokers.
        let mut brokers: BTreeMap<BrokerId, BrokerStat> = raw
            .brokers
            .iter()
            .map(|b| (b.broker_id, BrokerStat::default()))
            .collect();
        for (p, s) in raw.partitions.iter().zip(&parts) {
            for b in &p.replicas {
                let stat = brokers.entry(*b).or_default();
                stat.replicas += 1;
                if Some(*b) == p.leader {
                    stat.leaders += 1;
                    stat.traffic += s.traffic;
                    stat.messages += s.messages;
                }
            }
        }
        for b in &raw.brokers {
            if let Some(stat) = brokers.get_mut(&b.broker_id) {
                if b.log_dirs_read {
                    stat.disk_bytes = Some(0);
                }
            }
        }
        for rep in &raw.replicas {
            if let Some(stat) = brokers.get_mut(&rep.broker_id) {
                if let (Some(d), Some(size)) = (stat.disk_bytes.as_mut(), rep.size_bytes) {
                    *d += size;
                }
                stat.future_replicas += usize::from(rep.is_future);
            }
        }
        for reading in &raw.latest_readings {
            if let Some(stat) = brokers.get_mut(&reading.broker_id) {
                stat.loads = reading.values;
            }
        }
        for stat in brokers.values_mut() {
            stat.score = share(stat.traffic, stat.messages);
        }

        // Rack assessment.
        let with_rack: Vec<&str> = raw
            .brokers
            .iter()
            .filter_map(|b| b.rack.as_deref())
            .collect();
        let without: Vec<BrokerId> = raw
            .brokers
            .iter()
            .filter(|b| b.rack.is_none())
            .map(|b| b.broker_id)
            .collect();
        let rack_count = with_rack.iter().collect::<BTreeSet<_>>().len();
        let status = if with_rack.is_empty() {
            "no_racks"
        } else if without.is_empty() {
            "complete"
        } else {
            "partial"
        };
        let mut details = Vec::new();
        let mut not_aware = 0;
        let mut affected: BTreeSet<usize> = BTreeSet::new();
        if status == "complete" {
            for (p, s) in raw.partitions.iter().zip(parts.iter_mut()) {
                let replica_racks: Vec<Option<String>> = p
                    .replicas
                    .iter()
                    .map(|b| racks.get(b).cloned().flatten())
                    .collect();
                let distinct = replica_racks
                    .iter()
                    .flatten()
                    .collect::<BTreeSet<_>>()
                    .len();
                let expected = p.replicas.len().min(rack_count);
                let aware = distinct >= expected;
                s.rack_aware = Some(aware);
                if !aware {
                    not_aware += 1;
                    affected.insert(s.topic);
                    if details.len() < NOT_RACK_AWARE_DETAILS {
                        details.push(NotRackAware {
                            topic: p.topic.clone(),
                            partition: p.partition,
                            replicas: p.replicas.clone(),
                            racks: replica_racks,
                            distinct_racks: distinct,
                            expected_racks: expected,
                        });
                    }
                }
            }
        }
        let complete = status == "complete";
        let rack_assessment = RackAssessment {
            status,
            rack_count,
            brokers_with_rack: with_rack.len(),
            brokers_without_rack: without,
            not_rack_aware_partitions: complete.then_some(not_aware),
            topics_affected: complete.then_some(affected.len()),
            not_rack_aware_details: details,
        };

        let facts = &raw.cluster.facts;
        let rates_known = raw.partitions.iter().filter(|p| p.rates.is_some()).count();
        let coverage = Coverage {
            brokers: facts.brokers,
            log_dirs_read: facts.log_dirs_read,
            log_dirs: fraction(facts.log_dirs_read, facts.brokers),
            partitions: facts.partitions,
            offsets_read: facts.offsets_read,
            offsets: fraction(facts.offsets_read, facts.partitions),
            rates_known,
            rates: fraction(rates_known as u32, raw.partitions.len() as u32),
            groups: facts.groups,
            groups_read: facts.groups_read,
            complete: facts.log_dirs_read >= facts.brokers
                && facts.offsets_read >= facts.partitions
                && facts.groups_read >= facts.groups
                && facts.detail.get("groupsError").is_none_or(|e| e.is_null())
                && rates_known == raw.partitions.len(),
        };

        let mut sizes: Vec<f64> = raw
            .partitions
            .iter()
            .filter_map(|p| p.avg_size_bytes.or(p.size_bytes.map(|s| s as f64)))
            .collect();
        let median_partition_bytes = if sizes.is_empty() {
            None
        } else {
            sizes.sort_by(f64::total_cmp);
            Some(sizes[sizes.len() / 2])
        };

        let pick = |f: fn(&PartStat) -> bool| -> Vec<usize> {
            parts
                .iter()
                .enumerate()
                .filter(|(_, p)| f(p))
                .map(|(i, _)| i)
                .collect()
        };
        let offline = pick(|p| p.offline);
        let under_replicated = pick(|p| p.under_replicated);
        let under_min_isr = pick(|p| p.under_min_isr);
        let at_min_isr = pick(|p| p.at_min_isr);
        let mut rate_sums: Option<[f64; 4]> = None;
        let mut size_bytes: Option<i64> = None;
        let mut replica_count = 0;
        for p in &raw.partitions {
            replica_count += p.replicas.len();
            add_opt(&mut size_bytes, p.size_bytes);
            if let Some(r) = p.rates {
                let s = rate_sums.get_or_insert([0.0; 4]);
                s[0] += r.producer_msg_rate;
                s[1] += r.producer_byte_rate;
                s[2] += r.consumer_msg_rate;
                s[3] += r.consumer_byte_rate;
            }
        }
        let group_index: HashMap<&str, usize> = raw
            .groups
            .iter()
            .enumerate()
            .map(|(i, g)| (g.group_id.as_str(), i))
            .collect();
        let mut group_lag = vec![(0usize, 0i64); raw.groups.len()];
        for o in &raw.group_offsets {
            if let Some(i) = group_index.get(o.group_id.as_str()) {
                group_lag[*i].0 += 1;
                group_lag[*i].1 += o.lag.unwrap_or(0);
            }
        }

        let elr = elr_of_reading(&raw.cluster.facts.detail);
        View {
            quorum: None,
            elr,
            generation: raw.cluster.generation,
            offline,
            under_replicated,
            under_min_isr,
            at_min_isr,
            rate_sums,
            size_bytes,
            replica_count,
            group_lag,
            orders: Mutex::new(HashMap::new()),
            shaped: Mutex::new(HashMap::new()),
            parts,
            topics,
            topic_index,
            brokers,
            broker_index,
            alive,
            bad_dirs,
            coverage,
            rack_assessment,
            cluster_traffic,
            cluster_messages,
            median_partition_bytes,
            rendered: Mutex::new(HashMap::new()),
            raw,
        }
    }

    pub fn sampled_at_ms(&self) -> i64 {
        self.raw.cluster.facts.sampled_at_ms
    }

    pub fn observed_at(&self) -> String {
        format_rfc3339_ms(self.sampled_at_ms())
    }

    pub fn topic(&self, name: &str) -> Option<usize> {
        self.topic_index.get(name).copied()
    }

    pub fn partition(&self, i: usize) -> &ObservedPartition {
        &self.raw.partitions[i]
    }

    /// The answer shaped under `key` for this view, when one was kept.
    pub fn shaped(&self, key: &'static str) -> Option<Arc<crate::kept::Kept>> {
        let shaped = self.shaped.lock().unwrap_or_else(|e| e.into_inner());
        shaped.get(key).cloned()
    }

    /// Keeps `value` as the answer shaped under `key` for this view (the first kept stays).
    pub fn keep_shaped(
        &self,
        key: &'static str,
        kept: crate::kept::Kept,
    ) -> Arc<crate::kept::Kept> {
        let mut shaped = self.shaped.lock().unwrap_or_else(|e| e.into_inner());
        shaped.entry(key).or_insert_with(|| Arc::new(kept)).clone()
    }

    /// A cached rendering of an answer, made once per view. Keys name an endpoint and its
    /// parameters; per-topic keys are bounded by the number of topics.
    pub fn rendered(&self, key: impl Into<String>, make: impl FnOnce() -> String) -> Arc<String> {
        let key = key.into();
        if let Some(hit) = self
            .rendered
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(&key)
        {
            return hit.clone();
        }
        // Rendered outside the lock: a large answer must not stall the others.
        let made = Arc::new(make());
        self.rendered
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .entry(key)
            .or_insert(made)
            .clone()
    }
}

impl View {
    /// A cached order of all partitions (indexes into `raw.partitions`), made once per view.
    pub fn order(&self, key: &'static str, make: impl FnOnce() -> Vec<usize>) -> Arc<Vec<usize>> {
        let mut cache = self.orders.lock().unwrap_or_else(|e| e.into_inner());
        cache.entry(key).or_insert_with(|| Arc::new(make())).clone()
    }
}

fn add_opt(into: &mut Option<i64>, v: Option<i64>) {
    if let Some(v) = v {
        *into = Some(into.unwrap_or(0) + v);
    }
}

fn add_f(into: &mut Option<f64>, v: f64) {
    *into = Some(into.unwrap_or(0.0) + v);
}

// ---------------------------------------------------------------------------------------------
// the cache

#[derive(Default)]
struct Slot {
    current: RwLock<Option<Arc<View>>>,
    loading: Arc<tokio::sync::Mutex<()>>,
}

impl Slot {
    fn get(&self) -> Option<Arc<View>> {
        self.current
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    fn set(&self, view: Arc<View>) {
        *self.current.write().unwrap_or_else(|e| e.into_inner()) = Some(view);
    }
}

/// One cache per database file (tests run several services in one process).
fn slot(path: &std::path::Path) -> Arc<Slot> {
    static SLOTS: OnceLock<Mutex<HashMap<PathBuf, Arc<Slot>>>> = OnceLock::new();
    let slots = SLOTS.get_or_init(|| Mutex::new(HashMap::new()));
    let mut slots = slots.lock().unwrap_or_else(|e| e.into_inner());
    slots.entry(path.to_path_buf()).or_default().clone()
}

fn load(store: &Store, fetch_timeout_ms: i64) -> Result<Option<View>, StoreError> {
    Ok(store
        .observed_view()?
        .map(|raw| View::build(raw).with_quorum(fetch_timeout_ms)))
}

/// How long the request that finds a new reading waits for it to load before it is answered
/// from the previous one (the load goes on in a task of its own). Loading a reading of 60,000
/// partitions took 0.7 s under load, and a request that came first waited all of it.
pub const FRESH_WAIT: std::time::Duration = std::time::Duration::from_millis(100);

/// The current view, None before the observer's first sample. A new reading is loaded once: the
/// request that finds it first starts the load in a task of its own and waits for it at most
/// [`FRESH_WAIT`]; it, and every request while the load goes on, is answered from the previous
/// reading meanwhile. Only the first reading of all is waited for whole.
pub async fn current(ctx: &Context) -> Result<Option<Arc<View>>, OpError> {
    let Some(generation) = ctx.db(|store| store.observed_generation()).await? else {
        return Ok(None);
    };
    let slot = slot(ctx.store.path());
    if let Some(view) = slot.get().filter(|v| v.generation >= generation) {
        return Ok(Some(view));
    }
    let previous = slot.get();
    let guard = match (slot.loading.clone().try_lock_owned(), &previous) {
        (Ok(guard), _) => guard,
        // Another request is loading the new view: answer from the previous one meanwhile.
        (Err(_), Some(previous)) => return Ok(Some(previous.clone())),
        // Nothing to answer from yet: every request waits for the one that loads it.
        (Err(_), None) => slot.loading.clone().lock_owned().await,
    };
    let own = ctx.clone();
    let loading_slot = slot.clone();
    let loading = tokio::spawn(async move {
        let _guard = guard;
        if let Some(view) = loading_slot.get().filter(|v| v.generation >= generation) {
            return Ok(Some(view));
        }
        load_into(&own, &loading_slot).await
    });
    let joined = match previous {
        None => loading.await,
        Some(previous) => match tokio::time::timeout(FRESH_WAIT, loading).await {
            Ok(joined) => joined,
            // Still loading: the task goes on, and sets the view when it is done.
            Err(_) => return Ok(Some(previous)),
        },
    };
    joined.map_err(|join| OpError::internal("the reading could not be loaded", join.to_string()))?
}

/// Loads the latest reading and keeps it as the current view.
async fn load_into(ctx: &Context, slot: &Slot) -> Result<Option<Arc<View>>, OpError> {
    let timeout = ctx.config.timing.quorum_fetch_timeout.as_millis() as i64;
    match ctx.db(move |s| load(s, timeout)).await? {
        Some(view) => {
            let view = Arc::new(view);
            slot.set(view.clone());
            Ok(Some(view))
        }
        None => Ok(None),
    }
}

/// The current view, or the 503 the spec asks for while cluster data is unavailable: before the
/// first sample, and when the latest sample is older than `BALLAST_READY_STALE_AFTER`.
pub async fn require(ctx: &Context) -> Result<Arc<View>, OpError> {
    let view = current(ctx).await?;
    let now = ctx.clock.now_ms();
    let bound = ctx.config.timing.ready_stale_after;
    match view {
        Some(v) if now - v.sampled_at_ms() <= bound.as_millis() as i64 => Ok(v),
        found => {
            let last = ctx.db(|store| store.observation("brokers")).await?;
            let why = last
                .filter(|o| !o.ok)
                .and_then(|o| o.error)
                .map(|e| format!("; the last attempt failed: {e}"))
                .unwrap_or_default();
            Err(match found {
                None => OpError::unavailable(
                    "cluster data unavailable",
                    format!("the observer has not read the cluster yet{why}"),
                ),
                Some(v) => OpError::unavailable(
                    "cluster data unavailable",
                    format!(
                        "the latest sample is from {} ({} s ago), older than BALLAST_READY_STALE_AFTER ({}){why}",
                        v.observed_at(),
                        (now - v.sampled_at_ms()).max(0) / 1000,
                        ballast_config::format_duration(bound)
                    ),
                ),
            })
        }
    }
}

/// Each partition's eligible leader replicas and last known ELR (JSON id lists).
pub type ElrMap = HashMap<(String, i32), (serde_json::Value, serde_json::Value)>;

/// The ELR map of a reading's details (the observer's `eligibleLeaderReplicas`), built once
/// per view.
pub fn elr_of_reading(detail: &serde_json::Value) -> Option<ElrMap> {
    let e = detail.get("eligibleLeaderReplicas")?;
    if e.get("reported") != Some(&serde_json::Value::Bool(true)) {
        return None;
    }
    Some(
        e.get("partitions")
            .and_then(serde_json::Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(|row| {
                let topic = row.get(0)?.as_str()?.to_string();
                let partition = row.get(1)?.as_i64()? as i32;
                Some((
                    (topic, partition),
                    (row.get(2)?.clone(), row.get(3)?.clone()),
                ))
            })
            .collect(),
    )
}
