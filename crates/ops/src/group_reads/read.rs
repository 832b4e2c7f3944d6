//! One read of every consumer group, as the operation context keeps it between requests
//! (`crate::flight::Recent`): the rows, the states ListGroups gave and the answers made once per
//! read. Data only: the reads and their answers are the parent module's.

use std::sync::{Arc, OnceLock};

use ballast_kafka::BrokerId;
use serde::Serialize;

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct GroupRow {
    pub(crate) group_id: String,
    pub(crate) state: String,
    pub(crate) protocol_type: String,
    /// `classic`, `consumer`, ... (Kafka 3.8+); None before.
    pub(crate) group_type: Option<String>,
    pub(crate) coordinator: Option<BrokerId>,
    /// None when the group could not be described (its `error` says why): unknown, not 0.
    pub(crate) members: Option<usize>,
    /// Topics the group has committed offsets for or is assigned.
    pub(crate) topics: Vec<String>,
    /// Sum of the lag of every partition with a committed offset; None when it could not be read.
    pub(crate) total_lag: Option<i64>,
    /// Why `totalLag` is missing, or the group's own error.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) error: Option<String>,
}

/// Every group of the cluster, described with its lag: the one read the list and the summary
/// are made from, whatever their parameters.
pub struct GroupsRead {
    /// By group id.
    pub(crate) rows: Vec<GroupRow>,
    /// The state ListGroups gave each row (v4+; None from older brokers).
    pub(crate) listed_states: Vec<Option<String>>,
    /// Whether ListGroups gave every group's state.
    pub(crate) states_known: bool,
    /// The summary without parameters, made once per read.
    pub(crate) summary: OnceLock<Arc<String>>,
    /// The list's default page, made once per read.
    pub(crate) list: OnceLock<Arc<String>>,
    /// The list's default page shaped as a value for a door that takes values (MCP), made once
    /// per read: a call copies it instead of parsing the page's text.
    pub(crate) list_shaped: OnceLock<Arc<crate::kept::Kept>>,
}
