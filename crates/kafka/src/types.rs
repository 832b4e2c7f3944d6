//! The typed results and arguments of every operation. No kafka-protocol type leaves this crate;
//! everything here serializes to camelCase JSON.

use std::collections::BTreeMap;

use ballast_model::{BrokerId, TopicPartition};
use base64::Engine;
use bytes::Bytes;
use serde::{Serialize, Serializer};

use crate::error::ItemError;

// ---------------------------------------------------------------------------------------------
// metadata, cluster

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct BrokerInfo {
    pub id: BrokerId,
    pub host: String,
    pub port: i32,
    pub rack: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Default)]
#[serde(rename_all = "camelCase")]
pub struct ClusterMetadata {
    pub cluster_id: Option<String>,
    /// The active controller on ZooKeeper clusters; on KRaft a broker picked by the answering
    /// broker (requests that need the controller are forwarded from there).
    pub controller_id: Option<BrokerId>,
    /// Sorted by id.
    pub brokers: Vec<BrokerInfo>,
    /// Sorted by name.
    pub topics: Vec<TopicInfo>,
}

impl ClusterMetadata {
    /// A binary search over the brokers sorted by id (a linear one when they are not).
    pub fn broker(&self, id: BrokerId) -> Option<&BrokerInfo> {
        match self.brokers.binary_search_by_key(&id, |b| b.id) {
            Ok(i) => self.brokers.get(i),
            Err(_) => self.brokers.iter().find(|b| b.id == id),
        }
    }

    /// A binary search over the topics sorted by name (a linear one when they are not): looking
    /// up every partition of a large cluster stays O(n log n).
    pub fn topic(&self, name: &str) -> Option<&TopicInfo> {
        match self.topics.binary_search_by(|t| t.name.as_str().cmp(name)) {
            Ok(i) => self.topics.get(i),
            Err(_) => self.topics.iter().find(|t| t.name == name),
        }
    }

    pub fn partition(&self, tp: &TopicPartition) -> Option<&PartitionInfo> {
        let partitions = &self.topic(&tp.topic)?.partitions;
        match partitions.binary_search_by_key(&tp.partition, |p| p.partition) {
            Ok(i) => partitions.get(i),
            Err(_) => partitions.iter().find(|p| p.partition == tp.partition),
        }
    }

    /// The leader of `tp`, if the partition is known and has one.
    pub fn leader(&self, tp: &TopicPartition) -> Option<BrokerId> {
        self.partition(tp)?.leader
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TopicInfo {
    pub name: String,
    /// The topic id (Metadata v10+, Kafka 2.8+), as a UUID string.
    pub id: Option<String>,
    pub internal: bool,
    /// A topic-level error (e.g. UNKNOWN_TOPIC_OR_PARTITION when a named topic does not exist).
    pub error: Option<ItemError>,
    /// Sorted by partition.
    pub partitions: Vec<PartitionInfo>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PartitionInfo {
    pub partition: i32,
    /// None when the partition has no leader (-1).
    pub leader: Option<BrokerId>,
    pub leader_epoch: Option<i32>,
    /// In assignment order: the first one is the preferred leader.
    pub replicas: Vec<BrokerId>,
    pub isr: Vec<BrokerId>,
    pub offline_replicas: Vec<BrokerId>,
    /// e.g. LEADER_NOT_AVAILABLE; the other fields are still filled when the broker sent them.
    pub error: Option<ItemError>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ClusterDescription {
    pub cluster_id: String,
    pub controller_id: Option<BrokerId>,
    pub brokers: Vec<BrokerInfo>,
    /// Brokers registered but fenced (KRaft, DescribeCluster v2+); empty otherwise.
    pub fenced_brokers: Vec<BrokerId>,
}

// ---------------------------------------------------------------------------------------------
// log dirs

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct LogDirs {
    pub broker: BrokerId,
    pub dirs: Vec<LogDir>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct LogDir {
    pub path: String,
    /// e.g. KAFKA_STORAGE_ERROR for an offline directory.
    pub error: Option<ItemError>,
    /// Size of the volume (DescribeLogDirs v4+, Kafka 3.3+); None before.
    pub total_bytes: Option<i64>,
    pub usable_bytes: Option<i64>,
    pub replicas: Vec<ReplicaLogInfo>,
}

impl LogDir {
    /// Bytes of all replicas in this directory.
    pub fn used_bytes(&self) -> i64 {
        self.replicas.iter().map(|r| r.size).sum()
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ReplicaLogInfo {
    pub topic: String,
    pub partition: i32,
    pub size: i64,
    /// How far this replica is behind the log end (or the current replica, for a future one).
    pub offset_lag: i64,
    /// A replica being moved into this directory by AlterReplicaLogDirs.
    pub is_future: bool,
}

/// A log-directory move for [`crate::Client::alter_replica_log_dirs`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ReplicaLogDirMove {
    pub topic: String,
    pub partition: i32,
    /// Absolute path of the destination log directory on the broker.
    pub path: String,
}

// ---------------------------------------------------------------------------------------------
// offsets

/// Which offset ListOffsets looks up.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum OffsetSpec {
    Earliest,
    Latest,
    /// The first offset whose timestamp is at or after this many ms since the epoch.
    Timestamp(i64),
    /// The first offset still in the broker's local log (EARLIEST_LOCAL_TIMESTAMP, -4:
    /// ListOffsets v8+, Kafka 3.6+). For a tiered topic (KIP-405) the offsets from the log
    /// start up to this one are held only in remote storage; otherwise it is the log start.
    EarliestLocal,
}

impl OffsetSpec {
    pub(crate) fn wire(self) -> i64 {
        match self {
            OffsetSpec::Earliest => -2,
            OffsetSpec::Latest => -1,
            OffsetSpec::Timestamp(ms) => ms,
            OffsetSpec::EarliestLocal => -4,
        }
    }

    /// The lowest ListOffsets version that carries this lookup.
    pub(crate) fn min_version(self) -> i16 {
        match self {
            OffsetSpec::EarliestLocal => 8,
            _ => 0,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ListedOffset {
    pub topic: String,
    pub partition: i32,
    /// None when there is no such offset (a timestamp after the last record) or on error.
    pub offset: Option<i64>,
    /// The record's timestamp for a timestamp lookup; None otherwise.
    pub timestamp: Option<i64>,
    pub leader_epoch: Option<i32>,
    pub error: Option<ItemError>,
}

// ---------------------------------------------------------------------------------------------
// configs

/// A resource whose configuration is described or altered.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "camelCase", tag = "type", content = "name")]
pub enum ConfigResource {
    Topic(String),
    /// One broker's configuration (its own static and dynamic values).
    Broker(BrokerId),
    /// The cluster-wide dynamic broker defaults.
    BrokerDefaults,
}

impl ConfigResource {
    pub(crate) fn wire(&self) -> (i8, String) {
        match self {
            ConfigResource::Topic(name) => (2, name.clone()),
            ConfigResource::Broker(id) => (4, id.to_string()),
            ConfigResource::BrokerDefaults => (4, String::new()),
        }
    }

    /// The broker that must answer for this resource, if any.
    pub(crate) fn broker(&self) -> Option<BrokerId> {
        match self {
            ConfigResource::Broker(id) => Some(*id),
            _ => None,
        }
    }
}

/// Where a configuration value comes from (Kafka's `ConfigSource`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum ConfigSource {
    DynamicTopicConfig,
    DynamicBrokerLoggerConfig,
    DynamicBrokerConfig,
    DynamicDefaultBrokerConfig,
    DynamicClientMetricsConfig,
    DynamicGroupConfig,
    StaticBrokerConfig,
    DefaultConfig,
    Unknown,
}

impl ConfigSource {
    pub(crate) fn from_wire(source: i8) -> ConfigSource {
        match source {
            1 => ConfigSource::DynamicTopicConfig,
            2 => ConfigSource::DynamicBrokerConfig,
            3 => ConfigSource::DynamicDefaultBrokerConfig,
            4 => ConfigSource::StaticBrokerConfig,
            5 => ConfigSource::DefaultConfig,
            6 => ConfigSource::DynamicBrokerLoggerConfig,
            7 => ConfigSource::DynamicClientMetricsConfig,
            8 => ConfigSource::DynamicGroupConfig,
            _ => ConfigSource::Unknown,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ConfigEntry {
    pub name: String,
    /// None for a sensitive value or a value that is not set.
    pub value: Option<String>,
    pub source: ConfigSource,
    /// True when the value is Kafka's default (source DEFAULT_CONFIG).
    pub is_default: bool,
    pub read_only: bool,
    pub sensitive: bool,
    /// The values this one overrides, most specific first.
    pub synonyms: Vec<ConfigSynonym>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ConfigSynonym {
    pub name: String,
    pub value: Option<String>,
    pub source: ConfigSource,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ResourceConfig {
    pub resource: ConfigResource,
    pub error: Option<ItemError>,
    pub entries: Vec<ConfigEntry>,
}

/// One change of IncrementalAlterConfigs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase", tag = "op")]
pub enum AlterConfigOp {
    Set {
        name: String,
        value: String,
    },
    /// Back to the inherited value.
    Delete {
        name: String,
    },
    /// Add to a list value.
    Append {
        name: String,
        value: String,
    },
    /// Remove from a list value.
    Subtract {
        name: String,
        value: String,
    },
}

impl AlterConfigOp {
    pub(crate) fn wire(&self) -> (&str, i8, Option<&str>) {
        match self {
            AlterConfigOp::Set { name, value } => (name, 0, Some(value)),
            AlterConfigOp::Delete { name } => (name, 1, None),
            AlterConfigOp::Append { name, value } => (name, 2, Some(value)),
            AlterConfigOp::Subtract { name, value } => (name, 3, Some(value)),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ResourceResult {
    pub resource: ConfigResource,
    pub error: Option<ItemError>,
}

// ---------------------------------------------------------------------------------------------
// topics, reassignments, elections

/// A topic to create. Either `partitions` and `replication_factor` (None = the broker default,
/// CreateTopics v4+) or explicit `assignments`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Default)]
#[serde(rename_all = "camelCase")]
pub struct NewTopic {
    pub name: String,
    pub partitions: Option<i32>,
    pub replication_factor: Option<i16>,
    /// partition → replicas, in preference order.
    pub assignments: BTreeMap<i32, Vec<BrokerId>>,
    pub configs: BTreeMap<String, String>,
}

impl NewTopic {
    pub fn new(name: impl Into<String>, partitions: i32, replication_factor: i16) -> NewTopic {
        NewTopic {
            name: name.into(),
            partitions: Some(partitions),
            replication_factor: Some(replication_factor),
            ..NewTopic::default()
        }
    }

    pub fn config(mut self, name: impl Into<String>, value: impl Into<String>) -> NewTopic {
        self.configs.insert(name.into(), value.into());
        self
    }
}

/// The outcome for one topic of a batch (create, delete, create partitions).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TopicResult {
    pub name: String,
    pub error: Option<ItemError>,
}

/// Partitions to add to a topic.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct NewPartitions {
    pub topic: String,
    /// The new total number of partitions.
    pub total_count: i32,
    /// Replicas of each new partition, or None to let the controller place them.
    pub assignments: Option<Vec<Vec<BrokerId>>>,
}

/// The outcome for one partition of a batch (reassignments, elections, log-dir moves, commits).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PartitionResult {
    pub topic: String,
    pub partition: i32,
    pub error: Option<ItemError>,
}

/// An ongoing reassignment.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Reassignment {
    pub topic: String,
    pub partition: i32,
    /// The full replica set during the move (old and new).
    pub replicas: Vec<BrokerId>,
    pub adding: Vec<BrokerId>,
    pub removing: Vec<BrokerId>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum ElectionType {
    Preferred,
    /// Needs ElectLeaders v1+ (Kafka 2.4+).
    Unclean,
}

// ---------------------------------------------------------------------------------------------
// ACLs

/// Resource types of ACLs, named as in the interface specification.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
pub enum AclResourceType {
    Topic,
    Group,
    Cluster,
    TransactionalId,
    DelegationToken,
    User,
    Unknown,
}

impl AclResourceType {
    pub(crate) fn wire(self) -> i8 {
        match self {
            AclResourceType::Unknown => 0,
            AclResourceType::Topic => 2,
            AclResourceType::Group => 3,
            AclResourceType::Cluster => 4,
            AclResourceType::TransactionalId => 5,
            AclResourceType::DelegationToken => 6,
            AclResourceType::User => 7,
        }
    }

    pub(crate) fn from_wire(v: i8) -> AclResourceType {
        match v {
            2 => AclResourceType::Topic,
            3 => AclResourceType::Group,
            4 => AclResourceType::Cluster,
            5 => AclResourceType::TransactionalId,
            6 => AclResourceType::DelegationToken,
            7 => AclResourceType::User,
            _ => AclResourceType::Unknown,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
pub enum AclPatternType {
    /// The resource name matches exactly (or `*` matches all).
    Literal,
    /// The resource name is a prefix.
    Prefixed,
    Unknown,
}

impl AclPatternType {
    pub(crate) fn wire(self) -> i8 {
        match self {
            AclPatternType::Literal => 3,
            AclPatternType::Prefixed => 4,
            AclPatternType::Unknown => 0,
        }
    }

    pub(crate) fn from_wire(v: i8) -> AclPatternType {
        match v {
            3 => AclPatternType::Literal,
            4 => AclPatternType::Prefixed,
            _ => AclPatternType::Unknown,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
pub enum AclOperation {
    All,
    Read,
    Write,
    Create,
    Delete,
    Alter,
    Describe,
    ClusterAction,
    DescribeConfigs,
    AlterConfigs,
    IdempotentWrite,
    CreateTokens,
    DescribeTokens,
    TwoPhaseCommit,
    Unknown,
}

impl AclOperation {
    pub(crate) fn wire(self) -> i8 {
        match self {
            AclOperation::Unknown => 0,
            AclOperation::All => 2,
            AclOperation::Read => 3,
            AclOperation::Write => 4,
            AclOperation::Create => 5,
            AclOperation::Delete => 6,
            AclOperation::Alter => 7,
            AclOperation::Describe => 8,
            AclOperation::ClusterAction => 9,
            AclOperation::DescribeConfigs => 10,
            AclOperation::AlterConfigs => 11,
            AclOperation::IdempotentWrite => 12,
            AclOperation::CreateTokens => 13,
            AclOperation::DescribeTokens => 14,
            AclOperation::TwoPhaseCommit => 15,
        }
    }

    pub(crate) fn from_wire(v: i8) -> AclOperation {
        match v {
            2 => AclOperation::All,
            3 => AclOperation::Read,
            4 => AclOperation::Write,
            5 => AclOperation::Create,
            6 => AclOperation::Delete,
            7 => AclOperation::Alter,
            8 => AclOperation::Describe,
            9 => AclOperation::ClusterAction,
            10 => AclOperation::DescribeConfigs,
            11 => AclOperation::AlterConfigs,
            12 => AclOperation::IdempotentWrite,
            13 => AclOperation::CreateTokens,
            14 => AclOperation::DescribeTokens,
            15 => AclOperation::TwoPhaseCommit,
            _ => AclOperation::Unknown,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
pub enum AclPermissionType {
    Allow,
    Deny,
    Unknown,
}

impl AclPermissionType {
    pub(crate) fn wire(self) -> i8 {
        match self {
            AclPermissionType::Unknown => 0,
            AclPermissionType::Deny => 2,
            AclPermissionType::Allow => 3,
        }
    }

    pub(crate) fn from_wire(v: i8) -> AclPermissionType {
        match v {
            2 => AclPermissionType::Deny,
            3 => AclPermissionType::Allow,
            _ => AclPermissionType::Unknown,
        }
    }
}

/// One ACL, with the field names of the interface specification.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct AclBinding {
    pub resource_type: AclResourceType,
    pub resource_name: String,
    pub pattern_type: AclPatternType,
    /// `User:<name>`
    pub principal: String,
    /// `*` for any host
    pub host: String,
    pub operation: AclOperation,
    pub permission_type: AclPermissionType,
}

/// Which pattern types an ACL filter matches.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
pub enum AclPatternFilter {
    /// Any pattern type.
    #[default]
    Any,
    /// Every binding that applies to the resource name: literal, wildcard and prefixes.
    Match,
    Literal,
    Prefixed,
}

impl AclPatternFilter {
    pub(crate) fn wire(self) -> i8 {
        match self {
            AclPatternFilter::Any => 1,
            AclPatternFilter::Match => 2,
            AclPatternFilter::Literal => 3,
            AclPatternFilter::Prefixed => 4,
        }
    }
}

/// An ACL filter; None fields match anything.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct AclFilter {
    pub resource_type: Option<AclResourceType>,
    pub resource_name: Option<String>,
    pub pattern_type: AclPatternFilter,
    pub principal: Option<String>,
    pub host: Option<String>,
    pub operation: Option<AclOperation>,
    pub permission_type: Option<AclPermissionType>,
}

impl AclFilter {
    /// Every ACL.
    pub fn all() -> AclFilter {
        AclFilter::default()
    }

    /// Exactly this binding.
    pub fn exact(binding: &AclBinding) -> AclFilter {
        AclFilter {
            resource_type: Some(binding.resource_type),
            resource_name: Some(binding.resource_name.clone()),
            pattern_type: match binding.pattern_type {
                AclPatternType::Prefixed => AclPatternFilter::Prefixed,
                _ => AclPatternFilter::Literal,
            },
            principal: Some(binding.principal.clone()),
            host: Some(binding.host.clone()),
            operation: Some(binding.operation),
            permission_type: Some(binding.permission_type),
        }
    }

    /// (resource type, name, pattern, principal, host, operation, permission) on the wire.
    #[allow(clippy::type_complexity)]
    pub(crate) fn wire(
        &self,
    ) -> (
        i8,
        Option<String>,
        i8,
        Option<String>,
        Option<String>,
        i8,
        i8,
    ) {
        (
            self.resource_type.map_or(1, AclResourceType::wire),
            self.resource_name.clone(),
            self.pattern_type.wire(),
            self.principal.clone(),
            self.host.clone(),
            self.operation.map_or(1, AclOperation::wire),
            self.permission_type.map_or(1, AclPermissionType::wire),
        )
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct AclCreateResult {
    pub binding: AclBinding,
    pub error: Option<ItemError>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct AclDeleteResult {
    pub filter: AclFilter,
    pub error: Option<ItemError>,
    /// The bindings the filter matched (each deleted unless it carries an error).
    pub deleted: Vec<DeletedAcl>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct DeletedAcl {
    #[serde(flatten)]
    pub binding: AclBinding,
    pub error: Option<ItemError>,
}

// ---------------------------------------------------------------------------------------------
// client quotas

/// A quota entity name: a specific one or the default (`<default>`).
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum QuotaName {
    Default,
    Name(String),
}

impl QuotaName {
    pub fn name(name: impl Into<String>) -> QuotaName {
        QuotaName::Name(name.into())
    }

    fn from_wire(name: Option<&str>) -> QuotaName {
        match name {
            None => QuotaName::Default,
            Some(n) => QuotaName::Name(n.to_string()),
        }
    }

    pub(crate) fn wire(&self) -> Option<&str> {
        match self {
            QuotaName::Default => None,
            QuotaName::Name(n) => Some(n),
        }
    }
}

impl Serialize for QuotaName {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            QuotaName::Default => s.serialize_str("<default>"),
            QuotaName::Name(n) => s.serialize_str(n),
        }
    }
}

/// A client-quota entity: user, client id, both (user + client id), or an IP.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default, Serialize, PartialOrd, Ord)]
#[serde(rename_all = "camelCase")]
pub struct QuotaEntity {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub user: Option<QuotaName>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub client_id: Option<QuotaName>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ip: Option<QuotaName>,
}

impl QuotaEntity {
    pub(crate) fn wire(&self) -> Vec<(&'static str, Option<&str>)> {
        let mut out = Vec::new();
        if let Some(u) = &self.user {
            out.push(("user", u.wire()));
        }
        if let Some(c) = &self.client_id {
            out.push(("client-id", c.wire()));
        }
        if let Some(i) = &self.ip {
            out.push(("ip", i.wire()));
        }
        out
    }

    pub(crate) fn from_wire<'a>(parts: impl Iterator<Item = (&'a str, Option<&'a str>)>) -> Self {
        let mut entity = QuotaEntity::default();
        for (entity_type, name) in parts {
            let name = QuotaName::from_wire(name);
            match entity_type {
                "user" => entity.user = Some(name),
                "client-id" => entity.client_id = Some(name),
                "ip" => entity.ip = Some(name),
                _ => {}
            }
        }
        entity
    }
}

/// The quotas of one entity: key (e.g. `producer_byte_rate`) → value.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ClientQuota {
    pub entity: QuotaEntity,
    pub values: BTreeMap<String, f64>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum QuotaEntityType {
    User,
    ClientId,
    Ip,
}

impl QuotaEntityType {
    pub(crate) fn wire(self) -> &'static str {
        match self {
            QuotaEntityType::User => "user",
            QuotaEntityType::ClientId => "client-id",
            QuotaEntityType::Ip => "ip",
        }
    }
}

/// How one entity type is matched by a quota filter.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum QuotaMatch {
    Exact(String),
    Default,
    /// Any specified name (not the default).
    Any,
}

/// Which quotas DescribeClientQuotas returns. No components and `strict: false` is every quota.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct QuotaFilter {
    pub components: Vec<(QuotaEntityType, QuotaMatch)>,
    /// Only entities with exactly these entity types.
    pub strict: bool,
}

impl QuotaFilter {
    pub fn all() -> QuotaFilter {
        QuotaFilter::default()
    }
}

/// Set (Some) or remove (None) one quota key of an entity.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct QuotaAlteration {
    pub entity: QuotaEntity,
    pub ops: Vec<(String, Option<f64>)>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct QuotaAlterResult {
    pub entity: QuotaEntity,
    pub error: Option<ItemError>,
}

// ---------------------------------------------------------------------------------------------
// consumer groups

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct GroupListing {
    pub group_id: String,
    /// `consumer`, `connect`, ... (empty for groups that only commit offsets)
    pub protocol_type: String,
    /// ListGroups v4+ (Kafka 2.6+): Stable, Empty, Dead, ...
    pub state: Option<String>,
    /// ListGroups v5+ (Kafka 3.8+): classic, consumer, share
    pub group_type: Option<String>,
    /// The broker that coordinates the group.
    pub coordinator: BrokerId,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct GroupDescription {
    pub group_id: String,
    /// Classic groups: `Stable`, `Empty`, `PreparingRebalance`, ...; consumer (KIP-848) groups
    /// also `Assigning` and `Reconciling`.
    pub state: String,
    pub protocol_type: String,
    /// The assignor (e.g. `range`, `cooperative-sticky`; `uniform` for a consumer group).
    pub protocol: String,
    pub members: Vec<GroupMember>,
    pub coordinator: Option<BrokerId>,
    pub error: Option<ItemError>,
    /// `classic` (DescribeGroups), `consumer` (KIP-848, ConsumerGroupDescribe), `share`
    /// (KIP-932, ShareGroupDescribe), or the type ListGroups gave a group no API of this client
    /// describes (`streams`); None when it was not described.
    pub group_type: Option<String>,
    /// The group epoch of a consumer or share group (None for a classic group).
    pub group_epoch: Option<i32>,
    /// The epoch of the group's target assignment (consumer and share groups).
    pub assignment_epoch: Option<i32>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct GroupMember {
    pub member_id: String,
    pub group_instance_id: Option<String>,
    pub client_id: String,
    pub host: String,
    /// Decoded from the consumer protocol; empty for other protocol types. For a consumer
    /// or share group, the partitions the member owns now.
    pub assignment: Vec<TopicPartitions>,
    /// The partitions the coordinator wants the member to own (consumer groups: equal to
    /// `assignment` once it reconciled); None where the protocol has no target (classic, share).
    pub target_assignment: Option<Vec<TopicPartitions>>,
    /// The member's epoch (consumer and share groups); None for a classic group.
    pub member_epoch: Option<i32>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TopicPartitions {
    pub topic: String,
    pub partitions: Vec<i32>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CommittedOffset {
    pub topic: String,
    pub partition: i32,
    /// None when the group has no offset for the partition.
    pub offset: Option<i64>,
    pub leader_epoch: Option<i32>,
    pub metadata: Option<String>,
    pub error: Option<ItemError>,
}

/// Every committed offset of one group (`Client::committed_offsets_of_groups`), or why the group
/// could not be read.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct GroupOffsets {
    pub group_id: String,
    /// Sorted by topic and partition.
    pub offsets: Vec<CommittedOffset>,
    pub error: Option<ItemError>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct GroupResult {
    pub group_id: String,
    pub error: Option<ItemError>,
}

// ---------------------------------------------------------------------------------------------
// records

fn base64_opt<S: Serializer>(v: &Option<Bytes>, s: S) -> Result<S::Ok, S::Error> {
    match v {
        Some(b) => s.serialize_str(&base64::engine::general_purpose::STANDARD.encode(b)),
        None => s.serialize_none(),
    }
}

/// A record read by Fetch. Keys and values serialize as base64.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Record {
    pub offset: i64,
    pub timestamp: i64,
    /// True when the timestamp was set by the broker (LogAppendTime).
    pub log_append_time: bool,
    #[serde(serialize_with = "base64_opt")]
    pub key: Option<Bytes>,
    #[serde(serialize_with = "base64_opt")]
    pub value: Option<Bytes>,
    pub headers: Vec<RecordHeader>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RecordHeader {
    pub key: String,
    #[serde(serialize_with = "base64_opt")]
    pub value: Option<Bytes>,
}

/// What one Fetch returned for one partition.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct FetchedRecords {
    pub topic: String,
    pub partition: i32,
    /// Records at or after the requested offset, in offset order (control records skipped).
    pub records: Vec<Record>,
    pub high_watermark: i64,
    pub log_start_offset: Option<i64>,
    pub last_stable_offset: Option<i64>,
    /// Where the next fetch continues: after the last complete batch returned.
    pub next_offset: i64,
}

/// A record to produce.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ProduceRecord {
    pub key: Option<Bytes>,
    pub value: Option<Bytes>,
    pub headers: Vec<(String, Option<Bytes>)>,
    /// ms since the epoch; None sends no timestamp (-1), which a LogAppendTime topic replaces.
    pub timestamp: Option<i64>,
}

impl ProduceRecord {
    pub fn new(key: Option<&[u8]>, value: Option<&[u8]>) -> ProduceRecord {
        ProduceRecord {
            key: key.map(Bytes::copy_from_slice),
            value: value.map(Bytes::copy_from_slice),
            ..ProduceRecord::default()
        }
    }

    pub fn with_timestamp(mut self, ms: i64) -> ProduceRecord {
        self.timestamp = Some(ms);
        self
    }

    pub fn with_header(mut self, key: impl Into<String>, value: Option<&[u8]>) -> ProduceRecord {
        self.headers
            .push((key.into(), value.map(Bytes::copy_from_slice)));
        self
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum Acks {
    /// The broker does not answer; no offset is known.
    None,
    Leader,
    All,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum Compression {
    #[default]
    None,
    Gzip,
    Snappy,
    Lz4,
    Zstd,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ProduceResult {
    pub topic: String,
    pub partition: i32,
    /// Offset of the first record; None with `Acks::None`.
    pub base_offset: Option<i64>,
    /// Set when the topic uses LogAppendTime.
    pub log_append_time: Option<i64>,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn topic(name: &str, partitions: &[i32]) -> TopicInfo {
        TopicInfo {
            name: name.into(),
            id: None,
            internal: false,
            error: None,
            partitions: partitions
                .iter()
                .map(|p| PartitionInfo {
                    partition: *p,
                    leader: Some(*p + 100),
                    leader_epoch: None,
                    replicas: Vec::new(),
                    isr: Vec::new(),
                    offline_replicas: Vec::new(),
                    error: None,
                })
                .collect(),
        }
    }

    #[test]
    fn metadata_lookups_find_topics_partitions_and_brokers_sorted_or_not() {
        let broker = |id| BrokerInfo {
            id,
            host: "h".into(),
            port: 1,
            rack: None,
        };
        let sorted = ClusterMetadata {
            brokers: vec![broker(1), broker(2), broker(5)],
            topics: vec![
                topic("a", &[0, 1, 2]),
                topic("b", &[0]),
                topic("c", &[0, 1]),
            ],
            ..ClusterMetadata::default()
        };
        // Built by hand in another order: still found.
        let unsorted = ClusterMetadata {
            brokers: vec![broker(5), broker(1), broker(2)],
            topics: vec![
                topic("c", &[1, 0]),
                topic("a", &[2, 0, 1]),
                topic("b", &[0]),
            ],
            ..ClusterMetadata::default()
        };
        for m in [&sorted, &unsorted] {
            for (name, p) in [("a", 0), ("a", 2), ("b", 0), ("c", 1)] {
                let tp = TopicPartition::new(name, p);
                assert_eq!(m.leader(&tp), Some(p + 100), "{tp}");
            }
            assert!(m.topic("d").is_none());
            assert!(m.partition(&TopicPartition::new("a", 3)).is_none());
            assert_eq!(m.broker(5).map(|b| b.id), Some(5));
            assert!(m.broker(3).is_none());
        }
    }

    #[test]
    fn acl_bindings_serialize_with_the_names_of_the_interface_spec() {
        let binding = AclBinding {
            resource_type: AclResourceType::TransactionalId,
            resource_name: "tx-".into(),
            pattern_type: AclPatternType::Prefixed,
            principal: "User:alice".into(),
            host: "*".into(),
            operation: AclOperation::All,
            permission_type: AclPermissionType::Deny,
        };
        let json = serde_json::to_value(&binding).unwrap();
        assert_eq!(
            json,
            serde_json::json!({
                "resourceType": "TransactionalId",
                "resourceName": "tx-",
                "patternType": "Prefixed",
                "principal": "User:alice",
                "host": "*",
                "operation": "All",
                "permissionType": "Deny"
            })
        );
    }

    #[test]
    fn acl_enums_round_trip_through_their_wire_codes() {
        for v in 0..=16 {
            let op = AclOperation::from_wire(v);
            if op != AclOperation::Unknown {
                assert_eq!(op.wire(), v);
            }
            let rt = AclResourceType::from_wire(v);
            if rt != AclResourceType::Unknown {
                assert_eq!(rt.wire(), v);
            }
        }
        assert_eq!(AclPermissionType::from_wire(3), AclPermissionType::Allow);
        assert_eq!(AclPatternType::from_wire(4), AclPatternType::Prefixed);
    }

    #[test]
    fn records_serialize_keys_and_values_as_base64() {
        let r = Record {
            offset: 1,
            timestamp: 2,
            log_append_time: false,
            key: None,
            value: Some(Bytes::from_static(b"hi")),
            headers: vec![],
        };
        let json = serde_json::to_value(&r).unwrap();
        assert_eq!(json["value"], "aGk=");
        assert_eq!(json["key"], serde_json::Value::Null);
    }

    #[test]
    fn quota_entities_serialize_defaults_as_default_marker() {
        let e = QuotaEntity {
            user: Some(QuotaName::Default),
            client_id: Some(QuotaName::name("app")),
            ip: None,
        };
        assert_eq!(
            serde_json::to_value(&e).unwrap(),
            serde_json::json!({"user": "<default>", "clientId": "app"})
        );
        let back = QuotaEntity::from_wire(e.wire().into_iter());
        assert_eq!(back, e);
    }
}

// ---------------------------------------------------------------------------------------------
// the metadata quorum (KRaft) and what Kafka the cluster runs

/// The KRaft metadata quorum as DescribeQuorum reports it (topic `__cluster_metadata`,
/// partition 0). Its leader is the active controller.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct QuorumDescription {
    /// The active controller; None while the quorum has no leader (an election).
    pub leader_id: Option<BrokerId>,
    pub leader_epoch: i32,
    /// The metadata log's high watermark (records committed by the quorum).
    pub high_watermark: i64,
    /// Sorted by id.
    pub voters: Vec<QuorumReplica>,
    /// Brokers that replicate the metadata log without voting (KRaft brokers in separate mode).
    pub observers: Vec<QuorumReplica>,
    /// The voters' endpoints (DescribeQuorum v2, Kafka 3.9+; empty before), by id.
    pub nodes: Vec<QuorumNode>,
}

/// A voter's endpoints as DescribeQuorum v2 names them (its controller listeners).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct QuorumNode {
    pub id: BrokerId,
    pub listeners: Vec<QuorumListener>,
}

/// One listener of a quorum node.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct QuorumListener {
    pub name: String,
    pub host: String,
    pub port: u16,
}

/// One voter or observer of the metadata quorum.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct QuorumReplica {
    pub id: BrokerId,
    /// Its metadata log end offset as the leader knows it (None: unknown, -1 on the wire).
    pub log_end_offset: Option<i64>,
    /// How many records it is behind the leader's log end offset, as `kafka-metadata-quorum.sh
    /// describe --replication` computes it (None when either offset is unknown).
    pub lag: Option<i64>,
    /// When it last fetched from the leader, ms since the epoch (DescribeQuorum v1+, Kafka 3.3+).
    pub last_fetch_ms: Option<i64>,
    /// When it last caught up with the leader, ms since the epoch (v1+).
    pub last_caught_up_ms: Option<i64>,
    /// How long before the answer it last fetched: the leader's own timestamp in the same answer
    /// (Kafka reports the leader's current time as its own fetch time) minus this replica's, so
    /// no clock of ours is compared with the leader's (None: either time unknown).
    pub fetch_age_ms: Option<i64>,
    /// How long before the answer it was last caught up, measured as `fetch_age_ms`.
    pub caught_up_age_ms: Option<i64>,
}

impl QuorumDescription {
    /// The voter or observer `id`.
    pub fn replica(&self, id: BrokerId) -> Option<&QuorumReplica> {
        self.voters
            .iter()
            .chain(self.observers.iter())
            .find(|r| r.id == id)
    }

    /// The largest lag of a voter or observer (0 with none known), as `describe --status`
    /// shows it as `MaxFollowerLag`.
    pub fn max_follower_lag(&self) -> i64 {
        self.voters
            .iter()
            .chain(self.observers.iter())
            .filter_map(|r| r.lag)
            .max()
            .unwrap_or(0)
    }
}

/// One partition as DescribeTopicPartitions (KIP-966) reports it: its ISR and eligible leader
/// replicas (replicas out of the ISR that Kafka still counts as safe leaders, kept while the ISR
/// is below `min.insync.replicas`). None: the field was null in the answer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PartitionElr {
    pub topic: String,
    pub partition: i32,
    pub leader: Option<BrokerId>,
    pub isr: Vec<BrokerId>,
    pub eligible_leader_replicas: Option<Vec<BrokerId>>,
    pub last_known_elr: Option<Vec<BrokerId>>,
}

/// How the cluster keeps its metadata.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum MetadataMode {
    /// A KRaft controller quorum: brokers offer DescribeQuorum (API key 55).
    Kraft,
    /// ZooKeeper: brokers do not offer DescribeQuorum.
    Zookeeper,
}

impl MetadataMode {
    pub fn as_str(self) -> &'static str {
        match self {
            MetadataMode::Kraft => "kraft",
            MetadataMode::Zookeeper => "zookeeper",
        }
    }
}

/// The Apache Kafka releases a broker's ApiVersions answer fits (see [`crate::infer_kafka_version`]).
/// Both ends are releases (`"3.5"`), inclusive; None means unbounded: no known marker below
/// (older than the oldest marker) or above (newer than the newest marker we know).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Default)]
#[serde(rename_all = "camelCase")]
pub struct KafkaVersionRange {
    pub min: Option<String>,
    pub max: Option<String>,
}

impl std::fmt::Display for KafkaVersionRange {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match (&self.min, &self.max) {
            (Some(a), Some(b)) if a == b => write!(f, "{a}"),
            (Some(a), Some(b)) => write!(f, "{a} to {b}"),
            (Some(a), None) => write!(f, "{a} or newer"),
            (None, Some(b)) => write!(f, "{b} or older"),
            (None, None) => write!(f, "unknown"),
        }
    }
}

/// What one broker's ApiVersions answer says about the cluster.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct BrokerSoftware {
    /// The broker asked (None: a bootstrap address).
    pub broker: Option<BrokerId>,
    pub metadata_mode: MetadataMode,
    pub kafka_version: KafkaVersionRange,
    /// Every API the broker offers: (key, min version, max version), by key.
    pub api_versions: Vec<(i16, i16, i16)>,
}

/// The active controller and where ballast learnt it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ActiveController {
    pub id: Option<BrokerId>,
    /// `quorum` (KRaft: the leader of the metadata quorum) or `metadata` (ZooKeeper: Metadata's
    /// controller id).
    pub source: &'static str,
    /// The quorum as DescribeQuorum reported it (KRaft only).
    pub quorum: Option<QuorumDescription>,
}
