//! `GET /api/v1/cluster/follower-lag`: the spec's follower-lag report, exactly its shape.
//!
//! Lag is in **bytes**: how far each follower is behind its leader, the leader's replica size
//! minus the follower's (both from DescribeLogDirs in the same sample, never below 0). The
//! spec's field names (`cluster_total_lag`, `offset_lag`, ...) carry that figure, and each has a
//! twin that names the unit (`cluster_total_lag_bytes`, `lag_bytes`, ...); `lag_unit` is
//! `"bytes"`. DescribeLogDirs' own `offsetLag` is not used: Kafka 3.5+ reports 0 for every
//! current log. Replicas whose lag is unknown (their broker is down or its log dirs were not
//! read) are left out of the figures and show up in `urp_classification` instead. `partition_lag` lists the partitions
//! with follower lag above zero or out-of-sync replicas, largest total lag first, at most
//! `limit` rows (default 1,000): a cut list adds `partition_lag_total` (additive to the spec's
//! shape).

use std::collections::BTreeMap;

use axum::extract::State;
use axum::response::Response;
use ballast_model::BrokerId;
use serde::{Deserialize, Serialize};

use super::view::View;
use super::{known_broker, known_topic, ok_json, ok_shared, view};
use crate::extract::Query;
use crate::{ApiError, AppState};

#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct LagQuery {
    /// Only this topic's partitions.
    topic: Option<String>,
    /// Only follower replicas on this broker.
    #[param(value_type = Option<i32>)]
    broker: Option<BrokerId>,
    /// `true` omits `topic_lag`, `partition_lag` and `urp_classification` (default false).
    summary: Option<bool>,
    /// Rows of `partition_lag` and of `urp_classification` (largest lag first): absent or 0
    /// gives 1,000, at most 100,000. A cut list adds `partition_lag_total` /
    /// `urp_classification_total` (the rows before the cut); the cluster, broker and topic
    /// figures always cover everything.
    limit: Option<usize>,
}

/// Rows of the two partition lists when `limit` is absent or 0.
pub const LAG_DEFAULT_LIMIT: usize = 1_000;
/// The largest `limit`.
pub const LAG_MAX_LIMIT: usize = 100_000;

/// What every lag figure counts.
pub const LAG_UNIT: &str = "bytes";

#[derive(Debug, Serialize)]
pub struct BrokerLag {
    pub broker_id: BrokerId,
    /// Bytes (the spec's name).
    pub total_lag: i64,
    pub max_lag: i64,
    pub total_lag_bytes: i64,
    pub max_lag_bytes: i64,
    pub replica_count: usize,
}

impl BrokerLag {
    fn empty(broker_id: BrokerId) -> BrokerLag {
        BrokerLag {
            broker_id,
            total_lag: 0,
            max_lag: 0,
            total_lag_bytes: 0,
            max_lag_bytes: 0,
            replica_count: 0,
        }
    }
}

#[derive(Debug, Serialize)]
pub struct TopicLag<'a> {
    pub topic: &'a str,
    /// Bytes (the spec's name).
    pub total_lag: i64,
    pub max_lag: i64,
    pub total_lag_bytes: i64,
    pub max_lag_bytes: i64,
    pub partition_count: usize,
}

#[derive(Debug, Serialize)]
pub struct ReplicaLag {
    pub broker_id: BrokerId,
    /// Bytes behind the leader (the spec's name); equal to `lag_bytes`.
    pub offset_lag: i64,
    pub lag_bytes: i64,
    pub is_leader: bool,
}

#[derive(Debug, Serialize)]
pub struct PartitionLag<'a> {
    pub topic: &'a str,
    pub partition: i32,
    pub replicas: Vec<ReplicaLag>,
    #[serde(skip)]
    total: i64,
}

#[derive(Debug, Serialize)]
pub struct UrpClass<'a> {
    pub topic: &'a str,
    pub partition: i32,
    pub cause: &'static str,
    pub lagging_brokers: Vec<BrokerId>,
}

#[derive(Debug, Serialize)]
pub struct Report<'a> {
    /// Always `"bytes"`: the unit of every lag figure.
    pub lag_unit: &'static str,
    /// Bytes (the spec's names).
    pub cluster_total_lag: i64,
    pub cluster_max_lag: i64,
    pub cluster_total_lag_bytes: i64,
    pub cluster_max_lag_bytes: i64,
    pub broker_lag: Vec<BrokerLag>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub topic_lag: Option<Vec<TopicLag<'a>>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub partition_lag: Option<Vec<PartitionLag<'a>>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub urp_classification: Option<Vec<UrpClass<'a>>>,
    /// Present only when `partition_lag` was cut at the limit.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub partition_lag_total: Option<usize>,
    /// Present only when `urp_classification` was cut at the limit.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub urp_classification_total: Option<usize>,
}

/// Why a partition is under-replicated: a replica's broker is down, a replica's log dir is
/// offline, replicas being added by a reassignment are still copying, or followers fell behind.
fn cause(v: &View, i: usize, out_of_sync: &[BrokerId]) -> &'static str {
    let p = v.partition(i);
    if out_of_sync.iter().any(|b| !v.alive.contains(b)) {
        return "broker_down";
    }
    let offline_dir = out_of_sync.iter().any(|b| {
        p.offline_replicas.contains(b)
            || v.raw.replicas[v.parts[i].replicas.clone()].iter().any(|r| {
                r.broker_id == *b
                    && r.log_dir
                        .as_ref()
                        .is_some_and(|d| v.bad_dirs.contains(&(*b, d.clone())))
            })
    });
    if offline_dir {
        return "log_dir_offline";
    }
    if !p.adding.is_empty() && out_of_sync.iter().all(|b| p.adding.contains(b)) {
        return "reassignment";
    }
    "follower_lag"
}

pub fn report<'a>(
    v: &'a View,
    topic: Option<usize>,
    broker: Option<BrokerId>,
    summary: bool,
    limit: usize,
) -> Report<'a> {
    let range = match topic {
        Some(t) => v.topics[t].partitions.clone(),
        None => 0..v.raw.partitions.len(),
    };
    let mut total = 0i64;
    let mut max = 0i64;
    let mut brokers: BTreeMap<BrokerId, BrokerLag> = BTreeMap::new();
    let mut topics: BTreeMap<usize, TopicLag<'a>> = BTreeMap::new();
    let mut partitions = Vec::new();
    let mut urps = Vec::new();
    for i in range {
        let p = v.partition(i);
        let s = &v.parts[i];
        if broker.is_some_and(|b| !p.replicas.contains(&b)) {
            continue;
        }
        let mut replicas = Vec::new();
        let mut p_total = 0i64;
        let mut p_max = 0i64;
        for r in &v.raw.replicas[s.replicas.clone()] {
            if r.is_future {
                continue;
            }
            let is_leader = Some(r.broker_id) == p.leader;
            let Some(lag) = r.lag_bytes else { continue };
            let lag = if is_leader { 0 } else { lag };
            replicas.push(ReplicaLag {
                broker_id: r.broker_id,
                offset_lag: lag,
                lag_bytes: lag,
                is_leader,
            });
            if is_leader || broker.is_some_and(|b| b != r.broker_id) {
                continue;
            }
            total += lag;
            max = max.max(lag);
            p_total += lag;
            p_max = p_max.max(lag);
            let b = brokers
                .entry(r.broker_id)
                .or_insert_with(|| BrokerLag::empty(r.broker_id));
            b.total_lag += lag;
            b.max_lag = b.max_lag.max(lag);
            b.replica_count += 1;
        }
        if summary {
            continue;
        }
        let t = topics.entry(s.topic).or_insert(TopicLag {
            topic: &p.topic,
            total_lag: 0,
            max_lag: 0,
            total_lag_bytes: 0,
            max_lag_bytes: 0,
            partition_count: 0,
        });
        t.total_lag += p_total;
        t.max_lag = t.max_lag.max(p_max);
        t.total_lag_bytes = t.total_lag;
        t.max_lag_bytes = t.max_lag;
        t.partition_count += 1;
        let out_of_sync: Vec<BrokerId> = p
            .replicas
            .iter()
            .copied()
            .filter(|b| !p.isr.contains(b))
            .collect();
        if p_total > 0 || !out_of_sync.is_empty() {
            partitions.push(PartitionLag {
                topic: &p.topic,
                partition: p.partition,
                replicas,
                total: p_total,
            });
        }
        if s.under_replicated {
            urps.push(UrpClass {
                topic: &p.topic,
                partition: p.partition,
                cause: cause(v, i, &out_of_sync),
                lagging_brokers: out_of_sync,
            });
        }
    }
    // Every broker in scope gets a row, as the spec's `broker_lag[]` lists brokers: one with no
    // lagging follower, or holding no follower replica at all, with 0 replicas.
    for id in v.brokers.keys() {
        if broker.is_none_or(|b| b == *id) {
            brokers.entry(*id).or_insert_with(|| BrokerLag::empty(*id));
        }
    }
    partitions.sort_by(|a, b| {
        b.total
            .cmp(&a.total)
            .then_with(|| (a.topic, a.partition).cmp(&(b.topic, b.partition)))
    });
    let cut = |n: usize| (!summary && n > limit).then_some(n);
    let partition_lag_total = cut(partitions.len());
    let urp_classification_total = cut(urps.len());
    partitions.truncate(limit);
    urps.truncate(limit);
    Report {
        lag_unit: LAG_UNIT,
        cluster_total_lag: total,
        cluster_max_lag: max,
        cluster_total_lag_bytes: total,
        cluster_max_lag_bytes: max,
        broker_lag: brokers
            .into_values()
            .map(|mut b| {
                b.total_lag_bytes = b.total_lag;
                b.max_lag_bytes = b.max_lag;
                b
            })
            .collect(),
        topic_lag: (!summary).then(|| topics.into_values().collect()),
        partition_lag: (!summary).then_some(partitions),
        urp_classification: (!summary).then_some(urps),
        partition_lag_total,
        urp_classification_total,
    }
}

#[utoipa::path(
    get,
    path = "/api/v1/cluster/follower-lag",
    tag = "cluster",
    operation_id = "getFollowerLag",
    summary = "Follower lag report",
    description = "The specification's follower-lag report in its snake_case shape. Lag is in bytes (each follower: its leader's replica size minus its own): the spec's fields carry it and `*_bytes` twins name the unit.",
    params(LagQuery),
    responses(
        (status = 200, description = "Follower lag report", body = ref("FollowerLag")),
        (status = 404, description = "Unknown topic or broker"),
        (status = 503, description = "No current sample of the cluster (`cluster data unavailable`)"),
    )
)]
pub async fn follower_lag(
    State(state): State<AppState>,
    Query(q): Query<LagQuery>,
) -> Result<Response, ApiError> {
    let v = view::require(&state).await?;
    let topic = q.topic.as_deref().map(|t| known_topic(&v, t)).transpose()?;
    let broker = q.broker.map(|b| known_broker(&v, b)).transpose()?;
    let summary = q.summary.unwrap_or(false);
    let limit = match q.limit {
        None | Some(0) => LAG_DEFAULT_LIMIT,
        Some(n) => n.min(LAG_MAX_LIMIT),
    };
    if broker.is_none() {
        // The cluster's and each topic's report are rendered once per view and limit.
        let key = format!("lag:{topic:?}:{summary}:{limit}");
        let text = v.rendered(key, || {
            serde_json::to_string(&report(&v, topic, None, summary, limit)).unwrap_or_default()
        });
        return Ok(ok_shared(&text));
    }
    ok_json(&report(&v, topic, broker, summary, limit))
}
