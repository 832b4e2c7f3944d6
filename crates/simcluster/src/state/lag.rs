//! The metadata lag of a KRaft cluster: a configuration or client-quota change is committed by the
//! controller when the alter request is answered, but a broker applies it from the metadata log a
//! moment later, so a DescribeConfigs or DescribeClientQuotas sent right after the alter still
//! shows the old value (measured on Kafka 3.5.1 in combined mode).
//!
//! The model keeps the committed values (what the controller holds: alters build on them, the
//! truth API reports them, throttles and retention follow them); this module keeps, per resource
//! changed less than `lag_ms` ago, what the brokers still show and the changes on their way, each
//! with the simulated time it becomes visible. Describe handlers read through it.

use std::collections::{BTreeMap, VecDeque};

use super::quotas::{Entity, Quotas, Values};
use super::BrokerId;

/// Overrides of one config resource.
pub type Overrides = BTreeMap<String, String>;

/// A config resource whose describe may lag.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub enum ConfigKey {
    Topic(String),
    Broker(BrokerId),
    /// The cluster-wide dynamic broker defaults (resource name "").
    BrokerDefaults,
}

/// What the brokers show of one resource, and the committed values still on their way.
#[derive(Debug, Clone)]
struct Lagged<T> {
    shown: T,
    /// (visible from, value), oldest first.
    coming: VecDeque<(i64, T)>,
}

impl<T> Lagged<T> {
    /// Moves every change visible at `now` into `shown`; true when nothing is on its way any more.
    fn settle(&mut self, now: i64) -> bool {
        while self.coming.front().is_some_and(|(at, _)| *at <= now) {
            if let Some((_, v)) = self.coming.pop_front() {
                self.shown = v;
            }
        }
        self.coming.is_empty()
    }
}

/// The lagging views of configs and quotas.
#[derive(Debug, Clone, Default)]
pub struct MetadataLag {
    /// Simulated milliseconds from a commit to the brokers showing it; 0 shows it at once.
    pub lag_ms: i64,
    configs: BTreeMap<ConfigKey, Lagged<Overrides>>,
    quotas: BTreeMap<Entity, Lagged<Values>>,
}

impl MetadataLag {
    pub fn new(lag_ms: i64) -> Self {
        MetadataLag {
            lag_ms: lag_ms.max(0),
            ..MetadataLag::default()
        }
    }

    /// Whether any change is still on its way.
    pub fn pending(&self) -> bool {
        !self.configs.is_empty() || !self.quotas.is_empty()
    }

    /// Records that `key`'s overrides went from `before` to `after` at `now`.
    pub fn config_committed(
        &mut self,
        key: ConfigKey,
        before: &Overrides,
        after: &Overrides,
        now: i64,
    ) {
        if self.lag_ms == 0 || before == after {
            return;
        }
        let entry = self.configs.entry(key).or_insert_with(|| Lagged {
            shown: before.clone(),
            coming: VecDeque::new(),
        });
        entry.coming.push_back((now + self.lag_ms, after.clone()));
    }

    /// Records that `entity`'s quotas went from `before` to `after` at `now`.
    pub fn quota_committed(&mut self, entity: Entity, before: &Values, after: &Values, now: i64) {
        if self.lag_ms == 0 || before == after {
            return;
        }
        let entry = self.quotas.entry(entity).or_insert_with(|| Lagged {
            shown: before.clone(),
            coming: VecDeque::new(),
        });
        entry.coming.push_back((now + self.lag_ms, after.clone()));
    }

    /// Drops what every broker shows by `now`.
    pub fn settle(&mut self, now: i64) {
        self.configs.retain(|_, l| !l.settle(now));
        self.quotas.retain(|_, l| !l.settle(now));
    }

    /// Forgets a resource (a deleted topic): nothing of it is shown any more.
    pub fn forget(&mut self, key: &ConfigKey) {
        self.configs.remove(key);
    }

    /// What the brokers show of `key` while a change of it is on its way (None: the committed
    /// overrides). Call [`MetadataLag::settle`] first.
    pub fn shown_config(&self, key: &ConfigKey) -> Option<&Overrides> {
        self.configs.get(key).map(|l| &l.shown)
    }

    /// The quotas as the brokers show them: `committed` with every lagging entity's shown values.
    pub fn shown_quotas(&self, committed: &Quotas) -> Quotas {
        let mut out = committed.clone();
        for (entity, l) in &self.quotas {
            if l.shown.is_empty() {
                out.entries.remove(entity);
            } else {
                out.entries.insert(entity.clone(), l.shown.clone());
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn o(pairs: &[(&str, &str)]) -> Overrides {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn a_config_change_is_shown_only_once_its_lag_has_passed_and_in_commit_order() {
        let mut lag = MetadataLag::new(500);
        let key = ConfigKey::Topic("t".into());
        lag.config_committed(key.clone(), &o(&[]), &o(&[("retention.ms", "1")]), 1_000);
        lag.config_committed(
            key.clone(),
            &o(&[("retention.ms", "1")]),
            &o(&[("retention.ms", "2")]),
            1_200,
        );
        lag.settle(1_499);
        assert_eq!(lag.shown_config(&key), Some(&o(&[])));
        lag.settle(1_500);
        assert_eq!(lag.shown_config(&key), Some(&o(&[("retention.ms", "1")])));
        lag.settle(1_700);
        assert_eq!(
            lag.shown_config(&key),
            None,
            "settled: the committed value shows"
        );
        assert!(!lag.pending());
    }

    #[test]
    fn without_a_lag_every_change_shows_at_once() {
        let mut lag = MetadataLag::new(0);
        lag.config_committed(ConfigKey::BrokerDefaults, &o(&[]), &o(&[("a", "1")]), 0);
        lag.quota_committed(
            vec![("user".into(), None)],
            &Values::new(),
            &Values::from([("x".into(), 1.0)]),
            0,
        );
        assert!(!lag.pending());
    }

    #[test]
    fn a_lagging_quota_entity_shows_its_old_values_or_none() {
        let mut lag = MetadataLag::new(100);
        let alice: Entity = vec![("user".into(), Some("alice".into()))];
        let mut committed = Quotas::default();
        committed.alter(alice.clone(), &[("producer_byte_rate".into(), 10.0, false)]);
        lag.quota_committed(
            alice.clone(),
            &Values::new(),
            &Values::from([("producer_byte_rate".into(), 10.0)]),
            0,
        );
        assert!(lag.shown_quotas(&committed).entries.is_empty());
        lag.settle(100);
        assert_eq!(lag.shown_quotas(&committed).entries.len(), 1);
    }
}
