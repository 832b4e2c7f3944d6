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
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum Target {
    Broker(BrokerId),
    /// The cluster-wide dynamic broker default.
    BrokerDefaults,
    Topic(String),
}

impl std::fmt::Display for Target {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Target::Broker(b) => write!(f, "broker {b}"),
            Target::BrokerDefaults => f.write_str("broker defaults"),
            Target::Topic(t) => write!(f, "topic {t}"),
        }
    }
}

/// One config change: `Some(value)` sets, `None` deletes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Change {
    pub target: Target,
    pub name: &'static str,
    pub value: Option<String>,
}

impl std::fmt::Display for Change {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.value {
            Some(v) => write!(f, "{}: set {}={v}", self.target, self.name),
            None => write!(f, "{}: delete {}", self.target, self.name),
        }
    }
}

/// Throttle configs as the cluster has them, as far as the executor knows: per target, each
/// name set and its value (`None`: set to a value not known, e.g. a change that got no answer,
/// or a leftover remembered from before a restart).
pub type Configs = BTreeMap<Target, BTreeMap<&'static str, Option<String>>>;

impl Throttles {
    /// The configs these throttles are made of.
    pub fn configs(&self) -> Configs {
        let mut out = Configs::new();
        let rate = self.rate.to_string();
        for b in &self.brokers {
            let e = out.entry(Target::Broker(*b)).or_default();
            e.insert(LEADER_RATE, Some(rate.clone()));
            e.insert(FOLLOWER_RATE, Some(rate.clone()));
        }
        for (name, lists) in [
            (LEADER_REPLICAS, &self.leader_replicas),
            (FOLLOWER_REPLICAS, &self.follower_replicas),
        ] {
            for (topic, entries) in lists {
                out.entry(Target::Topic(topic.clone()))
                    .or_default()
                    .insert(name, Some(Throttles::list(entries)));
            }
        }
        out
    }
}

/// The changes that take the cluster from `current` to `desired`: every desired config not
/// known to be set to its value is set, every config set and not desired is deleted.
pub fn changes(current: &Configs, desired: &Configs) -> Vec<Change> {
    let mut out = Vec::new();
    for (target, names) in desired {
        for (name, value) in names {
            let have = current.get(target).and_then(|n| n.get(name));
            if value.is_some() && have != Some(value) {
                out.push(Change {
                    target: target.clone(),
                    name,
                    value: value.clone(),
                });
            }
        }
    }
    for (target, names) in current {
        for name in names.keys() {
            if desired.get(target).is_none_or(|d| !d.contains_key(name)) {
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

/// What the executor knows after sending `sent` (changes to one target): when the target
/// `confirmed` them, exactly their result; otherwise deletions are still set, and sets are set to
/// a value not known (so a later pass sends them again, or deletes them when no longer wanted).
pub fn record(current: &mut Configs, sent: &[Change], confirmed: bool) {
    for c in sent {
        let names = current.entry(c.target.clone()).or_default();
        match (&c.value, confirmed) {
            (Some(v), true) => {
                names.insert(c.name, Some(v.clone()));
            }
            (Some(_), false) => {
                names.insert(c.name, None);
            }
            (None, true) => {
                names.remove(c.name);
            }
            (None, false) => {
                names.entry(c.name).or_insert(None);
            }
        }
    }
    current.retain(|_, names| !names.is_empty());
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
        let found: Configs = [
            (Target::Broker(7), LEADER_RATE),
            (Target::BrokerDefaults, FOLLOWER_RATE),
            (Target::Topic("old".into()), LEADER_REPLICAS),
        ]
        .into_iter()
        .map(|(t, n)| (t, [(n, Some("1000".to_string()))].into_iter().collect()))
        .collect();
        let c = changes(&found, &for_moves(&[], 50).configs());
        assert_eq!(c.len(), 3);
        assert!(c.iter().all(|c| c.value.is_none()), "{c:?}");
    }

    #[test]
    fn finished_moves_lose_their_throttles_and_nothing_is_left_behind() {
        let running = for_moves(&one_move(), 50).configs();
        let set = changes(&Configs::new(), &running);
        // Two rates on three brokers, two topic lists.
        assert_eq!(set.len(), 8);
        assert!(set.iter().all(|c| c.value.is_some()));
        // Nothing changes while the same moves run.
        assert!(changes(&running, &running).is_empty());
        // Done: every config we set is deleted.
        let cleared = changes(&running, &for_moves(&[], 50).configs());
        assert_eq!(cleared.len(), 8);
        assert!(cleared.iter().all(|c| c.value.is_none()));
    }

    #[test]
    fn a_new_rate_is_set_on_every_broker_taking_part() {
        let running = for_moves(&one_move(), 50).configs();
        let faster = for_moves(&one_move(), 80).configs();
        let c = changes(&running, &faster);
        assert_eq!(c.len(), 6);
        assert!(c.iter().all(|c| c.value.as_deref() == Some("80000000")));
    }

    #[test]
    fn a_change_a_target_did_not_confirm_stays_pending_and_is_sent_again() {
        let running = for_moves(&one_move(), 50).configs();
        let done = for_moves(&[], 50).configs();
        let mut current = running.clone();
        let cleared = changes(&current, &done);
        // Broker 3 is gone: its two deletions fail, the others are confirmed.
        let (gone, rest): (Vec<Change>, Vec<Change>) = cleared
            .into_iter()
            .partition(|c| c.target == Target::Broker(3));
        record(&mut current, &gone, false);
        record(&mut current, &rest, true);
        let again = changes(&current, &done);
        assert_eq!(again, gone, "exactly the failed deletions are pending");
        // It comes back and confirms: nothing is left.
        record(&mut current, &again, true);
        assert!(current.is_empty(), "{current:?}");
        assert!(changes(&current, &done).is_empty());
    }

    #[test]
    fn a_set_with_no_answer_is_sent_again_and_deleted_when_no_longer_wanted() {
        let running = for_moves(&one_move(), 50).configs();
        let mut current = Configs::new();
        let set = changes(&current, &running);
        record(&mut current, &set, false);
        assert_eq!(changes(&current, &running).len(), set.len(), "sent again");
        let cleared = changes(&current, &Configs::new());
        assert_eq!(cleared.len(), set.len());
        assert!(cleared.iter().all(|c| c.value.is_none()), "{cleared:?}");
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
