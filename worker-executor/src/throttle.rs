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

pub const LEADER_RATE: &str = "leader.replication.throttled.rate";
pub const FOLLOWER_RATE: &str = "follower.replication.throttled.rate";
pub const LEADER_REPLICAS: &str = "leader.replication.throttled.replicas";
pub const FOLLOWER_REPLICAS: &str = "follower.replication.throttled.replicas";

/// Where a throttle config lives.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub enum Target {
    Broker(BrokerId),
    /// The cluster-wide dynamic broker default.
    BrokerDefaults,
    Topic(String),
}

/// One config change: `Some(value)` sets, `None` deletes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Change {
    pub target: Target,
    pub name: &'static str,
    pub value: Option<String>,
}

/// Throttle configs found set in the cluster (e.g. left behind by an earlier run or another
/// tool): per target, the names set. Everything here that the desired state does not want is
/// deleted.
pub type Found = BTreeMap<Target, BTreeSet<&'static str>>;

/// The changes that take the cluster from `applied` (what we set, or found set) to `desired`.
pub fn changes(applied: &Throttles, found: &Found, desired: &Throttles) -> Vec<Change> {
    let mut out = Vec::new();
    let rate = desired.rate.to_string();
    for b in &desired.brokers {
        if !applied.brokers.contains(b) || applied.rate != desired.rate {
            for name in [LEADER_RATE, FOLLOWER_RATE] {
                out.push(Change {
                    target: Target::Broker(*b),
                    name,
                    value: Some(rate.clone()),
                });
            }
        }
    }
    for (topic, name, want, had) in [
        (
            &desired.leader_replicas,
            LEADER_REPLICAS,
            &desired.leader_replicas,
            &applied.leader_replicas,
        ),
        (
            &desired.follower_replicas,
            FOLLOWER_REPLICAS,
            &desired.follower_replicas,
            &applied.follower_replicas,
        ),
    ]
    .into_iter()
    .flat_map(|(topics, name, want, had)| topics.keys().map(move |t| (t, name, want, had)))
    {
        if had.get(topic) != want.get(topic) {
            out.push(Change {
                target: Target::Topic(topic.clone()),
                name,
                value: want.get(topic).map(Throttles::list),
            });
        }
    }
    // Deletions: what was applied or found and is no longer wanted.
    let mut stale: Found = found.clone();
    for b in &applied.brokers {
        stale
            .entry(Target::Broker(*b))
            .or_default()
            .extend([LEADER_RATE, FOLLOWER_RATE]);
    }
    for t in applied.leader_replicas.keys() {
        stale
            .entry(Target::Topic(t.clone()))
            .or_default()
            .insert(LEADER_REPLICAS);
    }
    for t in applied.follower_replicas.keys() {
        stale
            .entry(Target::Topic(t.clone()))
            .or_default()
            .insert(FOLLOWER_REPLICAS);
    }
    for (target, names) in stale {
        for name in names {
            let wanted = match (&target, name) {
                (Target::Broker(b), LEADER_RATE | FOLLOWER_RATE) => desired.brokers.contains(b),
                (Target::Topic(t), LEADER_REPLICAS) => desired.leader_replicas.contains_key(t),
                (Target::Topic(t), FOLLOWER_REPLICAS) => desired.follower_replicas.contains_key(t),
                _ => false,
            };
            if !wanted {
                out.push(Change {
                    target: target.clone(),
                    name,
                    value: None,
                });
            }
        }
    }
    out
}

/// The name of a throttle config as a static string, if it is one.
pub fn throttle_name(name: &str) -> Option<&'static str> {
    [
        LEADER_RATE,
        FOLLOWER_RATE,
        LEADER_REPLICAS,
        FOLLOWER_REPLICAS,
    ]
    .into_iter()
    .find(|n| *n == name)
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

    fn one_move() -> Vec<Moving> {
        vec![Moving {
            topic: "orders".into(),
            partition: 0,
            source: vec![1, 2],
            adding: vec![3],
        }]
    }

    #[test]
    fn leftover_throttles_found_at_start_are_cleared() {
        let found: Found = [
            (Target::Broker(7), [LEADER_RATE].into_iter().collect()),
            (
                Target::BrokerDefaults,
                [FOLLOWER_RATE].into_iter().collect(),
            ),
            (
                Target::Topic("old".into()),
                [LEADER_REPLICAS].into_iter().collect(),
            ),
        ]
        .into_iter()
        .collect();
        let c = changes(&Throttles::default(), &found, &for_moves(&[], 50));
        assert_eq!(c.len(), 3);
        assert!(c.iter().all(|c| c.value.is_none()), "{c:?}");
    }

    #[test]
    fn finished_moves_lose_their_throttles_and_nothing_is_left_behind() {
        let running = for_moves(&one_move(), 50);
        let set = changes(&Throttles::default(), &Found::new(), &running);
        // Two rates on three brokers, two topic lists.
        assert_eq!(set.len(), 8);
        assert!(set.iter().all(|c| c.value.is_some()));
        // Nothing changes while the same moves run.
        assert!(changes(&running, &Found::new(), &running).is_empty());
        // Done: every config we set is deleted.
        let cleared = changes(&running, &Found::new(), &for_moves(&[], 50));
        assert_eq!(cleared.len(), 8);
        assert!(cleared.iter().all(|c| c.value.is_none()));
    }

    #[test]
    fn a_new_rate_is_set_on_every_broker_taking_part() {
        let running = for_moves(&one_move(), 50);
        let faster = for_moves(&one_move(), 80);
        let c = changes(&running, &Found::new(), &faster);
        assert_eq!(c.len(), 6);
        assert!(c.iter().all(|c| c.value.as_deref() == Some("80000000")));
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
