//! The healer's decision, as a pure function of what a pass knows and `now`: for each of the three
//! loops, in priority order, whether it applies moves or why it skips. No IO, no clock.
//!
//! The gates are checked in the spec's order and the first that holds is the loop's skip reason:
//! `outside_window`, `cooldown`, `partitions_in_cooldown`, `dry_run`, `active_reassignments`,
//! `license_invalid`, `data_not_ready`, `benefit_unconfirmed`, `no_proposal`,
//! `higher_priority_running`. A dry run still plans: it records the moves it would have queued
//! and the gate that would have stopped it next.

use std::collections::BTreeSet;

use ballast_config::{HealWindow, TimeOfDay};
use ballast_model::BrokerId;
use serde::Serialize;

/// The three loops, highest priority first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub enum Loop {
    /// Replicas of brokers down longer than the grace period, re-created elsewhere.
    Critical,
    /// Topics below their target replication factor, raised.
    ReplicationFactor,
    /// The current balancing proposal, applied when its decision allows it.
    Activity,
}

impl Loop {
    pub const ALL: [Loop; 3] = [Loop::Critical, Loop::ReplicationFactor, Loop::Activity];

    /// The name in the status report, the operation's detail and the audit event.
    pub fn name(self) -> &'static str {
        match self {
            Loop::Critical => "critical",
            Loop::ReplicationFactor => "replicationFactor",
            Loop::Activity => "activity",
        }
    }

    fn index(self) -> usize {
        match self {
            Loop::Critical => 0,
            Loop::ReplicationFactor => 1,
            Loop::Activity => 2,
        }
    }
}

/// The spec's skip reasons, in the order the gates are checked.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Skip {
    OutsideWindow,
    Cooldown,
    PartitionsInCooldown,
    DryRun,
    ActiveReassignments,
    LicenseInvalid,
    DataNotReady,
    BenefitUnconfirmed,
    NoProposal,
    HigherPriorityRunning,
}

impl Skip {
    pub const ORDER: [Skip; 10] = [
        Skip::OutsideWindow,
        Skip::Cooldown,
        Skip::PartitionsInCooldown,
        Skip::DryRun,
        Skip::ActiveReassignments,
        Skip::LicenseInvalid,
        Skip::DataNotReady,
        Skip::BenefitUnconfirmed,
        Skip::NoProposal,
        Skip::HigherPriorityRunning,
    ];

    /// The label of `ballast_selfhealing_skipped_total{reason}`.
    pub fn as_str(self) -> &'static str {
        match self {
            Skip::OutsideWindow => "outside_window",
            Skip::Cooldown => "cooldown",
            Skip::PartitionsInCooldown => "partitions_in_cooldown",
            Skip::DryRun => "dry_run",
            Skip::ActiveReassignments => "active_reassignments",
            Skip::LicenseInvalid => "license_invalid",
            Skip::DataNotReady => "data_not_ready",
            Skip::BenefitUnconfirmed => "benefit_unconfirmed",
            Skip::NoProposal => "no_proposal",
            Skip::HigherPriorityRunning => "higher_priority_running",
        }
    }
}

impl Serialize for Skip {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

/// One partition's change.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Move {
    pub topic: String,
    pub partition: i32,
    pub replicas_before: Vec<BrokerId>,
    pub replicas_after: Vec<BrokerId>,
    /// Bytes copied in all.
    pub bytes: u64,
}

/// What a loop's planner found (see `crate::work`).
#[derive(Debug, Clone, PartialEq)]
pub enum Work {
    /// Moves that would heal, in the order to take them.
    Moves(Vec<Move>),
    /// The data to plan on is not there or not settled (`data_not_ready`), and why.
    NotReady(String),
    /// The benefit has not shown on enough fresh measurements (`benefit_unconfirmed`).
    Unconfirmed(String),
    /// Nothing to do (`no_proposal`), and why.
    Nothing(String),
}

/// One loop's input.
#[derive(Debug, Clone, PartialEq)]
pub struct LoopInput {
    /// `BALLAST_HEAL_*_ENABLED`
    pub enabled: bool,
    /// When this loop last queued an operation.
    pub last_applied_ms: Option<i64>,
    pub work: Work,
}

/// Everything a pass knows.
#[derive(Debug, Clone)]
pub struct State {
    pub window: Option<HealWindow>,
    pub dry_run: bool,
    pub license_allows: bool,
    /// `BALLAST_HEAL_COOLDOWN`
    pub cooldown_ms: i64,
    /// `BALLAST_HEAL_MAX_PARTITIONS_PER_RUN`
    pub max_partitions: Option<usize>,
    /// Why reassignments are in progress (an unfinished operation, the slot held, or the
    /// cluster reassigning), when they are.
    pub active_reassignments: Option<String>,
    /// Partitions still in their move cooldown.
    pub partitions_in_cooldown: BTreeSet<(String, i32)>,
    /// A broker is down and not in maintenance: balancing is held, and while the critical loop
    /// runs the lower loops wait for it.
    pub broker_down: bool,
    /// Critical, replication factor, activity.
    pub loops: [LoopInput; 3],
}

/// What one loop does this pass.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase", tag = "outcome")]
pub enum Outcome {
    /// The loop is switched off.
    Disabled,
    /// Queue these moves.
    Apply { moves: Vec<Move> },
    Skipped {
        reason: Skip,
        why: String,
        /// In a dry run: the moves it would have queued (capped like a run).
        would_move: Vec<Move>,
        /// In a dry run: the gate after `dry_run` that would have stopped it, if any.
        then: Option<Skip>,
    },
}

impl Outcome {
    pub fn skip_reason(&self) -> Option<Skip> {
        match self {
            Outcome::Skipped { reason, .. } => Some(*reason),
            _ => None,
        }
    }
}

/// A loop's decision and when its cooldown ends.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct LoopDecision {
    #[serde(rename = "loop")]
    pub kind: Loop,
    pub outcome: Outcome,
    pub cooldown_until_ms: Option<i64>,
}

/// Whether `now_ms` (UTC) is inside the window; no window is any time.
pub fn in_window(window: Option<&HealWindow>, now_ms: i64) -> bool {
    window.is_none_or(|w| w.contains(TimeOfDay::from_unix_secs(now_ms.div_euclid(1000))))
}

fn fmt_tod(t: TimeOfDay) -> String {
    format!("{:02}:{:02}", t.hour, t.minute)
}

/// The moves of `work` outside the move cooldown, and whether any were held back by it.
fn usable_moves(work: &Work, cooling: &BTreeSet<(String, i32)>) -> (Vec<Move>, usize) {
    match work {
        Work::Moves(moves) => {
            let usable: Vec<Move> = moves
                .iter()
                .filter(|m| !cooling.contains(&(m.topic.clone(), m.partition)))
                .cloned()
                .collect();
            let held = moves.len() - usable.len();
            (usable, held)
        }
        _ => (Vec::new(), 0),
    }
}

fn capped(mut moves: Vec<Move>, cap: Option<usize>) -> Vec<Move> {
    if let Some(c) = cap {
        moves.truncate(c);
    }
    moves
}

/// The decision of every loop at `now_ms`, highest priority first. At most one loop applies.
pub fn decide(state: &State, now_ms: i64) -> Vec<LoopDecision> {
    // Which loops have moves to make (enabled, outside the move cooldown): a lower loop waits for
    // a higher one that has.
    let has_work: Vec<bool> = Loop::ALL
        .iter()
        .map(|l| {
            let input = &state.loops[l.index()];
            input.enabled
                && !usable_moves(&input.work, &state.partitions_in_cooldown)
                    .0
                    .is_empty()
        })
        .collect();
    Loop::ALL
        .iter()
        .map(|&kind| {
            let input = &state.loops[kind.index()];
            let cooldown_until_ms = input
                .last_applied_ms
                .map(|at| at.saturating_add(state.cooldown_ms))
                .filter(|until| *until > now_ms);
            let outcome = if input.enabled {
                decide_loop(state, kind, &has_work, now_ms, cooldown_until_ms)
            } else {
                Outcome::Disabled
            };
            LoopDecision {
                kind,
                outcome,
                cooldown_until_ms,
            }
        })
        .collect()
}

/// Every gate that holds for one loop, in the spec's order, with why.
fn gates(
    state: &State,
    kind: Loop,
    has_work: &[bool],
    now_ms: i64,
    cooldown_until_ms: Option<i64>,
    usable: &[Move],
    held: usize,
) -> Vec<(Skip, String)> {
    let input = &state.loops[kind.index()];
    let mut out = Vec::new();
    if let Some(w) = state
        .window
        .as_ref()
        .filter(|_| !in_window(state.window.as_ref(), now_ms))
    {
        out.push((
            Skip::OutsideWindow,
            format!(
                "outside the healing window {} to {} UTC",
                fmt_tod(w.start),
                fmt_tod(w.end)
            ),
        ));
    }
    if let Some(until) = cooldown_until_ms {
        out.push((
            Skip::Cooldown,
            format!(
                "this loop applied a change; it rests for {} s more",
                (until - now_ms + 999) / 1000
            ),
        ));
    }
    if held > 0 && usable.is_empty() {
        out.push((
            Skip::PartitionsInCooldown,
            format!("all {held} partition(s) to move are in their move cooldown"),
        ));
    }
    if state.dry_run {
        out.push((
            Skip::DryRun,
            "BALLAST_HEAL_DRY_RUN is true: recorded what would be moved, moved nothing".into(),
        ));
    }
    if let Some(why) = &state.active_reassignments {
        out.push((Skip::ActiveReassignments, why.clone()));
    }
    if !state.license_allows {
        out.push((
            Skip::LicenseInvalid,
            "no valid license: self-healing applies nothing".into(),
        ));
    }
    match &input.work {
        Work::NotReady(why) => out.push((Skip::DataNotReady, why.clone())),
        Work::Unconfirmed(why) => out.push((Skip::BenefitUnconfirmed, why.clone())),
        Work::Nothing(why) => out.push((Skip::NoProposal, why.clone())),
        Work::Moves(_) if usable.is_empty() && held == 0 => {
            out.push((Skip::NoProposal, "nothing to move".into()));
        }
        Work::Moves(_) => {}
    }
    let higher = Loop::ALL
        .iter()
        .filter(|l| **l < kind)
        .find(|l| has_work[l.index()]);
    if let Some(l) = higher {
        out.push((
            Skip::HigherPriorityRunning,
            format!("the {} loop has moves to make first", l.name()),
        ));
    } else if kind != Loop::Critical && state.broker_down && state.loops[0].enabled {
        out.push((
            Skip::HigherPriorityRunning,
            "a broker is down: the critical loop is in charge until it is back or repaired".into(),
        ));
    }
    out
}

fn decide_loop(
    state: &State,
    kind: Loop,
    has_work: &[bool],
    now_ms: i64,
    cooldown_until_ms: Option<i64>,
) -> Outcome {
    let input = &state.loops[kind.index()];
    let (usable, held) = usable_moves(&input.work, &state.partitions_in_cooldown);
    let gates = gates(
        state,
        kind,
        has_work,
        now_ms,
        cooldown_until_ms,
        &usable,
        held,
    );
    let mut it = gates.into_iter();
    match it.next() {
        None => Outcome::Apply {
            moves: capped(usable, state.max_partitions),
        },
        Some((Skip::DryRun, why)) => Outcome::Skipped {
            reason: Skip::DryRun,
            why,
            would_move: capped(usable, state.max_partitions),
            then: it.next().map(|(s, _)| s),
        },
        Some((reason, why)) => Outcome::Skipped {
            reason,
            why,
            would_move: Vec::new(),
            then: None,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MIN: i64 = 60_000;

    fn mv(topic: &str, p: i32) -> Move {
        Move {
            topic: topic.into(),
            partition: p,
            replicas_before: vec![1, 2],
            replicas_after: vec![1, 3],
            bytes: 10,
        }
    }

    fn idle() -> LoopInput {
        LoopInput {
            enabled: true,
            last_applied_ms: None,
            work: Work::Nothing("balanced".into()),
        }
    }

    fn working(moves: Vec<Move>) -> LoopInput {
        LoopInput {
            work: Work::Moves(moves),
            ..idle()
        }
    }

    /// Licensed, not a dry run, no window, nothing running: every gate open.
    fn open(loops: [LoopInput; 3]) -> State {
        State {
            window: None,
            dry_run: false,
            license_allows: true,
            cooldown_ms: 30 * MIN,
            max_partitions: None,
            active_reassignments: None,
            partitions_in_cooldown: BTreeSet::new(),
            broker_down: false,
            loops,
        }
    }

    fn reason(d: &[LoopDecision], l: Loop) -> Option<&'static str> {
        d[l.index()].outcome.skip_reason().map(Skip::as_str)
    }

    fn at(hour: u8, minute: u8) -> TimeOfDay {
        TimeOfDay { hour, minute }
    }

    /// 2026-01-01 at hh:mm UTC.
    fn clock(hour: i64, minute: i64) -> i64 {
        1_767_225_600_000 + (hour * 60 + minute) * MIN
    }

    #[test]
    fn with_every_gate_open_the_loop_applies_its_moves() {
        let s = open([idle(), idle(), working(vec![mv("a", 0)])]);
        let d = decide(&s, clock(12, 0));
        assert_eq!(
            d[2].outcome,
            Outcome::Apply {
                moves: vec![mv("a", 0)]
            }
        );
        assert_eq!(reason(&d, Loop::Critical), Some("no_proposal"));
    }

    #[test]
    fn outside_window_holds_outside_a_window_that_crosses_midnight_and_not_inside_it() {
        let mut s = open([working(vec![mv("a", 0)]), idle(), idle()]);
        s.window = Some(HealWindow {
            start: at(22, 0),
            end: at(4, 0),
        });
        assert_eq!(
            reason(&decide(&s, clock(12, 0)), Loop::Critical),
            Some("outside_window")
        );
        assert_eq!(reason(&decide(&s, clock(23, 30)), Loop::Critical), None);
        assert_eq!(reason(&decide(&s, clock(3, 59)), Loop::Critical), None);
        assert_eq!(
            reason(&decide(&s, clock(4, 0)), Loop::Critical),
            Some("outside_window")
        );
    }

    #[test]
    fn cooldown_holds_a_loop_that_applied_within_the_heal_cooldown_and_says_until_when() {
        let mut s = open([idle(), idle(), working(vec![mv("a", 0)])]);
        s.loops[2].last_applied_ms = Some(clock(12, 0));
        let d = decide(&s, clock(12, 29));
        assert_eq!(reason(&d, Loop::Activity), Some("cooldown"));
        assert_eq!(d[2].cooldown_until_ms, Some(clock(12, 30)));
        let d = decide(&s, clock(12, 30));
        assert_eq!(reason(&d, Loop::Activity), None);
        assert_eq!(d[2].cooldown_until_ms, None);
    }

    #[test]
    fn partitions_in_cooldown_holds_a_loop_whose_every_partition_is_cooling_and_drops_cooling_ones_otherwise(
    ) {
        let mut s = open([idle(), working(vec![mv("a", 0), mv("a", 1)]), idle()]);
        s.partitions_in_cooldown = BTreeSet::from([("a".to_string(), 0)]);
        let d = decide(&s, clock(12, 0));
        assert_eq!(
            d[1].outcome,
            Outcome::Apply {
                moves: vec![mv("a", 1)]
            }
        );
        s.partitions_in_cooldown.insert(("a".to_string(), 1));
        assert_eq!(
            reason(&decide(&s, clock(12, 0)), Loop::ReplicationFactor),
            Some("partitions_in_cooldown")
        );
    }

    #[test]
    fn dry_run_records_the_capped_moves_it_would_queue_and_the_next_gate() {
        let mut s = open([
            working(vec![mv("a", 0), mv("a", 1), mv("a", 2)]),
            idle(),
            idle(),
        ]);
        s.dry_run = true;
        s.max_partitions = Some(2);
        s.license_allows = false;
        let d = decide(&s, clock(12, 0));
        match &d[0].outcome {
            Outcome::Skipped {
                reason,
                would_move,
                then,
                ..
            } => {
                assert_eq!(*reason, Skip::DryRun);
                assert_eq!(would_move, &vec![mv("a", 0), mv("a", 1)]);
                assert_eq!(*then, Some(Skip::LicenseInvalid));
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn active_reassignments_hold_every_loop() {
        let mut s = open([working(vec![mv("a", 0)]), idle(), idle()]);
        s.active_reassignments = Some("operation op-1 is running".into());
        let d = decide(&s, clock(12, 0));
        assert!(d
            .iter()
            .all(|d| d.outcome.skip_reason() == Some(Skip::ActiveReassignments)));
    }

    #[test]
    fn license_invalid_applies_nothing() {
        let mut s = open([working(vec![mv("a", 0)]), idle(), idle()]);
        s.license_allows = false;
        assert_eq!(
            reason(&decide(&s, clock(12, 0)), Loop::Critical),
            Some("license_invalid")
        );
    }

    #[test]
    fn data_not_ready_benefit_unconfirmed_and_no_proposal_come_from_the_loop_work() {
        let mut s = open([idle(), idle(), idle()]);
        s.loops[0].work = Work::NotReady("no sample yet".into());
        s.loops[1].work = Work::Moves(Vec::new());
        s.loops[2].work = Work::Unconfirmed("1 of 3".into());
        let d = decide(&s, clock(12, 0));
        assert_eq!(reason(&d, Loop::Critical), Some("data_not_ready"));
        assert_eq!(reason(&d, Loop::ReplicationFactor), Some("no_proposal"));
        assert_eq!(reason(&d, Loop::Activity), Some("benefit_unconfirmed"));
    }

    #[test]
    fn higher_priority_running_holds_lower_loops_while_a_higher_one_has_moves() {
        let s = open([
            working(vec![mv("a", 0)]),
            working(vec![mv("b", 0)]),
            working(vec![mv("c", 0)]),
        ]);
        let d = decide(&s, clock(12, 0));
        assert!(matches!(d[0].outcome, Outcome::Apply { .. }));
        assert_eq!(
            reason(&d, Loop::ReplicationFactor),
            Some("higher_priority_running")
        );
        assert_eq!(reason(&d, Loop::Activity), Some("higher_priority_running"));
        // A broker down within its grace: the lower loops wait for the critical loop.
        let mut s = open([idle(), working(vec![mv("b", 0)]), idle()]);
        s.broker_down = true;
        assert_eq!(
            reason(&decide(&s, clock(12, 0)), Loop::ReplicationFactor),
            Some("higher_priority_running")
        );
        // A disabled loop holds nobody.
        s.loops[0].enabled = false;
        s.loops[0].work = Work::Moves(vec![mv("a", 0)]);
        let d = decide(&s, clock(12, 0));
        assert_eq!(d[0].outcome, Outcome::Disabled);
        assert_eq!(reason(&d, Loop::ReplicationFactor), None);
    }

    #[test]
    fn the_gates_are_checked_in_the_spec_order() {
        // Every gate holds at once: each one's removal reveals the next.
        let mut s = open([working(vec![mv("x", 0)]), idle(), working(vec![mv("a", 0)])]);
        s.window = Some(HealWindow {
            start: at(1, 0),
            end: at(2, 0),
        });
        s.loops[2].last_applied_ms = Some(clock(11, 50));
        s.partitions_in_cooldown = BTreeSet::from([("a".to_string(), 0)]);
        s.dry_run = true;
        s.active_reassignments = Some("running".into());
        s.license_allows = false;
        let now = clock(12, 0);
        let mut seen = Vec::new();
        for _ in 0..8 {
            let r = decide(&s, now)[2].outcome.skip_reason().expect("skips");
            seen.push(r);
            match r {
                Skip::OutsideWindow => s.window = None,
                Skip::Cooldown => s.loops[2].last_applied_ms = None,
                Skip::PartitionsInCooldown => {
                    s.partitions_in_cooldown.clear();
                    s.loops[2].work = Work::NotReady("warming".into());
                }
                Skip::DryRun => s.dry_run = false,
                Skip::ActiveReassignments => s.active_reassignments = None,
                Skip::LicenseInvalid => s.license_allows = true,
                Skip::DataNotReady => s.loops[2].work = Work::Unconfirmed("1 of 3".into()),
                Skip::BenefitUnconfirmed => s.loops[2].work = Work::Nothing("none".into()),
                _ => break,
            }
        }
        seen.push(decide(&s, now)[2].outcome.skip_reason().expect("skips"));
        s.loops[2].work = Work::Moves(vec![mv("a", 0)]);
        seen.push(decide(&s, now)[2].outcome.skip_reason().expect("skips"));
        assert_eq!(seen, Skip::ORDER.to_vec());
    }
}
