//! The operations of the catalog. Each is one [`Operation`] with its input type; see the module
//! documentation of `catalog` for where their rules live.

use std::collections::BTreeMap;
use std::time::Duration;

use axum::http::Method;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{json, Value};

use super::{
    call, limited, parse, schema_of, Caller, Category, Limit, OpError, OpFuture, Operation,
};
use crate::auth::Scope;
use crate::ui::enc;
use crate::AppState;

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

// ------------------------------------------------------------------------------ helpers

fn boxed<F>(f: F) -> OpFuture
where
    F: std::future::Future<Output = Result<Value, OpError>> + Send + 'static,
{
    Box::pin(f)
}

fn no_check(_: &Value) -> Result<String, OpError> {
    Ok(String::new())
}

fn proposal_path(id: &str) -> Result<String, OpError> {
    let id = id.trim();
    if id.is_empty() {
        return Err(OpError::invalid("proposalId: must not be empty"));
    }
    Ok(if id == "current" {
        "/api/v1/proposals/current".to_string()
    } else {
        format!("/api/v1/proposals/{}", enc(id))
    })
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
        let moves = obj
            .remove("reassignments")
            .and_then(|m| m.as_array().cloned())
            .unwrap_or_default();
        let total = moves.len();
        obj.insert(
            "reassignments".into(),
            Value::Array(moves.into_iter().take(EMBEDDED).collect()),
        );
        obj.insert("totalReassignments".into(), json!(total));
        obj.insert("reassignmentsTruncated".into(), json!(total > EMBEDDED));
    }
    p
}

fn rows(v: &Value, key: &str) -> Vec<Value> {
    v.get(key)
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default()
}

// ------------------------------------------------------------------------------ reads

fn cluster_overview(state: AppState, caller: Caller, input: Value) -> OpFuture {
    boxed(async move {
        let input: ListInput = parse(&input)?;
        let d = call(
            &state,
            &caller,
            Method::GET,
            "/api/v1/cluster/comprehensive?summary=true",
            None,
        )
        .await?;
        let mut topics = rows(&d, "topics");
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
            input.limit,
            "narrow with search_topics (by name) or get_topic_config (one topic)",
        );
        out.insert("totalTopics".into(), d["page"]["totalTopics"].clone());
        out.insert(
            "totalPartitions".into(),
            d["page"]["totalPartitions"].clone(),
        );
        for key in ["brokers", "health", "rackAssessment", "coverage"] {
            out.insert(key.into(), d.get(key).cloned().unwrap_or(Value::Null));
        }
        let groups = &d["consumerGroups"];
        out.insert(
            "consumerGroups".into(),
            json!({"total": groups["total"], "byState": groups["byState"]}),
        );
        Ok(Value::Object(out))
    })
}

fn cluster_health(state: AppState, caller: Caller, input: Value) -> OpFuture {
    boxed(async move {
        let _: Nothing = parse(&input)?;
        let mut d = call(&state, &caller, Method::GET, "/api/v1/cluster/health", None).await?;
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

fn list_proposals(state: AppState, caller: Caller, input: Value) -> OpFuture {
    boxed(async move {
        let input: ListInput = parse(&input)?;
        let limit = Limit::new(20, 100);
        let rows_wanted = limit.rows(input.limit);
        let d = call(
            &state,
            &caller,
            Method::GET,
            &format!("/api/v1/proposals?limit={rows_wanted}"),
            None,
        )
        .await?;
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

fn get_proposal(state: AppState, caller: Caller, input: Value) -> OpFuture {
    boxed(async move {
        let input: ProposalInput = parse(&input)?;
        let path = proposal_path(&input.proposal_id)?;
        let p = call(&state, &caller, Method::GET, &path, None).await?;
        Ok(proposal_for_agents(p))
    })
}

fn generate_proposal(state: AppState, caller: Caller, input: Value) -> OpFuture {
    boxed(async move {
        let _: Nothing = parse(&input)?;
        let p = call(
            &state,
            &caller,
            Method::POST,
            "/api/v1/proposals/generate",
            None,
        )
        .await?;
        Ok(proposal_for_agents(p))
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
        let body = json!({"configs": input.configs});
        call(
            &state,
            &caller,
            Method::PUT,
            &format!("/api/v1/topics/{}/config", enc(&input.topic)),
            Some(&body),
        )
        .await
    })
}

fn check_apply_proposal(input: &Value) -> Result<String, OpError> {
    let input: ProposalInput = parse(input)?;
    proposal_path(&input.proposal_id)?;
    Ok(format!("apply proposal {}", input.proposal_id))
}

/// How long `apply_proposal` waits for its reassignments to finish before it reports them still
/// running.
pub const APPLY_WAIT: Duration = Duration::from_secs(600);

/// Whether the proposal may be applied: `Ok(proposal)` or the `blocked` answer.
pub(crate) async fn proposal_gate(
    state: &AppState,
    caller: &Caller,
    proposal_id: &str,
) -> Result<Result<Value, Value>, OpError> {
    let path = proposal_path(proposal_id)?;
    let p = call(state, caller, Method::GET, &path, None).await?;
    if p["decision"]["applicationAllowed"] == Value::Bool(true) {
        Ok(Ok(p))
    } else {
        let reason = p["decision"]["reason"]
            .as_str()
            .or(p["decision"]["nextAction"].as_str())
            .unwrap_or("the proposal's decision does not allow applying it")
            .to_string();
        Ok(Err(json!({
            "status": "blocked",
            "reason": reason,
            "proposalId": p["id"],
            "decision": p["decision"],
        })))
    }
}

fn apply_proposal(state: AppState, caller: Caller, input: Value) -> OpFuture {
    boxed(async move {
        let input: ProposalInput = parse(&input)?;
        let p = match proposal_gate(&state, &caller, &input.proposal_id).await? {
            Ok(p) => p,
            Err(blocked) => return Ok(blocked),
        };
        let id = p["id"].as_str().unwrap_or_default().to_string();
        let started = call(
            &state,
            &caller,
            Method::POST,
            &format!("/api/v1/proposals/{}/apply", enc(&id)),
            None,
        )
        .await?;
        let operation = started["bulkId"]
            .as_str()
            .or(started["operationId"].as_str())
            .or(started["id"].as_str())
            .unwrap_or_default()
            .to_string();
        wait_for_operation(&state, &caller, &operation, started).await
    })
}

/// Polls the reassignment until it ends: `completed`, or the failure and its reason.
async fn wait_for_operation(
    state: &AppState,
    caller: &Caller,
    operation: &str,
    started: Value,
) -> Result<Value, OpError> {
    if operation.is_empty() {
        return Ok(json!({"status": "completed", "submitted": started}));
    }
    let deadline = tokio::time::Instant::now() + APPLY_WAIT;
    loop {
        let r = call(
            state,
            caller,
            Method::GET,
            &format!("/api/v1/reassignments/{}", enc(operation)),
            None,
        )
        .await?;
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
        description: "The cluster at a glance: brokers with their loads, health, rack assessment, consumer-group counts, and topics (largest partition count first). `totalTopics`/`totalPartitions` count everything even when `topics` is cut.",
        schema: schema_of::<ListInput>,
        check: no_check,
        run: cluster_overview,
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
    },
];
