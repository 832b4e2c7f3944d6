//! Consumer groups: resetting committed offsets (with a dry run) and deleting a group.
//!
//! Both need the group to be empty: while it has active members the cluster would refuse (or the
//! members would overwrite the new offsets at their next commit), so the request is refused with
//! a 409 before anything is sent. Neither is revertible from the audit log: the events keep the
//! offsets before and after so an operator can put them back by hand.

use std::collections::{BTreeMap, BTreeSet};

use axum::extract::State;
use axum::http::StatusCode;
use ballast_kafka::{Client, CommittedOffset, GroupDescription, OffsetSpec, TopicPartition};
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use super::{check_name, check_topic, fail, item_fail};
use crate::audit::{Actor, Audited};
use crate::extract::{parse_instant_ms, Json, Path};
use crate::{ApiError, ApiOk, ApiResult, AppState};
use ballast_ops::{Done, NotDone, Resource};

/// Partitions one reset may name.
const MAX_PARTITIONS: usize = 10_000;

fn strategy_schema() -> utoipa::openapi::Object {
    crate::openapi::string_enum(["earliest", "latest", "timestamp", "shift", "offsets"])
}

#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ResetBody {
    /// `earliest`, `latest`, `timestamp`, `shift` or `offsets`.
    #[schema(schema_with = strategy_schema)]
    pub(crate) strategy: String,
    /// Only this topic (all its partitions, or `partitions`); default: every partition the group
    /// has committed offsets for.
    pub(crate) topic: Option<String>,
    pub(crate) partitions: Option<Vec<i32>>,
    /// For `timestamp`: Unix ms or RFC 3339.
    #[schema(value_type = Option<String>)]
    pub(crate) timestamp: Option<Value>,
    /// For `shift`: added to the committed offset (negative moves back).
    pub(crate) shift_by: Option<i64>,
    /// For `offsets`: the exact offsets.
    pub(crate) offsets: Option<Vec<OffsetEntry>>,
    /// Plan only: answer the offsets it would commit, change nothing, audit nothing.
    #[serde(default)]
    pub(crate) dry_run: bool,
}

#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct OffsetEntry {
    pub(crate) topic: String,
    pub(crate) partition: i32,
    pub(crate) offset: i64,
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
    topic: String,
    partition: i32,
    /// The committed offset before (null: none).
    current_offset: Option<i64>,
    new_offset: i64,
    earliest_offset: i64,
    latest_offset: i64,
    /// `latestOffset - newOffset`.
    lag_after: i64,
    /// A shift went past the earliest or latest offset and was held there.
    clamped: bool,
    /// The cluster refused this partition's commit.
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<String>,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ResetResult {
    group_id: String,
    strategy: &'static str,
    dry_run: bool,
    /// Whether offsets were committed (false for a dry run).
    applied: bool,
    partitions: Vec<PlannedOffset>,
    #[serde(flatten, skip_serializing_if = "Option::is_none")]
    audit: Option<Audited>,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct DeleteResult {
    group_id: String,
    deleted: bool,
    /// Committed offsets the group had (kept in the audit event).
    offsets: usize,
    #[serde(flatten)]
    audit: Audited,
}

fn invalid(details: impl Into<String>) -> ApiError {
    ApiError::bad_request("invalid request body", details)
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
fn strategy(b: &ResetBody) -> Result<Strategy, ApiError> {
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
    state: &AppState,
    client: &Client,
    group: &str,
) -> Result<(GroupDescription, Vec<CommittedOffset>), ApiError> {
    let mut described = client
        .describe_groups(&[group.to_string()])
        .await
        .map_err(|e| fail(state, e))?;
    let d = described
        .pop()
        .ok_or_else(|| ApiError::internal("cluster read failed", "no description of the group"))?;
    let unknown = || {
        ApiError::not_found(
            "unknown consumer group",
            format!("consumer group {group} does not exist"),
        )
    };
    if let Some(e) = &d.error {
        if e.name == "GROUP_ID_NOT_FOUND" {
            return Err(unknown());
        }
        return Err(item_fail(&format!("describing consumer group {group}"), e));
    }
    if !d.members.is_empty() {
        return Err(ApiError::new(
            StatusCode::CONFLICT,
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
        .map_err(|e| fail(state, e))?
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
    state: &AppState,
    client: &Client,
    body: &ResetBody,
    committed: &[CommittedOffset],
) -> Result<Vec<(TopicPartition, Option<i64>)>, ApiError> {
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
            .map_err(|e| fail(state, e))?;
        let Some(info) = metadata.topic(topic).filter(|t| t.error.is_none()) else {
            return Err(ApiError::not_found(
                "unknown topic",
                format!("topic {topic} does not exist"),
            ));
        };
        let all: BTreeSet<i32> = info.partitions.iter().map(|p| p.partition).collect();
        let chosen = partitions.unwrap_or_else(|| all.clone());
        if let Some(p) = chosen.iter().find(|p| !all.contains(p)) {
            return Err(ApiError::not_found(
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
            .map_err(|e| fail(state, e))?;
        for (tp, _) in &wanted {
            if metadata.partition(tp).is_none() {
                return Err(ApiError::not_found(
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
    state: &AppState,
    client: &Client,
    tps: &[TopicPartition],
    spec: OffsetSpec,
) -> Result<BTreeMap<TopicPartition, Option<i64>>, ApiError> {
    let listed = client
        .list_offsets(tps, spec)
        .await
        .map_err(|e| fail(state, e))?;
    let mut out = BTreeMap::new();
    for o in listed {
        if let Some(e) = &o.error {
            return Err(item_fail(&format!("{}-{}", o.topic, o.partition), e));
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
) -> Result<Vec<PlannedOffset>, ApiError> {
    wanted
        .iter()
        .map(|(tp, explicit)| {
            let name = format!("{}-{}", tp.topic, tp.partition);
            let bound = |m: &BTreeMap<TopicPartition, Option<i64>>, which: &str| {
                m.get(tp).copied().flatten().ok_or_else(|| {
                    ApiError::new(
                        StatusCode::BAD_GATEWAY,
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

#[utoipa::path(
    post,
    path = "/api/v1/consumer-groups/{group}/reset-offsets",
    tag = "consumer-groups",
    operation_id = "resetConsumerGroupOffsets",
    summary = "Reset consumer group offsets",
    description = "`earliest`, `latest`, `timestamp`, `shift` or exact `offsets`; the group must be empty. `dryRun` answers the offsets without committing.",
    params(("group" = String, Path, description = "consumer group id")),
    request_body(content = ResetBody),
    responses(
        (status = 200, description = "Reset consumer group offsets", body = ref("OffsetReset")),
        (status = 404, description = "Unknown group or topic"),
        (status = 409, description = "The group has active members"),
        (status = 502, description = "The cluster answered with an error"),
        (status = 503, description = "The cluster is unreachable"),
    )
)]
/// `POST /api/v1/consumer-groups/{group}/reset-offsets`
pub async fn reset_offsets(
    State(state): State<AppState>,
    actor: Actor,
    Path(group): Path<String>,
    Json(body): Json<ResetBody>,
) -> ApiResult<ResetResult> {
    reset_consumer_group_offsets(&state, &actor, group, body)
        .await
        .map(ApiOk)
}

/// The operation `reset_consumer_group_offsets`: plans the new committed offsets of an empty
/// group by the body's strategy and commits them (a dry run only plans); audited
/// `consumer_groups.reset_offsets`.
pub(crate) async fn reset_consumer_group_offsets(
    state: &AppState,
    actor: &Actor,
    group: String,
    body: ResetBody,
) -> Result<ResetResult, ApiError> {
    check_name("group", &group)?;
    let strategy = strategy(&body)?;
    let client = state.kafka.client().await?;
    if body.dry_run {
        let planned = plan_reset(state, &client, &group, &body, strategy).await?;
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
        state.clock.now_ms(),
        "consumer_groups.reset_offsets",
        group.clone(),
    );
    event.summary = json!({
        "strategy": strategy.name(),
        "timestamp": match strategy { Strategy::Timestamp(ms) => Some(ms), _ => None },
        "shiftBy": match strategy { Strategy::Shift(n) => Some(n), _ => None },
        "topic": body.topic,
    });
    let (planned, recorded) = state
        .pipeline
        .run([Resource::Group(group.clone())], event, || async {
            let planned = plan_reset(state, &client, &group, &body, strategy)
                .await
                .map_err(NotDone::Refused)?;
            commit_reset(state, &client, &group, planned).await
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
    state: &AppState,
    client: &Client,
    group: &str,
    body: &ResetBody,
    strategy: Strategy,
) -> Result<Vec<PlannedOffset>, ApiError> {
    let (_, committed) = empty_group(state, client, group).await?;
    let wanted = scope(state, client, body, &committed).await?;
    let tps: Vec<TopicPartition> = wanted.iter().map(|(tp, _)| tp.clone()).collect();
    let earliest = offsets_at(state, client, &tps, OffsetSpec::Earliest).await?;
    let latest = offsets_at(state, client, &tps, OffsetSpec::Latest).await?;
    let at_time = match strategy {
        Strategy::Timestamp(ms) => {
            offsets_at(state, client, &tps, OffsetSpec::Timestamp(ms)).await?
        }
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
    state: &AppState,
    client: &Client,
    group: &str,
    mut planned: Vec<PlannedOffset>,
) -> Result<Done<Vec<PlannedOffset>>, NotDone<ApiError>> {
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
            let error = fail(state, e);
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
        return Err(NotDone::Refused(item_fail(
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

#[utoipa::path(
    delete,
    path = "/api/v1/consumer-groups/{group}",
    tag = "consumer-groups",
    operation_id = "deleteConsumerGroup",
    summary = "Delete a consumer group",
    description = "The group must be empty. Audited.",
    params(("group" = String, Path, description = "consumer group id")),
    responses(
        (status = 200, description = "Delete a consumer group", body = ref("GroupDeleted")),
        (status = 404, description = "Unknown group"),
        (status = 409, description = "The group has active members"),
        (status = 502, description = "The cluster answered with an error"),
        (status = 503, description = "The cluster is unreachable"),
    )
)]
/// `DELETE /api/v1/consumer-groups/{group}`: deletes an empty group with its committed offsets.
pub async fn delete(
    State(state): State<AppState>,
    actor: Actor,
    Path(group): Path<String>,
) -> ApiResult<DeleteResult> {
    delete_consumer_group(&state, &actor, group)
        .await
        .map(ApiOk)
}

/// The operation `delete_consumer_group`: deletes an empty group with its committed offsets
/// (kept in the audit event `consumer_groups.delete`).
pub(crate) async fn delete_consumer_group(
    state: &AppState,
    actor: &Actor,
    group: String,
) -> Result<DeleteResult, ApiError> {
    check_name("group", &group)?;
    let client = state.kafka.client().await?;
    let event = actor.event(
        state.clock.now_ms(),
        "consumer_groups.delete",
        group.clone(),
    );
    let (offsets, recorded) = state
        .pipeline
        .run([Resource::Group(group.clone())], event, || async {
            let (d, committed) = empty_group(state, &client, &group)
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
                .map_err(|e| NotDone::Refused(fail(state, e)))?;
            if let Some(e) = results.iter().find_map(|r| r.error.as_ref()) {
                return Err(NotDone::Refused(item_fail(
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

    fn body(v: Value) -> ResetBody {
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
