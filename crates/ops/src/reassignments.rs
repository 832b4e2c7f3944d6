//! Partition-moving requests and their tracking: proposal apply, single-partition and bulk
//! reassignment, the reassignment list, one record, cancel, and the throttle tuning endpoint.
//! Shapes: `docs/api/reassignments.md`.
//!
//! A live request validates, runs the cluster-health pre-flight and queues an operation for the
//! executor (`Store::queue_operation`: the slot, the operation, its moves and the audit event in
//! one transaction). The web process never sends a reassignment itself.

use ballast_moves::PlanMove;
use ballast_runtime::millis;
use std::collections::{BTreeMap, BTreeSet};

use ballast_model::BrokerId;
use ballast_moves::{preflight, waves, THROTTLE_RATE_KEY};
use ballast_runtime::format_rfc3339_ms;
use ballast_schema::{
    CancelRequest, MoveRecord, MoveState, NewAuditEvent, NewMove, NewOperation, OperationRecord,
    OperationState, ProposalRecord, Queued,
};
use serde::Deserialize;
use serde_json::{json, Value};

use crate::actor::Actor;
use crate::context::Context as Ops;
use crate::error::{Kind, OpError};
use crate::pipeline::{Done, NotDone, Resource};
use crate::view as observed_view;

pub const DEFAULT_LIMIT: u64 = 50;
pub const MAX_LIMIT: u64 = 500;

/// A topic named by the caller, by Kafka's own rule: refused before anything else (the cluster,
/// the slot, a rolling restart) is looked at.
pub fn check_topic(topic: &str) -> Result<(), OpError> {
    crate::names::topic(topic).map_err(|why| OpError::bad_input("invalid request", why))
}

pub fn conflict(error: impl Into<String>, details: impl Into<String>) -> OpError {
    OpError::conflict(error, details)
}

#[derive(Debug, Default, Deserialize, utoipa::IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct ForceQuery {
    /// Override the soft pre-flight reasons (audited); hard reasons are never overridden.
    pub force: Option<bool>,
}

/// Runs the live pre-flight (shared with the maintenance drain): hard reasons are a 409 whatever `force` says; soft ones join
/// `soft` (the caller decides with `force`).
pub async fn preflight_live(
    state: &Ops,
    soft: &mut Vec<String>,
) -> Result<preflight::Assessment, OpError> {
    let client = state.kafka.client().await?;
    let view = observed_view::current(state).await?;
    let mut facts = preflight::gather(
        &client,
        view.as_ref().map(|v| &v.raw),
        &BTreeSet::new(),
        None,
    )
    .await
    .map_err(|e| {
        OpError::unavailable(
            "cluster health could not be read for the pre-flight",
            ballast_runtime::error_chain(&e),
        )
    })?;
    facts.rolling_restart = state.db(|s| s.active_roll()).await?.map(|r| r.id);
    let assessment = preflight::assess(&facts);
    if !assessment.hard.is_empty() {
        return Err(conflict("pre-flight blocked", assessment.message(true)));
    }
    soft.extend(assessment.soft.iter().cloned());
    Ok(assessment)
}

/// What the pre-flight let through for a request that may carry `force=true`.
#[derive(Debug, Clone, Default)]
pub struct Gate {
    /// Soft reasons were overridden with `force=true` (the override is audited).
    pub forced: bool,
    /// The reasons overridden (empty unless forced).
    pub overridden: Vec<String>,
}

impl Gate {
    /// The audit event's `details` of a forced override.
    pub fn details(&self) -> Option<String> {
        self.forced
            .then(|| format!("forced override: {}", self.overridden.join("; ")))
    }
}

/// Runs the live pre-flight after the `soft` reasons the caller found itself: a hard reason is a
/// 409 whatever `force` says; soft reasons are a 409 (`error` = `what`) unless `force` is set,
/// and then they are returned as overridden.
pub async fn gate(
    state: &Ops,
    mut soft: Vec<String>,
    force: bool,
    what: &str,
) -> Result<Gate, OpError> {
    preflight_live(state, &mut soft).await?;
    if soft.is_empty() {
        return Ok(Gate::default());
    }
    if !force {
        return Err(conflict(
            what,
            format!(
                "{} (re-submit with force=true to override)",
                soft.join("; ")
            ),
        ));
    }
    Ok(Gate {
        forced: true,
        overridden: soft,
    })
}

/// The audit event of a partition-moving request: `before`/`after` are the moves' replica lists
/// (`[{topic, partition, replicas}]`, the shape audit revert reads), a forced override is
/// recorded.
pub fn move_event(
    actor: &Actor,
    now_ms: i64,
    action: &str,
    target: String,
    summary: Value,
    moves: &[NewMove],
    gate: &Gate,
) -> NewAuditEvent {
    let rows = |pick: fn(&NewMove) -> &Vec<BrokerId>| {
        Value::Array(
            moves
                .iter()
                .map(|m| json!({"topic": m.topic, "partition": m.partition, "replicas": pick(m)}))
                .collect(),
        )
    };
    NewAuditEvent {
        before: Some(rows(|m| &m.source)),
        after: Some(rows(|m| &m.target)),
        forced: gate.forced,
        details: gate.details(),
        summary,
        ..actor.event(now_ms, action, target)
    }
}

/// Queues an operation or answers 409 while another mutation holds the slot.
pub async fn queue(state: &Ops, op: NewOperation, audit: NewAuditEvent) -> Result<String, OpError> {
    queue_audited(state, op, audit).await.map(|(id, _)| id)
}

/// [`queue`], also returning the id of the audit event written with the operation.
pub async fn queue_audited(
    state: &Ops,
    op: NewOperation,
    audit: NewAuditEvent,
) -> Result<(String, Option<i64>), OpError> {
    let now = state.clock.now_ms();
    let ttl = millis(state.config.timing.slot_lease_ttl);
    // The loads the moves leave, predicted from the latest reading and kept with the operation
    // (predicted vs realized: `ballast_runtime::realized`).
    let queued = state
        .db(move |s| {
            let prediction = ballast_runtime::realized::predict_from_store(s, &op.moves)?;
            s.queue_operation_predicted(&op, prediction.as_ref(), Some(&audit), now, ttl)
        })
        .await?;
    match queued {
        Queued::Started {
            id, audit_event_id, ..
        } => Ok((id, audit_event_id)),
        Queued::Busy(b) => Err(busy_conflict(&b)),
    }
}

/// The 409 of a busy slot: a rolling restart or another mutation.
pub fn busy_conflict(b: &ballast_schema::Busy) -> OpError {
    let error = if b.rolling_restart_id.is_some() {
        "a rolling restart is in progress"
    } else {
        "another mutating reassignment is running"
    };
    conflict(error, b.message())
}

pub fn new_move(
    topic: &str,
    partition: i32,
    source: &[BrokerId],
    target: &[BrokerId],
    bytes: u64,
) -> NewMove {
    let adding = target.iter().filter(|b| !source.contains(b)).count() as u64;
    NewMove {
        topic: topic.to_string(),
        partition,
        source: source.to_vec(),
        target: target.to_vec(),
        steps: waves::steps(source, target).len().max(1) as u32,
        bytes_total: bytes.saturating_mul(adding),
        phase: 0,
    }
}

// ------------------------------------------------------------------------- proposal apply

/// `POST /api/v1/proposals/current/apply`: the current proposal, applied as [`apply_proposal`]
/// applies one by id.
pub async fn apply_current_proposal(
    state: &Ops,
    actor: &Actor,
    q: ForceQuery,
) -> Result<Value, OpError> {
    let p = state.db(|s| s.current_proposal()).await?.ok_or_else(|| {
        OpError::not_found(
            "no current proposal",
            "the observer has not evaluated one yet",
        )
    })?;
    apply(state, actor, p, q.force.unwrap_or(false)).await
}

/// The operation `apply_proposal`: queues stored proposal `id`'s moves (strategy `PROPOSAL`)
/// after the proposal rules and the live pre-flight; audited `reassignments.apply`.
pub async fn apply_proposal(
    state: &Ops,
    actor: &Actor,
    id: String,
    q: ForceQuery,
) -> Result<Value, OpError> {
    let wanted = id.clone();
    let p = state
        .db(move |s| s.proposal(&wanted))
        .await?
        .ok_or_else(|| OpError::not_found("proposal not found", format!("no proposal {id}")))?;
    apply(state, actor, p, q.force.unwrap_or(false)).await
}

/// The spec's rules for applying a balancing proposal.
async fn apply(
    state: &Ops,
    actor: &Actor,
    p: ProposalRecord,
    force: bool,
) -> Result<Value, OpError> {
    // Never overridable: a proposal that is no longer current (a changed plan is a new proposal).
    if !p.current {
        return Err(conflict(
            "proposal is not current",
            format!("{} was replaced by a newer plan; review the current proposal (force=true does not override this)", p.id),
        ));
    }
    let plan_moves: Vec<PlanMove> =
        serde_json::from_value(p.plan.get("moves").cloned().unwrap_or(Value::Null))
            .unwrap_or_default();
    if plan_moves.is_empty() {
        return Err(conflict(
            "nothing to apply",
            format!("proposal {} has no moves", p.id),
        ));
    }
    let now = state.clock.now_ms();
    let mut soft: Vec<String> = Vec::new();
    let freshness = millis(state.config.timing.proposal_freshness);
    if now - p.checked_at_ms > freshness {
        soft.push(format!(
            "checkedAt {} is older than {}",
            format_rfc3339_ms(p.checked_at_ms),
            humantime_text(state.config.timing.proposal_freshness)
        ));
    }
    if !p.application_allowed {
        let next = p
            .decision
            .get("nextAction")
            .and_then(Value::as_str)
            .unwrap_or("");
        soft.push(format!("decision.applicationAllowed is false ({next})"));
    }
    if !state.config.throttle.managed {
        soft.push("throttles_externally_managed: BALLAST_THROTTLE_MANAGED=false, ballast does not set replication throttles".into());
    }
    // The topology planned on, against the latest observed one.
    let view = observed_view::current(state).await?;
    let maintenance: BTreeSet<BrokerId> = state
        .db(|s| s.maintenance())
        .await?
        .into_iter()
        .map(|m| m.broker_id)
        .collect();
    if let Some(v) = &view {
        let snapshot =
            ballast_runtime::topology::snapshot_with_maintenance(&v.raw, &[], &maintenance);
        let current = ballast_runtime::topology::fingerprint(&snapshot);
        if current != p.fingerprint {
            soft.push(format!(
                "topology fingerprint changed since planning ({} → {current})",
                p.fingerprint
            ));
        }
    }
    let gate = gate(state, soft, force, "proposal cannot be applied now").await?;
    // Unhealthy brokers dropped from the targets and substituted back where possible.
    let alive: BTreeSet<BrokerId> = view.as_ref().map(|v| v.alive.clone()).unwrap_or_default();
    let counts: BTreeMap<BrokerId, usize> = view
        .as_ref()
        .map(|v| {
            let mut c: BTreeMap<BrokerId, usize> = alive.iter().map(|b| (*b, 0)).collect();
            for p in &v.raw.partitions {
                for r in &p.replicas {
                    *c.entry(*r).or_default() += 1;
                }
            }
            c
        })
        .unwrap_or_default();
    let mut moves = Vec::new();
    let mut skipped = Vec::new();
    for m in &plan_moves {
        match healthy_target(&m.replicas_after, &alive, &maintenance, &counts) {
            Some(target) => moves.push(NewMove {
                // The plan's bytes are already the move's total copy.
                bytes_total: m.bytes,
                ..new_move(&m.topic, m.partition, &m.replicas_before, &target, 0)
            }),
            None => skipped.push(format!("{}-{}", m.topic, m.partition)),
        }
    }
    if moves.is_empty() {
        return Err(conflict(
            "nothing to apply",
            "no safe replica set could be formed for any move",
        ));
    }
    let user = actor.user.clone();
    let count = moves.len();
    let op = NewOperation {
        kind: "proposal".into(),
        strategy: "PROPOSAL".into(),
        method: actor.method.clone(),
        user_id: Some(user.clone()),
        requested_by: Some(actor.requester()),
        description: Some(format!("apply proposal {}", p.id)),
        proposal_id: Some(p.id.clone()),
        fingerprint: Some(p.fingerprint.clone()),
        forced: gate.forced,
        detail: json!({ "skipped": skipped, "overridden": gate.overridden.clone() }),
        moves: moves.clone(),
    };
    let audit = move_event(
        actor,
        now,
        "reassignments.apply",
        format!("proposal {}", p.id),
        json!({
            "source": "proposal",
            "proposalId": p.id,
            "moves": count,
            "estimatedBytes": p.estimated_bytes,
            "skipped": skipped,
        }),
        &moves,
        &gate,
    );
    let id = queue(state, op, audit).await?;
    Ok(json!({
        "started": true,
        "operationId": id,
        "proposalId": p.id,
        "moves": count,
        "skipped": skipped,
        "forced": gate.forced,
        "overridden": gate.overridden,
    }))
}

fn humantime_text(d: std::time::Duration) -> String {
    format!("{} s", d.as_secs())
}

/// `target` with brokers that are down or in maintenance replaced by the least-loaded healthy
/// broker not already in the set; None when no safe set of the same size can be formed.
fn healthy_target(
    target: &[BrokerId],
    alive: &BTreeSet<BrokerId>,
    maintenance: &BTreeSet<BrokerId>,
    counts: &BTreeMap<BrokerId, usize>,
) -> Option<Vec<BrokerId>> {
    let healthy = |b: &BrokerId| alive.contains(b) && !maintenance.contains(b);
    if alive.is_empty() || target.iter().all(healthy) {
        return Some(target.to_vec());
    }
    let mut out: Vec<BrokerId> = Vec::with_capacity(target.len());
    for b in target {
        if healthy(b) {
            out.push(*b);
            continue;
        }
        let sub = counts
            .iter()
            .filter(|(c, _)| healthy(c) && !out.contains(c) && !target.contains(c))
            .min_by_key(|(c, n)| (**n, **c))
            .map(|(c, _)| *c)?;
        out.push(sub);
    }
    Some(out)
}

// ------------------------------------------------------------------------- explicit replicas

#[derive(Debug, Clone, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct SingleBody {
    /// An explicit replica set (broker ids, the first is the preferred leader); default: chosen by ballast.
    #[schema(schema_with = crate::schema::distinct_broker_ids_or_null)]
    pub replicas: Option<Vec<i64>>,
    /// Plan from the cached view and start nothing.
    pub preview: Option<bool>,
}

/// One entry of a bulk request. Entries are checked one by one and each gets its own result
/// (an unknown partition, an empty or repeated replica set fail only that entry), so the schema
/// states only the types: the rules are in each entry's answer.
#[derive(Debug, Clone, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct BulkEntry {
    pub partition: i64,
    pub replicas: Option<Vec<i64>>,
    pub preview: Option<bool>,
}

#[derive(Debug, Clone, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct BulkBody {
    pub description: Option<String>,
    /// At least one entry; a partition listed twice rejects every entry for it.
    #[schema(min_items = 1)]
    pub partitions: Vec<BulkEntry>,
}

/// What is known of a partition's placement.
#[derive(Debug, Clone)]
struct Placement {
    replicas: Vec<BrokerId>,
    size: u64,
}

/// The facts a replica set is checked against.
struct Context {
    topic: String,
    partitions: BTreeMap<i32, Placement>,
    min_insync: i32,
    brokers: BTreeSet<BrokerId>,
    maintenance: BTreeSet<BrokerId>,
}

/// Why an explicit replica set is refused: (status, message). 400 for a malformed set, 409 for
/// one the cluster's state refuses.
fn check_replicas(
    ctx: &Context,
    partition: i32,
    replicas: &[i64],
) -> Result<Vec<BrokerId>, (Kind, String)> {
    let bad = |m: String| Err((Kind::BadInput, m));
    if replicas.is_empty() {
        return bad("replicas must not be empty".into());
    }
    if let Some(n) = replicas
        .iter()
        .find(|b| **b < 0 || **b > i64::from(i32::MAX))
    {
        return bad(format!("replicas must be broker ids (0 or more), got {n}"));
    }
    let ids: Vec<BrokerId> = replicas.iter().map(|b| *b as BrokerId).collect();
    let unique: BTreeSet<BrokerId> = ids.iter().copied().collect();
    if unique.len() != ids.len() {
        return bad(format!("replicas hold a broker more than once: {ids:?}"));
    }
    let Some(place) = ctx.partitions.get(&partition) else {
        return Err((
            Kind::NotFound,
            format!("topic {} has no partition {partition}", ctx.topic),
        ));
    };
    let floor = (place.replicas.len() as i32).max(ctx.min_insync + 1) as usize;
    if ids.len() < floor {
        return Err((
            Kind::Conflict,
            format!(
                "{} replicas is below the floor of {floor}: max(original replication factor {}, min.insync.replicas {} + 1)",
                ids.len(),
                place.replicas.len(),
                ctx.min_insync
            ),
        ));
    }
    if let Some(b) = ids.iter().find(|b| !ctx.brokers.contains(b)) {
        return Err((
            Kind::Conflict,
            format!("broker {b} is not available in the cluster"),
        ));
    }
    if let Some(b) = ids
        .iter()
        .find(|b| ctx.maintenance.contains(b) && !place.replicas.contains(b))
    {
        return Err((
            Kind::Conflict,
            format!("broker {b} is in maintenance: nothing is moved onto it"),
        ));
    }
    Ok(ids)
}

/// The placement of `topic` from the observed view (previews, no broker contacted).
async fn cached_context(state: &Ops, topic: &str) -> Result<Context, OpError> {
    let view = observed_view::require(state).await?;
    let age = state.clock.now_ms() - view.sampled_at_ms();
    if age > millis(state.config.timing.topic_preview_max_age) {
        return Err(OpError::unavailable(
            "cached metadata is too old for a preview",
            format!("the latest sample is {} s old", age / 1000),
        ));
    }
    let Some(t) = view.raw.topics.iter().find(|t| t.name == topic) else {
        return Err(OpError::not_found(
            "topic not found",
            format!("no topic {topic}"),
        ));
    };
    let partitions = view
        .raw
        .partitions
        .iter()
        .filter(|p| p.topic == topic)
        .map(|p| {
            (
                p.partition,
                Placement {
                    replicas: p.replicas.clone(),
                    size: p.size_bytes.unwrap_or(0).max(0) as u64,
                },
            )
        })
        .collect();
    let maintenance = maintenance_set(state).await?;
    Ok(Context {
        topic: topic.to_string(),
        partitions,
        min_insync: t.min_insync.unwrap_or(1),
        brokers: view.alive.clone(),
        maintenance,
    })
}

async fn maintenance_set(state: &Ops) -> Result<BTreeSet<BrokerId>, OpError> {
    crate::simulation::maintenance(state).await
}

/// The placement of `topic` read live from the cluster (a refresh of its metadata). Err(503)
/// when it cannot be read.
/// Placement read live for a request that will move replicas. While a rolling restart runs the
/// request is refused with the roll's 409 first: a broker it has stopped would otherwise make
/// the replica set look invalid, and nothing may move until the roll ends anyway.
async fn live_context(state: &Ops, topic: &str) -> Result<Context, OpError> {
    if let Some(roll) = state.db(|s| s.active_roll()).await? {
        return Err(busy_conflict(&ballast_schema::Busy {
            holder: None,
            operation_id: None,
            rolling_restart_id: Some(roll.id),
        }));
    }
    let unreadable = |e: &dyn std::error::Error| {
        OpError::unavailable(
            "partition placement could not be read; nothing was changed",
            ballast_runtime::error_chain(e),
        )
    };
    let client = state.kafka.client().await?;
    let md = client
        .metadata(Some(&[topic.to_string()]))
        .await
        .map_err(|e| unreadable(&e))?;
    let Some(t) = md.topic(topic).filter(|t| t.error.is_none()) else {
        return Err(OpError::not_found(
            "topic not found",
            format!("no topic {topic}"),
        ));
    };
    let view = observed_view::current(state).await?;
    let sizes: BTreeMap<i32, u64> = view
        .as_ref()
        .map(|v| {
            v.raw
                .partitions
                .iter()
                .filter(|p| p.topic == topic)
                .map(|p| (p.partition, p.size_bytes.unwrap_or(0).max(0) as u64))
                .collect()
        })
        .unwrap_or_default();
    let min_insync = match view
        .as_ref()
        .and_then(|v| v.raw.topics.iter().find(|x| x.name == topic))
        .and_then(|x| x.min_insync)
    {
        Some(m) => m,
        None => client
            .describe_config(&ballast_kafka::ConfigResource::Topic(topic.to_string()))
            .await
            .ok()
            .and_then(|entries| {
                entries
                    .into_iter()
                    .find(|e| e.name == "min.insync.replicas")
                    .and_then(|e| e.value)
                    .and_then(|v| v.parse().ok())
            })
            .unwrap_or(1),
    };
    let partitions = t
        .partitions
        .iter()
        .map(|p| {
            (
                p.partition,
                Placement {
                    replicas: p.replicas.clone(),
                    size: sizes.get(&p.partition).copied().unwrap_or(0),
                },
            )
        })
        .collect();
    Ok(Context {
        topic: topic.to_string(),
        partitions,
        min_insync,
        brokers: md.brokers.iter().map(|b| b.id).collect(),
        maintenance: maintenance_set(state).await?,
    })
}

/// Without explicit replicas: the partition's replicas with any broker that is down or in
/// maintenance replaced, then its busiest broker swapped for the least busy one when they
/// differ by more than one replica. Keeps the replication factor.
fn choose_replicas(
    ctx: &Context,
    partition: i32,
    counts: &BTreeMap<BrokerId, usize>,
) -> Option<Vec<BrokerId>> {
    let place = ctx.partitions.get(&partition)?;
    let healthy = |b: &BrokerId| ctx.brokers.contains(b) && !ctx.maintenance.contains(b);
    let eligible: BTreeMap<BrokerId, usize> = ctx
        .brokers
        .iter()
        .filter(|b| healthy(b))
        .map(|b| (*b, counts.get(b).copied().unwrap_or(0)))
        .collect();
    let mut out = healthy_target(&place.replicas, &ctx.brokers, &ctx.maintenance, &eligible)?;
    let least = eligible
        .iter()
        .filter(|(b, _)| !out.contains(b))
        .min_by_key(|(b, n)| (**n, **b))
        .map(|(b, n)| (*b, *n));
    let busiest = out
        .iter()
        .map(|b| (*b, eligible.get(b).copied().unwrap_or(0)))
        .max_by_key(|(b, n)| (*n, std::cmp::Reverse(*b)));
    if let (Some((l, ln)), Some((h, hn))) = (least, busiest) {
        if hn > ln + 1 {
            for r in out.iter_mut() {
                if *r == h {
                    *r = l;
                }
            }
        }
    }
    Some(out)
}

fn replica_counts(ctx_view: Option<&observed_view::View>) -> BTreeMap<BrokerId, usize> {
    let mut c = BTreeMap::new();
    if let Some(v) = ctx_view {
        for p in &v.raw.partitions {
            for r in &p.replicas {
                *c.entry(*r).or_default() += 1;
            }
        }
    }
    c
}

fn changes(before: &[BrokerId], after: &[BrokerId]) -> Value {
    json!({
        "currentReplicas": before,
        "replicas": after,
        "adding": after.iter().filter(|b| !before.contains(b)).collect::<Vec<_>>(),
        "removing": before.iter().filter(|b| !after.contains(b)).collect::<Vec<_>>(),
        "leaderChange": before.first() != after.first(),
    })
}

fn partition_id(p: i64) -> Result<i32, String> {
    i32::try_from(p)
        .ok()
        .filter(|p| *p >= 0)
        .ok_or_else(|| format!("partition must be 0 or more, got {p}"))
}

/// The operation `redistribute_partition`: plans one partition's new replicas (explicit or
/// chosen) and, unless a preview or nothing moves, queues them (strategy `PARTITION`); audited
/// `reassignments.apply`.
pub async fn redistribute_partition(
    state: &Ops,
    actor: &Actor,
    topic: String,
    partition: i32,
    q: ForceQuery,
    body: SingleBody,
) -> Result<Value, OpError> {
    check_topic(&topic)?;
    if partition < 0 {
        return Err(OpError::bad_input(
            "invalid partition",
            format!("partition must be 0 or more, got {partition}"),
        ));
    }
    let preview = body.preview.unwrap_or(false);
    let ctx = if preview {
        cached_context(state, &topic).await?
    } else {
        live_context(state, &topic).await?
    };
    let Some(place) = ctx.partitions.get(&partition).cloned() else {
        return Err(OpError::not_found(
            "partition not found",
            format!("topic {topic} has no partition {partition}"),
        ));
    };
    let target = match &body.replicas {
        Some(r) => check_replicas(&ctx, partition, r)
            .map_err(|(status, m)| OpError::new(status, "invalid replica set", m))?,
        None => {
            let view = observed_view::current(state).await?;
            choose_replicas(&ctx, partition, &replica_counts(view.as_deref()))
                .ok_or_else(|| conflict("no safe replica set", "not enough healthy brokers"))?
        }
    };
    let mut result = changes(&place.replicas, &target);
    result["topic"] = json!(topic);
    result["partition"] = json!(partition);
    result["preview"] = json!(preview);
    if preview || target == place.replicas {
        result["started"] = json!(false);
        if target == place.replicas {
            result["message"] = json!("the partition already has these replicas: nothing to move");
        }
        return Ok(result);
    }
    let gate = gate(
        state,
        Vec::new(),
        q.force.unwrap_or(false),
        "reassignment cannot start now",
    )
    .await?;
    let user = actor.user.clone();
    let mv = new_move(&topic, partition, &place.replicas, &target, place.size);
    let op = NewOperation {
        kind: "redistribute".into(),
        strategy: "PARTITION".into(),
        method: actor.method.clone(),
        user_id: Some(user.clone()),
        requested_by: Some(actor.requester()),
        description: Some(format!("redistribute {topic}-{partition}")),
        forced: gate.forced,
        detail: json!({ "overridden": gate.overridden.clone() }),
        moves: vec![mv],
        ..NewOperation::default()
    };
    let audit = partition_audit(
        actor,
        &topic,
        partition,
        &place.replicas,
        &target,
        &gate,
        state.clock.now_ms(),
    );
    let id = queue(state, op, audit).await?;
    result["started"] = json!(true);
    result["operationId"] = json!(id);
    Ok(result)
}

fn partition_audit(
    actor: &Actor,
    topic: &str,
    partition: i32,
    before: &[BrokerId],
    after: &[BrokerId],
    gate: &Gate,
    now: i64,
) -> NewAuditEvent {
    NewAuditEvent {
        at_ms: now,
        action: "reassignments.apply".into(),
        method: actor.method.clone(),
        user_id: Some(actor.user.clone()),
        requested_by: Some(actor.requester()),
        status: 200,
        target: Some(format!("{topic}-{partition}")),
        summary: json!({ "topic": topic, "partition": partition, "replicas": after }),
        before: Some(json!({ "topic": topic, "partition": partition, "replicas": before })),
        after: Some(json!({ "topic": topic, "partition": partition, "replicas": after })),
        forced: gate.forced,
        details: gate.details(),
        ..NewAuditEvent::default()
    }
}

/// The operation `bulk_reassign_partitions`: checks each entry on its own and queues the live
/// ones as one operation (strategy `BULK_MANUAL`); audited `reassignments.apply`.
pub async fn bulk_reassign_partitions(
    state: &Ops,
    actor: &Actor,
    topic: String,
    q: ForceQuery,
    body: BulkBody,
) -> Result<Value, OpError> {
    check_topic(&topic)?;
    if body.partitions.is_empty() {
        return Err(OpError::bad_input(
            "empty partitions list",
            "a bulk reassignment needs at least one entry in partitions",
        ));
    }
    let any_live = body.partitions.iter().any(|e| !e.preview.unwrap_or(false));
    // Previews plan from cached metadata; live entries from a refresh of the topic. A request
    // of previews only contacts no broker.
    let cached = cached_context(state, &topic).await;
    let live = if any_live {
        Some(live_context(state, &topic).await)
    } else {
        None
    };
    if let Some(Err(e)) = &live {
        if e.kind == Kind::NotFound {
            return Err(e.clone());
        }
    }
    if !any_live {
        // Only previews: the cached view must serve them.
        cached.as_ref().map_err(Clone::clone)?;
    }
    let mut seen: BTreeMap<i64, usize> = BTreeMap::new();
    for e in &body.partitions {
        *seen.entry(e.partition).or_default() += 1;
    }
    let view = observed_view::current(state).await?;
    let counts = replica_counts(view.as_deref());
    let mut results: Vec<Value> = Vec::with_capacity(body.partitions.len());
    let mut to_move: Vec<(i32, Vec<BrokerId>, Vec<BrokerId>, u64)> = Vec::new();
    for e in &body.partitions {
        let preview = e.preview.unwrap_or(false);
        let mut r = json!({ "partition": e.partition, "preview": preview });
        let outcome: Result<(Vec<BrokerId>, Vec<BrokerId>, u64), String> = (|| {
            let partition = partition_id(e.partition)?;
            if seen.get(&e.partition).copied().unwrap_or(0) > 1 {
                return Err(format!("partition {partition} is listed more than once; every entry for it is rejected"));
            }
            let ctx = if preview {
                cached
                    .as_ref()
                    .map_err(|err| format!("{}: {}", err.error, err.details))?
            } else {
                match &live {
                    Some(Ok(c)) => c,
                    Some(Err(err)) => return Err(format!("{}: {}", err.error, err.details)),
                    None => return Err("placement not read".into()),
                }
            };
            let place = ctx
                .partitions
                .get(&partition)
                .ok_or_else(|| format!("topic {topic} has no partition {partition}"))?;
            let target = match &e.replicas {
                Some(list) => check_replicas(ctx, partition, list).map_err(|(_, m)| m)?,
                None => choose_replicas(ctx, partition, &counts)
                    .ok_or_else(|| "no safe replica set: not enough healthy brokers".to_string())?,
            };
            Ok((place.replicas.clone(), target, place.size))
        })();
        match outcome {
            Ok((before, after, size)) => {
                if let (Value::Object(m), Value::Object(c)) = (&mut r, changes(&before, &after)) {
                    m.extend(c);
                }
                r["success"] = json!(true);
                if !preview && before != after {
                    if let Ok(p) = partition_id(e.partition) {
                        to_move.push((p, before, after, size));
                    }
                }
            }
            Err(msg) => {
                r["success"] = json!(false);
                r["error"] = json!(msg);
            }
        }
        results.push(r);
    }
    if !any_live {
        return Ok(json!({ "results": results }));
    }
    if to_move.is_empty() {
        return Ok(json!({
            "results": results,
            "started": false,
            "message": "no live entry can be executed: nothing was started",
        }));
    }
    let gate = gate(
        state,
        Vec::new(),
        q.force.unwrap_or(false),
        "bulk reassignment cannot start now",
    )
    .await?;
    let user = actor.user.clone();
    let now = state.clock.now_ms();
    let moves: Vec<NewMove> = to_move
        .iter()
        .map(|(p, before, after, size)| new_move(&topic, *p, before, after, *size))
        .collect();
    let count = moves.len();
    let op = NewOperation {
        kind: "bulk".into(),
        strategy: "BULK_MANUAL".into(),
        method: actor.method.clone(),
        user_id: Some(user.clone()),
        requested_by: Some(actor.requester()),
        description: body.description.clone(),
        forced: gate.forced,
        detail: json!({ "topic": topic, "overridden": gate.overridden.clone() }),
        moves: moves.clone(),
        ..NewOperation::default()
    };
    let audit = move_event(
        actor,
        now,
        "reassignments.apply",
        topic.clone(),
        json!({
            "strategy": "BULK_MANUAL",
            "topic": topic,
            "description": body.description,
            "entries": results,
        }),
        &moves,
        &gate,
    );
    let id = queue(state, op, audit).await?;
    let rejected = results.iter().filter(|r| r["success"] == false).count();
    Ok(json!({
        "results": results,
        "started": true,
        "bulkId": id,
        "message": format!("started {count} partition moves as operation {id}{}", if rejected > 0 { format!("; {rejected} entries rejected") } else { String::new() }),
    }))
}

// ------------------------------------------------------------------------- topic redistribution

#[derive(Debug, Default, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct TopicBody {
    /// Plan from the cached view (at most 60 s old) and start nothing.
    pub preview: Option<bool>,
    /// The brokers to spread over; default every broker that is up and not in maintenance.
    #[schema(schema_with = crate::schema::distinct_broker_ids_or_null)]
    pub brokers: Option<Vec<i64>>,
}

/// Racks of the brokers the observer knows.
pub fn racks(view: Option<&observed_view::View>) -> BTreeMap<BrokerId, Option<String>> {
    view.map(|v| {
        v.raw
            .brokers
            .iter()
            .map(|b| (b.broker_id, b.rack.clone()))
            .collect()
    })
    .unwrap_or_default()
}

/// The operation `redistribute_topic`: spreads the topic's replicas evenly over the chosen
/// brokers and, unless a preview or nothing moves, queues the moves (strategy `TOPIC`); audited
/// `reassignments.apply`.
pub async fn redistribute_topic(
    state: &Ops,
    actor: &Actor,
    topic: String,
    q: ForceQuery,
    body: TopicBody,
) -> Result<Value, OpError> {
    check_topic(&topic)?;
    let preview = body.preview.unwrap_or(false);
    // Validate the selection before reading anything.
    let selected: Option<BTreeSet<BrokerId>> = match &body.brokers {
        None => None,
        Some(list) => {
            if list.is_empty() {
                return Err(OpError::bad_input(
                    "invalid brokers",
                    "brokers must not be empty when given",
                ));
            }
            if let Some(b) = list.iter().find(|b| **b < 0 || **b > i64::from(i32::MAX)) {
                return Err(OpError::bad_input(
                    "invalid brokers",
                    format!("broker ids are 0 or more, got {b}"),
                ));
            }
            let set: BTreeSet<BrokerId> = list.iter().map(|b| *b as BrokerId).collect();
            if set.len() != list.len() {
                return Err(OpError::bad_input(
                    "invalid brokers",
                    "a broker is listed more than once",
                ));
            }
            Some(set)
        }
    };
    let ctx = if preview {
        cached_context(state, &topic).await?
    } else {
        live_context(state, &topic).await?
    };
    let eligible: BTreeSet<BrokerId> = match selected {
        Some(set) => {
            if let Some(b) = set.iter().find(|b| !ctx.brokers.contains(b)) {
                return Err(conflict(
                    "broker unavailable",
                    format!("broker {b} is not available in the cluster"),
                ));
            }
            if let Some(b) = set.iter().find(|b| ctx.maintenance.contains(b)) {
                return Err(conflict(
                    "broker in maintenance",
                    format!("broker {b} is in maintenance"),
                ));
            }
            set
        }
        None => ctx.brokers.difference(&ctx.maintenance).copied().collect(),
    };
    let max_rf = ctx
        .partitions
        .values()
        .map(|p| p.replicas.len())
        .max()
        .unwrap_or(0);
    if eligible.len() < max_rf {
        return Err(conflict(
            "too few brokers",
            format!(
                "{} brokers cannot hold replication factor {max_rf}",
                eligible.len()
            ),
        ));
    }
    let view = observed_view::current(state).await?;
    let parts: Vec<ballast_moves::placement::Part> = ctx
        .partitions
        .iter()
        .map(|(p, place)| ballast_moves::placement::Part {
            topic: topic.clone(),
            partition: *p,
            replicas: place.replicas.clone(),
            isr: place.replicas.clone(),
            leader: place.replicas.first().copied(),
        })
        .collect();
    let planned =
        ballast_moves::placement::spread_topic(&parts, &eligible, &racks(view.as_deref()));
    let sizes: BTreeMap<i32, u64> = ctx.partitions.iter().map(|(p, pl)| (*p, pl.size)).collect();
    let moves: Vec<NewMove> = planned
        .iter()
        .map(|m| {
            new_move(
                &topic,
                m.partition,
                &m.source,
                &m.target,
                sizes.get(&m.partition).copied().unwrap_or(0),
            )
        })
        .collect();
    let bytes: u64 = moves.iter().map(|m| m.bytes_total).sum();
    let rows: Vec<Value> = planned
        .iter()
        .map(|m| {
            let mut v = changes(&m.source, &m.target);
            v["partition"] = json!(m.partition);
            v
        })
        .collect();
    let mut answer = json!({
        "topic": topic,
        "preview": preview,
        "brokers": eligible,
        "moves": rows,
        "totalMoves": rows.len(),
        "estimatedBytes": bytes,
    });
    if preview {
        return Ok(answer);
    }
    if moves.is_empty() {
        answer["started"] = json!(false);
        answer["message"] = json!("the topic is already spread evenly over these brokers");
        return Ok(answer);
    }
    let gate = gate(
        state,
        Vec::new(),
        q.force.unwrap_or(false),
        "redistribution cannot start now",
    )
    .await?;
    let user = actor.user.clone();
    let op = NewOperation {
        kind: "redistribute".into(),
        strategy: "TOPIC".into(),
        method: actor.method.clone(),
        user_id: Some(user.clone()),
        requested_by: Some(actor.requester()),
        description: Some(format!("redistribute topic {topic}")),
        forced: gate.forced,
        detail: json!({ "topic": topic, "brokers": eligible, "overridden": gate.overridden.clone() }),
        moves: moves.clone(),
        ..NewOperation::default()
    };
    let audit = move_event(
        actor,
        state.clock.now_ms(),
        "reassignments.apply",
        topic.clone(),
        json!({ "strategy": "TOPIC", "topic": topic, "moves": rows.len(), "estimatedBytes": bytes }),
        &moves,
        &gate,
    );
    let id = queue(state, op, audit).await?;
    answer["started"] = json!(true);
    answer["operationId"] = json!(id);
    Ok(answer)
}

// ------------------------------------------------------------------------- tracking

fn state_name(s: MoveState) -> &'static str {
    match s {
        MoveState::Pending => "Pending",
        MoveState::Submitting | MoveState::Active => "Active",
        MoveState::Completed => "Completed",
        MoveState::Failed => "Failed",
        MoveState::Cancelled => "Cancelled",
    }
}

fn op_state_name(s: OperationState) -> &'static str {
    match s {
        OperationState::Pending => "Pending",
        OperationState::Running => "Active",
        OperationState::Completed => "Completed",
        OperationState::Failed => "Failed",
        OperationState::Cancelled => "Cancelled",
    }
}

/// A move's copy rate: the last measured one while it is in flight (none before the first
/// measurement), 0 once it is not (pending, or finished). Never negative, never -0.0.
fn move_rate(in_flight: bool, rate: Option<f64>) -> Option<f64> {
    if in_flight {
        rate.map(|r| r.max(0.0) + 0.0)
    } else {
        Some(0.0)
    }
}

/// An operation's copy rate: the sum of its in-flight moves' rates, 0 when it is finished or
/// none is measured. Summed from +0.0: an empty float sum in Rust is -0.0, which JSON shows.
fn total_rate(finished: bool, rates: impl Iterator<Item = f64>) -> f64 {
    if finished {
        return 0.0;
    }
    rates.fold(0.0, |sum, r| sum + r.max(0.0))
}

/// A move's progress state as answered: a stalled move (in flight, but the executor found a
/// broker it needs down or no progress for `BALLAST_MOVE_STALL_READINGS` readings) is `Stalled`.
fn move_state_name(m: &MoveRecord) -> &'static str {
    if m.is_stalled() {
        "Stalled"
    } else {
        state_name(m.state)
    }
}

fn move_json(m: &MoveRecord) -> Value {
    let remaining = m.bytes_total.saturating_sub(m.bytes_done);
    // A stalled move has no ETA of its own: nothing says when its cause clears.
    let eta = m
        .rate
        .filter(|r| *r > 0.0 && m.state.is_in_flight() && !m.is_stalled())
        .map(|r| (remaining as f64 / r).ceil());
    json!({
        "topic": m.topic,
        "partition": m.partition,
        "state": move_state_name(m),
        "stalledSince": m.stalled_since_ms.filter(|_| m.is_stalled()).map(format_rfc3339_ms),
        "stalledBrokers": m.is_stalled().then_some(&m.stalled_brokers),
        "sourceReplicas": m.source,
        "targetReplicas": m.target,
        "step": m.step,
        "steps": m.steps,
        "submittedReplicas": m.submitted,
        "submittedAt": m.submitted_at_ms.map(format_rfc3339_ms),
        "submissions": m.submissions,
        "bytesTotal": m.bytes_total,
        "bytesDone": m.bytes_done,
        "rateBytesPerSecond": move_rate(m.state.is_in_flight(), m.rate),
        "etaSeconds": eta,
        "reason": m.reason,
        "timedOut": m.timed_out,
        "cancelConfirmed": m.cancel_confirmed,
        "startedAt": m.started_at_ms.map(format_rfc3339_ms),
        "finishedAt": m.finished_at_ms.map(format_rfc3339_ms),
    })
}

/// An operation runs this long before its ETA is taken from its average rate.
const ETA_AVERAGE_AFTER_MS: i64 = 10_000;

/// The unfinished moves an operation's ETA counts: every one but the stalled ones, whose bytes
/// wait on a cause nothing can time (a broker down, no progress). With what is left out.
struct EtaWork {
    /// Bytes left of the unfinished moves that are not stalled.
    bytes: u64,
    /// Unfinished moves that are not stalled.
    moves: usize,
    /// Stalled moves and their bytes left: not in the ETA.
    stalled_moves: usize,
    stalled_bytes: u64,
}

impl EtaWork {
    fn of(moves: &[MoveRecord]) -> EtaWork {
        let mut w = EtaWork {
            bytes: 0,
            moves: 0,
            stalled_moves: 0,
            stalled_bytes: 0,
        };
        for m in moves.iter().filter(|m| !m.state.is_finished()) {
            let left = m.bytes_total.saturating_sub(m.bytes_done);
            if m.is_stalled() {
                w.stalled_moves += 1;
                w.stalled_bytes += left;
            } else {
                w.moves += 1;
                w.bytes += left;
            }
        }
        w
    }

    /// `etaLeavesOut`: the stalled moves the ETA does not count, null when none is.
    fn left_out(&self) -> Value {
        if self.stalled_moves == 0 {
            Value::Null
        } else {
            json!({ "stalledMoves": self.stalled_moves, "bytesLeft": self.stalled_bytes })
        }
    }
}

/// The seconds left for `work` (the unfinished moves that are not stalled): from the
/// operation's average rate since it started (bytes done / time running) once it has run
/// `ETA_AVERAGE_AFTER_MS` and copied something, else from the current rate. The average counts
/// what the current rate misses — moves waiting their turn, the gaps between waves, slow
/// starts — and moves little from one reading to the next, so the ETA neither swings nor
/// promises too early. With the basis used: `stalled` when every unfinished move is stalled
/// (no ETA at all).
fn eta(
    finished: bool,
    work: &EtaWork,
    done: u64,
    running_ms: Option<i64>,
    current_rate: f64,
) -> (Option<f64>, Option<f64>, &'static str) {
    if finished {
        return (None, None, "finished");
    }
    let unfinished = work.bytes;
    let average = running_ms
        .filter(|ms| *ms >= ETA_AVERAGE_AFTER_MS && done > 0)
        .map(|ms| done as f64 / (ms as f64 / 1000.0));
    if work.moves == 0 && work.stalled_moves > 0 {
        return (None, average, "stalled");
    }
    match average {
        Some(avg) if avg > 0.0 => (
            Some((unfinished as f64 / avg).ceil()),
            Some(avg),
            "average_rate",
        ),
        _ if current_rate > 0.0 => (
            Some((unfinished as f64 / current_rate).ceil()),
            average,
            "current_rate",
        ),
        _ => (None, average, "unknown"),
    }
}

fn op_json(o: &OperationRecord, moves: &[MoveRecord], with_moves: bool, now_ms: i64) -> Value {
    let mut by_state: BTreeMap<&str, usize> = [
        "Pending",
        "Active",
        "Stalled",
        "Completed",
        "Failed",
        "Cancelled",
    ]
    .into_iter()
    .map(|s| (s, 0))
    .collect();
    for m in moves {
        *by_state.entry(move_state_name(m)).or_default() += 1;
    }
    let total: u64 = moves.iter().map(|m| m.bytes_total).sum();
    let done: u64 = moves.iter().map(|m| m.bytes_done).sum();
    let rate = total_rate(
        o.state.is_finished(),
        moves
            .iter()
            .filter(|m| m.state.is_in_flight())
            .filter_map(|m| m.rate),
    );
    let work = EtaWork::of(moves);
    let (eta, average_rate, eta_basis) = eta(
        o.state.is_finished(),
        &work,
        done,
        o.started_at_ms.map(|at| now_ms - at),
        rate,
    );
    let mut v = json!({
        "id": o.id,
        "kind": o.kind,
        "strategy": o.strategy,
        "state": op_state_name(o.state),
        "cancelRequested": o.cancel_requested,
        "method": o.method,
        "userId": o.user_id,
        "requestedBy": o.requested_by,
        "description": o.description,
        "proposalId": o.proposal_id,
        "forced": o.forced,
        "reason": o.reason,
        "createdAt": format_rfc3339_ms(o.created_at_ms),
        "startedAt": o.started_at_ms.map(format_rfc3339_ms),
        "finishedAt": o.finished_at_ms.map(format_rfc3339_ms),
        "totalMoves": moves.len(),
        "moves": by_state,
        "bytesTotal": total,
        "bytesDone": done,
        "rateBytesPerSecond": rate,
        "averageRateBytesPerSecond": average_rate,
        "etaSeconds": eta,
        "etaBasis": eta_basis,
        "etaLeavesOut": if o.state.is_finished() { Value::Null } else { work.left_out() },
        "auditEventId": o.audit_event_id,
    });
    if with_moves {
        v["partitions"] = json!(moves.iter().map(move_json).collect::<Vec<_>>());
    }
    v
}

fn state_schema() -> utoipa::openapi::Object {
    crate::schema::string_enum([
        "Pending",
        "Active",
        "Running",
        "Completed",
        "Failed",
        "Cancelled",
    ])
}

#[derive(Debug, Default, Deserialize, utoipa::IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct ListQuery {
    /// `Pending`, `Active` (or `Running`), `Completed`, `Failed` or `Cancelled` (case-insensitive).
    #[param(schema_with = state_schema)]
    pub state: Option<String>,
    /// Rows, default 50, at most 500.
    pub limit: Option<u64>,
    /// Rows to skip.
    pub offset: Option<u64>,
}

/// The operation `list_reassignments`: a page of operations, newest first, optionally in one
/// state, with their progress and the current holder of the mutation slot.
pub async fn list_reassignments(state: &Ops, q: ListQuery) -> Result<Value, OpError> {
    let filter = match q.state.as_deref().map(str::to_ascii_lowercase).as_deref() {
        None => None,
        Some("pending") => Some(OperationState::Pending),
        Some("active") | Some("running") => Some(OperationState::Running),
        Some("completed") => Some(OperationState::Completed),
        Some("failed") => Some(OperationState::Failed),
        Some("cancelled") => Some(OperationState::Cancelled),
        Some(other) => {
            return Err(OpError::bad_input(
                "invalid state",
                format!(
                    "state must be Pending, Active, Completed, Failed or Cancelled, got {other:?}"
                ),
            ))
        }
    };
    let limit = q.limit.unwrap_or(DEFAULT_LIMIT).clamp(1, MAX_LIMIT);
    let offset = q.offset.unwrap_or(0);
    let (page, moves) = state
        .db(move |s| {
            let page = s.operations(filter, limit, offset)?;
            let moves = page
                .operations
                .iter()
                .map(|o| s.moves(&o.id))
                .collect::<Result<Vec<_>, _>>()?;
            Ok((page, moves))
        })
        .await?;
    let now = state.clock.now_ms();
    let slot = state.db(move |s| s.slot(now)).await?;
    let rows: Vec<Value> = page
        .operations
        .iter()
        .zip(&moves)
        .map(|(o, m)| op_json(o, m, false, now))
        .collect();
    Ok(json!({
        "reassignments": rows,
        "total": page.total,
        "limit": limit,
        "offset": offset,
        "slot": slot,
    }))
}

/// The operation `get_reassignment_history`: [`list_reassignments`] (the same route).
pub async fn get_reassignment_history(state: &Ops, q: ListQuery) -> Result<Value, OpError> {
    list_reassignments(state, q).await
}

/// The operation `get_reassignment_by_id`: one operation with every partition's state, step,
/// bytes, rate, ETA and reason.
pub async fn get_reassignment_by_id(state: &Ops, id: String) -> Result<Value, OpError> {
    let wanted = id.clone();
    let found = state
        .db(move |s| {
            Ok(match s.operation(&wanted)? {
                Some(o) => {
                    let m = s.moves(&o.id)?;
                    let r = s.operation_realized(&o.id)?;
                    Some((o, m, r))
                }
                None => None,
            })
        })
        .await?;
    let Some((o, m, r)) = found else {
        return Err(OpError::not_found(
            "reassignment not found",
            format!("no reassignment {id}"),
        ));
    };
    let mut v = op_json(&o, &m, true, state.clock.now_ms());
    v["realized"] = ballast_runtime::realized::render(
        &o,
        r.as_ref(),
        ballast_runtime::realized::rates_after_ms(&state.config.timing),
    );
    Ok(v)
}

/// The operation `cancel_reassignment`: asks the executor to cancel operation `id`; audited
/// `reassignments.cancel` (status 202).
pub async fn cancel_reassignment(state: &Ops, actor: &Actor, id: String) -> Result<Value, OpError> {
    let now = state.clock.now_ms();
    let not_found =
        || OpError::not_found("reassignment not found", format!("no reassignment {id}"));
    let wanted = id.clone();
    let Some(known) = state.db(move |s| s.operation(&wanted)).await? else {
        return Err(not_found());
    };
    let mut event = actor.event(now, "reassignments.cancel", id.clone());
    event.summary = json!({ "operation": id });
    event.related_event_id = known.audit_event_id;
    let before = json!({ "state": op_state_name(known.state) });
    let (o, _) = state
        .pipeline
        .run([Resource::ReassignmentSlot], event, || async {
            let wanted = id.clone();
            let outcome = state
                .db(move |s| s.request_cancel(&wanted, now))
                .await
                .map_err(NotDone::Refused)?;
            match outcome {
                CancelRequest::NotFound => Err(NotDone::Refused(not_found())),
                CancelRequest::AlreadyFinished(o) => Err(NotDone::Refused(conflict(
                    "reassignment already finished",
                    format!("{} is {}", o.id, op_state_name(o.state)),
                ))),
                CancelRequest::Requested(o) => {
                    let mut done = Done::new(
                        o,
                        Some(before.clone()),
                        Some(json!({ "state": "Cancelling" })),
                    );
                    done.status = 202;
                    Ok(done)
                }
            }
        })
        .await?;
    Ok(json!({
        "id": o.id,
        "state": "Cancelling",
        "message": "cancellation requested: in-flight moves are cancelled through the cluster, completed moves stay",
    }))
}

// ------------------------------------------------------------------------- throttle tuning

#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ThrottleBody {
    /// MB/s (10^6 bytes), 1 to `BALLAST_THROTTLE_MAX_RATE_MB` (default 1000, the maximum
    /// written here).
    #[schema(minimum = 1, maximum = 1000)]
    pub rate_mb: i64,
}

/// The replication throttle as `GET /reassignments/throttle` answers it.
pub async fn throttle_value(state: &Ops) -> Result<Value, OpError> {
    let (set, heartbeats) = state
        .db(|s| Ok((s.setting(THROTTLE_RATE_KEY)?, s.heartbeats()?)))
        .await?;
    // What the executor's last pass reported: changes not confirmed yet, and throttles kept for
    // a reassignment in progress that ballast does not track.
    let report = heartbeats
        .iter()
        .find(|h| h.name == "executor")
        .map(|h| h.detail["report"].clone())
        .unwrap_or(Value::Null);
    let list = |key: &str| match &report[key] {
        Value::Array(items) => Value::Array(items.clone()),
        _ => json!([]),
    };
    let t = &state.config.throttle;
    let current = set
        .as_deref()
        .and_then(|v| v.parse::<u64>().ok())
        .unwrap_or(t.rate_mb)
        .min(t.max_rate_mb);
    Ok(json!({
        "rateMb": current,
        "configuredRateMb": t.rate_mb,
        "maxRateMb": t.max_rate_mb,
        "managed": t.managed,
        "overridden": set.is_some(),
        "pending": list("throttlePending"),
        "kept": list("throttleKept"),
    }))
}

/// The operation `set_throttle`: the replication throttle rate ballast sets, 1 to
/// `BALLAST_THROTTLE_MAX_RATE_MB` MB/s; taken up by the executor's next pass; audited
/// `throttle.update`.
pub async fn set_throttle(state: &Ops, actor: &Actor, rate_mb: i64) -> Result<Value, OpError> {
    let max = state.config.throttle.max_rate_mb;
    if rate_mb < 1 || rate_mb as u64 > max {
        return Err(OpError::bad_input(
            "invalid throttle rate",
            format!(
                "rateMb must be between 1 and {max} (BALLAST_THROTTLE_MAX_RATE_MB), got {rate_mb}"
            ),
        ));
    }
    let now = state.clock.now_ms();
    let mut event = actor.event(now, "throttle.update", "replication throttle");
    event.summary = json!({ "rateMb": rate_mb });
    state
        .pipeline
        .run(
            [Resource::Setting(THROTTLE_RATE_KEY.into())],
            event,
            || async {
                let before = throttle_value(state).await.map_err(NotDone::Refused)?;
                let value = rate_mb.to_string();
                state
                    .db(move |s| s.put_setting(THROTTLE_RATE_KEY, &value, now))
                    .await
                    .map_err(NotDone::Refused)?;
                Ok(Done::new(
                    (),
                    Some(json!({ "rateMb": before["rateMb"] })),
                    Some(json!({ "rateMb": rate_mb })),
                ))
            },
        )
        .await?;
    throttle_value(state).await
}

#[cfg(test)]
mod tests {
    use super::*;

    fn work(bytes: u64) -> EtaWork {
        EtaWork {
            bytes,
            moves: 1,
            stalled_moves: 0,
            stalled_bytes: 0,
        }
    }

    const T0: i64 = 1_780_000_000_000;

    fn a_move(seq: i64, state: MoveState, total: u64, done: u64) -> MoveRecord {
        MoveRecord {
            operation_id: "op-1".into(),
            seq,
            phase: 0,
            topic: "orders".into(),
            partition: seq as i32,
            source: vec![1, 2],
            target: vec![3, 2],
            state,
            step: 0,
            steps: 1,
            submitted: state.is_in_flight().then(|| vec![3, 2]),
            submitted_at_ms: Some(T0),
            submissions: 1,
            bytes_total: total,
            bytes_done: done,
            rate: state.is_in_flight().then_some(1e6),
            reason: None,
            timed_out: false,
            cancel_confirmed: true,
            started_at_ms: Some(T0),
            finished_at_ms: None,
            stalled_since_ms: None,
            stalled_brokers: Vec::new(),
        }
    }

    fn stalled(mut m: MoveRecord) -> MoveRecord {
        m.stalled_since_ms = Some(T0 + 5_000);
        m.stalled_brokers = vec![3];
        m.rate = None;
        m.reason = Some("stalled: destination broker 3 is down (not in the cluster's metadata since 2026-05-28T20:26:45.000Z): nothing can copy to it until it returns".into());
        m
    }

    fn running_op() -> OperationRecord {
        OperationRecord {
            id: "op-1".into(),
            kind: "bulk".into(),
            strategy: "BULK_MANUAL".into(),
            state: OperationState::Running,
            cancel_requested: false,
            method: "POST".into(),
            user_id: None,
            requested_by: None,
            description: None,
            proposal_id: None,
            fingerprint: None,
            forced: false,
            slot_token: Some(1),
            audit_event_id: None,
            reason: None,
            detail: json!({}),
            created_at_ms: T0,
            started_at_ms: Some(T0),
            finished_at_ms: None,
            updated_at_ms: T0,
        }
    }

    #[test]
    fn a_stalled_move_reads_stalled_with_its_reason_and_since_and_no_eta_of_its_own() {
        let m = stalled(a_move(0, MoveState::Active, 100_000_000, 40_000_000));
        let v = move_json(&m);
        assert_eq!(v["state"], "Stalled");
        assert_eq!(v["stalledSince"], format_rfc3339_ms(T0 + 5_000));
        assert_eq!(v["stalledBrokers"], json!([3]));
        assert_eq!(v["etaSeconds"], Value::Null);
        assert_eq!(v["rateBytesPerSecond"], Value::Null, "not measured");
        assert!(v["reason"]
            .as_str()
            .is_some_and(|r| r.starts_with("stalled: destination broker 3 is down")));
        // A move copying is Active, with its ETA; a finished one keeps no stall.
        let copying = move_json(&a_move(1, MoveState::Active, 100_000_000, 40_000_000));
        assert_eq!(copying["state"], "Active");
        assert_eq!(copying["stalledSince"], Value::Null);
        assert_eq!(copying["stalledBrokers"], Value::Null);
        assert_eq!(copying["etaSeconds"], json!(60.0));
        let mut done = stalled(a_move(2, MoveState::Completed, 10, 10));
        done.reason = None;
        assert_eq!(move_json(&done)["state"], "Completed");
    }

    #[test]
    fn the_operation_eta_leaves_stalled_moves_out_and_says_so() {
        let moves = vec![
            stalled(a_move(0, MoveState::Active, 100_000_000, 40_000_000)),
            a_move(1, MoveState::Active, 100_000_000, 50_000_000),
            a_move(2, MoveState::Pending, 50_000_000, 0),
            a_move(3, MoveState::Completed, 10_000_000, 10_000_000),
        ];
        // 100 MB done in 100 s: 1 MB/s on average; 100 MB left of the moves not stalled.
        let v = op_json(&running_op(), &moves, false, T0 + 100_000);
        assert_eq!(v["etaSeconds"], json!(100.0));
        assert_eq!(v["etaBasis"], "average_rate");
        assert_eq!(
            v["etaLeavesOut"],
            json!({"stalledMoves": 1, "bytesLeft": 60_000_000})
        );
        assert_eq!(v["moves"]["Stalled"], 1);
        assert_eq!(v["moves"]["Active"], 1);
        // Every unfinished move stalled: no ETA at all, and why.
        let all = vec![
            stalled(a_move(0, MoveState::Active, 100_000_000, 40_000_000)),
            a_move(3, MoveState::Completed, 10_000_000, 10_000_000),
        ];
        let v = op_json(&running_op(), &all, false, T0 + 100_000);
        assert_eq!(v["etaSeconds"], Value::Null);
        assert_eq!(v["etaBasis"], "stalled");
        assert_eq!(
            v["etaLeavesOut"],
            json!({"stalledMoves": 1, "bytesLeft": 60_000_000})
        );
        // Nothing stalled: nothing left out.
        let none = vec![a_move(1, MoveState::Active, 100_000_000, 50_000_000)];
        let v = op_json(&running_op(), &none, true, T0 + 100_000);
        assert_eq!(v["etaLeavesOut"], Value::Null);
        assert_eq!(v["partitions"][0]["state"], "Active");
    }

    #[test]
    fn the_eta_divides_what_is_left_by_the_average_rate_once_the_operation_has_run_ten_seconds() {
        // 1 GB done in 100 s (10 MB/s on average) while the current move copies at 50 MB/s:
        // 2 GB left take 200 s, not the 40 s the current rate promises.
        let (first, avg, basis) = eta(
            false,
            &work(2_000_000_000),
            1_000_000_000,
            Some(100_000),
            50e6,
        );
        assert_eq!(
            (first, avg, basis),
            (Some(200.0), Some(1e7), "average_rate")
        );
        // One reading later the next move starts slowly: the ETA barely moves.
        let (later, _, _) = eta(
            false,
            &work(1_990_000_000),
            1_010_000_000,
            Some(101_000),
            1e6,
        );
        assert_eq!(later, Some(199.0));
    }

    #[test]
    fn before_ten_seconds_or_any_byte_the_eta_uses_the_current_rate_and_a_finished_one_has_none() {
        assert_eq!(
            eta(false, &work(100_000_000), 0, Some(20_000), 10e6),
            (Some(10.0), None, "current_rate")
        );
        assert_eq!(
            eta(false, &work(100_000_000), 5_000_000, Some(5_000), 10e6).2,
            "current_rate"
        );
        assert_eq!(
            eta(false, &work(100), 0, None, 0.0),
            (None, None, "unknown")
        );
        assert_eq!(
            eta(true, &work(0), 100, Some(50_000), 0.0),
            (None, None, "finished")
        );
    }

    fn ctx() -> Context {
        Context {
            topic: "orders".into(),
            partitions: [(
                0,
                Placement {
                    replicas: vec![1, 2, 3],
                    size: 10,
                },
            )]
            .into_iter()
            .collect(),
            min_insync: 2,
            brokers: [1, 2, 3, 4, 5].into_iter().collect(),
            maintenance: [5].into_iter().collect(),
        }
    }

    #[test]
    fn a_finished_or_idle_rate_is_zero_never_negative_zero() {
        let cases = [
            total_rate(true, [5.0].into_iter()),
            total_rate(false, std::iter::empty()),
            total_rate(false, [-0.0].into_iter()),
        ];
        for r in cases {
            assert!(r == 0.0 && r.is_sign_positive(), "{r:?}");
            assert_eq!(json!({ "r": r }).to_string(), r#"{"r":0.0}"#);
        }
        assert_eq!(total_rate(false, [1.5, 2.5].into_iter()), 4.0);
        for (in_flight, rate) in [(false, Some(7.0)), (false, None), (true, Some(-0.0))] {
            let r = move_rate(in_flight, rate).expect("a rate");
            assert!(r == 0.0 && r.is_sign_positive(), "{r:?}");
        }
        assert_eq!(move_rate(true, Some(3.0)), Some(3.0));
        assert_eq!(move_rate(true, None), None, "not measured yet");
    }

    #[test]
    fn an_explicit_replica_set_is_rejected_when_empty_duplicate_or_negative() {
        for bad in [vec![], vec![1, 1, 2], vec![1, -2, 3]] {
            let err = check_replicas(&ctx(), 0, &bad).unwrap_err();
            assert_eq!(err.0, Kind::BadInput, "{bad:?}: {}", err.1);
        }
    }

    #[test]
    fn an_explicit_replica_set_below_the_replication_factor_floor_is_rejected() {
        let err = check_replicas(&ctx(), 0, &[1, 2]).unwrap_err();
        assert_eq!(err.0, Kind::Conflict);
        assert!(err.1.contains("floor of 3"), "{}", err.1);
        // min.insync.replicas + 1 raises the floor above the replication factor.
        let mut c = ctx();
        c.min_insync = 3;
        let err = check_replicas(&c, 0, &[1, 2, 4]).unwrap_err();
        assert!(err.1.contains("floor of 4"), "{}", err.1);
        assert_eq!(
            check_replicas(&ctx(), 0, &[4, 2, 3]).unwrap(),
            vec![4, 2, 3]
        );
    }

    #[test]
    fn nothing_is_moved_onto_an_unknown_or_maintenance_broker() {
        assert_eq!(
            check_replicas(&ctx(), 0, &[9, 2, 3]).unwrap_err().0,
            Kind::Conflict
        );
        assert_eq!(
            check_replicas(&ctx(), 0, &[5, 2, 3]).unwrap_err().0,
            Kind::Conflict
        );
    }

    #[test]
    fn unhealthy_target_brokers_are_substituted_back_up_to_the_original_factor() {
        let alive: BTreeSet<BrokerId> = [1, 2, 3, 4].into_iter().collect();
        let counts: BTreeMap<BrokerId, usize> =
            [(1, 5), (2, 5), (3, 1), (4, 0)].into_iter().collect();
        let none = BTreeSet::new();
        assert_eq!(
            healthy_target(&[1, 9, 2], &alive, &none, &counts),
            Some(vec![1, 4, 2])
        );
        // No healthy broker left to substitute: the partition is skipped.
        let small: BTreeSet<BrokerId> = [1, 2].into_iter().collect();
        let c2: BTreeMap<BrokerId, usize> = [(1, 0), (2, 0)].into_iter().collect();
        assert_eq!(healthy_target(&[1, 2, 9], &small, &none, &c2), None);
    }
}
