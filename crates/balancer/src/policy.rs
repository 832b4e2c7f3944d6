//! What the planner is told besides the snapshot: the balancing rules' knobs.

/// The knobs of the balancing rules (the service maps `BALLAST_*` settings into this).
#[derive(Debug, Clone, PartialEq)]
pub struct Policy {
    /// `BALLAST_BALANCE_THRESHOLD` in percent: loads are evened to within this distance of fair
    /// share, and a broker beyond twice this distance triggers moves.
    pub threshold_pct: f64,
    /// `BALLAST_BALANCE_FLOOR` bytes=: byte-rate loads whose largest difference from fair share
    /// is below this (bytes per second) are left alone.
    pub floor_bytes_per_sec: f64,
    /// `BALLAST_BALANCE_FLOOR` disk=: the same for disk, in bytes.
    pub floor_disk_bytes: f64,
    /// Partitions moved within this many milliseconds are not moved again.
    pub cooldown_ms: i64,
    /// `BALLAST_PROPOSAL_MAX_PARTITIONS`: at most this many partitions change in one plan.
    pub max_partitions: Option<usize>,
    /// `BALLAST_BALANCE_WORKERS`: threads evaluating candidate moves; 0 = one per CPU.
    /// Never changes the plan, only how fast it is found.
    pub workers: usize,
}

impl Default for Policy {
    fn default() -> Self {
        Self {
            threshold_pct: 5.0,
            floor_bytes_per_sec: 2_000_000.0,
            floor_disk_bytes: 0.0,
            cooldown_ms: 30 * 60 * 1000,
            max_partitions: None,
            workers: 1,
        }
    }
}

impl Policy {
    /// A broker beyond this distance (percent) triggers moves.
    pub fn trigger_pct(&self) -> f64 {
        2.0 * self.threshold_pct
    }
}
