//! The typed inputs of the catalog's operations: each derives the JSON Schema agents are shown
//! (`tools/list`) and is parsed strictly (unknown fields refused).

use std::collections::BTreeMap;

use ballast_balancer::whatif::ScenarioSpec;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// No input.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Nothing {}

/// A list's row limit.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ListInput {
    /// Rows to return: omitted or 0 for the default; larger values are clamped to the maximum.
    pub limit: Option<u64>,
}

/// One proposal.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ProposalInput {
    /// The proposal id (from `list_proposals`), or `current` for the current one.
    pub proposal_id: String,
}

/// A change of one topic's configuration.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TopicConfigInput {
    /// The topic.
    pub topic: String,
    /// Configuration key → new value (string, number or boolean), or null to remove the topic's
    /// override (it then inherits the broker default), e.g. {"retention.ms": 86400000}.
    pub configs: BTreeMap<String, Value>,
}

/// An approval token.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TokenInput {
    /// The approval token a mutate tool returned.
    pub token: String,
}

/// One topic.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TopicInput {
    /// The topic name.
    pub topic: String,
}

/// One topic's partitions, with a row limit.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TopicListInput {
    /// The topic name.
    pub topic: String,
    /// Rows to return: omitted or 0 for the default; larger values are clamped to the maximum.
    pub limit: Option<u64>,
}

/// Topics by name.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct SearchTopicsInput {
    /// Text to match in topic names, case-insensitive; empty or omitted matches every topic.
    pub query: Option<String>,
    /// How `query` matches: contains (default), prefix, exact or glob (`*`, `?`).
    #[serde(rename = "match")]
    pub match_kind: Option<String>,
    /// Include internal topics such as __consumer_offsets (default false).
    pub include_internal: Option<bool>,
    /// Rows to return: omitted or 0 for the default; larger values are clamped to the maximum.
    pub limit: Option<u64>,
}

/// Consumer groups.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GroupsInput {
    /// Only groups in this state (Stable, Empty, PreparingRebalance, ...).
    pub state: Option<String>,
    /// Only group ids containing this text (case-insensitive).
    pub search: Option<String>,
    /// Rows to return: omitted or 0 for the default; larger values are clamped to the maximum.
    pub limit: Option<u64>,
}

/// One consumer group.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GroupInput {
    /// The group id.
    pub group: String,
}

/// ACL bindings matching a filter.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct AclsInput {
    /// Exact principal, form User:<name>.
    pub principal: Option<String>,
    /// Topic, Group, Cluster, TransactionalId, DelegationToken, or Any.
    pub resource_type: Option<String>,
    /// Exact resource name.
    pub resource_name: Option<String>,
    /// Rows to return: omitted or 0 for the default; larger values are clamped to the maximum.
    pub limit: Option<u64>,
}

/// Audit events matching a filter.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AuditInput {
    /// Exact action name, e.g. topics.config.update or reassignments.apply.
    pub action: Option<String>,
    /// Matches the acting user or the requester exactly.
    pub user: Option<String>,
    /// Events at or after this time (RFC 3339, a date, or Unix ms).
    pub since: Option<String>,
    /// Events at or before this time (RFC 3339, a date, or Unix ms).
    pub until: Option<String>,
    /// Case-insensitive text in the action, target, summary or details.
    pub search: Option<String>,
    /// Rows to return: omitted or 0 for the default; larger values are clamped to the maximum.
    pub limit: Option<u64>,
}

/// Reassignment history.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct HistoryInput {
    /// Only operations in this state: Pending, Active, Completed, Failed, Cancelled.
    pub state: Option<String>,
    /// Rows to return: omitted or 0 for the default; larger values are clamped to the maximum.
    pub limit: Option<u64>,
}

/// One reassignment operation.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ReassignmentInput {
    /// The operation id (from list_reassignments or a mutation's result).
    pub id: String,
}

/// Broker configuration defaults.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct DefaultsInput {
    /// Case-insensitive substring of the configuration keys to return.
    pub key_filter: Option<String>,
}

/// Partition-count recommendations.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct OptimizationInput {
    /// Only recommendations of this priority: High, Medium or Low.
    pub priority: Option<String>,
    /// Rows to return: omitted or 0 for the default; larger values are clamped to the maximum.
    pub limit: Option<u64>,
}

/// One broker.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct MaintenanceInput {
    /// The broker id.
    pub broker_id: i32,
    /// Why (shown in the dashboard and the audit log).
    pub reason: Option<String>,
    /// Drain the broker's leadership and replicas (default true).
    pub drain: Option<bool>,
}

/// One broker.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct BrokerInput {
    /// The broker id.
    pub broker_id: i32,
}

/// Redistribution of one topic's replicas.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RedistributeTopicInput {
    /// The topic.
    pub topic: String,
    /// Broker ids to spread over (default: every broker that is up and not in maintenance).
    pub brokers: Option<Vec<i32>>,
}

/// A preferred-leader election.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ElectionInput {
    /// Only this topic (default: the whole cluster).
    pub topic: Option<String>,
    /// With a topic: only these partitions (default: every partition of the topic).
    pub partitions: Option<Vec<i32>>,
}

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
    pub fn spec(self) -> ScenarioSpec {
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
