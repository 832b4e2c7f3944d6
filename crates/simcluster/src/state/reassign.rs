//! Reassignments (KIP-455) and the copy engine: adding replicas copy the partition at a rate
//! limited by replication throttles or the link speed; caught-up replicas join the ISR; the
//! reassignment completes when every target replica is in sync.

use std::collections::{BTreeMap, BTreeSet};

use serde::Serialize;

use super::{err, ApiError, BrokerId, Cluster};

#[derive(Debug, Clone)]
pub struct Reassignment {
    /// Index of its record in [`MoveTruth::history`].
    pub record: usize,
    pub original: Vec<BrokerId>,
    pub target: Vec<BrokerId>,
    pub adding: Vec<BrokerId>,
    pub removing: Vec<BrokerId>,
    /// Bytes copied so far, one per `adding` replica.
    pub copied: Vec<f64>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum MoveState {
    Running,
    Completed,
    Cancelled,
}

/// The simulator's record of one reassignment.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct MoveRecord {
    pub topic: String,
    pub partition: i32,
    pub original_replicas: Vec<BrokerId>,
    pub target_replicas: Vec<BrokerId>,
    pub state: MoveState,
    pub started_ms: i64,
    pub ended_ms: Option<i64>,
    /// Bytes copied to all adding replicas.
    pub bytes_copied: f64,
    /// Size of the partition when the move started.
    pub partition_bytes: f64,
    /// Which limits bounded its copy rate at some point: `link`, `followerThrottle`,
    /// `leaderThrottle`.
    pub limited_by: BTreeSet<&'static str>,
    /// Highest copy rate of one adding replica, bytes per second.
    pub peak_rate: f64,
}

/// What the simulator records about moves for tests and the demo.
#[derive(Debug, Clone, Default)]
pub struct MoveTruth {
    pub history: Vec<MoveRecord>,
    /// Most concurrent in-flight reassignments each broker was a destination of.
    pub max_as_destination: BTreeMap<BrokerId, usize>,
    /// Most concurrent in-flight reassignments each broker took part in (adding, removing or
    /// serving the copy as leader).
    pub max_as_participant: BTreeMap<BrokerId, usize>,
}

/// One in-flight copy to a replica.
struct Copy {
    key: (String, i32),
    dest: BrokerId,
    leader: BrokerId,
    follower_throttled: bool,
    leader_throttled: bool,
    /// Some(index into adding) for a reassignment, None for a catch-up.
    adding_index: Option<usize>,
}

/// Does a `*.replication.throttled.replicas` value list this partition on this broker?
pub fn throttle_lists(value: Option<&str>, partition: i32, broker: BrokerId) -> bool {
    let Some(v) = value else {
        return false;
    };
    let v = v.trim();
    if v == "*" {
        return true;
    }
    v.split(',').any(|entry| {
        let mut it = entry.trim().split(':');
        matches!(
            (it.next().map(str::trim), it.next().map(str::trim), it.next()),
            (Some(p), Some(b), None)
                if p.parse::<i32>().ok() == Some(partition) && b.parse::<i32>().ok() == Some(broker)
        )
    })
}

/// Validates a throttled-replicas list: `*` or `partition:broker` entries.
pub fn valid_throttle_list(value: &str) -> bool {
    let v = value.trim();
    if v.is_empty() || v == "*" {
        return true;
    }
    v.split(',').all(|entry| {
        let mut it = entry.trim().split(':');
        matches!(
            (it.next(), it.next(), it.next()),
            (Some(p), Some(b), None) if p.trim().parse::<u32>().is_ok() && b.trim().parse::<u32>().is_ok()
        )
    })
}

impl Cluster {
    /// A broker's throttle rate (`leader.replication.throttled.rate` or
    /// `follower.replication.throttled.rate`), if one is set (per broker, else cluster default).
    pub fn throttle_rate(&self, broker: BrokerId, name: &str) -> Option<f64> {
        let v = self
            .brokers
            .get(&broker)
            .and_then(|b| b.configs.get(name))
            .or_else(|| self.broker_defaults.get(name))?;
        let rate: f64 = v.trim().parse().ok()?;
        if rate >= 9.0e18 {
            None
        } else {
            Some(rate.max(0.0))
        }
    }

    /// Submits a reassignment of one partition to `target` (KIP-455).
    pub fn reassign(
        &mut self,
        topic: &str,
        partition: i32,
        target: Vec<BrokerId>,
        allow_rf_change: bool,
        now: i64,
    ) -> Result<(), ApiError> {
        self.advance(now);
        self.placement_changed();
        let unknown = || {
            ApiError::new(
                err::UNKNOWN_TOPIC_OR_PARTITION,
                "This server does not host this topic-partition.",
            )
        };
        if target.is_empty() {
            return Err(ApiError::new(
                err::INVALID_REPLICA_ASSIGNMENT,
                "The manual partition assignment includes an empty replica list.",
            ));
        }
        let distinct: BTreeSet<BrokerId> = target.iter().copied().collect();
        if distinct.len() != target.len() {
            return Err(ApiError::new(
                err::INVALID_REPLICA_ASSIGNMENT,
                "The manual partition assignment includes the same broker more than once.",
            ));
        }
        for b in &target {
            match self.brokers.get(b) {
                None => {
                    return Err(ApiError::new(
                        err::INVALID_REPLICA_ASSIGNMENT,
                        format!(
                            "The manual partition assignment includes broker {b}, but no such broker is registered."
                        ),
                    ))
                }
                Some(br) if !br.up => {
                    return Err(ApiError::new(
                        err::INVALID_REPLICA_ASSIGNMENT,
                        format!(
                            "The manual partition assignment includes broker {b}, which is fenced."
                        ),
                    ))
                }
                Some(_) => {}
            }
        }
        let size = self.partition(topic, partition).ok_or_else(unknown)?.size;
        let p = self.partition_mut(topic, partition).ok_or_else(unknown)?;
        let existing = p.extra.as_mut().and_then(|e| e.reassignment.take());
        let original = existing
            .as_ref()
            .map(|r| r.original.clone())
            .unwrap_or_else(|| p.replicas.clone());
        if !allow_rf_change && target.len() != original.len() {
            if let Some(r) = existing {
                p.extra_mut().reassignment = Some(r);
            }
            return Err(ApiError::new(
                err::INVALID_REPLICATION_FACTOR,
                "The replication factor is changed from the current one and allow_replication_factor_change is false.",
            ));
        }
        let adding: Vec<BrokerId> = target
            .iter()
            .copied()
            .filter(|b| !original.contains(b))
            .collect();
        // In ascending id order, as the KRaft controller keeps it (`PartitionReassignmentReplicas`).
        let mut removing: Vec<BrokerId> = original
            .iter()
            .copied()
            .filter(|b| !target.contains(b))
            .collect();
        removing.sort_unstable();
        // The target, then the replicas being removed.
        let mut merged = target.clone();
        merged.extend(removing.iter().copied());
        let copied: Vec<f64> = adding
            .iter()
            .map(|b| {
                existing
                    .as_ref()
                    .and_then(|r| r.adding.iter().position(|x| x == b).map(|i| r.copied[i]))
                    .unwrap_or(0.0)
            })
            .collect();
        // Replicas of a replaced reassignment that are no longer wanted leave the ISR.
        if let Some(old) = &existing {
            for b in &old.adding {
                if !merged.contains(b) {
                    p.isr.retain(|x| x != b);
                }
            }
        }
        p.replicas = merged;
        let record = match &existing {
            Some(r) => {
                let rec = &mut self.moves.history[r.record];
                rec.target_replicas = target.clone();
                r.record
            }
            None => {
                self.moves.history.push(MoveRecord {
                    topic: topic.to_string(),
                    partition,
                    original_replicas: original.clone(),
                    target_replicas: target.clone(),
                    state: MoveState::Running,
                    started_ms: now,
                    ended_ms: None,
                    bytes_copied: 0.0,
                    partition_bytes: size,
                    limited_by: BTreeSet::new(),
                    peak_rate: 0.0,
                });
                self.moves.history.len() - 1
            }
        };
        let p = self.partition_mut(topic, partition).ok_or_else(unknown)?;
        p.extra_mut().reassignment = Some(Reassignment {
            record,
            original,
            target,
            adding,
            removing,
            copied,
        });
        self.active.insert((topic.to_string(), partition));
        self.finish_if_done(topic, partition, now);
        self.record_concurrency();
        Ok(())
    }

    /// Cancels an in-flight reassignment as the KRaft controller does
    /// (`PartitionReassignmentRevert`): the replicas being added leave, the others stay in the
    /// order of the current list (target first, then the ones being removed), so the original
    /// replica set comes back but not always its order (`[1,2]` -> `[3,2]` cancelled is `[2,1]`).
    pub fn cancel_reassignment(
        &mut self,
        topic: &str,
        partition: i32,
        now: i64,
    ) -> Result<(), ApiError> {
        self.advance(now);
        self.placement_changed();
        let up: BTreeSet<BrokerId> = self.alive_brokers().map(|b| b.id).collect();
        let p = self.partition_mut(topic, partition).ok_or_else(|| {
            ApiError::new(
                err::UNKNOWN_TOPIC_OR_PARTITION,
                "This server does not host this topic-partition.",
            )
        })?;
        let Some(r) = p.extra.as_mut().and_then(|e| e.reassignment.take()) else {
            return Err(ApiError::new(
                err::NO_REASSIGNMENT_IN_PROGRESS,
                format!("No ongoing reassignment for partition {topic}-{partition}"),
            ));
        };
        let reverted: Vec<BrokerId> = p
            .replicas
            .iter()
            .copied()
            .filter(|b| !r.adding.contains(b))
            .collect();
        p.replicas = reverted;
        p.isr.retain(|b| r.original.contains(b));
        if p.isr.is_empty() {
            if let Some(b) = r.original.iter().copied().find(|b| up.contains(b)) {
                p.isr.push(b);
            }
        }
        if !p.replicas.contains(&p.leader) {
            p.leader = p
                .replicas
                .iter()
                .copied()
                .find(|b| up.contains(b) && p.isr.contains(b))
                .unwrap_or(-1);
            p.leader_epoch += 1;
        }
        let rec = &mut self.moves.history[r.record];
        rec.state = MoveState::Cancelled;
        rec.ended_ms = Some(now);
        self.drop_if_idle(topic, partition);
        tracing::info!(topic, partition, "reassignment cancelled");
        Ok(())
    }

    fn drop_if_idle(&mut self, topic: &str, partition: i32) {
        let idle = self.partition(topic, partition).is_none_or(|p| {
            p.extra
                .as_ref()
                .is_none_or(|e| e.reassignment.is_none() && e.catchup.is_empty())
        });
        if idle {
            self.active.remove(&(topic.to_string(), partition));
        }
    }

    /// Completes a reassignment whose target replicas are all in sync.
    fn finish_if_done(&mut self, topic: &str, partition: i32, now: i64) {
        let up: BTreeSet<BrokerId> = self.alive_brokers().map(|b| b.id).collect();
        let Some(p) = self.partition_mut(topic, partition) else {
            return;
        };
        let done = p
            .reassignment()
            .is_some_and(|r| r.target.iter().all(|b| p.isr.contains(b)));
        if !done {
            return;
        }
        self.placement_changed();
        let Some(p) = self.partition_mut(topic, partition) else {
            return;
        };
        let Some(r) = p.extra.as_mut().and_then(|e| e.reassignment.take()) else {
            return;
        };
        p.replicas = r.target.clone();
        p.isr.retain(|b| r.target.contains(b));
        if !r.target.contains(&p.leader) {
            p.leader = r
                .target
                .iter()
                .copied()
                .find(|b| up.contains(b) && p.isr.contains(b))
                .unwrap_or(-1);
            p.leader_epoch += 1;
        }
        p.last_moved_at = Some(now);
        let rec = &mut self.moves.history[r.record];
        rec.state = MoveState::Completed;
        rec.ended_ms = Some(now);
        tracing::info!(
            topic,
            partition,
            seconds = (now - rec.started_ms) as f64 / 1000.0,
            "reassignment completed"
        );
        self.drop_if_idle(topic, partition);
    }

    /// Updates the per-broker maxima of concurrent in-flight moves.
    pub fn record_concurrency(&mut self) {
        let mut dest: BTreeMap<BrokerId, usize> = BTreeMap::new();
        let mut any: BTreeMap<BrokerId, usize> = BTreeMap::new();
        for (t, p) in &self.active {
            let Some(part) = self.partition(t, *p) else {
                continue;
            };
            let Some(r) = part.reassignment() else {
                continue;
            };
            let mut involved: BTreeSet<BrokerId> = BTreeSet::new();
            for b in &r.adding {
                *dest.entry(*b).or_default() += 1;
                involved.insert(*b);
            }
            involved.extend(r.removing.iter().copied());
            if part.leader >= 0 && !r.adding.is_empty() {
                involved.insert(part.leader);
            }
            for b in involved {
                *any.entry(b).or_default() += 1;
            }
        }
        for (b, n) in dest {
            let m = self.moves.max_as_destination.entry(b).or_default();
            *m = (*m).max(n);
        }
        for (b, n) in any {
            let m = self.moves.max_as_participant.entry(b).or_default();
            *m = (*m).max(n);
        }
    }

    /// Progresses every in-flight copy by `dt` seconds.
    pub(super) fn progress_copies(&mut self, dt: f64, now: i64) {
        if self.active.is_empty() {
            return;
        }
        let mut copies: Vec<Copy> = Vec::new();
        for key in &self.active {
            let Some(topic) = self.topics.get(&key.0) else {
                continue;
            };
            let Some(p) = usize::try_from(key.1)
                .ok()
                .and_then(|i| topic.partitions.get(i))
            else {
                continue;
            };
            let leader = p.leader;
            if leader < 0 || !self.is_up(leader) {
                continue;
            }
            let Some(extra) = p.extra.as_ref() else {
                continue;
            };
            let follower_list = topic
                .configs
                .get("follower.replication.throttled.replicas")
                .map(String::as_str);
            let leader_list = topic
                .configs
                .get("leader.replication.throttled.replicas")
                .map(String::as_str);
            let leader_throttled = throttle_lists(leader_list, key.1, leader);
            if let Some(r) = &extra.reassignment {
                for (i, dest) in r.adding.iter().enumerate() {
                    if !self.is_up(*dest) || p.isr.contains(dest) {
                        continue;
                    }
                    copies.push(Copy {
                        key: key.clone(),
                        dest: *dest,
                        leader,
                        follower_throttled: throttle_lists(follower_list, key.1, *dest),
                        leader_throttled,
                        adding_index: Some(i),
                    });
                }
            }
            for (dest, _) in &extra.catchup {
                if !self.is_up(*dest) {
                    continue;
                }
                copies.push(Copy {
                    key: key.clone(),
                    dest: *dest,
                    leader,
                    follower_throttled: throttle_lists(follower_list, key.1, *dest),
                    leader_throttled,
                    adding_index: None,
                });
            }
        }
        let mut in_all: BTreeMap<BrokerId, usize> = BTreeMap::new();
        let mut out_all: BTreeMap<BrokerId, usize> = BTreeMap::new();
        let mut in_throttled: BTreeMap<BrokerId, usize> = BTreeMap::new();
        let mut out_throttled: BTreeMap<BrokerId, usize> = BTreeMap::new();
        for c in &copies {
            *in_all.entry(c.dest).or_default() += 1;
            *out_all.entry(c.leader).or_default() += 1;
            if c.follower_throttled {
                *in_throttled.entry(c.dest).or_default() += 1;
            }
            if c.leader_throttled {
                *out_throttled.entry(c.leader).or_default() += 1;
            }
        }
        let mut finished: BTreeSet<(String, i32)> = BTreeSet::new();
        for c in &copies {
            let mut rate = self.link_speed / in_all[&c.dest].max(1) as f64;
            rate = rate.min(self.link_speed / out_all[&c.leader].max(1) as f64);
            let mut limit = "link";
            if c.follower_throttled {
                if let Some(r) = self.throttle_rate(c.dest, "follower.replication.throttled.rate") {
                    let share = r / in_throttled[&c.dest].max(1) as f64;
                    if share <= rate {
                        rate = share;
                        limit = "followerThrottle";
                    }
                }
            }
            if c.leader_throttled {
                if let Some(r) = self.throttle_rate(c.leader, "leader.replication.throttled.rate") {
                    let share = r / out_throttled[&c.leader].max(1) as f64;
                    if share <= rate {
                        rate = share;
                        limit = "leaderThrottle";
                    }
                }
            }
            let bytes = rate * dt;
            let Some(p) = self.partition_mut(&c.key.0, c.key.1) else {
                continue;
            };
            let size = p.size;
            let mut joined = false;
            let mut record = None;
            let mut moved = bytes;
            if let Some(extra) = p.extra.as_mut() {
                match c.adding_index {
                    Some(i) => {
                        if let Some(r) = extra.reassignment.as_mut() {
                            if let Some(copied) = r.copied.get_mut(i) {
                                moved = bytes.min((size - *copied).max(0.0));
                                *copied += moved;
                                if *copied >= size {
                                    joined = true;
                                }
                                record = Some(r.record);
                            }
                        }
                    }
                    None => {
                        if let Some(entry) = extra.catchup.iter_mut().find(|(b, _)| *b == c.dest) {
                            entry.1 -= bytes;
                            if entry.1 <= 0.0 {
                                joined = true;
                            }
                        }
                        if joined {
                            extra.catchup.retain(|(b, _)| *b != c.dest);
                        }
                    }
                }
            }
            if joined && !p.isr.contains(&c.dest) {
                p.isr.push(c.dest);
                finished.insert(c.key.clone());
            }
            if let Some(idx) = record {
                let rec = &mut self.moves.history[idx];
                rec.bytes_copied += moved;
                rec.limited_by.insert(limit);
                if rate > rec.peak_rate {
                    rec.peak_rate = rate;
                }
            }
        }
        for key in finished {
            self.finish_if_done(&key.0, key.1, now);
            self.drop_if_idle(&key.0, key.1);
        }
        self.record_concurrency();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn throttle_lists_match_partition_broker_pairs_and_wildcards() {
        assert!(throttle_lists(Some("*"), 3, 7));
        assert!(throttle_lists(Some("0:1,3:7"), 3, 7));
        assert!(!throttle_lists(Some("0:1,3:6"), 3, 7));
        assert!(!throttle_lists(None, 0, 1));
        assert!(valid_throttle_list("0:1, 2:3"));
        assert!(!valid_throttle_list("0-1"));
    }
}
