//! Load history per broker from `broker_readings` (raw samples, older ones downsampled): the
//! seven loads over a time range, bucketed to at most `maxPoints` points. Free.

use std::collections::BTreeMap;

use axum::extract::State;
use ballast_model::{BrokerId, Load};
use ballast_runtime::format_rfc3339_ms;
use ballast_schema::{BrokerReading, PartitionReading};
use serde::Deserialize;
use serde_json::{json, Map, Value};

use crate::extract::{Path, Query};
use crate::{ApiError, ApiOk, ApiResult, AppState};

pub const DEFAULT_RANGE_MS: i64 = 24 * 3_600_000;
pub const DEFAULT_POINTS: usize = 300;
pub const MAX_POINTS: usize = 2_000;

#[derive(Debug, Default, Deserialize, utoipa::IntoParams)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
#[into_params(parameter_in = Query)]
pub struct HistoryQuery {
    /// RFC 3339 time or unix milliseconds; default 24 hours before `until`.
    #[param(schema_with = instant)]
    since: Option<String>,
    /// RFC 3339 time or unix milliseconds; default now.
    #[param(schema_with = instant)]
    until: Option<String>,
    /// One load name (e.g. `diskBytes`); default all seven.
    #[param(schema_with = load_schema)]
    load: Option<String>,
    /// 1 to 2000, default 300: readings are averaged into at most that many equal time buckets.
    #[param(minimum = 1, maximum = 2000)]
    max_points: Option<usize>,
}

fn instant() -> utoipa::openapi::Object {
    ballast_ops::schema::instant_schema(false)
}

fn load_schema() -> utoipa::openapi::Object {
    ballast_ops::schema::string_enum(Load::ALL.iter().map(|l| l.name()))
}

fn parse_time(name: &str, v: &str) -> Result<i64, ApiError> {
    crate::extract::parse_instant_ms(v).map_err(|e| {
        ApiError::bad_request(
            format!("invalid {name}"),
            format!("{name} must be an RFC 3339 time or unix milliseconds: {e}"),
        )
    })
}

struct Range {
    since: i64,
    until: i64,
    loads: Vec<Load>,
    points: usize,
}

/// `since`, `until` and `maxPoints` of a history query, defaulted and checked.
fn span(
    since: Option<&str>,
    until: Option<&str>,
    max_points: Option<usize>,
    now: i64,
) -> Result<(i64, i64, usize), ApiError> {
    let until = until
        .map(|v| parse_time("until", v))
        .transpose()?
        .unwrap_or(now);
    let since = since
        .map(|v| parse_time("since", v))
        .transpose()?
        .unwrap_or(until - DEFAULT_RANGE_MS);
    if since >= until {
        return Err(ApiError::bad_request(
            "invalid range",
            "since must be before until",
        ));
    }
    let points = max_points.unwrap_or(DEFAULT_POINTS);
    if points == 0 || points > MAX_POINTS {
        return Err(ApiError::bad_request(
            "invalid maxPoints",
            format!("maxPoints must be 1 to {MAX_POINTS}"),
        ));
    }
    Ok((since, until, points))
}

fn range(q: &HistoryQuery, now: i64) -> Result<Range, ApiError> {
    let (since, until, points) = span(q.since.as_deref(), q.until.as_deref(), q.max_points, now)?;
    let loads = match q.load.as_deref() {
        None => Load::ALL.to_vec(),
        Some(name) => vec![Load::ALL
            .iter()
            .copied()
            .find(|l| l.name() == name)
            .ok_or_else(|| {
                ApiError::bad_request(
                    "invalid load",
                    format!(
                        "load must be one of {}, got {name:?}",
                        Load::ALL
                            .iter()
                            .map(|l| l.name())
                            .collect::<Vec<_>>()
                            .join(", ")
                    ),
                )
            })?],
    };
    Ok(Range {
        since,
        until,
        loads,
        points,
    })
}

/// Rows of `(at_ms, values)` averaged into at most `points` equal time buckets of
/// `[since, until)`; each point has `at`, `atMs` (the bucket's newest row) and `values` named by
/// `pick` (`(index into values, name)`), `null` where no row of the bucket knew it.
fn bucketed(
    rows: &[(i64, &[Option<f64>])],
    pick: &[(usize, &str)],
    since: i64,
    until: i64,
    points: usize,
) -> Vec<Value> {
    let width = ((until - since) as f64 / points as f64).max(1.0);
    let mut buckets: BTreeMap<i64, (i64, Vec<f64>, Vec<u32>)> = BTreeMap::new();
    for (at_ms, values) in rows {
        let b = ((at_ms - since) as f64 / width) as i64;
        let e = buckets
            .entry(b)
            .or_insert_with(|| (*at_ms, vec![0.0; values.len()], vec![0; values.len()]));
        e.0 = e.0.max(*at_ms);
        for (i, v) in values.iter().enumerate() {
            if let (Some(v), Some(sum), Some(count)) = (v, e.1.get_mut(i), e.2.get_mut(i)) {
                *sum += v;
                *count += 1;
            }
        }
    }
    buckets
        .into_values()
        .map(|(at, sums, counts)| {
            let mut values = Map::new();
            for (i, name) in pick {
                let v = match (sums.get(*i), counts.get(*i)) {
                    (Some(s), Some(c)) if *c > 0 => Some(s / f64::from(*c)),
                    _ => None,
                };
                values.insert((*name).to_string(), json!(v));
            }
            json!({ "at": format_rfc3339_ms(at), "atMs": at, "values": values })
        })
        .collect()
}

/// One broker's readings averaged into at most `r.points` equal time buckets.
fn series(readings: &[&BrokerReading], r: &Range) -> Vec<Value> {
    let rows: Vec<(i64, &[Option<f64>])> = readings
        .iter()
        .map(|x| (x.at_ms, x.values.as_slice()))
        .collect();
    let pick: Vec<(usize, &str)> = r
        .loads
        .iter()
        .map(|load| {
            (
                Load::ALL.iter().position(|l| l == load).unwrap_or(0),
                load.name(),
            )
        })
        .collect();
    bucketed(&rows, &pick, r.since, r.until, r.points)
}

async fn load(
    state: &AppState,
    broker: Option<BrokerId>,
    q: &HistoryQuery,
) -> Result<(Range, Vec<BrokerReading>), ApiError> {
    let r = range(q, state.clock.now_ms())?;
    let (since, until) = (r.since, r.until);
    let readings = state
        .db(move |s| s.broker_readings(broker, since, until))
        .await?;
    Ok((r, readings))
}

#[utoipa::path(
    get,
    path = "/api/v1/brokers/{brokerId}/loads/history",
    tag = "cluster",
    operation_id = "getBrokerLoadHistory",
    summary = "One broker's load history",
    description = "The seven loads over time from the stored readings, bucketed.",
    params(("brokerId" = i32, Path, description = "broker id"), HistoryQuery),
    responses(
        (status = 200, description = "One broker's load history", body = ref("BrokerLoadHistory")),
        (status = 404, description = "A broker never observed"),
        (status = 503, description = "No current sample of the cluster (`cluster data unavailable`)"),
    )
)]
/// `GET /api/v1/brokers/{brokerId}/loads/history`
pub async fn broker(
    State(state): State<AppState>,
    Path(broker): Path<BrokerId>,
    Query(q): Query<HistoryQuery>,
) -> ApiResult<Value> {
    let view = crate::observed_view::current(&state).await?;
    let known = view
        .as_ref()
        .is_some_and(|v| v.raw.brokers.iter().any(|b| b.broker_id == broker));
    if !known {
        return Err(ApiError::not_found(
            "broker not found",
            format!("no broker {broker} was observed"),
        ));
    }
    let (r, readings) = load(&state, Some(broker), &q).await?;
    let refs: Vec<&BrokerReading> = readings.iter().collect();
    Ok(ApiOk(json!({
        "brokerId": broker,
        "since": format_rfc3339_ms(r.since),
        "until": format_rfc3339_ms(r.until),
        "loads": r.loads.iter().map(|l| l.name()).collect::<Vec<_>>(),
        "readings": readings.len(),
        "points": series(&refs, &r),
    })))
}

#[utoipa::path(
    get,
    path = "/api/v1/brokers/loads/history",
    tag = "cluster",
    operation_id = "getLoadHistory",
    summary = "Every broker's load history",
    description = "The seven loads of every broker over time from the stored readings, bucketed.",
    params(HistoryQuery),
    responses(
        (status = 200, description = "Every broker's load history", body = ref("LoadHistory")),
        (status = 503, description = "No current sample of the cluster (`cluster data unavailable`)"),
    )
)]
/// `GET /api/v1/brokers/loads/history`: every broker, same shape per broker.
pub async fn all(State(state): State<AppState>, Query(q): Query<HistoryQuery>) -> ApiResult<Value> {
    let (r, readings) = load(&state, None, &q).await?;
    let mut by_broker: BTreeMap<BrokerId, Vec<&BrokerReading>> = BTreeMap::new();
    for reading in &readings {
        by_broker
            .entry(reading.broker_id)
            .or_default()
            .push(reading);
    }
    let brokers: Vec<Value> = by_broker
        .iter()
        .map(|(b, list)| json!({ "brokerId": b, "readings": list.len(), "points": series(list, &r) }))
        .collect();
    Ok(ApiOk(json!({
        "since": format_rfc3339_ms(r.since),
        "until": format_rfc3339_ms(r.until),
        "loads": r.loads.iter().map(|l| l.name()).collect::<Vec<_>>(),
        "brokers": brokers,
    })))
}

#[derive(Debug, Default, Deserialize, utoipa::IntoParams)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
#[into_params(parameter_in = Query)]
pub struct TopicHistoryQuery {
    /// RFC 3339 time or unix milliseconds; default 24 hours before `until`.
    #[param(schema_with = instant)]
    since: Option<String>,
    /// RFC 3339 time or unix milliseconds; default now.
    #[param(schema_with = instant)]
    until: Option<String>,
    /// One partition of the topic; default the topic's totals over its partitions (an unknown
    /// one, negative included: 404).
    partition: Option<i32>,
    /// 1 to 2000, default 300: readings are averaged into at most that many equal time buckets.
    #[param(minimum = 1, maximum = 2000)]
    max_points: Option<usize>,
}

#[utoipa::path(
    get,
    path = "/api/v1/topics/{topic}/history",
    tag = "topics",
    operation_id = "getTopicHistory",
    summary = "A topic's or a partition's size and rates over time",
    description = "From the stored partition readings (every `BALLAST_PARTITION_READINGS_INTERVAL`, older than a day as daily averages): the topic's totals over its partitions, or one partition with `partition`.",
    params(("topic" = String, Path, description = "topic name"), TopicHistoryQuery),
    responses(
        (status = 200, description = "The topic's or partition's history", body = ref("TopicHistory")),
        (status = 400, description = "A bad time, range, partition or `maxPoints`"),
        (status = 404, description = "A topic or partition not in the cluster"),
        (status = 503, description = "No current sample of the cluster (`cluster data unavailable`)"),
    )
)]
/// `GET /api/v1/topics/{topic}/history`
pub async fn topic(
    State(state): State<AppState>,
    Path(topic): Path<String>,
    Query(q): Query<TopicHistoryQuery>,
) -> ApiResult<Value> {
    let (since, until, points) = span(
        q.since.as_deref(),
        q.until.as_deref(),
        q.max_points,
        state.clock.now_ms(),
    )?;
    let view = super::view::require(&state).await?;
    let t = super::known_topic(&view, &topic)?;
    if let Some(p) = q.partition {
        let count = view.raw.topics[t].partitions;
        if p < 0 || p >= count {
            return Err(ApiError::not_found(
                "partition not found",
                format!(
                    "topic {topic:?} has partitions 0 to {}",
                    count.saturating_sub(1)
                ),
            ));
        }
    }
    let partition = q.partition;
    let name = topic.clone();
    let readings = state
        .db(move |s| s.partition_readings(&name, partition, since, until))
        .await?;
    // The topic's totals: one sum per reading time over the partitions that knew the value.
    let mut totals: BTreeMap<i64, (Vec<Option<f64>>, usize)> = BTreeMap::new();
    for r in &readings {
        let e = totals
            .entry(r.at_ms)
            .or_insert_with(|| (vec![None; r.values.len()], 0));
        e.1 += 1;
        for (sum, v) in e.0.iter_mut().zip(r.values) {
            if let Some(v) = v {
                *sum = Some(sum.unwrap_or(0.0) + v);
            }
        }
    }
    let rows: Vec<(i64, &[Option<f64>])> = totals
        .iter()
        .map(|(at, (values, _))| (*at, values.as_slice()))
        .collect();
    let pick: Vec<(usize, &str)> = PartitionReading::NAMES
        .iter()
        .copied()
        .enumerate()
        .collect();
    Ok(ApiOk(json!({
        "topic": topic,
        "partition": partition,
        "since": format_rfc3339_ms(since),
        "until": format_rfc3339_ms(until),
        "metrics": PartitionReading::NAMES,
        "readings": readings.len(),
        "intervalSeconds": state.config.timing.partition_readings_interval.as_secs(),
        "points": bucketed(&rows, &pick, since, until, points),
    })))
}
