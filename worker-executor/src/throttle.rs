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

/// A reassignment in progress in the cluster that ballast does not track (another tool's, or
/// an operator's): the throttles it runs under are not leftovers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Foreign {
    pub topic: String,
    pub partition: i32,
    /// Every replica taking part: the ones kept, the ones being added and the ones being removed.
    pub replicas: Vec<BrokerId>,
}

/// A throttle config set in the cluster that is kept although ballast's own moves do not need
/// it, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Kept {
    pub target: Target,
    pub name: &'static str,
    pub because: String,
}

impl std::fmt::Display for Kept {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {} kept: {}", self.target, self.name, self.because)
    }
}

fn is_list(name: &str) -> bool {
    name == LEADER_REPLICAS || name == FOLLOWER_REPLICAS
}

/// The entries of a throttled-replicas list.
fn entries(value: &str) -> BTreeSet<String> {
    value
        .split(',')
        .map(str::trim)
        .filter(|e| !e.is_empty())
        .map(str::to_string)
        .collect()
}

/// Names a few partitions: `orders-0, orders-1, … (5)`.
fn some_partitions(foreign: &[&Foreign]) -> String {
    let names: BTreeSet<String> = foreign
        .iter()
        .map(|f| format!("{}-{}", f.topic, f.partition))
        .collect();
    let shown: Vec<&str> = names.iter().take(3).map(String::as_str).collect();
    if names.len() > shown.len() {
        format!("{}, … ({})", shown.join(", "), names.len())
    } else {
        shown.join(", ")
    }
}

/// The configs wanted once the throttles in progress reassignments need are kept: `desired`
/// (ballast's own moves) plus every config of `current` that a reassignment in `foreign` needs,
/// with why. A topic's throttled-replicas list is needed while that topic has a foreign
/// reassignment; a broker's rates while the broker is a replica of one; the broker defaults
/// while any runs. A list both need keeps the entries of both; a rate both need is ballast's.
/// Everything else in `current` stays a leftover that [`changes`] deletes.
pub fn keep_for(current: &Configs, desired: &Configs, foreign: &[Foreign]) -> (Configs, Vec<Kept>) {
    let mut wanted = desired.clone();
    let mut kept = Vec::new();
    for (target, names) in current {
        let needing: Vec<&Foreign> = foreign
            .iter()
            .filter(|f| match target {
                Target::Topic(t) => f.topic == *t,
                Target::Broker(b) => f.replicas.contains(b),
                Target::BrokerDefaults => true,
            })
            .collect();
        if needing.is_empty() {
            continue;
        }
        let because = match target {
            Target::Broker(_) => format!(
                "a replica of {} being reassigned, not by ballast",
                some_partitions(&needing)
            ),
            _ => format!(
                "{} being reassigned, not by ballast",
                some_partitions(&needing)
            ),
        };
        for (name, value) in names {
            let ours = desired.get(target).and_then(|d| d.get(name));
            let keep = match (ours, value) {
                (None, _) => Some(value.clone()),
                (Some(Some(ours)), Some(theirs)) if is_list(name) => {
                    let (o, t) = (entries(ours), entries(theirs));
                    if t.is_subset(&o) {
                        None
                    } else if o.contains("*") || t.contains("*") {
                        Some(Some("*".to_string()))
                    } else {
                        Some(Some(Throttles::list(&o.union(&t).cloned().collect())))
                    }
                }
                _ => None,
            };
            if let Some(v) = keep {
                wanted.entry(target.clone()).or_default().insert(name, v);
                kept.push(Kept {
                    target: target.clone(),
                    name,
                    because: because.clone(),
                });
            }
        }
    }
    (wanted, kept)
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

    /// What an operator's `kafka-reassign-partitions.sh --execute --throttle` left set for
    /// `orders-0` [1,2] -> [3,2]: both lists on the topic, both rates on brokers 1, 2, 3; plus
    /// a real leftover on topic `old` and broker 4.
    fn operator_throttles() -> Configs {
        let mut c = Configs::new();
        let v = |s: &str| Some(s.to_string());
        let orders = c.entry(Target::Topic("orders".into())).or_default();
        orders.insert(LEADER_REPLICAS, v("0:1,0:2"));
        orders.insert(FOLLOWER_REPLICAS, v("0:3"));
        for b in 1..=4 {
            let e = c.entry(Target::Broker(b)).or_default();
            e.insert(LEADER_RATE, v("100000"));
            e.insert(FOLLOWER_RATE, v("100000"));
        }
        c.entry(Target::Topic("old".into()))
            .or_default()
            .insert(LEADER_REPLICAS, v("1:4"));
        c
    }

    fn orders_0_moving() -> Vec<Foreign> {
        vec![Foreign {
            topic: "orders".into(),
            partition: 0,
            replicas: vec![3, 2, 1],
        }]
    }

    #[test]
    fn found_throttles_a_reassignment_in_progress_needs_are_kept_and_the_rest_cleared() {
        let found = operator_throttles();
        let none = for_moves(&[], 50).configs();
        let (wanted, kept) = keep_for(&found, &none, &orders_0_moving());
        let c = changes(&found, &wanted);
        // Only the leftovers go: topic `old`, and broker 4 (no replica of orders-0).
        let mut gone: Vec<String> = c.iter().map(ToString::to_string).collect();
        gone.sort();
        assert_eq!(
            gone,
            vec![
                "broker 4: delete follower.replication.throttled.rate",
                "broker 4: delete leader.replication.throttled.rate",
                "topic old: delete leader.replication.throttled.replicas",
            ]
        );
        // Two lists and six rates kept, each saying why.
        assert_eq!(kept.len(), 8, "{kept:?}");
        let topic = kept
            .iter()
            .find(|k| k.target == Target::Topic("orders".into()) && k.name == LEADER_REPLICAS)
            .expect("the topic's lists are kept");
        assert_eq!(
            topic.to_string(),
            "topic orders: leader.replication.throttled.replicas kept: orders-0 being reassigned, not by ballast"
        );
        assert!(kept
            .iter()
            .filter(|k| matches!(k.target, Target::Broker(_)))
            .all(|k| k.because.contains("a replica of orders-0")));
    }

    #[test]
    fn found_throttles_are_cleared_once_no_reassignment_in_progress_needs_them() {
        let found = operator_throttles();
        let none = for_moves(&[], 50).configs();
        let (wanted, kept) = keep_for(&found, &none, &[]);
        assert!(kept.is_empty());
        let c = changes(&found, &wanted);
        assert_eq!(c.len(), 11);
        assert!(c.iter().all(|c| c.value.is_none()), "{c:?}");
    }

    #[test]
    fn a_broker_rate_is_kept_only_while_the_broker_is_a_replica_of_a_reassignment_in_progress() {
        let mut found = Configs::new();
        for b in [1, 5] {
            found
                .entry(Target::Broker(b))
                .or_default()
                .insert(LEADER_RATE, Some("1".into()));
        }
        found
            .entry(Target::BrokerDefaults)
            .or_default()
            .insert(FOLLOWER_RATE, Some("1".into()));
        let (wanted, _) = keep_for(&found, &Configs::new(), &orders_0_moving());
        let c = changes(&found, &wanted);
        assert_eq!(
            c,
            vec![Change {
                target: Target::Broker(5),
                name: LEADER_RATE,
                value: None
            }],
            "broker 1 sends for orders-0 and the defaults apply to it; broker 5 takes no part"
        );
    }

    #[test]
    fn a_throttle_list_ballast_and_a_reassignment_in_progress_both_need_keeps_the_entries_of_both()
    {
        let found = operator_throttles();
        // Ballast moves orders-5 [2,3] -> [2,4] meanwhile.
        let ours = for_moves(
            &[Moving {
                topic: "orders".into(),
                partition: 5,
                source: vec![2, 3],
                adding: vec![4],
            }],
            50,
        )
        .configs();
        let (wanted, _) = keep_for(&found, &ours, &orders_0_moving());
        let orders = &wanted[&Target::Topic("orders".into())];
        assert_eq!(orders[LEADER_REPLICAS].as_deref(), Some("0:1,0:2,5:2,5:3"));
        assert_eq!(orders[FOLLOWER_REPLICAS].as_deref(), Some("0:3,5:4"));
        // A rate both need is ballast's.
        assert_eq!(
            wanted[&Target::Broker(2)][LEADER_RATE].as_deref(),
            Some("50000000")
        );
        // A wildcard covers everything.
        let mut star = Configs::new();
        star.entry(Target::Topic("orders".into()))
            .or_default()
            .insert(FOLLOWER_REPLICAS, Some("*".into()));
        let (wanted, _) = keep_for(&star, &ours, &orders_0_moving());
        assert_eq!(
            wanted[&Target::Topic("orders".into())][FOLLOWER_REPLICAS].as_deref(),
            Some("*")
        );
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
