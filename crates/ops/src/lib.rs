//! Operations: what ballast changes, declared once with no HTTP in it, and the one pipeline every
//! change runs through whatever the door (REST, MCP, chat, the dashboard).
//!
//! - `pipeline`: serialisation per resource, the audit intent written before the change, the
//!   change, the intent completed with the true before and after (docs in the module).
//! - `names`: Kafka's own rules for the names a change carries (topics, groups, principals).
//!
//! Architecture Invariant: no HTTP type in this crate; `web` adapts its answers.

pub mod names;
pub mod pipeline;

pub use pipeline::{Done, NotDone, Pipeline, Recorded, Resource, Unavailable};
