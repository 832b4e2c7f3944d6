//! The healer: three independent self-healing loops, highest priority first: critical fixes
//! (replicas of brokers down longer than `BALLAST_HEAL_DEAD_BROKER_GRACE` re-created elsewhere),
//! replication-factor increases (topics below `BALLAST_HEAL_TARGET_REPLICATION_FACTOR` or their
//! per-topic rule raised) and activity (the current proposal applied when its decision allows).
//!
//! Pure core: [`work`] finds what each loop would do from the observed cluster (placement is the
//! planner's), [`decide::decide`] applies the spec's gates in order. This file is the thin IO
//! shell: read the store, decide, queue at most one operation through `Store::queue_operation`
//! (user `pilot`, method `INTERNAL`, action `selfheal.apply`) for the executor, and report every
//! loop's decision in the heartbeat. The healer never talks to the cluster.
//!
//! Kill safety: the operation, its moves and its audit event are written in one transaction, so
//! a healer killed mid-apply either queued the whole operation or nothing. While it is
//! unfinished every loop skips with `active_reassignments`; after it finished, every loop waits
//! (`data_not_ready`) for a sample (and a proposal check) taken after its end, so the same moves
//! are never queued twice from a stale view. The executor owns throttles and clears them.

pub mod decide;
pub mod work;

use ballast_runtime::millis;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, Mutex};

use ballast_config::Config;
use ballast_model::BrokerId;
use ballast_moves::waves;
use ballast_runtime::{WorkerContext, WorkerError};
use ballast_schema::{NewAuditEvent, NewMove, NewOperation, Queued, Store, StoreError};
use serde_json::{json, Value};

pub use decide::{decide, Loop, LoopDecision, LoopInput, Move, Outcome, Skip, State, Work};

pub const NAME: &str = "healer";

/// The acting user of the service's own changes.
pub const PILOT: &str = "pilot";
/// The audit action of a healing apply (never revertible).
pub const ACTION: &str = "selfheal.apply";
/// Moves listed per loop in the report (the count is always whole).
pub const LISTED_MOVES: usize = 100;
/// Sample intervals after which the observed view is too old to heal on.
pub const STALE_INTERVALS: i64 = 3;

/// What a pass read besides the gates: what an apply needs.
#[derive(Debug, Clone, Default)]
pub struct Facts {
    /// The license state's name.
    pub license: String,
    /// Topology fingerprint of the observed view.
    pub fingerprint: Option<String>,
    pub proposal_id: Option<String>,
    pub proposal_fingerprint: Option<String>,
    /// The newest operation the healer queued per loop, with when.
    pub last_operation: BTreeMap<Loop, (String, i64)>,
}

/// The healing state at `now_ms`, read from the store.
pub fn gather(store: &Store, config: &Config, now_ms: i64) -> Result<(State, Facts), StoreError> {
    let heal = &config.heal;
    let license = ballast_license::current(config, store, now_ms)?;
    let license_allows = license.allows_management();
    let move_cooldown_ms = millis(config.timing.move_cooldown);
    let cooldowns = store.partitions_in_cooldown(now_ms, move_cooldown_ms)?;
    let maintenance: BTreeSet<BrokerId> = store
        .maintenance()?
        .into_iter()
        .map(|m| m.broker_id)
        .collect();
    // The healer's own operations (per loop, the newest) and when the newest operation of any
    // kind finished: data older than that does not show its moves yet.
    let recent = store.operations(None, 200, 0)?;
    let mut facts = Facts {
        license: license.state().as_str().to_string(),
        ..Facts::default()
    };
    let mut settled_after_ms = 0i64;
    for op in &recent.operations {
        settled_after_ms = settled_after_ms.max(op.finished_at_ms.unwrap_or(0));
        if op.kind != "heal" {
            continue;
        }
        let Some(l) = Loop::ALL
            .into_iter()
            .find(|l| op.detail["loop"].as_str() == Some(l.name()))
        else {
            continue;
        };
        facts
            .last_operation
            .entry(l)
            .or_insert((op.id.clone(), op.created_at_ms));
    }
    let mut active = store.reassignment_busy(now_ms)?.map(|b| b.message());

    let view = store.observed_view()?;
    let max_age_ms = millis(config.timing.sample_interval).saturating_mul(STALE_INTERVALS);
    let not_ready: Option<String> = match &view {
        None => Some("the observer has not read the cluster yet".into()),
        Some(v) if now_ms - v.cluster.facts.sampled_at_ms > max_age_ms => Some(format!(
            "the newest sample is {} s old",
            (now_ms - v.cluster.facts.sampled_at_ms) / 1000
        )),
        Some(v) if v.cluster.facts.sampled_at_ms <= settled_after_ms => {
            Some("waiting for a sample taken after the last reassignment finished".into())
        }
        _ => None,
    };
    let mut broker_down = false;
    let (critical, replication) = match (&view, &not_ready) {
        (Some(v), None) => {
            let snapshot =
                ballast_runtime::topology::snapshot_with_maintenance(v, &cooldowns, &maintenance);
            facts.fingerprint = Some(ballast_runtime::topology::fingerprint(&snapshot));
            broker_down = snapshot
                .brokers
                .iter()
                .any(|b| b.state == ballast_model::BrokerState::Down);
            let reassigning = v
                .partitions
                .iter()
                .filter(|p| !p.adding.is_empty() || !p.removing.is_empty())
                .count();
            if active.is_none() && reassigning > 0 {
                active = Some(format!(
                    "the cluster is reassigning {reassigning} partition(s)"
                ));
            }
            let down_since: BTreeMap<BrokerId, i64> = v
                .brokers
                .iter()
                .filter(|b| !b.alive)
                .filter_map(|b| b.last_seen_ms.or(b.first_seen_ms).map(|t| (b.broker_id, t)))
                .collect();
            let mut policy =
                ballast_runtime::topology::policy(&config.balance, config.timing.move_cooldown);
            policy.max_partitions = heal.max_partitions_per_run.map(|n| n as usize);
            let critical = work::critical(
                &snapshot,
                &down_since,
                v.cluster.first_sampled_at_ms,
                millis(heal.dead_broker_grace),
                &policy,
                now_ms,
            );
            let internal: BTreeSet<String> = v
                .topics
                .iter()
                .filter(|t| t.internal)
                .map(|t| t.name.clone())
                .collect();
            let replication = work::replication_factor(
                &snapshot,
                &internal,
                |t| heal.target_rf(t),
                |t| {
                    heal.topic_replication_factor.iter().any(|r| {
                        if r.prefix {
                            t.starts_with(&r.pattern)
                        } else {
                            r.pattern == t
                        }
                    })
                },
                policy.trigger_pct(),
            );
            (critical, replication)
        }
        (_, why) => {
            let why = why.clone().unwrap_or_default();
            (Work::NotReady(why.clone()), Work::NotReady(why))
        }
    };
    let activity = match &not_ready {
        Some(why) => Work::NotReady(why.clone()),
        None => {
            let proposal = store.current_proposal()?.map(|p| {
                facts.proposal_id = Some(p.id.clone());
                facts.proposal_fingerprint = Some(p.fingerprint.clone());
                work::Proposal {
                    id: p.id,
                    checked_at_ms: p.checked_at_ms,
                    balance_hold: p.balance_hold,
                    application_allowed: p.application_allowed,
                    plan: p.plan,
                    decision: p.decision,
                }
            });
            match proposal {
                Some(p) if p.checked_at_ms <= settled_after_ms => Work::NotReady(
                    "waiting for a proposal checked after the last reassignment finished".into(),
                ),
                p => work::activity(p.as_ref(), millis(config.timing.proposal_freshness), now_ms),
            }
        }
    };
    let input = |enabled: bool, l: Loop, work: Work| LoopInput {
        enabled,
        last_applied_ms: facts.last_operation.get(&l).map(|(_, at)| *at),
        work,
    };
    let loops = [
        input(heal.critical_enabled, Loop::Critical, critical),
        input(
            heal.replication_enabled,
            Loop::ReplicationFactor,
            replication,
        ),
        input(heal.activity_enabled, Loop::Activity, activity),
    ];
    let state = State {
        window: heal.window,
        dry_run: heal.dry_run,
        license_allows,
        cooldown_ms: millis(config.timing.heal_cooldown),
        max_partitions: heal.max_partitions_per_run.map(|n| n as usize),
        active_reassignments: active,
        partitions_in_cooldown: cooldowns
            .into_iter()
            .map(|c| (c.topic, c.partition))
            .collect(),
        broker_down,
        loops,
    };
    Ok((state, facts))
}

/// The operation and audit event that queue `moves` for `kind`.
pub fn operation(
    kind: Loop,
    moves: &[Move],
    why: &str,
    facts: &Facts,
    now_ms: i64,
) -> (NewOperation, NewAuditEvent) {
    let new_moves: Vec<NewMove> = moves
        .iter()
        .map(|m| NewMove {
            topic: m.topic.clone(),
            partition: m.partition,
            source: m.replicas_before.clone(),
            target: m.replicas_after.clone(),
            steps: waves::steps(&m.replicas_before, &m.replicas_after)
                .len()
                .max(1) as u32,
            bytes_total: m.bytes,
            phase: 0,
        })
        .collect();
    let (proposal_id, fingerprint) = match kind {
        Loop::Activity => (
            facts.proposal_id.clone(),
            facts.proposal_fingerprint.clone(),
        ),
        _ => (None, facts.fingerprint.clone()),
    };
    let bytes: u64 = moves.iter().map(|m| m.bytes).sum();
    let description = format!(
        "self-healing ({}): {} partition(s), {why}",
        kind.name(),
        moves.len()
    );
    let op = NewOperation {
        kind: "heal".into(),
        strategy: "SELF_HEALING".into(),
        method: "INTERNAL".into(),
        user_id: Some(PILOT.into()),
        requested_by: Some(PILOT.into()),
        description: Some(description),
        proposal_id: proposal_id.clone(),
        fingerprint,
        forced: false,
        detail: json!({ "loop": kind.name() }),
        moves: new_moves.clone(),
    };
    let rows = |pick: fn(&NewMove) -> &Vec<BrokerId>| {
        Value::Array(
            new_moves
                .iter()
                .map(|m| json!({"topic": m.topic, "partition": m.partition, "replicas": pick(m)}))
                .collect(),
        )
    };
    let audit = NewAuditEvent {
        at_ms: now_ms,
        action: ACTION.into(),
        method: "INTERNAL".into(),
        user_id: Some(PILOT.into()),
        requested_by: Some(PILOT.into()),
        status: 200,
        target: Some(format!("self-healing {}", kind.name())),
        summary: json!({
            "source": "selfheal",
            "loop": kind.name(),
            "moves": moves.len(),
            "estimatedBytes": bytes,
            "proposalId": proposal_id,
        }),
        before: Some(rows(|m| &m.source)),
        after: Some(rows(|m| &m.target)),
        ..NewAuditEvent::default()
    };
    (op, audit)
}

/// What the healer remembers between passes (reported, lost on restart like any counter).
#[derive(Debug, Default)]
pub struct Memory {
    pub passes: u64,
    /// Loop passes skipped, per reason.
    pub skipped: BTreeMap<&'static str, u64>,
    /// Per loop: the last dry run's moves and when.
    pub dry_runs: BTreeMap<Loop, (i64, Vec<Move>)>,
}

impl Memory {
    /// Counts one pass and every loop's skip.
    pub fn count(&mut self, decisions: &[LoopDecision], now_ms: i64) {
        self.passes += 1;
        for d in decisions {
            if let Some(r) = d.outcome.skip_reason() {
                *self.skipped.entry(r.as_str()).or_default() += 1;
            }
            if let Outcome::Skipped {
                reason: Skip::DryRun,
                would_move,
                ..
            } = &d.outcome
            {
                self.dry_runs.insert(d.kind, (now_ms, would_move.clone()));
            }
        }
    }
}

fn moves_json(moves: &[Move]) -> Value {
    json!(moves.iter().take(LISTED_MOVES).collect::<Vec<_>>())
}

/// One pass: gather, decide, queue at most one operation, report.
pub fn pass(
    store: &Store,
    config: &Config,
    memory: &mut Memory,
    now_ms: i64,
) -> Result<Value, StoreError> {
    let (state, facts) = gather(store, config, now_ms)?;
    let mut decisions = decide(&state, now_ms);
    let mut queued: Option<(Loop, String)> = None;
    for d in decisions.iter_mut() {
        let Outcome::Apply { moves } = &d.outcome else {
            continue;
        };
        let (op, audit) = operation(d.kind, moves, "healing", &facts, now_ms);
        let ttl = millis(config.timing.slot_lease_ttl);
        let prediction = ballast_runtime::realized::predict_from_store(store, &op.moves)?;
        match store.queue_operation_predicted(
            &op,
            prediction.as_ref(),
            Some(&audit),
            now_ms,
            ttl,
        )? {
            Queued::Started { id, .. } => {
                tracing::info!(operation = %id, healing_loop = d.kind.name(), moves = moves.len(), "self-healing queued an operation");
                queued = Some((d.kind, id));
                d.cooldown_until_ms = Some(now_ms.saturating_add(state.cooldown_ms));
            }
            // Someone else took the slot between the read and the write: nothing was written.
            Queued::Busy(b) => {
                d.outcome = Outcome::Skipped {
                    reason: Skip::ActiveReassignments,
                    why: b.message(),
                    would_move: Vec::new(),
                    then: None,
                };
            }
        }
    }
    memory.count(&decisions, now_ms);
    let loops: Vec<Value> = decisions
        .iter()
        .map(|d| {
            let (decision, reason, why, would) = match &d.outcome {
                Outcome::Disabled => ("disabled", None, None, None),
                Outcome::Apply { moves } => ("applied", None, None, Some(moves.as_slice())),
                Outcome::Skipped {
                    reason,
                    why,
                    would_move,
                    ..
                } => (
                    "skipped",
                    Some(reason.as_str()),
                    Some(why.clone()),
                    (*reason == Skip::DryRun).then_some(would_move.as_slice()),
                ),
            };
            let then = match &d.outcome {
                Outcome::Skipped { then, .. } => then.map(Skip::as_str),
                _ => None,
            };
            let last_op = match &queued {
                Some((l, id)) if *l == d.kind => Some((id.clone(), now_ms)),
                _ => facts.last_operation.get(&d.kind).cloned(),
            };
            let dry = memory.dry_runs.get(&d.kind);
            json!({
                "loop": d.kind.name(),
                "enabled": !matches!(d.outcome, Outcome::Disabled),
                "lastPassAtMs": now_ms,
                "decision": decision,
                "reason": reason,
                "why": why,
                "then": then,
                "moves": would.map(moves_json),
                "moveCount": would.map(<[Move]>::len),
                "lastDryRun": dry.map(|(at, moves)| json!({
                    "atMs": at,
                    "wouldMove": moves_json(moves),
                    "wouldMoveCount": moves.len(),
                })),
                "cooldownUntilMs": d.cooldown_until_ms,
                "lastOperationId": last_op.as_ref().map(|(id, _)| id.clone()),
                "lastAppliedAtMs": last_op.map(|(_, at)| at),
            })
        })
        .collect();
    // The first reason a loop skipped, highest priority first (the single-gate summary).
    let skipped = decisions
        .iter()
        .find_map(|d| d.outcome.skip_reason())
        .map(Skip::as_str);
    Ok(json!({
        "dryRun": state.dry_run,
        "license": facts.license,
        "skipped": skipped,
        "lastPassAtMs": now_ms,
        "passes": memory.passes,
        "skippedTotal": memory.skipped,
        "queued": queued.map(|(l, id)| json!({"loop": l.name(), "operationId": id})),
        "loops": loops,
    }))
}

pub async fn run(ctx: WorkerContext) -> Result<(), WorkerError> {
    let interval = ctx.config.timing.heartbeat_interval;
    let memory = Arc::new(Mutex::new(Memory::default()));
    ctx.tick_loop(interval, || {
        let ctx = ctx.clone();
        let memory = memory.clone();
        async move {
            let now = ctx.now_ms();
            let config = ctx.config.clone();
            ctx.blocking(move |store| {
                let mut memory = memory.lock().unwrap_or_else(|e| e.into_inner());
                pass(store, &config, &mut memory, now)
            })
            .await
        }
    })
    .await;
    Ok(())
}
