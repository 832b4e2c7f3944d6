//! Topics by name (`search_topics`, `POST /api/v1/topics/search`) and partition-count
//! recommendations (`get_partition_optimization`, `GET /api/v1/optimize/partitions`).

use std::sync::Arc;

use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use super::cluster::topic_out;
use super::{known_topic, limit};
use crate::context::Context;
use crate::error::OpError;
use crate::view::{self, View};

const MIB: f64 = 1024.0 * 1024.0;
const GIB: f64 = 1024.0 * MIB;

// ---------------------------------------------------------------------------------------------
// POST /api/v1/topics/search

#[derive(Debug, Default, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SearchBody {
    /// Text to match, case-insensitive (aliases `pattern`, `name`); empty matches all.
    #[serde(alias = "pattern", alias = "name")]
    pub query: Option<String>,
    /// `contains` (default), `prefix`, `exact`, `glob` (`*` any run, `?` one character).
    #[serde(rename = "match")]
    #[schema(schema_with = match_schema)]
    pub mode: Option<String>,
    /// Include internal topics (default false).
    pub include_internal: Option<bool>,
    /// Default 100, at most 1000.
    pub limit: Option<usize>,
    pub offset: Option<usize>,
}

fn match_schema() -> utoipa::openapi::Object {
    crate::schema::string_enum_or_null(["contains", "prefix", "exact", "glob"])
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    Contains,
    Prefix,
    Exact,
    Glob,
}

impl Mode {
    fn name(self) -> &'static str {
        match self {
            Mode::Contains => "contains",
            Mode::Prefix => "prefix",
            Mode::Exact => "exact",
            Mode::Glob => "glob",
        }
    }
}

/// The answer of `search_topics`: the matching topics of one view of the cluster, serialised
/// straight from the view (no copy of its rows).
pub struct TopicSearch {
    view: Arc<View>,
    query: String,
    mode: Mode,
    total: usize,
    offset: usize,
    /// The indexes (in the view) of the topics of this page.
    page: Vec<usize>,
}

impl TopicSearch {
    /// The view searched (a door may keep a shape of the answer with it).
    pub fn view(&self) -> Arc<View> {
        self.view.clone()
    }
}

impl Serialize for TopicSearch {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        #[derive(Serialize)]
        #[serde(rename_all = "camelCase")]
        struct Out<'a> {
            query: &'a str,
            #[serde(rename = "match")]
            mode: &'static str,
            total: usize,
            offset: usize,
            count: usize,
            truncated: bool,
            topics: Vec<super::cluster::TopicOut<'a>>,
        }
        let topics: Vec<_> = self
            .page
            .iter()
            .map(|t| topic_out(&self.view, *t, None))
            .collect();
        Out {
            query: &self.query,
            mode: self.mode.name(),
            total: self.total,
            offset: self.offset,
            count: topics.len(),
            truncated: self.offset + topics.len() < self.total,
            topics,
        }
        .serialize(serializer)
    }
}

/// `*` (any run) and `?` (one character) wildcards over characters.
fn glob(pattern: &[char], text: &[char]) -> bool {
    let (mut p, mut t) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while t < text.len() {
        if p < pattern.len() && (pattern[p] == '?' || pattern[p] == text[t]) {
            p += 1;
            t += 1;
        } else if p < pattern.len() && pattern[p] == '*' {
            star = Some((p, t));
            p += 1;
        } else if let Some((sp, st)) = star {
            p = sp + 1;
            t = st + 1;
            star = Some((sp, st + 1));
        } else {
            return false;
        }
    }
    pattern[p..].iter().all(|c| *c == '*')
}

/// The operation `search_topics`: topics whose name matches the query (contains, prefix, exact
/// or glob, case-insensitive) in the current view of the cluster, a page of them.
pub async fn search_topics(ctx: &Context, body: SearchBody) -> Result<TopicSearch, OpError> {
    let mode = match body.mode.as_deref().map(str::to_ascii_lowercase).as_deref() {
        None | Some("contains") => Mode::Contains,
        Some("prefix") => Mode::Prefix,
        Some("exact") => Mode::Exact,
        Some("glob") => Mode::Glob,
        Some(other) => {
            return Err(OpError::bad_input(
                "invalid request body",
                format!("match: unknown mode {other:?}; use contains, prefix, exact or glob"),
            ))
        }
    };
    let n = limit(body.limit, 100, 1000);
    let v = view::require(ctx).await?;
    let query = body.query.unwrap_or_default().to_lowercase();
    let pattern: Vec<char> = query.chars().collect();
    let internal = body.include_internal.unwrap_or(false);
    let matches: Vec<usize> = v
        .raw
        .topics
        .iter()
        .enumerate()
        .filter(|(_, t)| internal || !t.internal)
        .filter(|(_, t)| {
            let name = t.name.to_lowercase();
            match mode {
                Mode::Contains => name.contains(&query),
                Mode::Prefix => name.starts_with(&query),
                Mode::Exact => name == query,
                Mode::Glob => glob(&pattern, &name.chars().collect::<Vec<_>>()),
            }
        })
        .map(|(i, _)| i)
        .collect();
    let total = matches.len();
    let offset = body.offset.unwrap_or(0).min(total);
    let page: Vec<usize> = matches[offset..].iter().take(n).copied().collect();
    Ok(TopicSearch {
        view: v,
        query,
        mode,
        total,
        offset,
        page,
    })
}

// ---------------------------------------------------------------------------------------------
// GET /api/v1/optimize/partitions

/// Producer bytes per second one partition comfortably carries.
pub const TARGET_PARTITION_BYTE_RATE: f64 = 5.0 * MIB;
/// A topic this busy should use every broker.
pub const BUSY_TOPIC_BYTE_RATE: f64 = MIB;
/// Below this (in and out) a topic's skew is not worth a recommendation.
pub const SKEW_MIN_TRAFFIC: f64 = 100.0 * 1024.0;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Priority {
    High,
    Medium,
    Low,
}

impl Priority {
    fn name(self) -> &'static str {
        match self {
            Priority::High => "High",
            Priority::Medium => "Medium",
            Priority::Low => "Low",
        }
    }

    fn parse(s: &str) -> Option<Priority> {
        match s.to_ascii_lowercase().as_str() {
            "high" => Some(Priority::High),
            "medium" => Some(Priority::Medium),
            "low" => Some(Priority::Low),
            _ => None,
        }
    }
}

#[derive(Debug, Clone)]
pub struct Recommendation {
    pub topic: usize,
    pub priority: Priority,
    /// `increase`, `skew` or `reduce`.
    pub kind: &'static str,
    pub current: i32,
    pub recommended: i32,
    pub reason: String,
    pub evidence: Value,
}

fn round_up_to(n: i64, multiple: i64) -> i64 {
    if multiple <= 1 {
        n
    } else {
        (n + multiple - 1) / multiple * multiple
    }
}

fn mib(v: f64) -> String {
    format!("{:.1} MiB/s", v / MIB)
}

fn gib(v: f64) -> String {
    format!("{:.1} GiB", v / GIB)
}

/// Partition-count recommendations for every non-internal topic (rules in `docs/api/observed.md`).
pub fn recommendations(v: &View) -> Vec<Recommendation> {
    let brokers = v.alive.len().max(1) as i64;
    let median = v.median_partition_bytes.unwrap_or(0.0);
    let large_threshold = (10.0 * median).max(GIB);
    let mut out = Vec::new();
    for (t, topic) in v.raw.topics.iter().enumerate() {
        if topic.internal {
            continue;
        }
        let st = &v.topics[t];
        let n = st.partitions.len() as i64;
        if n == 0 {
            continue;
        }
        let current = topic.partitions;
        let rates_known = st
            .partitions
            .clone()
            .all(|i| v.partition(i).rates.is_some());
        let produce = st.producer_byte_rate.unwrap_or(0.0);
        let per_partition = produce / n as f64;

        // Throughput per partition.
        let mut increased = false;
        if per_partition > TARGET_PARTITION_BYTE_RATE {
            let needed = (produce / TARGET_PARTITION_BYTE_RATE).ceil() as i64;
            let recommended = round_up_to(needed.max(n + 1), brokers) as i32;
            let priority = if per_partition > 2.0 * TARGET_PARTITION_BYTE_RATE {
                Priority::High
            } else {
                Priority::Medium
            };
            out.push(Recommendation {
                topic: t,
                priority,
                kind: "increase",
                current,
                recommended,
                reason: format!(
                    "{} produced over {n} partitions is {} per partition, above the {} one partition comfortably carries",
                    mib(produce),
                    mib(per_partition),
                    mib(TARGET_PARTITION_BYTE_RATE)
                ),
                evidence: json!({
                    "producerByteRate": produce,
                    "perPartitionByteRate": per_partition,
                    "targetPartitionByteRate": TARGET_PARTITION_BYTE_RATE,
                }),
            });
            increased = true;
        }
        // A busy topic on fewer partitions than brokers leaves brokers without its load.
        if !increased && n < brokers && produce >= BUSY_TOPIC_BYTE_RATE {
            out.push(Recommendation {
                topic: t,
                priority: Priority::Medium,
                kind: "increase",
                current,
                recommended: brokers as i32,
                reason: format!(
                    "{} produced on {n} partitions: fewer partitions than the {brokers} brokers, so some brokers carry none of it",
                    mib(produce)
                ),
                evidence: json!({
                    "producerByteRate": produce,
                    "brokers": brokers,
                }),
            });
            increased = true;
        }
        // Partitions much larger than the cluster's median are slow and costly to move.
        let size = st.size_bytes.unwrap_or(0) as f64;
        let avg = size / n as f64;
        if !increased && median > 0.0 && avg > large_threshold {
            let needed = (size / large_threshold).ceil() as i64;
            let recommended = round_up_to(needed.min(4 * n).max(n + 1), brokers) as i32;
            let priority = if avg > 100.0 * GIB {
                Priority::High
            } else if avg > 25.0 * GIB {
                Priority::Medium
            } else {
                Priority::Low
            };
            out.push(Recommendation {
                topic: t,
                priority,
                kind: "increase",
                current,
                recommended,
                reason: format!(
                    "partitions average {}, {:.0}× the cluster's median of {}: each move copies that much; more partitions make smaller units",
                    gib(avg),
                    avg / median,
                    gib(median)
                ),
                evidence: json!({
                    "avgPartitionBytes": avg,
                    "medianPartitionBytes": median,
                    "sizeBytes": size,
                }),
            });
        }
        // One partition carrying a large share of the topic: key skew.
        if n >= 2 && st.traffic >= SKEW_MIN_TRAFFIC {
            if let Some(h) = st.hottest {
                let mean = st.traffic / n as f64;
                let ratio = v.parts[h].traffic / mean;
                if ratio >= 3.0 {
                    let p = v.partition(h);
                    out.push(Recommendation {
                        topic: t,
                        priority: if ratio >= 5.0 {
                            Priority::Medium
                        } else {
                            Priority::Low
                        },
                        kind: "skew",
                        current,
                        recommended: current,
                        reason: format!(
                            "partition {} carries {:.0}% of the topic's traffic ({ratio:.1}× the mean): keys are unevenly spread; more partitions do not split a hot key, review the partitioning key",
                            p.partition,
                            100.0 * v.parts[h].traffic / st.traffic
                        ),
                        evidence: json!({
                            "hottestPartition": p.partition,
                            "hottestTrafficBytesPerSec": v.parts[h].traffic,
                            "meanTrafficBytesPerSec": mean,
                            "ratio": ratio,
                        }),
                    });
                }
            }
        }
        // Many idle partitions: overhead without traffic.
        if rates_known
            && st.traffic == 0.0
            && st.messages == 0.0
            && n > (2 * brokers).max(12)
            && size < GIB
        {
            out.push(Recommendation {
                topic: t,
                priority: Priority::Low,
                kind: "reduce",
                current,
                recommended: brokers as i32,
                reason: format!(
                    "{n} partitions with no traffic and {} of data: each costs broker memory, file handles and controller work; Kafka cannot remove partitions, so recreate the topic with fewer if it stays idle",
                    gib(size)
                ),
                evidence: json!({ "sizeBytes": size, "brokers": brokers }),
            });
        }
    }
    out.sort_by(|a, b| {
        a.priority
            .cmp(&b.priority)
            .then_with(|| v.raw.topics[a.topic].name.cmp(&v.raw.topics[b.topic].name))
            .then_with(|| a.kind.cmp(b.kind))
    });
    out
}

fn priority_schema() -> utoipa::openapi::Object {
    crate::schema::string_enum(["", "High", "Medium", "Low"])
}

#[derive(Debug, Default, Deserialize, utoipa::IntoParams)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct OptimizeQuery {
    /// `High`, `Medium` or `Low` (case-insensitive).
    #[param(schema_with = priority_schema)]
    pub priority: Option<String>,
    /// Only this topic.
    pub topic: Option<String>,
    /// Default 100, at most 1000.
    pub limit: Option<usize>,
}

/// The operation `get_partition_optimization`: per topic, whether its partition count should
/// change, with a priority and the figures behind it, as JSON text.
pub async fn get_partition_optimization(
    ctx: &Context,
    q: OptimizeQuery,
) -> Result<Arc<String>, OpError> {
    let priority = match q.priority.as_deref() {
        None | Some("") => None,
        Some(p) => Some(Priority::parse(p).ok_or_else(|| {
            OpError::bad_input(
                "invalid query",
                format!("priority: unknown value {p:?}; use High, Medium or Low"),
            )
        })?),
    };
    let v = view::require(ctx).await?;
    let topic = q.topic.as_deref().map(|t| known_topic(&v, t)).transpose()?;
    if priority.is_none() && topic.is_none() && q.limit.is_none() {
        return Ok(v.rendered("optimize", || optimize_body(&v, None, None, None)));
    }
    Ok(Arc::new(optimize_body(&v, priority, topic, q.limit)))
}

fn optimize_body(
    v: &View,
    priority: Option<Priority>,
    topic: Option<usize>,
    requested: Option<usize>,
) -> String {
    let all = recommendations(v);
    let mut by_priority = serde_json::Map::new();
    for p in [Priority::High, Priority::Medium, Priority::Low] {
        by_priority.insert(
            p.name().into(),
            json!(all.iter().filter(|r| r.priority == p).count()),
        );
    }
    let selected: Vec<&Recommendation> = all
        .iter()
        .filter(|r| priority.is_none_or(|p| r.priority == p))
        .filter(|r| topic.is_none_or(|t| r.topic == t))
        .collect();
    let n = limit(requested, 100, 1000);
    let rows: Vec<Value> = selected
        .iter()
        .take(n)
        .map(|r| {
            json!({
                "topic": v.raw.topics[r.topic].name,
                "priority": r.priority.name(),
                "kind": r.kind,
                "currentPartitions": r.current,
                "recommendedPartitions": r.recommended,
                "reason": r.reason,
                "evidence": r.evidence,
            })
        })
        .collect();
    json!({
        "observedAt": v.observed_at(),
        "total": selected.len(),
        "count": rows.len(),
        "truncated": selected.len() > rows.len(),
        "byPriority": by_priority,
        "recommendations": rows,
        "coverage": v.coverage,
    })
    .to_string()
}

#[cfg(test)]
mod tests {
    use super::glob;

    fn g(p: &str, t: &str) -> bool {
        glob(
            &p.chars().collect::<Vec<_>>(),
            &t.chars().collect::<Vec<_>>(),
        )
    }

    #[test]
    fn glob_matches_stars_and_question_marks() {
        assert!(g("orders*", "orders-eu"));
        assert!(g("*eu", "orders-eu"));
        assert!(g("o?ders-*", "orders-eu"));
        assert!(g("*", ""));
        assert!(!g("orders", "orders-eu"));
        assert!(!g("*us", "orders-eu"));
        assert!(g("a*b*c", "axxbyyc"));
    }
}
