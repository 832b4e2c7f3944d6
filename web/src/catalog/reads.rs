//! Read operations over the live cluster and the simulators: partition activity, config search,
//! group lag, messages, quotas, log directories, what-if and blast radius. Like every read they
//! call their operation function and shape its answer to the spec's limits and envelope.

use ballast_balancer::blast::BlastRequest;
use ballast_balancer::whatif::{ScenarioSpec, WhatIfRequest};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use super::ops::{answer_text, boxed, given, need, reshape, rows};
use super::{answer, envelope, limited, parse, Caller, Limit, OpFuture};
use crate::AppState;

// ------------------------------------------------------------------------------ inputs

/// Partition (or topic) activity.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ActivityInput {
    /// `topic`: one row per topic (sums of its partitions, largest first) instead of partitions.
    pub aggregate: Option<String>,
    /// Largest first by: score (share of the cluster's traffic), messages, producerMsgRate,
    /// producerByteRate, consumerMsgRate, consumerByteRate or size. Without it partitions come in
    /// topic and partition order.
    pub sort_by: Option<String>,
    /// Only this topic.
    pub topic: Option<String>,
    /// Only partitions this broker leads.
    pub broker_id: Option<i32>,
    /// Rows to return: omitted or 0 for the default; larger values are clamped to the maximum.
    pub limit: Option<u64>,
}

/// Topics by the value of one configuration key.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ConfigSearchInput {
    /// The configuration key, exactly (e.g. retention.ms, cleanup.policy, min.insync.replicas).
    pub key: String,
    /// The value to compare with; omitted: every topic with its value.
    pub value: Option<String>,
    /// How value compares: eq (default), ne, contains (case-insensitive), or numerically lt, le,
    /// gt, ge.
    pub op: Option<String>,
    /// Only topics that override the key themselves (default false).
    pub overridden_only: Option<bool>,
    /// Include internal topics such as __consumer_offsets (default false).
    pub include_internal: Option<bool>,
    /// Rows to return: omitted or 0 for the default; larger values are clamped to the maximum.
    pub limit: Option<u64>,
}

/// A consumer group's lag.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LagInput {
    /// The group id.
    pub group: String,
    /// Only this topic.
    pub topic: Option<String>,
    /// Partition rows to return: omitted or 0 for the default; larger values are clamped to the
    /// maximum. Totals always cover every partition.
    pub limit: Option<u64>,
}

/// Messages of a topic.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct BrowseInput {
    /// The topic.
    pub topic: String,
    /// One partition; omitted: every partition.
    pub partition: Option<i32>,
    /// Start at this offset (needs partition).
    pub offset: Option<i64>,
    /// Start at the first message at or after this time (ms since the epoch), per partition.
    pub timestamp: Option<i64>,
    /// latest (default: the newest messages) or earliest (from the log start). At most one of
    /// offset, timestamp and from.
    pub from: Option<String>,
    /// Only messages whose key contains this text (case-sensitive).
    pub key_filter: Option<String>,
    /// Only messages whose value contains this text (case-sensitive).
    pub value_filter: Option<String>,
    /// Messages to return: omitted or 0 for the default; larger values are clamped to the
    /// maximum.
    pub limit: Option<u64>,
}

/// Client quotas.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct QuotasInput {
    /// Only entities of this type: user, client-id, user+client-id, ip (a default entity's type
    /// starts with default-, which this also matches).
    pub entity_type: Option<String>,
    /// Only entities whose user, client id or IP contains this text (case-insensitive).
    pub search: Option<String>,
    /// Rows to return: omitted or 0 for the default; larger values are clamped to the maximum.
    pub limit: Option<u64>,
}

/// Disk use by broker and log directory.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct LogdirsInput {
    /// Per-partition rows of this topic's replicas (largest first).
    pub topic: Option<String>,
    /// Only this broker, with per-partition rows of its replicas (combinable with topic).
    pub broker_id: Option<i32>,
    /// Rows to return (topics, or partitions with topic/brokerId): omitted or 0 for the default;
    /// larger values are clamped to the maximum.
    pub limit: Option<u64>,
}

/// One what-if scenario; `type` says which fields apply.
#[derive(Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Scenario {
    /// addBrokers, removeBrokers (alias decommissionBrokers), changeReplicationFactor,
    /// scaleTraffic or addTopic.
    #[serde(rename = "type")]
    pub kind: String,
    /// addBrokers: how many brokers to add.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub count: Option<u32>,
    /// addBrokers: the new brokers' ids; removeBrokers: the brokers to remove.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub broker_ids: Option<Vec<i32>>,
    /// addBrokers: the new brokers' rack (default: the rack with the fewest brokers).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rack: Option<String>,
    /// changeReplicationFactor, addTopic: the topic; scaleTraffic: only this topic (default all).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub topic: Option<String>,
    /// changeReplicationFactor, addTopic: replicas per partition (1 to 16).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub replication_factor: Option<u32>,
    /// scaleTraffic: multiplies message and byte rates (0 or more).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub factor: Option<f64>,
    /// scaleTraffic: multiplies partition sizes (default 1).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub size_factor: Option<f64>,
    /// addTopic: partitions (1 to 100000).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub partitions: Option<u32>,
    /// addTopic: min.insync.replicas (default 1).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub min_insync_replicas: Option<u32>,
    /// addTopic: bytes of one replica of every partition together.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub size_bytes: Option<f64>,
    /// addTopic: the topic's producer messages per second.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub producer_msg_rate: Option<f64>,
    /// addTopic: the topic's producer bytes per second.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub producer_byte_rate: Option<f64>,
    /// addTopic: the topic's consumer messages per second.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub consumer_msg_rate: Option<f64>,
    /// addTopic: the topic's consumer bytes per second.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub consumer_byte_rate: Option<f64>,
}

impl Scenario {
    /// The scenario as the simulation reads it (the fields it names, the rest absent).
    fn spec(self) -> ScenarioSpec {
        ScenarioSpec {
            kind: self.kind,
            count: self.count.map(i64::from),
            broker_ids: self
                .broker_ids
                .map(|ids| ids.into_iter().map(i64::from).collect()),
            rack: self.rack,
            topic: self.topic,
            replication_factor: self.replication_factor.map(i64::from),
            factor: self.factor,
            size_factor: self.size_factor,
            partitions: self.partitions.map(i64::from),
            min_insync_replicas: self.min_insync_replicas.map(i64::from),
            size_bytes: self.size_bytes,
            producer_msg_rate: self.producer_msg_rate,
            producer_byte_rate: self.producer_byte_rate,
            consumer_msg_rate: self.consumer_msg_rate,
            consumer_byte_rate: self.consumer_byte_rate,
        }
    }
}

/// A what-if simulation.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WhatIfInput {
    /// Scenarios applied in order to the observed cluster (a later one sees what the earlier ones
    /// did), e.g. [{"type": "addBrokers", "count": 2}] or [{"type": "removeBrokers",
    /// "brokerIds": [3]}].
    pub scenarios: Vec<Scenario>,
    /// Moves to list: omitted or 0 for the default; larger values are clamped to the maximum.
    /// The movement totals always cover every move.
    pub limit: Option<u64>,
}

/// A failure to analyze: exactly one of brokerId, brokerIds, rack.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct BlastInput {
    /// One broker fails.
    pub broker_id: Option<i32>,
    /// These brokers fail together.
    pub broker_ids: Option<Vec<i32>>,
    /// Every broker of this rack fails.
    pub rack: Option<String>,
    /// Entries per list (affected partitions, leadership changes, groups, topics): omitted or 0
    /// for the default; larger values are clamped to the maximum. Summary counts cover all.
    pub limit: Option<u64>,
}

// ------------------------------------------------------------------------------ operations

pub(super) fn partition_activity(state: AppState, _caller: Caller, input: Value) -> OpFuture {
    boxed(async move {
        let i: ActivityInput = parse(&input)?;
        let by_topic = match i.aggregate.as_deref().map(str::trim) {
            None | Some("") => false,
            Some(a) if a.eq_ignore_ascii_case("topic") => true,
            Some(a) => {
                return Err(super::OpError::invalid(format!(
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

pub(super) fn search_topics_by_config(state: AppState, _caller: Caller, input: Value) -> OpFuture {
    boxed(async move {
        let i: ConfigSearchInput = parse(&input)?;
        need("key", &i.key)?;
        let q = crate::routes::live::configs::ConfigSearchQuery {
            key: i.key,
            value: given(i.value),
            op: given(i.op),
            overridden_only: i.overridden_only,
            include_internal: i.include_internal,
            limit: Some(Limit::new(100, 1000).rows(i.limit)),
        };
        let d = answer(crate::routes::live::configs::search_topics_by_config(&state, q).await)?;
        Ok(reshape(
            d,
            "topics",
            "compare with a narrower value or op, or set overriddenOnly",
        ))
    })
}

pub(super) fn consumer_group_lag(state: AppState, _caller: Caller, input: Value) -> OpFuture {
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

/// The REST route's own maximum, which is also the tool's.
const BROWSE_MAX: usize = 50;

pub(super) fn browse_messages(state: AppState, _caller: Caller, input: Value) -> OpFuture {
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
        let q = crate::routes::live::messages::RangeQuery {
            partition: i.partition,
            offset: i.offset,
            timestamp: i.timestamp,
            from: given(i.from),
            limit: Some(u32::try_from(fetch).unwrap_or(u32::MAX)),
            key_filter: given(i.key_filter),
            value_filter: given(i.value_filter),
        };
        let mut d =
            answer(crate::routes::live::messages::browse_messages(&state, i.topic, q).await)?;
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

pub(super) fn list_quotas(state: AppState, _caller: Caller, input: Value) -> OpFuture {
    boxed(async move {
        let i: QuotasInput = parse(&input)?;
        let d = answer(crate::routes::live::quotas::list_quotas(&state).await)?;
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

pub(super) fn cluster_logdirs(state: AppState, _caller: Caller, input: Value) -> OpFuture {
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

pub(super) fn what_if_simulate(state: AppState, _caller: Caller, input: Value) -> OpFuture {
    boxed(async move {
        let i: WhatIfInput = parse(&input)?;
        if i.scenarios.is_empty() {
            return Err(super::OpError::invalid(
                "scenarios: name at least one scenario",
            ));
        }
        let limit = Limit::new(50, 1000).rows(i.limit);
        let request = WhatIfRequest {
            scenarios: i.scenarios.into_iter().map(Scenario::spec).collect(),
            limit: Some(i64::try_from(limit).unwrap_or(i64::MAX)),
        };
        let mut d = answer(crate::routes::simulation::what_if_simulate(&state, request).await)?;
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

pub(super) fn blast_radius(state: AppState, _caller: Caller, input: Value) -> OpFuture {
    boxed(async move {
        let i: BlastInput = parse(&input)?;
        let named = [
            i.broker_id.is_some(),
            i.broker_ids.is_some(),
            i.rack.is_some(),
        ];
        if named.iter().filter(|n| **n).count() != 1 {
            return Err(super::OpError::invalid(
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
        let mut d = answer(crate::routes::simulation::blast_radius_analyze(&state, request).await)?;
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
