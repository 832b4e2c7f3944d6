//! The reads that run over the operation context, and the shaping every agent answer shares:
//! the spec's row limits and envelope re-applied over a REST answer, the proposal as agents get
//! it.

use std::sync::Arc;

use serde_json::{json, Value};

use super::envelope;
use super::inputs::{
    AclsInput, ActivityInput, AuditInput, BlastInput, BrowseInput, ConfigSearchInput,
    DefaultsInput, GroupInput, GroupsInput, HistoryInput, LagInput, ListInput, LogdirsInput,
    Nothing, OptimizationInput, ProposalInput, QuotasInput, ReassignmentInput, Scenario,
    SearchTopicsInput, TopicInput, TopicListInput, WhatIfInput,
};
use super::limited;
use super::{answer, boxed, parse, Caller, KeptFuture, Limit, OpFuture, ToolError};
use crate::context::Context;
use crate::kept::{Kept, KeptAnswer};
use ballast_balancer::blast::BlastRequest;
use ballast_balancer::whatif::WhatIfRequest;

/// A proposal as agents get it (tool rule 5): no broker activity scores, cluster snapshots,
/// `fairShare.shares`, oversized partitions per load or `movement.search`; `topicSpread.atLimit`
/// keyed by pair without the cap counts; at most 50 reassignments with the full count.
pub fn proposal_for_agents(mut p: Value) -> Value {
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

pub fn rows(v: &Value, key: &str) -> Vec<Value> {
    v.get(key)
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default()
}

/// A text parameter as the REST query string carried it: an empty value was left out.
pub fn given(v: Option<String>) -> Option<String> {
    v.filter(|v| !v.is_empty())
}

/// Re-applies the MCP envelope over an answer a REST route already cut to `rows` rows (`total`
/// is the REST route's count of every match).
pub fn reshape(mut d: Value, key: &str, hint: &str) -> Value {
    let rows = d.get(key).and_then(Value::as_array).map_or(0, Vec::len);
    let total = d["total"].as_u64().map_or(rows, |t| t as usize);
    if let Some(obj) = d.as_object_mut() {
        super::envelope(obj, rows, total as u64, rows < total, hint);
    }
    d
}

pub fn need(what: &str, v: &str) -> Result<(), ToolError> {
    if v.trim().is_empty() {
        return Err(ToolError::invalid(format!("{what}: must not be empty")));
    }
    Ok(())
}

/// An operation function's answer that is JSON text already (the observed routes render theirs
/// once per sample), as the JSON agents get.
pub fn answer_text<E: Into<ToolError>>(r: Result<Arc<String>, E>) -> Result<Value, ToolError> {
    let text = r.map_err(Into::into)?;
    serde_json::from_str(&text).map_err(|e| ToolError {
        status: 500,
        code: "FAILED".into(),
        message: format!("the answer is not JSON: {e}"),
    })
}

/// A proposal id as agents give it: trimmed, not empty (`current` for the current one).
pub fn proposal_id(id: &str) -> Result<String, ToolError> {
    let id = id.trim();
    if id.is_empty() {
        return Err(ToolError::invalid("proposalId: must not be empty"));
    }
    Ok(id.to_string())
}

// ------------------------------------------------------------------------------ reassignments

/// The reassignment list's query: `rows` newest operations, optionally in one state.
fn history_query(rows_wanted: usize, filter: Option<String>) -> crate::reassignments::ListQuery {
    crate::reassignments::ListQuery {
        state: given(filter),
        limit: Some(rows_wanted as u64),
        ..Default::default()
    }
}

/// The reassignment list as agents get it: the operations under `history`, in the envelope.
fn history(d: Result<Value, ToolError>) -> Result<Value, ToolError> {
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

pub(super) fn list_reassignments(ctx: Context, _caller: Caller, input: Value) -> OpFuture {
    boxed(async move {
        let _: Nothing = parse(&input)?;
        let q = history_query(Limit::fixed(10).rows(None), None);
        history(answer(
            crate::reassignments::list_reassignments(&ctx, q).await,
        ))
    })
}

pub(super) fn reassignment_history(ctx: Context, _caller: Caller, input: Value) -> OpFuture {
    boxed(async move {
        let i: HistoryInput = parse(&input)?;
        let q = history_query(Limit::new(20, 100).rows(i.limit), i.state);
        history(answer(
            crate::reassignments::get_reassignment_history(&ctx, q).await,
        ))
    })
}

pub(super) fn reassignment_by_id(ctx: Context, _caller: Caller, input: Value) -> OpFuture {
    boxed(async move {
        let i: ReassignmentInput = parse(&input)?;
        need("id", &i.id)?;
        answer(crate::reassignments::get_reassignment_by_id(&ctx, i.id).await)
    })
}

pub(super) fn search_audit_log(ctx: Context, _caller: Caller, input: Value) -> OpFuture {
    boxed(async move {
        let i: AuditInput = parse(&input)?;
        let limit = Limit::new(50, 200).rows(i.limit);
        let q = crate::audit::ListQuery {
            action: given(i.action),
            user: given(i.user),
            since: given(i.since),
            until: given(i.until),
            search: given(i.search),
            limit: Some(u32::try_from(limit).unwrap_or(u32::MAX)),
            ..Default::default()
        };
        let d = answer(crate::audit::search_audit_log(&ctx, q).await)?;
        Ok(reshape(
            d,
            "events",
            "narrow with action, user, since/until or search",
        ))
    })
}

pub(super) fn list_proposals(ctx: Context, _caller: Caller, input: Value) -> OpFuture {
    boxed(async move {
        let input: ListInput = parse(&input)?;
        let limit = Limit::new(20, 100);
        let rows_wanted = limit.rows(input.limit);
        let q = crate::proposals::ListQuery {
            limit: Some(rows_wanted as u64),
            ..Default::default()
        };
        let d = answer(crate::proposals::list_proposals(&ctx, q).await)?;
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

pub(super) fn get_proposal(ctx: Context, _caller: Caller, input: Value) -> OpFuture {
    boxed(async move { Ok(get_proposal_kept(ctx, input).await?.value()) })
}

pub(super) fn get_proposal_kept(ctx: Context, input: Value) -> KeptFuture {
    Box::pin(async move {
        let input: ProposalInput = parse(&input)?;
        let id = proposal_id(&input.proposal_id)?;
        // Shaped for agents once per check, as the REST answer is rendered once.
        let found = crate::proposals::get_proposal(&ctx, id).await?;
        Ok(KeptAnswer::plain(
            found.shaped("agents", proposal_for_agents),
        ))
    })
}

pub(super) fn generate_proposal(ctx: Context, _caller: Caller, input: Value) -> OpFuture {
    boxed(async move {
        let _: Nothing = parse(&input)?;
        let found = crate::proposals::generate_proposal(&ctx).await?;
        Ok(KeptAnswer::plain(found.shaped("agents", proposal_for_agents)).value())
    })
}

pub(super) fn list_acls(ctx: Context, _caller: Caller, input: Value) -> OpFuture {
    boxed(async move {
        let i: AclsInput = parse(&input)?;
        let limit = Limit::new(100, 500).rows(i.limit);
        let q = crate::acls::Query {
            principal: i.principal,
            resource_type: i.resource_type,
            resource_name: i.resource_name,
            limit: Some(u32::try_from(limit).unwrap_or(u32::MAX)),
            ..Default::default()
        };
        let d = answer(crate::acls::list_acls(&ctx, q).await)?;
        Ok(reshape(
            d,
            "bindings",
            "filter by principal, resourceType or resourceName",
        ))
    })
}

pub(super) fn list_quotas(ctx: Context, _caller: Caller, input: Value) -> OpFuture {
    boxed(async move {
        let i: QuotasInput = parse(&input)?;
        let d = answer(crate::quota_reads::list_quotas(&ctx).await)?;
        let kind = i.entity_type.map(|t| t.trim().to_ascii_lowercase());
        let search = i.search.map(|s| s.trim().to_lowercase());
        let quotas: Vec<Value> = rows(&d, "quotas")
            .into_iter()
            .filter(|q| {
                let ty = q["entityType"].as_str().unwrap_or_default();
                kind.as_deref()
                    .is_none_or(|k| k.is_empty() || ty == k || ty.replace("default-", "") == k)
            })
            .filter(|q| {
                search.as_deref().is_none_or(|s| {
                    q["entity"].as_object().is_some_and(|e| {
                        e.values()
                            .filter_map(Value::as_str)
                            .any(|v| v.to_lowercase().contains(s))
                    })
                })
            })
            .collect();
        Ok(Value::Object(limited(
            "quotas",
            quotas,
            Limit::new(100, 500),
            i.limit,
            "narrow with entityType or search",
        )))
    })
}

pub(super) fn topic_config(ctx: Context, _caller: Caller, input: Value) -> OpFuture {
    boxed(async move {
        let i: TopicInput = parse(&input)?;
        need("topic", &i.topic)?;
        answer(crate::configs::get_topic_config(&ctx, i.topic, Default::default()).await)
    })
}

pub(super) fn default_configs(ctx: Context, _caller: Caller, input: Value) -> OpFuture {
    boxed(async move {
        let i: DefaultsInput = parse(&input)?;
        let q = crate::configs::DefaultsQuery {
            broker: None,
            key_filter: given(i.key_filter),
        };
        answer(crate::configs::get_default_configs(&ctx, q).await)
    })
}

pub(super) fn search_topics_by_config(ctx: Context, _caller: Caller, input: Value) -> OpFuture {
    boxed(async move {
        let i: ConfigSearchInput = parse(&input)?;
        need("key", &i.key)?;
        let q = crate::configs::ConfigSearchQuery {
            key: i.key,
            value: given(i.value),
            op: given(i.op),
            overridden_only: i.overridden_only,
            include_internal: i.include_internal,
            limit: Some(Limit::new(100, 1000).rows(i.limit)),
        };
        let d = answer(crate::configs::search_topics_by_config(&ctx, q).await)?;
        Ok(reshape(
            d,
            "topics",
            "compare with a narrower value or op, or set overriddenOnly",
        ))
    })
}

pub(super) fn what_if_simulate(ctx: Context, _caller: Caller, input: Value) -> OpFuture {
    boxed(async move {
        let i: WhatIfInput = parse(&input)?;
        if i.scenarios.is_empty() {
            return Err(ToolError::invalid("scenarios: name at least one scenario"));
        }
        let limit = Limit::new(50, 1000).rows(i.limit);
        let request = WhatIfRequest {
            scenarios: i.scenarios.into_iter().map(Scenario::spec).collect(),
            limit: Some(i64::try_from(limit).unwrap_or(i64::MAX)),
        };
        let mut d = answer(crate::simulation::what_if_simulate(&ctx, request).await)?;
        let count = d["moves"].as_array().map_or(0, Vec::len);
        let total = d["movement"]["moves"].as_u64().unwrap_or(count as u64);
        let truncated = d["movesTruncated"].as_bool().unwrap_or(false);
        if let Some(obj) = d.as_object_mut() {
            envelope(
                obj,
                count,
                total,
                truncated,
                "raise limit (at most 1000); movement has the totals",
            );
        }
        Ok(d)
    })
}

pub(super) fn blast_radius(ctx: Context, _caller: Caller, input: Value) -> OpFuture {
    boxed(async move {
        let i: BlastInput = parse(&input)?;
        let named = [
            i.broker_id.is_some(),
            i.broker_ids.is_some(),
            i.rack.is_some(),
        ];
        if named.iter().filter(|n| **n).count() != 1 {
            return Err(ToolError::invalid(
                "name exactly one of brokerId, brokerIds, rack",
            ));
        }
        let limit = Limit::new(20, 200).rows(i.limit);
        let request = BlastRequest {
            broker_id: i.broker_id.map(i64::from),
            broker_ids: i
                .broker_ids
                .map(|ids| ids.into_iter().map(i64::from).collect()),
            rack: i.rack,
            limit: Some(i64::try_from(limit).unwrap_or(i64::MAX)),
        };
        let mut d = answer(crate::simulation::blast_radius_analyze(&ctx, request).await)?;
        let affected = d["summary"]["partitionsAffected"].as_u64().unwrap_or(0);
        let truncated = [
            "offline",
            "underMinIsr",
            "atMinIsr",
            "consumerGroups",
            "topics",
        ]
        .iter()
        .any(|k| d[*k]["truncated"].as_bool().unwrap_or(false))
            || d["leadership"]["changesTruncated"]
                .as_bool()
                .unwrap_or(false);
        let listed = d["topics"]["topics"].as_array().map_or(0, Vec::len);
        let topics_total = d["topics"]["count"].as_u64().unwrap_or(listed as u64);
        if let Some(obj) = d.as_object_mut() {
            envelope(
                obj,
                listed,
                topics_total,
                truncated,
                "raise limit (at most 200); summary has every count",
            );
            obj.insert("partitionsAffected".into(), json!(affected));
        }
        Ok(d)
    })
}

pub(super) fn topic_watermarks(ctx: Context, _caller: Caller, input: Value) -> OpFuture {
    boxed(async move {
        let i: TopicListInput = parse(&input)?;
        need("topic", &i.topic)?;
        let d = answer(crate::messages::get_topic_watermarks(&ctx, i.topic).await)?;
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

/// The REST route's own maximum, which is also the tool's.
const BROWSE_MAX: usize = 50;

pub(super) fn browse_messages(ctx: Context, _caller: Caller, input: Value) -> OpFuture {
    boxed(async move {
        let i: BrowseInput = parse(&input)?;
        need("topic", &i.topic)?;
        let wanted = Limit::new(20, BROWSE_MAX).rows(i.limit);
        // One more than wanted (within the route's maximum) tells whether there is more.
        let fetch = (wanted + 1).min(BROWSE_MAX);
        let latest = i.offset.is_none()
            && i.timestamp.is_none()
            && i.from
                .as_deref()
                .is_none_or(|f| f.eq_ignore_ascii_case("latest"));
        let filtered = i.key_filter.is_some() || i.value_filter.is_some();
        let q = crate::messages::RangeQuery {
            partition: i.partition,
            offset: i.offset,
            timestamp: i.timestamp,
            from: given(i.from),
            limit: Some(u32::try_from(fetch).unwrap_or(u32::MAX)),
            key_filter: given(i.key_filter),
            value_filter: given(i.value_filter),
        };
        let mut d = answer(crate::messages::browse_messages(&ctx, i.topic, q).await)?;
        let mut messages = rows(&d, "messages");
        let mut more = messages.len() > wanted;
        if more {
            // Keep the seek order's first `wanted`: the newest for `latest` (they come oldest
            // first), the earliest otherwise.
            if latest {
                messages.drain(..messages.len() - wanted);
            } else {
                messages.truncate(wanted);
            }
        }
        let partitions = rows(&d, "partitions");
        let num = |p: &Value, k: &str| p[k].as_i64().unwrap_or(0);
        // Messages in the range read, before key/value filters.
        let in_range: i64 = partitions
            .iter()
            .map(|p| {
                let start = if latest {
                    num(p, "lowWatermark")
                } else {
                    num(p, "startOffset")
                };
                (num(p, "highWatermark") - start).max(0)
            })
            .sum();
        if !more && fetch == wanted && !filtered {
            more = in_range > messages.len() as i64;
        }
        let count = messages.len();
        let (total, exact) = match (more, filtered) {
            (false, _) => (count as i64, true),
            (true, false) => (in_range.max(count as i64 + 1), true),
            (true, true) => (count as i64 + 1, false),
        };
        if let Some(obj) = d.as_object_mut() {
            obj.insert("messages".into(), Value::Array(messages));
            obj.insert("limit".into(), json!(wanted));
            obj.insert("totalExact".into(), json!(exact));
            envelope(
                obj,
                count,
                total.max(0) as u64,
                more,
                "page on with offset (each partition's nextOffset), or narrow with partition, keyFilter or valueFilter",
            );
        }
        Ok(d)
    })
}

// ------------------------------------------------------------------------------ observed view

// The reads answered from the observed view (each rendered once per reading for its common
// parameters) and the consumer-group reads shared in flight.

pub(super) fn cluster_overview(ctx: Context, _caller: Caller, input: Value) -> OpFuture {
    boxed(async move { Ok(cluster_overview_kept(ctx, input).await?.value()) })
}

/// The overview at the default limit is shaped for agents once per reading and kept; another
/// limit is shaped for its call. A call sets the cluster's `ageMs`.
pub(super) fn cluster_overview_kept(ctx: Context, input: Value) -> KeptFuture {
    Box::pin(async move {
        let input: ListInput = parse(&input)?;
        const KEY: &str = "mcp-cluster-overview";
        let default = matches!(input.limit, None | Some(0));
        let v = crate::view::require(&ctx).await?;
        let kept = match default.then(|| v.shaped(KEY)).flatten() {
            Some(kept) => kept,
            None => {
                let made = Kept::aged(overview_of(&ctx, input.limit).await?, "/cluster");
                if default {
                    v.keep_shaped(KEY, made)
                } else {
                    Arc::new(made)
                }
            }
        };
        let age = (ctx.clock.now_ms() - v.sampled_at_ms()).max(0);
        Ok(KeptAnswer::new(kept, age))
    })
}

/// The agents' overview with `limit` topics.
async fn overview_of(ctx: &Context, limit: Option<u64>) -> Result<Value, ToolError> {
    let q = crate::observed::cluster::ComprehensiveQuery {
        summary: Some(true),
        ..Default::default()
    };
    let d = answer_text(
        crate::observed::cluster::get_cluster_overview(ctx, q)
            .await
            .map(|o| o.text()),
    )?;
    Ok(overview_for_agents(&d, limit))
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

pub(super) fn cluster_health(ctx: Context, _caller: Caller, input: Value) -> OpFuture {
    boxed(async move { Ok(cluster_health_kept(ctx, input).await?.value()) })
}

/// Shaped for agents once per reading and kept.
pub(super) fn cluster_health_kept(ctx: Context, input: Value) -> KeptFuture {
    Box::pin(async move {
        let _: Nothing = parse(&input)?;
        const KEY: &str = "mcp-cluster-health";
        let v = crate::view::require(&ctx).await?;
        let kept = match v.shaped(KEY) {
            Some(kept) => kept,
            None => v.keep_shaped(KEY, Kept::new(health_for_agents(&ctx).await?)),
        };
        Ok(KeptAnswer::plain(kept))
    })
}

/// The health answer with the first 20 partitions that are not rack-aware.
async fn health_for_agents(ctx: &Context) -> Result<Value, ToolError> {
    let q = crate::observed::cluster::HealthQuery::default();
    let mut d = answer_text(crate::observed::cluster::get_cluster_health(ctx, q).await)?;
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
}

pub(super) fn broker_racks(ctx: Context, _caller: Caller, input: Value) -> OpFuture {
    boxed(async move {
        let _: Nothing = parse(&input)?;
        answer_text(crate::observed::cluster::get_broker_racks(&ctx).await)
    })
}

pub(super) fn search_topics(ctx: Context, _caller: Caller, input: Value) -> OpFuture {
    boxed(async move { Ok(search_topics_kept(ctx, input).await?.value()) })
}

/// Every topic's first page (no query, the default rows) is shaped once per reading and kept;
/// another search is searched and shaped for its call.
pub(super) fn search_topics_kept(ctx: Context, input: Value) -> KeptFuture {
    Box::pin(async move {
        let i: SearchTopicsInput = parse(&input)?;
        let limit = Limit::new(100, 1000).rows(i.limit);
        let body = crate::observed::topics::SearchBody {
            query: Some(i.query.unwrap_or_default()),
            mode: Some(i.match_kind.unwrap_or_else(|| "contains".into())),
            include_internal: Some(i.include_internal.unwrap_or(false)),
            limit: Some(limit),
            offset: None,
        };
        const KEY: &str = "mcp-search-topics";
        let every_topic = body.query.as_deref().is_some_and(str::is_empty)
            && body
                .mode
                .as_deref()
                .is_some_and(|m| m.eq_ignore_ascii_case("contains"))
            && body.include_internal == Some(false)
            && limit == 100;
        if every_topic {
            if let Some(kept) = crate::view::require(&ctx).await?.shaped(KEY) {
                return Ok(KeptAnswer::plain(kept));
            }
        }
        let found = crate::observed::topics::search_topics(&ctx, body).await?;
        let view = found.view();
        let d = reshape(
            answer(Ok::<_, ToolError>(found))?,
            "topics",
            "narrow the query, or match: prefix / exact",
        );
        Ok(KeptAnswer::plain(if every_topic {
            view.keep_shaped(KEY, Kept::new(d))
        } else {
            Arc::new(Kept::new(d))
        }))
    })
}

pub(super) fn list_consumer_groups(ctx: Context, _caller: Caller, input: Value) -> OpFuture {
    boxed(async move { Ok(list_consumer_groups_kept(ctx, input).await?.value()) })
}

/// The default page is shaped once per read of every group and kept; another page is shaped for
/// its call.
pub(super) fn list_consumer_groups_kept(ctx: Context, input: Value) -> KeptFuture {
    Box::pin(async move {
        let i: GroupsInput = parse(&input)?;
        let limit = Limit::new(100, 500).rows(i.limit);
        let q = crate::group_reads::ListQuery {
            state: given(i.state),
            search: given(i.search),
            limit: Some(u32::try_from(limit).unwrap_or(u32::MAX)),
        };
        let list = crate::group_reads::list_consumer_groups(&ctx, q).await?;
        let shaped = list.shaped(|text| {
            Ok::<_, ToolError>(reshape(
                answer_text(Ok::<_, ToolError>(text))?,
                "groups",
                "filter with search or state, or describe_consumer_group for one",
            ))
        })?;
        Ok(KeptAnswer::plain(shaped))
    })
}

pub(super) fn describe_consumer_group(ctx: Context, _caller: Caller, input: Value) -> OpFuture {
    boxed(async move {
        let i: GroupInput = parse(&input)?;
        need("group", &i.group)?;
        answer(crate::group_reads::describe_consumer_group(&ctx, i.group).await)
    })
}

pub(super) fn partition_optimization(ctx: Context, _caller: Caller, input: Value) -> OpFuture {
    boxed(async move {
        let i: OptimizationInput = parse(&input)?;
        let limit = Limit::new(20, 100).rows(i.limit);
        let q = crate::observed::topics::OptimizeQuery {
            priority: given(i.priority),
            limit: Some(limit),
            ..Default::default()
        };
        let d = answer_text(crate::observed::topics::get_partition_optimization(&ctx, q).await)?;
        Ok(reshape(
            d,
            "recommendations",
            "filter by priority (High, Medium, Low)",
        ))
    })
}

pub(super) fn partition_activity(ctx: Context, _caller: Caller, input: Value) -> OpFuture {
    boxed(async move {
        let i: ActivityInput = parse(&input)?;
        let by_topic = match i.aggregate.as_deref().map(str::trim) {
            None | Some("") => false,
            Some(a) if a.eq_ignore_ascii_case("topic") => true,
            Some(a) => {
                return Err(ToolError::invalid(format!(
                    "aggregate: only \"topic\" is known, got {a:?}"
                )))
            }
        };
        let (key, limit, hint) = if by_topic {
            (
                "topics",
                Limit::new(20, 100),
                "narrow with topic, or sortBy another load",
            )
        } else {
            (
                "partitions",
                Limit::new(50, 200),
                "narrow with topic or brokerId, or aggregate: topic",
            )
        };
        let q = crate::observed::activity::ActivityQuery {
            aggregate: by_topic.then(|| "topic".to_string()),
            sort_by: given(i.sort_by),
            topic: given(i.topic),
            broker_id: i.broker_id,
            limit: Some(limit.rows(i.limit)),
        };
        let d = answer_text(crate::observed::activity::get_partition_activity(&ctx, q).await)?;
        Ok(reshape(d, key, hint))
    })
}

pub(super) fn consumer_group_lag(ctx: Context, _caller: Caller, input: Value) -> OpFuture {
    boxed(async move {
        let i: LagInput = parse(&input)?;
        need("group", &i.group)?;
        let q = crate::group_reads::LagQuery {
            topic: given(i.topic),
            sort: Some("lag".into()),
        };
        let d = answer(crate::group_reads::get_consumer_group_lag(&ctx, i.group, q).await)?;
        let mut out = limited(
            "topPartitions",
            rows(&d, "partitions"),
            Limit::new(20, 200),
            i.limit,
            "narrow with topic (the per-topic totals are in topics)",
        );
        for key in [
            "groupId",
            "state",
            "topic",
            "totalLag",
            "maxLag",
            "partitionCount",
            "topics",
        ] {
            out.insert(key.into(), d.get(key).cloned().unwrap_or(Value::Null));
        }
        Ok(Value::Object(out))
    })
}

pub(super) fn cluster_logdirs(ctx: Context, _caller: Caller, input: Value) -> OpFuture {
    boxed(async move {
        let i: LogdirsInput = parse(&input)?;
        let detail = i.topic.is_some() || i.broker_id.is_some();
        let limit = if detail {
            Limit::new(50, 200)
        } else {
            Limit::new(20, 100)
        };
        let rows_wanted = limit.rows(i.limit);
        let q = crate::observed::cluster::LogDirsQuery {
            topic: given(i.topic),
            broker_id: i.broker_id,
            limit: Some(rows_wanted),
            ..Default::default()
        };
        let mut d = answer_text(crate::observed::cluster::get_cluster_logdirs(&ctx, q).await)?;
        let (key, total_key, hint) = if detail {
            (
                "partitions",
                "totalPartitions",
                "narrow with both topic and brokerId",
            )
        } else {
            (
                "topics",
                "totalTopics",
                "drill down with topic or brokerId (per-partition rows)",
            )
        };
        let total = d[total_key].clone();
        if let Some(obj) = d.as_object_mut() {
            obj.insert("total".into(), total);
            if detail {
                // The per-topic sums of a drill-down are its partitions' rows; the broker-wide
                // topic list is the summary's.
                obj.remove("topics");
                obj.remove("topicsTruncated");
            }
            obj.remove(&format!("{key}Truncated"));
        }
        Ok(reshape(d, key, hint))
    })
}
