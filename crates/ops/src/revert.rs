//! Reverting a recorded change: put the event's `before` back.
//!
//! 1. `POST /api/v1/audit-log/revert/preview` `{"eventId"}` reads the live values of everything
//!    the event changed and answers, per item, the value the event recorded after its change
//!    (`audited`), the value now (`current`) and the value a revert sets (`revertTo`), with a
//!    `fingerprint` of the current values.
//! 2. `POST /api/v1/audit-log/revert` `{"eventId", "fingerprint"}` reads them again and changes
//!    nothing (409) when the fingerprint is missing or no longer matches (something changed since
//!    the preview) or when an item differs from what the event recorded after its change
//!    (someone changed it since: reverting would undo their change too). Otherwise it applies the
//!    revert, records an `audit.revert` event (`relatedEventId` = the reverted event, `before` and
//!    `after` in the reverted event's shape, so a revert can itself be reverted) and answers 202
//!    with an `executionId`.
//!
//! Revertible: topic configuration (`topics.config.update`, `topics.config.bulk_update`), quotas
//! (`quotas.update`, `quotas.delete`), ACLs (`acls.create`, `acls.update`, `acls.delete`), and
//! reverts of those (`audit.revert`). `reassignments.apply` events with partition replica lists
//! are previewed against the live placement; submitting one goes through
//! [`queue_reassignment_revert`]. `selfheal.apply` is never reverted.

use std::collections::{BTreeMap, BTreeSet};

use ballast_kafka::{AclBinding, BrokerId, Client, QuotaEntity, TopicPartition};
use ballast_schema::{AuditEvent, NewAuditEvent};
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use crate::actor::Actor;
use crate::context::Context as Ops;
use crate::error::{Kind, OpError};
use crate::pipeline::{Audited, Done, NotDone, Resource};
use crate::{acls, quotas, topic_configs as configs};

/// One revert at a time in this process: the check of the current values and the change belong
/// together. (Only the web process reverts.)
static REVERTS: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

const FINGERPRINT_PREFIX: &str = "rv1-";

#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PreviewBody {
    pub event_id: i64,
}

#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct RevertBody {
    pub event_id: i64,
    /// The `fingerprint` of a preview; required.
    pub fingerprint: Option<String>,
}

/// What a recorded change touched, with its values before and after the change.
#[derive(Debug, Clone, PartialEq)]
enum Plan {
    TopicConfig {
        before: configs::TopicOverrides,
        after: configs::TopicOverrides,
    },
    Quota {
        entity: QuotaEntity,
        before: quotas::Values,
        after: quotas::Values,
    },
    Acl {
        /// Every binding the change touched (present before or after it).
        affected: Vec<AclBinding>,
        before: Vec<AclBinding>,
        after: Vec<AclBinding>,
    },
    Reassignment {
        before: BTreeMap<TopicPartition, Vec<BrokerId>>,
        after: BTreeMap<TopicPartition, Vec<BrokerId>>,
    },
    /// A topic ballast created: reverted by deleting it.
    TopicCreate { topic: String, partitions: usize },
}

/// The live values of what a plan touches.
#[derive(Debug, Clone, PartialEq)]
enum Current {
    TopicConfig(configs::TopicOverrides),
    Quota(quotas::Values),
    /// Presence of each affected binding, in the plan's order.
    Acl(Vec<bool>),
    /// None: the partition no longer exists.
    Reassignment(BTreeMap<TopicPartition, Option<Vec<BrokerId>>>),
    /// The topic's partition count, None when it no longer exists; the consumer groups with
    /// committed offsets on it (as last read).
    TopicCreate(Option<usize>, Vec<String>),
}

/// One value a revert looks at.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Item {
    /// Which value: `{topic, name}`, `{key}`, a binding, `{topic, partition}`.
    item: Value,
    /// Recorded after the change.
    audited: Value,
    /// Now.
    current: Value,
    /// What the revert sets (recorded before the change).
    revert_to: Value,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Preview {
    event_id: i64,
    action: String,
    target: Option<String>,
    kind: &'static str,
    /// Whether a revert with this fingerprint would be accepted now.
    can_revert: bool,
    /// Why not, when it would not.
    #[serde(skip_serializing_if = "Option::is_none")]
    reason: Option<String>,
    fingerprint: String,
    /// Items a revert would change.
    changes: Vec<Item>,
    /// Items changed since the audited change (a revert is refused while there are any).
    conflicts: Vec<Item>,
    /// The `audit.revert` event that already reverted this one (null when none did).
    reverted_by: Option<i64>,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Reverted {
    execution_id: String,
    event_id: i64,
    kind: &'static str,
    /// `completed` for configuration, quota and ACL reverts (applied before the answer);
    /// `queued` for a reassignment revert.
    state: &'static str,
    changes: Vec<Item>,
    /// Set when the cluster did not show the revert in time (the event's `after` is what it
    /// showed).
    #[serde(skip_serializing_if = "Option::is_none")]
    note: Option<String>,
    #[serde(flatten)]
    audit: Audited,
}

fn not_revertible(details: impl Into<String>) -> OpError {
    OpError::bad_input("event cannot be reverted", details)
}

fn conflict(error: &str, details: impl Into<String>) -> OpError {
    OpError::conflict(error, details)
}

const REVERTIBLE: &str = "topics.config.update, topics.config.bulk_update, topics.create, topics.replication_factor, quotas.update, quotas.delete, acls.create, acls.update, acls.delete, reassignments.apply, audit.revert";

/// The kind of a revertible action; `audit.revert` events name theirs in `summary.kind`.
fn kind_of(e: &AuditEvent) -> Result<&'static str, OpError> {
    let kind = match e.action.as_str() {
        "selfheal.apply" => {
            return Err(not_revertible(
                "self-healing events (selfheal.apply) are never reverted: the healer acted on the cluster's state at the time; plan a new change instead",
            ))
        }
        "topics.config.update" | "topics.config.bulk_update" => "topicConfig",
        "quotas.update" | "quotas.delete" => "quota",
        "acls.create" | "acls.update" | "acls.delete" => "acl",
        "reassignments.apply" | "topics.replication_factor" => "reassignment",
        "topics.create" => "topicCreate",
        "topics.delete" => {
            return Err(not_revertible(
                "a deleted topic cannot be restored: its messages are gone (the event keeps its configs and assignment; create it again with POST /api/v1/topics)",
            ))
        }
        "topics.partitions.add" => {
            return Err(not_revertible(
                "added partitions cannot be removed: Kafka cannot lower a topic's partition count",
            ))
        }
        "audit.revert" => match e.summary.get("kind").and_then(Value::as_str) {
            Some("topicCreate") => {
                return Err(not_revertible(
                    "this revert deleted a topic; a deleted topic's messages cannot be restored",
                ))
            }
            Some("topicConfig") => "topicConfig",
            Some("quota") => "quota",
            Some("acl") => "acl",
            Some("reassignment") => "reassignment",
            _ => return Err(not_revertible("this revert event does not say what it reverted")),
        },
        other => {
            return Err(not_revertible(format!(
                "{other} events cannot be reverted; revertible actions: {REVERTIBLE}"
            )))
        }
    };
    if !(200..300).contains(&e.status) {
        return Err(not_revertible(format!(
            "event {} records a failure (status {}); only changes that were made can be reverted",
            e.id, e.status
        )));
    }
    Ok(kind)
}

/// Whether the event is of a revertible kind (for the list's `revertible` flag; the live values
/// decide whether a revert is accepted now).
pub fn revertible(e: &AuditEvent) -> bool {
    kind_of(e).is_ok_and(|kind| plan_of(e, kind).is_ok())
}

fn malformed(e: &AuditEvent, what: &str) -> OpError {
    not_revertible(format!(
        "event {} ({}) does not hold {what} in before and after",
        e.id, e.action
    ))
}

/// The plan of a revertible event from its `before` and `after`.
fn plan_of(e: &AuditEvent, kind: &str) -> Result<Plan, OpError> {
    let (Some(before), Some(after)) = (&e.before, &e.after) else {
        return Err(malformed(e, "the values"));
    };
    match kind {
        "topicConfig" => {
            let (Some(before), Some(after)) =
                (configs::from_json(before), configs::from_json(after))
            else {
                return Err(malformed(e, "topic overrides"));
            };
            Ok(Plan::TopicConfig { before, after })
        }
        "quota" => {
            let (Some((entity, before)), Some((entity_after, after))) =
                (quotas::from_json(before), quotas::from_json(after))
            else {
                return Err(malformed(e, "a quota entity path and values"));
            };
            if entity != entity_after {
                return Err(malformed(e, "one quota entity"));
            }
            Ok(Plan::Quota {
                entity,
                before,
                after,
            })
        }
        "acl" => {
            let (Some(before), Some(after)) = (acls::from_json(before), acls::from_json(after))
            else {
                return Err(malformed(e, "acl bindings"));
            };
            let mut affected = before.clone();
            affected.extend(after.iter().cloned());
            let mut seen = std::collections::HashSet::new();
            affected.retain(|b| seen.insert(b.clone()));
            affected.sort_by_cached_key(acls::sort_key);
            Ok(Plan::Acl {
                affected,
                before,
                after,
            })
        }
        "reassignment" => {
            let target = e.target.as_deref();
            let (Some(before), Some(after)) =
                (placements(before, target), placements(after, target))
            else {
                return Err(malformed(e, "partition replica lists"));
            };
            if after.is_empty() || after.keys().any(|tp| !before.contains_key(tp)) {
                return Err(malformed(e, "the same partitions"));
            }
            Ok(Plan::Reassignment { before, after })
        }
        "topicCreate" => {
            let topic = after
                .get("topic")
                .and_then(Value::as_str)
                .ok_or_else(|| malformed(e, "the topic"))?;
            let partitions = after
                .get("assignment")
                .and_then(Value::as_array)
                .ok_or_else(|| malformed(e, "the topic's assignment"))?
                .len();
            let _ = before;
            Ok(Plan::TopicCreate {
                topic: topic.to_string(),
                partitions,
            })
        }
        _ => Err(not_revertible(format!("unknown kind {kind}"))),
    }
}

/// Partition replica lists in the shapes a reassignment event may hold: `{"partitions": [{topic,
/// partition, replicas}]}`, a list of those, one `{topic, partition, replicas}`, or
/// `{"replicas": [...]}` with the partition in the target (`topic-partition`).
fn placements(v: &Value, target: Option<&str>) -> Option<BTreeMap<TopicPartition, Vec<BrokerId>>> {
    fn replicas(v: &Value) -> Option<Vec<BrokerId>> {
        v.as_array()?
            .iter()
            .map(|b| b.as_i64().and_then(|b| BrokerId::try_from(b).ok()))
            .collect()
    }
    fn one(v: &Value, target: Option<&str>) -> Option<(TopicPartition, Vec<BrokerId>)> {
        let replicas = replicas(v.get("replicas")?)?;
        let tp = match (v.get("topic").and_then(Value::as_str), v.get("partition")) {
            (Some(topic), Some(p)) => TopicPartition::new(topic, i32::try_from(p.as_i64()?).ok()?),
            _ => {
                let (topic, p) = target?.rsplit_once('-')?;
                TopicPartition::new(topic, p.parse().ok()?)
            }
        };
        Some((tp, replicas))
    }
    let list = match v {
        Value::Array(items) => items.as_slice(),
        Value::Object(o) => match o.get("partitions") {
            Some(Value::Array(items)) => items.as_slice(),
            _ => return one(v, target).map(|p| BTreeMap::from([p])),
        },
        _ => return None,
    };
    list.iter().map(|p| one(p, None)).collect()
}

fn kind_name(p: &Plan) -> &'static str {
    match p {
        Plan::TopicConfig { .. } => "topicConfig",
        Plan::Quota { .. } => "quota",
        Plan::Acl { .. } => "acl",
        Plan::Reassignment { .. } => "reassignment",
        Plan::TopicCreate { .. } => "topicCreate",
    }
}

/// Reads the live values of what `plan` touches. A target that no longer exists is a conflict.
async fn read_current(state: &Ops, client: &Client, plan: &Plan) -> Result<Current, OpError> {
    let gone = |e: OpError| {
        if e.kind == Kind::NotFound {
            conflict(
                "target changed since the audited change",
                format!("{} ({}); nothing was changed", e.details, e.error),
            )
        } else {
            e
        }
    };
    Ok(match plan {
        Plan::TopicConfig { before, after } => {
            let mut wanted = after.clone();
            for (topic, keys) in before {
                let entry = wanted.entry(topic.clone()).or_default();
                for key in keys.keys() {
                    entry.entry(key.clone()).or_insert(None);
                }
            }
            Current::TopicConfig(
                configs::read_all(state, client, &wanted)
                    .await
                    .map_err(gone)?,
            )
        }
        Plan::Quota { entity, .. } => Current::Quota(quotas::read(state, client, entity).await?),
        Plan::Acl { affected, .. } => Current::Acl(acls::present(state, client, affected).await?),
        Plan::TopicCreate { topic, .. } => {
            let metadata = client
                .metadata(Some(std::slice::from_ref(topic)))
                .await
                .map_err(|e| crate::cluster::change_failed(&state.kafka, e))?;
            let partitions = metadata
                .topic(topic)
                .filter(|t| t.error.is_none())
                .map(|t| t.partitions.len());
            let mut groups: Vec<String> = crate::view::current(state)
                .await?
                .map(|v| {
                    v.raw
                        .group_offsets
                        .iter()
                        .filter(|o| &o.topic == topic)
                        .map(|o| o.group_id.clone())
                        .collect()
                })
                .unwrap_or_default();
            groups.sort();
            groups.dedup();
            Current::TopicCreate(partitions, groups)
        }
        Plan::Reassignment { after, .. } => {
            let topics: Vec<String> = after
                .keys()
                .map(|tp| tp.topic.clone())
                .collect::<BTreeSet<_>>()
                .into_iter()
                .collect();
            let metadata = client
                .metadata(Some(&topics))
                .await
                .map_err(|e| crate::cluster::change_failed(&state.kafka, e))?;
            Current::Reassignment(
                after
                    .keys()
                    .map(|tp| {
                        (
                            tp.clone(),
                            metadata.partition(tp).map(|p| p.replicas.clone()),
                        )
                    })
                    .collect(),
            )
        }
    })
}

/// Every value the revert looks at, in a fixed order.
fn items(plan: &Plan, current: &Current) -> Vec<Item> {
    match (plan, current) {
        (Plan::TopicConfig { before, after }, Current::TopicConfig(now)) => now
            .iter()
            .flat_map(|(topic, keys)| {
                keys.iter().map(move |(name, value)| {
                    let at = |m: &configs::TopicOverrides| {
                        json!(m.get(topic).and_then(|k| k.get(name)).cloned().flatten())
                    };
                    Item {
                        item: json!({ "topic": topic, "name": name }),
                        audited: at(after),
                        current: json!(value),
                        revert_to: at(before),
                    }
                })
            })
            .collect(),
        (Plan::Quota { before, after, .. }, Current::Quota(now)) => {
            let keys: BTreeSet<&String> = before
                .keys()
                .chain(after.keys())
                .chain(now.keys())
                .collect();
            keys.into_iter()
                .map(|key| Item {
                    item: json!({ "key": key }),
                    audited: json!(after.get(key)),
                    current: json!(now.get(key)),
                    revert_to: json!(before.get(key)),
                })
                .collect()
        }
        (
            Plan::Acl {
                affected,
                before,
                after,
            },
            Current::Acl(now),
        ) => affected
            .iter()
            .zip(now)
            .map(|(b, present)| Item {
                item: json!(b),
                audited: json!({ "present": after.contains(b) }),
                current: json!({ "present": present }),
                revert_to: json!({ "present": before.contains(b) }),
            })
            .collect(),
        (Plan::TopicCreate { topic, partitions }, Current::TopicCreate(now, groups)) => {
            vec![Item {
                item: json!({ "topic": topic }),
                audited: json!({ "exists": true, "partitions": partitions, "consumerGroups": [] }),
                current: json!({ "exists": now.is_some(), "partitions": now, "consumerGroups": groups }),
                revert_to: json!({ "exists": false, "partitions": null, "consumerGroups": [] }),
            }]
        }
        (Plan::Reassignment { before, after }, Current::Reassignment(now)) => after
            .iter()
            .map(|(tp, replicas)| Item {
                item: json!({ "topic": tp.topic, "partition": tp.partition }),
                audited: json!(replicas),
                current: json!(now.get(tp).cloned().flatten()),
                revert_to: json!(before.get(tp)),
            })
            .collect(),
        _ => Vec::new(),
    }
}

/// The fingerprint of the current values a revert of `event_id` would act on.
fn fingerprint(event_id: i64, items: &[Item]) -> String {
    let state: Vec<(&Value, &Value)> = items.iter().map(|i| (&i.item, &i.current)).collect();
    let text = json!([event_id, state]).to_string();
    format!(
        "{FINGERPRINT_PREFIX}{:016x}",
        ballast_runtime::topology::fnv1a(text.as_bytes())
    )
}

struct Review {
    /// The `audit.revert` event that already reverted this one, if any.
    reverted_by: Option<i64>,
    event: AuditEvent,
    plan: Plan,
    current: Current,
    items: Vec<Item>,
    fingerprint: String,
}

impl Review {
    /// Items changed since the audited change. A partition a reassignment never moved (the
    /// operation was cancelled or failed before it) still holds what the event recorded before:
    /// not a conflict, and nothing to revert for it — so the moves that did complete can be
    /// undone.
    fn conflicts(&self) -> Vec<Item> {
        let placement = matches!(self.plan, Plan::Reassignment { .. });
        self.items
            .iter()
            .filter(|i| i.current != i.audited && !(placement && i.current == i.revert_to))
            .cloned()
            .collect()
    }

    fn changes(&self) -> Vec<Item> {
        self.items
            .iter()
            .filter(|i| i.current != i.revert_to)
            .cloned()
            .collect()
    }

    /// Why a revert would be refused now (before looking at the fingerprint).
    fn refusal(&self) -> Option<OpError> {
        if let (Some(by), true) = (self.reverted_by, self.changes().is_empty()) {
            return Some(conflict(
                "already reverted",
                format!(
                    "event {} was reverted by event {by}; its values before are in place",
                    self.event.id
                ),
            ));
        }
        let conflicts = self.conflicts();
        if !conflicts.is_empty() {
            let listed: Vec<String> = conflicts
                .iter()
                .map(|c| format!("{}: audited {}, now {}", c.item, c.audited, c.current))
                .collect();
            return Some(conflict(
                "target changed since the audited change",
                format!(
                    "reverting event {} would undo later changes, so nothing was changed: {}",
                    self.event.id,
                    listed.join("; ")
                ),
            ));
        }
        if self.changes().is_empty() {
            return Some(conflict(
                "nothing to revert",
                format!(
                    "the values event {} recorded before its change are already in place",
                    self.event.id
                ),
            ));
        }
        None
    }
}

async fn review(state: &Ops, event_id: i64) -> Result<(Client, Review), OpError> {
    let event = state
        .db(move |store| store.audit_event(event_id))
        .await?
        .ok_or_else(|| {
            OpError::not_found("unknown audit event", format!("no audit event {event_id}"))
        })?;
    let kind = kind_of(&event)?;
    let plan = plan_of(&event, kind)?;
    let client = state.kafka.client().await?;
    let current = read_current(state, &client, &plan).await?;
    let items = items(&plan, &current);
    let fingerprint = fingerprint(event.id, &items);
    let reverted_by = state.db(move |store| store.reverted_by(event_id)).await?;
    Ok((
        client,
        Review {
            reverted_by,
            event,
            plan,
            current,
            items,
            fingerprint,
        },
    ))
}

/// The preview step of the operation `revert_audit_event`: what a revert of the event would
/// change now, whether it would be accepted, and the `fingerprint` it must send.
pub async fn preview_revert(state: &Ops, body: PreviewBody) -> Result<Preview, OpError> {
    let (_, r) = review(state, body.event_id).await?;
    let refusal = r.refusal();
    Ok(Preview {
        event_id: r.event.id,
        action: r.event.action.clone(),
        target: r.event.target.clone(),
        kind: kind_name(&r.plan),
        can_revert: refusal.is_none(),
        reason: refusal.map(|e| format!("{}: {}", e.error, e.details)),
        fingerprint: r.fingerprint.clone(),
        changes: r.changes(),
        conflicts: r.conflicts(),
        reverted_by: r.reverted_by,
    })
}

/// The operation `revert_audit_event`: puts the event's recorded `before` back when nothing
/// changed since the preview's `fingerprint` (configuration, quota, ACL: applied; placement:
/// queued for the executor); audited `audit.revert` (the REST answer's status is 202).
pub async fn revert_audit_event(
    state: &Ops,
    actor: &Actor,
    body: RevertBody,
) -> Result<Reverted, OpError> {
    let _one_at_a_time = REVERTS.lock().await;
    let (_, r) = review(state, body.event_id).await?;
    if let Some(refused) = r.refusal() {
        return Err(refused);
    }
    match body.fingerprint.as_deref().map(str::trim) {
        None | Some("") => {
            return Err(conflict(
                "missing fingerprint",
                "preview the revert first (POST /api/v1/audit-log/revert/preview) and send its fingerprint",
            ))
        }
        Some(f) if f != r.fingerprint => {
            return Err(conflict(
                "stale fingerprint",
                "the values changed since the preview; nothing was changed: preview again",
            ))
        }
        Some(_) => {}
    }
    let changes = r.changes();
    let now_ms = state.clock.now_ms();
    // The `audit.revert` event, in the reverted event's shape.
    let mut event = actor.event(
        now_ms,
        "audit.revert",
        r.event.target.clone().unwrap_or_default(),
    );
    event.status = 202;
    event.related_event_id = Some(r.event.id);
    event.summary = json!({
        "kind": kind_name(&r.plan),
        "revertedEventId": r.event.id,
        "revertedAction": r.event.action,
        "changes": changes.len(),
    });
    let (execution_id, state_name, audit, note) = match &r.plan {
        Plan::Reassignment { before, .. } => {
            let moves: Vec<(TopicPartition, Vec<BrokerId>)> = changes
                .iter()
                .filter_map(|c| {
                    let topic = c.item.get("topic")?.as_str()?;
                    let partition = i32::try_from(c.item.get("partition")?.as_i64()?).ok()?;
                    let tp = TopicPartition::new(topic, partition);
                    let replicas = before.get(&tp)?.clone();
                    Some((tp, replicas))
                })
                .collect();
            let placement = |pick: fn(&Item) -> &Value| {
                Value::Array(
                    changes
                        .iter()
                        .map(|c| {
                            json!({ "topic": c.item["topic"], "partition": c.item["partition"], "replicas": pick(c) })
                        })
                        .collect(),
                )
            };
            event.before = Some(placement(|c| &c.current));
            event.after = Some(placement(|c| &c.revert_to));
            let queued = queue_reassignment_revert(state, actor, &r.event, &moves, event).await?;
            (
                queued.operation_id,
                "queued",
                Audited {
                    audit_event_id: Some(queued.audit_event_id),
                    audit_error: None,
                },
                None,
            )
        }
        plan => {
            let execution_id = format!("revert-{}-{now_ms}", r.event.id);
            if let Value::Object(summary) = &mut event.summary {
                summary.insert("executionId".into(), json!(execution_id));
            }
            let fingerprint = r.fingerprint.clone();
            let id = r.event.id;
            // Reviewed again while the resources are held: a change that slipped in since the
            // first review refuses the revert instead of being overwritten.
            let (note, recorded) = state
                .pipeline
                .run(resources_of(plan), event, || async {
                    let (client, now) = review(state, id).await.map_err(NotDone::Refused)?;
                    if now.fingerprint != fingerprint {
                        return Err(NotDone::Refused(conflict(
                            "stale fingerprint",
                            "the values changed since the preview; nothing was changed: preview again",
                        )));
                    }
                    let before = current_json(&now.plan, &now.current);
                    match apply(state, &client, &now.plan, &now.current).await {
                        Ok((after, note)) => {
                            let mut done =
                                Done::new(note.clone(), Some(before), Some(after)).noted(note);
                            done.status = 202;
                            Ok(done)
                        }
                        Err(error) => {
                            let details = format!(
                                "the revert failed after it was sent: {}: {}",
                                error.error, error.details
                            );
                            Err(NotDone::Failed {
                                error,
                                before: Some(before),
                                details,
                            })
                        }
                    }
                })
                .await?;
            (execution_id, "completed", Audited::from(recorded), note)
        }
    };
    Ok(Reverted {
        execution_id,
        event_id: r.event.id,
        kind: kind_name(&r.plan),
        state: state_name,
        changes,
        note,
        audit,
    })
}

/// What a revert of `plan` serialises on: the same resources its forward changes do.
fn resources_of(plan: &Plan) -> Vec<Resource> {
    match plan {
        Plan::TopicConfig { before, .. } => {
            before.keys().map(|t| Resource::Topic(t.clone())).collect()
        }
        Plan::Quota { entity, .. } => vec![Resource::QuotaEntity(quotas::path_of(entity))],
        Plan::Acl { .. } => vec![Resource::Acls],
        Plan::Reassignment { .. } => vec![Resource::ReassignmentSlot],
        Plan::TopicCreate { topic, .. } => vec![Resource::Topic(topic.clone())],
    }
}

/// The current values in the shape of the plan's events.
fn current_json(plan: &Plan, current: &Current) -> Value {
    match (plan, current) {
        (Plan::TopicConfig { .. }, Current::TopicConfig(now)) => configs::to_json(now),
        (Plan::Quota { entity, .. }, Current::Quota(now)) => quotas::to_json(entity, now),
        (Plan::TopicCreate { topic, .. }, Current::TopicCreate(now, _)) => {
            json!({ "topic": topic, "exists": now.is_some(), "partitions": now })
        }
        (Plan::Acl { affected, .. }, Current::Acl(now)) => acls::to_json(
            &affected
                .iter()
                .zip(now)
                .filter(|(_, p)| **p)
                .map(|(b, _)| b.clone())
                .collect::<Vec<_>>(),
        ),
        _ => Value::Null,
    }
}

/// Puts the plan's `before` back (configuration, quota, ACL) and returns the values read back
/// once the cluster shows them, in the plan's event shape, with a note when it did not in time.
async fn apply(
    state: &Ops,
    client: &Client,
    plan: &Plan,
    current: &Current,
) -> Result<(Value, Option<String>), OpError> {
    match (plan, current) {
        (Plan::TopicConfig { before, .. }, Current::TopicConfig(now)) => {
            // Every key the event touched goes back to its recorded value (absent: no override).
            let target: configs::TopicOverrides = now
                .iter()
                .map(|(topic, keys)| {
                    let keys = keys
                        .keys()
                        .map(|k| {
                            let was = before.get(topic).and_then(|o| o.get(k)).cloned().flatten();
                            (k.clone(), was)
                        })
                        .collect();
                    (topic.clone(), keys)
                })
                .collect();
            configs::apply(state, client, &target, true).await?;
            configs::apply(state, client, &target, false).await?;
            let after = configs::read_back(state, client, &target).await;
            Ok((configs::to_json(&after.value), after.note))
        }
        (Plan::Quota { entity, before, .. }, Current::Quota(now)) => {
            quotas::apply(state, client, entity, now, before).await?;
            let after = quotas::read_back(state, client, entity, before.clone()).await;
            Ok((quotas::to_json(entity, &after.value), after.note))
        }
        (
            Plan::Acl {
                affected, before, ..
            },
            Current::Acl(now),
        ) => {
            let create: Vec<AclBinding> = affected
                .iter()
                .zip(now)
                .filter(|(b, present)| !**present && before.contains(b))
                .map(|(b, _)| b.clone())
                .collect();
            let remove: Vec<AclBinding> = affected
                .iter()
                .zip(now)
                .filter(|(b, present)| **present && !before.contains(b))
                .map(|(b, _)| b.clone())
                .collect();
            acls::create_all(state, client, &create).await?;
            acls::delete_all(state, client, &remove).await?;
            let expected = affected.iter().map(|b| before.contains(b)).collect();
            let after = acls::read_back(state, client, affected, expected).await;
            Ok((current_json(plan, &Current::Acl(after.value)), after.note))
        }
        (Plan::TopicCreate { topic, .. }, Current::TopicCreate(Some(_), _)) => {
            let results = client
                .delete_topics(std::slice::from_ref(topic))
                .await
                .map_err(|e| crate::cluster::change_failed(&state.kafka, e))?;
            if let Some(e) = results.iter().find_map(|r| r.error.as_ref()) {
                return Err(crate::cluster::item_failed(
                    &format!("deleting topic {topic}"),
                    e,
                ));
            }
            Ok((json!({ "topic": topic, "exists": false }), None))
        }
        _ => Err(OpError::internal(
            "revert failed",
            "the plan and the values read do not match",
        )),
    }
}

/// What [`queue_reassignment_revert`] queued.
pub struct QueuedRevert {
    /// The operation's id, answered as `executionId`.
    pub operation_id: String,
    /// The id of the `audit.revert` event written with it.
    pub audit_event_id: i64,
}

/// Queues the reassignment that puts `moves` (partition → the replicas recorded before the
/// audited change) back as one operation of the executor, with `audit` (the `audit.revert`
/// event: `relatedEventId` the reverted event, `before` the live placement, `after` the target
/// placement, both `[{topic, partition, replicas}]`) written in the same transaction
/// (`Store::queue_operation`), and returns their ids. The live cluster-health pre-flight and the
/// slot rules of every partition-moving mutation apply (409 while another one holds the slot).
///
pub async fn queue_reassignment_revert(
    state: &Ops,
    actor: &Actor,
    event: &AuditEvent,
    moves: &[(TopicPartition, Vec<BrokerId>)],
    audit: NewAuditEvent,
) -> Result<QueuedRevert, OpError> {
    use crate::reassignments::{gate, new_move, queue_audited};
    // The live placement the preview compared against: where each partition moves from.
    let mut current: BTreeMap<TopicPartition, Vec<BrokerId>> = BTreeMap::new();
    for row in audit
        .before
        .as_ref()
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let (Some(topic), Some(partition), Some(replicas)) = (
            row.get("topic").and_then(Value::as_str),
            row.get("partition").and_then(Value::as_i64),
            row.get("replicas")
                .and_then(|r| serde_json::from_value::<Vec<BrokerId>>(r.clone()).ok()),
        ) else {
            continue;
        };
        if let Ok(p) = i32::try_from(partition) {
            current.insert(TopicPartition::new(topic, p), replicas);
        }
    }
    let view = crate::view::current(state).await?;
    let sizes: BTreeMap<(String, i32), u64> = view
        .as_ref()
        .map(|v| v.partition_sizes())
        .unwrap_or_default();
    let new_moves: Vec<ballast_schema::NewMove> = moves
        .iter()
        .filter_map(|(tp, target)| {
            let source = current.get(tp)?;
            (source != target).then(|| {
                let size = sizes
                    .get(&(tp.topic.clone(), tp.partition))
                    .copied()
                    .unwrap_or(0);
                new_move(&tp.topic, tp.partition, source, target, size)
            })
        })
        .collect();
    if new_moves.is_empty() {
        return Err(conflict(
            "nothing to revert",
            format!(
                "every partition of event {} is already where it was before",
                event.id
            ),
        ));
    }
    // A revert has no force: soft pre-flight reasons refuse it too.
    gate(state, Vec::new(), false, "revert cannot start now").await?;
    let op = ballast_schema::NewOperation {
        kind: "revert".into(),
        strategy: "AUDIT_REVERT".into(),
        method: actor.method.clone(),
        user_id: Some(actor.user.clone()),
        requested_by: Some(actor.user.clone()),
        description: Some(format!(
            "revert audit event {} ({})",
            event.id, event.action
        )),
        detail: json!({ "revertedEventId": event.id }),
        moves: new_moves,
        ..ballast_schema::NewOperation::default()
    };
    let (operation_id, audit_event_id) = queue_audited(state, op, audit).await?;
    Ok(QueuedRevert {
        operation_id,
        audit_event_id: audit_event_id.unwrap_or_default(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn event(action: &str, target: &str, before: Value, after: Value) -> AuditEvent {
        AuditEvent {
            id: 1,
            at_ms: 0,
            action: action.into(),
            method: "PUT".into(),
            user_id: None,
            requested_by: None,
            status: 200,
            target: Some(target.into()),
            summary: json!({}),
            before: Some(before),
            after: Some(after),
            forced: false,
            related_event_id: None,
            details: None,
        }
    }

    #[test]
    fn self_healing_and_unsupported_actions_are_never_revertible() {
        let heal = event(
            "selfheal.apply",
            "t-0",
            json!({"replicas": [1, 2]}),
            json!({"replicas": [1, 3]}),
        );
        let err = kind_of(&heal).unwrap_err();
        assert_eq!(err.kind, Kind::BadInput);
        assert!(err.details.contains("selfheal.apply"), "{}", err.details);
        assert!(!revertible(&heal));
        let reset = event("consumer_groups.reset_offsets", "g", json!({}), json!({}));
        assert!(!revertible(&reset));
        let mut failed = event("quotas.update", "p", json!({}), json!({}));
        failed.status = 500;
        assert!(kind_of(&failed).is_err());
    }

    #[test]
    fn reassignment_events_are_read_in_every_recorded_shape() {
        let single = event(
            "reassignments.apply",
            "orders-3",
            json!({"replicas": [1, 2]}),
            json!({"replicas": [1, 4]}),
        );
        let Plan::Reassignment { before, after } = plan_of(&single, "reassignment").unwrap() else {
            panic!("not a reassignment plan");
        };
        assert_eq!(before[&TopicPartition::new("orders", 3)], vec![1, 2]);
        assert_eq!(after[&TopicPartition::new("orders", 3)], vec![1, 4]);
        let listed = event(
            "reassignments.apply",
            "bulk",
            json!({"partitions": [{"topic": "a-b", "partition": 0, "replicas": [1]}]}),
            json!([{"topic": "a-b", "partition": 0, "replicas": [2]}]),
        );
        assert!(plan_of(&listed, "reassignment").is_ok());
        let none = event(
            "reassignments.apply",
            "bulk",
            json!({"moves": 3}),
            json!({"moves": 3}),
        );
        assert!(plan_of(&none, "reassignment").is_err());
        assert!(!revertible(&none));
    }

    #[test]
    fn conflicts_are_items_whose_current_value_is_not_the_audited_one() {
        let e = event(
            "quotas.update",
            "/api/v1/quotas/user/alice",
            json!({"entityPath": "/api/v1/quotas/user/alice", "entity": {"user": "alice"}, "values": {"producer_byte_rate": 100.0}}),
            json!({"entityPath": "/api/v1/quotas/user/alice", "entity": {"user": "alice"}, "values": {"producer_byte_rate": 200.0}}),
        );
        let plan = plan_of(&e, "quota").unwrap();
        let same = Current::Quota(BTreeMap::from([("producer_byte_rate".into(), 200.0)]));
        let items_now = items(&plan, &same);
        assert_eq!(items_now.len(), 1);
        assert_eq!(items_now[0].revert_to, json!(100.0));
        let moved = Current::Quota(BTreeMap::from([("producer_byte_rate".into(), 300.0)]));
        let items_moved = items(&plan, &moved);
        assert_ne!(items_now[0].current, items_moved[0].current);
        assert_ne!(fingerprint(1, &items_now), fingerprint(1, &items_moved));
        assert_ne!(fingerprint(1, &items_now), fingerprint(2, &items_now));
        assert_eq!(
            fingerprint(1, &items_now),
            fingerprint(1, &items(&plan, &same))
        );
    }
}
