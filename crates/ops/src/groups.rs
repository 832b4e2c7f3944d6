//! Consumer groups: `reset_consumer_group_offsets` (committed offsets by a strategy, with a dry
//! run) and `delete_consumer_group`, through the pipeline serialised per group and audited
//! (`consumer_groups.reset_offsets`, `consumer_groups.delete`).
//!
//! Both need the group to be empty: while it has active members the cluster would refuse (or the
//! members would overwrite the new offsets at their next commit), so the request is refused with
//! a 409 before anything is sent. Neither is revertible from the audit log: the events keep the
//! offsets before and after so an operator can put them back by hand.
//!
//! Input rules, before anything is sent: the group's name (`crate::names::plain`), topic names by
//! Kafka's rule, a strategy with exactly the fields it uses; then the group, topics and
//! partitions must exist and an explicit offset must lie within the log.

use std::collections::{BTreeMap, BTreeSet};

use ballast_kafka::{Client, CommittedOffset, GroupDescription, OffsetSpec, TopicPartition};
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use crate::actor::Actor;
use crate::cluster::{change_failed, item_failed};
use crate::context::Context;
use crate::error::OpError;
use crate::pipeline::{Audited, Done, NotDone, Resource};
use crate::time::parse_instant_ms;

/// A group's name (`crate::names::plain`).
fn check_name(what: &str, name: &str) -> Result<(), OpError> {
    crate::names::plain(what, name).map_err(|why| OpError::bad_input("invalid request", why))
}

/// A topic name by Kafka's own rule (`crate::names::topic`).
fn check_topic(name: &str) -> Result<(), OpError> {
    crate::names::topic(name).map_err(|why| OpError::bad_input("invalid request", why))
}

/// Partitions one reset may name.
const MAX_PARTITIONS: usize = 10_000;

/// What `reset_consumer_group_offsets` is asked.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Reset {
    /// `earliest`, `latest`, `timestamp`, `shift` or `offsets`.
    pub strategy: String,
    /// Only this topic (all its partitions, or `partitions`); default: every partition the group
    /// has committed offsets for.
    pub topic: Option<String>,
    pub partitions: Option<Vec<i32>>,
    /// For `timestamp`: Unix ms or RFC 3339.
    pub timestamp: Option<Value>,
    /// For `shift`: added to the committed offset (negative moves back).
    pub shift_by: Option<i64>,
    /// For `offsets`: the exact offsets.
    pub offsets: Option<Vec<OffsetEntry>>,
    /// Plan only: answer the offsets it would commit, change nothing, audit nothing.
    #[serde(default)]
    pub dry_run: bool,
}

/// An exact offset for strategy `offsets`.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct OffsetEntry {
    pub topic: String,
    pub partition: i32,
    pub offset: i64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Strategy {
    Earliest,
    Latest,
    Timestamp(i64),
    Shift(i64),
    Offsets,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PlannedOffset {
    pub topic: String,
    pub partition: i32,
    /// The committed offset before (null: none).
    pub current_offset: Option<i64>,
    pub new_offset: i64,
    pub earliest_offset: i64,
    pub latest_offset: i64,
    /// `latestOffset - newOffset`.
    pub lag_after: i64,
    /// A shift went past the earliest or latest offset and was held there.
    pub clamped: bool,
    /// The cluster refused this partition's commit.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ResetResult {
    pub group_id: String,
    pub strategy: &'static str,
    pub dry_run: bool,
    /// Whether offsets were committed (false for a dry run).
    pub applied: bool,
    pub partitions: Vec<PlannedOffset>,
    #[serde(flatten, skip_serializing_if = "Option::is_none")]
    pub audit: Option<Audited>,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct DeleteResult {
    pub group_id: String,
    pub deleted: bool,
    /// Committed offsets the group had (kept in the audit event).
    pub offsets: usize,
    #[serde(flatten)]
    pub audit: Audited,
}

fn invalid(details: impl Into<String>) -> OpError {
    OpError::bad_input("invalid request body", details)
}

impl Strategy {
    fn name(self) -> &'static str {
        match self {
            Strategy::Earliest => "earliest",
            Strategy::Latest => "latest",
            Strategy::Timestamp(_) => "timestamp",
            Strategy::Shift(_) => "shift",
            Strategy::Offsets => "offsets",
        }
    }
}

/// The strategy, with exactly the fields it uses.
fn strategy(b: &Reset) -> Result<Strategy, OpError> {
    let s = match b.strategy.to_ascii_lowercase().as_str() {
        "earliest" => Strategy::Earliest,
        "latest" => Strategy::Latest,
        "timestamp" => {
            let ms = match &b.timestamp {
                Some(Value::Number(n)) => n
                    .as_i64()
                    .filter(|ms| *ms >= 0)
                    .ok_or_else(|| invalid(format!("timestamp {n} is not a time")))?,
                Some(Value::String(s)) => {
                    parse_instant_ms(s).map_err(|e| invalid(format!("timestamp: {e}")))?
                }
                Some(other) => return Err(invalid(format!("timestamp {other} is not a time"))),
                None => return Err(invalid("strategy timestamp needs timestamp")),
            };
            Strategy::Timestamp(ms)
        }
        "shift" => Strategy::Shift(
            b.shift_by
                .ok_or_else(|| invalid("strategy shift needs shiftBy"))?,
        ),
        "offsets" if b.offsets.is_none() => return Err(invalid("strategy offsets needs offsets")),
        "offsets" => Strategy::Offsets,
        other => {
            return Err(invalid(format!(
                "strategy {other:?}: expected earliest, latest, timestamp, shift or offsets"
            )))
        }
    };
    let stray = [
        (
            "timestamp",
            b.timestamp.is_some(),
            matches!(s, Strategy::Timestamp(_)),
        ),
        (
            "shiftBy",
            b.shift_by.is_some(),
            matches!(s, Strategy::Shift(_)),
        ),
        ("offsets", b.offsets.is_some(), s == Strategy::Offsets),
        ("topic", b.topic.is_some(), s != Strategy::Offsets),
        ("partitions", b.partitions.is_some(), s != Strategy::Offsets),
    ];
    if let Some((field, _, _)) = stray.iter().find(|(_, given, allowed)| *given && !allowed) {
        return Err(invalid(format!(
            "{field} does not apply to strategy {}",
            s.name()
        )));
    }
    if b.partitions.is_some() && b.topic.is_none() {
        return Err(invalid("partitions needs topic"));
    }
    Ok(s)
}

/// The group, refused when unknown (404) or active (409).
async fn empty_group(
    ctx: &Context,
    client: &Client,
    group: &str,
) -> Result<(GroupDescription, Vec<CommittedOffset>), OpError> {
    let mut described = client
        .describe_groups(&[group.to_string()])
        .await
        .map_err(|e| change_failed(&ctx.kafka, e))?;
    let d = described
        .pop()
        .ok_or_else(|| OpError::internal("cluster read failed", "no description of the group"))?;
    let unknown = || {
        OpError::not_found(
            "unknown consumer group",
            format!("consumer group {group} does not exist"),
        )
    };
    if let Some(e) = &d.error {
        if e.name == "GROUP_ID_NOT_FOUND" {
            return Err(unknown());
        }
        if e.name == "UNSUPPORTED_VERSION" {
            // The group exists (its coordinator lists it) but nothing describes its members.
            return Err(OpError::cluster(
                "group cannot be described",
                e.message.clone().unwrap_or_else(|| e.to_string()),
            ));
        }
        return Err(item_failed(
            &format!("describing consumer group {group}"),
            e,
        ));
    }
    if !d.members.is_empty() {
        return Err(OpError::conflict(
            "consumer group has active members",
            format!(
                "consumer group {group} is {} with {} active member(s) ({}); stop its consumers, wait until it is Empty, then try again",
                d.state,
                d.members.len(),
                d.members
                    .iter()
                    .map(|m| format!("{} on {}", m.client_id, m.host))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        ));
    }
    let committed: Vec<CommittedOffset> = client
        .committed_offsets(group, None)
        .await
        .map_err(|e| change_failed(&ctx.kafka, e))?
        .into_iter()
        .filter(|c| c.offset.is_some())
        .collect();
    if d.state.eq_ignore_ascii_case("dead") && committed.is_empty() {
        return Err(unknown());
    }
    Ok((d, committed))
}

/// The partitions a reset covers, each with its requested offset for strategy `offsets`.
async fn scope(
    ctx: &Context,
    client: &Client,
    body: &Reset,
    committed: &[CommittedOffset],
) -> Result<Vec<(TopicPartition, Option<i64>)>, OpError> {
    let mut wanted: Vec<(TopicPartition, Option<i64>)> = Vec::new();
    if let Some(entries) = &body.offsets {
        if entries.is_empty() {
            return Err(invalid("offsets must list at least one partition"));
        }
        let mut seen = BTreeSet::new();
        for e in entries {
            check_topic(&e.topic)?;
            if e.offset < 0 {
                return Err(invalid(format!(
                    "{}-{}: offset {} is negative",
                    e.topic, e.partition, e.offset
                )));
            }
            if !seen.insert((e.topic.clone(), e.partition)) {
                return Err(invalid(format!(
                    "{}-{} is listed more than once",
                    e.topic, e.partition
                )));
            }
            wanted.push((
                TopicPartition::new(e.topic.clone(), e.partition),
                Some(e.offset),
            ));
        }
    } else if let Some(topic) = &body.topic {
        check_topic(topic)?;
        let partitions = match &body.partitions {
            Some(ps) if ps.is_empty() => {
                return Err(invalid("partitions must list at least one partition"))
            }
            Some(ps) => {
                let unique: BTreeSet<i32> = ps.iter().copied().collect();
                if unique.len() != ps.len() {
                    return Err(invalid("partitions lists a partition more than once"));
                }
                Some(unique)
            }
            None => None,
        };
        let metadata = client
            .metadata(Some(std::slice::from_ref(topic)))
            .await
            .map_err(|e| change_failed(&ctx.kafka, e))?;
        let Some(info) = metadata.topic(topic).filter(|t| t.error.is_none()) else {
            return Err(OpError::not_found(
                "unknown topic",
                format!("topic {topic} does not exist"),
            ));
        };
        let all: BTreeSet<i32> = info.partitions.iter().map(|p| p.partition).collect();
        let chosen = partitions.unwrap_or_else(|| all.clone());
        if let Some(p) = chosen.iter().find(|p| !all.contains(p)) {
            return Err(OpError::not_found(
                "unknown partition",
                format!(
                    "topic {topic} has no partition {p} ({} partitions)",
                    all.len()
                ),
            ));
        }
        wanted.extend(
            chosen
                .into_iter()
                .map(|p| (TopicPartition::new(topic.clone(), p), None)),
        );
    } else {
        wanted.extend(
            committed
                .iter()
                .map(|c| (TopicPartition::new(c.topic.clone(), c.partition), None)),
        );
        if wanted.is_empty() {
            return Err(invalid(
                "the group has no committed offsets; name a topic to reset",
            ));
        }
    }
    if wanted.len() > MAX_PARTITIONS {
        return Err(invalid(format!(
            "at most {MAX_PARTITIONS} partitions per reset"
        )));
    }
    if body.offsets.is_some() {
        // Every named partition must exist: one metadata request for their topics.
        let topics: Vec<String> = wanted
            .iter()
            .map(|(tp, _)| tp.topic.clone())
            .collect::<BTreeSet<_>>()
            .into_iter()
            .collect();
        let metadata = client
            .metadata(Some(&topics))
            .await
            .map_err(|e| change_failed(&ctx.kafka, e))?;
        for (tp, _) in &wanted {
            if metadata.partition(tp).is_none() {
                return Err(OpError::not_found(
                    "unknown topic or partition",
                    format!("{}-{} does not exist", tp.topic, tp.partition),
                ));
            }
        }
    }
    Ok(wanted)
}

/// One offset per partition of `tps` for `spec`; a partition without one is an error.
async fn offsets_at(
    ctx: &Context,
    client: &Client,
    tps: &[TopicPartition],
    spec: OffsetSpec,
) -> Result<BTreeMap<TopicPartition, Option<i64>>, OpError> {
    let listed = client
        .list_offsets(tps, spec)
        .await
        .map_err(|e| change_failed(&ctx.kafka, e))?;
    let mut out = BTreeMap::new();
    for o in listed {
        if let Some(e) = &o.error {
            return Err(item_failed(&format!("{}-{}", o.topic, o.partition), e));
        }
        out.insert(TopicPartition::new(o.topic, o.partition), o.offset);
    }
    Ok(out)
}

/// The new offset of each partition. Shifts are held within [earliest, latest] (as
/// kafka-consumer-groups does); an explicit offset outside it is refused; a timestamp after the
/// last record lands on the latest offset.
fn plan(
    strategy: Strategy,
    wanted: &[(TopicPartition, Option<i64>)],
    committed: &BTreeMap<TopicPartition, i64>,
    earliest: &BTreeMap<TopicPartition, Option<i64>>,
    latest: &BTreeMap<TopicPartition, Option<i64>>,
    at_time: &BTreeMap<TopicPartition, Option<i64>>,
) -> Result<Vec<PlannedOffset>, OpError> {
    wanted
        .iter()
        .map(|(tp, explicit)| {
            let name = format!("{}-{}", tp.topic, tp.partition);
            let bound = |m: &BTreeMap<TopicPartition, Option<i64>>, which: &str| {
                m.get(tp).copied().flatten().ok_or_else(|| {
                    OpError::cluster(
                        "cluster error",
                        format!("{name}: the cluster gave no {which} offset"),
                    )
                })
            };
            let (low, high) = (bound(earliest, "earliest")?, bound(latest, "latest")?);
            let current = committed.get(tp).copied();
            let (new, clamped) = match strategy {
                Strategy::Earliest => (low, false),
                Strategy::Latest => (high, false),
                Strategy::Timestamp(_) => {
                    (at_time.get(tp).copied().flatten().unwrap_or(high), false)
                }
                Strategy::Shift(n) => {
                    let from = current.ok_or_else(|| {
                        invalid(format!(
                            "{name}: the group has no committed offset to shift from"
                        ))
                    })?;
                    let to = from.saturating_add(n);
                    (to.clamp(low, high), to < low || to > high)
                }
                Strategy::Offsets => {
                    let to = explicit.unwrap_or(low);
                    if to < low || to > high {
                        return Err(invalid(format!(
                            "{name}: offset {to} is outside the log ({low}..={high})"
                        )));
                    }
                    (to, false)
                }
            };
            Ok(PlannedOffset {
                topic: tp.topic.clone(),
                partition: tp.partition,
                current_offset: current,
                new_offset: new,
                earliest_offset: low,
                latest_offset: high,
                lag_after: high - new,
                clamped,
                error: None,
            })
        })
        .collect()
}

fn offsets_json(offsets: impl Iterator<Item = (String, i32, i64)>) -> Value {
    Value::Array(
        offsets
            .map(|(topic, partition, offset)| {
                json!({ "topic": topic, "partition": partition, "offset": offset })
            })
            .collect(),
    )
}

/// The operation `reset_consumer_group_offsets`: plans the new committed offsets of an empty
/// group by the body's strategy and commits them (a dry run only plans); audited
/// `consumer_groups.reset_offsets`.
pub async fn reset_consumer_group_offsets(
    ctx: &Context,
    actor: &Actor,
    group: String,
    body: Reset,
) -> Result<ResetResult, OpError> {
    check_name("group", &group)?;
    let strategy = strategy(&body)?;
    let client = ctx.kafka.client().await?;
    if body.dry_run {
        let planned = plan_reset(ctx, &client, &group, &body, strategy).await?;
        return Ok(ResetResult {
            group_id: group,
            strategy: strategy.name(),
            dry_run: true,
            applied: false,
            partitions: planned,
            audit: None,
        });
    }
    let mut event = actor.event(
        ctx.clock.now_ms(),
        "consumer_groups.reset_offsets",
        group.clone(),
    );
    event.summary = json!({
        "strategy": strategy.name(),
        "timestamp": match strategy { Strategy::Timestamp(ms) => Some(ms), _ => None },
        "shiftBy": match strategy { Strategy::Shift(n) => Some(n), _ => None },
        "topic": body.topic,
    });
    let (planned, recorded) = ctx
        .pipeline
        .run([Resource::Group(group.clone())], event, || async {
            let planned = plan_reset(ctx, &client, &group, &body, strategy)
                .await
                .map_err(NotDone::Refused)?;
            commit_reset(ctx, &client, &group, planned).await
        })
        .await?;
    Ok(ResetResult {
        group_id: group,
        strategy: strategy.name(),
        dry_run: false,
        applied: true,
        partitions: planned,
        audit: Some(Audited::from(recorded)),
    })
}

/// The new committed offsets of an empty group by the body's strategy.
async fn plan_reset(
    ctx: &Context,
    client: &Client,
    group: &str,
    body: &Reset,
    strategy: Strategy,
) -> Result<Vec<PlannedOffset>, OpError> {
    let (d, committed) = empty_group(ctx, client, group).await?;
    if d.group_type.as_deref() == Some("share") {
        return Err(OpError::bad_input(
            "not supported for share groups",
            format!(
                "{group} is a share group (KIP-932): its start offsets are set with AlterShareGroupOffsets, which ballast does not send; kafka-share-groups.sh --reset-offsets does"
            ),
        ));
    }
    let wanted = scope(ctx, client, body, &committed).await?;
    let tps: Vec<TopicPartition> = wanted.iter().map(|(tp, _)| tp.clone()).collect();
    let earliest = offsets_at(ctx, client, &tps, OffsetSpec::Earliest).await?;
    let latest = offsets_at(ctx, client, &tps, OffsetSpec::Latest).await?;
    let at_time = match strategy {
        Strategy::Timestamp(ms) => offsets_at(ctx, client, &tps, OffsetSpec::Timestamp(ms)).await?,
        _ => BTreeMap::new(),
    };
    let committed_by: BTreeMap<TopicPartition, i64> = committed
        .iter()
        .filter_map(|c| Some((TopicPartition::new(c.topic.clone(), c.partition), c.offset?)))
        .collect();
    plan(
        strategy,
        &wanted,
        &committed_by,
        &earliest,
        &latest,
        &at_time,
    )
}

/// Commits the planned offsets: the audit before and after of the partitions committed (status
/// 207 when some were not); refused when none was.
async fn commit_reset(
    ctx: &Context,
    client: &Client,
    group: &str,
    mut planned: Vec<PlannedOffset>,
) -> Result<Done<Vec<PlannedOffset>>, NotDone<OpError>> {
    let commits: Vec<(TopicPartition, i64)> = planned
        .iter()
        .map(|p| {
            (
                TopicPartition::new(p.topic.clone(), p.partition),
                p.new_offset,
            )
        })
        .collect();
    let results = match client.commit_offsets(group, &commits).await {
        Ok(r) => r,
        Err(e) => {
            let error = change_failed(&ctx.kafka, e);
            let details = format!(
                "committing the offsets failed: {}: {}",
                error.error, error.details
            );
            return Err(NotDone::Failed {
                error,
                before: None,
                details,
            });
        }
    };
    for (p, r) in planned.iter_mut().zip(&results) {
        p.error = r.error.as_ref().map(|e| e.to_string());
    }
    if let Some(e) = results
        .iter()
        .filter_map(|r| r.error.as_ref())
        .next()
        .filter(|_| results.iter().all(|r| r.error.is_some()))
    {
        // Nothing was committed: nothing changed and nothing is audited.
        return Err(NotDone::Refused(item_failed(
            &format!("committing offsets of {group}"),
            e,
        )));
    }
    let done = planned.iter().filter(|p| p.error.is_none());
    let before = json!({
        "offsets": offsets_json(done.clone().filter_map(|p| {
            Some((p.topic.clone(), p.partition, p.current_offset?))
        }))
    });
    let after = json!({
        "offsets": offsets_json(done.map(|p| (p.topic.clone(), p.partition, p.new_offset)))
    });
    let partial = planned.iter().any(|p| p.error.is_some());
    let mut out = Done::new(planned, Some(before), Some(after));
    if partial {
        out.status = 207;
        out.details = Some("some partitions were not committed; see the response".into());
    }
    Ok(out)
}

/// The operation `delete_consumer_group`: deletes an empty group with its committed offsets
/// (kept in the audit event `consumer_groups.delete`).
pub async fn delete_consumer_group(
    ctx: &Context,
    actor: &Actor,
    group: String,
) -> Result<DeleteResult, OpError> {
    check_name("group", &group)?;
    let client = ctx.kafka.client().await?;
    let event = actor.event(ctx.clock.now_ms(), "consumer_groups.delete", group.clone());
    let (offsets, recorded) = ctx
        .pipeline
        .run([Resource::Group(group.clone())], event, || async {
            let (d, committed) = empty_group(ctx, &client, &group)
                .await
                .map_err(NotDone::Refused)?;
            let before = json!({
                "state": d.state,
                "offsets": offsets_json(committed.iter().filter_map(|c| {
                    Some((c.topic.clone(), c.partition, c.offset?))
                })),
            });
            let results = client
                .delete_groups(std::slice::from_ref(&group))
                .await
                .map_err(|e| NotDone::Refused(change_failed(&ctx.kafka, e)))?;
            if let Some(e) = results.iter().find_map(|r| r.error.as_ref()) {
                return Err(NotDone::Refused(item_failed(
                    &format!("deleting consumer group {group}"),
                    e,
                )));
            }
            Ok(Done::new(committed.len(), Some(before), None))
        })
        .await?;
    Ok(DeleteResult {
        group_id: group,
        deleted: true,
        offsets,
        audit: Audited::from(recorded),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn body(v: Value) -> Reset {
        serde_json::from_value(v).unwrap()
    }

    fn tp(p: i32) -> TopicPartition {
        TopicPartition::new("t", p)
    }

    fn bounds(v: &[(i32, i64)]) -> BTreeMap<TopicPartition, Option<i64>> {
        v.iter().map(|(p, o)| (tp(*p), Some(*o))).collect()
    }

    #[test]
    fn each_strategy_takes_exactly_its_own_fields() {
        assert_eq!(
            strategy(&body(json!({"strategy": "earliest"}))).unwrap(),
            Strategy::Earliest
        );
        assert_eq!(
            strategy(&body(
                json!({"strategy": "timestamp", "timestamp": "1970-01-01T00:00:01Z"})
            ))
            .unwrap(),
            Strategy::Timestamp(1000)
        );
        assert_eq!(
            strategy(&body(json!({"strategy": "shift", "shiftBy": -3}))).unwrap(),
            Strategy::Shift(-3)
        );
        for bad in [
            json!({"strategy": "sideways"}),
            json!({"strategy": "shift"}),
            json!({"strategy": "timestamp"}),
            json!({"strategy": "timestamp", "timestamp": "noon"}),
            json!({"strategy": "earliest", "shiftBy": 1}),
            json!({"strategy": "latest", "partitions": [0]}),
            json!({"strategy": "offsets", "topic": "t", "offsets": []}),
        ] {
            assert!(strategy(&body(bad.clone())).is_err(), "{bad}");
        }
    }

    #[test]
    fn a_shift_past_either_end_of_the_log_is_clamped_and_marked() {
        let wanted = vec![(tp(0), None), (tp(1), None)];
        let committed = BTreeMap::from([(tp(0), 10), (tp(1), 95)]);
        let low = bounds(&[(0, 5), (1, 5)]);
        let high = bounds(&[(0, 100), (1, 100)]);
        let back = plan(
            Strategy::Shift(-20),
            &wanted,
            &committed,
            &low,
            &high,
            &BTreeMap::new(),
        )
        .unwrap();
        assert_eq!((back[0].new_offset, back[0].clamped), (5, true));
        assert_eq!((back[1].new_offset, back[1].clamped), (75, false));
        let ahead = plan(
            Strategy::Shift(10),
            &wanted,
            &committed,
            &low,
            &high,
            &BTreeMap::new(),
        )
        .unwrap();
        assert_eq!((ahead[1].new_offset, ahead[1].clamped), (100, true));
        assert_eq!(ahead[1].lag_after, 0);
    }

    #[test]
    fn explicit_offsets_outside_the_log_and_shifts_without_a_commit_are_refused() {
        let low = bounds(&[(0, 5)]);
        let high = bounds(&[(0, 100)]);
        let none = BTreeMap::new();
        let times = BTreeMap::new();
        let planned = |s: Strategy, explicit: Option<i64>| {
            plan(s, &[(tp(0), explicit)], &none, &low, &high, &times)
        };
        assert!(planned(Strategy::Offsets, Some(101)).is_err());
        assert!(planned(Strategy::Offsets, Some(4)).is_err());
        assert!(planned(Strategy::Shift(1), None).is_err());
        let at = planned(Strategy::Offsets, Some(50)).unwrap();
        assert_eq!(at[0].new_offset, 50);
        let after_last = planned(Strategy::Timestamp(9), None).unwrap();
        assert_eq!(
            after_last[0].new_offset, 100,
            "no record after the time: the log end"
        );
    }
}
