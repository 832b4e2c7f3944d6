//! Consumer-group reads, asked of the cluster live: the list, a summary, one group with its
//! members and offsets, and its lag per partition. The list and the summary are made from one
//! read of every group, shared in flight and served again while fresh
//! ([`crate::flight::Recent`], held by the [`Context`]); the summary without parameters is
//! rendered once per read.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::{Arc, OnceLock};

use ballast_kafka::{
    BrokerId, Client, CommittedOffset, GroupDescription, GroupListing, OffsetSpec, TopicPartition,
    TopicPartitions,
};
use serde::{Deserialize, Serialize};

use crate::cluster::read_failed;
use crate::context::Context;
use crate::error::OpError;
use crate::page::row_limit;

pub mod read;
pub use read::{GroupRow, GroupsRead};

/// An optional text filter; an empty value is no filter.
fn non_empty(value: Option<String>) -> Option<String> {
    value.filter(|v| !v.is_empty())
}

/// `GET /consumer-groups` rows: default and maximum (as the MCP `list_consumer_groups`).
const LIST_DEFAULT: usize = 100;
const LIST_MAX: usize = 500;
/// `GET /consumer-groups/summary` `topLagging` rows.
const TOP_DEFAULT: usize = 10;
const TOP_MAX: usize = 100;

// ---------------------------------------------------------------------------------------------
// shapes

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PartitionLag {
    topic: String,
    partition: i32,
    /// None when the group has no committed offset for the partition (only assigned), and
    /// for a share group, which commits none.
    committed_offset: Option<i64>,
    /// A share group's share-partition start offset (KIP-932): its backlog is counted from it.
    #[serde(skip_serializing_if = "Option::is_none")]
    start_offset: Option<i64>,
    /// The high watermark; None when it could not be read.
    log_end_offset: Option<i64>,
    /// `logEndOffset - committedOffset` (a share group: `- startOffset`), never below 0; None
    /// when either is unknown.
    lag: Option<i64>,
    /// The member the partition is assigned to, if any.
    member_id: Option<String>,
    client_id: Option<String>,
    host: Option<String>,
    /// The commit's metadata string, when one was given.
    #[serde(skip_serializing_if = "Option::is_none")]
    metadata: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<String>,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TopicLag {
    topic: String,
    partitions: usize,
    total_lag: i64,
    max_lag: i64,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct GroupList {
    count: usize,
    total: usize,
    truncated: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    hint: Option<String>,
    groups: Vec<GroupRow>,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Summary {
    total_groups: usize,
    by_state: BTreeMap<String, usize>,
    by_protocol_type: BTreeMap<String, usize>,
    total_members: usize,
    total_lag: i64,
    /// Groups with a lag above 0.
    groups_with_lag: usize,
    /// Groups whose lag could not be read (their error is in `topLagging` if they rank).
    groups_without_lag: usize,
    /// The groups with the largest lag, largest first (then group id).
    top_lagging: Vec<GroupRow>,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Member {
    member_id: String,
    group_instance_id: Option<String>,
    client_id: String,
    host: String,
    /// The partitions the member owns now.
    assignment: Vec<TopicPartitions>,
    /// The partitions the coordinator wants it to own (consumer groups, KIP-848); absent where
    /// the protocol has no target (classic and share groups).
    #[serde(skip_serializing_if = "Option::is_none")]
    target_assignment: Option<Vec<TopicPartitions>>,
    /// The member's epoch (consumer and share groups); absent for a classic group.
    #[serde(skip_serializing_if = "Option::is_none")]
    member_epoch: Option<i32>,
    /// Partitions assigned to this member.
    partitions: usize,
    /// Sum of the lag of the member's partitions.
    lag: i64,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Detail {
    group_id: String,
    state: String,
    /// `classic`, `consumer` (KIP-848), `share` (KIP-932): the API that described the group.
    group_type: Option<String>,
    /// The group epoch and the target assignment's epoch (consumer and share groups).
    #[serde(skip_serializing_if = "Option::is_none")]
    group_epoch: Option<i32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    assignment_epoch: Option<i32>,
    protocol_type: String,
    /// The assignor (e.g. `range`).
    protocol: String,
    coordinator: Option<BrokerId>,
    members: Vec<Member>,
    total_lag: i64,
    topics: Vec<TopicLag>,
    /// Every partition with a committed offset or an assignment, by topic and partition.
    offsets: Vec<PartitionLag>,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Lag {
    group_id: String,
    state: String,
    topic: Option<String>,
    total_lag: i64,
    max_lag: i64,
    partition_count: usize,
    topics: Vec<TopicLag>,
    partitions: Vec<PartitionLag>,
}

// ---------------------------------------------------------------------------------------------
// queries

#[derive(Debug, Default, Deserialize, utoipa::IntoParams)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct ListQuery {
    /// Only groups in this state (case-insensitive), e.g. `Stable`, `Empty`.
    pub state: Option<String>,
    /// Only groups whose id contains this (case-insensitive).
    pub search: Option<String>,
    /// Rows, default 100, at most 500.
    pub limit: Option<u32>,
}

impl ListQuery {
    /// The default page: no filter, the default number of rows (made once per read).
    fn is_default(&self) -> bool {
        self.state.as_deref().is_none_or(str::is_empty)
            && self.search.as_deref().is_none_or(str::is_empty)
            && row_limit(self.limit, LIST_DEFAULT, LIST_MAX) == LIST_DEFAULT
    }
}

#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct SummaryQuery {
    /// Rows of the lists, default and maximum as the list.
    pub limit: Option<u32>,
}

#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct DetailQuery {}

#[derive(Debug, Default, Deserialize, utoipa::IntoParams)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct LagQuery {
    /// Only this topic.
    pub topic: Option<String>,
    /// `lag` (largest first, the default) or `partition` (topic, partition).
    #[param(schema_with = lag_sort_schema)]
    pub sort: Option<String>,
}

fn lag_sort_schema() -> utoipa::openapi::Object {
    crate::schema::string_enum(["", "lag", "partition"])
}

// ---------------------------------------------------------------------------------------------
// reading

/// Offsets of one group joined with log-end offsets and its members' assignments.
fn join_lag(
    description: Option<&GroupDescription>,
    committed: &[CommittedOffset],
    ends: &HashMap<(String, i32), Result<i64, String>>,
) -> Vec<PartitionLag> {
    let mut owners: BTreeMap<(String, i32), (String, String, String)> = BTreeMap::new();
    for m in description
        .map(|d| d.members.as_slice())
        .unwrap_or_default()
    {
        for tps in &m.assignment {
            for p in &tps.partitions {
                owners.insert(
                    (tps.topic.clone(), *p),
                    (m.member_id.clone(), m.client_id.clone(), m.host.clone()),
                );
            }
        }
    }
    let mut rows: BTreeMap<(String, i32), PartitionLag> = BTreeMap::new();
    let share = description.and_then(|d| d.group_type.as_deref()) == Some("share");
    let row = |topic: &str, partition: i32| PartitionLag {
        topic: topic.to_string(),
        partition,
        committed_offset: None,
        start_offset: None,
        log_end_offset: None,
        lag: None,
        member_id: None,
        client_id: None,
        host: None,
        metadata: None,
        error: None,
    };
    for c in committed
        .iter()
        .filter(|c| c.offset.is_some() || c.error.is_some())
    {
        let mut r = row(&c.topic, c.partition);
        if share {
            r.start_offset = c.offset;
        } else {
            r.committed_offset = c.offset;
        }
        r.metadata = c.metadata.clone().filter(|m| !m.is_empty());
        r.error = c.error.as_ref().map(|e| e.to_string());
        rows.insert((c.topic.clone(), c.partition), r);
    }
    for key in owners.keys() {
        rows.entry(key.clone())
            .or_insert_with(|| row(&key.0, key.1));
    }
    for (key, r) in rows.iter_mut() {
        if let Some((member, client, host)) = owners.get(key) {
            r.member_id = Some(member.clone());
            r.client_id = Some(client.clone());
            r.host = Some(host.clone());
        }
        match ends.get(key) {
            Some(Ok(end)) => r.log_end_offset = Some(*end),
            Some(Err(e)) if r.error.is_none() => r.error = Some(e.clone()),
            _ => {}
        }
        if let (Some(end), Some(from)) = (r.log_end_offset, r.committed_offset.or(r.start_offset)) {
            r.lag = Some((end - from).max(0));
        }
    }
    rows.into_values().collect()
}

/// Log-end offsets of `partitions` (errors per partition).
async fn log_ends(
    client: &Client,
    partitions: &BTreeSet<(&str, i32)>,
) -> ballast_kafka::Result<HashMap<(String, i32), Result<i64, String>>> {
    if partitions.is_empty() {
        return Ok(HashMap::new());
    }
    let tps: Vec<TopicPartition> = partitions
        .iter()
        .map(|(t, p)| TopicPartition::new(t.to_string(), *p))
        .collect();
    let listed = client.list_offsets(&tps, OffsetSpec::Latest).await?;
    Ok(listed
        .into_iter()
        .map(|o| {
            let value = match (o.offset, o.error) {
                (_, Some(e)) => Err(e.to_string()),
                (Some(offset), None) => Ok(offset),
                (None, None) => Err("no log-end offset".to_string()),
            };
            ((o.topic, o.partition), value)
        })
        .collect())
}

/// Groups described, their committed offsets (or why they could not be read), one entry per
/// group in order, and the log-end offset of every partition they commit or are assigned.
struct OffsetsRead {
    descriptions: Vec<GroupDescription>,
    committed: Vec<Result<Vec<CommittedOffset>, String>>,
    ends: HashMap<(String, i32), Result<i64, String>>,
}

async fn read_offsets(
    ctx: &Context,
    client: &Client,
    groups: &[String],
) -> Result<OffsetsRead, OpError> {
    if groups.is_empty() {
        return Ok(OffsetsRead {
            descriptions: Vec::new(),
            committed: Vec::new(),
            ends: HashMap::new(),
        });
    }
    let descriptions = client
        .describe_groups(groups)
        .await
        .map_err(|e| read_failed(&ctx.kafka, e))?;
    // A share group commits no offsets: its backlog starts at its share-partition start
    // offsets (DescribeShareGroupOffsets).
    let (shares, others): (Vec<&GroupDescription>, Vec<&GroupDescription>) = descriptions
        .iter()
        .partition(|d| d.group_type.as_deref() == Some("share"));
    let shares: Vec<String> = shares.iter().map(|d| d.group_id.clone()).collect();
    let others: Vec<String> = others.iter().map(|d| d.group_id.clone()).collect();
    // Many groups a request to every coordinator at once (OffsetFetch v8+, Kafka 3.0+).
    let mut fetched: HashMap<String, ballast_kafka::GroupOffsets> = client
        .committed_offsets_of_groups(&others)
        .await
        .map_err(|e| read_failed(&ctx.kafka, e))?
        .into_iter()
        .map(|o| (o.group_id.clone(), o))
        .collect();
    if !shares.is_empty() {
        fetched.extend(
            client
                .share_group_offsets(&shares)
                .await
                .map_err(|e| read_failed(&ctx.kafka, e))?
                .into_iter()
                .map(|o| (o.group_id.clone(), o)),
        );
    }
    let committed: Vec<Result<Vec<CommittedOffset>, String>> = descriptions
        .iter()
        .map(|d| match fetched.remove(&d.group_id) {
            Some(o) => match o.error {
                Some(e) => Err(e.to_string()),
                None => Ok(o.offsets),
            },
            None => Err("no committed offsets read".to_string()),
        })
        .collect();
    let ends = {
        // Borrowed names: a read of every group names tens of thousands of partitions.
        let mut wanted: BTreeSet<(&str, i32)> = BTreeSet::new();
        for (d, c) in descriptions.iter().zip(&committed) {
            if let Ok(offsets) = c {
                wanted.extend(offsets.iter().map(|o| (o.topic.as_str(), o.partition)));
            }
            for m in &d.members {
                for tps in &m.assignment {
                    wanted.extend(tps.partitions.iter().map(|p| (tps.topic.as_str(), *p)));
                }
            }
        }
        log_ends(client, &wanted)
            .await
            .map_err(|e| read_failed(&ctx.kafka, e))?
    };
    Ok(OffsetsRead {
        descriptions,
        committed,
        ends,
    })
}

/// Describes `groups` and reads their offsets and lag: one entry per group, in order, with the
/// committed-offset error as text when the offsets could not be read.
async fn describe_with_lag(
    ctx: &Context,
    client: &Client,
    groups: &[String],
) -> Result<Vec<(GroupDescription, Result<Vec<PartitionLag>, String>)>, OpError> {
    let read = read_offsets(ctx, client, groups).await?;
    let ends = read.ends;
    Ok(read
        .descriptions
        .into_iter()
        .zip(read.committed)
        .map(|(d, c)| {
            let lag = c.map(|offsets| join_lag(Some(&d), &offsets, &ends));
            (d, lag)
        })
        .collect())
}

/// A group's topics (committed or assigned, by name) and total lag: what `join_lag`'s rows give
/// the list, counted without a row per partition (a read of every group joins tens of thousands
/// of offsets, several strings each). The same sums as `total_lag` of `join_lag`'s rows, which
/// key a partition once (a group's OffsetFetch answer names each partition once).
fn group_totals(
    d: &GroupDescription,
    committed: &[CommittedOffset],
    ends: &HashMap<(String, i32), Result<i64, String>>,
) -> (Vec<String>, i64) {
    let mut topics: BTreeSet<&str> = BTreeSet::new();
    let mut total = 0;
    // One key, refilled: a look-up allocates nothing.
    let mut key = (String::new(), 0);
    for c in committed
        .iter()
        .filter(|c| c.offset.is_some() || c.error.is_some())
    {
        topics.insert(&c.topic);
        let Some(offset) = c.offset else { continue };
        key.0.clear();
        key.0.push_str(&c.topic);
        key.1 = c.partition;
        if let Some(Ok(end)) = ends.get(&key) {
            total += (end - offset).max(0);
        }
    }
    for m in &d.members {
        for tps in m.assignment.iter().filter(|t| !t.partitions.is_empty()) {
            topics.insert(&tps.topic);
        }
    }
    (topics.into_iter().map(str::to_string).collect(), total)
}

fn total_lag(rows: &[PartitionLag]) -> i64 {
    rows.iter().filter_map(|r| r.lag).sum()
}

fn topics_of(rows: &[PartitionLag]) -> Vec<TopicLag> {
    let mut by_topic: BTreeMap<&str, TopicLag> = BTreeMap::new();
    for r in rows {
        let t = by_topic.entry(&r.topic).or_insert_with(|| TopicLag {
            topic: r.topic.clone(),
            partitions: 0,
            total_lag: 0,
            max_lag: 0,
        });
        t.partitions += 1;
        let lag = r.lag.unwrap_or(0);
        t.total_lag += lag;
        t.max_lag = t.max_lag.max(lag);
    }
    by_topic.into_values().collect()
}

fn row_of(
    listing: Option<&GroupListing>,
    d: &GroupDescription,
    totals: Result<(Vec<String>, i64), String>,
) -> GroupRow {
    let state = if d.state.is_empty() {
        listing.and_then(|l| l.state.clone()).unwrap_or_default()
    } else {
        d.state.clone()
    };
    let protocol_type = if d.protocol_type.is_empty() {
        listing.map(|l| l.protocol_type.clone()).unwrap_or_default()
    } else {
        d.protocol_type.clone()
    };
    let (topics, total_lag, lag_error) = match totals {
        Ok((topics, total)) => (topics, Some(total), None),
        Err(e) => (Vec::new(), None, Some(e)),
    };
    GroupRow {
        group_id: d.group_id.clone(),
        state,
        protocol_type,
        group_type: listing
            .and_then(|l| l.group_type.clone())
            .or_else(|| d.group_type.clone()),
        coordinator: d.coordinator.or(listing.map(|l| l.coordinator)),
        members: d.error.is_none().then_some(d.members.len()),
        topics,
        total_lag,
        error: d.error.as_ref().map(|e| e.to_string()).or(lag_error),
    }
}

/// Describes one group; an unknown group (GROUP_ID_NOT_FOUND, or `Dead` with nothing) is a 404.
async fn describe_one(
    ctx: &Context,
    client: &Client,
    group: &str,
) -> Result<(GroupDescription, Vec<PartitionLag>), OpError> {
    let mut described = describe_with_lag(ctx, client, &[group.to_string()]).await?;
    let Some((d, lag)) = described.pop() else {
        return Err(OpError::internal(
            "cluster read failed",
            "no description of the group",
        ));
    };
    let not_found = || {
        OpError::not_found(
            "unknown consumer group",
            format!("consumer group {group} does not exist"),
        )
    };
    if let Some(e) = &d.error {
        if e.name == "GROUP_ID_NOT_FOUND" {
            return Err(not_found());
        }
        if e.name == "UNSUPPORTED_VERSION" {
            // The group exists (its coordinator lists it) but no API offered describes it.
            return Err(OpError::cluster(
                "group cannot be described",
                e.message.clone().unwrap_or_else(|| e.to_string()),
            ));
        }
        return Err(OpError::cluster(
            "cluster error",
            format!("describing consumer group {group} failed: {e}"),
        ));
    }
    let lag = lag.map_err(|e| OpError::cluster("cluster error", e))?;
    if d.state.eq_ignore_ascii_case("dead") && d.members.is_empty() && lag.is_empty() {
        return Err(not_found());
    }
    Ok((d, lag))
}

// ---------------------------------------------------------------------------------------------
// handlers

/// The answer of `list_consumer_groups`: the page as JSON text, and for the default page the
/// read it was made from.
pub struct GroupPage {
    pub text: Arc<String>,
    default_of: Option<Arc<GroupsRead>>,
}

impl GroupPage {
    /// The page shaped by `shape` for a door that takes values (MCP): the default page's shape
    /// is made once per read of every group and shared (a call copies it, a third of the work of
    /// parsing its text); another page is shaped for its call.
    pub fn shaped<E>(
        self,
        shape: impl FnOnce(Arc<String>) -> Result<serde_json::Value, E>,
    ) -> Result<Arc<crate::kept::Kept>, E> {
        use crate::kept::Kept;
        let Some(read) = self.default_of else {
            return shape(self.text).map(|v| Arc::new(Kept::new(v)));
        };
        if let Some(kept) = read.list_shaped.get() {
            return Ok(kept.clone());
        }
        let shaped = shape(self.text)?;
        Ok(read
            .list_shaped
            .get_or_init(|| Arc::new(Kept::new(shaped)))
            .clone())
    }
}

/// The operation `list_consumer_groups`: groups by id, filtered by state and id text, with
/// members, coordinator and total lag, as JSON text. The default page (no filter, the default
/// number of rows) is made once per read of every group and shared by every request it answers.
pub async fn list_consumer_groups(ctx: &Context, q: ListQuery) -> Result<GroupPage, OpError> {
    let read = every_group(ctx).await?;
    if q.is_default() {
        let text = read
            .list
            .get_or_init(|| Arc::new(to_text(&list_of(&read, q))))
            .clone();
        return Ok(GroupPage {
            text,
            default_of: Some(read),
        });
    }
    Ok(GroupPage {
        text: Arc::new(to_text(&list_of(&read, q))),
        default_of: None,
    })
}

/// The last read of every group while it is fresh (`BALLAST_LIVE_READ_MAX_AGE`, no change of
/// this process since), else a new one, shared by every request that waits for it
/// (`crate::flight::Recent`).
async fn every_group(ctx: &Context) -> Result<Arc<GroupsRead>, OpError> {
    let own = ctx.clone();
    let max_age = ctx.config.live_read_max_age.as_millis() as i64;
    ctx.flights
        .groups
        .get(
            ctx.clock.now_ms(),
            ctx.pipeline.changes(),
            max_age,
            // Off the runtime: its decoding and filing is CPU work of tens of milliseconds at a
            // time (crate::flight::off_the_runtime).
            crate::flight::off_the_runtime(async move { read_every_group(&own).await }),
        )
        .await
}

async fn read_every_group(ctx: &Context) -> Result<GroupsRead, OpError> {
    let client = ctx.kafka.client().await?;
    let mut listings = client
        .list_groups()
        .await
        .map_err(|e| read_failed(&ctx.kafka, e))?;
    listings.sort_by(|a, b| a.group_id.cmp(&b.group_id));
    listings.dedup_by(|a, b| a.group_id == b.group_id);
    let states_known = listings.iter().all(|l| l.state.is_some());
    let ids: Vec<String> = listings.iter().map(|l| l.group_id.clone()).collect();
    let read = read_offsets(ctx, &client, &ids).await?;
    // Joining tens of thousands of offsets is CPU work of tens of milliseconds: on the blocking
    // pool, so it never holds a runtime thread (and the requests, probes included, queued on it).
    tokio::task::spawn_blocking(move || every_group_of(&listings, states_known, read))
        .await
        .map_err(|e| OpError::internal("consumer group read failed", e.to_string()))
}

/// The rows of every group read (by group id) and the states ListGroups gave them.
fn every_group_of(listings: &[GroupListing], states_known: bool, read: OffsetsRead) -> GroupsRead {
    let by_id: HashMap<&str, &GroupListing> =
        listings.iter().map(|l| (l.group_id.as_str(), l)).collect();
    let mut rows: Vec<(GroupRow, Option<String>)> = read
        .descriptions
        .iter()
        .zip(read.committed)
        .map(|(d, c)| {
            let listing = by_id.get(d.group_id.as_str()).copied();
            let totals = c.map(|offsets| group_totals(d, &offsets, &read.ends));
            (
                row_of(listing, d, totals),
                listing.and_then(|l| l.state.clone()),
            )
        })
        .collect();
    rows.sort_by(|a, b| a.0.group_id.cmp(&b.0.group_id));
    let (rows, listed_states) = rows.into_iter().unzip();
    GroupsRead {
        rows,
        listed_states,
        states_known,
        summary: OnceLock::new(),
        list: OnceLock::new(),
        list_shaped: OnceLock::new(),
    }
}

/// A page of the list: groups by id, filtered by id text and by state (the listing's when every
/// group had one, else the description's).
fn list_of(read: &GroupsRead, q: ListQuery) -> GroupList {
    let limit = row_limit(q.limit, LIST_DEFAULT, LIST_MAX);
    let state_filter = non_empty(q.state).map(|s| s.to_lowercase());
    let search = non_empty(q.search).map(|s| s.to_lowercase());
    let matching: Vec<&GroupRow> = read
        .rows
        .iter()
        .zip(&read.listed_states)
        .filter(|(r, _)| {
            search
                .as_ref()
                .is_none_or(|s| r.group_id.to_lowercase().contains(s))
        })
        .filter(|(r, listed)| {
            let Some(want) = &state_filter else {
                return true;
            };
            let seen = if read.states_known {
                listed.as_deref().unwrap_or_default()
            } else {
                r.state.as_str()
            };
            seen.to_lowercase() == *want
        })
        .map(|(r, _)| r)
        .collect();
    let total = matching.len();
    let rows: Vec<GroupRow> = matching.into_iter().take(limit).cloned().collect();
    let truncated = total > rows.len();
    GroupList {
        count: rows.len(),
        total,
        truncated,
        hint: truncated
            .then(|| format!("narrow with state or search, or raise limit (at most {LIST_MAX})")),
        groups: rows,
    }
}

/// The operation behind `GET /api/v1/consumer-groups/summary`: counts by state and protocol
/// type, members, lag, and the groups with the largest lag, as JSON text. Without a `limit` it
/// is made once per read of every group and shared.
pub async fn get_consumer_group_summary(
    ctx: &Context,
    q: SummaryQuery,
) -> Result<Arc<String>, OpError> {
    let top = row_limit(q.limit, TOP_DEFAULT, TOP_MAX);
    let read = every_group(ctx).await?;
    if q.limit.is_none() {
        let text = read
            .summary
            .get_or_init(|| Arc::new(to_text(&summary_of(&read, top))));
        return Ok(text.clone());
    }
    Ok(Arc::new(to_text(&summary_of(&read, top))))
}

/// `value` as JSON text (`{}` if it could not be encoded, which a plain struct never fails).
fn to_text<T: Serialize>(value: &T) -> String {
    serde_json::to_string(value).unwrap_or_else(|_| "{}".into())
}

/// Counts by state and protocol type, members, lag, and the `top` groups with the largest lag.
fn summary_of(read: &GroupsRead, top: usize) -> Summary {
    let rows = &read.rows;
    let mut by_state = BTreeMap::new();
    let mut by_protocol_type = BTreeMap::new();
    for r in rows {
        *by_state.entry(r.state.clone()).or_insert(0) += 1;
        let protocol = if r.protocol_type.is_empty() {
            "(none)".to_string()
        } else {
            r.protocol_type.clone()
        };
        *by_protocol_type.entry(protocol).or_insert(0) += 1;
    }
    let summary_total_lag = rows.iter().filter_map(|r| r.total_lag).sum();
    let groups_with_lag = rows.iter().filter(|r| r.total_lag.unwrap_or(0) > 0).count();
    let groups_without_lag = rows.iter().filter(|r| r.total_lag.is_none()).count();
    let total_members = rows.iter().filter_map(|r| r.members).sum();
    let mut ranked: Vec<&GroupRow> = rows.iter().collect();
    ranked.sort_by(|a, b| {
        b.total_lag
            .unwrap_or(-1)
            .cmp(&a.total_lag.unwrap_or(-1))
            .then_with(|| a.group_id.cmp(&b.group_id))
    });
    Summary {
        total_groups: rows.len(),
        by_state,
        by_protocol_type,
        total_members,
        total_lag: summary_total_lag,
        groups_with_lag,
        groups_without_lag,
        top_lagging: ranked.into_iter().take(top).cloned().collect(),
    }
}

/// The operation `describe_consumer_group`: the group with its members, their assignments and
/// the group's offsets with lag; an unknown group is a 404.
pub async fn describe_consumer_group(ctx: &Context, group: String) -> Result<Detail, OpError> {
    let client = ctx.kafka.client().await?;
    let (d, offsets) = describe_one(ctx, &client, &group).await?;
    let members = d
        .members
        .iter()
        .map(|m| {
            let mine = |r: &&PartitionLag| r.member_id.as_deref() == Some(m.member_id.as_str());
            Member {
                member_id: m.member_id.clone(),
                group_instance_id: m.group_instance_id.clone(),
                client_id: m.client_id.clone(),
                host: m.host.clone(),
                partitions: m.assignment.iter().map(|a| a.partitions.len()).sum(),
                lag: offsets.iter().filter(mine).filter_map(|r| r.lag).sum(),
                assignment: m.assignment.clone(),
                target_assignment: m.target_assignment.clone(),
                member_epoch: m.member_epoch,
            }
        })
        .collect();
    Ok(Detail {
        group_id: d.group_id.clone(),
        state: d.state.clone(),
        group_type: d.group_type.clone(),
        group_epoch: d.group_epoch,
        assignment_epoch: d.assignment_epoch,
        protocol_type: d.protocol_type.clone(),
        protocol: d.protocol.clone(),
        coordinator: d.coordinator,
        members,
        total_lag: total_lag(&offsets),
        topics: topics_of(&offsets),
        offsets,
    })
}

/// The operation `get_consumer_group_lag`: committed offset, log end and lag per partition of
/// the group (only `topic`'s when given), largest lag first unless `sort` is `partition`.
pub async fn get_consumer_group_lag(
    ctx: &Context,
    group: String,
    q: LagQuery,
) -> Result<Lag, OpError> {
    let by_lag = match q.sort.as_deref() {
        None | Some("") | Some("lag") => true,
        Some("partition") => false,
        Some(other) => {
            return Err(OpError::bad_input(
                "invalid query",
                format!("sort: expected lag or partition, got {other:?}"),
            ))
        }
    };
    let topic = non_empty(q.topic);
    let client = ctx.kafka.client().await?;
    if let Some(t) = &topic {
        let metadata = client
            .metadata(Some(std::slice::from_ref(t)))
            .await
            .map_err(|e| read_failed(&ctx.kafka, e))?;
        if metadata.topic(t).is_none_or(|info| info.error.is_some()) {
            return Err(OpError::not_found(
                "unknown topic",
                format!("topic {t} does not exist"),
            ));
        }
    }
    let (d, mut rows) = describe_one(ctx, &client, &group).await?;
    if let Some(t) = &topic {
        rows.retain(|r| &r.topic == t);
    }
    if by_lag {
        rows.sort_by(|a, b| {
            b.lag
                .unwrap_or(-1)
                .cmp(&a.lag.unwrap_or(-1))
                .then_with(|| a.topic.cmp(&b.topic))
                .then_with(|| a.partition.cmp(&b.partition))
        });
    }
    Ok(Lag {
        group_id: d.group_id,
        state: d.state,
        topic,
        total_lag: total_lag(&rows),
        max_lag: rows.iter().filter_map(|r| r.lag).max().unwrap_or(0),
        partition_count: rows.len(),
        topics: topics_of(&rows),
        partitions: rows,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use ballast_kafka::{GroupMember, ItemError};

    fn committed(topic: &str, partition: i32, offset: Option<i64>) -> CommittedOffset {
        CommittedOffset {
            topic: topic.into(),
            partition,
            offset,
            leader_epoch: None,
            metadata: None,
            error: None,
        }
    }

    #[test]
    fn lag_joins_commits_log_ends_and_assignments() {
        let d = GroupDescription {
            group_id: "g".into(),
            state: "Stable".into(),
            protocol_type: "consumer".into(),
            protocol: "range".into(),
            members: vec![GroupMember {
                member_id: "m1".into(),
                group_instance_id: None,
                client_id: "c1".into(),
                host: "/10.0.0.1".into(),
                assignment: vec![TopicPartitions {
                    topic: "t".into(),
                    partitions: vec![0, 2],
                }],
                target_assignment: None,
                member_epoch: None,
            }],
            coordinator: Some(1),
            error: None,
            group_type: Some("classic".into()),
            group_epoch: None,
            assignment_epoch: None,
        };
        let ends: HashMap<(String, i32), Result<i64, String>> = [
            (("t".to_string(), 0), Ok(100)),
            (("t".to_string(), 1), Ok(50)),
            (("t".to_string(), 2), Ok(10)),
        ]
        .into_iter()
        .collect();
        let rows = join_lag(
            Some(&d),
            &[
                committed("t", 0, Some(90)),
                committed("t", 1, Some(60)),
                committed("t", 3, None),
            ],
            &ends,
        );
        let lags: Vec<(i32, Option<i64>, Option<&str>)> = rows
            .iter()
            .map(|r| (r.partition, r.lag, r.member_id.as_deref()))
            .collect();
        assert_eq!(
            lags,
            vec![
                (0, Some(10), Some("m1")),
                (1, Some(0), None),
                (2, None, Some("m1"))
            ],
            "a commit past the log end is lag 0; an assigned partition without commit has no lag"
        );
        assert_eq!(total_lag(&rows), 10);
    }

    /// `group_totals` counts what the list shows without a row per partition: for groups with
    /// commits past the log end, commits without an offset, commits with an error (with and
    /// without an offset), partitions whose log end could not be read or is unknown, assigned
    /// partitions without a commit and an assignment naming no partition, its topics and total
    /// lag are those of `join_lag`'s rows.
    #[test]
    fn a_groups_topics_and_total_lag_are_those_of_its_partition_rows() {
        let error = || {
            Some(ItemError {
                code: 3,
                name: "UNKNOWN_TOPIC_OR_PARTITION",
                message: None,
            })
        };
        let mut ends: HashMap<(String, i32), Result<i64, String>> = HashMap::new();
        for (i, topic) in ["a", "b", "c", "d"].into_iter().enumerate() {
            for p in 0..6 {
                let value = match (i + p as usize) % 5 {
                    0 => Err("NOT_LEADER_OR_FOLLOWER".to_string()),
                    n => Ok(100 * n as i64),
                };
                ends.insert((topic.to_string(), p), value);
            }
        }
        let member = |topics: &[(&str, Vec<i32>)]| GroupMember {
            member_id: "m".into(),
            group_instance_id: None,
            client_id: "c".into(),
            host: "/h".into(),
            assignment: topics
                .iter()
                .map(|(t, ps)| TopicPartitions {
                    topic: t.to_string(),
                    partitions: ps.clone(),
                })
                .collect(),
            target_assignment: None,
            member_epoch: None,
        };
        let mut cases = Vec::new();
        for seed in 0..40i64 {
            let mut offsets = Vec::new();
            for (i, topic) in ["a", "b", "c", "e"].into_iter().enumerate() {
                for p in 0..7 {
                    let k = seed * 7 + i as i64 * 3 + p as i64;
                    match k % 6 {
                        0 => continue,
                        1 => offsets.push(committed(topic, p, None)),
                        2 => {
                            let mut c = committed(topic, p, Some(k * 13 % 600));
                            c.error = error();
                            offsets.push(c);
                        }
                        3 => {
                            let mut c = committed(topic, p, None);
                            c.error = error();
                            offsets.push(c);
                        }
                        _ => offsets.push(committed(topic, p, Some(k * 37 % 700))),
                    }
                }
            }
            let members = match seed % 3 {
                0 => vec![],
                1 => vec![member(&[("d", vec![0, 5]), ("a", vec![1])])],
                _ => vec![member(&[("f", vec![]), ("c", vec![2, 9])])],
            };
            cases.push((offsets, members));
        }
        for (offsets, members) in cases {
            let d = GroupDescription {
                group_id: "g".into(),
                state: "Stable".into(),
                protocol_type: "consumer".into(),
                protocol: "range".into(),
                members,
                coordinator: Some(1),
                error: None,
                group_type: Some("classic".into()),
                group_epoch: None,
                assignment_epoch: None,
            };
            let rows = join_lag(Some(&d), &offsets, &ends);
            let topics: BTreeSet<String> = rows.iter().map(|r| r.topic.clone()).collect();
            assert_eq!(
                group_totals(&d, &offsets, &ends),
                (topics.into_iter().collect::<Vec<_>>(), total_lag(&rows)),
                "offsets {offsets:?}"
            );
        }
    }
}
