//! The reads the web process answers from its own per-reading caches (the observed view
//! rendered once per reading, proposals shaped once per check, live reads shared in flight):
//! declared in `ballast_ops::catalog` as [`Run::Served`](ballast_ops::catalog::Run::Served) and
//! bound here by name. Each calls its operation function and shapes the answer with the
//! catalog's limits and envelope.

use std::sync::Arc;

use ballast_ops::catalog::{
    answer, answer_text, boxed, given, limited, need, parse, reshape, rows, ActivityInput, Caller,
    GroupInput, GroupsInput, LagInput, Limit, ListInput, LogdirsInput, Nothing, OpFuture,
    OptimizationInput, SearchTopicsInput, ToolError,
};
use serde_json::{json, Value};

use crate::{ApiError, AppState};

/// A read the web process serves.
pub type ServedFn = fn(AppState, Caller, Value) -> OpFuture;

/// The served read of the tool `name`.
pub fn bound(name: &str) -> Option<ServedFn> {
    SERVED.iter().find(|(n, _)| *n == name).map(|(_, f)| *f)
}

/// Every served read, by tool name.
pub static SERVED: &[(&str, ServedFn)] = &[
    ("get_cluster_overview", cluster_overview),
    ("get_cluster_health", cluster_health),
    ("get_broker_racks", broker_racks),
    ("search_topics", search_topics),
    ("list_consumer_groups", list_consumer_groups),
    ("describe_consumer_group", describe_consumer_group),
    ("get_partition_optimization", partition_optimization),
    ("get_partition_activity", partition_activity),
    ("get_consumer_group_lag", consumer_group_lag),
    ("get_cluster_logdirs", cluster_logdirs),
];

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
        let mut d = answer_text(Ok::<_, ToolError>(text))?;
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

fn broker_racks(state: AppState, _caller: Caller, input: Value) -> OpFuture {
    boxed(async move {
        let _: Nothing = parse(&input)?;
        answer_text(crate::routes::observed::cluster::get_broker_racks(&state).await)
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

// ------------------------------------------------------------------------------ operations

fn partition_activity(state: AppState, _caller: Caller, input: Value) -> OpFuture {
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
        let q = crate::routes::observed::activity::ActivityQuery {
            aggregate: by_topic.then(|| "topic".to_string()),
            sort_by: given(i.sort_by),
            topic: given(i.topic),
            broker_id: i.broker_id,
            limit: Some(limit.rows(i.limit)),
        };
        let d = answer_text(
            crate::routes::observed::activity::get_partition_activity(&state, q).await,
        )?;
        Ok(reshape(d, key, hint))
    })
}

fn consumer_group_lag(state: AppState, _caller: Caller, input: Value) -> OpFuture {
    boxed(async move {
        let i: LagInput = parse(&input)?;
        need("group", &i.group)?;
        let q = crate::routes::live::groups::LagQuery {
            topic: given(i.topic),
            sort: Some("lag".into()),
        };
        let d =
            answer(crate::routes::live::groups::get_consumer_group_lag(&state, i.group, q).await)?;
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

fn cluster_logdirs(state: AppState, _caller: Caller, input: Value) -> OpFuture {
    boxed(async move {
        let i: LogdirsInput = parse(&input)?;
        let detail = i.topic.is_some() || i.broker_id.is_some();
        let limit = if detail {
            Limit::new(50, 200)
        } else {
            Limit::new(20, 100)
        };
        let rows_wanted = limit.rows(i.limit);
        let q = crate::routes::observed::cluster::LogDirsQuery {
            topic: given(i.topic),
            broker_id: i.broker_id,
            limit: Some(rows_wanted),
            ..Default::default()
        };
        let mut d =
            answer_text(crate::routes::observed::cluster::get_cluster_logdirs(&state, q).await)?;
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
