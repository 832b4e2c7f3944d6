//! Which moves go next. A move's copies are split into steps that each add one replica (never
//! more than one added replica in flight per partition); a wave is the steps that fit under the
//! per-broker cap of concurrent moves, partitions at or under min ISR first, spread across brokers.

use std::collections::BTreeMap;

use ballast_model::BrokerId;

/// The replica lists a move goes through, ending at `target` (in `target`'s order, so its first
/// replica is the preferred leader). Every step adds at most one broker: replaced replicas are
/// swapped one for one, then further added replicas (a growing replication factor) come one per
/// step, then further removed ones (a shrinking replication factor) go in one last step of their
/// own. A move that only reorders, adds one, or only removes is one step.
pub fn steps(source: &[BrokerId], target: &[BrokerId]) -> Vec<Vec<BrokerId>> {
    let adding: Vec<BrokerId> = target
        .iter()
        .copied()
        .filter(|b| !source.contains(b))
        .collect();
    let removing: Vec<BrokerId> = source
        .iter()
        .copied()
        .filter(|b| !target.contains(b))
        .collect();
    let mut out: Vec<Vec<BrokerId>> = Vec::new();
    let mut current = source.to_vec();
    for (add, remove) in adding.iter().zip(&removing) {
        for r in current.iter_mut() {
            if r == remove {
                *r = *add;
            }
        }
        out.push(current.clone());
    }
    for add in adding.iter().skip(removing.len()) {
        current.push(*add);
        out.push(current.clone());
    }
    if removing.len() > adding.len() {
        current.retain(|b| target.contains(b));
        out.push(current);
    }
    // The last step is the target itself, in its order.
    match out.last_mut() {
        Some(last) => *last = target.to_vec(),
        None => out.push(target.to_vec()),
    }
    out
}

/// A move step waiting for capacity.
#[derive(Debug, Clone, PartialEq)]
pub struct Waiting {
    pub id: u64,
    /// Brokers the step copies to or removes from; each counts one move against its cap.
    pub brokers: Vec<BrokerId>,
    /// In-sync replicas minus min.insync.replicas: 0 or less means at or under min ISR.
    pub isr_margin: i32,
    pub bytes: u64,
}

/// The steps to submit now, given how many moves each broker already has in flight.
/// Order: at or under min ISR first, then the least busy brokers, then larger copies first
/// (they take longest), then id, so the same input always gives the same wave.
pub fn next_wave(
    waiting: &[Waiting],
    in_flight: &BTreeMap<BrokerId, usize>,
    cap: usize,
) -> Vec<u64> {
    let mut load: BTreeMap<BrokerId, usize> = in_flight.clone();
    let mut order: Vec<&Waiting> = waiting.iter().collect();
    order.sort_by(|a, b| {
        let busy = |w: &Waiting| {
            w.brokers
                .iter()
                .map(|x| in_flight.get(x).copied().unwrap_or(0))
                .max()
                .unwrap_or(0)
        };
        (a.isr_margin > 0)
            .cmp(&(b.isr_margin > 0))
            .then(busy(a).cmp(&busy(b)))
            .then(b.bytes.cmp(&a.bytes))
            .then(a.id.cmp(&b.id))
    });
    let mut chosen = Vec::new();
    for w in order {
        if w.brokers
            .iter()
            .all(|b| load.get(b).copied().unwrap_or(0) < cap)
        {
            for b in &w.brokers {
                *load.entry(*b).or_default() += 1;
            }
            chosen.push(w.id);
        }
    }
    chosen
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_move_adding_two_replicas_goes_one_added_replica_at_a_time() {
        assert_eq!(
            steps(&[1, 2, 3], &[4, 5, 3]),
            vec![vec![4, 2, 3], vec![4, 5, 3]]
        );
        assert_eq!(steps(&[1, 2, 3], &[4, 2, 3]), vec![vec![4, 2, 3]]);
        assert_eq!(steps(&[1, 2, 3], &[3, 1, 2]), vec![vec![3, 1, 2]]);
    }

    #[test]
    fn every_step_keeps_the_replication_factor_and_ends_at_the_target() {
        let (source, target) = ([1, 2, 3, 4], [5, 6, 7, 4]);
        let s = steps(&source, &target);
        assert_eq!(s.last().map(Vec::as_slice), Some(&target[..]));
        for (i, step) in s.iter().enumerate() {
            assert_eq!(step.len(), 4);
            let before = if i == 0 {
                source.to_vec()
            } else {
                s[i - 1].clone()
            };
            let added = step.iter().filter(|b| !before.contains(b)).count();
            assert_eq!(
                added, 1,
                "one added replica per step: {before:?} -> {step:?}"
            );
        }
    }

    /// Every step adds at most one replica to the one before and the last is the target.
    fn check_steps(source: &[BrokerId], target: &[BrokerId]) -> Vec<Vec<BrokerId>> {
        let s = steps(source, target);
        assert_eq!(s.last().map(Vec::as_slice), Some(target));
        let mut before = source.to_vec();
        for step in &s {
            let added = step.iter().filter(|b| !before.contains(b)).count();
            assert!(
                added <= 1,
                "one added replica per step: {before:?} -> {step:?}"
            );
            before = step.clone();
        }
        s
    }

    #[test]
    fn growing_the_replication_factor_adds_one_replica_per_step() {
        assert_eq!(
            check_steps(&[1, 2], &[1, 2, 3, 4]),
            vec![vec![1, 2, 3], vec![1, 2, 3, 4]]
        );
        // Replaced replicas are swapped first, then the extra ones are added.
        assert_eq!(
            check_steps(&[1, 2], &[3, 4, 5]),
            vec![vec![3, 2], vec![3, 4], vec![3, 4, 5]]
        );
        assert_eq!(check_steps(&[1, 2], &[1, 2, 3]), vec![vec![1, 2, 3]]);
    }

    #[test]
    fn shrinking_the_replication_factor_removes_in_a_step_of_its_own() {
        assert_eq!(check_steps(&[1, 2, 3, 4], &[1, 2]), vec![vec![1, 2]]);
        assert_eq!(
            check_steps(&[1, 2, 3, 4], &[5, 2]),
            vec![vec![5, 2, 3, 4], vec![5, 2]]
        );
        assert_eq!(
            check_steps(&[1, 2, 3], &[4, 5]),
            vec![vec![4, 2, 3], vec![4, 5, 3], vec![4, 5]]
        );
    }

    #[test]
    fn no_step_of_any_move_adds_more_than_one_replica() {
        let sets: [&[BrokerId]; 7] = [
            &[1],
            &[1, 2],
            &[2, 1],
            &[1, 2, 3],
            &[4, 5, 6, 7],
            &[3, 6, 1, 8, 2],
            &[9, 8, 7],
        ];
        for source in sets {
            for target in sets {
                check_steps(source, target);
            }
        }
    }

    fn w(id: u64, brokers: &[BrokerId], isr_margin: i32, bytes: u64) -> Waiting {
        Waiting {
            id,
            brokers: brokers.to_vec(),
            isr_margin,
            bytes,
        }
    }

    #[test]
    fn no_broker_exceeds_its_cap_of_concurrent_moves() {
        let waiting: Vec<Waiting> = (0..10)
            .map(|i| w(i, &[1, 2 + (i as i32 % 3)], 1, 100))
            .collect();
        let wave = next_wave(&waiting, &BTreeMap::new(), 4);
        assert_eq!(wave.len(), 4, "broker 1 takes part in every move: {wave:?}");
        let busy: BTreeMap<BrokerId, usize> = [(1, 2)].into_iter().collect();
        assert_eq!(next_wave(&waiting, &busy, 4).len(), 2);
    }

    #[test]
    fn partitions_at_or_under_min_isr_go_first() {
        let waiting = vec![
            w(1, &[1, 2], 1, 1000),
            w(2, &[1, 3], 0, 10),
            w(3, &[1, 4], -1, 10),
        ];
        assert_eq!(next_wave(&waiting, &BTreeMap::new(), 2), vec![2, 3]);
    }

    #[test]
    fn moves_are_spread_to_the_least_busy_brokers_first() {
        let waiting = vec![w(1, &[1, 2], 1, 10), w(2, &[3, 4], 1, 10)];
        let busy: BTreeMap<BrokerId, usize> = [(1, 3)].into_iter().collect();
        assert_eq!(next_wave(&waiting, &busy, 4), vec![2, 1]);
    }
}
