//! The reads answered from what the observer recorded: the cluster, its health, log dirs,
//! partitions, racks, topic search, partition-count recommendations and activity scores
//! (`docs/api/observed.md`). Every one is free (monitoring mode).
//!
//! They answer from the in-memory view of the latest sample ([`crate::view`]), never from SQLite
//! scans: while there is no sample, or the latest is older than `BALLAST_READY_STALE_AFTER`, they
//! are `Unavailable`; a partial sample gives null values and a `coverage` object. An answer that
//! changes only with a new reading is rendered once per reading for its common parameters
//! (`View::rendered`) and returned as shared text (`Arc<String>`), which the REST door finishes
//! once into its bytes and tag. Malformed input is `BadInput`, an unknown topic or broker
//! `NotFound`.

pub mod activity;
pub mod cluster;
pub mod topics;

use ballast_model::BrokerId;

use crate::error::OpError;
use crate::view::View;

/// `limit` as the spec's MCP tools read it: omitted or 0 selects the default, a value above the
/// maximum is clamped to it.
pub fn limit(requested: Option<usize>, default: usize, max: usize) -> usize {
    match requested {
        None | Some(0) => default,
        Some(n) => n.min(max),
    }
}

/// The index of topic `name`, or `NotFound`.
pub fn known_topic(v: &View, name: &str) -> Result<usize, OpError> {
    v.topic(name).ok_or_else(|| {
        OpError::not_found(
            "topic not found",
            format!("topic {name:?} is not in the cluster"),
        )
    })
}

/// `id` if the cluster knows the broker, or `NotFound`.
pub fn known_broker(v: &View, id: BrokerId) -> Result<BrokerId, OpError> {
    if v.brokers.contains_key(&id) {
        Ok(id)
    } else {
        Err(OpError::not_found(
            "broker not found",
            format!("broker {id} is not in the cluster"),
        ))
    }
}

/// An answer of one reading whose first field is an `ageMs`: `{head}{"ageMs":<age>` followed by
/// `rest`, the text rendered once per reading. `ageMs` is the one field that moves between two
/// requests of one reading, so a door can send the head per request and the rest shared.
pub struct Aged {
    /// What comes before the object that starts with `ageMs` (`""` or `{"cluster":`).
    pub head: &'static str,
    pub age_ms: i64,
    /// The rest of the answer after the age value, the same for every request of one reading.
    pub rest: std::sync::Arc<String>,
}

impl Aged {
    /// The whole answer as JSON text.
    pub fn text(&self) -> String {
        format!("{}{{\"ageMs\":{}{}", self.head, self.age_ms, self.rest)
    }
}
