//! When an in-flight move cannot progress: the stall rule, pure.
//!
//! A move's step is **stalled** when
//! - a broker it adds (a destination) is down: nothing can copy to it; or
//! - the partition has no leader to copy from and some of the step's source replicas are down;
//! - or, failing those, the bytes its adding replica holds have not grown for `limit` readings
//!   in a row (a reading is an executor pass that could read them; one that could not counts
//!   for nothing, neither progress nor its absence).
//!
//! A source replica that is down while another one leads does not stall the copy (the leader
//! serves it, in Kafka as in the simulator): such a move reads stalled only when its bytes stop
//! growing. The cause clears by itself: the broker comes back, the bytes grow again; the move is
//! then no longer stalled and goes on as before (nothing is sent for it).

use std::collections::{BTreeMap, BTreeSet};

use ballast_model::BrokerId;
use ballast_runtime::format_rfc3339_ms;

/// What the executor keeps about one move's copied bytes between readings.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Watch {
    /// The bytes of the last reading.
    last: Option<u64>,
    /// Readings in a row in which the bytes did not grow.
    still: u32,
    /// The last reading in which they grew (or when the watch began).
    progressed_at_ms: i64,
}

impl Watch {
    /// A watch that begins at `now_ms`: its first reading is the baseline.
    pub fn new(now_ms: i64) -> Watch {
        Watch {
            last: None,
            still: 0,
            progressed_at_ms: now_ms,
        }
    }

    /// The watch of a move a previous executor left stalled for want of progress since
    /// `since_ms`: it stays stalled until a reading shows its bytes grew.
    pub fn stalled_since(since_ms: i64, limit: u32) -> Watch {
        Watch {
            last: None,
            still: limit,
            progressed_at_ms: since_ms,
        }
    }

    /// Takes one reading of the bytes copied: `None` when they could not be read this pass.
    pub fn read(&mut self, copied: Option<u64>, now_ms: i64) {
        let Some(bytes) = copied else {
            return;
        };
        match self.last {
            Some(before) if bytes > before => {
                self.still = 0;
                self.progressed_at_ms = now_ms;
            }
            Some(_) => self.still = self.still.saturating_add(1),
            None => {}
        }
        self.last = Some(bytes);
    }

    /// Readings in a row without growth so far.
    pub fn still(&self) -> u32 {
        self.still
    }
}

/// A step in flight as the cluster shows it now.
#[derive(Debug, Clone)]
pub struct Step<'a> {
    /// The replicas the step adds.
    pub adding: &'a [BrokerId],
    /// The replicas the step starts from (what the copy can come from).
    pub sources: &'a [BrokerId],
    /// The partition's leader now (None: no leader).
    pub leader: Option<BrokerId>,
    /// Brokers in the cluster's metadata now.
    pub up: &'a BTreeSet<BrokerId>,
    /// Since when each broker that is down has been seen down.
    pub down_since: &'a BTreeMap<BrokerId, i64>,
}

/// A stalled move: since when, the brokers down it needs (empty: no progress), and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stall {
    pub since_ms: i64,
    pub brokers: Vec<BrokerId>,
    pub reason: String,
}

fn names(brokers: &[BrokerId]) -> String {
    brokers
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join(", ")
}

fn down_words(role: &str, brokers: &[BrokerId], since_ms: i64) -> String {
    let (noun, verb) = if brokers.len() == 1 {
        ("broker", "is")
    } else {
        ("brokers", "are")
    };
    format!(
        "{role} {noun} {} {verb} down (not in the cluster's metadata since {})",
        names(brokers),
        format_rfc3339_ms(since_ms)
    )
}

/// The stall rule: whether `step`, with the readings of `watch`, is stalled (`limit` readings
/// without growth make a stall), and why.
pub fn judge(step: &Step<'_>, watch: &Watch, limit: u32, now_ms: i64) -> Option<Stall> {
    if step.adding.is_empty() {
        // Nothing to copy: the step only drops replicas, which needs no broker up.
        return None;
    }
    let since = |b: &BrokerId| step.down_since.get(b).copied().unwrap_or(now_ms);
    let dest: Vec<BrokerId> = step
        .adding
        .iter()
        .copied()
        .filter(|b| !step.up.contains(b))
        .collect();
    let leaderless = step.leader.is_none_or(|l| !step.up.contains(&l));
    let src: Vec<BrokerId> = if leaderless {
        step.sources
            .iter()
            .copied()
            .filter(|b| !step.up.contains(b))
            .collect()
    } else {
        Vec::new()
    };
    if !dest.is_empty() || !src.is_empty() {
        let mut parts = Vec::new();
        if !dest.is_empty() {
            let at = dest.iter().map(since).min().unwrap_or(now_ms);
            parts.push(format!(
                "{}: nothing can copy to it until it returns",
                down_words("destination", &dest, at)
            ));
        }
        if !src.is_empty() {
            let at = src.iter().map(since).min().unwrap_or(now_ms);
            parts.push(format!(
                "no leader to copy from: {}",
                down_words("source", &src, at)
            ));
        }
        let mut brokers: Vec<BrokerId> = dest.iter().chain(src.iter()).copied().collect();
        brokers.sort_unstable();
        brokers.dedup();
        let since_ms = brokers.iter().map(since).min().unwrap_or(now_ms);
        return Some(Stall {
            since_ms,
            brokers,
            reason: format!("stalled: {}", parts.join("; ")),
        });
    }
    if watch.still >= limit.max(1) {
        return Some(Stall {
            since_ms: watch.progressed_at_ms,
            brokers: Vec::new(),
            reason: format!(
                "stalled: the copied bytes have not grown for {} readings (no progress since {})",
                watch.still,
                format_rfc3339_ms(watch.progressed_at_ms)
            ),
        });
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    const T0: i64 = 1_780_000_000_000;

    fn up(ids: &[BrokerId]) -> BTreeSet<BrokerId> {
        ids.iter().copied().collect()
    }

    fn step<'a>(
        adding: &'a [BrokerId],
        sources: &'a [BrokerId],
        leader: Option<BrokerId>,
        up: &'a BTreeSet<BrokerId>,
        down: &'a BTreeMap<BrokerId, i64>,
    ) -> Step<'a> {
        Step {
            adding,
            sources,
            leader,
            up,
            down_since: down,
        }
    }

    #[test]
    fn a_destination_broker_down_stalls_the_move_naming_the_broker_and_since_when() {
        let live = up(&[1, 2]);
        let down = BTreeMap::from([(3, T0 - 5_000)]);
        let s = judge(
            &step(&[3], &[1, 2], Some(1), &live, &down),
            &Watch::new(T0),
            15,
            T0,
        )
        .expect("stalled");
        assert_eq!(s.brokers, vec![3]);
        assert_eq!(s.since_ms, T0 - 5_000);
        assert!(
            s.reason.starts_with(
                "stalled: destination broker 3 is down (not in the cluster's metadata since "
            ) && s.reason.contains(&format_rfc3339_ms(T0 - 5_000)),
            "{}",
            s.reason
        );
    }

    #[test]
    fn a_partition_with_no_leader_and_its_sources_down_stalls_naming_them() {
        let live = up(&[3]);
        let down = BTreeMap::from([(1, T0 - 2_000), (2, T0 - 1_000)]);
        let s = judge(
            &step(&[3], &[1, 2], None, &live, &down),
            &Watch::new(T0),
            15,
            T0,
        )
        .expect("stalled");
        assert_eq!(s.brokers, vec![1, 2]);
        assert_eq!(s.since_ms, T0 - 2_000);
        assert!(
            s.reason
                .contains("no leader to copy from: source brokers 1, 2 are down"),
            "{}",
            s.reason
        );
    }

    #[test]
    fn a_source_down_while_another_replica_leads_does_not_stall_the_move() {
        let live = up(&[2, 3]);
        let down = BTreeMap::from([(1, T0)]);
        assert_eq!(
            judge(
                &step(&[3], &[1, 2], Some(2), &live, &down),
                &Watch::new(T0),
                15,
                T0
            ),
            None
        );
    }

    #[test]
    fn bytes_not_grown_for_the_configured_readings_stall_the_move_with_the_last_progress() {
        let live = up(&[1, 2, 3]);
        let down = BTreeMap::new();
        let s = step(&[3], &[1, 2], Some(1), &live, &down);
        let mut w = Watch::new(T0);
        w.read(Some(100), T0);
        w.read(Some(200), T0 + 1_000);
        for i in 0..2 {
            w.read(Some(200), T0 + 2_000 + i * 1_000);
            assert_eq!(judge(&s, &w, 3, T0 + 3_000), None, "not yet");
        }
        // A pass that could not read the bytes counts for nothing.
        w.read(None, T0 + 4_000);
        assert_eq!(judge(&s, &w, 3, T0 + 4_000), None);
        w.read(Some(200), T0 + 5_000);
        let stall = judge(&s, &w, 3, T0 + 5_000).expect("stalled");
        assert_eq!(stall.since_ms, T0 + 1_000);
        assert!(stall.brokers.is_empty());
        assert_eq!(
            stall.reason,
            format!(
                "stalled: the copied bytes have not grown for 3 readings (no progress since {})",
                format_rfc3339_ms(T0 + 1_000)
            )
        );
    }

    #[test]
    fn progress_resumed_means_not_stalled() {
        let live = up(&[1, 2, 3]);
        let down = BTreeMap::new();
        let s = step(&[3], &[1, 2], Some(1), &live, &down);
        let mut w = Watch::stalled_since(T0, 3);
        assert!(judge(&s, &w, 3, T0 + 10_000).is_some(), "left stalled");
        w.read(Some(500), T0 + 10_000);
        assert!(
            judge(&s, &w, 3, T0 + 10_000).is_some(),
            "a baseline is no progress"
        );
        w.read(Some(900), T0 + 11_000);
        assert_eq!(judge(&s, &w, 3, T0 + 11_000), None);
        // And the destination back up after being down: not stalled.
        let back = up(&[1, 2, 3]);
        let none = BTreeMap::new();
        assert_eq!(
            judge(&step(&[3], &[1, 2], Some(1), &back, &none), &w, 3, T0),
            None
        );
    }

    #[test]
    fn a_step_that_only_drops_replicas_never_stalls() {
        let live = up(&[1]);
        let down = BTreeMap::from([(2, T0)]);
        let mut w = Watch::new(T0);
        for i in 0..5 {
            w.read(Some(0), T0 + i);
        }
        assert_eq!(
            judge(&step(&[], &[1, 2], Some(1), &live, &down), &w, 1, T0),
            None
        );
    }
}
