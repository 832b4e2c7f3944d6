//! The words the planner's stages share, below all of them: what the search evens
//! ([`Targets`], read by the search, the pruning, the proofs and the plan) and how the plan
//! ranks a repair copy ([`RepairKey`], carried through the search's workers). The moves
//! themselves ([`Action`](crate::model::Action)) and their load changes
//! ([`Effect`](crate::model::Effect)) live in the model, which applies them. Every stage takes
//! these from here or from the model; neither reads back up into a stage.

use crate::model::Bx;

/// What the search knows about the loads it evens.
#[derive(Clone)]
pub struct Targets {
    pub fair: [f64; 7],
    /// Each load summed over the brokers: fair share is this over `eligible_count`, and
    /// [`Targets::dev`] reads distances from it.
    pub total: [f64; 7],
    /// Loads that count (have traffic and are above their floor).
    pub counted: [bool; 7],
    /// Counted loads that triggered: they are evened to within the threshold.
    pub active: [bool; 7],
    /// Loads left alone because their imbalance is below `BALLAST_BALANCE_FLOOR`, with that
    /// floor: moves must not push a broker beyond the trigger on them (or farther beyond it).
    pub floor: [Option<f64>; 7],
    /// Counted loads within the trigger before the plan: a move never pushes a broker beyond
    /// the trigger on them (or farther beyond it), even when they are evened with another
    /// (disk, leader and follower count are evened together once one of them triggers).
    pub kept: [bool; 7],
    pub threshold: f64,
    pub trigger: f64,
    pub eligible: Vec<bool>,
    pub eligible_count: usize,
}

impl Targets {
    /// Distance in percent of a load value from fair share. Read from the total, not from fair
    /// share (a rounded quotient): for counts every step but the last division is exact, so
    /// a broker exactly at the trigger reads exactly the trigger (6 followers of 20 over 3
    /// brokers is -10%, where (6 - 20/3) / (20/3) is -10.000000000000004%) and is within it.
    pub fn dev(&self, load: usize, value: f64) -> f64 {
        let total = self.total[load];
        if self.fair[load] <= 0.0 || total <= 0.0 {
            0.0
        } else {
            (value * self.eligible_count as f64 - total) * 100.0 / total
        }
    }
}

/// How the plan's repair of a partition on too few racks (`plan::repair_copy`) ranks a candidate copy `pair` (from, to): the lower the better, in field
/// order.
pub(crate) struct RepairKey {
    pub(crate) over: bool,
    pub(crate) harm: u32,
    pub(crate) disk: f64,
    pub(crate) leader: bool,
    /// Leadership goes elsewhere than the first replica of the new list.
    pub(crate) moved_lead: bool,
    /// From, to, and the new leader.
    pub(crate) pair: (Bx, Bx, Bx),
}

impl RepairKey {
    pub(crate) fn before(&self, o: &RepairKey) -> bool {
        (self.over, self.harm)
            .cmp(&(o.over, o.harm))
            .then(self.disk.total_cmp(&o.disk))
            .then((self.leader, self.moved_lead, self.pair).cmp(&(o.leader, o.moved_lead, o.pair)))
            == std::cmp::Ordering::Less
    }
}
