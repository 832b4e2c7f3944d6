//! Operations: what ballast changes, declared once with no HTTP in it, and the one pipeline every
//! change runs through whatever the door (REST, MCP, chat, the dashboard).
//!
//! - `context`: what an operation runs over (store, configuration, clock, cluster, pipeline, the
//!   live reads shared in flight, the licence verdict).
//! - `licence`: whether a licensed operation may run now, from the source the process gives.
//! - `error`: an operation's failure, in kinds every door maps to its own words.
//! - `actor`: who makes a change, as the audit log records it.
//! - `pipeline`: serialisation per resource, the audit intent written before the change, the
//!   change, the intent completed with the true before and after (docs in the module).
//! - `view`: the observed cluster as the observer last stored it, cached per generation;
//!   `observed` the reads answered from it (cluster, health, racks, log dirs, partitions, topic
//!   search, partition-count recommendations, activity), each rendered once per reading for its
//!   common parameters.
//! - `flight`: live reads shared in flight and served again while fresh (`group_reads`: the
//!   consumer groups, their summary, one group and its lag).
//! - `kept`: agents' answers kept once per reading, read or check, as values and written.
//! - `quorum`: controllers as nodes: the metadata quorum's voters and observers of a reading,
//!   with the quorum's health (a voter that does not fetch is down).
//! - `readback`: a change read back once every broker shows it.
//! - `cluster`: the cluster's errors in an operation's words.
//! - `schema`: JSON Schema pieces of the input types (enums, patterns, distinct ids).
//! - `names`: Kafka's own rules for the names a change carries (topics, groups, principals).
//! - `time`: instants as a change's input names them (Unix ms or RFC 3339).
//! - `catalog`: every operation declared once (name, category, scope, licence, input schema,
//!   check, run) and the shaping of agents' answers (docs in the module).
//! - the operations, one module per family: `quotas`, `topic_configs`, `acls` (with the
//!   binding and filter rules the list of bindings shares), `groups` (consumer-group offset
//!   resets and deletion), `proposals`, `reassignments`, `brokers`, `tokens`, `rolls`, `revert` (an audited change put back).
//!
//! Architecture Invariant: no HTTP type in this crate (`scripts/check-deps`); `web` adapts its
//! answers.

pub mod acls;
pub mod actor;
pub mod audit;
pub mod brokers;
pub mod catalog;
pub mod cluster;
pub mod configs;
pub mod context;
pub mod error;
pub mod flight;
pub mod group_reads;
pub mod groups;
pub mod kept;
pub mod licence;
pub mod messages;
pub mod names;
pub mod observed;
pub mod page;
pub mod payload;
pub mod pipeline;
pub mod proposal_view;
pub mod proposals;
pub mod quorum;
pub mod quota_reads;
pub mod quotas;
pub mod readback;
pub mod reassignments;
pub mod revert;
pub mod rolls;
pub mod schema;
pub mod simulation;
pub mod time;
pub mod tokens;
pub mod topic_configs;
pub mod topic_lifecycle;
pub mod view;

pub use actor::Actor;
pub use context::{Context, KafkaHandle};
pub use error::{Kind, OpError};
pub use licence::Licence;
pub use pipeline::{Audited, Done, NotDone, Pipeline, Recorded, Resource, Unavailable};
