//! Proposal evaluation: after every successful sample the observer plans the observed cluster,
//! records the reading's brokers beyond the trigger, decides whether the plan may be applied and
//! keeps the result as the current proposal.
//!
//! [`evaluate`] does it all against a store (no clock: `now_ms` is a parameter); the pieces
//! ([`detail`]; `ballast_runtime::topology` for the snapshot and its fingerprint) are pure.

use ballast_runtime::millis;
use std::collections::{BTreeMap, BTreeSet, HashMap};

use ballast_balancer::whatif::broker_loads;
use ballast_balancer::{Plan, Policy, Reading};
use ballast_config::Config;
use ballast_model::snapshot::Snapshot;
use ballast_model::{BrokerId, Load};
use ballast_runtime::topology::state_name;
pub use ballast_runtime::topology::{fingerprint, snapshot_from_view};
use ballast_schema::{NewProposal, ProposalReading, SavedProposal, Store, StoreError};
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
/// (`topic`/broker pairs beyond that cap before the plan, with the count the plan leaves).
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
    json!({ "shares": shares, "topicSpreadAtLimit": at_limit, "topicBreaches": breaches })
}

/// One evaluation at `now_ms`: plan the observed view, record the reading, decide, and keep the
/// result as the current proposal. None before the first sample.
pub fn evaluate(
    store: &Store,
    settings: &Settings,
    now_ms: i64,
) -> Result<Option<Evaluation>, StoreError> {
    let mut timings = Vec::new();
    let mut clock = std::time::Instant::now();
    let mut step = |name: &'static str| {
        timings.push((name, clock.elapsed().as_millis() as u64));
        clock = std::time::Instant::now();
    };
    // Only what planning reads: the replicas, log dirs and group offsets of the view are most of
    // its rows and no part of a plan.
    let Some(view) = store.observed_view_for_planning()? else {
        return Ok(None);
    };
    step("view");
    let cooldowns = store.partitions_in_cooldown(now_ms, settings.policy.cooldown_ms)?;
    let maintenance: BTreeSet<BrokerId> = store
        .maintenance()?
        .into_iter()
        .map(|m| m.broker_id)
        .collect();
    let snapshot =
        ballast_runtime::topology::snapshot_with_maintenance(&view, &cooldowns, &maintenance);
    drop(view);
    step("snapshot");
    let started = std::time::Instant::now();
    let mut plan = ballast_balancer::plan(&snapshot, &settings.policy, now_ms);
    plan.elapsed_ms = started.elapsed().as_secs_f64() * 1000.0;
    step("plan");
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
    let decision = ballast_balancer::decide(
        &plan,
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
    let fingerprint = fingerprint(&snapshot);
    let digest = moves_digest(&plan);
    let id = format!(
        "p-{now_ms}-{:08x}",
        ballast_runtime::topology::fnv1a(format!("{fingerprint}{digest}").as_bytes()) as u32
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
    step("detail");
    let saved =
        store.save_proposal_held(&proposal, now_ms, settings.proposals_kept, settings.hold_ms)?;
    step("save");
    Ok(Some(Evaluation {
        saved,
        plan,
        decision,
        fingerprint,
        timings,
    }))
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
    use ballast_model::snapshot::{SnapshotBroker, SnapshotPartition, SNAPSHOT_FORMAT};
    use ballast_model::BrokerState;

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
}
