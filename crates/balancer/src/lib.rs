//! The planner. Pure and deterministic: no IO, no clock. The only threads are a search's helpers
//! (`BALLAST_BALANCE_WORKERS`), which live inside one `plan` call and never change its moves.
//!
//! Architecture Invariant: this crate depends on `ballast-model` and serde only. The CI script
//! `scripts/check-deps` fails the build if tokio, rusqlite or the Kafka client ever appear here.
//!
//! [`plan`] turns a `ballast.snapshot/v1` into a `ballast.plan/v1`: fair share of the seven
//! loads, which loads count and trigger, a deterministic greedy search (or repairs while a broker
//! is down), the benefit test and structural limits. Rules that need a history of readings (four
//! readings in a row, the warm-up, three fresh measurements) are [`decide`]'s, on readings the
//! service keeps.
//!
//! [`whatif::simulate`] plans a cluster changed by operator scenarios; [`blast::analyze`] works
//! out what the failure of brokers or a rack does. Both are pure like the planner.

pub mod blast;
pub mod decision;
#[cfg(test)]
mod fixtures;
pub mod instances;
mod model;
pub mod placement;
mod plan;
mod policy;
mod proof;
mod prune;
mod search;
pub mod time;
mod vocab;
pub mod whatif;

pub use decision::{decide, Context, Decision, Reading};
pub use plan::{
    assess, plan, LoadSummary, Loads, Plan, PlannedMove, RackAwareness, RackLimit, SearchStats,
    StructuralLimit, TopicSpread, Tripped,
};
pub use policy::{Measuring, Policy, PARALLEL_MIN_CHUNK};
pub use whatif::{simulate, InputError, WhatIf, WhatIfRequest};

use ballast_model::{BrokerId, BrokerState, Load, LoadKind};
use serde::Serialize;

/// The snapshot as it will be once `plan`'s moves are done: replicas, leaders and in-sync
/// replicas updated, and `lastMovedAt` set to `moved_at` on every moved partition.
pub fn apply_plan(
    snapshot: &ballast_model::snapshot::Snapshot,
    plan: &Plan,
    moved_at: Option<&str>,
) -> ballast_model::snapshot::Snapshot {
    let mut out = snapshot.clone();
    let moves: std::collections::HashMap<(&str, i32), &PlannedMove> = plan
        .moves
        .iter()
        .map(|m| ((m.topic.as_str(), m.partition), m))
        .collect();
    for p in &mut out.partitions {
        if let Some(m) = moves.get(&(p.topic.as_str(), p.partition)) {
            p.replicas = m.replicas_after.clone();
            p.leader = m.leader_after;
            p.isr = Some(m.replicas_after.clone());
            p.last_moved_at = moved_at.map(str::to_string);
        }
    }
    out
}

/// Cluster average per broker below which a load reads `No traffic` and is not balanced.
pub const NO_TRAFFIC_MSG_PER_SEC: f64 = 1.0;
pub const NO_TRAFFIC_BYTES_PER_SEC: f64 = 1024.0;
pub const NO_TRAFFIC_DISK_BYTES: f64 = 1024.0 * 1024.0;

/// One broker's value of every load, indexed like [`Load::ALL`].
#[derive(Debug, Clone, PartialEq)]
pub struct BrokerLoads {
    pub broker: BrokerId,
    pub state: BrokerState,
    pub values: [f64; 7],
}

impl BrokerLoads {
    pub fn get(&self, load: Load) -> f64 {
        self.values[load_index(load)]
    }
}

/// Position of a load in [`Load::ALL`] and in [`BrokerLoads::values`].
pub fn load_index(load: Load) -> usize {
    match load {
        Load::LeaderCount => 0,
        Load::FollowerCount => 1,
        Load::DiskBytes => 2,
        Load::ProducerMsgRate => 3,
        Load::ProducerByteRate => 4,
        Load::ConsumerMsgRate => 5,
        Load::ConsumerByteRate => 6,
    }
}

/// Fair share of one load and every eligible broker's distance from it.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct LoadShare {
    pub load: Load,
    /// Sum over brokers that take load.
    pub total: f64,
    pub eligible_brokers: usize,
    /// `total / eligible_brokers`; 0 when no broker can take load.
    pub fair_share: f64,
    /// The cluster average is below the load's `No traffic` threshold: it is not balanced.
    pub no_traffic: bool,
    /// Distance in percent of every eligible broker, ordered by broker id.
    pub distances: Vec<(BrokerId, f64)>,
}

impl LoadShare {
    /// The broker farthest from fair share (largest absolute distance; lowest id on ties).
    pub fn farthest(&self) -> Option<(BrokerId, f64)> {
        self.distances
            .iter()
            .copied()
            .fold(None, |best, (b, d)| match best {
                Some((_, bd)) if f64::abs(bd) >= d.abs() => best,
                _ => Some((b, d)),
            })
    }
}

/// `(value - fair) / fair` in percent. A zero fair share gives 0 (nothing to balance).
pub fn distance_pct(value: f64, fair: f64) -> f64 {
    if fair <= 0.0 {
        0.0
    } else {
        (value - fair) / fair * 100.0
    }
}

/// Whether a cluster average per broker is below the `No traffic` threshold of its load.
/// Counts (leaders, followers) always carry traffic in this sense.
pub fn is_no_traffic(load: Load, average_per_broker: f64) -> bool {
    match load.kind() {
        LoadKind::Count => false,
        LoadKind::Disk => average_per_broker < NO_TRAFFIC_DISK_BYTES,
        LoadKind::MessageRate => average_per_broker < NO_TRAFFIC_MSG_PER_SEC,
        LoadKind::ByteRate => average_per_broker < NO_TRAFFIC_BYTES_PER_SEC,
    }
}

/// Fair share of every load over the brokers that can take load (alive, not in maintenance).
/// Brokers are considered in id order so the result does not depend on input order.
pub fn fair_shares(brokers: &[BrokerLoads]) -> Vec<LoadShare> {
    let mut eligible: Vec<&BrokerLoads> = brokers.iter().filter(|b| b.state.takes_load()).collect();
    eligible.sort_by_key(|b| b.broker);
    Load::ALL
        .into_iter()
        .map(|load| {
            let total: f64 = eligible.iter().map(|b| b.get(load)).sum();
            let n = eligible.len();
            let fair_share = if n == 0 { 0.0 } else { total / n as f64 };
            LoadShare {
                load,
                total,
                eligible_brokers: n,
                fair_share,
                no_traffic: n > 0 && is_no_traffic(load, fair_share),
                distances: eligible
                    .iter()
                    .map(|b| (b.broker, distance_pct(b.get(load), fair_share)))
                    .collect(),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn broker(id: BrokerId, state: BrokerState, values: [f64; 7]) -> BrokerLoads {
        BrokerLoads {
            broker: id,
            state,
            values,
        }
    }

    #[test]
    fn fair_share_is_total_over_brokers_that_take_load() {
        let brokers = [
            broker(1, BrokerState::Alive, [10.0, 0.0, 3e9, 0.0, 0.0, 0.0, 0.0]),
            broker(2, BrokerState::Alive, [20.0, 0.0, 1e9, 0.0, 0.0, 0.0, 0.0]),
            broker(3, BrokerState::Maintenance, [99.0; 7]),
            broker(4, BrokerState::Down, [99.0; 7]),
        ];
        let shares = fair_shares(&brokers);
        let leaders = &shares[load_index(Load::LeaderCount)];
        assert_eq!(leaders.eligible_brokers, 2);
        assert_eq!(leaders.fair_share, 15.0);
        let rounded: Vec<(BrokerId, i64)> = leaders
            .distances
            .iter()
            .map(|(b, d)| (*b, (d * 1000.0).round() as i64))
            .collect();
        assert_eq!(rounded, vec![(1, -33333), (2, 33333)]);
        let disk = &shares[load_index(Load::DiskBytes)];
        assert_eq!(disk.fair_share, 2e9);
        assert_eq!(disk.farthest(), Some((1, 50.0)));
    }

    #[test]
    fn no_traffic_thresholds_are_one_msg_one_kib_one_mib_per_broker() {
        assert!(is_no_traffic(Load::ProducerMsgRate, 0.99));
        assert!(!is_no_traffic(Load::ProducerMsgRate, 1.0));
        assert!(is_no_traffic(Load::ConsumerByteRate, 1023.9));
        assert!(!is_no_traffic(Load::ConsumerByteRate, 1024.0));
        assert!(is_no_traffic(Load::DiskBytes, 1048575.0));
        assert!(!is_no_traffic(Load::DiskBytes, 1048576.0));
        assert!(!is_no_traffic(Load::LeaderCount, 0.0));
    }

    #[test]
    fn quiet_rate_loads_read_no_traffic() {
        let brokers = [
            broker(
                1,
                BrokerState::Alive,
                [1.0, 1.0, 5e6, 0.5, 100.0, 3.0, 4096.0],
            ),
            broker(
                2,
                BrokerState::Alive,
                [1.0, 1.0, 5e6, 0.5, 100.0, 3.0, 4096.0],
            ),
        ];
        let shares = fair_shares(&brokers);
        let flags: Vec<bool> = shares.iter().map(|s| s.no_traffic).collect();
        assert_eq!(flags, [false, false, false, true, true, false, false]);
    }

    proptest! {
        #[test]
        fn fair_share_does_not_depend_on_broker_order(
            values in proptest::collection::vec(0.0f64..1e9, 1..20),
            rotate in 0usize..20,
        ) {
            let brokers: Vec<BrokerLoads> = values
                .iter()
                .enumerate()
                .map(|(i, v)| broker(i as BrokerId, BrokerState::Alive, [*v; 7]))
                .collect();
            let mut rotated = brokers.clone();
            rotated.rotate_left(rotate % brokers.len());
            prop_assert_eq!(fair_shares(&brokers), fair_shares(&rotated));
        }

        #[test]
        fn distances_of_eligible_brokers_sum_to_zero(
            values in proptest::collection::vec(1.0f64..1e9, 1..20),
        ) {
            let brokers: Vec<BrokerLoads> = values
                .iter()
                .enumerate()
                .map(|(i, v)| broker(i as BrokerId, BrokerState::Alive, [*v; 7]))
                .collect();
            for share in fair_shares(&brokers) {
                let sum: f64 = share.distances.iter().map(|(_, d)| d).sum();
                prop_assert!(sum.abs() < 1e-6 * values.len() as f64);
            }
        }
    }
}
