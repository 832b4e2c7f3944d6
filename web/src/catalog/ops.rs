//! The operations of the catalog. Each is one [`Operation`] with its input type; see the module
//! documentation of `catalog` for where their rules live.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use axum::http::Method;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{json, Value};

use super::{
    answer, changes, limited, parse, reads, schema_of, Caller, Category, Limit, OpError, OpFuture,
    Operation,
};
use crate::auth::Scope;
use crate::{ApiError, AppState};

// ------------------------------------------------------------------------------ inputs

/// No input.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Nothing {}

/// A list's row limit.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ListInput {
    /// Rows to return: omitted or 0 for the default; larger values are clamped to the maximum.
    pub limit: Option<u64>,
}

/// One proposal.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ProposalInput {
    /// The proposal id (from `list_proposals`), or `current` for the current one.
    pub proposal_id: String,
}

/// A change of one topic's configuration.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TopicConfigInput {
    /// The topic.
    pub topic: String,
    /// Configuration key → new value (string, number or boolean), or null to remove the topic's
    /// override (it then inherits the broker default), e.g. {"retention.ms": 86400000}.
    pub configs: BTreeMap<String, Value>,
}

/// An approval token.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TokenInput {
    /// The approval token a mutate tool returned.
    pub token: String,
}

/// One topic.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TopicInput {
    /// The topic name.
    pub topic: String,
}

/// One topic's partitions, with a row limit.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TopicListInput {
    /// The topic name.
    pub topic: String,
    /// Rows to return: omitted or 0 for the default; larger values are clamped to the maximum.
    pub limit: Option<u64>,
}

/// Topics by name.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct SearchTopicsInput {
    /// Text to match in topic names, case-insensitive; empty or omitted matches every topic.
    pub query: Option<String>,
    /// How `query` matches: contains (default), prefix, exact or glob (`*`, `?`).
    #[serde(rename = "match")]
    pub match_kind: Option<String>,
    /// Include internal topics such as __consumer_offsets (default false).
    pub include_internal: Option<bool>,
    /// Rows to return: omitted or 0 for the default; larger values are clamped to the maximum.
    pub limit: Option<u64>,
}

/// Consumer groups.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GroupsInput {
    /// Only groups in this state (Stable, Empty, PreparingRebalance, ...).
    pub state: Option<String>,
    /// Only group ids containing this text (case-insensitive).
    pub search: Option<String>,
    /// Rows to return: omitted or 0 for the default; larger values are clamped to the maximum.
    pub limit: Option<u64>,
}

/// One consumer group.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GroupInput {
    /// The group id.
    pub group: String,
}

/// ACL bindings matching a filter.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct AclsInput {
    /// Exact principal, form User:<name>.
    pub principal: Option<String>,
    /// Topic, Group, Cluster, TransactionalId, DelegationToken, or Any.
    pub resource_type: Option<String>,
    /// Exact resource name.
    pub resource_name: Option<String>,
    /// Rows to return: omitted or 0 for the default; larger values are clamped to the maximum.
    pub limit: Option<u64>,
}

/// Audit events matching a filter.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AuditInput {
    /// Exact action name, e.g. topics.config.update or reassignments.apply.
    pub action: Option<String>,
    /// Matches the acting user or the requester exactly.
    pub user: Option<String>,
    /// Events at or after this time (RFC 3339, a date, or Unix ms).
    pub since: Option<String>,
    /// Events at or before this time (RFC 3339, a date, or Unix ms).
    pub until: Option<String>,
    /// Case-insensitive text in the action, target, summary or details.
    pub search: Option<String>,
    /// Rows to return: omitted or 0 for the default; larger values are clamped to the maximum.
    pub limit: Option<u64>,
}

/// Reassignment history.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct HistoryInput {
    /// Only operations in this state: Pending, Active, Completed, Failed, Cancelled.
    pub state: Option<String>,
    /// Rows to return: omitted or 0 for the default; larger values are clamped to the maximum.
    pub limit: Option<u64>,
}

/// One reassignment operation.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ReassignmentInput {
    /// The operation id (from list_reassignments or a mutation's result).
    pub id: String,
}

/// Broker configuration defaults.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct DefaultsInput {
    /// Case-insensitive substring of the configuration keys to return.
    pub key_filter: Option<String>,
}

/// Partition-count recommendations.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct OptimizationInput {
    /// Only recommendations of this priority: High, Medium or Low.
    pub priority: Option<String>,
    /// Rows to return: omitted or 0 for the default; larger values are clamped to the maximum.
    pub limit: Option<u64>,
}

/// One broker.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct MaintenanceInput {
    /// The broker id.
    pub broker_id: i32,
    /// Why (shown in the dashboard and the audit log).
    pub reason: Option<String>,
    /// Drain the broker's leadership and replicas (default true).
    pub drain: Option<bool>,
}

/// One broker.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct BrokerInput {
    /// The broker id.
    pub broker_id: i32,
}

/// Redistribution of one topic's replicas.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RedistributeTopicInput {
    /// The topic.
    pub topic: String,
    /// Broker ids to spread over (default: every broker that is up and not in maintenance).
    pub brokers: Option<Vec<i32>>,
}

/// A preferred-leader election.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ElectionInput {
    /// Only this topic (default: the whole cluster).
    pub topic: Option<String>,
    /// With a topic: only these partitions (default: every partition of the topic).
    pub partitions: Option<Vec<i32>>,
}

// ------------------------------------------------------------------------------ helpers

pub(super) fn boxed<F>(f: F) -> OpFuture
where
    F: std::future::Future<Output = Result<Value, OpError>> + Send + 'static,
{
    Box::pin(f)
}

fn no_check(_: &Value) -> Result<String, OpError> {
    Ok(String::new())
}

/// A proposal as agents get it (tool rule 5): no broker activity scores, cluster snapshots,
/// `fairShare.shares`, oversized partitions per load or `movement.search`; `topicSpread.atLimit`
/// keyed by pair without the cap counts; at most 50 reassignments with the full count.
pub(crate) fn proposal_for_agents(mut p: Value) -> Value {
    const EMBEDDED: usize = 50;
    if let Some(fair) = p.get_mut("fairShare").and_then(Value::as_object_mut) {
        fair.remove("shares");
        if let Some(loads) = fair.get_mut("loads").and_then(Value::as_object_mut) {
            for load in loads.values_mut() {
                if let Some(load) = load.as_object_mut() {
                    load.retain(|k, _| !k.to_ascii_lowercase().contains("oversized"));
                }
            }
        }
    }
    if let Some(movement) = p.get_mut("movement").and_then(Value::as_object_mut) {
        movement.remove("search");
    }
    if let Some(spread) = p.get_mut("topicSpread").and_then(Value::as_object_mut) {
        spread.retain(|k, _| k == "atLimit");
    }
    if let Some(obj) = p.as_object_mut() {
        obj.remove("activity");
        obj.remove("snapshot");
        let moves = match obj.remove("reassignments") {
            Some(Value::Array(moves)) => moves,
            _ => Vec::new(),
        };
        // The proposal answer embeds only its first moves; its total counts every one.
        let total = obj
            .get("totalReassignments")
            .and_then(Value::as_u64)
            .map_or(moves.len(), |t| t as usize);
        obj.insert(
            "reassignments".into(),
            Value::Array(moves.into_iter().take(EMBEDDED).collect()),
        );
        obj.insert("totalReassignments".into(), json!(total));
        obj.insert("reassignmentsTruncated".into(), json!(total > EMBEDDED));
        // Agents page the rest with the REST list (no tool pages moves yet).
        obj.remove("reassignmentsNext");
    }
    p
}

pub(super) fn rows(v: &Value, key: &str) -> Vec<Value> {
    v.get(key)
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default()
}

/// A text parameter as the REST query string carried it: an empty value was left out.
pub(super) fn given(v: Option<String>) -> Option<String> {
    v.filter(|v| !v.is_empty())
}

/// Re-applies the MCP envelope over an answer a REST route already cut to `rows` rows (`total`
/// is the REST route's count of every match).
pub(super) fn reshape(mut d: Value, key: &str, hint: &str) -> Value {
    let rows = d.get(key).and_then(Value::as_array).map_or(0, Vec::len);
    let total = d["total"].as_u64().map_or(rows, |t| t as usize);
    if let Some(obj) = d.as_object_mut() {
        super::envelope(obj, rows, total as u64, rows < total, hint);
    }
    d
}

pub(super) fn need(what: &str, v: &str) -> Result<(), OpError> {
    if v.trim().is_empty() {
        return Err(OpError::invalid(format!("{what}: must not be empty")));
    }
    Ok(())
}

/// An operation function's answer that is JSON text already (the observed routes render theirs
/// once per sample), as the JSON agents get.
pub(super) fn answer_text(r: Result<Arc<String>, ApiError>) -> Result<Value, OpError> {
    let text = r?;
    serde_json::from_str(&text).map_err(|e| OpError {
        status: 500,
        code: "FAILED".into(),
        message: format!("the answer is not JSON: {e}"),
    })
}

/// A proposal id as agents give it: trimmed, not empty (`current` for the current one).
fn proposal_id(id: &str) -> Result<String, OpError> {
    let id = id.trim();
    if id.is_empty() {
        return Err(OpError::invalid("proposalId: must not be empty"));
    }
    Ok(id.to_string())
}

// ------------------------------------------------------------------------------ reads

fn cluster_overview(state: AppState, _caller: Caller, input: Value) -> OpFuture {
    boxed(async move {
        let input: ListInput = parse(&input)?;
        let v = crate::observed_view::require(&state)
            .await
            .map_err(ApiError::from)?;
        // Shaped for agents once per reading at the default limit (the cluster's `ageMs` is set
        // per request); another limit is shaped for its request.
        const KEY: &str = "mcp-cluster-overview";
        let default = matches!(input.limit, None | Some(0));
        let kept = default
            .then(|| {
                let rendered = v.rendered.lock().unwrap_or_else(|e| e.into_inner());
                rendered.get(KEY).cloned()
            })
            .flatten();
        let text = match kept {
            Some(text) => text,
            None => {
                let q = crate::routes::observed::cluster::ComprehensiveQuery {
                    summary: Some(true),
                    ..Default::default()
                };
                let d = answer_text(
                    crate::routes::observed::cluster::get_cluster_overview(&state, q)
                        .await
                        .map(|o| o.text()),
                )?;
                let made = overview_for_agents(&d, input.limit).to_string();
                if default {
                    v.rendered(KEY, || made)
                } else {
                    Arc::new(made)
                }
            }
        };
        let mut d = answer_text(Ok(text))?;
        if let Some(cluster) = d.get_mut("cluster").and_then(Value::as_object_mut) {
            let age = (state.clock.now_ms() - v.sampled_at_ms()).max(0);
            cluster.insert("ageMs".into(), json!(age));
        }
        Ok(d)
    })
}

/// The agents' overview of a `cluster/comprehensive` summary: the largest topics first (at most
/// `limit`), the cluster, brokers, health, rack assessment, coverage and the consumer groups'
/// counts.
fn overview_for_agents(d: &Value, limit: Option<u64>) -> Value {
    let mut topics = rows(d, "topics");
    let count = |t: &Value| t["partitionCount"].as_i64().unwrap_or(0);
    topics.sort_by(|a, b| {
        count(b)
            .cmp(&count(a))
            .then_with(|| a["name"].as_str().cmp(&b["name"].as_str()))
    });
    let mut out = limited(
        "topics",
        topics,
        Limit::new(100, 500),
        limit,
        "narrow with search_topics (by name) or get_topic_config (one topic)",
    );
    out.insert("totalTopics".into(), d["page"]["totalTopics"].clone());
    out.insert(
        "totalPartitions".into(),
        d["page"]["totalPartitions"].clone(),
    );
    for key in ["cluster", "brokers", "health", "rackAssessment", "coverage"] {
        out.insert(key.into(), d.get(key).cloned().unwrap_or(Value::Null));
    }
    let groups = &d["consumerGroups"];
    out.insert(
        "consumerGroups".into(),
        json!({"total": groups["total"], "byState": groups["byState"]}),
    );
    Value::Object(out)
}

fn cluster_health(state: AppState, _caller: Caller, input: Value) -> OpFuture {
    boxed(async move {
        let _: Nothing = parse(&input)?;
        let q = crate::routes::observed::cluster::HealthQuery::default();
        let mut d =
            answer_text(crate::routes::observed::cluster::get_cluster_health(&state, q).await)?;
        let details = d["rackAssessment"]["notRackAwareDetails"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        let cut = limited(
            "notRackAwareDetails",
            details,
            Limit::fixed(20),
            None,
            "get_broker_racks shows the rack layout; the REST API /api/v1/cluster/health has every partition",
        );
        if let Some(ra) = d.get_mut("rackAssessment").and_then(Value::as_object_mut) {
            for (k, v) in cut {
                ra.insert(k, v);
            }
        }
        Ok(d)
    })
}

fn list_proposals(state: AppState, _caller: Caller, input: Value) -> OpFuture {
    boxed(async move {
        let input: ListInput = parse(&input)?;
        let limit = Limit::new(20, 100);
        let rows_wanted = limit.rows(input.limit);
        let q = crate::routes::proposals::ListQuery {
            limit: Some(rows_wanted as u64),
            ..Default::default()
        };
        let d = answer(crate::routes::proposals::list_proposals(&state, q).await)?;
        let proposals = rows(&d, "proposals");
        let total = d["total"].as_u64().unwrap_or(proposals.len() as u64) as usize;
        let mut out = limited(
            "proposals",
            proposals,
            limit,
            input.limit,
            "get_proposal for one",
        );
        out.insert("total".into(), json!(total));
        let truncated = out["count"].as_u64().unwrap_or(0) < total as u64;
        out.insert("truncated".into(), json!(truncated));
        if truncated {
            out.insert(
                "hint".into(),
                json!("raise limit (at most 100), or get_proposal for one"),
            );
        } else {
            out.remove("hint");
        }
        Ok(Value::Object(out))
    })
}

fn get_proposal(state: AppState, _caller: Caller, input: Value) -> OpFuture {
    boxed(async move {
        let input: ProposalInput = parse(&input)?;
        let id = proposal_id(&input.proposal_id)?;
        // Shaped for agents once per check, as the REST answer is rendered once.
        answer_text(
            crate::routes::proposals::get_proposal(&state, id)
                .await
                .map(|f| f.shaped("agents", proposal_for_agents)),
        )
    })
}

fn generate_proposal(state: AppState, _caller: Caller, input: Value) -> OpFuture {
    boxed(async move {
        let _: Nothing = parse(&input)?;
        answer_text(
            crate::routes::proposals::generate_proposal(&state)
                .await
                .map(|f| f.shaped("agents", proposal_for_agents)),
        )
    })
}

fn broker_racks(state: AppState, _caller: Caller, input: Value) -> OpFuture {
    boxed(async move {
        let _: Nothing = parse(&input)?;
        answer_text(crate::routes::observed::cluster::get_broker_racks(&state).await)
    })
}

fn topic_config(state: AppState, _caller: Caller, input: Value) -> OpFuture {
    boxed(async move {
        let i: TopicInput = parse(&input)?;
        need("topic", &i.topic)?;
        answer(
            crate::routes::live::configs::get_topic_config(&state, i.topic, Default::default())
                .await,
        )
    })
}

fn search_topics(state: AppState, _caller: Caller, input: Value) -> OpFuture {
    boxed(async move {
        let i: SearchTopicsInput = parse(&input)?;
        let limit = Limit::new(100, 1000).rows(i.limit);
        let body = crate::routes::observed::topics::SearchBody {
            query: Some(i.query.unwrap_or_default()),
            mode: Some(i.match_kind.unwrap_or_else(|| "contains".into())),
            include_internal: Some(i.include_internal.unwrap_or(false)),
            limit: Some(limit),
            offset: None,
        };
        let d = answer(crate::routes::observed::topics::search_topics(&state, body).await)?;
        Ok(reshape(
            d,
            "topics",
            "narrow the query, or match: prefix / exact",
        ))
    })
}

fn list_consumer_groups(state: AppState, _caller: Caller, input: Value) -> OpFuture {
    boxed(async move {
        let i: GroupsInput = parse(&input)?;
        let limit = Limit::new(100, 500).rows(i.limit);
        let q = crate::routes::live::groups::ListQuery {
            state: given(i.state),
            search: given(i.search),
            limit: Some(u32::try_from(limit).unwrap_or(u32::MAX)),
        };
        let d = answer(crate::routes::live::groups::list_consumer_groups(&state, q).await)?;
        Ok(reshape(
            d,
            "groups",
            "filter with search or state, or describe_consumer_group for one",
        ))
    })
}

fn describe_consumer_group(state: AppState, _caller: Caller, input: Value) -> OpFuture {
    boxed(async move {
        let i: GroupInput = parse(&input)?;
        need("group", &i.group)?;
        answer(crate::routes::live::groups::describe_consumer_group(&state, i.group).await)
    })
}

fn list_acls(state: AppState, _caller: Caller, input: Value) -> OpFuture {
    boxed(async move {
        let i: AclsInput = parse(&input)?;
        let limit = Limit::new(100, 500).rows(i.limit);
        let q = crate::routes::live::acls::AclQuery {
            principal: i.principal,
            resource_type: i.resource_type,
            resource_name: i.resource_name,
            limit: Some(u32::try_from(limit).unwrap_or(u32::MAX)),
            ..Default::default()
        };
        let d = answer(crate::routes::live::acls::list_acls(&state, q).await)?;
        Ok(reshape(
            d,
            "bindings",
            "filter by principal, resourceType or resourceName",
        ))
    })
}

fn topic_watermarks(state: AppState, _caller: Caller, input: Value) -> OpFuture {
    boxed(async move {
        let i: TopicListInput = parse(&input)?;
        need("topic", &i.topic)?;
        let d = answer(crate::routes::live::messages::get_topic_watermarks(&state, i.topic).await)?;
        let mut partitions = rows(&d, "partitions");
        partitions.sort_by_key(|p| p["partition"].as_i64().unwrap_or(0));
        let mut out = limited(
            "partitions",
            partitions,
            Limit::new(100, 1000),
            i.limit,
            "raise limit (at most 1000)",
        );
        for key in ["topic", "partitionCount", "totalMessages"] {
            out.insert(key.into(), d.get(key).cloned().unwrap_or(Value::Null));
        }
        Ok(Value::Object(out))
    })
}

fn search_audit_log(state: AppState, _caller: Caller, input: Value) -> OpFuture {
    boxed(async move {
        let i: AuditInput = parse(&input)?;
        let limit = Limit::new(50, 200).rows(i.limit);
        let q = crate::routes::audit::ListQuery {
            action: given(i.action),
            user: given(i.user),
            since: given(i.since),
            until: given(i.until),
            search: given(i.search),
            limit: Some(u32::try_from(limit).unwrap_or(u32::MAX)),
            ..Default::default()
        };
        let d = answer(crate::routes::audit::search_audit_log(&state, q).await)?;
        Ok(reshape(
            d,
            "events",
            "narrow with action, user, since/until or search",
        ))
    })
}

/// The reassignment list's query: `rows` newest operations, optionally in one state.
fn history_query(
    rows_wanted: usize,
    filter: Option<String>,
) -> crate::routes::reassignments::ListQuery {
    crate::routes::reassignments::ListQuery {
        state: given(filter),
        limit: Some(rows_wanted as u64),
        ..Default::default()
    }
}

/// The reassignment list as agents get it: the operations under `history`, in the envelope.
fn history(d: Result<Value, OpError>) -> Result<Value, OpError> {
    let mut d = d?;
    if let Some(obj) = d.as_object_mut() {
        if let Some(ops) = obj
            .remove("operations")
            .or_else(|| obj.remove("reassignments"))
        {
            obj.insert("history".into(), ops);
        }
    }
    Ok(reshape(
        d,
        "history",
        "filter by state, or get_reassignment_by_id for one",
    ))
}

fn list_reassignments(state: AppState, _caller: Caller, input: Value) -> OpFuture {
    boxed(async move {
        let _: Nothing = parse(&input)?;
        let q = history_query(Limit::fixed(10).rows(None), None);
        history(answer(
            crate::routes::reassignments::list_reassignments(&state, q).await,
        ))
    })
}

fn reassignment_history(state: AppState, _caller: Caller, input: Value) -> OpFuture {
    boxed(async move {
        let i: HistoryInput = parse(&input)?;
        let q = history_query(Limit::new(20, 100).rows(i.limit), i.state);
        history(answer(
            crate::routes::reassignments::get_reassignment_history(&state, q).await,
        ))
    })
}

fn reassignment_by_id(state: AppState, _caller: Caller, input: Value) -> OpFuture {
    boxed(async move {
        let i: ReassignmentInput = parse(&input)?;
        need("id", &i.id)?;
        answer(crate::routes::reassignments::get_reassignment_by_id(&state, i.id).await)
    })
}

fn default_configs(state: AppState, _caller: Caller, input: Value) -> OpFuture {
    boxed(async move {
        let i: DefaultsInput = parse(&input)?;
        let q = crate::routes::live::configs::DefaultsQuery {
            broker: None,
            key_filter: given(i.key_filter),
        };
        answer(crate::routes::live::configs::get_default_configs(&state, q).await)
    })
}

fn partition_optimization(state: AppState, _caller: Caller, input: Value) -> OpFuture {
    boxed(async move {
        let i: OptimizationInput = parse(&input)?;
        let limit = Limit::new(20, 100).rows(i.limit);
        let q = crate::routes::observed::topics::OptimizeQuery {
            priority: given(i.priority),
            limit: Some(limit),
            ..Default::default()
        };
        let d = answer_text(
            crate::routes::observed::topics::get_partition_optimization(&state, q).await,
        )?;
        Ok(reshape(
            d,
            "recommendations",
            "filter by priority (High, Medium, Low)",
        ))
    })
}

// ------------------------------------------------------------------------------ mutations

fn check_topic_config(input: &Value) -> Result<String, OpError> {
    let input: TopicConfigInput = parse(input)?;
    if input.topic.trim().is_empty() {
        return Err(OpError::invalid("topic: must not be empty"));
    }
    if input.configs.is_empty() {
        return Err(OpError::invalid("configs: name at least one key"));
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

fn update_topic_config(state: AppState, caller: Caller, input: Value) -> OpFuture {
    boxed(async move {
        let input: TopicConfigInput = parse(&input)?;
        answer(
            ballast_ops::topic_configs::update_topic_config(
                &state,
                &caller.actor(),
                input.topic,
                input.configs,
            )
            .await
            .map_err(crate::ApiError::from),
        )
    })
}

fn check_apply_proposal(input: &Value) -> Result<String, OpError> {
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
    state: &AppState,
    proposal_id: &str,
) -> Result<Result<String, Value>, OpError> {
    use crate::routes::proposals::{no_proposal, unknown};
    let id = proposal_id.trim();
    if id.is_empty() {
        return Err(OpError::invalid("proposalId: must not be empty"));
    }
    // The head (the stored verdict) is all this needs: the plan is not read.
    let p = if id == "current" {
        state
            .db(|s| s.current_proposal_head())
            .await?
            .ok_or_else(no_proposal)?
    } else {
        let key = id.to_string();
        state
            .db(move |s| s.proposal_head(&key))
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
fn apply_proposal_gate(state: AppState, _caller: Caller, input: Value) -> OpFuture {
    boxed(async move {
        let input: ProposalInput = parse(&input)?;
        Ok(match proposal_gate(&state, &input.proposal_id).await? {
            Ok(_) => Value::Null,
            Err(blocked) => blocked,
        })
    })
}

fn apply_proposal(state: AppState, caller: Caller, input: Value) -> OpFuture {
    boxed(async move {
        let input: ProposalInput = parse(&input)?;
        let id = match proposal_gate(&state, &input.proposal_id).await? {
            Ok(id) => id,
            Err(blocked) => return Ok(blocked),
        };
        let started = answer(
            crate::routes::reassignments::apply_proposal(
                &state,
                &caller.actor(),
                id,
                Default::default(),
            )
            .await,
        )?;
        let operation = started["bulkId"]
            .as_str()
            .or(started["operationId"].as_str())
            .or(started["id"].as_str())
            .unwrap_or_default()
            .to_string();
        wait_for_operation(&state, &operation, started).await
    })
}

/// Polls the reassignment until it ends: `completed`, or the failure and its reason.
pub(super) async fn wait_for_operation(
    state: &AppState,
    operation: &str,
    started: Value,
) -> Result<Value, OpError> {
    if operation.is_empty() {
        return Ok(json!({"status": "completed", "submitted": started}));
    }
    let deadline = tokio::time::Instant::now() + APPLY_WAIT;
    loop {
        let r = answer(
            crate::routes::reassignments::get_reassignment_by_id(state, operation.to_string())
                .await,
        )?;
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
                "reason": "still running; follow it with get_reassignment_by_id", "reassignment": r}));
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
}

fn check_group(input: &Value) -> Result<String, OpError> {
    let i: GroupInput = parse(input)?;
    need("group", &i.group)?;
    Ok(format!(
        "delete consumer group {} and its committed offsets (only an empty group)",
        i.group
    ))
}

fn delete_consumer_group(state: AppState, caller: Caller, input: Value) -> OpFuture {
    boxed(async move {
        let i: GroupInput = parse(&input)?;
        answer(
            ballast_ops::groups::delete_consumer_group(&state, &caller.actor(), i.group)
                .await
                .map_err(crate::ApiError::from),
        )
    })
}

fn check_reassignment(input: &Value) -> Result<String, OpError> {
    let i: ReassignmentInput = parse(input)?;
    need("id", &i.id)?;
    Ok(format!(
        "cancel reassignment {}: in-flight moves are cancelled, completed ones stay",
        i.id
    ))
}

fn cancel_reassignment(state: AppState, caller: Caller, input: Value) -> OpFuture {
    boxed(async move {
        let i: ReassignmentInput = parse(&input)?;
        answer(
            crate::routes::reassignments::cancel_reassignment(&state, &caller.actor(), i.id).await,
        )
    })
}

fn check_maintenance(input: &Value) -> Result<String, OpError> {
    let i: MaintenanceInput = parse(input)?;
    let drain = if i.drain.unwrap_or(true) {
        ", draining its leadership and replicas"
    } else {
        ""
    };
    Ok(format!("put broker {} in maintenance{drain}", i.broker_id))
}

fn set_broker_maintenance(state: AppState, caller: Caller, input: Value) -> OpFuture {
    boxed(async move {
        let i: MaintenanceInput = parse(&input)?;
        let drain = i.drain.unwrap_or(true);
        let body = crate::routes::brokers::EnterBody {
            reason: i.reason,
            drain: Some(drain),
        };
        let started = answer(
            crate::routes::brokers::set_broker_maintenance(
                &state,
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
        wait_for_operation(&state, &operation, started).await
    })
}

fn check_broker(input: &Value) -> Result<String, OpError> {
    let i: BrokerInput = parse(input)?;
    Ok(format!(
        "take broker {} out of maintenance and cancel its drain if one still runs (the next proposal moves partitions back)",
        i.broker_id
    ))
}

fn remove_broker_maintenance(state: AppState, caller: Caller, input: Value) -> OpFuture {
    boxed(async move {
        let i: BrokerInput = parse(&input)?;
        answer(
            crate::routes::brokers::remove_broker_maintenance(
                &state,
                &caller.actor(),
                i.broker_id,
                false,
            )
            .await,
        )
    })
}

fn check_redistribute_topic(input: &Value) -> Result<String, OpError> {
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

fn redistribute_topic(state: AppState, caller: Caller, input: Value) -> OpFuture {
    boxed(async move {
        let i: RedistributeTopicInput = parse(&input)?;
        let body = crate::routes::reassignments::TopicBody {
            preview: Some(false),
            brokers: i.brokers.map(|b| b.into_iter().map(i64::from).collect()),
        };
        let started = answer(
            crate::routes::reassignments::redistribute_topic(
                &state,
                &caller.actor(),
                i.topic,
                Default::default(),
                body,
            )
            .await,
        )?;
        redistribution_done(&state, started, "nothing to move").await
    })
}

/// Waits until the reassignment a redistribution started (`operationId`) ends; when it started
/// none, `completed` with `reason` and the route's answer.
pub(super) async fn redistribution_done(
    state: &AppState,
    started: Value,
    reason: &str,
) -> Result<Value, OpError> {
    let operation = started["operationId"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    if operation.is_empty() {
        return Ok(json!({"status": "completed", "reason": reason, "redistribution": started}));
    }
    wait_for_operation(state, &operation, started).await
}

fn check_election(input: &Value) -> Result<String, OpError> {
    let i: ElectionInput = parse(input)?;
    match (&i.topic, &i.partitions) {
        (None, Some(_)) => Err(OpError::invalid("partitions: name the topic too")),
        (None, None) => Ok("elect the preferred leader of every partition it does not lead".into()),
        (Some(t), _) => {
            need("topic", t)?;
            Ok(format!("elect preferred leaders of topic {t}"))
        }
    }
}

fn preferred_leader_election(state: AppState, caller: Caller, input: Value) -> OpFuture {
    boxed(async move {
        use crate::routes::brokers::{ClusterElection, Election, TopicElection};
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
        answer(
            crate::routes::brokers::preferred_leader_election(&state, &caller.actor(), election)
                .await,
        )
    })
}

// ------------------------------------------------------------------------------ meta

/// Meta tools are run by the MCP adapter itself (they are the approval workflow); their
/// declaration here gives them a schema, a scope and a description like every other tool.
fn meta(_: AppState, _: Caller, _: Value) -> OpFuture {
    boxed(async {
        Err(OpError::invalid(
            "a meta tool is answered by the MCP endpoint",
        ))
    })
}

// ------------------------------------------------------------------------------ the list

pub(super) static OPERATIONS: &[Operation] = &[
    Operation {
        name: "get_cluster_overview",
        title: "Cluster overview",
        category: Category::Read,
        area: "cluster",
        scope: Scope::Read,
        licensed: false,
        rest: Some((Method::GET, "/api/v1/cluster/comprehensive")),
        description: "The cluster at a glance: the cluster (active controller, metadata mode kraft or zookeeper, the Kafka release range its brokers run), brokers with their loads (isController: the active controller), health, rack assessment, consumer-group counts, and topics (largest partition count first). `totalTopics`/`totalPartitions` count everything even when `topics` is cut.",
        schema: schema_of::<ListInput>,
        check: no_check,
        run: cluster_overview,
        before_queue: None,
    },
    Operation {
        name: "get_cluster_health",
        title: "Cluster health",
        category: Category::Read,
        area: "cluster",
        scope: Scope::Read,
        licensed: false,
        rest: Some((Method::GET, "/api/v1/cluster/health")),
        description: "Broker and partition health: offline, under-replicated, under and at min ISR partitions, offline log dirs, and the rack assessment (the first 20 partitions that are not rack-aware).",
        schema: schema_of::<Nothing>,
        check: no_check,
        run: cluster_health,
        before_queue: None,
    },
    Operation {
        name: "list_proposals",
        title: "Stored rebalancing proposals",
        category: Category::Read,
        area: "proposals",
        scope: Scope::Read,
        licensed: false,
        rest: Some((Method::GET, "/api/v1/proposals")),
        description: "Stored proposals, newest first, as summary rows each with its own `decision` (whether it may be applied, and the next action).",
        schema: schema_of::<ListInput>,
        check: no_check,
        run: list_proposals,
        before_queue: None,
    },
    Operation {
        name: "get_proposal",
        title: "One proposal",
        category: Category::Read,
        area: "proposals",
        scope: Scope::Read,
        licensed: false,
        rest: Some((Method::GET, "/api/v1/proposals/{proposalId}")),
        description: "A proposal with its decision, fair shares per load, balance per metric, structural limits and the first 50 moves (`totalReassignments` gives all). Use proposalId `current` for the current one.",
        schema: schema_of::<ProposalInput>,
        check: no_check,
        run: get_proposal,
        before_queue: None,
    },
    Operation {
        name: "generate_proposal",
        title: "The current candidate proposal",
        category: Category::Read,
        area: "proposals",
        scope: Scope::Read,
        licensed: false,
        rest: Some((Method::POST, "/api/v1/proposals/generate")),
        description: "The server's current candidate proposal and its `decision`; it starts no calculation (the observer plans after every sample).",
        schema: schema_of::<Nothing>,
        check: no_check,
        run: generate_proposal,
        before_queue: None,
    },
    Operation {
        name: "get_broker_racks",
        title: "Broker racks",
        category: Category::Read,
        area: "brokers",
        scope: Scope::Read,
        licensed: false,
        rest: Some((Method::GET, "/api/v1/brokers/racks")),
        description: "Brokers per rack (alive, leaders, replicas, disk) and the rack assessment with up to 20 partitions that are not rack-aware.",
        schema: schema_of::<Nothing>,
        check: no_check,
        run: broker_racks,
        before_queue: None,
    },
    Operation {
        name: "get_topic_config",
        title: "A topic's configuration",
        category: Category::Read,
        area: "topics",
        scope: Scope::Read,
        licensed: false,
        rest: Some((Method::GET, "/api/v1/topics/{topic}/config")),
        description: "Every configuration entry of a topic with its value and source (topic override, broker, default).",
        schema: schema_of::<TopicInput>,
        check: no_check,
        run: topic_config,
        before_queue: None,
    },
    Operation {
        name: "search_topics",
        title: "Search topics by name",
        category: Category::Read,
        area: "topics",
        scope: Scope::Read,
        licensed: false,
        rest: Some((Method::POST, "/api/v1/topics/search")),
        description: "Topics whose name matches (contains, prefix, exact or glob), in name order, with size, rates and settings.",
        schema: schema_of::<SearchTopicsInput>,
        check: no_check,
        run: search_topics,
        before_queue: None,
    },
    Operation {
        name: "list_acls",
        title: "ACL bindings",
        category: Category::Read,
        area: "acls",
        scope: Scope::Read,
        licensed: false,
        rest: Some((Method::GET, "/api/v1/acls")),
        description: "ACL bindings matching a filter, ordered by resource type, resource name, principal.",
        schema: schema_of::<AclsInput>,
        check: no_check,
        run: list_acls,
        before_queue: None,
    },
    Operation {
        name: "list_consumer_groups",
        title: "Consumer groups",
        category: Category::Read,
        area: "groups",
        scope: Scope::Read,
        licensed: false,
        rest: Some((Method::GET, "/api/v1/consumer-groups")),
        description: "Consumer groups in group-id order with state, members and lag.",
        schema: schema_of::<GroupsInput>,
        check: no_check,
        run: list_consumer_groups,
        before_queue: None,
    },
    Operation {
        name: "describe_consumer_group",
        title: "One consumer group",
        category: Category::Read,
        area: "groups",
        scope: Scope::Read,
        licensed: false,
        rest: Some((Method::GET, "/api/v1/consumer-groups/{group}")),
        description: "A consumer group's state, coordinator, members with their assignments, and lag per topic.",
        schema: schema_of::<GroupInput>,
        check: no_check,
        run: describe_consumer_group,
        before_queue: None,
    },
    Operation {
        name: "get_topic_watermarks",
        title: "A topic's watermarks",
        category: Category::Read,
        area: "messages",
        scope: Scope::Read,
        licensed: false,
        rest: Some((Method::GET, "/api/v1/topics/{topic}/watermarks")),
        description: "Each partition's low and high watermark and message count, by partition; totalMessages covers every partition.",
        schema: schema_of::<TopicListInput>,
        check: no_check,
        run: topic_watermarks,
        before_queue: None,
    },
    Operation {
        name: "search_audit_log",
        title: "Search the audit log",
        category: Category::Read,
        area: "audit",
        scope: Scope::Read,
        licensed: false,
        rest: Some((Method::GET, "/api/v1/audit-log")),
        description: "Audit events newest first: who changed what, when, through which door (method), with before and after.",
        schema: schema_of::<AuditInput>,
        check: no_check,
        run: search_audit_log,
        before_queue: None,
    },
    Operation {
        name: "list_reassignments",
        title: "Recent reassignments",
        category: Category::Read,
        area: "reassignments",
        scope: Scope::Read,
        licensed: false,
        rest: Some((Method::GET, "/api/v1/reassignments")),
        description: "The 10 newest reassignment operations with progress, rate and ETA, and who holds the mutation slot.",
        schema: schema_of::<Nothing>,
        check: no_check,
        run: list_reassignments,
        before_queue: None,
    },
    Operation {
        name: "get_reassignment_history",
        title: "Reassignment history",
        category: Category::Read,
        area: "reassignments",
        scope: Scope::Read,
        licensed: false,
        rest: Some((Method::GET, "/api/v1/reassignments")),
        description: "Reassignment operations newest first, optionally in one state.",
        schema: schema_of::<HistoryInput>,
        check: no_check,
        run: reassignment_history,
        before_queue: None,
    },
    Operation {
        name: "get_reassignment_by_id",
        title: "One reassignment",
        category: Category::Read,
        area: "reassignments",
        scope: Scope::Read,
        licensed: false,
        rest: Some((Method::GET, "/api/v1/reassignments/{id}")),
        description: "One reassignment operation with every partition's state, step, bytes, rate, ETA and reason.",
        schema: schema_of::<ReassignmentInput>,
        check: no_check,
        run: reassignment_by_id,
        before_queue: None,
    },
    Operation {
        name: "get_default_configs",
        title: "Broker configuration defaults",
        category: Category::Read,
        area: "cluster",
        scope: Scope::Read,
        licensed: false,
        rest: Some((Method::GET, "/api/v1/config/defaults")),
        description: "The configuration the controller runs with, each entry with its source; keyFilter narrows by key.",
        schema: schema_of::<DefaultsInput>,
        check: no_check,
        run: default_configs,
        before_queue: None,
    },
    Operation {
        name: "get_partition_optimization",
        title: "Partition-count recommendations",
        category: Category::Read,
        area: "topics",
        scope: Scope::Read,
        licensed: false,
        rest: Some((Method::GET, "/api/v1/optimize/partitions")),
        description: "Topics whose partition count should change (High, Medium, Low, then topic), each with the figures behind it; byPriority counts all.",
        schema: schema_of::<OptimizationInput>,
        check: no_check,
        run: partition_optimization,
        before_queue: None,
    },
    Operation {
        name: "delete_consumer_group",
        title: "Delete a consumer group",
        category: Category::Mutate,
        area: "groups",
        scope: Scope::Write,
        licensed: true,
        rest: Some((Method::DELETE, "/api/v1/consumer-groups/{group}")),
        description: "Deletes an empty consumer group and its committed offsets. Queued for approval.",
        schema: schema_of::<GroupInput>,
        check: check_group,
        run: delete_consumer_group,
        before_queue: None,
    },
    Operation {
        name: "cancel_reassignment",
        title: "Cancel a reassignment",
        category: Category::Mutate,
        area: "reassignments",
        scope: Scope::Write,
        licensed: false,
        rest: Some((Method::POST, "/api/v1/reassignments/{id}/cancel")),
        description: "Cancels a running reassignment operation: in-flight moves are cancelled, pending ones never start, completed ones stay. Queued for approval.",
        schema: schema_of::<ReassignmentInput>,
        check: check_reassignment,
        run: cancel_reassignment,
        before_queue: None,
    },
    Operation {
        name: "set_broker_maintenance",
        title: "Put a broker in maintenance",
        category: Category::Mutate,
        area: "brokers",
        scope: Scope::Write,
        licensed: true,
        rest: Some((Method::POST, "/api/v1/brokers/{brokerId}/maintenance")),
        description: "Puts a broker in maintenance: the planner moves nothing onto it and, unless drain is false, its leadership then its replicas are drained as throttled reassignments; waits until the drain finishes (status completed, or the failure). Queued for approval.",
        schema: schema_of::<MaintenanceInput>,
        check: check_maintenance,
        run: set_broker_maintenance,
        before_queue: None,
    },
    Operation {
        name: "remove_broker_maintenance",
        title: "Take a broker out of maintenance",
        category: Category::Mutate,
        area: "brokers",
        scope: Scope::Write,
        licensed: true,
        rest: Some((Method::DELETE, "/api/v1/brokers/{brokerId}/maintenance")),
        description: "Ends a broker's maintenance; the next proposal moves partitions back onto it. Queued for approval.",
        schema: schema_of::<BrokerInput>,
        check: check_broker,
        run: remove_broker_maintenance,
        before_queue: None,
    },
    Operation {
        name: "redistribute_topic",
        title: "Redistribute a topic",
        category: Category::Mutate,
        area: "reassignments",
        scope: Scope::Write,
        licensed: true,
        rest: Some((Method::POST, "/api/v1/topics/{topic}/redistribute")),
        description: "Spreads a topic's replicas and preferred leaders evenly over the chosen brokers with as few moves as possible, as throttled reassignments, and waits until they finish (status completed, or the failure). Queued for approval.",
        schema: schema_of::<RedistributeTopicInput>,
        check: check_redistribute_topic,
        run: redistribute_topic,
        before_queue: None,
    },
    Operation {
        name: "preferred_leader_election",
        title: "Elect preferred leaders",
        category: Category::Mutate,
        area: "brokers",
        scope: Scope::Write,
        licensed: true,
        rest: Some((Method::POST, "/api/v1/preferred-leader-election")),
        description: "Moves leadership back to each partition's preferred replica: the whole cluster, or one topic (and some of its partitions). Queued for approval.",
        schema: schema_of::<ElectionInput>,
        check: check_election,
        run: preferred_leader_election,
        before_queue: None,
    },
    Operation {
        name: "update_topic_config",
        title: "Change a topic's configuration",
        category: Category::Mutate,
        area: "topics",
        scope: Scope::Write,
        licensed: true,
        rest: Some((Method::PUT, "/api/v1/topics/{topic}/config")),
        description: "Sets or removes configuration overrides of one topic (e.g. retention.ms). Queued for approval by another person; on approval the change is made and read back.",
        schema: schema_of::<TopicConfigInput>,
        check: check_topic_config,
        run: update_topic_config,
        before_queue: None,
    },
    Operation {
        name: "apply_proposal",
        title: "Apply a rebalancing proposal",
        category: Category::Mutate,
        area: "proposals",
        scope: Scope::Write,
        licensed: true,
        rest: Some((Method::POST, "/api/v1/proposals/{proposalId}/apply")),
        description: "Executes a proposal's moves as throttled reassignments and waits until they finish (`status: completed`, or the failure and its reason). Answers `status: blocked` with the reason when the proposal's decision does not allow it — before queueing and again at approval; there is no force.",
        schema: schema_of::<ProposalInput>,
        check: check_apply_proposal,
        run: apply_proposal,
        before_queue: Some(apply_proposal_gate),
    },
    Operation {
        name: "get_partition_activity",
        title: "Partition activity",
        category: Category::Read,
        area: "topics",
        scope: Scope::Read,
        licensed: false,
        rest: Some((Method::GET, "/api/v1/activity/partitions")),
        description: "Partitions by traffic: rates, size, share of the cluster's traffic (activityScore) and level (idle, low, normal, hot). Plain: topic then partition order; sortBy: largest first; aggregate: topic gives one row per topic; topic and brokerId narrow.",
        schema: schema_of::<reads::ActivityInput>,
        check: no_check,
        run: reads::partition_activity,
        before_queue: None,
    },
    Operation {
        name: "search_topics_by_config",
        title: "Search topics by configuration",
        category: Category::Read,
        area: "topics",
        scope: Scope::Read,
        licensed: false,
        rest: Some((Method::GET, "/api/v1/topics/config-search")),
        description: "Topics whose effective value of one configuration key matches (eq, ne, contains, or numeric lt/le/gt/ge), read live from the cluster, by name; each row says the value, its source and whether the topic overrides it.",
        schema: schema_of::<reads::ConfigSearchInput>,
        check: no_check,
        run: reads::search_topics_by_config,
        before_queue: None,
    },
    Operation {
        name: "get_consumer_group_lag",
        title: "Consumer group lag",
        category: Category::Read,
        area: "groups",
        scope: Scope::Read,
        licensed: false,
        rest: Some((Method::GET, "/api/v1/consumer-groups/{group}/lag")),
        description: "A consumer group's lag: totalLag, maxLag and per-topic sums over every partition, and the partitions with the most lag (topPartitions, largest first) with committed and log-end offsets and the member reading each.",
        schema: schema_of::<reads::LagInput>,
        check: no_check,
        run: reads::consumer_group_lag,
        before_queue: None,
    },
    Operation {
        name: "browse_messages",
        title: "Browse messages",
        category: Category::Read,
        area: "messages",
        scope: Scope::Read,
        licensed: false,
        rest: Some((Method::GET, "/api/v1/topics/{topic}/messages")),
        description: "Reads messages of a topic: the newest (default), from the log start, from an offset of one partition or from a time, optionally only those whose key or value contains a text. Keys and values are text, or base64 when not UTF-8; each partition's nextOffset continues a forward read.",
        schema: schema_of::<reads::BrowseInput>,
        check: no_check,
        run: reads::browse_messages,
        before_queue: None,
    },
    Operation {
        name: "list_quotas",
        title: "Client quotas",
        category: Category::Read,
        area: "quotas",
        scope: Scope::Read,
        licensed: false,
        rest: Some((Method::GET, "/api/v1/quotas")),
        description: "Every client-quota entity (user, client id, both, IP; <default> for defaults) with its quota values, by entity.",
        schema: schema_of::<reads::QuotasInput>,
        check: no_check,
        run: reads::list_quotas,
        before_queue: None,
    },
    Operation {
        name: "get_cluster_logdirs",
        title: "Disk use by log directory",
        category: Category::Read,
        area: "brokers",
        scope: Scope::Read,
        licensed: false,
        rest: Some((Method::GET, "/api/v1/cluster/logdirs")),
        description: "Disk use per broker and log directory with the topics using most space (largest first); with topic and/or brokerId, per-partition replica rows instead (largest first, with the directory of each replica).",
        schema: schema_of::<reads::LogdirsInput>,
        check: no_check,
        run: reads::cluster_logdirs,
        before_queue: None,
    },
    Operation {
        name: "what_if_simulate",
        title: "What-if simulation",
        category: Category::Read,
        area: "cluster",
        scope: Scope::Read,
        licensed: false,
        rest: Some((Method::POST, "/api/v1/what-if/simulate")),
        description: "Plans a hypothetical change of the cluster (add or remove brokers, change a topic's replication factor, scale traffic, add a topic) with the proposal planner and answers the loads per broker before and after, the moves it needs (largest lists cut to limit; movement has the totals), time to copy, and warnings. Changes nothing.",
        schema: schema_of::<reads::WhatIfInput>,
        check: no_check,
        run: reads::what_if_simulate,
        before_queue: None,
    },
    Operation {
        name: "blast_radius_analyze",
        title: "Blast radius of a failure",
        category: Category::Read,
        area: "cluster",
        scope: Scope::Read,
        licensed: false,
        rest: Some((Method::POST, "/api/v1/blast-radius/analyze")),
        description: "What happens if a broker, several brokers or a whole rack fail now: partitions going offline or under min ISR, leadership failover, data to re-replicate and where, affected consumer groups and topics (worst first). Changes nothing.",
        schema: schema_of::<reads::BlastInput>,
        check: no_check,
        run: reads::blast_radius,
        before_queue: None,
    },
    Operation {
        name: "bulk_update_topic_config",
        title: "Change several topics' configuration",
        category: Category::Mutate,
        area: "topics",
        scope: Scope::Write,
        licensed: true,
        rest: Some((Method::PUT, "/api/v1/topics/config/bulk")),
        description: "Sets or removes configuration overrides of several topics at once, all or nothing: the same configs for a list of topics, or one change per topic. Queued for approval; on approval the changes are made and read back.",
        schema: schema_of::<changes::BulkConfigInput>,
        check: changes::check_bulk_config,
        run: changes::bulk_update_topic_config,
        before_queue: None,
    },
    Operation {
        name: "create_acls",
        title: "Create ACL bindings",
        category: Category::Mutate,
        area: "acls",
        scope: Scope::Write,
        licensed: true,
        rest: Some((Method::POST, "/api/v1/acls")),
        description: "Creates ACL bindings (principal, resource, operation, allow/deny); every binding is validated before any is sent, existing ones are left as they are. Queued for approval.",
        schema: schema_of::<changes::CreateAclsInput>,
        check: changes::check_create_acls,
        run: changes::create_acls,
        before_queue: None,
    },
    Operation {
        name: "delete_acls",
        title: "Delete ACL bindings",
        category: Category::Mutate,
        area: "acls",
        scope: Scope::Write,
        licensed: true,
        rest: Some((Method::DELETE, "/api/v1/acls")),
        description: "Deletes every ACL binding matching a filter (at least one of principal, resourceType, resourceName); list_acls with the same filter shows what would go. Queued for approval.",
        schema: schema_of::<changes::DeleteAclsInput>,
        check: changes::check_delete_acls,
        run: changes::delete_acls,
        before_queue: None,
    },
    Operation {
        name: "reset_consumer_group_offsets",
        title: "Reset a group's offsets",
        category: Category::Mutate,
        area: "groups",
        scope: Scope::Write,
        licensed: true,
        rest: Some((Method::POST, "/api/v1/consumer-groups/{group}/reset-offsets")),
        description: "Moves an empty consumer group's committed offsets: to the earliest or latest offset, to a time, shifted by a count (clamped to the log) or to exact offsets; for every partition it has an offset for, or one topic (and some partitions). Queued for approval.",
        schema: schema_of::<changes::ResetOffsetsInput>,
        check: changes::check_reset_offsets,
        run: changes::reset_consumer_group_offsets,
        before_queue: None,
    },
    Operation {
        name: "update_quota",
        title: "Set a client quota",
        category: Category::Mutate,
        area: "quotas",
        scope: Scope::Write,
        licensed: true,
        rest: Some((Method::PUT, "/api/v1/quotas/user/{user}")),
        description: "Sets the quotas of a user, a client id, or a user with a client id (<default> for the default entity) to exactly the given values (byte rates, request percentage, controller mutation rate). Queued for approval.",
        schema: schema_of::<changes::QuotaInput>,
        check: changes::check_update_quota,
        run: changes::update_quota,
        before_queue: None,
    },
    Operation {
        name: "delete_quota",
        title: "Remove a client quota",
        category: Category::Mutate,
        area: "quotas",
        scope: Scope::Write,
        licensed: true,
        rest: Some((Method::DELETE, "/api/v1/quotas/user/{user}")),
        description: "Removes every quota of a user, a client id, or a user with a client id (<default> for the default entity). Queued for approval.",
        schema: schema_of::<changes::QuotaEntityInput>,
        check: changes::check_delete_quota,
        run: changes::delete_quota,
        before_queue: None,
    },
    Operation {
        name: "redistribute_partition",
        title: "Move one partition",
        category: Category::Mutate,
        area: "reassignments",
        scope: Scope::Write,
        licensed: true,
        rest: Some((Method::POST, "/api/v1/topics/{topic}/partitions/{partition}/redistribute")),
        description: "Gives one partition a new replica list (preferred leader first), or lets ballast replace down or maintenance replicas and even out the busiest, as a throttled reassignment; waits until it finishes (status completed, or the failure). Queued for approval.",
        schema: schema_of::<changes::RedistributePartitionInput>,
        check: changes::check_redistribute_partition,
        run: changes::redistribute_partition,
        before_queue: None,
    },
    Operation {
        name: "bulk_reassign_partitions",
        title: "Move several partitions of a topic",
        category: Category::Mutate,
        area: "reassignments",
        scope: Scope::Write,
        licensed: true,
        rest: Some((Method::POST, "/api/v1/topics/{topic}/partitions/bulk")),
        description: "Gives several partitions of one topic new replica lists as one throttled operation and waits until it finishes (status completed, or the failure); entries with an invalid list are reported and skipped. Queued for approval.",
        schema: schema_of::<changes::BulkReassignInput>,
        check: changes::check_bulk_reassign,
        run: changes::bulk_reassign_partitions,
        before_queue: None,
    },
    Operation {
        name: "move_broker_logdirs",
        title: "Move replicas between log directories",
        category: Category::Mutate,
        area: "brokers",
        scope: Scope::Write,
        licensed: true,
        rest: Some((Method::POST, "/api/v1/brokers/{brokerId}/logdirs/move")),
        description: "Moves replicas between the log directories of one broker (named replicas, or everything from one directory to another); reports each replica's result. Queued for approval.",
        schema: schema_of::<changes::MoveLogdirsInput>,
        check: changes::check_move_logdirs,
        run: changes::move_broker_logdirs,
        before_queue: None,
    },
    Operation {
        name: "revert_audit_event",
        title: "Revert an audited change",
        category: Category::Mutate,
        area: "audit",
        scope: Scope::Write,
        licensed: true,
        rest: Some((Method::POST, "/api/v1/audit-log/revert")),
        description: "Puts back the values an audit event recorded before its change (topic configuration, quotas, ACLs, partition placement). Refused when they changed since the audited change; a placement revert runs as a throttled reassignment and waits until it finishes. Queued for approval.",
        schema: schema_of::<changes::RevertInput>,
        check: changes::check_revert,
        run: changes::revert_audit_event,
        before_queue: None,
    },
    Operation {
        name: "approve_action",
        title: "Approve a pending action",
        category: Category::Meta,
        area: "audit",
        scope: Scope::Write,
        licensed: false,
        rest: None,
        description: "Runs a pending action another identity requested and returns its result. Needs the write scope and a different identity than the requester.",
        schema: schema_of::<TokenInput>,
        check: no_check,
        run: meta,
        before_queue: None,
    },
    Operation {
        name: "reject_action",
        title: "Reject a pending action",
        category: Category::Meta,
        area: "audit",
        scope: Scope::Write,
        licensed: false,
        rest: None,
        description: "Rejects a pending action: it will not run. Needs the write scope.",
        schema: schema_of::<TokenInput>,
        check: no_check,
        run: meta,
        before_queue: None,
    },
    Operation {
        name: "list_pending_actions",
        title: "Pending actions",
        category: Category::Meta,
        area: "audit",
        scope: Scope::Read,
        licensed: false,
        rest: None,
        description: "Actions waiting for approval, oldest first: token, tool, arguments, requester, summary and expiry.",
        schema: schema_of::<ListInput>,
        check: no_check,
        run: meta,
        before_queue: None,
    },
];
