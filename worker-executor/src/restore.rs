//! Putting a partition back exactly as it was after a cancelled (or reverted) step.
//!
//! Kafka's cancel (AlterPartitionReassignments with no target) gives the partition back its
//! original replica *set*, not its order: the KRaft controller takes the current replica list
//! (target first, then the replicas being removed) and drops the ones being added, so cancelling
//! `[1,2]` -> `[3,2]` leaves `[2,1]`. The preferred leader changed, and Kafka's own leader
//! rebalance then moves leadership. [`next`] says what is left to do, from the cluster's view
//! alone, so a restarted executor repeats nothing it should not: a reorder to the original
//! order (it adds no replica, so it completes at once and copies nothing), then a preferred
//! leader election.

use ballast_model::BrokerId;

/// What is left to put a partition back as it was.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Restore {
    /// As it was: the original order, led by its first replica.
    Done,
    /// The original replicas in another order: reassign to exactly this list.
    Reorder(Vec<BrokerId>),
    /// The original order is back; its first replica should lead and can: elect it.
    Elect(BrokerId),
    /// The original order is back, but its first replica cannot lead now (down or not in sync).
    Wait(String),
    /// The partition no longer has the original replicas (changed by someone else since): there
    /// is nothing to put back.
    Changed(Vec<BrokerId>),
}

/// What is left to give a partition with `replicas`, `isr` and `leader` the `original` replica
/// list and leader (its first replica).
pub fn next(
    original: &[BrokerId],
    replicas: &[BrokerId],
    isr: &[BrokerId],
    leader: Option<BrokerId>,
) -> Restore {
    let mut a = original.to_vec();
    let mut b = replicas.to_vec();
    a.sort_unstable();
    b.sort_unstable();
    if a != b {
        return Restore::Changed(replicas.to_vec());
    }
    if replicas != original {
        return Restore::Reorder(original.to_vec());
    }
    let Some(&preferred) = original.first() else {
        return Restore::Done;
    };
    if leader == Some(preferred) {
        return Restore::Done;
    }
    if isr.contains(&preferred) {
        Restore::Elect(preferred)
    } else {
        Restore::Wait(format!(
            "the preferred leader {preferred} is not in sync; elected once it is"
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cancel_that_scrambled_the_order_is_put_back_by_a_reorder_to_the_exact_original_list() {
        // [1,2] -> [3,2] cancelled: Kafka leaves [2,1] (still led by 1).
        assert_eq!(
            next(&[1, 2], &[2, 1], &[2, 1], Some(1)),
            Restore::Reorder(vec![1, 2])
        );
        // [2,1] -> [3,1] cancelled: Kafka leaves [1,2].
        assert_eq!(
            next(&[2, 1], &[1, 2], &[1, 2], Some(2)),
            Restore::Reorder(vec![2, 1])
        );
    }

    #[test]
    fn once_the_order_is_back_the_original_preferred_leader_is_elected_if_it_does_not_lead() {
        // Kafka's leader rebalance moved leadership to 2 while the order was [2,1].
        assert_eq!(next(&[1, 2], &[1, 2], &[1, 2], Some(2)), Restore::Elect(1));
        assert_eq!(next(&[1, 2], &[1, 2], &[1, 2], Some(1)), Restore::Done);
    }

    #[test]
    fn a_preferred_leader_out_of_sync_is_waited_for_not_elected() {
        assert!(matches!(
            next(&[1, 2], &[1, 2], &[2], Some(2)),
            Restore::Wait(_)
        ));
        assert!(matches!(
            next(&[1, 2], &[1, 2], &[2], None),
            Restore::Wait(_)
        ));
    }

    #[test]
    fn a_partition_whose_replicas_changed_since_is_left_alone() {
        assert_eq!(
            next(&[1, 2], &[3, 2], &[3, 2], Some(3)),
            Restore::Changed(vec![3, 2])
        );
    }
}
