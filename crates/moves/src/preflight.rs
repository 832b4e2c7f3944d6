//! The live cluster-health pre-flight that runs before any partition-moving submission (by the
//! API when a request arrives, by the executor before every wave).
//!
//! Hard blockers are never overridable, not even by `force=true`: the controller is unhealthy, a
//! majority of the known brokers is unavailable, or replicas on live brokers have been out of
//! sync in two consecutive looks (the latest observed sample and the live metadata; partitions
//! being reassigned do not count, their new replicas are out of sync by design). Soft reasons
//! (the topology fingerprint changed since planning, reassignments already in flight that are not
//! ours) are overridable with `force=true`, and the override is audited by the caller.

use std::collections::BTreeSet;

use ballast_kafka::{Client, ClusterMetadata, TopicPartition};
use ballast_model::BrokerId;
use ballast_schema::ObservedView;
use serde::Serialize;

/// What the pre-flight looks at, gathered from the live cluster and the observed view.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Facts {
    /// The active controller: on KRaft the metadata quorum's leader (DescribeQuorum), on
    /// ZooKeeper the one the live metadata names; None when there is none.
    pub controller: Option<BrokerId>,
    /// The controller is the quorum's leader (KRaft): it answered through the brokers, and may be
    /// a controller-only node that is no broker, so it is not looked for among the brokers.
    #[serde(default)]
    pub controller_from_quorum: bool,
    /// Every broker known: live now or seen by the observer.
    pub brokers_known: BTreeSet<BrokerId>,
    /// Brokers in the live metadata.
    pub brokers_alive: BTreeSet<BrokerId>,
    /// Partitions with a live replica out of sync now, not being reassigned.
    pub isr_shrunk_now: BTreeSet<TopicPartition>,
    /// Of those, the ones the latest observed sample also showed out of sync.
    pub isr_shrunk_sustained: BTreeSet<TopicPartition>,
    /// Reassignments in flight in the cluster that are not ours.
    pub foreign_reassignments: usize,
    /// The fingerprint the moves were planned on and the current one, when they differ.
    pub fingerprint_changed: Option<(String, String)>,
    /// The unfinished rolling restart, if any (filled in from the store by the caller).
    pub rolling_restart: Option<String>,
}

/// The pre-flight's verdict.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Assessment {
    /// Never overridable.
    pub hard: Vec<String>,
    /// Overridable with `force=true`.
    pub soft: Vec<String>,
}

impl Assessment {
    /// Whether a submission may go ahead; `forced` overrides soft reasons only.
    pub fn allows(&self, forced: bool) -> bool {
        self.hard.is_empty() && (forced || self.soft.is_empty())
    }

    /// One line for a 409 or a failure reason.
    pub fn message(&self, forced: bool) -> String {
        if !self.hard.is_empty() {
            format!(
                "pre-flight blocked (not overridable): {}",
                self.hard.join("; ")
            )
        } else if !forced && !self.soft.is_empty() {
            format!(
                "pre-flight: {} (re-submit with force=true to override)",
                self.soft.join("; ")
            )
        } else {
            "pre-flight passed".to_string()
        }
    }
}

/// The rules, over gathered facts.
pub fn assess(f: &Facts) -> Assessment {
    let mut a = Assessment::default();
    if let Some(roll) = &f.rolling_restart {
        a.hard.push(format!(
            "rolling restart {roll} is in progress: wait until it completes or abort it"
        ));
    }
    match f.controller {
        None => a
            .hard
            .push("controller unhealthy: no active controller".into()),
        Some(c) if !f.controller_from_quorum && !f.brokers_alive.contains(&c) => a.hard.push(
            format!("controller unhealthy: controller {c} is not reachable"),
        ),
        Some(_) => {}
    }
    // A majority is more than half: exactly half down does not block.
    let known = f.brokers_known.len();
    let alive = f.brokers_known.intersection(&f.brokers_alive).count();
    let down = known - alive;
    if down * 2 > known {
        a.hard.push(format!(
            "a majority of brokers is unavailable: {down} of {known} down"
        ));
    }
    if !f.isr_shrunk_sustained.is_empty() {
        let sample: Vec<String> = f
            .isr_shrunk_sustained
            .iter()
            .take(5)
            .map(ToString::to_string)
            .collect();
        a.hard.push(format!(
            "sustained ISR shrink: {} partitions have live replicas out of sync ({}{})",
            f.isr_shrunk_sustained.len(),
            sample.join(", "),
            if f.isr_shrunk_sustained.len() > 5 {
                ", ..."
            } else {
                ""
            }
        ));
    }
    if let Some((planned, current)) = &f.fingerprint_changed {
        a.soft.push(format!(
            "topology fingerprint changed since planning ({planned} → {current})"
        ));
    }
    if f.foreign_reassignments > 0 {
        a.soft.push(format!(
            "{} reassignments already in flight",
            f.foreign_reassignments
        ));
    }
    a
}

/// Partitions whose replicas on live brokers are not all in sync, skipping `moving` ones.
fn shrunk_in_metadata(
    md: &ClusterMetadata,
    moving: &BTreeSet<TopicPartition>,
) -> BTreeSet<TopicPartition> {
    let alive: BTreeSet<BrokerId> = md.brokers.iter().map(|b| b.id).collect();
    let mut out = BTreeSet::new();
    for t in &md.topics {
        for p in &t.partitions {
            let tp = TopicPartition::new(t.name.clone(), p.partition);
            if moving.contains(&tp) {
                continue;
            }
            if p.replicas
                .iter()
                .any(|r| alive.contains(r) && !p.isr.contains(r))
            {
                out.insert(tp);
            }
        }
    }
    out
}

fn shrunk_in_view(view: &ObservedView) -> BTreeSet<TopicPartition> {
    let alive: BTreeSet<BrokerId> = view
        .brokers
        .iter()
        .filter(|b| b.alive)
        .map(|b| b.broker_id)
        .collect();
    view.partitions
        .iter()
        .filter(|p| {
            p.replicas
                .iter()
                .any(|r| alive.contains(r) && !p.isr.contains(r))
        })
        .map(|p| TopicPartition::new(p.topic.clone(), p.partition))
        .collect()
}

/// Reads the live cluster (metadata and in-flight reassignments) and combines it with the
/// observed view. `ours` are partitions our own operations are moving; `planned_fingerprint`
/// and `current_fingerprint` are compared when both are known.
pub async fn gather(
    client: &Client,
    view: Option<&ObservedView>,
    ours: &BTreeSet<TopicPartition>,
    fingerprints: Option<(&str, &str)>,
) -> Result<Facts, ballast_kafka::Error> {
    let md = client.metadata(None).await?;
    // Metadata's controller id on KRaft is a broker the answering broker picks.
    let active = client.active_controller().await?;
    let in_flight = client.list_partition_reassignments(None).await?;
    let moving: BTreeSet<TopicPartition> = in_flight
        .iter()
        .map(|r| TopicPartition::new(r.topic.clone(), r.partition))
        .collect();
    let brokers_alive: BTreeSet<BrokerId> = md.brokers.iter().map(|b| b.id).collect();
    let mut brokers_known = brokers_alive.clone();
    if let Some(v) = view {
        brokers_known.extend(v.brokers.iter().map(|b| b.broker_id));
    }
    let isr_shrunk_now = shrunk_in_metadata(&md, &moving);
    let isr_shrunk_sustained = match view {
        Some(v) => {
            let before = shrunk_in_view(v);
            isr_shrunk_now.intersection(&before).cloned().collect()
        }
        None => BTreeSet::new(),
    };
    Ok(Facts {
        controller: active.id,
        controller_from_quorum: active.source == "quorum",
        brokers_known,
        brokers_alive,
        isr_shrunk_now,
        isr_shrunk_sustained,
        foreign_reassignments: moving.difference(ours).count(),
        fingerprint_changed: fingerprints
            .filter(|(planned, current)| planned != current)
            .map(|(p, c)| (p.to_string(), c.to_string())),
        rolling_restart: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn healthy() -> Facts {
        Facts {
            controller: Some(1),
            brokers_known: [1, 2, 3].into_iter().collect(),
            brokers_alive: [1, 2, 3].into_iter().collect(),
            ..Facts::default()
        }
    }

    #[test]
    fn a_quorum_leader_that_is_no_broker_is_a_healthy_controller_and_no_leader_is_not() {
        // KRaft with dedicated controllers: the quorum's leader is node 3000, no broker.
        let mut f = healthy();
        f.controller = Some(3000);
        f.controller_from_quorum = true;
        assert!(assess(&f).allows(false), "{:?}", assess(&f));
        f.controller = None;
        assert!(!assess(&f).allows(true), "a quorum without a leader blocks");
        // ZooKeeper: the controller Metadata names must be a live broker.
        let mut f = healthy();
        f.controller = Some(9);
        assert!(!assess(&f).allows(true));
    }

    #[test]
    fn a_healthy_cluster_passes() {
        let a = assess(&healthy());
        assert!(a.allows(false), "{a:?}");
    }

    #[test]
    fn hard_blockers_are_never_overridable_not_even_by_force() {
        let mut f = healthy();
        f.controller = None;
        assert!(!assess(&f).allows(true));

        let mut f = healthy();
        f.brokers_alive = [1].into_iter().collect();
        let a = assess(&f);
        assert!(!a.allows(true));
        assert!(a.message(true).contains("majority"), "{}", a.message(true));

        let mut f = healthy();
        f.isr_shrunk_sustained = [TopicPartition::new("orders", 3)].into_iter().collect();
        assert!(!assess(&f).allows(true));
    }

    #[test]
    fn only_a_majority_of_known_brokers_down_blocks_half_down_does_not() {
        let mut f = healthy();
        f.brokers_known = [1, 2, 3, 4].into_iter().collect();
        f.brokers_alive = [1, 2].into_iter().collect();
        assert!(assess(&f).hard.is_empty(), "2 of 4 down is not a majority");
        f.brokers_alive = [1].into_iter().collect();
        let a = assess(&f);
        assert!(!a.allows(true), "3 of 4 down is a majority");
        assert!(a.message(true).contains("3 of 4"), "{}", a.message(true));
        f.brokers_known = [1, 2, 3].into_iter().collect();
        f.brokers_alive = [1, 2].into_iter().collect();
        assert!(assess(&f).hard.is_empty(), "1 of 3 down");
        f.brokers_alive = [1].into_iter().collect();
        assert!(!assess(&f).hard.is_empty(), "2 of 3 down");
    }

    #[test]
    fn a_momentary_isr_shrink_is_not_a_blocker() {
        let mut f = healthy();
        f.isr_shrunk_now = [TopicPartition::new("orders", 3)].into_iter().collect();
        assert!(assess(&f).allows(false));
    }

    #[test]
    fn soft_reasons_are_overridable_with_force() {
        let mut f = healthy();
        f.fingerprint_changed = Some(("aa".into(), "bb".into()));
        f.foreign_reassignments = 2;
        let a = assess(&f);
        assert_eq!(a.soft.len(), 2);
        assert!(!a.allows(false));
        assert!(a.allows(true));
        assert!(a.message(false).contains("force=true"));
    }
}
