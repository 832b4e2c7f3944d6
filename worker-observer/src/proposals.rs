//! Proposal evaluation: after every successful sample the observer plans the observed cluster,
//! records the reading's brokers beyond the trigger, decides whether the plan may be applied and
//! keeps the result as the current proposal.
//!
//! [`evaluate`] does it all against a store (no clock: `now_ms` is a parameter); the pieces
//! ([`detail`]; `ballast_runtime::topology` for the snapshot and its fingerprint) are pure.

use ballast_runtime::millis;
use std::collections::{BTreeSet, HashMap};

use ballast_balancer::{Measuring, Plan, PlannedMove, Policy, Reading};
use ballast_config::Config;
use ballast_model::snapshot::{Snapshot, SnapshotPartition};
use ballast_model::{BrokerId, Load};
use ballast_runtime::topology::state_name;
pub use ballast_runtime::topology::{fingerprint, snapshot_from_view};
use ballast_schema::{
    Hold, NewProposal, ProposalReading, SavedProposal, Store, StoreError, DETAIL_PAIRS,
};
use serde_json::{json, Map, Value};

/// Readings kept in `proposal_readings` (enough for the four-reading rule and some history).
pub const READINGS_KEPT: usize = 100;
/// Proposals kept in `proposals`; older ones are deleted.
pub const PROPOSALS_KEPT: usize = 200;

/// Sample intervals after which readings are no longer in a row: a longer gap (the observer was
/// down, or could not read the cluster) restarts the four-reading streak.
pub const GAP_INTERVALS: i64 = 3;

/// What evaluation follows, from the service's settings.
#[derive(Debug, Clone)]
pub struct Settings {
    pub policy: Policy,
    /// When this observer process started: the warm-up runs from here, and only readings after
    /// it count as fresh measurements.
    pub started_at_ms: i64,
    /// `BALLAST_WARMUP`
    pub warmup_ms: i64,
    /// `GAP_INTERVALS` × `BALLAST_SAMPLE_INTERVAL`
    pub max_gap_ms: i64,
    /// `BALLAST_THROTTLE_MANAGED`
    pub throttles_managed: bool,
    pub readings_kept: usize,
    pub proposals_kept: usize,
    /// `BALLAST_PROPOSAL_HOLD`
    pub hold_ms: i64,
    /// `BALLAST_SAMPLE_INTERVAL`: readings are this far apart.
    pub sample_interval_ms: i64,
    /// `BALLAST_RATE_WINDOW`: rates are measured over at most this long.
    pub rate_window_ms: i64,
}

impl Settings {
    /// The settings of an observer process that started at `started_at_ms`.
    pub fn from_config(config: &Config, started_at_ms: i64) -> Settings {
        Settings {
            policy: crate::policy(&config.balance, config.timing.move_cooldown),
            started_at_ms,
            warmup_ms: millis(config.timing.warmup),
            max_gap_ms: millis(config.timing.sample_interval).saturating_mul(GAP_INTERVALS),
            throttles_managed: config.throttle.managed,
            readings_kept: READINGS_KEPT,
            proposals_kept: PROPOSALS_KEPT,
            hold_ms: millis(config.timing.proposal_hold),
            sample_interval_ms: millis(config.timing.sample_interval),
            rate_window_ms: millis(config.timing.rate_window),
        }
    }
}

/// What one evaluation did.
#[derive(Debug, Clone)]
pub struct Evaluation {
    pub saved: SavedProposal,
    pub plan: Plan,
    pub decision: ballast_balancer::Decision,
    pub fingerprint: String,
    /// How long each step took, in milliseconds (`view`, `snapshot`, `plan`, `decide`,
    /// `detail`, `save`), for the benchmark.
    pub timings: Vec<(&'static str, u64)>,
}

/// A stable hash of the plan's moves.
pub fn moves_digest(plan: &Plan) -> String {
    let text = serde_json::to_string(&plan.moves).unwrap_or_default();
    format!("{:016x}", ballast_runtime::topology::fnv1a(text.as_bytes()))
}

/// Which loads the view has not measured yet, indexed like [`Load::ALL`] (None: measured).
///
/// - The four rates are measured once their window holds the warm-up's worth of readings
///   (`BALLAST_WARMUP`, at least one sample interval — a rate needs two readings — and at most
///   `BALLAST_RATE_WINDOW`): the history is the longest window any partition's rate covers, so
///   an observer restart that kept its counters keeps its measurements. Before the first rate,
///   one reading is all there is.
/// - Disk is measured once every partition with a replica in sync has a size read.
/// - Leader and follower counts come from the metadata: always measured.
///
/// A view with no partition has nothing to measure.
pub fn measuring(
    parts: &ballast_runtime::topology::ViewParts<'_>,
    settings: &Settings,
) -> [Option<Measuring>; 7] {
    let mut out = [None; 7];
    if parts.partitions.is_empty() {
        return out;
    }
    let interval = settings.sample_interval_ms.max(1);
    let needed_ms = settings
        .warmup_ms
        .max(interval)
        .min(settings.rate_window_ms.max(interval));
    let readings_of = |span_ms: i64| -> u32 {
        u32::try_from((span_ms + interval / 2) / interval + 1).unwrap_or(u32::MAX)
    };
    let needed = readings_of(needed_ms);
    let span = parts
        .partitions
        .iter()
        .filter_map(|p| p.rates.as_ref().map(|r| r.window_ms))
        .max();
    let (readings, remaining_ms) = match span {
        Some(span) => (readings_of(span), (needed_ms - span).max(0)),
        None => (1, needed_ms),
    };
    if readings < needed {
        let m = Measuring {
            readings,
            needed,
            remaining_ms,
        };
        for load in [
            Load::ProducerMsgRate,
            Load::ProducerByteRate,
            Load::ConsumerMsgRate,
            Load::ConsumerByteRate,
        ] {
            out[load_slot(load)] = Some(m);
        }
    }
    let sizes_missing = parts
        .partitions
        .iter()
        .any(|p| !p.isr.is_empty() && p.size_bytes.is_none() && p.avg_size_bytes.is_none());
    if sizes_missing {
        out[load_slot(Load::DiskBytes)] = Some(Measuring {
            readings: 0,
            needed: 1,
            remaining_ms: interval,
        });
    }
    out
}

fn load_slot(load: Load) -> usize {
    Load::ALL.iter().position(|l| *l == load).unwrap_or(0)
}

/// What a plan was judged on: each load's status, in [`Load::ALL`] order (`measuring`,
/// `no_traffic`, `below_floor`, `triggered`, `counted` or `not_counted`). A held proposal is
/// kept only while [`basis_keeps`] accepts a new plan's basis.
pub fn basis(plan: &Plan) -> String {
    plan.loads
        .0
        .iter()
        .map(|(load, s)| {
            let status = if s.measuring.is_some() {
                "measuring"
            } else if s.no_traffic {
                "no_traffic"
            } else if s.below_floor {
                "below_floor"
            } else if s.triggered {
                "triggered"
            } else if s.counted {
                "counted"
            } else {
                "not_counted"
            };
            format!("{}={status}", load.name())
        })
        .collect::<Vec<_>>()
        .join(";")
}

/// Whether a plan judged on `new` keeps the proposal judged on `held` (both [`basis`]): it does
/// unless some load's status changed in a way that matters — a load measured (or no longer
/// measured), traffic appearing (`no_traffic`, `below_floor` or `not_counted` → counted or
/// triggered), or a load newly beyond the trigger. A load that fell back within the trigger or
/// below the floor keeps the held proposal (its figures are re-checked on every reading), so a
/// load hovering at a boundary replaces the proposal at most once per rise, not every reading.
pub fn basis_keeps(held: &str, new: &str) -> bool {
    let statuses = |b: &str| -> Vec<(String, String)> {
        b.split(';')
            .filter_map(|kv| kv.split_once('='))
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    };
    let (held, new) = (statuses(held), statuses(new));
    if held.len() != new.len() || held.is_empty() {
        return false;
    }
    held.iter().zip(&new).all(|((hl, hs), (nl, ns))| {
        let quiet = |s: &str| matches!(s, "no_traffic" | "below_floor" | "not_counted");
        hl == nl
            && (hs == ns
                || !(hs == "measuring"
                    || ns == "measuring"
                    || ns == "triggered"
                    || (quiet(hs) && ns == "counted")))
    })
}

fn by_load(values: impl Fn(usize) -> Value) -> Value {
    let mut m = Map::new();
    for (i, load) in Load::ALL.iter().enumerate() {
        m.insert(load.name().to_string(), values(i));
    }
    Value::Object(m)
}

/// What the API shows beyond the plan: `shares` (every broker with its seven loads and its
/// distance from fair share, before and after the plan; `null` distances for brokers that take
/// no load) and `topicSpreadAtLimit` (`topic@broker` pairs at their topic's spread cap,
/// `ceil(partitions × rf / eligible brokers)`, in the planned placement) and `topicBreaches`
/// (`topic`/broker pairs beyond that cap before the plan, with the count the plan leaves): of
/// each the [`DETAIL_PAIRS`] an answer shows, with `topicSpreadAtLimitTotal` and
/// `topicBreachesTotal` counting every pair.
///
/// One pass over the partitions with the plan's moves looked up by partition (the snapshot is
/// not copied) for the loads, and one pass topic by topic counting replicas per broker in dense
/// arrays (brokers by index), so a 300,000-partition cluster needs no map keyed by topic names.
pub fn detail(snapshot: &Snapshot, plan: &Plan) -> Value {
    serde_json::from_str(&detail_json(snapshot, plan)).unwrap_or(Value::Null)
}

/// A topic/broker pair at its topic's spread cap: topic, broker, replicas, cap.
type AtLimit<'a> = (&'a str, BrokerId, u64, u64);

/// [`detail`] as JSON text, written as it is counted. At 300,000 partitions hundreds of
/// thousands of pairs are at their cap: as JSON values they took gigabytes' worth of small
/// allocations, as text 65 MB; only the first [`DETAIL_PAIRS`] by key are kept.
pub fn detail_json(snapshot: &Snapshot, plan: &Plan) -> String {
    let moves: HashMap<(&str, i32), &ballast_balancer::PlannedMove> = plan
        .moves
        .iter()
        .map(|m| ((m.topic.as_str(), m.partition), m))
        .collect();
    // The placement after the plan: a partition's replicas and leader.
    fn placed<'a>(
        moves: &HashMap<(&str, i32), &'a ballast_balancer::PlannedMove>,
        p: &'a SnapshotPartition,
    ) -> (&'a [BrokerId], Option<BrokerId>) {
        match moves.get(&(p.topic.as_str(), p.partition)) {
            Some(m) => (m.replicas_after.as_slice(), m.leader_after),
            None => (p.replicas.as_slice(), p.leader),
        }
    }
    let after_of = |p| placed(&moves, p);
    // Brokers by index: the snapshot's first, then any other a replica names.
    let mut index: HashMap<BrokerId, usize> = HashMap::new();
    let mut ids: Vec<BrokerId> = Vec::new();
    for b in &snapshot.brokers {
        index.entry(b.id).or_insert_with(|| {
            ids.push(b.id);
            ids.len() - 1
        });
    }
    let mut slot = |id: BrokerId, ids: &mut Vec<BrokerId>| -> usize {
        *index.entry(id).or_insert_with(|| {
            ids.push(id);
            ids.len() - 1
        })
    };
    let eligible: BTreeSet<BrokerId> = snapshot
        .brokers
        .iter()
        .filter(|b| b.state.takes_load())
        .map(|b| b.id)
        .collect();

    // Loads before and after, summed in partition order (as `broker_loads` does).
    let mut before_loads: Vec<[f64; 7]> = vec![[0.0; 7]; ids.len()];
    let mut after_loads: Vec<[f64; 7]> = vec![[0.0; 7]; ids.len()];
    let add = |loads: &mut Vec<[f64; 7]>, i: usize, p: &SnapshotPartition, led: bool| {
        if loads.len() <= i {
            loads.resize(i + 1, [0.0; 7]);
        }
        ballast_balancer::whatif::add_replica_load(&mut loads[i], p, led);
    };
    for p in &snapshot.partitions {
        for r in &p.replicas {
            let i = slot(*r, &mut ids);
            add(&mut before_loads, i, p, p.leader == Some(*r));
        }
        let (replicas, leader) = after_of(p);
        for r in replicas {
            let i = slot(*r, &mut ids);
            add(&mut after_loads, i, p, leader == Some(*r));
        }
    }
    let load_of = |loads: &[[f64; 7]], id: BrokerId| -> [f64; 7] {
        index
            .get(&id)
            .and_then(|i| loads.get(*i))
            .copied()
            .unwrap_or([0.0; 7])
    };
    let fair = |loads: &[[f64; 7]]| -> [f64; 7] {
        let mut f = [0.0; 7];
        for (i, slot) in f.iter_mut().enumerate() {
            let total: f64 = eligible.iter().map(|b| load_of(loads, *b)[i]).sum();
            *slot = if eligible.is_empty() {
                0.0
            } else {
                total / eligible.len() as f64
            };
        }
        f
    };
    let fair_before = fair(&before_loads);
    let fair_after = fair(&after_loads);
    let shares: Vec<Value> = snapshot
        .brokers
        .iter()
        .map(|b| {
            let lb = load_of(&before_loads, b.id);
            let la = load_of(&after_loads, b.id);
            let takes = eligible.contains(&b.id);
            let dist = |v: f64, f: f64| -> Value {
                if takes {
                    json!(ballast_balancer::distance_pct(v, f))
                } else {
                    Value::Null
                }
            };
            json!({
                "brokerId": b.id,
                "rack": b.rack,
                "state": state_name(b.state),
                "takesLoad": takes,
                "loads": by_load(|i| json!(lb[i])),
                "distance": by_load(|i| dist(lb[i], fair_before[i])),
                "loadsAfter": by_load(|i| json!(la[i])),
                "distanceAfter": by_load(|i| dist(la[i], fair_after[i])),
            })
        })
        .collect();

    // Topic spread, topic by topic (partitions grouped by name; a sorted snapshot stays as it
    // is), replicas per broker counted in two dense arrays reset after each topic. What is
    // reported is sorted by topic and broker.
    let mut order: Vec<&SnapshotPartition> = snapshot.partitions.iter().collect();
    order.sort_by(|a, b| a.topic.cmp(&b.topic));
    let takes: Vec<bool> = ids.iter().map(|id| eligible.contains(id)).collect();
    let mut before_counts: Vec<u64> = vec![0; ids.len()];
    let mut after_counts: Vec<u64> = vec![0; ids.len()];
    let mut touched: Vec<usize> = Vec::new();
    let mut at_limit: Vec<AtLimit> = Vec::new();
    // Breaches as topic, broker, replicas, cap, replicas after the plan.
    let mut breaches: Vec<(&str, BrokerId, u64, u64, u64)> = Vec::new();
    let brokers = eligible.len() as u64;
    for group in order.chunk_by(|a, b| a.topic == b.topic) {
        let topic = group[0].topic.as_str();
        let mut rf = 0u64;
        for p in group {
            for r in &p.replicas {
                let i = index.get(r).copied().unwrap_or(0);
                if before_counts[i] == 0 && after_counts[i] == 0 {
                    touched.push(i);
                }
                before_counts[i] += 1;
            }
            let (replicas, _) = after_of(p);
            rf = rf.max(replicas.len() as u64);
            for r in replicas {
                let i = index.get(r).copied().unwrap_or(0);
                if before_counts[i] == 0 && after_counts[i] == 0 {
                    touched.push(i);
                }
                after_counts[i] += 1;
            }
        }
        if brokers > 0 {
            let cap = (group.len() as u64 * rf).div_ceil(brokers);
            touched.sort_unstable_by_key(|i| ids[*i]);
            for &i in &touched {
                let broker = ids[i];
                let count = after_counts[i];
                if takes[i] && count > 0 && count >= cap {
                    at_limit.push((topic, broker, count, cap));
                }
                if before_counts[i] > cap {
                    breaches.push((topic, broker, before_counts[i], cap, count));
                }
            }
        }
        for &i in &touched {
            before_counts[i] = 0;
            after_counts[i] = 0;
        }
        touched.clear();
    }
    // Only the pairs an answer shows are kept (`DETAIL_PAIRS`), with the totals: the first by
    // key as a JSON object of them is ordered (`serde_json::Map` sorts its keys), and the
    // breaches most beyond their cap first.
    let at_limit_total = at_limit.len();
    // A key is written into one buffer and copied only when it is kept.
    let mut key = String::new();
    let mut kept: Vec<(String, &AtLimit)> = Vec::new();
    for pair @ (topic, broker, _, _) in &at_limit {
        use std::fmt::Write as _;
        key.clear();
        let _ = write!(key, "{topic}@{broker}");
        if kept.len() == DETAIL_PAIRS && kept.last().is_some_and(|(last, _)| *last <= key) {
            continue;
        }
        let at = kept.partition_point(|(k, _)| *k < key);
        kept.insert(at, (key.clone(), pair));
        kept.truncate(DETAIL_PAIRS);
    }
    // Most replicas beyond the cap first, then by topic and broker: the first ones chosen
    // before they are sorted (a cluster can have hundreds of thousands).
    let breaches_total = breaches.len();
    let order = |a: &(&str, BrokerId, u64, u64, u64), b: &(&str, BrokerId, u64, u64, u64)| {
        (b.2 - b.3)
            .cmp(&(a.2 - a.3))
            .then_with(|| (a.0, a.1).cmp(&(b.0, b.1)))
    };
    if breaches.len() > DETAIL_PAIRS {
        breaches.select_nth_unstable_by(DETAIL_PAIRS, order);
        breaches.truncate(DETAIL_PAIRS);
    }
    breaches.sort_unstable_by(order);
    let breaches: Vec<Value> = breaches
        .into_iter()
        .map(|(topic, broker, replicas, cap, after)| {
            json!({
                "topic": topic,
                "brokerId": broker,
                "replicas": replicas,
                "cap": cap,
                "replicasAfter": after,
            })
        })
        .collect();
    // A name is written as JSON writes strings.
    let quoted = |text: &str| serde_json::to_string(text).unwrap_or_else(|_| "\"\"".into());
    let mut out = String::with_capacity(256 + kept.len() * 96);
    out.push_str("{\"shares\":");
    out.push_str(&Value::Array(shares).to_string());
    out.push_str(",\"topicBreaches\":");
    out.push_str(&Value::Array(breaches).to_string());
    out.push_str(&format!(",\"topicBreachesTotal\":{breaches_total}"));
    out.push_str(",\"topicSpreadAtLimit\":{");
    for (n, (key, (topic, broker, count, cap))) in kept.iter().enumerate() {
        use std::fmt::Write as _;
        if n > 0 {
            out.push(',');
        }
        let name = quoted(topic);
        let key = quoted(key);
        let _ = write!(
            out,
            "{key}:{{\"brokerId\":{broker},\"cap\":{cap},\"replicas\":{count},\"topic\":{name}}}"
        );
    }
    out.push_str(&format!(
        "}},\"topicSpreadAtLimitTotal\":{at_limit_total}}}"
    ));
    out
}

/// A plan of the observed cluster whose reading, decision and proposal are not recorded yet
/// ([`finish`]). The observer makes it from the sample it is writing, while the write runs
/// ([`plan_parts`]).
#[derive(Debug, Clone)]
pub struct Planned {
    pub snapshot: Snapshot,
    /// The plan of this reading.
    pub plan: Plan,
    /// The current proposal's own moves assessed on this reading when it is held with other
    /// moves than `plan`'s ([`Hold::Held`]): the figures its re-check shows.
    pub held: Option<Plan>,
    /// What [`plan_parts`] found the current proposal would do (checked again by [`finish`]).
    pub hold: Hold,
    pub fingerprint: String,
    pub moves_digest: String,
    /// [`basis`] of `plan`.
    pub basis: String,
    /// The proposal's detail (JSON text) of the plan it keeps: `held`'s, else `plan`'s.
    pub detail: String,
    /// The policy planned with: the settings' and the loads still being measured.
    pub policy: Policy,
    /// `snapshot`, `plan`, `detail` (milliseconds).
    pub timings: Vec<(&'static str, u64)>,
}

/// The moves of the current proposal, as stored (its detail is not read).
fn current_moves(store: &Store) -> Result<Option<Vec<PlannedMove>>, StoreError> {
    Ok(store
        .current_proposal_moves()?
        .and_then(|text| serde_json::from_str(&text).ok()))
}

/// Plans the view of `parts` at `now_ms` (cooldowns and maintenance read from `store`, the
/// loads still being measured from `parts`), and builds the detail of what the proposal will
/// show: this plan's, or — when the current proposal holds other moves — its own moves
/// assessed on this reading. Reads only.
pub fn plan_parts(
    store: &Store,
    settings: &Settings,
    parts: &ballast_runtime::topology::ViewParts<'_>,
    now_ms: i64,
) -> Result<Planned, StoreError> {
    let mut timings = Vec::new();
    let mut clock = std::time::Instant::now();
    let mut step = |name: &'static str| {
        timings.push((name, clock.elapsed().as_millis() as u64));
        clock = std::time::Instant::now();
    };
    let cooldowns = store.partitions_in_cooldown(now_ms, settings.policy.cooldown_ms)?;
    let maintenance: BTreeSet<BrokerId> = store
        .maintenance()?
        .into_iter()
        .map(|m| m.broker_id)
        .collect();
    let snapshot = ballast_runtime::topology::snapshot_of_parts(parts, &cooldowns, &maintenance);
    let mut policy = settings.policy.clone();
    policy.measuring = measuring(parts, settings);
    step("snapshot");
    let started = std::time::Instant::now();
    let mut plan = ballast_balancer::plan(&snapshot, &policy, now_ms);
    plan.elapsed_ms = started.elapsed().as_secs_f64() * 1000.0;
    step("plan");
    let fingerprint = fingerprint(&snapshot);
    let moves_digest = moves_digest(&plan);
    let basis = basis(&plan);
    let hold = store.proposal_hold(
        &fingerprint,
        &moves_digest,
        &basis,
        now_ms,
        settings.hold_ms,
        &basis_keeps,
    )?;
    let held = match hold {
        Hold::Held => current_moves(store)?
            .map(|moves| ballast_balancer::assess(&snapshot, &policy, now_ms, &moves)),
        Hold::New | Hold::Same => None,
    };
    let detail = detail_json(&snapshot, held.as_ref().unwrap_or(&plan));
    step("detail");
    Ok(Planned {
        snapshot,
        plan,
        held,
        hold,
        fingerprint,
        moves_digest,
        basis,
        detail,
        policy,
        timings,
    })
}

/// One evaluation at `now_ms`: plan the observed view, record the reading, decide, and keep the
/// result as the current proposal. None before the first sample.
pub fn evaluate(
    store: &Store,
    settings: &Settings,
    now_ms: i64,
) -> Result<Option<Evaluation>, StoreError> {
    let clock = std::time::Instant::now();
    // Only what planning reads: the replicas, log dirs and group offsets of the view are most of
    // its rows and no part of a plan.
    let Some(view) = store.observed_view_for_planning()? else {
        return Ok(None);
    };
    let read = clock.elapsed().as_millis() as u64;
    let planned = plan_parts(
        store,
        settings,
        &ballast_runtime::topology::ViewParts {
            facts: &view.cluster.facts,
            brokers: &view.brokers,
            topics: &view.topics,
            partitions: &view.partitions,
        },
        now_ms,
    )?;
    drop(view);
    let mut evaluation = finish(store, settings, planned, now_ms)?;
    evaluation.timings.insert(0, ("view", read));
    Ok(Some(evaluation))
}

/// Records the reading of `planned` at `now_ms`, decides, and keeps the result as the current
/// proposal: a new one, or the current one re-checked with the figures of the moves it keeps
/// on this reading (its id and moves stay; its evidence and decision are this reading's).
pub fn finish(
    store: &Store,
    settings: &Settings,
    planned: Planned,
    now_ms: i64,
) -> Result<Evaluation, StoreError> {
    let Planned {
        snapshot,
        plan,
        mut held,
        hold,
        fingerprint,
        moves_digest: digest,
        basis,
        mut detail,
        policy,
        timings: planning,
    } = planned;
    let mut timings = Vec::new();
    let mut clock = std::time::Instant::now();
    let mut step = |name: &'static str| {
        timings.push((name, clock.elapsed().as_millis() as u64));
        clock = std::time::Instant::now();
    };
    let reading = Reading::of(&plan, now_ms);
    let stored = store.record_proposal_reading(
        &ProposalReading {
            at_ms: now_ms,
            tripped: reading.tripped.into_iter().collect(),
            helped: reading.helped.into_iter().collect(),
        },
        settings.readings_kept,
    )?;
    let readings: Vec<Reading> = stored
        .into_iter()
        .map(|r| Reading {
            at_ms: r.at_ms,
            tripped: r.tripped.into_iter().collect(),
            helped: r.helped.into_iter().collect(),
        })
        .collect();
    // The current proposal may have changed since planning (deleted, applied, replaced):
    // what it would do now decides whose figures are kept.
    let now_hold = store.proposal_hold(
        &fingerprint,
        &digest,
        &basis,
        now_ms,
        settings.hold_ms,
        &basis_keeps,
    )?;
    let mut detail_ms = 0;
    if now_hold != hold || (now_hold == Hold::Held && held.is_none()) {
        let built_at = std::time::Instant::now();
        held = match now_hold {
            Hold::Held => current_moves(store)?
                .map(|moves| ballast_balancer::assess(&snapshot, &policy, now_ms, &moves)),
            Hold::New | Hold::Same => None,
        };
        detail = detail_json(&snapshot, held.as_ref().unwrap_or(&plan));
        detail_ms = built_at.elapsed().as_millis() as u64;
    }
    let kept = held.as_ref().unwrap_or(&plan);
    let decision = ballast_balancer::decide(
        kept,
        &ballast_balancer::Context {
            readings: &readings,
            started_at_ms: settings.started_at_ms,
            warmup_ms: settings.warmup_ms,
            max_gap_ms: settings.max_gap_ms,
            now_ms,
            throttles_managed: settings.throttles_managed,
        },
    );
    let mut decision = decision;
    if let Some(busy) = store.reassignment_busy(now_ms)? {
        hold_for_running_work(&mut decision, &busy, store)?;
    }
    step("decide");
    let id = format!(
        "p-{now_ms}-{:08x}",
        ballast_runtime::topology::fnv1a(format!("{fingerprint}{digest}").as_bytes()) as u32
    );
    let proposal = NewProposal {
        id,
        fingerprint: fingerprint.clone(),
        moves_digest: digest,
        basis,
        recommended: kept.recommended,
        application_allowed: decision.application_allowed,
        moves: kept.moves.len() as u64,
        estimated_bytes: kept.estimated_bytes,
        balance_hold: kept.balance_hold,
        plan: serde_json::to_value(kept).unwrap_or(Value::Null),
        decision: serde_json::to_value(&decision).unwrap_or(Value::Null),
        detail: Value::Null,
    };
    let saved = store.save_proposal_judged(
        &proposal,
        &detail,
        now_ms,
        settings.proposals_kept,
        settings.hold_ms,
        &basis_keeps,
    )?;
    step("save");
    let mut all = planning;
    for (name, ms) in timings {
        if name == "save" {
            all.push(("detail", detail_ms));
            all.push((name, ms.saturating_sub(detail_ms)));
        } else {
            all.push((name, ms));
        }
    }
    // One `detail` entry: built while planning and/or here.
    let detail_total: u64 = all
        .iter()
        .filter(|(n, _)| *n == "detail")
        .map(|(_, v)| v)
        .sum();
    all.retain(|(n, _)| *n != "detail");
    let at = all
        .iter()
        .position(|(n, _)| *n == "save")
        .unwrap_or(all.len());
    all.insert(at, ("detail", detail_total));
    let plan = held.unwrap_or(plan);
    Ok(Evaluation {
        saved,
        plan,
        decision,
        fingerprint,
        timings: all,
    })
}

/// The decision while an operation or a rolling restart runs: not applicable, saying which and
/// how far (an apply then would be refused with 409, and a plan of a half-moved layout is not
/// one to stack on it).
pub fn hold_for_running_work(
    decision: &mut ballast_balancer::Decision,
    busy: &ballast_schema::Busy,
    store: &Store,
) -> Result<(), StoreError> {
    let progress = match &busy.operation_id {
        Some(op) => {
            let moves = store.moves(op)?;
            let done = moves.iter().filter(|m| m.state.is_finished()).count();
            format!(" ({done} of {} moves done)", moves.len())
        }
        None => String::new(),
    };
    decision.application_allowed = false;
    decision.reason = Some("operation_in_progress".into());
    decision.next_action = format!(
        "wait: {}{progress}; the cluster is planned again once it has ended",
        busy.message()
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use ballast_balancer::whatif::broker_loads;
    use ballast_model::snapshot::{SnapshotBroker, SnapshotPartition, SNAPSHOT_FORMAT};
    use ballast_model::BrokerState;
    use std::collections::BTreeMap;

    /// The detail as it was first written: the plan applied to a copy of the snapshot, counted
    /// in maps keyed by topic names. [`detail`] must give the same answer.
    fn detail_of_the_applied_plan(snapshot: &Snapshot, plan: &Plan) -> Value {
        let after = ballast_balancer::apply_plan(snapshot, plan, None);
        let before_loads = broker_loads(snapshot);
        let after_loads = broker_loads(&after);
        let eligible: BTreeSet<BrokerId> = snapshot
            .brokers
            .iter()
            .filter(|b| b.state.takes_load())
            .map(|b| b.id)
            .collect();
        let fair = |loads: &BTreeMap<BrokerId, [f64; 7]>| -> [f64; 7] {
            let mut f = [0.0; 7];
            for (i, slot) in f.iter_mut().enumerate() {
                let total: f64 = eligible
                    .iter()
                    .map(|b| loads.get(b).map_or(0.0, |v| v[i]))
                    .sum();
                *slot = if eligible.is_empty() {
                    0.0
                } else {
                    total / eligible.len() as f64
                };
            }
            f
        };
        let fair_before = fair(&before_loads);
        let fair_after = fair(&after_loads);
        let shares: Vec<Value> = snapshot
            .brokers
            .iter()
            .map(|b| {
                let zero = [0.0; 7];
                let lb = before_loads.get(&b.id).unwrap_or(&zero);
                let la = after_loads.get(&b.id).unwrap_or(&zero);
                let takes = eligible.contains(&b.id);
                let dist = |v: f64, f: f64| -> Value {
                    if takes {
                        json!(ballast_balancer::distance_pct(v, f))
                    } else {
                        Value::Null
                    }
                };
                json!({
                    "brokerId": b.id,
                    "rack": b.rack,
                    "state": state_name(b.state),
                    "takesLoad": takes,
                    "loads": by_load(|i| json!(lb[i])),
                    "distance": by_load(|i| dist(lb[i], fair_before[i])),
                    "loadsAfter": by_load(|i| json!(la[i])),
                    "distanceAfter": by_load(|i| dist(la[i], fair_after[i])),
                })
            })
            .collect();

        // Topic spread in the planned placement. Counted in hash maps (a million replicas at
        // 300,000 partitions); what is reported is sorted by topic and broker.
        let mut partitions: HashMap<&str, (u64, u64)> = HashMap::new();
        let mut replicas: HashMap<(&str, BrokerId), u64> = HashMap::new();
        for p in &after.partitions {
            let e = partitions.entry(p.topic.as_str()).or_insert((0, 0));
            e.0 += 1;
            e.1 = e.1.max(p.replicas.len() as u64);
            for r in &p.replicas {
                *replicas.entry((p.topic.as_str(), *r)).or_insert(0) += 1;
            }
        }
        let mut at_limit = Map::new();
        if !eligible.is_empty() {
            let mut sorted: Vec<(&(&str, BrokerId), &u64)> = replicas.iter().collect();
            sorted.sort_unstable_by(|a, b| a.0.cmp(b.0));
            for ((topic, broker), count) in sorted {
                if !eligible.contains(broker) {
                    continue;
                }
                let (n, rf) = partitions.get(topic).copied().unwrap_or((0, 0));
                let cap = (n * rf).div_ceil(eligible.len() as u64);
                if *count >= cap {
                    at_limit.insert(
                    format!("{topic}@{broker}"),
                    json!({ "topic": topic, "brokerId": broker, "replicas": count, "cap": cap }),
                );
                }
            }
        }
        // Breaches: a topic holding more replicas on a broker than its spread cap, before the plan,
        // with what the plan leaves there.
        let mut before_counts: HashMap<(&str, BrokerId), u64> = HashMap::new();
        for p in &snapshot.partitions {
            for r in &p.replicas {
                *before_counts.entry((p.topic.as_str(), *r)).or_insert(0) += 1;
            }
        }
        let mut breaches: Vec<Value> = Vec::new();
        if !eligible.is_empty() {
            let cap_of = |topic: &str| {
                let (n, rf) = partitions.get(topic).copied().unwrap_or((0, 0));
                (n * rf).div_ceil(eligible.len() as u64)
            };
            let mut beyond: Vec<(&(&str, BrokerId), &u64)> = before_counts
                .iter()
                .filter(|((topic, _), count)| **count > cap_of(topic))
                .collect();
            beyond.sort_unstable_by(|a, b| a.0.cmp(b.0));
            for ((topic, broker), count) in beyond {
                breaches.push(json!({
                    "topic": topic,
                    "brokerId": broker,
                    "replicas": count,
                    "cap": cap_of(topic),
                    "replicasAfter": replicas.get(&(*topic, *broker)).copied().unwrap_or(0),
                }));
            }
        }
        // What is kept: the first pairs by key, the breaches most beyond their cap first.
        let at_limit_total = at_limit.len();
        let at_limit: Map<String, Value> = at_limit.into_iter().take(DETAIL_PAIRS).collect();
        let breaches_total = breaches.len();
        let excess =
            |v: &Value| v["replicas"].as_i64().unwrap_or(0) - v["cap"].as_i64().unwrap_or(0);
        breaches.sort_by(|a, b| {
            excess(b).cmp(&excess(a)).then_with(|| {
                (a["topic"].as_str(), a["brokerId"].as_i64())
                    .cmp(&(b["topic"].as_str(), b["brokerId"].as_i64()))
            })
        });
        breaches.truncate(DETAIL_PAIRS);
        json!({
            "shares": shares,
            "topicSpreadAtLimit": at_limit,
            "topicSpreadAtLimitTotal": at_limit_total,
            "topicBreaches": breaches,
            "topicBreachesTotal": breaches_total,
        })
    }

    fn partition(topic: &str, partition: i32, replicas: &[BrokerId]) -> SnapshotPartition {
        SnapshotPartition {
            topic: topic.into(),
            partition,
            replicas: replicas.to_vec(),
            leader: replicas.first().copied(),
            isr: Some(replicas.to_vec()),
            size_bytes: 1_000_000,
            compacted: false,
            min_insync_replicas: 1,
            producer_msg_rate: 0.0,
            producer_byte_rate: 0.0,
            consumer_msg_rate: 0.0,
            consumer_byte_rate: 0.0,
            last_moved_at: None,
        }
    }

    fn observed(window_ms: Option<i64>, size: Option<i64>) -> ballast_schema::ObservedPartition {
        ballast_schema::ObservedPartition {
            topic: "t".into(),
            partition: 0,
            leader: Some(1),
            leader_epoch: None,
            replicas: vec![1, 2],
            isr: vec![1, 2],
            offline_replicas: vec![],
            adding: vec![],
            removing: vec![],
            size_bytes: size,
            avg_size_bytes: None,
            earliest_offset: None,
            local_start_offset: None,
            latest_offset: None,
            offsets_at_ms: None,
            produced_total: 0,
            consumed_total: 0,
            rates: window_ms.map(|w| ballast_schema::PartitionRates {
                producer_msg_rate: 0.0,
                producer_byte_rate: 0.0,
                consumer_msg_rate: 0.0,
                consumer_byte_rate: 0.0,
                window_ms: w,
            }),
        }
    }

    /// Readings a minute apart, a five-minute warm-up, a 30-minute rate window (the defaults).
    fn defaults() -> Settings {
        Settings {
            policy: Policy::default(),
            started_at_ms: 0,
            warmup_ms: 300_000,
            max_gap_ms: 180_000,
            throttles_managed: true,
            readings_kept: READINGS_KEPT,
            proposals_kept: PROPOSALS_KEPT,
            hold_ms: 900_000,
            sample_interval_ms: 60_000,
            rate_window_ms: 1_800_000,
        }
    }

    fn measured(
        partitions: &[ballast_schema::ObservedPartition],
        settings: &Settings,
    ) -> [Option<Measuring>; 7] {
        let facts = ballast_schema::ClusterFacts::default();
        measuring(
            &ballast_runtime::topology::ViewParts {
                facts: &facts,
                brokers: &[],
                topics: &[],
                partitions,
            },
            settings,
        )
    }

    const RATES: [usize; 4] = [3, 4, 5, 6];

    #[test]
    fn rates_are_measured_once_their_window_holds_the_warm_ups_readings() {
        let s = defaults();
        // The first reading: no rate at all.
        let m = measured(&[observed(None, Some(1))], &s);
        for i in RATES {
            assert_eq!(
                m[i],
                Some(Measuring {
                    readings: 1,
                    needed: 6,
                    remaining_ms: 300_000
                })
            );
        }
        assert_eq!(m[0], None, "counts come from the metadata");
        assert_eq!(m[2], None, "every size was read");
        // Three minutes of history (a partition added since has less: the longest counts).
        let m = measured(
            &[
                observed(Some(180_000), Some(1)),
                observed(Some(60_000), Some(1)),
            ],
            &s,
        );
        assert_eq!(
            m[3],
            Some(Measuring {
                readings: 4,
                needed: 6,
                remaining_ms: 120_000
            })
        );
        // Five minutes (a sample a little early still counts as the reading it is).
        let m = measured(&[observed(Some(299_000), Some(1))], &s);
        assert!(RATES.iter().all(|i| m[*i].is_none()), "{m:?}");
    }

    #[test]
    fn without_a_warm_up_rates_need_two_readings_and_never_more_than_the_rate_window() {
        let s = Settings {
            warmup_ms: 0,
            ..defaults()
        };
        assert_eq!(
            measured(&[observed(None, Some(1))], &s)[3].map(|m| m.needed),
            Some(2)
        );
        assert!(measured(&[observed(Some(60_000), Some(1))], &s)[3].is_none());
        let s = Settings {
            warmup_ms: 3_600_000,
            ..defaults()
        };
        let m = measured(&[observed(Some(1_800_000), Some(1))], &s);
        assert!(m[3].is_none(), "a full rate window is measured: {m:?}");
    }

    #[test]
    fn disk_is_measured_once_every_partition_in_sync_has_a_size() {
        let s = defaults();
        let m = measured(
            &[
                observed(Some(300_000), None),
                observed(Some(300_000), Some(1)),
            ],
            &s,
        );
        assert_eq!(
            m[2],
            Some(Measuring {
                readings: 0,
                needed: 1,
                remaining_ms: 60_000
            })
        );
        // An offline partition (nothing in sync) has no size to read.
        let mut offline = observed(Some(300_000), None);
        offline.isr.clear();
        assert!(measured(&[offline], &s)[2].is_none());
        assert_eq!(measured(&[], &s), [None; 7], "nothing to measure");
    }

    #[test]
    fn a_held_proposal_is_replaced_when_a_load_is_measured_gains_traffic_or_newly_triggers_not_when_it_settles(
    ) {
        let b = |statuses: &[&str]| {
            Load::ALL
                .iter()
                .zip(statuses)
                .map(|(l, s)| format!("{}={s}", l.name()))
                .collect::<Vec<_>>()
                .join(";")
        };
        let held = b(&[
            "triggered",
            "counted",
            "triggered",
            "measuring",
            "measuring",
            "no_traffic",
            "below_floor",
        ]);
        assert!(basis_keeps(&held, &held));
        // Measured: replaced.
        let measured = b(&[
            "triggered",
            "counted",
            "triggered",
            "counted",
            "measuring",
            "no_traffic",
            "below_floor",
        ]);
        assert!(!basis_keeps(&held, &measured));
        // Traffic appears, or climbs over the floor: replaced.
        let traffic = b(&[
            "triggered",
            "counted",
            "triggered",
            "measuring",
            "measuring",
            "counted",
            "below_floor",
        ]);
        assert!(!basis_keeps(&held, &traffic));
        let over_floor = b(&[
            "triggered",
            "counted",
            "triggered",
            "measuring",
            "measuring",
            "no_traffic",
            "counted",
        ]);
        assert!(!basis_keeps(&held, &over_floor));
        // Newly beyond the trigger: replaced.
        let newly = b(&[
            "triggered",
            "triggered",
            "triggered",
            "measuring",
            "measuring",
            "no_traffic",
            "below_floor",
        ]);
        assert!(!basis_keeps(&held, &newly));
        // Back within the trigger, or below the floor: kept (its figures are re-checked).
        let settled = b(&[
            "counted",
            "counted",
            "triggered",
            "measuring",
            "measuring",
            "no_traffic",
            "below_floor",
        ]);
        assert!(basis_keeps(&held, &settled));
        // A proposal made before the basis was kept is replaced.
        assert!(!basis_keeps("", &held));
    }

    #[test]
    fn the_basis_names_every_loads_status() {
        use ballast_balancer::instances::{generate, Kind, Spec};
        let snapshot = generate(&Spec::new(Kind::HotBroker, 6, 60, 1));
        let mut policy = Policy::default();
        policy.measuring[3] = Some(Measuring {
            readings: 1,
            needed: 6,
            remaining_ms: 300_000,
        });
        let b = basis(&ballast_balancer::plan(&snapshot, &policy, 0));
        assert!(b.starts_with("leaderCount="), "{b}");
        assert!(b.contains("diskBytes=triggered"), "{b}");
        assert!(b.contains("producerMsgRate=measuring"), "{b}");
        assert_eq!(b.split(';').count(), 7);
    }

    #[test]
    fn topic_breaches_name_topics_beyond_their_spread_cap_on_a_broker() {
        let snapshot = Snapshot {
            format: SNAPSHOT_FORMAT.to_string(),
            taken_at: "2026-01-01T00:00:00Z".into(),
            cluster_id: None,
            brokers: (1..=2)
                .map(|id| SnapshotBroker {
                    id,
                    rack: None,
                    state: BrokerState::Alive,
                })
                .collect(),
            partitions: vec![
                partition("orders", 0, &[1]),
                partition("orders", 1, &[1]),
                partition("clicks", 0, &[1]),
                partition("clicks", 1, &[2]),
            ],
        };
        let plan = ballast_balancer::plan(&snapshot, &Policy::default(), 0);
        let d = detail(&snapshot, &plan);
        let breaches = d["topicBreaches"].as_array().expect("array");
        assert_eq!(breaches.len(), 1, "{d}");
        assert_eq!(breaches[0]["topic"], "orders");
        assert_eq!(breaches[0]["brokerId"], 1);
        assert_eq!(breaches[0]["replicas"], 2);
        assert_eq!(breaches[0]["cap"], 1);
    }

    #[test]
    fn the_detail_counted_by_index_equals_the_detail_of_the_plan_applied_to_a_copy_and_keeps_the_pairs_an_answer_shows(
    ) {
        use ballast_balancer::instances::{generate, Kind, Spec};
        let mut cut = false;
        for (i, kind) in Kind::ALL.into_iter().enumerate() {
            let mut snapshot = generate(&Spec::new(kind, 24, 3000, 7 + i as u64));
            // A broker that takes no load, one that is down, a replica on a broker the
            // snapshot does not list, and partitions out of topic order.
            snapshot.brokers[1].state = BrokerState::Maintenance;
            snapshot.brokers[2].state = BrokerState::Down;
            snapshot.partitions[3].replicas.push(99);
            snapshot.partitions.reverse();
            let plan = ballast_balancer::plan(&snapshot, &Policy::default(), 0);
            assert!(!plan.moves.is_empty() || kind == Kind::Random, "{kind}");
            // The store keeps the detail as text and serves it parsed: the two texts parse
            // to the same JSON.
            let reference = detail_of_the_applied_plan(&snapshot, &plan).to_string();
            let text = detail_json(&snapshot, &plan);
            let kept: Value = serde_json::from_str(&text).expect("JSON");
            let pairs = kept["topicSpreadAtLimit"].as_object().map_or(0, Map::len);
            let total = kept["topicSpreadAtLimitTotal"].as_u64().unwrap_or(0) as usize;
            assert_eq!(
                pairs,
                total.min(DETAIL_PAIRS),
                "{kind}: the first pairs are kept"
            );
            cut |= total > DETAIL_PAIRS;
            assert!(
                serde_json::from_str::<Value>(&text).expect("JSON")
                    == serde_json::from_str::<Value>(&reference).expect("JSON"),
                "{kind}"
            );
        }
        assert!(
            cut,
            "some cluster has more pairs at their cap than the detail keeps"
        );
    }
}
