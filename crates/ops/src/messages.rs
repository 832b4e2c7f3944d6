//! Messages: a range (from the start, the end, an offset or a time; filtered by key or value), one
//! message, and the partitions' watermarks.

use std::collections::{BTreeMap, VecDeque};
use std::sync::Arc;

use ballast_kafka::{BrokerId, Client, OffsetSpec, TopicPartition};
use serde::{Deserialize, Serialize};

use futures_util::Future;
use tokio::task::JoinSet;

use crate::cluster::{kafka_name, read_failed};
use crate::context::Context;
use crate::error::OpError;
use crate::page::row_limit;
use crate::payload::{Filters, Message, PREVIEW_BYTES};

/// An optional text filter; an empty value is no filter.
fn non_empty(value: Option<String>) -> Option<String> {
    value.filter(|v| !v.is_empty())
}

/// A failed read of the cluster (`crate::cluster::read_failed`).
fn fail(ctx: &Context, err: ballast_kafka::Error) -> OpError {
    read_failed(&ctx.kafka, err)
}

/// Runs `f` on every item with at most `concurrency` at a time, answers in input order. A task
/// that panicked is a 500.
async fn bounded<T, R, F, Fut>(items: Vec<T>, concurrency: usize, f: F) -> Result<Vec<R>, OpError>
where
    T: Send + 'static,
    R: Send + 'static,
    F: Fn(T) -> Fut,
    Fut: Future<Output = R> + Send + 'static,
{
    let mut out: Vec<Option<R>> = std::iter::repeat_with(|| None).take(items.len()).collect();
    let mut pending = items.into_iter().enumerate();
    let mut set = JoinSet::new();
    loop {
        while set.len() < concurrency.max(1) {
            let Some((index, item)) = pending.next() else {
                break;
            };
            let fut = f(item);
            set.spawn(async move { (index, fut.await) });
        }
        match set.join_next().await {
            Some(Ok((index, result))) => out[index] = Some(result),
            Some(Err(join)) => {
                return Err(OpError::internal("cluster read failed", join.to_string()))
            }
            None => break,
        }
    }
    Ok(out.into_iter().flatten().collect())
}

/// `limit`: default and maximum (as the MCP `browse_messages`).
const DEFAULT_LIMIT: usize = 20;
const MAX_LIMIT: usize = 50;
/// Bytes asked per Fetch.
pub const FETCH_BYTES: i32 = 1 << 20;
/// Records one range request examines at most (spread over the partitions it reads).
const SCAN_BUDGET: u64 = 10_000;
/// Least budget of one partition when the request reads every partition.
const MIN_PARTITION_BUDGET: u64 = 100;
/// Partitions read at the same time.
const CONCURRENCY: usize = 8;
/// Largest backward window of a filtered `from=latest` read.
const MAX_WINDOW: i64 = 10_000;

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct NoQuery {}

fn from_schema() -> utoipa::openapi::Object {
    crate::schema::string_enum(["", "earliest", "latest"])
}

#[derive(Debug, Default, Deserialize, utoipa::IntoParams)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct RangeQuery {
    /// Only this partition.
    #[param(minimum = 0)]
    pub partition: Option<i32>,
    /// Start at this offset (with `partition`).
    pub offset: Option<i64>,
    /// ms since the epoch.
    pub timestamp: Option<i64>,
    /// `earliest` or `latest` (the default).
    #[param(schema_with = from_schema)]
    pub from: Option<String>,
    /// Messages, default 20, at most 50.
    pub limit: Option<u32>,
    /// Only messages whose key contains this.
    pub key_filter: Option<String>,
    /// Only messages whose value contains this.
    pub value_filter: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Start {
    Earliest,
    Latest,
    Offset(i64),
    Timestamp(i64),
}

impl Start {
    fn name(self) -> &'static str {
        match self {
            Start::Earliest => "earliest",
            Start::Latest => "latest",
            Start::Offset(_) => "offset",
            Start::Timestamp(_) => "timestamp",
        }
    }
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PartitionCursor {
    partition: i32,
    low_watermark: Option<i64>,
    high_watermark: Option<i64>,
    /// The first offset examined.
    start_offset: Option<i64>,
    /// Where a forward read continues after this answer (pass it as `offset`).
    next_offset: Option<i64>,
    /// Records examined.
    scanned: u64,
    /// The read stopped at the scan budget: more matches may lie beyond what was examined.
    scan_limit_reached: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<String>,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Range {
    topic: String,
    partition: Option<i32>,
    /// `earliest`, `latest`, `offset` or `timestamp`.
    from: &'static str,
    limit: usize,
    count: usize,
    key_filter: Option<String>,
    value_filter: Option<String>,
    scanned: u64,
    scan_limit_reached: bool,
    partitions: Vec<PartitionCursor>,
    messages: Vec<Message>,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SingleMessage {
    topic: String,
    #[serde(flatten)]
    message: Message,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PartitionWatermarks {
    partition: i32,
    leader: Option<BrokerId>,
    low_watermark: Option<i64>,
    high_watermark: Option<i64>,
    /// `high - low`: the messages in the log (an upper bound for compacted or transactional topics).
    messages: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<String>,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Watermarks {
    topic: String,
    partition_count: usize,
    total_messages: i64,
    partitions: Vec<PartitionWatermarks>,
}

// ---------------------------------------------------------------------------------------------
// helpers shared with the tail

/// The partitions of `topic` with their leaders; an unknown topic is a 404.
pub async fn partitions_of(
    ctx: &Context,
    client: &Client,
    topic: &str,
) -> Result<Vec<(i32, Option<BrokerId>)>, OpError> {
    let metadata = client
        .metadata(Some(&[topic.to_string()]))
        .await
        .map_err(|e| fail(ctx, e))?;
    match metadata.topic(topic) {
        Some(t) if t.error.is_none() => Ok(t
            .partitions
            .iter()
            .map(|p| (p.partition, p.leader))
            .collect()),
        Some(t)
            if t.error
                .as_ref()
                .is_some_and(|e| e.name == "INVALID_TOPIC_EXCEPTION") =>
        {
            Err(OpError::bad_input(
                "invalid topic name",
                format!("{topic:?} is not a valid topic name"),
            ))
        }
        _ => Err(OpError::not_found(
            "unknown topic",
            format!("topic {topic} does not exist"),
        )),
    }
}

/// Narrows `partitions` to `wanted` (404 when the topic has no such partition, 400 when negative).
pub fn select_partition(
    topic: &str,
    partitions: Vec<(i32, Option<BrokerId>)>,
    wanted: Option<i32>,
) -> Result<Vec<(i32, Option<BrokerId>)>, OpError> {
    let Some(p) = wanted else {
        return Ok(partitions);
    };
    if p < 0 {
        return Err(OpError::bad_input(
            "invalid query",
            format!("partition must be 0 or more, got {p}"),
        ));
    }
    let count = partitions.len();
    let found: Vec<_> = partitions.into_iter().filter(|(id, _)| *id == p).collect();
    if found.is_empty() {
        return Err(OpError::not_found(
            "unknown partition",
            format!("topic {topic} has {count} partitions; there is no partition {p}"),
        ));
    }
    Ok(found)
}

type Marks = BTreeMap<i32, Result<(i64, i64), String>>;

/// Low and high watermarks of `partitions` (errors per partition).
pub async fn watermarks_of(
    client: &Client,
    topic: &str,
    partitions: &[i32],
) -> ballast_kafka::Result<Marks> {
    let tps: Vec<TopicPartition> = partitions
        .iter()
        .map(|p| TopicPartition::new(topic, *p))
        .collect();
    let (low, high) = tokio::join!(
        client.list_offsets(&tps, OffsetSpec::Earliest),
        client.list_offsets(&tps, OffsetSpec::Latest)
    );
    let (low, high) = (low?, high?);
    Ok(low
        .into_iter()
        .zip(high)
        .map(|(l, h)| {
            let value = match (l.error.or(h.error), l.offset, h.offset) {
                (Some(e), _, _) => Err(e.to_string()),
                (None, Some(l), Some(h)) => Ok((l, h)),
                _ => Err("no watermark".to_string()),
            };
            (l.partition, value)
        })
        .collect())
}

// ---------------------------------------------------------------------------------------------
// scanning

/// Which matches a scan keeps.
#[derive(Debug, Clone, Copy)]
enum Keep {
    /// The first n, then stop.
    First(usize),
    /// The last n of the whole range (memory stays at n).
    Last(usize),
}

#[derive(Debug, Default)]
struct Scan {
    matches: VecDeque<Message>,
    scanned: u64,
    /// Where a forward read continues.
    next: i64,
    budget_hit: bool,
}

/// Reads `[start, end)` of `tp` forward, keeping matches as `keep` says, examining at most
/// `budget` records.
async fn scan(
    client: &Client,
    tp: &TopicPartition,
    start: i64,
    end: i64,
    keep: Keep,
    budget: u64,
    filters: &Filters,
) -> ballast_kafka::Result<Scan> {
    let mut out = Scan {
        next: start,
        ..Scan::default()
    };
    let mut pos = start;
    while pos < end {
        if let Keep::First(n) = keep {
            if out.matches.len() >= n {
                break;
            }
        }
        if out.scanned >= budget {
            out.budget_hit = true;
            break;
        }
        let fetched = client.fetch(tp, pos, FETCH_BYTES).await?;
        let mut stopped = false;
        let mut after = pos;
        for r in &fetched.records {
            if r.offset >= end {
                after = end;
                stopped = true;
                break;
            }
            out.scanned += 1;
            after = r.offset + 1;
            if filters.matches(r) {
                out.matches
                    .push_back(Message::from_record(tp.partition, r, PREVIEW_BYTES));
                match keep {
                    Keep::First(n) if out.matches.len() >= n => {
                        stopped = true;
                        break;
                    }
                    Keep::Last(n) if out.matches.len() > n => {
                        out.matches.pop_front();
                    }
                    _ => {}
                }
            }
            if out.scanned >= budget {
                stopped = true;
                break;
            }
        }
        let next = if stopped {
            after
        } else {
            fetched.next_offset.max(after)
        };
        if next <= pos {
            break; // nothing more to read below `end`
        }
        pos = next.min(end);
    }
    out.next = pos;
    if out.scanned >= budget && pos < end {
        out.budget_hit = true;
    }
    Ok(out)
}

/// The newest `want` matches below `high`: one window when unfiltered, else windows going back,
/// each scanned whole, until enough matched, the log start or the budget.
async fn scan_latest(
    client: &Client,
    tp: &TopicPartition,
    (low, high): (i64, i64),
    want: usize,
    budget: u64,
    filters: &Filters,
) -> ballast_kafka::Result<(Scan, i64)> {
    if filters.is_empty() {
        let start = (high - want as i64).max(low);
        let mut s = scan(client, tp, start, high, Keep::Last(want), u64::MAX, filters).await?;
        s.next = high;
        return Ok((s, start));
    }
    let mut kept: VecDeque<Message> = VecDeque::new();
    let mut scanned = 0u64;
    // The budget counts offsets (windows are sized before reading), `scanned` records.
    let mut spent = 0u64;
    let mut end = high;
    let mut window = (want as i64).max(100);
    let mut budget_hit = false;
    while end > low && kept.len() < want {
        let left = budget.saturating_sub(spent) as i64;
        if left <= 0 {
            budget_hit = true;
            break;
        }
        let start = (end - window.min(left)).max(low);
        let s = scan(client, tp, start, end, Keep::Last(want), u64::MAX, filters).await?;
        scanned += s.scanned;
        spent += (end - start) as u64;
        for m in s.matches.into_iter().rev() {
            kept.push_front(m);
        }
        end = start;
        window = (window * 2).min(MAX_WINDOW);
    }
    while kept.len() > want {
        kept.pop_front();
    }
    Ok((
        Scan {
            matches: kept,
            scanned,
            next: high,
            budget_hit,
        },
        end,
    ))
}

/// One partition's part of a range request.
struct Read {
    client: Client,
    tp: TopicPartition,
    marks: Result<(i64, i64), String>,
    start: Start,
    want: usize,
    budget: u64,
    filters: Arc<Filters>,
}

async fn read_partition(job: Read) -> (PartitionCursor, VecDeque<Message>) {
    let Read {
        client,
        tp,
        marks,
        start,
        want,
        budget,
        filters,
    } = job;
    let partition = tp.partition;
    let mut cursor = PartitionCursor {
        partition,
        low_watermark: None,
        high_watermark: None,
        start_offset: None,
        next_offset: None,
        scanned: 0,
        scan_limit_reached: false,
        error: None,
    };
    let (low, high) = match marks {
        Ok(m) => m,
        Err(e) => {
            cursor.error = Some(e);
            return (cursor, VecDeque::new());
        }
    };
    cursor.low_watermark = Some(low);
    cursor.high_watermark = Some(high);
    let result = async {
        let from = match start {
            Start::Latest => {
                return scan_latest(&client, &tp, (low, high), want, budget, &filters).await
            }
            Start::Earliest => low,
            Start::Offset(o) => o.clamp(low, high),
            Start::Timestamp(ms) => {
                let listed = client
                    .list_offsets(std::slice::from_ref(&tp), OffsetSpec::Timestamp(ms))
                    .await?;
                match listed.into_iter().next() {
                    Some(o) if o.error.is_some() => {
                        return Err(o.error.map(|e| e.into_error("ListOffsets")).unwrap_or_else(
                            || ballast_kafka::Error::InvalidArgument("no offset".into()),
                        ))
                    }
                    Some(o) => o.offset.unwrap_or(high).clamp(low, high),
                    None => high,
                }
            }
        };
        let s = scan(
            &client,
            &tp,
            from,
            high,
            Keep::First(want),
            budget,
            &filters,
        )
        .await?;
        Ok((s, from))
    }
    .await;
    match result {
        Ok((s, from)) => {
            cursor.start_offset = Some(from);
            cursor.next_offset = Some(s.next);
            cursor.scanned = s.scanned;
            cursor.scan_limit_reached = s.budget_hit;
            (cursor, s.matches)
        }
        Err(e) => {
            cursor.error = Some(ballast_runtime::error_chain(&e));
            (cursor, VecDeque::new())
        }
    }
}

fn parse_start(q: &RangeQuery) -> Result<Start, OpError> {
    let bad = |d: String| OpError::bad_input("invalid query", d);
    let given = [q.offset.is_some(), q.timestamp.is_some(), q.from.is_some()]
        .iter()
        .filter(|g| **g)
        .count();
    if given > 1 {
        return Err(bad("give at most one of offset, timestamp and from".into()));
    }
    if let Some(o) = q.offset {
        if o < 0 {
            return Err(bad(format!("offset must be 0 or more, got {o}")));
        }
        if q.partition.is_none() {
            return Err(bad("offset needs partition".into()));
        }
        return Ok(Start::Offset(o));
    }
    if let Some(ms) = q.timestamp {
        if ms < 0 {
            return Err(bad(format!(
                "timestamp must be ms since the epoch, got {ms}"
            )));
        }
        return Ok(Start::Timestamp(ms));
    }
    match q.from.as_deref() {
        None | Some("latest") => Ok(Start::Latest),
        Some("earliest") => Ok(Start::Earliest),
        Some(other) => Err(bad(format!(
            "from: expected earliest or latest, got {other:?}"
        ))),
    }
}

/// The operation `browse_messages`: messages of `topic` from an offset, a time, the earliest or
/// the latest, optionally filtered by key or value, within the scan budget.
pub async fn browse_messages(
    ctx: &Context,
    topic: String,
    q: RangeQuery,
) -> Result<Range, OpError> {
    let start = parse_start(&q)?;
    let limit = row_limit(q.limit, DEFAULT_LIMIT, MAX_LIMIT);
    let filters = Arc::new(Filters {
        key: non_empty(q.key_filter.clone()),
        value: non_empty(q.value_filter.clone()),
    });
    let client = ctx.kafka.client().await?;
    let all = partitions_of(ctx, &client, &topic).await?;
    let selected = select_partition(&topic, all, q.partition)?;
    let ids: Vec<i32> = selected.iter().map(|(p, _)| *p).collect();
    let mut marks = watermarks_of(&client, &topic, &ids)
        .await
        .map_err(|e| fail(ctx, e))?;
    let budget = if ids.len() <= 1 {
        SCAN_BUDGET
    } else {
        (SCAN_BUDGET / ids.len() as u64).max(MIN_PARTITION_BUDGET)
    };
    let jobs: Vec<Read> = ids
        .iter()
        .map(|p| Read {
            client: client.clone(),
            tp: TopicPartition::new(topic.clone(), *p),
            marks: marks
                .remove(p)
                .unwrap_or_else(|| Err("no watermark".into())),
            start,
            want: limit,
            budget,
            filters: filters.clone(),
        })
        .collect();
    let read = bounded(jobs, CONCURRENCY, read_partition).await?;
    // A single partition whose read failed is the request's failure.
    if let [(cursor, _)] = read.as_slice() {
        if let Some(e) = &cursor.error {
            return Err(OpError::cluster(
                "cluster error",
                format!("reading partition {} failed: {e}", cursor.partition),
            ));
        }
    }
    let single = q.partition.is_some();
    let mut cursors = Vec::with_capacity(read.len());
    let mut messages: Vec<Message> = Vec::new();
    for (cursor, found) in read {
        cursors.push(cursor);
        messages.extend(found);
    }
    if single {
        messages.sort_by_key(|m| m.offset);
    } else {
        messages.sort_by_key(|m| (m.timestamp.unwrap_or(i64::MIN), m.partition, m.offset));
    }
    if messages.len() > limit {
        let dropped: Vec<Message> = if start == Start::Latest {
            let cut = messages.len() - limit;
            messages.drain(..cut).collect()
        } else {
            messages.split_off(limit)
        };
        if start != Start::Latest {
            // A forward read continues at the first message left out of this answer.
            for m in &dropped {
                if let Some(c) = cursors.iter_mut().find(|c| c.partition == m.partition) {
                    c.next_offset = Some(c.next_offset.map_or(m.offset, |n| n.min(m.offset)));
                }
            }
        }
    }
    let scanned = cursors.iter().map(|c| c.scanned).sum();
    let scan_limit_reached = cursors.iter().any(|c| c.scan_limit_reached);
    Ok(Range {
        topic,
        partition: q.partition,
        from: start.name(),
        limit,
        count: messages.len(),
        key_filter: filters.key.clone(),
        value_filter: filters.value.clone(),
        scanned,
        scan_limit_reached,
        partitions: cursors,
        messages,
    })
}

/// The operation `get_topic_watermarks`: the low and high watermark and leader of every
/// partition of `topic`, and the messages they span.
pub async fn get_topic_watermarks(ctx: &Context, topic: String) -> Result<Watermarks, OpError> {
    let client = ctx.kafka.client().await?;
    let partitions = partitions_of(ctx, &client, &topic).await?;
    let ids: Vec<i32> = partitions.iter().map(|(p, _)| *p).collect();
    let marks = watermarks_of(&client, &topic, &ids)
        .await
        .map_err(|e| fail(ctx, e))?;
    let rows: Vec<PartitionWatermarks> = partitions
        .iter()
        .map(|(p, leader)| {
            let m = marks
                .get(p)
                .cloned()
                .unwrap_or_else(|| Err("no watermark".into()));
            PartitionWatermarks {
                partition: *p,
                leader: *leader,
                low_watermark: m.as_ref().ok().map(|(l, _)| *l),
                high_watermark: m.as_ref().ok().map(|(_, h)| *h),
                messages: m.as_ref().ok().map(|(l, h)| (h - l).max(0)),
                error: m.err(),
            }
        })
        .collect();
    Ok(Watermarks {
        topic,
        partition_count: rows.len(),
        total_messages: rows.iter().filter_map(|r| r.messages).sum(),
        partitions: rows,
    })
}

/// The message at `offset` of `partition` of `topic`, whole (not cut to the preview).
pub async fn get_message(
    ctx: &Context,
    topic: String,
    partition: i32,
    offset: i64,
) -> Result<SingleMessage, OpError> {
    if partition < 0 || offset < 0 {
        return Err(OpError::bad_input(
            "invalid path",
            format!("partition and offset must be 0 or more, got {partition} and {offset}"),
        ));
    }
    let client = ctx.kafka.client().await?;
    let all = partitions_of(ctx, &client, &topic).await?;
    select_partition(&topic, all, Some(partition))?;
    let tp = TopicPartition::new(topic.clone(), partition);
    let out_of_range = |low: Option<i64>, high: i64| {
        OpError::not_found(
            "offset out of range",
            match low {
                Some(low) => format!("partition {partition} of {topic} holds offsets {low} to {}; {offset} is outside", high - 1),
                None => format!("offset {offset} is at or past the high watermark {high} of partition {partition} of {topic}"),
            },
        )
    };
    let fetched = match client.fetch(&tp, offset, FETCH_BYTES).await {
        Ok(f) => f,
        Err(e) if kafka_name(&e) == Some("OFFSET_OUT_OF_RANGE") => {
            let marks = watermarks_of(&client, &topic, &[partition])
                .await
                .map_err(|e| fail(ctx, e))?;
            return Err(match marks.get(&partition) {
                Some(Ok((low, high))) => out_of_range(Some(*low), *high),
                _ => OpError::not_found(
                    "offset out of range",
                    format!("no offset {offset} in partition {partition} of {topic}"),
                ),
            });
        }
        Err(e) => return Err(fail(ctx, e)),
    };
    match fetched.records.iter().find(|r| r.offset == offset) {
        Some(r) => Ok(SingleMessage {
            topic,
            message: Message::from_record(partition, r, usize::MAX),
        }),
        None if offset >= fetched.high_watermark => Err(out_of_range(fetched.log_start_offset, fetched.high_watermark)),
        None => Err(OpError::not_found(
            "no message at offset",
            format!("offset {offset} of partition {partition} of {topic} holds no message (removed by compaction or a transaction marker)"),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn q(pairs: &[(&str, &str)]) -> RangeQuery {
        let map: serde_json::Map<String, serde_json::Value> = pairs
            .iter()
            .map(|(k, v)| {
                let value = v
                    .parse::<i64>()
                    .map(serde_json::Value::from)
                    .unwrap_or_else(|_| serde_json::Value::from(*v));
                (k.to_string(), value)
            })
            .collect();
        serde_json::from_value(serde_json::Value::Object(map)).unwrap()
    }

    #[test]
    fn the_start_is_one_of_offset_timestamp_or_from_and_latest_by_default() {
        assert_eq!(parse_start(&q(&[])).unwrap(), Start::Latest);
        assert_eq!(
            parse_start(&q(&[("from", "earliest")])).unwrap(),
            Start::Earliest
        );
        assert_eq!(
            parse_start(&q(&[("partition", "0"), ("offset", "5")])).unwrap(),
            Start::Offset(5)
        );
        assert_eq!(
            parse_start(&q(&[("timestamp", "1000")])).unwrap(),
            Start::Timestamp(1000)
        );
        for bad in [
            q(&[("offset", "5")]),
            q(&[("partition", "0"), ("offset", "5"), ("from", "latest")]),
            q(&[("from", "middle")]),
            q(&[("partition", "0"), ("offset", "-2")]),
        ] {
            assert_eq!(
                parse_start(&bad).unwrap_err().kind,
                crate::error::Kind::BadInput
            );
        }
    }

    #[tokio::test]
    async fn bounded_keeps_input_order() {
        let out = bounded((0..20u64).collect(), 3, |i| async move {
            tokio::time::sleep(std::time::Duration::from_millis(20 - i)).await;
            i * 2
        })
        .await
        .unwrap();
        assert_eq!(out, (0..20u64).map(|i| i * 2).collect::<Vec<_>>());
    }
}
