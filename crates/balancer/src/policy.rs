//! What the planner is told besides the snapshot: the balancing rules' knobs, and which loads
//! are still being measured.

use serde::Serialize;

/// A load whose measurements are not complete yet (rates before their window holds enough
/// readings, sizes before every partition's size was read): unknown, never zero. The planner
/// does not count it (no move serves it and none is refused for it), never calls it `No
/// traffic`, and its `stop` is `measuring`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Measuring {
    /// Readings the load's measurement holds so far.
    pub readings: u32,
    /// Readings it needs before it is measured.
    pub needed: u32,
    /// About how long until it is measured, in milliseconds, at the sampling interval.
    pub remaining_ms: i64,
}

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
    /// `BALLAST_BALANCE_WORKERS`: threads evaluating candidate moves; 0 = one per CPU. No more
    /// threads than CPUs are started (more would only take turns on them). Never changes the
    /// plan, only how fast it is found.
    pub workers: usize,
    /// A step's candidates are split over the worker threads only when every thread gets at
    /// least this many: handing fewer over costs more than evaluating them. The default
    /// ([`PARALLEL_MIN_CHUNK`]) is where splitting stopped being slower on a 2-core machine.
    pub parallel_min_chunk: usize,
    /// Loads still being measured, indexed like `Load::ALL` (None: measured). Set by the
    /// service from its readings; a snapshot read once (`ballast plan`) has every load measured.
    pub measuring: [Option<Measuring>; 7],
}

/// The default [`Policy::parallel_min_chunk`]. Measured with the planner bench (60 brokers,
/// 60,000 partitions, hot-broker shape: steps of up to ~800 candidates): 1 thread 0.88 s;
/// 2 threads splitting from 48 candidates each 1.29 s, from 200 each 0.98 s, from 400 each
/// 0.82 s (no step is split).
pub const PARALLEL_MIN_CHUNK: usize = 400;

impl Default for Policy {
    fn default() -> Self {
        Self {
            threshold_pct: 5.0,
            floor_bytes_per_sec: 2_000_000.0,
            floor_disk_bytes: 0.0,
            cooldown_ms: 30 * 60 * 1000,
            max_partitions: None,
            workers: 1,
            parallel_min_chunk: PARALLEL_MIN_CHUNK,
            measuring: [None; 7],
        }
    }
}

impl Policy {
    /// A broker beyond this distance (percent) triggers moves.
    pub fn trigger_pct(&self) -> f64 {
        2.0 * self.threshold_pct
    }
}
