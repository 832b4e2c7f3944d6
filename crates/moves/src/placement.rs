//! Placement planners for the operator's reassignment tools (pure, deterministic): spreading one
//! topic evenly over chosen brokers, and draining a broker for maintenance. Proposals come from
//! the balancer; these answer narrower requests with as few moves as possible.

use std::collections::{BTreeMap, BTreeSet};

use ballast_model::BrokerId;

/// A partition as the planners see it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Part {
    pub topic: String,
    pub partition: i32,
    pub replicas: Vec<BrokerId>,
    pub isr: Vec<BrokerId>,
    pub leader: Option<BrokerId>,
}

/// A planned change of one partition.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Planned {
    pub topic: String,
    pub partition: i32,
    pub source: Vec<BrokerId>,
    pub target: Vec<BrokerId>,
}

fn rack_of(racks: &BTreeMap<BrokerId, Option<String>>, b: BrokerId) -> Option<&str> {
    racks.get(&b).and_then(|r| r.as_deref())
}

/// Spreads the replicas of one topic's `parts` evenly over `eligible` brokers (each within one
/// replica of the others), keeping every replication factor, replacing replicas on brokers that
/// are not eligible (same rack preferred), moving as few replicas as it can, then evening out
/// preferred leaders by reordering. Returns the partitions whose replica list changes.
pub fn spread_topic(
    parts: &[Part],
    eligible: &BTreeSet<BrokerId>,
    racks: &BTreeMap<BrokerId, Option<String>>,
) -> Vec<Planned> {
    if eligible.is_empty() {
        return Vec::new();
    }
    let mut targets: Vec<Vec<BrokerId>> = parts.iter().map(|p| p.replicas.clone()).collect();
    let mut counts: BTreeMap<BrokerId, usize> = eligible.iter().map(|b| (*b, 0)).collect();
    for t in &targets {
        for b in t {
            if let Some(c) = counts.get_mut(b) {
                *c += 1;
            }
        }
    }
    // Replicas on brokers that are not eligible move first.
    for t in targets.iter_mut() {
        for slot in 0..t.len() {
            let old = t[slot];
            if eligible.contains(&old) {
                continue;
            }
            let old_rack = rack_of(racks, old);
            let dest = counts
                .iter()
                .filter(|(b, _)| !t.contains(b))
                .min_by_key(|(b, n)| (**n, rack_of(racks, **b) != old_rack, **b))
                .map(|(b, _)| *b);
            if let Some(d) = dest {
                t[slot] = d;
                *counts.entry(d).or_default() += 1;
            }
        }
    }
    // Then even out: the busiest broker gives a replica to the least busy one.
    let bound = parts.len() * 8 + 16;
    for _ in 0..bound {
        let Some((&hi, &hn)) = counts
            .iter()
            .max_by_key(|(b, n)| (**n, std::cmp::Reverse(**b)))
        else {
            break;
        };
        let Some((&lo, &ln)) = counts.iter().min_by_key(|(b, n)| (**n, **b)) else {
            break;
        };
        if hn <= ln + 1 {
            break;
        }
        // Prefer a partition where `hi` follows (no leadership change), then the lowest id.
        let candidate = targets
            .iter()
            .enumerate()
            .filter(|(_, t)| t.contains(&hi) && !t.contains(&lo))
            .min_by_key(|(i, t)| (t.first() == Some(&hi), *i))
            .map(|(i, _)| i);
        let Some(i) = candidate else {
            break;
        };
        for r in targets[i].iter_mut() {
            if *r == hi {
                *r = lo;
            }
        }
        *counts.entry(hi).or_default() -= 1;
        *counts.entry(lo).or_default() += 1;
    }
    // Preferred leaders: at most ceil(partitions / brokers) each, by reordering only.
    let cap = parts.len().div_ceil(eligible.len());
    let mut leads: BTreeMap<BrokerId, usize> = BTreeMap::new();
    for t in &targets {
        if let Some(first) = t.first() {
            *leads.entry(*first).or_default() += 1;
        }
    }
    for t in targets.iter_mut() {
        let Some(&first) = t.first() else {
            continue;
        };
        if leads.get(&first).copied().unwrap_or(0) <= cap {
            continue;
        }
        if let Some((pos, &better)) = t
            .iter()
            .enumerate()
            .skip(1)
            .min_by_key(|(_, b)| (leads.get(b).copied().unwrap_or(0), **b))
        {
            if leads.get(&better).copied().unwrap_or(0) + 1
                < leads.get(&first).copied().unwrap_or(0)
            {
                t.swap(0, pos);
                *leads.entry(first).or_default() -= 1;
                *leads.entry(better).or_default() += 1;
            }
        }
    }
    parts
        .iter()
        .zip(targets)
        .filter(|(p, t)| p.replicas != *t)
        .map(|(p, t)| Planned {
            topic: p.topic.clone(),
            partition: p.partition,
            source: p.replicas.clone(),
            target: t,
        })
        .collect()
}

/// A maintenance drain of `broker`: first its leadership (phase 0: the broker goes to the end of
/// each replica list it heads, the in-sync replica leading the fewest partitions first), then its
/// replicas (phase 1: each moved to an eligible broker not already holding the partition, same
/// rack preferred, then the least loaded). Partitions with nowhere to go are returned as skipped.
pub struct Drain {
    pub leadership: Vec<Planned>,
    pub replicas: Vec<Planned>,
    pub skipped: Vec<(String, i32, String)>,
}

pub fn drain(
    broker: BrokerId,
    parts: &[Part],
    eligible: &BTreeSet<BrokerId>,
    racks: &BTreeMap<BrokerId, Option<String>>,
    load: &BTreeMap<BrokerId, usize>,
) -> Drain {
    let mut leads: BTreeMap<BrokerId, usize> = BTreeMap::new();
    for p in parts {
        if let Some(l) = p.leader {
            *leads.entry(l).or_default() += 1;
        }
    }
    let mut load: BTreeMap<BrokerId, usize> = eligible
        .iter()
        .map(|b| (*b, load.get(b).copied().unwrap_or(0)))
        .collect();
    let mut out = Drain {
        leadership: Vec::new(),
        replicas: Vec::new(),
        skipped: Vec::new(),
    };
    let home = rack_of(racks, broker);
    for p in parts.iter().filter(|p| p.replicas.contains(&broker)) {
        let mut order = p.replicas.clone();
        if order.first() == Some(&broker) || p.leader == Some(broker) {
            let next = order
                .iter()
                .filter(|b| **b != broker && p.isr.contains(b))
                .min_by_key(|b| (leads.get(b).copied().unwrap_or(0), **b))
                .copied()
                .or_else(|| order.iter().find(|b| **b != broker).copied());
            if let Some(next) = next {
                order.retain(|b| *b != broker && *b != next);
                order.insert(0, next);
                order.push(broker);
                *leads.entry(next).or_default() += 1;
                if order != p.replicas {
                    out.leadership.push(Planned {
                        topic: p.topic.clone(),
                        partition: p.partition,
                        source: p.replicas.clone(),
                        target: order.clone(),
                    });
                }
            }
        }
        let dest = load
            .iter()
            .filter(|(b, _)| **b != broker && !order.contains(b))
            .min_by_key(|(b, n)| (rack_of(racks, **b) != home, **n, **b))
            .map(|(b, _)| *b);
        match dest {
            Some(d) => {
                let target: Vec<BrokerId> = order
                    .iter()
                    .map(|b| if *b == broker { d } else { *b })
                    .collect();
                *load.entry(d).or_default() += 1;
                out.replicas.push(Planned {
                    topic: p.topic.clone(),
                    partition: p.partition,
                    source: order,
                    target,
                });
            }
            None => out.skipped.push((
                p.topic.clone(),
                p.partition,
                "no eligible broker outside the partition's replicas".to_string(),
            )),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn part(partition: i32, replicas: &[BrokerId]) -> Part {
        Part {
            topic: "orders".into(),
            partition,
            replicas: replicas.to_vec(),
            isr: replicas.to_vec(),
            leader: replicas.first().copied(),
        }
    }

    fn set(ids: &[BrokerId]) -> BTreeSet<BrokerId> {
        ids.iter().copied().collect()
    }

    #[test]
    fn a_topic_spread_leaves_every_broker_within_one_replica_and_keeps_replication_factors() {
        let parts: Vec<Part> = (0..6).map(|i| part(i, &[1, 2])).collect();
        let planned = spread_topic(&parts, &set(&[1, 2, 3, 4]), &BTreeMap::new());
        let mut after: Vec<Vec<BrokerId>> = parts.iter().map(|p| p.replicas.clone()).collect();
        for p in &planned {
            after[p.partition as usize] = p.target.clone();
        }
        let mut counts: BTreeMap<BrokerId, usize> = BTreeMap::new();
        for t in &after {
            assert_eq!(t.len(), 2);
            assert_eq!(
                t.iter().collect::<BTreeSet<_>>().len(),
                2,
                "no duplicate: {t:?}"
            );
            for b in t {
                *counts.entry(*b).or_default() += 1;
            }
        }
        assert_eq!(
            counts.values().copied().collect::<Vec<_>>(),
            vec![3, 3, 3, 3]
        );
        // Moves as little as it can: 6 of the 12 replicas change brokers.
        let moved: usize = planned
            .iter()
            .map(|p| p.target.iter().filter(|b| !p.source.contains(b)).count())
            .sum();
        assert_eq!(moved, 6);
    }

    #[test]
    fn a_balanced_topic_is_left_alone() {
        let parts = vec![part(0, &[1, 2]), part(1, &[2, 3]), part(2, &[3, 1])];
        assert!(spread_topic(&parts, &set(&[1, 2, 3]), &BTreeMap::new()).is_empty());
    }

    #[test]
    fn replicas_on_brokers_not_chosen_move_to_the_same_rack_first() {
        let racks: BTreeMap<BrokerId, Option<String>> = [
            (1, Some("a".to_string())),
            (2, Some("b".to_string())),
            (3, Some("a".to_string())),
            (4, Some("b".to_string())),
        ]
        .into_iter()
        .collect();
        let parts = vec![part(0, &[1, 2])];
        let planned = spread_topic(&parts, &set(&[2, 3, 4]), &racks);
        assert_eq!(
            planned[0].target,
            vec![3, 2],
            "broker 1 (rack a) replaced by 3 (rack a)"
        );
    }

    #[test]
    fn a_drain_moves_leadership_first_then_replicas_to_the_same_rack() {
        let racks: BTreeMap<BrokerId, Option<String>> = [
            (1, Some("a".to_string())),
            (2, Some("b".to_string())),
            (3, Some("a".to_string())),
            (4, Some("b".to_string())),
        ]
        .into_iter()
        .collect();
        let parts = vec![part(0, &[1, 2]), part(1, &[2, 1]), part(2, &[2, 4])];
        let load: BTreeMap<BrokerId, usize> = [(2, 3), (3, 0), (4, 1)].into_iter().collect();
        let d = drain(1, &parts, &set(&[2, 3, 4]), &racks, &load);
        assert_eq!(d.leadership.len(), 1);
        assert_eq!(d.leadership[0].target, vec![2, 1]);
        assert_eq!(d.replicas.len(), 2);
        for m in &d.replicas {
            assert!(!m.target.contains(&1));
            assert!(
                m.target.contains(&3),
                "same rack as broker 1: {:?}",
                m.target
            );
            assert_eq!(m.target.len(), 2);
        }
        // The replica move starts where the leadership move ended.
        assert_eq!(d.replicas[0].source, vec![2, 1]);
        assert!(d.skipped.is_empty());
    }

    #[test]
    fn a_drain_with_nowhere_to_go_skips_the_partition() {
        let parts = vec![part(0, &[1, 2])];
        let load = BTreeMap::new();
        let d = drain(1, &parts, &set(&[2]), &BTreeMap::new(), &load);
        assert_eq!(d.skipped.len(), 1);
        assert!(d.replicas.is_empty());
    }
}
