//! Proposal evaluation: after every successful sample the observer plans the observed cluster,
//! records the reading's brokers beyond the trigger, decides whether the plan may be applied and
//! keeps the result as the current proposal.
//!
//! [`evaluate`] does it all against a store (no clock: `now_ms` is a parameter); the pieces
//! ([`snapshot_from_view`], [`fingerprint`], [`detail`]) are pure.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::time::Duration;

use ballast_balancer::{Plan, Policy, Reading};
use ballast_config::Config;
use ballast_model::snapshot::{Snapshot, SnapshotBroker, SnapshotPartition, SNAPSHOT_FORMAT};
use ballast_model::{BrokerId, BrokerState, Load};
use ballast_runtime::format_rfc3339_ms;
use ballast_schema::{
    Cooldown, NewProposal, ObservedView, ProposalReading, SavedProposal, Store, StoreError,
};
use serde_json::{json, Map, Value};

/// Readings kept in `proposal_readings` (enough for the four-reading rule and some history).
pub const READINGS_KEPT: usize = 100;
/// Proposals kept in `proposals`; older ones are deleted.
pub const PROPOSALS_KEPT: usize = 200;

/// What evaluation follows, from the service's settings.
#[derive(Debug, Clone)]
pub struct Settings {
    pub policy: Policy,
    /// `BALLAST_WARMUP`
    pub warmup_ms: i64,
    /// `BALLAST_THROTTLE_MANAGED`
    pub throttles_managed: bool,
    pub readings_kept: usize,
    pub proposals_kept: usize,
}

fn millis(d: Duration) -> i64 {
    i64::try_from(d.as_millis()).unwrap_or(i64::MAX)
}

impl Settings {
    pub fn from_config(config: &Config) -> Settings {
        Settings {
            policy: crate::policy(&config.balance, config.timing.move_cooldown),
            warmup_ms: millis(config.timing.warmup),
            throttles_managed: config.throttle.managed,
            readings_kept: READINGS_KEPT,
            proposals_kept: PROPOSALS_KEPT,
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
}

/// A `ballast.snapshot/v1` of the observed view: brokers (down when not alive), every partition
/// with its placement, window-averaged size (compacted topics: their steady size), rolling rates
/// (0 until known) and `lastMovedAt` from the cooldowns.
pub fn snapshot_from_view(view: &ObservedView, cooldowns: &[Cooldown]) -> Snapshot {
    let topics: HashMap<&str, &ballast_schema::ObservedTopic> =
        view.topics.iter().map(|t| (t.name.as_str(), t)).collect();
    let moved: HashMap<(&str, i32), i64> = cooldowns
        .iter()
        .map(|c| ((c.topic.as_str(), c.partition), c.moved_at_ms))
        .collect();
    let mut brokers: BTreeMap<BrokerId, SnapshotBroker> = view
        .brokers
        .iter()
        .map(|b| {
            (
                b.broker_id,
                SnapshotBroker {
                    id: b.broker_id,
                    rack: b.rack.clone(),
                    state: if b.alive {
                        BrokerState::Alive
                    } else {
                        BrokerState::Down
                    },
                },
            )
        })
        .collect();
    let mut partitions = Vec::with_capacity(view.partitions.len());
    for p in &view.partitions {
        for r in &p.replicas {
            brokers.entry(*r).or_insert(SnapshotBroker {
                id: *r,
                rack: None,
                state: BrokerState::Down,
            });
        }
        let topic = topics.get(p.topic.as_str());
        let size = p
            .avg_size_bytes
            .or(p.size_bytes.map(|s| s as f64))
            .unwrap_or(0.0)
            .max(0.0);
        let rates = p.rates.unwrap_or(ballast_schema::PartitionRates {
            producer_msg_rate: 0.0,
            producer_byte_rate: 0.0,
            consumer_msg_rate: 0.0,
            consumer_byte_rate: 0.0,
            window_ms: 0,
        });
        partitions.push(SnapshotPartition {
            topic: p.topic.clone(),
            partition: p.partition,
            replicas: p.replicas.clone(),
            leader: p.leader,
            isr: Some(p.isr.clone()),
            size_bytes: size.round() as u64,
            compacted: topic.is_some_and(|t| t.compacted),
            min_insync_replicas: topic.and_then(|t| t.min_insync).unwrap_or(1),
            producer_msg_rate: rates.producer_msg_rate,
            producer_byte_rate: rates.producer_byte_rate,
            consumer_msg_rate: rates.consumer_msg_rate,
            consumer_byte_rate: rates.consumer_byte_rate,
            last_moved_at: moved
                .get(&(p.topic.as_str(), p.partition))
                .map(|ms| format_rfc3339_ms(*ms)),
        });
    }
    Snapshot {
        format: SNAPSHOT_FORMAT.to_string(),
        taken_at: format_rfc3339_ms(view.cluster.facts.sampled_at_ms),
        cluster_id: view.cluster.facts.cluster_id.clone(),
        brokers: brokers.into_values().collect(),
        partitions,
    }
}

/// FNV-1a, 64 bits: stable across builds and platforms.
fn fnv1a(bytes: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in bytes {
        h ^= u64::from(*b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h
}

fn state_name(s: BrokerState) -> &'static str {
    match s {
        BrokerState::Alive => "alive",
        BrokerState::Down => "down",
        BrokerState::Maintenance => "maintenance",
    }
}

/// A stable hash of the topology: brokers with their states and every partition's replicas, in
/// id order (input order does not matter).
pub fn fingerprint(snapshot: &Snapshot) -> String {
    let mut brokers: Vec<(BrokerId, &'static str)> = snapshot
        .brokers
        .iter()
        .map(|b| (b.id, state_name(b.state)))
        .collect();
    brokers.sort_unstable();
    let mut parts: Vec<(&str, i32, &[BrokerId])> = snapshot
        .partitions
        .iter()
        .map(|p| (p.topic.as_str(), p.partition, p.replicas.as_slice()))
        .collect();
    parts.sort_unstable();
    let mut text = String::new();
    for (id, state) in brokers {
        text.push_str(&format!("b{id}:{state};"));
    }
    for (topic, partition, replicas) in parts {
        text.push_str(&format!(
            "p{}:{topic}/{partition}:{replicas:?};",
            topic.len()
        ));
    }
    format!("{:016x}", fnv1a(text.as_bytes()))
}

/// A stable hash of the plan's moves.
pub fn moves_digest(plan: &Plan) -> String {
    let text = serde_json::to_string(&plan.moves).unwrap_or_default();
    format!("{:016x}", fnv1a(text.as_bytes()))
}

/// Every broker's seven loads under a placement, indexed like [`Load::ALL`].
fn broker_loads(snapshot: &Snapshot) -> BTreeMap<BrokerId, [f64; 7]> {
    let mut loads: BTreeMap<BrokerId, [f64; 7]> =
        snapshot.brokers.iter().map(|b| (b.id, [0.0; 7])).collect();
    for p in &snapshot.partitions {
        let size = p.size_bytes as f64;
        for r in &p.replicas {
            let v = loads.entry(*r).or_insert([0.0; 7]);
            if p.leader == Some(*r) {
                v[0] += 1.0;
                v[3] += p.producer_msg_rate;
                v[4] += p.producer_byte_rate;
                v[5] += p.consumer_msg_rate;
                v[6] += p.consumer_byte_rate;
            } else {
                v[1] += 1.0;
            }
            v[2] += size;
        }
    }
    loads
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
/// `ceil(partitions × rf / eligible brokers)`, in the planned placement).
pub fn detail(snapshot: &Snapshot, plan: &Plan) -> Value {
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

    // Topic spread in the planned placement.
    let mut partitions: BTreeMap<&str, (u64, u64)> = BTreeMap::new();
    let mut replicas: BTreeMap<(&str, BrokerId), u64> = BTreeMap::new();
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
        for ((topic, broker), count) in &replicas {
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
    json!({ "shares": shares, "topicSpreadAtLimit": at_limit })
}

/// One evaluation at `now_ms`: plan the observed view, record the reading, decide, and keep the
/// result as the current proposal. None before the first sample.
pub fn evaluate(
    store: &Store,
    settings: &Settings,
    now_ms: i64,
) -> Result<Option<Evaluation>, StoreError> {
    let Some(view) = store.observed_view()? else {
        return Ok(None);
    };
    let cooldowns = store.partitions_in_cooldown(now_ms, settings.policy.cooldown_ms)?;
    let snapshot = snapshot_from_view(&view, &cooldowns);
    let started = std::time::Instant::now();
    let mut plan = ballast_balancer::plan(&snapshot, &settings.policy, now_ms);
    plan.elapsed_ms = started.elapsed().as_secs_f64() * 1000.0;
    let tripped: BTreeSet<BrokerId> = plan.tripped.iter().map(|t| t.broker_id).collect();
    let stored = store.record_proposal_reading(
        &ProposalReading {
            at_ms: now_ms,
            tripped: tripped.into_iter().collect(),
        },
        settings.readings_kept,
    )?;
    let readings: Vec<Reading> = stored
        .into_iter()
        .map(|r| Reading {
            at_ms: r.at_ms,
            tripped: r.tripped.into_iter().collect(),
        })
        .collect();
    let decision = ballast_balancer::decide(
        &plan,
        &ballast_balancer::Context {
            readings: &readings,
            started_at_ms: view.cluster.first_sampled_at_ms,
            warmup_ms: settings.warmup_ms,
            now_ms,
            throttles_managed: settings.throttles_managed,
        },
    );
    let fingerprint = fingerprint(&snapshot);
    let digest = moves_digest(&plan);
    let id = format!(
        "p-{now_ms}-{:08x}",
        fnv1a(format!("{fingerprint}{digest}").as_bytes()) as u32
    );
    let proposal = NewProposal {
        id,
        fingerprint: fingerprint.clone(),
        moves_digest: digest,
        recommended: plan.recommended,
        application_allowed: decision.application_allowed,
        moves: plan.moves.len() as u64,
        estimated_bytes: plan.estimated_bytes,
        balance_hold: plan.balance_hold,
        plan: serde_json::to_value(&plan).unwrap_or(Value::Null),
        decision: serde_json::to_value(&decision).unwrap_or(Value::Null),
        detail: detail(&snapshot, &plan),
    };
    let saved = store.save_proposal(&proposal, now_ms, settings.proposals_kept)?;
    Ok(Some(Evaluation {
        saved,
        plan,
        decision,
        fingerprint,
    }))
}
