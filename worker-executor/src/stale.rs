//! The pre-submission stale-plan check of the interface spec: before a move is sent, its live
//! replicas are compared with the planned source and target.

use ballast_model::BrokerId;

/// What to do with a move given the partition's live replicas.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// Send it (it may already be at its target or partway along its own path: both are fine).
    Submit,
    /// Never send it: the cluster changed under the plan. The reason begins `stale plan: live replicas`.
    Stale(String),
}

/// The live replicas contain a broker in neither the planned source nor the target, or lack a
/// broker that both source and target keep: the plan no longer describes this partition.
pub fn check(source: &[BrokerId], target: &[BrokerId], live: &[BrokerId]) -> Verdict {
    if let Some(b) = live
        .iter()
        .find(|b| !source.contains(b) && !target.contains(b))
    {
        return Verdict::Stale(format!(
            "stale plan: live replicas {live:?} include broker {b}, which is in neither the planned source {source:?} nor the target {target:?}"
        ));
    }
    if let Some(b) = source
        .iter()
        .find(|b| target.contains(b) && !live.contains(b))
    {
        return Verdict::Stale(format!(
            "stale plan: live replicas {live:?} lack broker {b}, which both the planned source {source:?} and the target {target:?} keep"
        ));
    }
    Verdict::Submit
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_partition_as_planned_is_submitted() {
        assert_eq!(check(&[1, 2, 3], &[4, 2, 3], &[1, 2, 3]), Verdict::Submit);
    }

    #[test]
    fn a_partition_already_at_its_target_or_partway_is_submitted_normally() {
        assert_eq!(check(&[1, 2, 3], &[4, 2, 3], &[4, 2, 3]), Verdict::Submit);
        // Partway through its own move: the added replica is there, the old one not yet gone.
        assert_eq!(
            check(&[1, 2, 3], &[4, 2, 3], &[1, 2, 3, 4]),
            Verdict::Submit
        );
        // Reordered only (a leadership change in progress).
        assert_eq!(check(&[1, 2, 3], &[3, 2, 1], &[2, 1, 3]), Verdict::Submit);
    }

    #[test]
    fn a_broker_in_neither_source_nor_target_makes_the_plan_stale() {
        let Verdict::Stale(reason) = check(&[1, 2, 3], &[4, 2, 3], &[5, 2, 3]) else {
            panic!("expected stale");
        };
        assert!(reason.starts_with("stale plan: live replicas"), "{reason}");
        assert!(reason.contains("broker 5"), "{reason}");
    }

    #[test]
    fn a_missing_broker_that_both_keep_makes_the_plan_stale() {
        let Verdict::Stale(reason) = check(&[1, 2, 3], &[4, 2, 3], &[1, 3]) else {
            panic!("expected stale");
        };
        assert!(reason.starts_with("stale plan: live replicas"), "{reason}");
        assert!(reason.contains("lack broker 2"), "{reason}");
    }
}
