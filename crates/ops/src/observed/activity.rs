//! Activity scores: per partition (`get_partition_activity`, `GET /api/v1/activity/partitions`),
//! per topic (`/activity/topics`) and per broker (`/activity/brokers`).
//!
//! A partition's traffic is its producer plus consumer byte rate (bytes in and out); its
//! `activityScore` is its share of the cluster's traffic in percent (message rates stand in while
//! no bytes flow). A topic scores the sum of its partitions, a broker the sum of the partitions it
//! leads, so each list sums to 100. `relative` compares an item with the mean item of its kind
//! (1.0 = average) and gives `level`: `idle` (no traffic), `low` (< 0.25), `normal`, `hot` (≥ 3).

use std::cmp::Ordering;
use std::sync::Arc;

use ballast_model::BrokerId;
use serde::Deserialize;
use serde_json::{json, Value};

use super::{known_broker, known_topic, limit};
use crate::context::Context;
use crate::error::OpError;
use crate::view::{self, View};

#[derive(Debug, Default, Deserialize, utoipa::IntoParams)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct ActivityQuery {
    /// `score` (= `traffic`), `messages`, `producerMsgRate`, `producerByteRate`, `consumerMsgRate`, `consumerByteRate`, `size`; largest first.
    #[param(schema_with = sort_by_schema)]
    pub sort_by: Option<String>,
    /// Only this topic.
    pub topic: Option<String>,
    /// Only this broker (alias `broker`).
    #[param(value_type = Option<i32>)]
    #[serde(alias = "broker")]
    pub broker_id: Option<BrokerId>,
    /// Rows (defaults: partitions 50, topics 20), at most 1000.
    pub limit: Option<usize>,
    /// Partitions only: `topic` answers as `/activity/topics`.
    #[param(schema_with = aggregate_schema)]
    pub aggregate: Option<String>,
}

fn sort_by_schema() -> utoipa::openapi::Object {
    crate::schema::string_enum(std::iter::once("").chain(SORT_KEYS.iter().map(|(k, _)| *k)))
}

fn aggregate_schema() -> utoipa::openapi::Object {
    crate::schema::string_enum(["", "topic"])
}

/// What a list can be sorted by (largest first).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum SortKey {
    Score,
    Messages,
    ProducerMsgRate,
    ProducerByteRate,
    ConsumerMsgRate,
    ConsumerByteRate,
    Size,
}

const SORT_KEYS: [(&str, SortKey); 8] = [
    ("score", SortKey::Score),
    ("traffic", SortKey::Score),
    ("messages", SortKey::Messages),
    ("producerMsgRate", SortKey::ProducerMsgRate),
    ("producerByteRate", SortKey::ProducerByteRate),
    ("consumerMsgRate", SortKey::ConsumerMsgRate),
    ("consumerByteRate", SortKey::ConsumerByteRate),
    ("size", SortKey::Size),
];

fn sort_key(name: Option<&str>) -> Result<Option<SortKey>, OpError> {
    match name {
        None | Some("") => Ok(None),
        Some(n) => SORT_KEYS
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(n))
            .map(|(_, s)| Some(*s))
            .ok_or_else(|| {
                OpError::bad_input(
                    "invalid query",
                    format!(
                        "sortBy: unknown key {n:?}; use {}",
                        SORT_KEYS
                            .iter()
                            .map(|(k, _)| *k)
                            .collect::<Vec<_>>()
                            .join(", ")
                    ),
                )
            }),
    }
}

fn level(traffic: f64, messages: f64, relative: f64) -> &'static str {
    if traffic <= 0.0 && messages <= 0.0 {
        "idle"
    } else if relative >= 3.0 {
        "hot"
    } else if relative < 0.25 {
        "low"
    } else {
        "normal"
    }
}

/// `value / mean` over `count` items whose total is `total` (bytes) or, without bytes, messages.
fn relative(v: &View, traffic: f64, messages: f64, count: usize) -> f64 {
    if count == 0 {
        return 0.0;
    }
    if v.cluster_traffic > 0.0 {
        traffic / (v.cluster_traffic / count as f64)
    } else if v.cluster_messages > 0.0 {
        messages / (v.cluster_messages / count as f64)
    } else {
        0.0
    }
}

/// The per-item figures every list sorts on.
struct Figures {
    score: f64,
    messages: f64,
    rates: [Option<f64>; 4],
    size: Option<i64>,
}

impl Figures {
    fn key(&self, k: SortKey) -> f64 {
        match k {
            SortKey::Score => self.score,
            SortKey::Messages => self.messages,
            SortKey::ProducerMsgRate => self.rates[0].unwrap_or(-1.0),
            SortKey::ProducerByteRate => self.rates[1].unwrap_or(-1.0),
            SortKey::ConsumerMsgRate => self.rates[2].unwrap_or(-1.0),
            SortKey::ConsumerByteRate => self.rates[3].unwrap_or(-1.0),
            SortKey::Size => self.size.map_or(-1.0, |s| s as f64),
        }
    }
}

fn by_key(k: SortKey, a: &Figures, b: &Figures) -> Ordering {
    b.key(k).total_cmp(&a.key(k))
}

/// The operation `get_partition_activity`: each partition's share of the cluster's traffic (or,
/// with `aggregate=topic`, each topic's), as JSON text.
pub async fn get_partition_activity(
    ctx: &Context,
    q: ActivityQuery,
) -> Result<Arc<String>, OpError> {
    let sort = sort_key(q.sort_by.as_deref())?;
    match q.aggregate.as_deref() {
        None | Some("") => {}
        Some("topic") => return get_topic_activity(ctx, q).await,
        Some(other) => {
            return Err(OpError::bad_input(
                "invalid query",
                format!("aggregate: unknown value {other:?}; use topic"),
            ))
        }
    }
    let v = view::require(ctx).await?;
    let topic = q.topic.as_deref().map(|t| known_topic(&v, t)).transpose()?;
    let broker = q.broker_id.map(|b| known_broker(&v, b)).transpose()?;
    if topic.is_none() && broker.is_none() && q.limit.is_none() {
        let key = format!("activity-partitions:{sort:?}");
        return Ok(v.rendered(key, || {
            partitions_body(&v, sort, q.sort_by.clone(), None, None, None)
        }));
    }
    Ok(Arc::new(partitions_body(
        &v,
        sort,
        q.sort_by.clone(),
        topic,
        broker,
        q.limit,
    )))
}

fn partitions_body(
    v: &View,
    sort: Option<SortKey>,
    sort_name: Option<String>,
    topic: Option<usize>,
    broker: Option<BrokerId>,
    requested: Option<usize>,
) -> String {
    let figures = |i: usize| -> Figures {
        let p = v.partition(i);
        let r = p.rates;
        Figures {
            score: v.parts[i].score,
            messages: v.parts[i].messages,
            rates: [
                r.map(|r| r.producer_msg_rate),
                r.map(|r| r.producer_byte_rate),
                r.map(|r| r.consumer_msg_rate),
                r.map(|r| r.consumer_byte_rate),
            ],
            size: p.size_bytes,
        }
    };
    let count = v.raw.partitions.len();
    let keep = |i: &usize| {
        topic.is_none_or(|t| v.parts[*i].topic == t)
            && broker.is_none_or(|b| v.partition(*i).leader == Some(b))
    };
    let n = limit(requested, 50, 1000);
    // The whole cluster's order per sort key is made once per view; filters walk it.
    let (total, rows): (usize, Vec<(usize, Figures)>) = match (sort, topic) {
        (Some(k), _) => {
            let name = SORT_KEYS
                .iter()
                .find(|(_, s)| *s == k)
                .map_or("score", |(n, _)| n);
            let order = v.order(name, || {
                let all: Vec<Figures> = (0..count).map(figures).collect();
                let mut order: Vec<usize> = (0..count).collect();
                order.sort_by(|a, b| by_key(k, &all[*a], &all[*b]).then(a.cmp(b)));
                order
            });
            let total = match (topic, broker) {
                (None, None) => count,
                (Some(t), _) => v.topics[t].partitions.clone().filter(|i| keep(i)).count(),
                (None, Some(b)) => v.brokers.get(&b).map_or(0, |s| s.leaders),
            };
            let rows = order
                .iter()
                .copied()
                .filter(keep)
                .take(n)
                .map(|i| (i, figures(i)))
                .collect();
            (total, rows)
        }
        (None, Some(t)) => {
            let all: Vec<usize> = v.topics[t].partitions.clone().filter(keep).collect();
            (
                all.len(),
                all.iter().take(n).map(|i| (*i, figures(*i))).collect(),
            )
        }
        (None, None) => {
            let all: Vec<usize> = (0..count).filter(keep).collect();
            (
                all.len(),
                all.iter().take(n).map(|i| (*i, figures(*i))).collect(),
            )
        }
    };

    let items: Vec<Value> = rows
        .iter()
        .take(n)
        .map(|(i, f)| {
            let p = v.partition(*i);
            let s = &v.parts[*i];
            let rel = relative(v, s.traffic, s.messages, count);
            json!({
                "topic": p.topic,
                "partition": p.partition,
                "leader": p.leader,
                "producerMsgRate": f.rates[0],
                "producerByteRate": f.rates[1],
                "consumerMsgRate": f.rates[2],
                "consumerByteRate": f.rates[3],
                "trafficBytesPerSec": s.traffic,
                "messagesPerSec": s.messages,
                "sizeBytes": p.size_bytes,
                "activityScore": s.score,
                "relative": rel,
                "level": if p.rates.is_none() { "unknown" } else { level(s.traffic, s.messages, rel) },
            })
        })
        .collect();
    json!({
        "observedAt": v.observed_at(),
        "sortBy": sort.map(|_| sort_name),
        "total": total,
        "count": items.len(),
        "truncated": total > items.len(),
        "clusterTrafficBytesPerSec": v.cluster_traffic,
        "clusterMessagesPerSec": v.cluster_messages,
        "partitions": items,
        "coverage": v.coverage,
    })
    .to_string()
}

/// Each topic's share of the cluster's traffic and its hottest partition, as JSON text
/// (`/activity/topics`, and `/activity/partitions?aggregate=topic`).
pub async fn get_topic_activity(ctx: &Context, q: ActivityQuery) -> Result<Arc<String>, OpError> {
    let sort = sort_key(q.sort_by.as_deref())?.unwrap_or(SortKey::Score);
    let v = view::require(ctx).await?;
    let topic = q.topic.as_deref().map(|t| known_topic(&v, t)).transpose()?;
    if q.sort_by.is_none() && topic.is_none() && q.limit.is_none() {
        return Ok(v.rendered("activity-topics", || topics_body(&v, sort, None, &q)));
    }
    Ok(Arc::new(topics_body(&v, sort, topic, &q)))
}

fn topics_body(v: &View, sort: SortKey, topic: Option<usize>, q: &ActivityQuery) -> String {
    let mut rows: Vec<(usize, Figures)> = (0..v.raw.topics.len())
        .filter(|t| topic.is_none_or(|x| x == *t))
        .map(|t| {
            let st = &v.topics[t];
            (
                t,
                Figures {
                    score: st.score,
                    messages: st.messages,
                    rates: [
                        st.producer_msg_rate,
                        st.producer_byte_rate,
                        st.consumer_msg_rate,
                        st.consumer_byte_rate,
                    ],
                    size: st.size_bytes,
                },
            )
        })
        .collect();
    rows.sort_by(|a, b| {
        by_key(sort, &a.1, &b.1).then_with(|| v.raw.topics[a.0].name.cmp(&v.raw.topics[b.0].name))
    });
    let n = limit(q.limit, 20, 1000);
    let count = v.raw.topics.len();
    let total = rows.len();
    let items: Vec<Value> = rows
        .iter()
        .take(n)
        .map(|(t, f)| {
            let st = &v.topics[*t];
            let parts = st.partitions.len();
            let rel = relative(v, st.traffic, st.messages, count);
            let hottest = st.hottest.map(|h| {
                let mean = st.traffic / parts.max(1) as f64;
                json!({
                    "partition": v.partition(h).partition,
                    "shareOfTopic": if st.traffic > 0.0 { 100.0 * v.parts[h].traffic / st.traffic } else { 0.0 },
                    "skew": if mean > 0.0 { v.parts[h].traffic / mean } else { 0.0 },
                })
            });
            json!({
                "topic": v.raw.topics[*t].name,
                "partitions": parts,
                "producerMsgRate": f.rates[0],
                "producerByteRate": f.rates[1],
                "consumerMsgRate": f.rates[2],
                "consumerByteRate": f.rates[3],
                "trafficBytesPerSec": st.traffic,
                "messagesPerSec": st.messages,
                "sizeBytes": st.size_bytes,
                "activityScore": st.score,
                "relative": rel,
                "level": level(st.traffic, st.messages, rel),
                "hottestPartition": hottest,
            })
        })
        .collect();
    json!({
        "observedAt": v.observed_at(),
        "sortBy": q.sort_by.clone().unwrap_or_else(|| "score".into()),
        "total": total,
        "count": items.len(),
        "truncated": total > items.len(),
        "clusterTrafficBytesPerSec": v.cluster_traffic,
        "clusterMessagesPerSec": v.cluster_messages,
        "topics": items,
        "coverage": v.coverage,
    })
    .to_string()
}

/// Each broker's share of the traffic of the partitions it leads (`/activity/brokers`), as JSON
/// text; `aggregate` does not apply.
pub async fn get_broker_activity(ctx: &Context, q: ActivityQuery) -> Result<Arc<String>, OpError> {
    let sort = sort_key(q.sort_by.as_deref())?.unwrap_or(SortKey::Score);
    let v = view::require(ctx).await?;
    let broker = q.broker_id.map(|b| known_broker(&v, b)).transpose()?;
    if q.sort_by.is_none() && broker.is_none() {
        return Ok(v.rendered("activity-brokers", || brokers_body(&v, sort, None, &q)));
    }
    Ok(Arc::new(brokers_body(&v, sort, broker, &q)))
}

fn brokers_body(v: &View, sort: SortKey, broker: Option<BrokerId>, q: &ActivityQuery) -> String {
    let alive = v.alive.len();
    let mut rows: Vec<(BrokerId, Figures)> = v
        .brokers
        .iter()
        .filter(|(id, _)| broker.is_none_or(|b| b == **id))
        .map(|(id, st)| {
            (
                *id,
                Figures {
                    score: st.score,
                    messages: st.messages,
                    rates: [st.loads[3], st.loads[4], st.loads[5], st.loads[6]],
                    size: st.disk_bytes,
                },
            )
        })
        .collect();
    rows.sort_by(|a, b| by_key(sort, &a.1, &b.1).then(a.0.cmp(&b.0)));
    let items: Vec<Value> = rows
        .iter()
        .map(|(id, f)| {
            let st = &v.brokers[id];
            let rel = relative(v, st.traffic, st.messages, alive.max(1));
            let b = v.broker_index.get(id).map(|i| &v.raw.brokers[*i]);
            json!({
                "brokerId": id,
                "rack": b.and_then(|b| b.rack.clone()),
                "alive": v.alive.contains(id),
                "leaders": st.leaders,
                "replicas": st.replicas,
                "producerMsgRate": f.rates[0],
                "producerByteRate": f.rates[1],
                "consumerMsgRate": f.rates[2],
                "consumerByteRate": f.rates[3],
                "trafficBytesPerSec": st.traffic,
                "messagesPerSec": st.messages,
                "diskBytes": st.disk_bytes,
                "activityScore": st.score,
                "relative": rel,
                "level": level(st.traffic, st.messages, rel),
            })
        })
        .collect();
    json!({
        "observedAt": v.observed_at(),
        "sortBy": q.sort_by.clone().unwrap_or_else(|| "score".into()),
        "total": items.len(),
        "count": items.len(),
        "clusterTrafficBytesPerSec": v.cluster_traffic,
        "clusterMessagesPerSec": v.cluster_messages,
        "brokers": items,
        "coverage": v.coverage,
    })
    .to_string()
}
