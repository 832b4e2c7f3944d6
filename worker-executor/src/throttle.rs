//! The throttle settings for a set of moves in flight, as Kafka's own reassignment tool sets
//! them: the replication rates on every broker taking part, the leader throttle list naming the
//! replicas copies are read from, and the follower throttle list naming the replicas being added.

use std::collections::{BTreeMap, BTreeSet};

use ballast_model::BrokerId;

/// One partition being moved: its replicas before the move and the ones being added.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Moving {
    pub topic: String,
    pub partition: i32,
    pub source: Vec<BrokerId>,
    pub adding: Vec<BrokerId>,
}

/// Every throttle config that should be set, and nothing else.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Throttles {
    /// Brokers that get `leader.replication.throttled.rate` and `follower.replication.throttled.rate`.
    pub brokers: BTreeSet<BrokerId>,
    /// Bytes per second for both rates.
    pub rate: u64,
    /// Per topic: `leader.replication.throttled.replicas` entries (`partition:broker`).
    pub leader_replicas: BTreeMap<String, BTreeSet<String>>,
    /// Per topic: `follower.replication.throttled.replicas` entries (`partition:broker`).
    pub follower_replicas: BTreeMap<String, BTreeSet<String>>,
}

impl Throttles {
    /// A topic's list as Kafka writes it: comma-separated, sorted.
    pub fn list(entries: &BTreeSet<String>) -> String {
        entries.iter().cloned().collect::<Vec<_>>().join(",")
    }
}

pub fn for_moves(moves: &[Moving], rate_mb: u64) -> Throttles {
    let mut t = Throttles {
        rate: rate_mb.saturating_mul(1_000_000),
        ..Throttles::default()
    };
    for m in moves.iter().filter(|m| !m.adding.is_empty()) {
        for b in &m.source {
            t.brokers.insert(*b);
            t.leader_replicas
                .entry(m.topic.clone())
                .or_default()
                .insert(format!("{}:{b}", m.partition));
        }
        for b in &m.adding {
            t.brokers.insert(*b);
            t.follower_replicas
                .entry(m.topic.clone())
                .or_default()
                .insert(format!("{}:{b}", m.partition));
        }
    }
    t
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn throttles_name_exactly_the_moving_replicas() {
        let moves = vec![
            Moving {
                topic: "orders".into(),
                partition: 0,
                source: vec![1, 2, 3],
                adding: vec![4],
            },
            Moving {
                topic: "orders".into(),
                partition: 5,
                source: vec![2, 3, 5],
                adding: vec![6],
            },
            // Leadership only: nothing is copied, nothing is throttled.
            Moving {
                topic: "clicks".into(),
                partition: 1,
                source: vec![1, 2],
                adding: vec![],
            },
        ];
        let t = for_moves(&moves, 50);
        assert_eq!(t.rate, 50_000_000);
        assert_eq!(t.brokers, [1, 2, 3, 4, 5, 6].into_iter().collect());
        assert_eq!(
            Throttles::list(&t.leader_replicas["orders"]),
            "0:1,0:2,0:3,5:2,5:3,5:5"
        );
        assert_eq!(Throttles::list(&t.follower_replicas["orders"]), "0:4,5:6");
        assert!(!t.leader_replicas.contains_key("clicks"));
    }

    #[test]
    fn no_moves_means_no_throttles() {
        assert_eq!(
            for_moves(&[], 50),
            Throttles {
                rate: 50_000_000,
                ..Throttles::default()
            }
        );
    }
}
