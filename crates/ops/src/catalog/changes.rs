//! Mutations over configuration, ACLs, offsets, quotas, partition placement, log directories and
//! the audit log. Each `check_*` parses and checks the input without touching anything (what an
//! agent is told before its request is queued); on approval each calls its operation function
//! (the one its REST route calls too), and the reassignment ones wait until the moves finish.

use std::collections::BTreeMap;
use std::time::Duration;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use super::inputs::{
    BrokerInput, ElectionInput, GroupInput, MaintenanceInput, ProposalInput, ReassignmentInput,
    RedistributeTopicInput, TopicConfigInput,
};
use super::reads::{given, need, proposal_id};
use super::{answer, boxed, parse, Caller, OpFuture, ToolError};
use crate::context::Context;

// ------------------------------------------------------------------------------ inputs

/// Configuration changes of several topics, all or nothing: either `topics` with `configs`, or
/// `updates`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct BulkConfigInput {
    /// Topics that all get the same `configs`.
    pub topics: Option<Vec<String>>,
    /// With `topics`: configuration key → new value, or null to remove the override.
    pub configs: Option<BTreeMap<String, Value>>,
    /// One change per topic instead: [{"topic", "configs"}].
    pub updates: Option<Vec<TopicConfigInput>>,
}

/// One ACL binding.
#[derive(Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct AclBinding {
    /// Topic, Group, Cluster, TransactionalId, DelegationToken or User.
    pub resource_type: String,
    /// The resource's name (kafka-cluster for Cluster).
    pub resource_name: String,
    /// Literal (default) or Prefixed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pattern_type: Option<String>,
    /// The principal, User:<name>.
    pub principal: String,
    /// The host the principal connects from (default *).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub host: Option<String>,
    /// All, Read, Write, Create, Delete, Alter, Describe, ClusterAction, DescribeConfigs,
    /// AlterConfigs, IdempotentWrite, ...
    pub operation: String,
    /// Allow or Deny.
    pub permission_type: String,
}

/// ACL bindings to create.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CreateAclsInput {
    /// The bindings (1 to 1000); one that exists already is left as it is.
    pub bindings: Vec<AclBinding>,
}

/// The ACL bindings to delete: every binding matching this filter (as `list_acls` shows them).
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct DeleteAclsInput {
    /// Exact principal, User:<name>.
    pub principal: Option<String>,
    /// Topic, Group, Cluster, TransactionalId, DelegationToken, User or Any.
    pub resource_type: Option<String>,
    /// Exact resource name.
    pub resource_name: Option<String>,
    /// Literal, Prefixed, Any or Match.
    pub pattern_type: Option<String>,
    /// Only bindings of this operation (Read, Write, ..., Any).
    pub operation: Option<String>,
    /// Allow, Deny or Any.
    pub permission_type: Option<String>,
    /// Only bindings for this host.
    pub host: Option<String>,
}

/// One partition's new committed offset.
#[derive(Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct OffsetInput {
    /// The topic.
    pub topic: String,
    /// The partition.
    pub partition: i32,
    /// The offset to commit (between the log start and end).
    pub offset: i64,
}

/// A reset of a consumer group's committed offsets (the group must be empty).
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ResetOffsetsInput {
    /// The group id.
    pub group: String,
    /// earliest, latest, timestamp, shift or offsets.
    pub strategy: String,
    /// Only this topic (all its partitions); default: every partition the group has an offset for.
    pub topic: Option<String>,
    /// With topic: only these partitions.
    pub partitions: Option<Vec<i32>>,
    /// For timestamp: Unix ms or RFC 3339; each partition goes to its first offset at or after it.
    pub timestamp: Option<Value>,
    /// For shift: added to each committed offset (negative moves back; clamped to the log).
    pub shift_by: Option<i64>,
    /// For offsets: exact offsets, [{"topic", "partition", "offset"}] (not with topic/partitions).
    pub offsets: Option<Vec<OffsetInput>>,
}

/// A quota entity: a user, a client id, or both; `<default>` names the default one.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct QuotaEntityInput {
    /// The user (principal name), or <default>.
    pub user: Option<String>,
    /// The client id, or <default>.
    pub client_id: Option<String>,
}

/// New quotas of one entity.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct QuotaInput {
    /// The user (principal name), or <default>.
    pub user: Option<String>,
    /// The client id, or <default>.
    pub client_id: Option<String>,
    /// The entity's quotas afterwards, exactly (keys left out are removed): producer_byte_rate,
    /// consumer_byte_rate, request_percentage, controller_mutation_rate; numbers above 0.
    pub values: BTreeMap<String, f64>,
}

/// One partition's new replicas.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RedistributePartitionInput {
    /// The topic.
    pub topic: String,
    /// The partition.
    pub partition: i32,
    /// The new replica list, preferred leader first; omitted: down or maintenance replicas are
    /// replaced and the busiest replica broker swapped for the least busy one.
    pub replicas: Option<Vec<i32>>,
}

/// One entry of a bulk reassignment.
#[derive(Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct BulkEntry {
    /// The partition.
    pub partition: i32,
    /// Its new replica list, preferred leader first; omitted: chosen as redistribute_partition
    /// does.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub replicas: Option<Vec<i32>>,
}

/// New replicas for several partitions of one topic, as one operation.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct BulkReassignInput {
    /// The topic.
    pub topic: String,
    /// Why (kept with the operation and the audit event).
    pub description: Option<String>,
    /// The partitions, each at most once.
    pub partitions: Vec<BulkEntry>,
}

/// One replica's move to another log directory of its broker.
#[derive(Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LogdirMove {
    /// The topic.
    pub topic: String,
    /// The partition.
    pub partition: i32,
    /// The target log directory (an online one of the broker).
    pub path: String,
}

/// Replicas to move between a broker's log directories: `moves`, or every replica `from` one
/// directory `to` another.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct MoveLogdirsInput {
    /// The broker.
    pub broker_id: i32,
    /// The replicas to move and where.
    pub moves: Option<Vec<LogdirMove>>,
    /// Move every replica of this directory...
    pub from: Option<String>,
    /// ...to this one.
    pub to: Option<String>,
}

/// An audit event to revert.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct RevertInput {
    /// The audit event's id (from search_audit_log).
    pub event_id: i64,
}

pub(super) fn check_topic_config(input: &Value) -> Result<String, ToolError> {
    let input: TopicConfigInput = parse(input)?;
    if input.topic.trim().is_empty() {
        return Err(ToolError::invalid("topic: must not be empty"));
    }
    if input.configs.is_empty() {
        return Err(ToolError::invalid("configs: name at least one key"));
    }
    let changes: Vec<String> = input
        .configs
        .iter()
        .map(|(k, v)| match v {
            Value::Null => format!("remove the override of {k}"),
            v => format!("set {k} = {v}"),
        })
        .collect();
    Ok(format!("topic {}: {}", input.topic, changes.join(", ")))
}

pub(super) fn update_topic_config(ctx: Context, caller: Caller, input: Value) -> OpFuture {
    boxed(async move {
        let input: TopicConfigInput = parse(&input)?;
        answer(
            crate::topic_configs::update_topic_config(
                &ctx,
                &caller.actor(),
                input.topic,
                input.configs,
            )
            .await,
        )
    })
}

pub(super) fn check_apply_proposal(input: &Value) -> Result<String, ToolError> {
    let input: ProposalInput = parse(input)?;
    proposal_id(&input.proposal_id)?;
    Ok(format!("apply proposal {}", input.proposal_id))
}

/// How long `apply_proposal` waits for its reassignments to finish before it reports them still
/// running.
pub const APPLY_WAIT: Duration = Duration::from_secs(600);

/// Whether the proposal may be applied: `Ok(its id)` or the `blocked` answer. The proposal is
/// the stored one `GET /api/v1/proposals/{id}` (or `/current`) answers, with its 404s.
async fn proposal_gate(
    ctx: &Context,
    proposal_id: &str,
) -> Result<Result<String, Value>, ToolError> {
    use crate::proposals::{no_proposal, unknown};
    let id = proposal_id.trim();
    if id.is_empty() {
        return Err(ToolError::invalid("proposalId: must not be empty"));
    }
    // The head (the stored verdict) is all this needs: the plan is not read.
    let p = if id == "current" {
        ctx.db(|s| s.current_proposal_head())
            .await?
            .ok_or_else(no_proposal)?
    } else {
        let key = id.to_string();
        ctx.db(move |s| s.proposal_head(&key))
            .await?
            .ok_or_else(|| unknown(id))?
    };
    let decision = &p.decision;
    // The stored verdict the REST apply reads too.
    if p.application_allowed {
        Ok(Ok(p.id))
    } else {
        let reason = decision["reason"]
            .as_str()
            .or(decision["nextAction"].as_str())
            .unwrap_or("the proposal's decision does not allow applying it")
            .to_string();
        Ok(Err(json!({
            "status": "blocked",
            "reason": reason,
            "proposalId": p.id,
            "decision": decision,
        })))
    }
}

/// Before `apply_proposal` is queued: `status: blocked` when the proposal's decision does not
/// allow it (asked again at approval by the operation itself).
pub(super) fn apply_proposal_gate(ctx: Context, _caller: Caller, input: Value) -> OpFuture {
    boxed(async move {
        let input: ProposalInput = parse(&input)?;
        Ok(match proposal_gate(&ctx, &input.proposal_id).await? {
            Ok(_) => Value::Null,
            Err(blocked) => blocked,
        })
    })
}

pub(super) fn apply_proposal(ctx: Context, caller: Caller, input: Value) -> OpFuture {
    boxed(async move {
        let input: ProposalInput = parse(&input)?;
        let id = match proposal_gate(&ctx, &input.proposal_id).await? {
            Ok(id) => id,
            Err(blocked) => return Ok(blocked),
        };
        let started = answer(
            crate::reassignments::apply_proposal(&ctx, &caller.actor(), id, Default::default())
                .await,
        )?;
        let operation = started["bulkId"]
            .as_str()
            .or(started["operationId"].as_str())
            .or(started["id"].as_str())
            .unwrap_or_default()
            .to_string();
        wait_for_operation(&ctx, &operation, started).await
    })
}

/// Why a reassignment an agent waited for is not done yet: still running, and the moves that
/// are stalled (with the first one's reason) when some are.
fn still_running(r: &Value) -> String {
    let stalled = r["moves"]["Stalled"].as_u64().unwrap_or(0);
    if stalled == 0 {
        return "still running; follow it with get_reassignment_by_id".to_string();
    }
    let first = r["partitions"]
        .as_array()
        .and_then(|ps| ps.iter().find(|p| p["state"] == "Stalled"))
        .and_then(|p| {
            Some(format!(
                "{}-{}: {}",
                p["topic"].as_str()?,
                p["partition"],
                p["reason"].as_str()?
            ))
        })
        .unwrap_or_default();
    format!(
        "still running, {stalled} move(s) stalled ({first}); follow it with get_reassignment_by_id"
    )
}

/// Polls the reassignment until it ends: `completed`, or the failure and its reason.
pub(super) async fn wait_for_operation(
    ctx: &Context,
    operation: &str,
    started: Value,
) -> Result<Value, ToolError> {
    if operation.is_empty() {
        return Ok(json!({"status": "completed", "submitted": started}));
    }
    let deadline = tokio::time::Instant::now() + APPLY_WAIT;
    loop {
        let r =
            answer(crate::reassignments::get_reassignment_by_id(ctx, operation.to_string()).await)?;
        let st = r["state"].as_str().unwrap_or_default().to_ascii_lowercase();
        match st.as_str() {
            "completed" => {
                return Ok(
                    json!({"status": "completed", "operationId": operation, "reassignment": r}),
                )
            }
            "failed" | "cancelled" => {
                let reason = r["reason"]
                    .as_str()
                    .or(r["error"].as_str())
                    .unwrap_or("see the reassignment's moves")
                    .to_string();
                return Ok(
                    json!({"status": st, "reason": reason, "operationId": operation, "reassignment": r}),
                );
            }
            _ => {}
        }
        if tokio::time::Instant::now() >= deadline {
            return Ok(json!({"status": "running", "operationId": operation,
                "reason": still_running(&r), "reassignment": r}));
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
}

pub(super) fn check_group(input: &Value) -> Result<String, ToolError> {
    let i: GroupInput = parse(input)?;
    need("group", &i.group)?;
    Ok(format!(
        "delete consumer group {} and its committed offsets (only an empty group)",
        i.group
    ))
}

pub(super) fn delete_consumer_group(ctx: Context, caller: Caller, input: Value) -> OpFuture {
    boxed(async move {
        let i: GroupInput = parse(&input)?;
        answer(crate::groups::delete_consumer_group(&ctx, &caller.actor(), i.group).await)
    })
}

pub(super) fn check_reassignment(input: &Value) -> Result<String, ToolError> {
    let i: ReassignmentInput = parse(input)?;
    need("id", &i.id)?;
    Ok(format!(
        "cancel reassignment {}: in-flight moves are cancelled, completed ones stay",
        i.id
    ))
}

pub(super) fn cancel_reassignment(ctx: Context, caller: Caller, input: Value) -> OpFuture {
    boxed(async move {
        let i: ReassignmentInput = parse(&input)?;
        answer(crate::reassignments::cancel_reassignment(&ctx, &caller.actor(), i.id).await)
    })
}

pub(super) fn check_maintenance(input: &Value) -> Result<String, ToolError> {
    let i: MaintenanceInput = parse(input)?;
    let drain = if i.drain.unwrap_or(true) {
        ", draining its leadership and replicas"
    } else {
        ""
    };
    Ok(format!("put broker {} in maintenance{drain}", i.broker_id))
}

pub(super) fn set_broker_maintenance(ctx: Context, caller: Caller, input: Value) -> OpFuture {
    boxed(async move {
        let i: MaintenanceInput = parse(&input)?;
        let drain = i.drain.unwrap_or(true);
        let body = crate::brokers::EnterBody {
            reason: i.reason,
            drain: Some(drain),
        };
        let started = answer(
            crate::brokers::set_broker_maintenance(
                &ctx,
                &caller.actor(),
                i.broker_id,
                Default::default(),
                body,
            )
            .await,
        )?;
        let operation = started["operationId"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        if !drain || operation.is_empty() {
            return Ok(json!({"status": "completed", "maintenance": started}));
        }
        wait_for_operation(&ctx, &operation, started).await
    })
}

pub(super) fn check_broker(input: &Value) -> Result<String, ToolError> {
    let i: BrokerInput = parse(input)?;
    Ok(format!(
        "take broker {} out of maintenance and cancel its drain if one still runs (the next proposal moves partitions back)",
        i.broker_id
    ))
}

pub(super) fn remove_broker_maintenance(ctx: Context, caller: Caller, input: Value) -> OpFuture {
    boxed(async move {
        let i: BrokerInput = parse(&input)?;
        answer(
            crate::brokers::remove_broker_maintenance(&ctx, &caller.actor(), i.broker_id, false)
                .await,
        )
    })
}

pub(super) fn check_redistribute_topic(input: &Value) -> Result<String, ToolError> {
    let i: RedistributeTopicInput = parse(input)?;
    need("topic", &i.topic)?;
    Ok(match &i.brokers {
        Some(b) => format!("spread topic {} evenly over brokers {b:?}", i.topic),
        None => format!(
            "spread topic {} evenly over every available broker",
            i.topic
        ),
    })
}

pub(super) fn redistribute_topic(ctx: Context, caller: Caller, input: Value) -> OpFuture {
    boxed(async move {
        let i: RedistributeTopicInput = parse(&input)?;
        let body = crate::reassignments::TopicBody {
            preview: Some(false),
            brokers: i.brokers.map(|b| b.into_iter().map(i64::from).collect()),
        };
        let started = answer(
            crate::reassignments::redistribute_topic(
                &ctx,
                &caller.actor(),
                i.topic,
                Default::default(),
                body,
            )
            .await,
        )?;
        redistribution_done(&ctx, started, "nothing to move").await
    })
}

/// Waits until the reassignment a redistribution started (`operationId`) ends; when it started
/// none, `completed` with `reason` and the route's answer.
pub(super) async fn redistribution_done(
    ctx: &Context,
    started: Value,
    reason: &str,
) -> Result<Value, ToolError> {
    let operation = started["operationId"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    if operation.is_empty() {
        return Ok(json!({"status": "completed", "reason": reason, "redistribution": started}));
    }
    wait_for_operation(ctx, &operation, started).await
}

pub(super) fn check_election(input: &Value) -> Result<String, ToolError> {
    let i: ElectionInput = parse(input)?;
    match (&i.topic, &i.partitions) {
        (None, Some(_)) => Err(ToolError::invalid("partitions: name the topic too")),
        (None, None) => Ok("elect the preferred leader of every partition it does not lead".into()),
        (Some(t), _) => {
            need("topic", t)?;
            Ok(format!("elect preferred leaders of topic {t}"))
        }
    }
}

pub(super) fn preferred_leader_election(ctx: Context, caller: Caller, input: Value) -> OpFuture {
    boxed(async move {
        use crate::brokers::{ClusterElection, Election, TopicElection};
        let i: ElectionInput = parse(&input)?;
        let election = match i.topic {
            None => Election::Cluster(ClusterElection::default()),
            Some(topic) => Election::Topic(
                topic.clone(),
                TopicElection {
                    topic: Some(topic),
                    partitions: i.partitions,
                },
            ),
        };
        answer(crate::brokers::preferred_leader_election(&ctx, &caller.actor(), election).await)
    })
}

// ------------------------------------------------------------------------------ configuration

fn config_changes(configs: &BTreeMap<String, Value>) -> String {
    configs
        .iter()
        .map(|(k, v)| match v {
            Value::Null => format!("remove the override of {k}"),
            v => format!("set {k} = {v}"),
        })
        .collect::<Vec<_>>()
        .join(", ")
}

pub(super) fn check_bulk_config(input: &Value) -> Result<String, ToolError> {
    let i: BulkConfigInput = parse(input)?;
    match (i.topics, i.configs, i.updates) {
        (Some(topics), Some(configs), None) => {
            if topics.is_empty() || configs.is_empty() {
                return Err(ToolError::invalid(
                    "topics and configs: name at least one topic and one key",
                ));
            }
            for t in &topics {
                need("topics[]", t)?;
            }
            Ok(format!(
                "topics {}: {} (all or nothing)",
                topics.join(", "),
                config_changes(&configs)
            ))
        }
        (None, None, Some(updates)) => {
            if updates.is_empty() {
                return Err(ToolError::invalid("updates: name at least one topic"));
            }
            let mut parts = Vec::new();
            for u in &updates {
                need("updates[].topic", &u.topic)?;
                if u.configs.is_empty() {
                    return Err(ToolError::invalid(format!(
                        "updates[{}].configs: name at least one key",
                        u.topic
                    )));
                }
                parts.push(format!("topic {}: {}", u.topic, config_changes(&u.configs)));
            }
            Ok(format!("{} (all or nothing)", parts.join("; ")))
        }
        _ => Err(ToolError::invalid(
            "give either topics with configs, or updates",
        )),
    }
}

pub(super) fn bulk_update_topic_config(ctx: Context, caller: Caller, input: Value) -> OpFuture {
    boxed(async move {
        check_bulk_config(&input)?;
        let i: BulkConfigInput = parse(&input)?;
        let body = match i.updates {
            Some(updates) => crate::topic_configs::BulkUpdate {
                updates: Some(updates.into_iter().map(|u| (u.topic, u.configs)).collect()),
                ..Default::default()
            },
            None => crate::topic_configs::BulkUpdate {
                topics: i.topics,
                configs: i.configs,
                updates: None,
            },
        };
        answer(crate::topic_configs::bulk_update_topic_config(&ctx, &caller.actor(), body).await)
    })
}

// ------------------------------------------------------------------------------ ACLs

fn describe_binding(b: &AclBinding) -> String {
    format!(
        "{} {} {} on {} {}{}",
        b.permission_type,
        b.principal,
        b.operation,
        b.resource_type,
        b.resource_name,
        b.pattern_type
            .as_deref()
            .map(|p| format!(" ({p})"))
            .unwrap_or_default()
    )
}

pub(super) fn check_create_acls(input: &Value) -> Result<String, ToolError> {
    let i: CreateAclsInput = parse(input)?;
    if i.bindings.is_empty() || i.bindings.len() > 1000 {
        return Err(ToolError::invalid("bindings: name 1 to 1000 bindings"));
    }
    for (n, b) in i.bindings.iter().enumerate() {
        for (field, v) in [
            ("resourceType", &b.resource_type),
            ("resourceName", &b.resource_name),
            ("principal", &b.principal),
            ("operation", &b.operation),
            ("permissionType", &b.permission_type),
        ] {
            need(&format!("bindings[{n}].{field}"), v)?;
        }
    }
    let shown: Vec<String> = i.bindings.iter().take(5).map(describe_binding).collect();
    let more = i.bindings.len().saturating_sub(shown.len());
    Ok(format!(
        "create ACL bindings: {}{}",
        shown.join("; "),
        if more > 0 {
            format!(" and {more} more")
        } else {
            String::new()
        }
    ))
}

pub(super) fn create_acls(ctx: Context, caller: Caller, input: Value) -> OpFuture {
    boxed(async move {
        let i: CreateAclsInput = parse(&input)?;
        let bindings = i
            .bindings
            .into_iter()
            .map(|b| crate::acls::BindingInput {
                resource_type: b.resource_type,
                resource_name: b.resource_name,
                pattern_type: b.pattern_type,
                principal: b.principal,
                host: b.host,
                operation: b.operation,
                permission_type: b.permission_type,
            })
            .collect();
        answer(crate::acls::create_acls(&ctx, &caller.actor(), bindings).await)
    })
}

fn acl_filter(i: DeleteAclsInput) -> Vec<(&'static str, Option<String>)> {
    vec![
        ("principal", i.principal),
        ("resourceType", i.resource_type),
        ("resourceName", i.resource_name),
        ("patternType", i.pattern_type),
        ("operation", i.operation),
        ("permissionType", i.permission_type),
        ("host", i.host),
    ]
}

pub(super) fn check_delete_acls(input: &Value) -> Result<String, ToolError> {
    let i: DeleteAclsInput = parse(input)?;
    if i.principal.is_none() && i.resource_type.is_none() && i.resource_name.is_none() {
        return Err(ToolError::invalid(
            "name at least one of principal, resourceType, resourceName (an empty filter would match every binding)",
        ));
    }
    let filter: Vec<String> = acl_filter(i)
        .into_iter()
        .filter_map(|(k, v)| v.map(|v| format!("{k}={v}")))
        .collect();
    Ok(format!(
        "delete every ACL binding matching {} (list_acls with the same filter shows them)",
        filter.join(", ")
    ))
}

pub(super) fn delete_acls(ctx: Context, caller: Caller, input: Value) -> OpFuture {
    boxed(async move {
        check_delete_acls(&input)?;
        let i: DeleteAclsInput = parse(&input)?;
        let q = crate::acls::Query {
            principal: given(i.principal),
            resource_type: given(i.resource_type),
            resource_name: given(i.resource_name),
            pattern_type: given(i.pattern_type),
            operation: given(i.operation),
            permission_type: given(i.permission_type),
            host: given(i.host),
            limit: None,
        };
        answer(crate::acls::delete_acls(&ctx, &caller.actor(), q).await)
    })
}

// ------------------------------------------------------------------------------ offsets

const STRATEGIES: [&str; 5] = ["earliest", "latest", "timestamp", "shift", "offsets"];

pub(super) fn check_reset_offsets(input: &Value) -> Result<String, ToolError> {
    let i: ResetOffsetsInput = parse(input)?;
    need("group", &i.group)?;
    let strategy = i.strategy.trim().to_ascii_lowercase();
    if !STRATEGIES.contains(&strategy.as_str()) {
        return Err(ToolError::invalid(format!(
            "strategy: expected one of {}, got {:?}",
            STRATEGIES.join(", "),
            i.strategy
        )));
    }
    let misplaced = |field: &str, set: bool, wanted: &str| {
        if set && strategy != wanted {
            Err(ToolError::invalid(format!(
                "{field}: applies only to strategy {wanted}"
            )))
        } else if !set && strategy == wanted {
            Err(ToolError::invalid(format!(
                "{field}: strategy {wanted} needs it"
            )))
        } else {
            Ok(())
        }
    };
    misplaced("timestamp", i.timestamp.is_some(), "timestamp")?;
    misplaced("shiftBy", i.shift_by.is_some(), "shift")?;
    misplaced("offsets", i.offsets.is_some(), "offsets")?;
    if i.partitions.is_some() && i.topic.is_none() {
        return Err(ToolError::invalid("partitions: name the topic too"));
    }
    if strategy == "offsets" && (i.topic.is_some() || i.partitions.is_some()) {
        return Err(ToolError::invalid(
            "topic, partitions: not with strategy offsets (each offset names its partition)",
        ));
    }
    let scope = match (&i.topic, &i.partitions) {
        (Some(t), Some(p)) => format!("partitions {p:?} of topic {t}"),
        (Some(t), None) => format!("every partition of topic {t}"),
        _ if strategy == "offsets" => {
            format!("{} partitions", i.offsets.as_ref().map_or(0, Vec::len))
        }
        _ => "every partition it has an offset for".into(),
    };
    let how = match strategy.as_str() {
        "timestamp" => format!(
            "to the first offset at or after {}",
            i.timestamp.unwrap_or_default()
        ),
        "shift" => format!("shifted by {}", i.shift_by.unwrap_or_default()),
        "offsets" => "to the given offsets".into(),
        s => format!("to the {s} offset"),
    };
    Ok(format!(
        "reset consumer group {}'s committed offsets ({scope}) {how}; the group must be empty",
        i.group
    ))
}

pub(super) fn reset_consumer_group_offsets(ctx: Context, caller: Caller, input: Value) -> OpFuture {
    boxed(async move {
        check_reset_offsets(&input)?;
        let i: ResetOffsetsInput = parse(&input)?;
        use crate::groups::{OffsetEntry, Reset};
        let body = Reset {
            strategy: i.strategy.trim().to_ascii_lowercase(),
            topic: i.topic,
            partitions: i.partitions,
            timestamp: i.timestamp,
            shift_by: i.shift_by,
            offsets: i.offsets.map(|o| {
                o.into_iter()
                    .map(|e| OffsetEntry {
                        topic: e.topic,
                        partition: e.partition,
                        offset: e.offset,
                    })
                    .collect()
            }),
            dry_run: false,
        };
        answer(
            crate::groups::reset_consumer_group_offsets(&ctx, &caller.actor(), i.group, body).await,
        )
    })
}

// ------------------------------------------------------------------------------ quotas

/// The entity's user and client id as its REST path names them, trimmed (`<default>` names the
/// default user or client id).
type QuotaNames = (Option<String>, Option<String>);

fn quota_entity(user: Option<&str>, client_id: Option<&str>) -> Result<QuotaNames, ToolError> {
    let user = user.map(str::trim);
    let client_id = client_id.map(str::trim);
    if user == Some("") || client_id == Some("") {
        return Err(ToolError::invalid(
            "user, clientId: must not be empty (use <default> for the default entity)",
        ));
    }
    if user.is_none() && client_id.is_none() {
        return Err(ToolError::invalid("name the user, the clientId, or both"));
    }
    Ok((user.map(str::to_string), client_id.map(str::to_string)))
}

fn entity_words(user: Option<&str>, client_id: Option<&str>) -> String {
    [("user", user), ("client id", client_id)]
        .iter()
        .filter_map(|(k, v)| v.map(|v| format!("{k} {v}")))
        .collect::<Vec<_>>()
        .join(" with ")
}

pub(super) fn check_update_quota(input: &Value) -> Result<String, ToolError> {
    let i: QuotaInput = parse(input)?;
    quota_entity(i.user.as_deref(), i.client_id.as_deref())?;
    if i.values.is_empty() {
        return Err(ToolError::invalid(
            "values: name at least one quota (delete_quota removes them all)",
        ));
    }
    if let Some((k, v)) = i.values.iter().find(|(_, v)| !(v.is_finite() && **v > 0.0)) {
        return Err(ToolError::invalid(format!(
            "values.{k}: must be a number above 0, got {v}"
        )));
    }
    let values: Vec<String> = i.values.iter().map(|(k, v)| format!("{k} = {v}")).collect();
    Ok(format!(
        "set the quotas of {} to exactly {} (keys not named are removed)",
        entity_words(i.user.as_deref(), i.client_id.as_deref()),
        values.join(", ")
    ))
}

pub(super) fn update_quota(ctx: Context, caller: Caller, input: Value) -> OpFuture {
    boxed(async move {
        let i: QuotaInput = parse(&input)?;
        let (user, client_id) = quota_entity(i.user.as_deref(), i.client_id.as_deref())?;
        let values = i.values.into_iter().map(|(k, v)| (k, json!(v))).collect();
        answer(crate::quotas::update_quota(&ctx, &caller.actor(), user, client_id, values).await)
    })
}

pub(super) fn check_delete_quota(input: &Value) -> Result<String, ToolError> {
    let i: QuotaEntityInput = parse(input)?;
    quota_entity(i.user.as_deref(), i.client_id.as_deref())?;
    Ok(format!(
        "remove every quota of {}",
        entity_words(i.user.as_deref(), i.client_id.as_deref())
    ))
}

pub(super) fn delete_quota(ctx: Context, caller: Caller, input: Value) -> OpFuture {
    boxed(async move {
        let i: QuotaEntityInput = parse(&input)?;
        let (user, client_id) = quota_entity(i.user.as_deref(), i.client_id.as_deref())?;
        answer(crate::quotas::delete_quota(&ctx, &caller.actor(), user, client_id).await)
    })
}

// ------------------------------------------------------------------------------ placement

pub(super) fn check_replicas(what: &str, replicas: &Option<Vec<i32>>) -> Result<(), ToolError> {
    if let Some(r) = replicas {
        if r.is_empty() {
            return Err(ToolError::invalid(format!("{what}: must not be empty")));
        }
        if r.iter().any(|b| *b < 0) {
            return Err(ToolError::invalid(format!(
                "{what}: broker ids are 0 or more"
            )));
        }
        let mut seen = std::collections::BTreeSet::new();
        if let Some(d) = r.iter().find(|b| !seen.insert(**b)) {
            return Err(ToolError::invalid(format!(
                "{what}: broker {d} listed twice"
            )));
        }
    }
    Ok(())
}

pub(super) fn check_redistribute_partition(input: &Value) -> Result<String, ToolError> {
    let i: RedistributePartitionInput = parse(input)?;
    need("topic", &i.topic)?;
    if i.partition < 0 {
        return Err(ToolError::invalid("partition: must be 0 or more"));
    }
    check_replicas("replicas", &i.replicas)?;
    Ok(match &i.replicas {
        Some(r) => format!(
            "move {}-{} to replicas {r:?} (leader {})",
            i.topic, i.partition, r[0]
        ),
        None => format!(
            "move {}-{} off down or maintenance brokers and onto less busy ones",
            i.topic, i.partition
        ),
    })
}

pub(super) fn redistribute_partition(ctx: Context, caller: Caller, input: Value) -> OpFuture {
    boxed(async move {
        let i: RedistributePartitionInput = parse(&input)?;
        let body = crate::reassignments::SingleBody {
            replicas: i.replicas.map(|r| r.into_iter().map(i64::from).collect()),
            preview: Some(false),
        };
        let started = answer(
            crate::reassignments::redistribute_partition(
                &ctx,
                &caller.actor(),
                i.topic,
                i.partition,
                Default::default(),
                body,
            )
            .await,
        )?;
        redistribution_done(&ctx, started, "already in place").await
    })
}

pub(super) fn check_bulk_reassign(input: &Value) -> Result<String, ToolError> {
    let i: BulkReassignInput = parse(input)?;
    need("topic", &i.topic)?;
    if i.partitions.is_empty() {
        return Err(ToolError::invalid(
            "partitions: name at least one partition",
        ));
    }
    let mut seen = std::collections::BTreeSet::new();
    for (n, e) in i.partitions.iter().enumerate() {
        if e.partition < 0 {
            return Err(ToolError::invalid(format!(
                "partitions[{n}].partition: must be 0 or more"
            )));
        }
        if !seen.insert(e.partition) {
            return Err(ToolError::invalid(format!(
                "partitions[{n}]: partition {} listed twice",
                e.partition
            )));
        }
        check_replicas(&format!("partitions[{n}].replicas"), &e.replicas)?;
    }
    let shown: Vec<String> = i
        .partitions
        .iter()
        .take(10)
        .map(|e| match &e.replicas {
            Some(r) => format!("{} → {r:?}", e.partition),
            None => format!("{} → chosen by ballast", e.partition),
        })
        .collect();
    Ok(format!(
        "reassign {} partitions of {} as one operation: {}{}",
        i.partitions.len(),
        i.topic,
        shown.join(", "),
        if i.partitions.len() > shown.len() {
            ", ..."
        } else {
            ""
        }
    ))
}

pub(super) fn bulk_reassign_partitions(ctx: Context, caller: Caller, input: Value) -> OpFuture {
    boxed(async move {
        let i: BulkReassignInput = parse(&input)?;
        let body = crate::reassignments::BulkBody {
            description: i.description,
            partitions: i
                .partitions
                .into_iter()
                .map(|e| crate::reassignments::BulkEntry {
                    partition: i64::from(e.partition),
                    replicas: e.replicas.map(|r| r.into_iter().map(i64::from).collect()),
                    preview: None,
                })
                .collect(),
        };
        let started = answer(
            crate::reassignments::bulk_reassign_partitions(
                &ctx,
                &caller.actor(),
                i.topic,
                Default::default(),
                body,
            )
            .await,
        )?;
        let operation = started["bulkId"]
            .as_str()
            .or(started["operationId"].as_str())
            .unwrap_or_default()
            .to_string();
        if operation.is_empty() {
            let failed = started["results"]
                .as_array()
                .is_some_and(|r| r.iter().any(|e| e["success"] == Value::Bool(false)));
            let status = if failed { "failed" } else { "completed" };
            return Ok(
                json!({"status": status, "reason": "no entry started a move", "bulk": started}),
            );
        }
        let mut done = wait_for_operation(&ctx, &operation, started.clone()).await?;
        // The entries the REST route rejected stay visible next to the moves that ran.
        if let Some(obj) = done.as_object_mut() {
            obj.insert("results".into(), started["results"].clone());
        }
        Ok(done)
    })
}

pub(super) fn check_move_logdirs(input: &Value) -> Result<String, ToolError> {
    let i: MoveLogdirsInput = parse(input)?;
    if i.broker_id < 0 {
        return Err(ToolError::invalid("brokerId: must be 0 or more"));
    }
    match (&i.moves, &i.from, &i.to) {
        (Some(moves), None, None) => {
            if moves.is_empty() {
                return Err(ToolError::invalid("moves: name at least one replica"));
            }
            for (n, m) in moves.iter().enumerate() {
                need(&format!("moves[{n}].topic"), &m.topic)?;
                need(&format!("moves[{n}].path"), &m.path)?;
            }
            let shown: Vec<String> = moves
                .iter()
                .take(10)
                .map(|m| format!("{}-{} → {}", m.topic, m.partition, m.path))
                .collect();
            Ok(format!(
                "move replicas on broker {} between log directories: {}",
                i.broker_id,
                shown.join(", ")
            ))
        }
        (None, Some(from), Some(to)) => {
            need("from", from)?;
            need("to", to)?;
            Ok(format!(
                "move every replica on broker {} from log directory {from} to {to}",
                i.broker_id
            ))
        }
        _ => Err(ToolError::invalid("give either moves, or from and to")),
    }
}

pub(super) fn move_broker_logdirs(ctx: Context, caller: Caller, input: Value) -> OpFuture {
    boxed(async move {
        use crate::brokers::{DirMove, LogDirsBody};
        check_move_logdirs(&input)?;
        let i: MoveLogdirsInput = parse(&input)?;
        let body = match i.moves {
            Some(moves) => LogDirsBody {
                moves: Some(
                    moves
                        .into_iter()
                        .map(|m| DirMove {
                            topic: m.topic,
                            partition: m.partition,
                            path: m.path,
                        })
                        .collect(),
                ),
                ..Default::default()
            },
            None => LogDirsBody {
                from: i.from,
                to: i.to,
                ..Default::default()
            },
        };
        answer(crate::brokers::move_broker_logdirs(&ctx, &caller.actor(), i.broker_id, body).await)
    })
}

// ------------------------------------------------------------------------------ audit

pub(super) fn check_revert(input: &Value) -> Result<String, ToolError> {
    let i: RevertInput = parse(input)?;
    if i.event_id <= 0 {
        return Err(ToolError::invalid("eventId: an audit event id (1 or more)"));
    }
    Ok(format!(
        "revert audit event {}: put back the values it recorded before its change (refused if they changed since)",
        i.event_id
    ))
}

pub(super) fn revert_audit_event(ctx: Context, caller: Caller, input: Value) -> OpFuture {
    boxed(async move {
        use crate::revert::{PreviewBody, RevertBody};
        let i: RevertInput = parse(&input)?;
        let preview = answer(
            crate::revert::preview_revert(
                &ctx,
                PreviewBody {
                    event_id: i.event_id,
                },
            )
            .await,
        )?;
        if preview["canRevert"] != Value::Bool(true) {
            let reason = preview["reason"]
                .as_str()
                .unwrap_or("the event cannot be reverted now");
            return Err(ToolError {
                status: 409,
                code: "CONFLICT".into(),
                message: format!("{reason} (conflicts: {})", preview["conflicts"]),
            });
        }
        let body = RevertBody {
            event_id: i.event_id,
            fingerprint: preview["fingerprint"].as_str().map(str::to_string),
        };
        let done = answer(crate::revert::revert_audit_event(&ctx, &caller.actor(), body).await)?;
        let operation = match &done["executionId"] {
            Value::String(s) => s.clone(),
            Value::Number(n) => n.to_string(),
            _ => String::new(),
        };
        if done["state"] == "queued" && !operation.is_empty() {
            wait_for_operation(&ctx, &operation, done).await
        } else {
            Ok(json!({"status": "completed", "revert": done}))
        }
    })
}

// ------------------------------------------------------------------------- topic lifecycle

/// A partition count to reach.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct AddPartitionsInput {
    /// The topic.
    pub topic: String,
    /// The new total number of partitions (more than it has: Kafka cannot remove partitions).
    pub count: i64,
    /// The replicas of each new partition, leader first (default: placed by ballast).
    #[serde(default)]
    pub assignment: Option<Vec<Vec<i32>>>,
    /// Check and place only; add nothing.
    #[serde(default)]
    pub validate_only: bool,
}

/// A replication factor to reach.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ReplicationFactorInput {
    /// The topic.
    pub topic: String,
    /// The replication factor wanted (1 to 16; not below min.insync.replicas + 1 when lowering).
    pub replication_factor: i64,
    /// Only these partitions (default: every partition of the topic).
    #[serde(default)]
    pub partitions: Option<Vec<i32>>,
    /// Plan only; queue nothing.
    #[serde(default)]
    pub validate_only: bool,
}

/// A topic to delete.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct DeleteTopicInput {
    /// The topic.
    pub topic: String,
    /// Delete although consumer groups have committed offsets on it.
    #[serde(default)]
    pub force: Option<bool>,
    /// Say what would be deleted; delete nothing.
    #[serde(default)]
    pub validate_only: Option<bool>,
}

fn only_checking(validate_only: bool) -> &'static str {
    if validate_only {
        "check only, change nothing: "
    } else {
        ""
    }
}

pub(super) fn check_create_topic(input: &Value) -> Result<String, ToolError> {
    let i: crate::topic_lifecycle::CreateTopic = parse(input)?;
    need("name", &i.name)?;
    Ok(format!(
        "{}create topic {} with {} partition(s), replication factor {}{}",
        only_checking(i.validate_only),
        i.name,
        i.partitions,
        i.replication_factor,
        if i.configs.is_empty() {
            String::new()
        } else {
            format!(
                " and configs {}",
                i.configs.keys().cloned().collect::<Vec<_>>().join(", ")
            )
        }
    ))
}

pub(super) fn create_topic(ctx: Context, caller: Caller, input: Value) -> OpFuture {
    boxed(async move {
        let i: crate::topic_lifecycle::CreateTopic = parse(&input)?;
        answer(crate::topic_lifecycle::create_topic(&ctx, &caller.actor(), i).await)
    })
}

pub(super) fn check_add_partitions(input: &Value) -> Result<String, ToolError> {
    let i: AddPartitionsInput = parse(input)?;
    need("topic", &i.topic)?;
    Ok(format!(
        "{}raise topic {} to {} partitions (cannot be undone: Kafka cannot remove partitions)",
        only_checking(i.validate_only),
        i.topic,
        i.count
    ))
}

pub(super) fn add_partitions(ctx: Context, caller: Caller, input: Value) -> OpFuture {
    boxed(async move {
        let i: AddPartitionsInput = parse(&input)?;
        let body = crate::topic_lifecycle::AddPartitions {
            count: i.count,
            assignment: i.assignment,
            validate_only: i.validate_only,
        };
        answer(crate::topic_lifecycle::add_partitions(&ctx, &caller.actor(), i.topic, body).await)
    })
}

pub(super) fn check_replication_factor(input: &Value) -> Result<String, ToolError> {
    let i: ReplicationFactorInput = parse(input)?;
    need("topic", &i.topic)?;
    let which = match &i.partitions {
        Some(p) => format!("partitions {p:?} of topic {}", i.topic),
        None => format!("every partition of topic {}", i.topic),
    };
    Ok(format!(
        "{}change the replication factor of {which} to {} (throttled reassignments)",
        only_checking(i.validate_only),
        i.replication_factor
    ))
}

pub(super) fn change_replication_factor(ctx: Context, caller: Caller, input: Value) -> OpFuture {
    boxed(async move {
        let i: ReplicationFactorInput = parse(&input)?;
        let validate_only = i.validate_only;
        let body = crate::topic_lifecycle::ChangeReplicationFactor {
            replication_factor: i.replication_factor,
            partitions: i.partitions,
            validate_only,
        };
        let started = answer(
            crate::topic_lifecycle::change_replication_factor(
                &ctx,
                &caller.actor(),
                i.topic,
                Default::default(),
                body,
            )
            .await,
        )?;
        if validate_only {
            return Ok(started);
        }
        redistribution_done(
            &ctx,
            started,
            "every partition is at that replication factor already",
        )
        .await
    })
}

pub(super) fn check_delete_topic(input: &Value) -> Result<String, ToolError> {
    let i: DeleteTopicInput = parse(input)?;
    need("topic", &i.topic)?;
    Ok(format!(
        "{}delete topic {} and every message in it (cannot be undone){}",
        only_checking(i.validate_only.unwrap_or(false)),
        i.topic,
        if i.force.unwrap_or(false) {
            ", even if consumer groups have committed offsets on it"
        } else {
            ""
        }
    ))
}

pub(super) fn delete_topic(ctx: Context, caller: Caller, input: Value) -> OpFuture {
    boxed(async move {
        let i: DeleteTopicInput = parse(&input)?;
        let q = crate::topic_lifecycle::DeleteTopic {
            force: i.force,
            validate_only: i.validate_only,
        };
        answer(crate::topic_lifecycle::delete_topic(&ctx, &caller.actor(), i.topic, q).await)
    })
}
