//! A topic's lifecycle: create it, add partitions, change its replication factor, delete it
//! (`docs/api/topics.md`). New replicas are placed by `ballast_balancer::placement` on the
//! cluster as the proposals see it (rack-aware, each broker's fair share of leaders and replicas,
//! the topic spread evenly, no broker in maintenance or down, no broker pushed beyond the
//! trigger), and the cluster is asked for exactly that assignment, so the next proposal has
//! nothing of the new replicas to move.
//!
//! Create, add partitions and delete are immediate changes through the pipeline (audited
//! `topics.create`, `topics.partitions.add`, `topics.delete`); a replication-factor change is a
//! reassignment queued for the executor (throttled, behind the mutation slot, with progress,
//! ETA, cancel and the timeout of every reassignment; audited `topics.replication_factor` with
//! the replica lists before and after, so it reverts as a reassignment). Each takes
//! `validateOnly`: the same checks and the placement, nothing changed (create and add partitions
//! are also validated by the cluster itself, `validate_only`).

use std::collections::{BTreeMap, BTreeSet};

use ballast_balancer::placement::{self, PlaceError};
use ballast_kafka::types::{NewPartitions, NewTopic};
use ballast_kafka::{Client, ItemError};
use ballast_model::snapshot::Snapshot;
use ballast_model::{BrokerId, BrokerState};
use ballast_runtime::topology::snapshot_with_maintenance;
use ballast_schema::{NewMove, NewOperation};
use serde::Deserialize;
use serde_json::{json, Value};

use crate::actor::Actor;
use crate::cluster::{change_failed, read_failed};
use crate::context::Context;
use crate::error::OpError;
use crate::pipeline::{Audited, Done, NotDone, Resource};
use crate::reassignments::{gate, move_event, new_move, queue, ForceQuery};
use crate::view::{self as observed_view, View};

/// Partitions one request may create (a topic, or partitions added to one).
pub const MAX_PARTITIONS: i64 = 10_000;
/// The largest replication factor asked for (the planner models up to 16 replicas).
pub const MAX_REPLICATION_FACTOR: i64 = 16;

/// `POST /api/v1/topics`.
#[derive(Debug, Clone, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CreateTopic {
    /// The topic's name (Kafka's rules: 1 to 249 of ASCII letters, digits, '.', '_', '-').
    pub name: String,
    /// Partitions (1 to 10,000).
    pub partitions: i64,
    /// Replicas of each partition (1 to 16, at most the brokers that take load).
    pub replication_factor: i64,
    /// Topic configuration overrides (key → string, number or boolean).
    #[serde(default)]
    pub configs: BTreeMap<String, Value>,
    /// The replicas of every partition, in partition order, leader first (default: placed by
    /// ballast). Each list names `replicationFactor` distinct brokers that are up.
    #[serde(default)]
    pub assignment: Option<Vec<Vec<i32>>>,
    /// Check and place only; create nothing.
    #[serde(default)]
    pub validate_only: bool,
}

/// `POST /api/v1/topics/{topic}/partitions`.
#[derive(Debug, Clone, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct AddPartitions {
    /// The new total number of partitions (more than the topic has: Kafka cannot remove any).
    pub count: i64,
    /// The replicas of each new partition, in partition order, leader first (default: placed
    /// by ballast). Each list names as many distinct brokers that are up as the topic's
    /// replication factor.
    #[serde(default)]
    pub assignment: Option<Vec<Vec<i32>>>,
    /// Check and place only; add nothing.
    #[serde(default)]
    pub validate_only: bool,
}

/// `PUT /api/v1/topics/{topic}/replication-factor`.
#[derive(Debug, Clone, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ChangeReplicationFactor {
    /// The replication factor wanted (1 to 16).
    pub replication_factor: i64,
    /// Only these partitions (default: every partition of the topic).
    #[serde(default)]
    pub partitions: Option<Vec<i32>>,
    /// Plan only; queue nothing.
    #[serde(default)]
    pub validate_only: bool,
}

/// `DELETE /api/v1/topics/{topic}`.
#[derive(Debug, Clone, Default, Deserialize, schemars::JsonSchema, utoipa::IntoParams)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct DeleteTopic {
    /// Delete although consumer groups have committed offsets on it.
    #[serde(default)]
    pub force: Option<bool>,
    /// Say what would be deleted; delete nothing.
    #[serde(default)]
    pub validate_only: Option<bool>,
}

fn bad(field: &str, why: impl std::fmt::Display) -> OpError {
    OpError::bad_input(format!("invalid {field}"), format!("{field}: {why}"))
}

fn check_name(name: &str) -> Result<(), OpError> {
    crate::names::topic(name).map_err(|why| bad("name", why))
}

fn check_rf(rf: i64) -> Result<usize, OpError> {
    if !(1..=MAX_REPLICATION_FACTOR).contains(&rf) {
        return Err(bad(
            "replicationFactor",
            format!("must be 1 to {MAX_REPLICATION_FACTOR}, got {rf}"),
        ));
    }
    Ok(rf as usize)
}

/// An operator's explicit assignment of the partitions `first..first + count`, checked: one list
/// a partition, `rf` distinct brokers each, every one known and up (a replica on a broker that
/// is down would start offline). Brokers in maintenance are allowed: the operator named them.
fn explicit_assignment(
    snapshot: &Snapshot,
    lists: &[Vec<i32>],
    first: i32,
    count: usize,
    rf: usize,
) -> Result<Vec<(i32, Vec<BrokerId>)>, OpError> {
    if lists.len() != count {
        return Err(bad(
            "assignment",
            format!(
                "names {} partition(s); {count} {} to be placed",
                lists.len(),
                if count == 1 { "is" } else { "are" }
            ),
        ));
    }
    let mut out = Vec::with_capacity(count);
    for (i, list) in lists.iter().enumerate() {
        let partition = first + i as i32;
        if list.len() != rf {
            return Err(bad(
                "assignment",
                format!(
                    "partition {partition} lists {} replica(s); the replication factor is {rf}",
                    list.len()
                ),
            ));
        }
        let mut seen = BTreeSet::new();
        for b in list {
            if !seen.insert(*b) {
                return Err(bad(
                    "assignment",
                    format!("partition {partition} names broker {b} twice"),
                ));
            }
            match snapshot.brokers.iter().find(|x| x.id == *b) {
                None => {
                    return Err(bad(
                        "assignment",
                        format!("partition {partition}: broker {b} is not in the cluster"),
                    ))
                }
                Some(x) if x.state == BrokerState::Down => {
                    return Err(bad(
                        "assignment",
                        format!("partition {partition}: broker {b} is down"),
                    ))
                }
                Some(_) => {}
            }
        }
        out.push((partition, list.clone()));
    }
    Ok(out)
}

/// A placement refusal, naming the field it comes from.
fn place_error(e: PlaceError) -> OpError {
    match e {
        PlaceError::TooFewBrokers { .. } => bad("replicationFactor", e),
        PlaceError::UnknownPartition(_) => bad("partitions", e),
        PlaceError::UnknownTopic(t) => {
            OpError::not_found("topic not found", format!("no topic {t}"))
        }
    }
}

/// The cluster's refusal of one topic, naming the field Kafka's error is about.
fn kafka_refusal(topic: &str, e: &ItemError) -> OpError {
    let text = format!("topic {topic}: {e}");
    match e.name {
        "TOPIC_ALREADY_EXISTS" => OpError::conflict("topic already exists", text),
        "INVALID_TOPIC_EXCEPTION" => bad("name", text),
        "INVALID_PARTITIONS" => bad("partitions", text),
        "INVALID_REPLICATION_FACTOR" => bad("replicationFactor", text),
        "INVALID_REPLICA_ASSIGNMENT" => bad("assignment", text),
        "INVALID_CONFIG" => bad("configs", text),
        "POLICY_VIOLATION" => OpError::bad_input("rejected by the cluster's topic policy", text),
        "UNKNOWN_TOPIC_OR_PARTITION" | "UNKNOWN_TOPIC_ID" => {
            OpError::not_found("topic not found", text)
        }
        _ => crate::cluster::item_failed(&format!("topic {topic}"), e),
    }
}

/// The cluster as the proposals see it (brokers in maintenance take no load), from the latest
/// reading.
async fn planning_snapshot(ctx: &Context) -> Result<(std::sync::Arc<View>, Snapshot), OpError> {
    let view = observed_view::require(ctx).await?;
    let maintenance = crate::simulation::maintenance(ctx).await?;
    let snapshot = snapshot_with_maintenance(&view.raw, &[], &maintenance);
    Ok((view, snapshot))
}

fn trigger_pct(ctx: &Context) -> f64 {
    crate::simulation::policy(&ctx.config).trigger_pct()
}

/// The topic's live placement (partition → replicas, leader first as assigned), or 404.
async fn live_topic(client: &Client, topic: &str) -> Result<BTreeMap<i32, Vec<BrokerId>>, OpError> {
    let md = client
        .metadata(Some(&[topic.to_string()]))
        .await
        .map_err(|e| {
            OpError::unavailable(
                "the topic's placement could not be read; nothing was changed",
                ballast_runtime::error_chain(&e),
            )
        })?;
    match md.topic(topic) {
        Some(t) if t.error.is_none() => Ok(t
            .partitions
            .iter()
            .map(|p| (p.partition, p.replicas.clone()))
            .collect()),
        _ => Err(OpError::not_found(
            "topic not found",
            format!("no topic {topic}"),
        )),
    }
}

/// Every broker's leader and replica count before and after `added` (partition → replicas),
/// brokers by id. Disk and the rates are unchanged: new partitions hold nothing yet.
fn counts(
    snapshot: &Snapshot,
    removed: &[(i32, Vec<BrokerId>)],
    added: &[(i32, Vec<BrokerId>)],
) -> Value {
    let mut rows: BTreeMap<BrokerId, [i64; 4]> =
        snapshot.brokers.iter().map(|b| (b.id, [0; 4])).collect();
    for p in &snapshot.partitions {
        for r in &p.replicas {
            let e = rows.entry(*r).or_default();
            e[2] += 1;
            e[3] += 1;
            if p.leader == Some(*r) {
                e[0] += 1;
                e[1] += 1;
            }
        }
    }
    for (_, replicas) in removed {
        for (i, r) in replicas.iter().enumerate() {
            let e = rows.entry(*r).or_default();
            e[3] -= 1;
            if i == 0 {
                e[1] -= 1;
            }
        }
    }
    for (_, replicas) in added {
        for (i, r) in replicas.iter().enumerate() {
            let e = rows.entry(*r).or_default();
            e[3] += 1;
            if i == 0 {
                e[1] += 1;
            }
        }
    }
    let state: BTreeMap<BrokerId, &'static str> = snapshot
        .brokers
        .iter()
        .map(|b| (b.id, ballast_runtime::topology::state_name(b.state)))
        .collect();
    Value::Array(
        rows.iter()
            .map(|(b, [lb, la, rb, ra])| {
                json!({
                    "brokerId": b,
                    "state": state.get(b).copied().unwrap_or("unknown"),
                    "leadersBefore": lb,
                    "leadersAfter": la,
                    "replicasBefore": rb,
                    "replicasAfter": ra,
                })
            })
            .collect(),
    )
}

fn assignment_json(a: &[(i32, Vec<BrokerId>)]) -> Value {
    Value::Array(
        a.iter()
            .map(|(p, r)| json!({"partition": p, "replicas": r}))
            .collect(),
    )
}

/// Config values as Kafka takes them (strings), each checked by Kafka's own rules first.
fn config_strings(
    name: &str,
    configs: &BTreeMap<String, Value>,
) -> Result<BTreeMap<String, String>, OpError> {
    if configs.is_empty() {
        return Ok(BTreeMap::new());
    }
    let checked = crate::topic_configs::requested(name, configs)
        .map_err(|e| OpError::bad_input("invalid configs", e.details))?;
    checked
        .into_iter()
        .map(|(k, v)| match v {
            Some(v) => Ok((k, v)),
            None => Err(bad(
                "configs",
                format!("{k}: a new topic's config needs a value, not null"),
            )),
        })
        .collect()
}

/// The operation `create_topic`.
pub async fn create_topic(
    ctx: &Context,
    actor: &Actor,
    body: CreateTopic,
) -> Result<Value, OpError> {
    let name = body.name.clone();
    check_name(&name)?;
    if !(1..=MAX_PARTITIONS).contains(&body.partitions) {
        return Err(bad(
            "partitions",
            format!("must be 1 to {MAX_PARTITIONS}, got {}", body.partitions),
        ));
    }
    let rf = check_rf(body.replication_factor)?;
    let configs = config_strings(&name, &body.configs)?;
    let (_, snapshot) = planning_snapshot(ctx).await?;
    if snapshot.partitions.iter().any(|p| p.topic == name) {
        return Err(OpError::conflict(
            "topic already exists",
            format!("topic {name} already exists"),
        ));
    }
    let count = body.partitions as usize;
    let assignment: Vec<(i32, Vec<BrokerId>)> = match &body.assignment {
        Some(lists) => explicit_assignment(&snapshot, lists, 0, count, rf)?,
        None => placement::new_partitions(&snapshot, &name, 0, count, rf, trigger_pct(ctx))
            .map_err(place_error)?
            .into_iter()
            .map(|p| (p.partition, p.replicas))
            .collect(),
    };
    let topic = NewTopic {
        name: name.clone(),
        partitions: None,
        replication_factor: None,
        assignments: assignment.iter().cloned().collect(),
        configs: configs.clone(),
    };
    let client = ctx.kafka.client().await?;
    let mut answer = json!({
        "topic": name,
        "partitions": count,
        "replicationFactor": rf,
        "configs": configs,
        "assignment": assignment_json(&assignment),
        "brokers": counts(&snapshot, &[], &assignment),
        "validateOnly": body.validate_only,
        "created": false,
    });
    // The cluster validates it too (name, configs, its policy), creating nothing.
    let checked = client
        .create_topics(std::slice::from_ref(&topic), true)
        .await
        .map_err(|e| change_failed(&ctx.kafka, e))?;
    if let Some(e) = checked.iter().find_map(|r| r.error.as_ref()) {
        return Err(kafka_refusal(&name, e));
    }
    if body.validate_only {
        return Ok(answer);
    }
    let mut event = actor.event(ctx.clock.now_ms(), "topics.create", name.clone());
    event.summary =
        json!({"topic": name, "partitions": count, "replicationFactor": rf, "configs": configs});
    let after =
        json!({"topic": name, "configs": configs, "assignment": assignment_json(&assignment)});
    let ((), recorded) = ctx
        .pipeline
        .run([Resource::Topic(name.clone())], event, || async {
            let results = client
                .create_topics(std::slice::from_ref(&topic), false)
                .await
                .map_err(|e| NotDone::Refused(change_failed(&ctx.kafka, e)))?;
            if let Some(e) = results.iter().find_map(|r| r.error.as_ref()) {
                return Err(NotDone::Refused(kafka_refusal(&name, e)));
            }
            Ok(Done::new(
                (),
                Some(json!({"topic": name, "exists": false})),
                Some(after.clone()),
            ))
        })
        .await?;
    request_sample(ctx).await;
    answer["created"] = json!(true);
    answer["audit"] = json!(Audited::from(recorded));
    Ok(answer)
}

/// The operation `add_partitions`.
pub async fn add_partitions(
    ctx: &Context,
    actor: &Actor,
    topic: String,
    body: AddPartitions,
) -> Result<Value, OpError> {
    check_name(&topic).map_err(|_| bad("topic", "not a valid topic name"))?;
    let client = ctx.kafka.client().await?;
    let live = live_topic(&client, &topic).await?;
    let current = live.len() as i64;
    if body.count <= current {
        return Err(bad(
            "count",
            format!(
                "topic {topic} has {current} partitions; count is the new total and must be more (Kafka cannot remove partitions)"
            ),
        ));
    }
    if body.count - current > MAX_PARTITIONS {
        return Err(bad(
            "count",
            format!("at most {MAX_PARTITIONS} partitions can be added at once"),
        ));
    }
    let rf = live.values().map(Vec::len).max().unwrap_or(1);
    let (_, snapshot) = planning_snapshot(ctx).await?;
    let first = live.keys().max().map_or(0, |p| p + 1);
    let added = (body.count - current) as usize;
    let assignment: Vec<(i32, Vec<BrokerId>)> = match &body.assignment {
        Some(lists) => explicit_assignment(&snapshot, lists, first, added, rf)?,
        None => placement::new_partitions(&snapshot, &topic, first, added, rf, trigger_pct(ctx))
            .map_err(place_error)?
            .into_iter()
            .map(|p| (p.partition, p.replicas))
            .collect(),
    };
    let request = NewPartitions {
        topic: topic.clone(),
        total_count: i32::try_from(body.count).unwrap_or(i32::MAX),
        assignments: Some(assignment.iter().map(|(_, r)| r.clone()).collect()),
    };
    let mut answer = json!({
        "topic": topic,
        "partitionsBefore": current,
        "partitionsAfter": body.count,
        "replicationFactor": rf,
        "assignment": assignment_json(&assignment),
        "brokers": counts(&snapshot, &[], &assignment),
        "validateOnly": body.validate_only,
        "added": false,
        "revertible": false,
    });
    let checked = client
        .create_partitions(std::slice::from_ref(&request), true)
        .await
        .map_err(|e| change_failed(&ctx.kafka, e))?;
    if let Some(e) = checked.iter().find_map(|r| r.error.as_ref()) {
        return Err(kafka_refusal(&topic, e));
    }
    if body.validate_only {
        return Ok(answer);
    }
    let mut event = actor.event(ctx.clock.now_ms(), "topics.partitions.add", topic.clone());
    event.summary =
        json!({"topic": topic, "partitionsBefore": current, "partitionsAfter": body.count});
    let before = json!({"topic": topic, "partitions": current});
    let after =
        json!({"topic": topic, "partitions": body.count, "added": assignment_json(&assignment)});
    let ((), recorded) = ctx
        .pipeline
        .run([Resource::Topic(topic.clone())], event, || async {
            let results = client
                .create_partitions(std::slice::from_ref(&request), false)
                .await
                .map_err(|e| NotDone::Refused(change_failed(&ctx.kafka, e)))?;
            if let Some(e) = results.iter().find_map(|r| r.error.as_ref()) {
                return Err(NotDone::Refused(kafka_refusal(&topic, e)));
            }
            Ok(Done::new((), Some(before.clone()), Some(after.clone())))
        })
        .await?;
    request_sample(ctx).await;
    answer["added"] = json!(true);
    answer["audit"] = json!(Audited::from(recorded));
    Ok(answer)
}

/// The operation `change_replication_factor`: planned here, run by the executor.
pub async fn change_replication_factor(
    ctx: &Context,
    actor: &Actor,
    topic: String,
    q: ForceQuery,
    body: ChangeReplicationFactor,
) -> Result<Value, OpError> {
    check_name(&topic).map_err(|_| bad("topic", "not a valid topic name"))?;
    let rf = check_rf(body.replication_factor)?;
    let only: Option<BTreeSet<i32>> = match &body.partitions {
        None => None,
        Some(list) if list.is_empty() => {
            return Err(bad(
                "partitions",
                "name at least one partition, or leave it out for all",
            ))
        }
        Some(list) => {
            let set: BTreeSet<i32> = list.iter().copied().collect();
            if set.len() != list.len() {
                return Err(bad("partitions", "a partition is listed more than once"));
            }
            Some(set)
        }
    };
    let client = ctx.kafka.client().await?;
    let live = live_topic(&client, &topic).await?;
    let (view, mut snapshot) = planning_snapshot(ctx).await?;
    // The topic's replicas as the cluster holds them now (the reading may be a sample old).
    for p in snapshot.partitions.iter_mut().filter(|p| p.topic == topic) {
        if let Some(r) = live.get(&p.partition) {
            p.replicas = r.clone();
        }
    }
    let min_isr = view
        .raw
        .topics
        .iter()
        .find(|t| t.name == topic)
        .and_then(|t| t.min_insync)
        .unwrap_or(1)
        .max(1) as usize;
    let lowest = live
        .iter()
        .filter(|(p, _)| only.as_ref().is_none_or(|o| o.contains(p)))
        .map(|(_, r)| r.len())
        .min()
        .unwrap_or(0);
    if rf < lowest && rf < min_isr + 1 {
        return Err(bad(
            "replicationFactor",
            format!(
                "{rf} is below the floor of min.insync.replicas ({min_isr}) + 1 = {}: with fewer replicas one broker down blocks producers with acks=all",
                min_isr + 1
            ),
        ));
    }
    let changed =
        placement::replication_factor(&snapshot, &topic, only.as_ref(), rf, trigger_pct(ctx))
            .map_err(place_error)?;
    let sizes: BTreeMap<i32, u64> = view
        .raw
        .partitions
        .iter()
        .filter(|p| p.topic == topic)
        .map(|p| (p.partition, p.size_bytes.unwrap_or(0).max(0) as u64))
        .collect();
    let moves: Vec<NewMove> = changed
        .iter()
        .map(|c| {
            new_move(
                &topic,
                c.partition,
                &c.before,
                &c.after,
                sizes.get(&c.partition).copied().unwrap_or(0),
            )
        })
        .collect();
    let bytes: u64 = moves.iter().map(|m| m.bytes_total).sum();
    let throttle = crate::simulation::throttle(ctx).await?.bytes_per_sec;
    let removed: Vec<(i32, Vec<BrokerId>)> = changed
        .iter()
        .map(|c| (c.partition, c.before.clone()))
        .collect();
    let added: Vec<(i32, Vec<BrokerId>)> = changed
        .iter()
        .map(|c| (c.partition, c.after.clone()))
        .collect();
    let mut answer = json!({
        "topic": topic,
        "replicationFactor": rf,
        "partitions": only,
        "moves": changed.iter().map(|c| json!({
            "partition": c.partition,
            "replicasBefore": c.before,
            "replicasAfter": c.after,
        })).collect::<Vec<_>>(),
        "totalMoves": changed.len(),
        "estimatedBytes": bytes,
        "throttleBytesPerSec": throttle,
        "estimatedSeconds": (throttle > 0.0).then(|| (bytes as f64 / throttle).ceil()),
        "brokers": counts(&snapshot, &removed, &added),
        "validateOnly": body.validate_only,
        "started": false,
    });
    if body.validate_only {
        return Ok(answer);
    }
    if moves.is_empty() {
        answer["message"] = json!(format!(
            "every partition named is at replication factor {rf} already"
        ));
        return Ok(answer);
    }
    let gate = gate(
        ctx,
        Vec::new(),
        q.force.unwrap_or(false),
        "the replication-factor change cannot start now",
    )
    .await?;
    let op = NewOperation {
        kind: "replication_factor".into(),
        strategy: "REPLICATION_FACTOR".into(),
        method: actor.method.clone(),
        user_id: Some(actor.user.clone()),
        requested_by: Some(actor.requester()),
        description: Some(format!("replication factor of {topic} to {rf}")),
        forced: gate.forced,
        detail: json!({"topic": topic, "replicationFactor": rf, "partitions": only, "overridden": gate.overridden.clone()}),
        moves: moves.clone(),
        ..NewOperation::default()
    };
    let audit = move_event(
        actor,
        ctx.clock.now_ms(),
        "topics.replication_factor",
        topic.clone(),
        json!({"strategy": "REPLICATION_FACTOR", "topic": topic, "replicationFactor": rf, "moves": moves.len(), "estimatedBytes": bytes}),
        &moves,
        &gate,
    );
    let id = queue(ctx, op, audit).await?;
    answer["started"] = json!(true);
    answer["operationId"] = json!(id);
    Ok(answer)
}

/// The operation `delete_topic`.
pub async fn delete_topic(
    ctx: &Context,
    actor: &Actor,
    topic: String,
    q: DeleteTopic,
) -> Result<Value, OpError> {
    check_name(&topic).map_err(|_| bad("topic", "not a valid topic name"))?;
    let client = ctx.kafka.client().await?;
    let live = live_topic(&client, &topic).await?;
    let view = observed_view::require(ctx).await?;
    let size: Option<i64> = {
        let sizes: Vec<Option<i64>> = view
            .raw
            .partitions
            .iter()
            .filter(|p| p.topic == topic)
            .map(|p| p.size_bytes)
            .collect();
        (!sizes.is_empty() && sizes.iter().all(Option::is_some))
            .then(|| sizes.iter().flatten().sum())
    };
    let replicas_bytes: Option<i64> = {
        let mut total = Some(0i64);
        for p in view.raw.partitions.iter().filter(|p| p.topic == topic) {
            total = total.and_then(|t| Some(t + p.size_bytes? * p.replicas.len() as i64));
        }
        total
    };
    let mut groups: Vec<String> = view
        .raw
        .group_offsets
        .iter()
        .filter(|o| o.topic == topic)
        .map(|o| o.group_id.clone())
        .collect();
    groups.sort();
    groups.dedup();
    let tracked = ctx.db(|s| s.tracked_moves()).await?;
    let moving_by_ballast: Vec<String> = tracked
        .iter()
        .filter(|m| m.topic == topic)
        .map(|m| m.operation_id.clone())
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    let moving_in_cluster = view
        .raw
        .partitions
        .iter()
        .filter(|p| p.topic == topic && !(p.adding.is_empty() && p.removing.is_empty()))
        .count();
    let configs = crate::topic_configs::all_overrides(&client, &topic)
        .await
        .ok();
    let assignment: Vec<(i32, Vec<BrokerId>)> = live.iter().map(|(p, r)| (*p, r.clone())).collect();
    let mut answer = json!({
        "topic": topic,
        "partitions": live.len(),
        "sizeBytes": size,
        "replicaBytes": replicas_bytes,
        "sizeReadAt": ballast_runtime::format_rfc3339_ms(view.sampled_at_ms()),
        "consumerGroups": groups,
        "validateOnly": q.validate_only.unwrap_or(false),
        "deleted": false,
        "revertible": false,
    });
    if !moving_by_ballast.is_empty() || moving_in_cluster > 0 {
        let why = if moving_by_ballast.is_empty() {
            format!("{moving_in_cluster} of its partitions are being reassigned in the cluster; wait until the reassignment ends")
        } else {
            format!(
                "reassignment {} moves its partitions; wait until it ends or cancel it",
                moving_by_ballast.join(", ")
            )
        };
        return Err(OpError::conflict(
            "topic is being reassigned",
            format!("topic {topic}: {why}"),
        ));
    }
    if !groups.is_empty() && !q.force.unwrap_or(false) {
        return Err(OpError::conflict(
            "consumer groups have committed offsets on the topic",
            format!(
                "topic {topic}: {} consumer group(s) have committed offsets on it ({}); their offsets are lost with it: re-submit with force=true to delete anyway",
                groups.len(),
                groups.join(", ")
            ),
        ));
    }
    if q.validate_only.unwrap_or(false) {
        return Ok(answer);
    }
    let mut event = actor.event(ctx.clock.now_ms(), "topics.delete", topic.clone());
    event.summary = json!({"topic": topic, "partitions": live.len(), "sizeBytes": size, "consumerGroups": groups});
    event.forced = q.force.unwrap_or(false) && !groups.is_empty();
    let before = json!({"topic": topic, "configs": configs, "assignment": assignment_json(&assignment), "sizeBytes": size, "consumerGroups": groups});
    let ((), recorded) = ctx
        .pipeline
        .run([Resource::Topic(topic.clone())], event, || async {
            let results = client
                .delete_topics(std::slice::from_ref(&topic))
                .await
                .map_err(|e| NotDone::Refused(read_failed(&ctx.kafka, e)))?;
            if let Some(e) = results.iter().find_map(|r| r.error.as_ref()) {
                return Err(NotDone::Refused(kafka_refusal(&topic, e)));
            }
            Ok(Done::new(
                (),
                Some(before.clone()),
                Some(json!({"topic": topic, "exists": false})),
            ))
        })
        .await?;
    request_sample(ctx).await;
    answer["deleted"] = json!(true);
    answer["audit"] = json!(Audited::from(recorded));
    Ok(answer)
}

/// Asks the observer for a reading now, so every page shows the change soon. A failure only
/// delays that until the next sample.
async fn request_sample(ctx: &Context) {
    let now = ctx.clock.now_ms();
    let _ = ctx.db(move |s| s.request_sample(now).map(|_| ())).await;
}
