//! Broker operations: maintenance (enter drains the broker, exit ends it), log-directory moves,
//! and preferred leader elections (cluster-wide and per topic). Shapes:
//! `docs/api/reassignments.md`.

use ballast_runtime::millis;
use std::collections::{BTreeMap, BTreeSet};

use axum::routing::post;
use axum::Router;
use ballast_kafka::{ElectionType, ReplicaLogDirMove, TopicPartition};
use ballast_model::BrokerId;
use ballast_moves::placement::{self, Part};
use ballast_schema::{Maintenance, NewOperation};
use serde::Deserialize;
use serde_json::{json, Value};

use super::reassignments::{conflict, gate, move_event, new_move, queue, racks, ForceQuery};
use crate::audit::Actor;
use crate::extract::{OptionalJson, Path, Query};
use crate::{observed_view, ApiError, ApiOk, ApiResult, AppState};
use ballast_ops::{Done, NotDone, Resource};

/// The operations of this module, as `routes()` serves them (`crate::openapi`).
#[derive(utoipa::OpenApi)]
#[openapi(paths(enter, exit, logdirs_move, elect_cluster, elect_topic))]
pub(super) struct Api;

pub fn routes() -> Router<AppState> {
    Router::new()
        .route(
            "/api/v1/brokers/{brokerId}/maintenance",
            post(enter).delete(exit),
        )
        .route(
            "/api/v1/brokers/{brokerId}/logdirs/move",
            post(logdirs_move),
        )
        .route("/api/v1/preferred-leader-election", post(elect_cluster))
        .route(
            "/api/v1/topics/{topic}/preferred-leader-election",
            post(elect_topic),
        )
}

fn cluster_error(what: &str, e: &dyn std::error::Error) -> ApiError {
    ApiError::unavailable(what.to_string(), ballast_runtime::error_chain(e))
}

// ------------------------------------------------------------------------- maintenance

#[derive(Debug, Default, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct EnterBody {
    /// Why (recorded with the maintenance).
    pub(crate) reason: Option<String>,
    /// Move leadership and replicas off the broker (default true).
    /// Queue a drain of the broker (default true).
    pub(crate) drain: Option<bool>,
}

#[utoipa::path(
    post,
    path = "/api/v1/brokers/{brokerId}/maintenance",
    tag = "brokers",
    operation_id = "enterMaintenance",
    summary = "Enter broker maintenance (drains it)",
    description = "Records the broker in maintenance and, unless `drain` is false, queues a two-phase drain (strategy `DRAIN`): leadership first, then replicas. Audited `brokers.maintenance.enter`.",
    params(("brokerId" = i32, Path, description = "broker id"), ForceQuery),
    request_body(content = Option<EnterBody>, description = "Optional"),
    responses(
        (status = 200, description = "In maintenance; the drain queued", body = ref("MaintenanceEntered")),
        (status = 404, description = "Unknown broker"),
        (status = 409, description = "Already in maintenance, the pre-flight refused, or the mutation slot is held"),
        (status = 503, description = "The cluster could not be read"),
    )
)]
async fn enter(
    state: axum::extract::State<AppState>,
    actor: Actor,
    Path(broker): Path<i32>,
    Query(q): Query<ForceQuery>,
    OptionalJson(body): OptionalJson<EnterBody>,
) -> ApiResult<Value> {
    set_broker_maintenance(&state, &actor, broker, q, body)
        .await
        .map(ApiOk)
}

/// The operation `set_broker_maintenance`: records the broker in maintenance and, unless `drain`
/// is false, queues its drain (strategy `DRAIN`); audited `brokers.maintenance.enter`.
pub(crate) async fn set_broker_maintenance(
    state: &AppState,
    actor: &Actor,
    broker: i32,
    q: ForceQuery,
    body: EnterBody,
) -> Result<Value, ApiError> {
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
        return Err(ApiError::not_found(
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
        .map(|v| {
            v.raw
                .partitions
                .iter()
                .map(|p| {
                    (
                        (p.topic.clone(), p.partition),
                        p.size_bytes.unwrap_or(0).max(0) as u64,
                    )
                })
                .collect()
        })
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

#[utoipa::path(
    delete,
    path = "/api/v1/brokers/{brokerId}/maintenance",
    tag = "brokers",
    operation_id = "exitMaintenance",
    summary = "Exit broker maintenance",
    description = "Ends the maintenance; the next proposal moves partitions back onto the broker. Audited `brokers.maintenance.exit`.",
    params(("brokerId" = i32, Path, description = "broker id")),
    responses(
        (status = 200, description = "Maintenance ended", body = ref("MaintenanceExited")),
        (status = 404, description = "The broker is not in maintenance"),
    )
)]
async fn exit(
    state: axum::extract::State<AppState>,
    actor: Actor,
    Path(broker): Path<i32>,
) -> ApiResult<Value> {
    remove_broker_maintenance(&state, &actor, broker)
        .await
        .map(ApiOk)
}

/// The operation `remove_broker_maintenance`: ends the broker's maintenance; audited
/// `brokers.maintenance.exit`.
pub(crate) async fn remove_broker_maintenance(
    state: &AppState,
    actor: &Actor,
    broker: i32,
) -> Result<Value, ApiError> {
    let mut event = actor.event(
        state.clock.now_ms(),
        "brokers.maintenance.exit",
        format!("broker {broker}"),
    );
    event.summary = json!({ "broker": broker });
    state
        .pipeline
        .run([Resource::Broker(broker)], event, || async {
            let removed = state
                .db(move |s| s.exit_maintenance(broker))
                .await
                .map_err(NotDone::Refused)?;
            if !removed {
                return Err(NotDone::Refused(ApiError::not_found(
                    "broker not in maintenance",
                    format!("broker {broker} is not in maintenance"),
                )));
            }
            Ok(Done::new(
                (),
                Some(json!({ "maintenance": true })),
                Some(json!({ "maintenance": false })),
            ))
        })
        .await?;
    Ok(json!({
        "brokerId": broker,
        "maintenance": false,
        "message": "maintenance ended: the next proposal moves partitions back onto the broker",
    }))
}

// ------------------------------------------------------------------------- log directories

#[derive(Debug, Clone, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct DirMove {
    pub(crate) topic: String,
    pub(crate) partition: i32,
    /// The target log directory.
    pub(crate) path: String,
}

#[derive(Debug, Default, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct LogDirsBody {
    /// Explicit replica moves.
    pub(crate) moves: Option<Vec<DirMove>>,
    /// Or: every replica in directory `from` moves to directory `to`.
    pub(crate) from: Option<String>,
    pub(crate) to: Option<String>,
}

#[utoipa::path(
    post,
    path = "/api/v1/brokers/{brokerId}/logdirs/move",
    tag = "brokers",
    operation_id = "moveLogDirs",
    summary = "Move replicas between log directories",
    description = "Explicit `moves`, or every replica of directory `from` to `to`. Takes the mutation slot for the request; audited `logdirs.move`.",
    params(("brokerId" = i32, Path, description = "broker id")),
    request_body(content = LogDirsBody),
    responses(
        (status = 200, description = "One result per replica", body = ref("LogDirMoves")),
        (status = 400, description = "A path that is not an online log directory of the broker, or a replica the broker does not hold; nothing was sent"),
        (status = 404, description = "The broker is not up"),
        (status = 409, description = "The mutation slot is held"),
        (status = 503, description = "The cluster could not be read"),
    )
)]
async fn logdirs_move(
    state: axum::extract::State<AppState>,
    actor: Actor,
    Path(broker): Path<i32>,
    OptionalJson(body): OptionalJson<LogDirsBody>,
) -> ApiResult<Value> {
    move_broker_logdirs(&state, &actor, broker, body)
        .await
        .map(ApiOk)
}

/// The operation `move_broker_logdirs`: moves replicas between the broker's log directories
/// under the mutation slot; audited `logdirs.move`.
pub(crate) async fn move_broker_logdirs(
    state: &AppState,
    actor: &Actor,
    broker: i32,
    body: LogDirsBody,
) -> Result<Value, ApiError> {
    let explicit = body.moves.clone().unwrap_or_default();
    let by_dir = (body.from.as_deref(), body.to.as_deref());
    match (&body.moves, by_dir) {
        (Some(m), (None, None)) if !m.is_empty() => {}
        (None, (Some(f), Some(t))) if !f.is_empty() && !t.is_empty() && f != t => {}
        _ => {
            return Err(ApiError::bad_request(
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
                ApiError::not_found("broker not found", format!("no broker {broker} is up"))
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
            return Err(ApiError::bad_request(
                "invalid log-directory move",
                "from and to are required",
            ));
        };
        if !dirs.dirs.iter().any(|d| d.path == from) {
            return Err(ApiError::bad_request(
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
            return Err(ApiError::bad_request(
                "unknown log directory",
                format!(
                    "{} is not an online log directory of broker {broker}",
                    m.path
                ),
            ));
        }
        if !current.contains_key(&(m.topic.clone(), m.partition)) {
            return Err(ApiError::bad_request(
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
        Err(busy) => return Err(super::reassignments::busy_conflict(&busy)),
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
pub(crate) struct PartitionRef {
    pub(crate) topic: String,
    pub(crate) partition: i32,
}

#[derive(Debug, Default, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct ClusterElection {
    /// Only these partitions; default every partition whose preferred leader does not lead.
    #[schema(min_items = 1)]
    pub(crate) partitions: Option<Vec<PartitionRef>>,
}

#[derive(Debug, Default, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct TopicElection {
    /// When given it must be the topic of the path.
    pub(crate) topic: Option<String>,
    #[schema(min_items = 1)]
    pub(crate) partitions: Option<Vec<i32>>,
}

/// What a preferred leader election covers: the body of the cluster-wide route, or the path's
/// topic and the body of the topic route.
#[derive(Debug)]
pub(crate) enum Election {
    /// `POST /api/v1/preferred-leader-election`.
    Cluster(ClusterElection),
    /// `POST /api/v1/topics/{topic}/preferred-leader-election`.
    Topic(String, TopicElection),
}

#[utoipa::path(
    post,
    path = "/api/v1/preferred-leader-election",
    tag = "brokers",
    operation_id = "electPreferredLeaders",
    summary = "Cluster-wide preferred leader election",
    description = "Default: every partition whose preferred leader does not lead. Takes the mutation slot for the election; audited `leaders.elect`.",
    request_body(content = Option<ClusterElection>, description = "Optional"),
    responses(
        (status = 200, description = "Every partition's outcome", body = ref("Election")),
        (status = 409, description = "The mutation slot is held"),
        (status = 503, description = "The cluster could not be read"),
    )
)]
async fn elect_cluster(
    state: axum::extract::State<AppState>,
    actor: Actor,
    OptionalJson(body): OptionalJson<ClusterElection>,
) -> ApiResult<Value> {
    preferred_leader_election(&state, &actor, Election::Cluster(body))
        .await
        .map(ApiOk)
}

/// The operation `preferred_leader_election`: elects the preferred leaders of the cluster or of
/// one topic under the mutation slot; audited `leaders.elect`.
pub(crate) async fn preferred_leader_election(
    state: &AppState,
    actor: &Actor,
    election: Election,
) -> Result<Value, ApiError> {
    match election {
        Election::Cluster(body) => elect_cluster_of(state, actor, body).await,
        Election::Topic(topic, body) => elect_topic_of(state, actor, topic, body).await,
    }
}

/// The cluster-wide election's rules.
async fn elect_cluster_of(
    state: &AppState,
    actor: &Actor,
    body: ClusterElection,
) -> Result<Value, ApiError> {
    let tps: Option<Vec<TopicPartition>> = body.partitions.map(|list| {
        list.into_iter()
            .map(|p| TopicPartition::new(p.topic, p.partition))
            .collect()
    });
    if tps.as_ref().is_some_and(|t| t.is_empty()) {
        return Err(ApiError::bad_request(
            "invalid election",
            "partitions must not be empty when given",
        ));
    }
    elect(state, actor, tps, "cluster".to_string()).await
}

#[utoipa::path(
    post,
    path = "/api/v1/topics/{topic}/preferred-leader-election",
    tag = "brokers",
    operation_id = "electTopicPreferredLeaders",
    summary = "Preferred leader election of one topic",
    description = "Touches only the path's topic. Audited `leaders.elect`.",
    params(("topic" = String, Path, description = "topic name")),
    request_body(content = Option<TopicElection>, description = "Optional"),
    responses(
        (status = 200, description = "Every partition's outcome", body = ref("Election")),
        (status = 400, description = "The body names another topic"),
        (status = 404, description = "Unknown topic"),
        (status = 409, description = "The mutation slot is held"),
        (status = 503, description = "The cluster could not be read"),
    )
)]
async fn elect_topic(
    state: axum::extract::State<AppState>,
    actor: Actor,
    Path(topic): Path<String>,
    OptionalJson(body): OptionalJson<TopicElection>,
) -> ApiResult<Value> {
    preferred_leader_election(&state, &actor, Election::Topic(topic, body))
        .await
        .map(ApiOk)
}

/// The topic election's rules: the body's topic must be the path's.
async fn elect_topic_of(
    state: &AppState,
    actor: &Actor,
    topic: String,
    body: TopicElection,
) -> Result<Value, ApiError> {
    if let Some(other) = body.topic.as_deref().filter(|t| *t != topic) {
        return Err(ApiError::bad_request(
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
        return Err(ApiError::not_found(
            "topic not found",
            format!("no topic {topic}"),
        ));
    };
    let all: BTreeSet<i32> = t.partitions.iter().map(|p| p.partition).collect();
    let chosen: Vec<i32> = match body.partitions {
        Some(list) => {
            if list.is_empty() {
                return Err(ApiError::bad_request(
                    "invalid election",
                    "partitions must not be empty when given",
                ));
            }
            if let Some(p) = list.iter().find(|p| !all.contains(p)) {
                return Err(ApiError::not_found(
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
    state: &AppState,
    actor: &Actor,
    tps: Option<Vec<TopicPartition>>,
    target: String,
) -> Result<Value, ApiError> {
    let client = state.kafka.client().await?;
    let now = state.clock.now_ms();
    let ttl = millis(state.config.timing.slot_lease_ttl);
    let holder = format!("web:election:{now}");
    let lease = match state
        .db(move |s| s.acquire_idle_slot(&holder, "preferred leader election", now, ttl))
        .await?
    {
        Ok(l) => l,
        Err(busy) => return Err(super::reassignments::busy_conflict(&busy)),
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
            let mut done = Done::new((elected, not_needed, failed, rows), None, Some(counts));
            if failed > 0 && elected == 0 {
                done.status = 500;
                done.details = Some("no leader was elected; see the response".into());
            } else if failed > 0 {
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
