//! Broker operations (their rules; web's `routes::brokers` are the REST adapters): maintenance (enter drains the broker, exit ends it), log-directory moves,
//! and preferred leader elections (cluster-wide and per topic). Shapes:
//! `docs/api/reassignments.md`.

use ballast_runtime::millis;
use std::collections::{BTreeMap, BTreeSet};

use ballast_kafka::{ElectionType, ReplicaLogDirMove, TopicPartition};
use ballast_model::BrokerId;
use ballast_moves::placement::{self, Part};
use ballast_schema::{CancelRequest, Maintenance, NewOperation};
use serde::Deserialize;
use serde_json::{json, Value};

use crate::actor::Actor;
use crate::context::Context as Ops;
use crate::error::OpError;
use crate::pipeline::{Done, NotDone, Resource};
use crate::reassignments::{
    busy_conflict, conflict, gate, move_event, new_move, queue, racks, ForceQuery,
};
use crate::view as observed_view;

fn cluster_error(what: &str, e: &dyn std::error::Error) -> OpError {
    OpError::unavailable(what.to_string(), ballast_runtime::error_chain(e))
}

// ------------------------------------------------------------------------- maintenance

#[derive(Debug, Default, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct EnterBody {
    /// Why (recorded with the maintenance).
    pub reason: Option<String>,
    /// Move leadership and replicas off the broker (default true).
    /// Queue a drain of the broker (default true).
    pub drain: Option<bool>,
}

/// The operation `set_broker_maintenance`: records the broker in maintenance and, unless `drain`
/// is false, queues its drain (strategy `DRAIN`); audited `brokers.maintenance.enter`.
pub async fn set_broker_maintenance(
    state: &Ops,
    actor: &Actor,
    broker: i32,
    q: ForceQuery,
    body: EnterBody,
) -> Result<Value, OpError> {
    let in_maintenance = state.db(|s| s.maintenance()).await?;
    if in_maintenance.iter().any(|m| m.broker_id == broker) {
        return Err(conflict(
            "broker already in maintenance",
            format!("broker {broker} is in maintenance; DELETE the maintenance to end it"),
        ));
    }
    let client = state.kafka.client().await?;
    let md = client.metadata(None).await.map_err(|e| {
        cluster_error(
            "cluster metadata could not be read; nothing was changed",
            &e,
        )
    })?;
    let view = observed_view::current(state).await?;
    let known = md.broker(broker).is_some()
        || view
            .as_ref()
            .is_some_and(|v| v.raw.brokers.iter().any(|b| b.broker_id == broker));
    if !known {
        return Err(OpError::not_found(
            "broker not found",
            format!("no broker {broker}"),
        ));
    }
    let maintenance: BTreeSet<BrokerId> = in_maintenance.iter().map(|m| m.broker_id).collect();
    let eligible: BTreeSet<BrokerId> = md
        .brokers
        .iter()
        .map(|b| b.id)
        .filter(|b| *b != broker && !maintenance.contains(b))
        .collect();
    let parts: Vec<Part> = md
        .topics
        .iter()
        .flat_map(|t| {
            t.partitions.iter().map(move |p| Part {
                topic: t.name.clone(),
                partition: p.partition,
                replicas: p.replicas.clone(),
                isr: p.isr.clone(),
                leader: p.leader,
            })
        })
        .collect();
    let mut load: BTreeMap<BrokerId, usize> = BTreeMap::new();
    for p in &parts {
        for r in &p.replicas {
            *load.entry(*r).or_default() += 1;
        }
    }
    let drain = body.drain.unwrap_or(true);
    let plan = placement::drain(broker, &parts, &eligible, &racks(view.as_deref()), &load);
    let user = actor.user.clone();
    let now = state.clock.now_ms();
    let sizes: BTreeMap<(String, i32), u64> = view
        .as_ref()
        .map(|v| v.partition_sizes())
        .unwrap_or_default();
    let mut moves = Vec::new();
    for (phase, list) in [(0u32, &plan.leadership), (1u32, &plan.replicas)] {
        for m in list {
            let size = sizes
                .get(&(m.topic.clone(), m.partition))
                .copied()
                .unwrap_or(0);
            let mut nm = new_move(&m.topic, m.partition, &m.source, &m.target, size);
            nm.phase = phase;
            moves.push(nm);
        }
    }
    let skipped: Vec<Value> = plan
        .skipped
        .iter()
        .map(|(t, p, why)| json!({ "topic": t, "partition": p, "reason": why }))
        .collect();
    let mut operation_id = None;
    if drain && !moves.is_empty() {
        let gate = gate(
            state,
            Vec::new(),
            q.force.unwrap_or(false),
            "maintenance drain cannot start now",
        )
        .await?;
        let op = NewOperation {
            kind: "maintenance".into(),
            strategy: "DRAIN".into(),
            method: actor.method.clone(),
            user_id: Some(user.clone()),
            requested_by: Some(actor.requester()),
            description: Some(format!("drain broker {broker} for maintenance")),
            forced: gate.forced,
            detail: json!({ "broker": broker, "skipped": skipped }),
            moves: moves.clone(),
            ..NewOperation::default()
        };
        let audit = move_event(
            actor,
            now,
            "brokers.maintenance.enter",
            format!("broker {broker}"),
            json!({
                "broker": broker,
                "leadershipMoves": plan.leadership.len(),
                "replicaMoves": plan.replicas.len(),
                "skipped": skipped,
                "reason": body.reason,
            }),
            &moves,
            &gate,
        );
        operation_id = Some(queue(state, op, audit).await?);
    }
    let record = Maintenance {
        broker_id: broker,
        entered_at_ms: now,
        requested_by: Some(actor.requester()),
        operation_id: operation_id.clone(),
        reason: body.reason.clone(),
    };
    if operation_id.is_some() {
        // The drain's operation and its audit event were written in one transaction.
        state.db(move |s| s.enter_maintenance(&record)).await?;
    } else {
        let mut event = actor.event(now, "brokers.maintenance.enter", format!("broker {broker}"));
        event.summary = json!({ "broker": broker, "drain": false, "reason": body.reason });
        state
            .pipeline
            .run([Resource::Broker(broker)], event, || async {
                state
                    .db(move |s| s.enter_maintenance(&record))
                    .await
                    .map_err(NotDone::Refused)?;
                Ok(Done::new(
                    (),
                    Some(json!({ "maintenance": false })),
                    Some(json!({ "maintenance": true })),
                ))
            })
            .await?;
    }
    Ok(json!({
        "brokerId": broker,
        "maintenance": true,
        "drain": drain,
        "operationId": operation_id,
        "leadershipMoves": plan.leadership.len(),
        "replicaMoves": plan.replicas.len(),
        "skipped": skipped,
    }))
}

/// The query of `DELETE /brokers/{id}/maintenance`.
#[derive(Debug, Default, Deserialize, utoipa::IntoParams)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct ExitQuery {
    /// Leave the broker's drain running when one is in progress (default: it is cancelled —
    /// moves in flight are cancelled through the cluster, completed ones stay).
    pub keep_drain: Option<bool>,
}

/// The operation `remove_broker_maintenance`: the broker takes load again. A drain of it still
/// running is cancelled unless `keep_drain` (moving data off a broker that is back makes no
/// sense); the answer says what happened to it. Audited `brokers.maintenance.exit`.
pub async fn remove_broker_maintenance(
    state: &Ops,
    actor: &Actor,
    broker: i32,
    keep_drain: bool,
) -> Result<Value, OpError> {
    let now = state.clock.now_ms();
    let mut event = actor.event(now, "brokers.maintenance.exit", format!("broker {broker}"));
    event.summary = json!({ "broker": broker, "keepDrain": keep_drain });
    let resources = [Resource::Broker(broker), Resource::ReassignmentSlot];
    let (drain, _) = state
        .pipeline
        .run(resources, event, || async {
            let removed = state
                .db(move |s| s.exit_maintenance(broker))
                .await
                .map_err(NotDone::Refused)?;
            if !removed {
                return Err(NotDone::Refused(OpError::not_found(
                    "broker not in maintenance",
                    format!("broker {broker} is not in maintenance"),
                )));
            }
            // The drain of this broker, if it is still running.
            let drain = state
                .db(move |s| {
                    let Some(op) = s.next_operation()? else {
                        return Ok(None);
                    };
                    if op.kind != "maintenance" || op.detail["broker"] != json!(broker) {
                        return Ok(None);
                    }
                    let moves = s.moves(&op.id)?;
                    let done = moves.iter().filter(|m| m.state.is_finished()).count();
                    let cancelled = !keep_drain
                        && matches!(s.request_cancel(&op.id, now)?, CancelRequest::Requested(_));
                    Ok(Some(json!({
                        "operationId": op.id,
                        "movesDone": done,
                        "movesTotal": moves.len(),
                        "cancelled": cancelled,
                    })))
                })
                .await
                .map_err(NotDone::Refused)?;
            let mut after = json!({ "maintenance": false });
            if let Some(d) = &drain {
                after["drain"] = d.clone();
            }
            Ok(Done::new(
                drain,
                Some(json!({ "maintenance": true })),
                Some(after),
            ))
        })
        .await?;
    let message = match &drain {
        Some(d) if d["cancelled"] == true => format!(
            "maintenance ended; its drain {} was cancelled after {} of {} moves (moves in flight are cancelled through the cluster, completed ones stay); the next proposal moves partitions back onto the broker",
            d["operationId"].as_str().unwrap_or_default(),
            d["movesDone"],
            d["movesTotal"]
        ),
        Some(d) => format!(
            "maintenance ended; its drain {} keeps running ({} of {} moves done, keepDrain=true)",
            d["operationId"].as_str().unwrap_or_default(),
            d["movesDone"],
            d["movesTotal"]
        ),
        None => "maintenance ended: the next proposal moves partitions back onto the broker".into(),
    };
    Ok(json!({
        "brokerId": broker,
        "maintenance": false,
        "drain": drain,
        "message": message,
    }))
}

// ------------------------------------------------------------------------- log directories

#[derive(Debug, Clone, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct DirMove {
    pub topic: String,
    pub partition: i32,
    /// The target log directory.
    pub path: String,
}

#[derive(Debug, Default, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct LogDirsBody {
    /// Explicit replica moves.
    pub moves: Option<Vec<DirMove>>,
    /// Or: every replica in directory `from` moves to directory `to`.
    pub from: Option<String>,
    pub to: Option<String>,
}

/// The operation `move_broker_logdirs`: moves replicas between the broker's log directories
/// under the mutation slot; audited `logdirs.move`.
pub async fn move_broker_logdirs(
    state: &Ops,
    actor: &Actor,
    broker: i32,
    body: LogDirsBody,
) -> Result<Value, OpError> {
    let explicit = body.moves.clone().unwrap_or_default();
    let by_dir = (body.from.as_deref(), body.to.as_deref());
    match (&body.moves, by_dir) {
        (Some(m), (None, None)) if !m.is_empty() => {}
        (None, (Some(f), Some(t))) if !f.is_empty() && !t.is_empty() && f != t => {}
        _ => {
            return Err(OpError::bad_input(
                "invalid log-directory move",
                "give either a non-empty moves list [{topic, partition, path}] or from and to (two different directories)",
            ))
        }
    }
    let client = state.kafka.client().await?;
    let dirs = client
        .describe_log_dirs(broker, None)
        .await
        .map_err(|e| match e {
            ballast_kafka::Error::UnknownBroker(_) => {
                OpError::not_found("broker not found", format!("no broker {broker} is up"))
            }
            e => cluster_error("log directories could not be read; nothing was changed", &e),
        })?;
    let online: BTreeSet<&str> = dirs
        .dirs
        .iter()
        .filter(|d| d.error.is_none())
        .map(|d| d.path.as_str())
        .collect();
    let mut current: BTreeMap<(String, i32), String> = BTreeMap::new();
    for d in &dirs.dirs {
        for r in d.replicas.iter().filter(|r| !r.is_future) {
            current.insert((r.topic.clone(), r.partition), d.path.clone());
        }
    }
    let moves: Vec<ReplicaLogDirMove> = if explicit.is_empty() {
        let (Some(from), Some(to)) = (body.from.as_deref(), body.to.as_deref()) else {
            return Err(OpError::bad_input(
                "invalid log-directory move",
                "from and to are required",
            ));
        };
        if !dirs.dirs.iter().any(|d| d.path == from) {
            return Err(OpError::bad_input(
                "unknown log directory",
                format!("broker {broker} has no log directory {from}"),
            ));
        }
        current
            .iter()
            .filter(|(_, dir)| dir.as_str() == from)
            .map(|((t, p), _)| ReplicaLogDirMove {
                topic: t.clone(),
                partition: *p,
                path: to.to_string(),
            })
            .collect()
    } else {
        explicit
            .iter()
            .map(|m| ReplicaLogDirMove {
                topic: m.topic.clone(),
                partition: m.partition,
                path: m.path.clone(),
            })
            .collect()
    };
    for m in &moves {
        if !online.contains(m.path.as_str()) {
            return Err(OpError::bad_input(
                "unknown log directory",
                format!(
                    "{} is not an online log directory of broker {broker}",
                    m.path
                ),
            ));
        }
        if !current.contains_key(&(m.topic.clone(), m.partition)) {
            return Err(OpError::bad_input(
                "no such replica",
                format!(
                    "broker {broker} holds no replica of {}-{}",
                    m.topic, m.partition
                ),
            ));
        }
    }
    if moves.is_empty() {
        return Ok(json!({ "brokerId": broker, "results": [], "message": "nothing to move" }));
    }
    let now = state.clock.now_ms();
    let ttl = millis(state.config.timing.slot_lease_ttl);
    let holder = format!("web:logdirs:{broker}:{now}");
    let lease = match state
        .db({
            let holder = holder.clone();
            move |s| s.acquire_idle_slot(&holder, "log-directory move", now, ttl)
        })
        .await?
    {
        Ok(l) => l,
        Err(busy) => return Err(busy_conflict(&busy)),
    };
    let mut event = actor.event(now, "logdirs.move", format!("broker {broker}"));
    event.summary = json!({ "broker": broker, "moves": moves.len() });
    let before = json!(moves
        .iter()
        .map(|m| json!({"topic": m.topic, "partition": m.partition, "path": current.get(&(m.topic.clone(), m.partition))}))
        .collect::<Vec<_>>());
    let after = json!(moves
        .iter()
        .map(|m| json!({"topic": m.topic, "partition": m.partition, "path": m.path}))
        .collect::<Vec<_>>());
    let outcome = state
        .pipeline
        .run([Resource::Broker(broker)], event, || async {
            let results = match client.alter_replica_log_dirs(broker, &moves).await {
                Ok(r) => r,
                Err(e) => {
                    let error = cluster_error("the log-directory move was not accepted", &e);
                    let details = format!("{}: {}", error.error, error.details);
                    return Err(NotDone::Failed {
                        error,
                        before: Some(before.clone()),
                        details,
                    });
                }
            };
            let rows: Vec<Value> = moves
                .iter()
                .zip(&results)
                .map(|(m, r)| {
                    json!({
                        "topic": m.topic,
                        "partition": m.partition,
                        "from": current.get(&(m.topic.clone(), m.partition)),
                        "to": m.path,
                        "success": r.error.is_none(),
                        "error": r.error.as_ref().map(|e| e.name),
                    })
                })
                .collect();
            let mut done = Done::new(rows, Some(before.clone()), Some(after.clone()));
            if results.iter().any(|r| r.error.is_some()) {
                done.status = 207;
                done.details = Some("some replicas were not moved; see the response".into());
            }
            Ok(done)
        })
        .await;
    let release = lease.clone();
    state.db(move |s| s.release_slot(&release)).await?;
    let (rows, _) = outcome?;
    Ok(json!({ "brokerId": broker, "results": rows }))
}

// ------------------------------------------------------------------------- elections

#[derive(Debug, Clone, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct PartitionRef {
    #[schema(schema_with = crate::schema::topic_name)]
    pub topic: String,
    #[schema(minimum = 0)]
    pub partition: i32,
}

#[derive(Debug, Default, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ClusterElection {
    /// Only these partitions; default every partition whose preferred leader does not lead.
    #[schema(min_items = 1)]
    pub partitions: Option<Vec<PartitionRef>>,
}

#[derive(Debug, Default, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct TopicElection {
    /// When given it must be the topic of the path.
    pub topic: Option<String>,
    #[schema(min_items = 1)]
    pub partitions: Option<Vec<i32>>,
}

/// What a preferred leader election covers: the body of the cluster-wide route, or the path's
/// topic and the body of the topic route.
#[derive(Debug)]
pub enum Election {
    /// `POST /api/v1/preferred-leader-election`.
    Cluster(ClusterElection),
    /// `POST /api/v1/topics/{topic}/preferred-leader-election`.
    Topic(String, TopicElection),
}

/// The operation `preferred_leader_election`: elects the preferred leaders of the cluster or of
/// one topic under the mutation slot; audited `leaders.elect`.
pub async fn preferred_leader_election(
    state: &Ops,
    actor: &Actor,
    election: Election,
) -> Result<Value, OpError> {
    match election {
        Election::Cluster(body) => elect_cluster_of(state, actor, body).await,
        Election::Topic(topic, body) => elect_topic_of(state, actor, topic, body).await,
    }
}

/// The cluster-wide election's rules.
async fn elect_cluster_of(
    state: &Ops,
    actor: &Actor,
    body: ClusterElection,
) -> Result<Value, OpError> {
    let tps: Option<Vec<TopicPartition>> = body.partitions.map(|list| {
        list.into_iter()
            .map(|p| TopicPartition::new(p.topic, p.partition))
            .collect()
    });
    if tps.as_ref().is_some_and(|t| t.is_empty()) {
        return Err(OpError::bad_input(
            "invalid election",
            "partitions must not be empty when given",
        ));
    }
    // Each named partition by Kafka's own rules, before anything is sent.
    for tp in tps.iter().flatten() {
        crate::reassignments::check_topic(&tp.topic)?;
        if tp.partition < 0 {
            return Err(OpError::bad_input(
                "invalid election",
                format!("partition must be 0 or more, got {}", tp.partition),
            ));
        }
    }
    elect(state, actor, tps, "cluster".to_string()).await
}

/// The topic election's rules: the body's topic must be the path's.
async fn elect_topic_of(
    state: &Ops,
    actor: &Actor,
    topic: String,
    body: TopicElection,
) -> Result<Value, OpError> {
    crate::reassignments::check_topic(&topic)?;
    if let Some(other) = body.topic.as_deref().filter(|t| *t != topic) {
        return Err(OpError::bad_input(
            "topic mismatch",
            format!("the body names topic {other} but the path names {topic}: a topic election affects only its topic"),
        ));
    }
    let client = state.kafka.client().await?;
    let md = client
        .metadata(Some(std::slice::from_ref(&topic)))
        .await
        .map_err(|e| cluster_error("topic metadata could not be read; nothing was changed", &e))?;
    let Some(t) = md.topic(&topic).filter(|t| t.error.is_none()) else {
        return Err(OpError::not_found(
            "topic not found",
            format!("no topic {topic}"),
        ));
    };
    let all: BTreeSet<i32> = t.partitions.iter().map(|p| p.partition).collect();
    let chosen: Vec<i32> = match body.partitions {
        Some(list) => {
            if list.is_empty() {
                return Err(OpError::bad_input(
                    "invalid election",
                    "partitions must not be empty when given",
                ));
            }
            if let Some(p) = list.iter().find(|p| !all.contains(p)) {
                return Err(OpError::not_found(
                    "partition not found",
                    format!("topic {topic} has no partition {p}"),
                ));
            }
            list
        }
        None => all.into_iter().collect(),
    };
    let tps = chosen
        .into_iter()
        .map(|p| TopicPartition::new(topic.clone(), p))
        .collect();
    elect(state, actor, Some(tps), topic).await
}

async fn elect(
    state: &Ops,
    actor: &Actor,
    tps: Option<Vec<TopicPartition>>,
    target: String,
) -> Result<Value, OpError> {
    let client = state.kafka.client().await?;
    let now = state.clock.now_ms();
    let ttl = millis(state.config.timing.slot_lease_ttl);
    let holder = format!("web:election:{now}");
    let lease = match state
        .db(move |s| s.acquire_idle_slot(&holder, "preferred leader election", now, ttl))
        .await?
    {
        Ok(l) => l,
        Err(busy) => return Err(busy_conflict(&busy)),
    };
    let mut event = actor.event(now, "leaders.elect", target.clone());
    event.summary = json!({ "scope": target });
    let outcome = state
        .pipeline
        .run([Resource::ReassignmentSlot], event, || async {
            let results = match client
                .elect_leaders(ElectionType::Preferred, tps.as_deref())
                .await
            {
                Ok(r) => r,
                Err(e) => {
                    let error = cluster_error("the election was not accepted", &e);
                    let details = format!("{}: {}", error.error, error.details);
                    return Err(NotDone::Failed {
                        error,
                        before: None,
                        details,
                    });
                }
            };
            let (mut elected, mut not_needed, mut failed) = (0u64, 0u64, 0u64);
            let rows: Vec<Value> = results
                .iter()
                .map(|r| {
                    let outcome = match &r.error {
                        None => {
                            elected += 1;
                            "elected"
                        }
                        Some(e) if e.name == "ELECTION_NOT_NEEDED" => {
                            not_needed += 1;
                            "not needed"
                        }
                        Some(_) => {
                            failed += 1;
                            "failed"
                        }
                    };
                    json!({
                        "topic": r.topic,
                        "partition": r.partition,
                        "outcome": outcome,
                        "error": r.error.as_ref().filter(|e| e.name != "ELECTION_NOT_NEEDED").map(|e| e.name),
                    })
                })
                .collect();
            let counts = json!({ "elected": elected, "notNeeded": not_needed, "failed": failed });
            if failed > 0 && elected == 0 && not_needed == 0 {
                // The cluster refused every partition the election named: nothing happened, and
                // the caller is told so as the audit log records it (500), never a 200 beside it.
                let refused: Vec<String> = results
                    .iter()
                    .filter_map(|r| {
                        r.error
                            .as_ref()
                            .map(|e| format!("{}-{}: {}", r.topic, r.partition, e.name))
                    })
                    .take(10)
                    .collect();
                let details = format!(
                    "the cluster refused the election of all {failed} partition(s): {}{}",
                    refused.join(", "),
                    if failed > 10 { ", …" } else { "" }
                );
                let all_are = |names: &[&str]| {
                    results
                        .iter()
                        .filter_map(|r| r.error.as_ref())
                        .all(|e| names.contains(&e.name))
                };
                // Partitions that do not exist: the caller's request, refused as asked; nothing
                // was changed and nothing is recorded (the intent is withdrawn).
                if all_are(&["UNKNOWN_TOPIC_OR_PARTITION", "INVALID_TOPIC_EXCEPTION"]) {
                    return Err(NotDone::Refused(OpError::not_found(
                        "unknown topic or partition",
                        details,
                    )));
                }
                // A preferred leader down or out of sync is the cluster's state, not a fault.
                let state_refusal =
                    all_are(&["PREFERRED_LEADER_NOT_AVAILABLE", "ELIGIBLE_LEADERS_NOT_AVAILABLE"]);
                let error = if state_refusal {
                    OpError::conflict("no leader was elected", details.clone())
                } else {
                    OpError::cluster("no leader was elected", details.clone())
                };
                return Err(NotDone::Failed {
                    error,
                    before: None,
                    details,
                });
            }
            let mut done = Done::new((elected, not_needed, failed, rows), None, Some(counts));
            if failed > 0 {
                // Some partitions were refused (a preferred leader down), the rest elected or
                // already led by their preferred leader: partly done.
                done.status = 207;
            }
            Ok(done)
        })
        .await;
    let release = lease.clone();
    state.db(move |s| s.release_slot(&release)).await?;
    let ((elected, not_needed, failed, rows), _) = outcome?;
    Ok(json!({
        "scope": target,
        "elected": elected,
        "notNeeded": not_needed,
        "failed": failed,
        "results": rows,
    }))
}
