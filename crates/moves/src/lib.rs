//! What the web process and the workers both need to know about partition moves, with no
//! process of its own: `placement` (where a topic's replicas should go), `preflight` (the live
//! cluster-health assessment before moves are submitted: hard and soft reasons), `waves` (one
//! added replica per step, waves under the per-broker cap) and where the throttle rate is kept.
//!
//! Architecture Invariant: `web` depends on no worker crate; what both sides share lives here.

pub mod placement;
pub mod preflight;
pub mod waves;

/// The settings key of the operator's replication throttle rate (MB/s per broker), written by
/// `PUT /api/v1/reassignments/throttle` and read by the executor.
pub const THROTTLE_RATE_KEY: &str = "throttle.rate_mb";

/// The fields of a stored `ballast.plan/v1` move that applying it needs (a proposal apply, the
/// healer's activity loop).
#[derive(Debug, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PlanMove {
    pub topic: String,
    pub partition: i32,
    pub replicas_before: Vec<ballast_model::BrokerId>,
    pub replicas_after: Vec<ballast_model::BrokerId>,
    #[serde(default)]
    pub bytes: u64,
}
