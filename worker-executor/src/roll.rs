//! Rolling restarts (docs/rolling-restarts.md): one broker at a time, the active controller last.
//!
//! Per broker: wait until the cluster is healthy (no offline partition, no replica out of sync
//! but the broker's own) → move leadership off it (its partitions' replica order changed so
//! another in-sync replica is preferred, then a preferred election) → ask its agent to restart
//! it → wait until it is back in the ISR of every partition it holds → give leadership back
//! (the order restored, a preferred election) → settle → next broker. Every wait has a timeout;
//! a failure stops the roll with the broker and the reason.
//!
//! [`step`] is the pure core: the stored roll, what the cluster and the agent look like now and
//! the clock in, the roll's next state and the cluster requests to send out. [`drive`] is the IO
//! shell the executor calls every pass. Requests are idempotent (a reorder to the order the
//! partition already has, an election of the leader it already has), so a pass that dies
//! between saving and sending is repeated safely by the next one; the partitions whose order
//! changed are saved *before* the reorder is sent, so the original order is never lost.

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use ballast_config::Config;
use ballast_kafka::{Client, ClusterMetadata, ElectionType};
use ballast_model::TopicPartition;
use ballast_runtime::millis;
use ballast_schema::{
    roll_holder, AgentCommand, AgentRecord, BrokerOutcome, CommandKind, CommandState,
    NewAgentCommand, NewAuditEvent, ReorderedPartition, Roll, RollPhase, RollState, Store,
    ROLL_PURPOSE,
};
use serde_json::json;
use tracing::{info, warn};

use crate::engine::ExecError;

/// The timeouts of a roll, from `BALLAST_ROLL_*` and `BALLAST_AGENT_STALE_AFTER`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Timeouts {
    pub healthy_ms: i64,
    pub leader_ms: i64,
    pub restart_ms: i64,
    pub recovery_ms: i64,
    pub settle_ms: i64,
    pub agent_stale_ms: i64,
}

impl Timeouts {
    pub fn from_config(config: &Config) -> Timeouts {
        let r = &config.roll;
        Timeouts {
            healthy_ms: millis(r.healthy_timeout),
            leader_ms: millis(r.leader_timeout),
            restart_ms: millis(r.restart_timeout),
            recovery_ms: millis(r.recovery_timeout),
            settle_ms: millis(r.settle),
            agent_stale_ms: millis(r.agent_stale_after),
        }
    }
}

/// One partition as the cluster reports it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PartitionView {
    pub topic: String,
    pub partition: i32,
    pub replicas: Vec<i32>,
    pub isr: Vec<i32>,
    /// `None`: offline.
    pub leader: Option<i32>,
}

/// What a pass sees.
#[derive(Debug, Clone, Default)]
pub struct View {
    pub partitions: Vec<PartitionView>,
    /// Brokers the cluster lists (registered and not fenced).
    pub alive: BTreeSet<i32>,
    /// The current broker's agent.
    pub agent: Option<AgentRecord>,
    /// The current broker's restart command.
    pub command: Option<AgentCommand>,
    /// Another unfinished command of the current broker's agent (e.g. an upgrade): the roll
    /// waits for it before it touches the broker.
    pub other_command: Option<AgentCommand>,
}

impl View {
    pub fn from_metadata(md: &ClusterMetadata) -> View {
        let mut partitions = Vec::new();
        for t in &md.topics {
            for p in &t.partitions {
                partitions.push(PartitionView {
                    topic: t.name.clone(),
                    partition: p.partition,
                    replicas: p.replicas.clone(),
                    isr: p.isr.clone(),
                    leader: p.leader.filter(|l| *l >= 0),
                });
            }
        }
        partitions.sort_by(|a, b| (&a.topic, a.partition).cmp(&(&b.topic, b.partition)));
        View {
            partitions,
            alive: md.brokers.iter().map(|b| b.id).collect(),
            agent: None,
            command: None,
            other_command: None,
        }
    }

    /// Why the cluster is not ready for `broker`'s restart (offline partitions, replicas out of
    /// sync other than `broker`'s own), `None` when it is.
    pub fn unhealthy_for(&self, broker: i32) -> Option<String> {
        let offline: Vec<String> = self
            .partitions
            .iter()
            .filter(|p| p.leader.is_none())
            .map(|p| format!("{}-{}", p.topic, p.partition))
            .collect();
        if !offline.is_empty() {
            return Some(format!(
                "{} offline partition(s): {}",
                offline.len(),
                sample(&offline)
            ));
        }
        let urp: Vec<String> = self
            .partitions
            .iter()
            .filter(|p| {
                p.replicas
                    .iter()
                    .any(|r| *r != broker && !p.isr.contains(r))
            })
            .map(|p| format!("{}-{}", p.topic, p.partition))
            .collect();
        if !urp.is_empty() {
            return Some(format!(
                "{} under-replicated partition(s) beyond broker {broker}'s own: {}",
                urp.len(),
                sample(&urp)
            ));
        }
        None
    }

    /// Partitions holding `broker` whose ISR lacks it.
    fn out_of_sync(&self, broker: i32) -> Vec<String> {
        self.partitions
            .iter()
            .filter(|p| p.replicas.contains(&broker) && !p.isr.contains(&broker))
            .map(|p| format!("{}-{}", p.topic, p.partition))
            .collect()
    }

    fn led_by(&self, broker: i32) -> Vec<&PartitionView> {
        self.partitions
            .iter()
            .filter(|p| p.leader == Some(broker))
            .collect()
    }

    fn find(&self, topic: &str, partition: i32) -> Option<&PartitionView> {
        self.partitions
            .iter()
            .find(|p| p.topic == topic && p.partition == partition)
    }
}

fn sample(names: &[String]) -> String {
    let mut s = names.iter().take(5).cloned().collect::<Vec<_>>().join(", ");
    if names.len() > 5 {
        s.push_str(", …");
    }
    s
}

/// A request to the cluster.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Request {
    /// Reassign to the same replicas in another order (no data moves).
    Reorder(Vec<(TopicPartition, Vec<i32>)>),
    /// Preferred leader election.
    ElectPreferred(Vec<TopicPartition>),
}

/// The result of one pass.
#[derive(Debug, Clone, PartialEq)]
pub struct Step {
    pub roll: Roll,
    pub requests: Vec<Request>,
    /// A restart command to queue (its id lands in the progress).
    pub command: Option<NewAgentCommand>,
    pub audit: Vec<NewAuditEvent>,
    /// A restart command to cancel (the roll failed before its outcome).
    pub cancel_command: Option<i64>,
    /// Whether anything changed that must be saved.
    pub changed: bool,
}

fn tp(topic: &str, partition: i32) -> TopicPartition {
    TopicPartition::new(topic, partition)
}

/// The order that makes another in-sync replica preferred: the first in-sync replica other
/// than `broker` first, `broker` last. `None` when no other replica is in sync.
pub fn order_without(p: &PartitionView, broker: i32) -> Option<Vec<i32>> {
    let first = p
        .replicas
        .iter()
        .copied()
        .find(|r| *r != broker && p.isr.contains(r))?;
    let mut order = vec![first];
    order.extend(
        p.replicas
            .iter()
            .copied()
            .filter(|r| *r != first && *r != broker),
    );
    order.push(broker);
    Some(order)
}

struct Ctx<'a> {
    view: &'a View,
    t: &'a Timeouts,
    now: i64,
    requests: Vec<Request>,
    command: Option<NewAgentCommand>,
    audit: Vec<NewAuditEvent>,
    cancel_command: Option<i64>,
}

impl Ctx<'_> {
    fn event(
        &self,
        roll: &Roll,
        action: &str,
        status: u16,
        summary: serde_json::Value,
    ) -> NewAuditEvent {
        NewAuditEvent {
            at_ms: self.now,
            action: action.into(),
            method: "INTERNAL".into(),
            user_id: Some(roll.user_id.clone()),
            requested_by: Some(roll.user_id.clone()),
            status,
            target: Some(roll.id.clone()),
            summary,
            related_event_id: roll.audit_event_id,
            ..NewAuditEvent::default()
        }
    }
}

fn enter(roll: &mut Roll, phase: RollPhase, now: i64, waiting_for: Option<String>) {
    roll.phase = phase;
    roll.phase_started_at_ms = now;
    roll.progress.waiting_for = waiting_for;
}

fn elapsed(roll: &Roll, now: i64) -> i64 {
    now.saturating_sub(roll.phase_started_at_ms)
}

fn secs(ms: i64) -> String {
    ballast_config::format_duration(Duration::from_millis(u64::try_from(ms).unwrap_or(0)))
}

/// Stops the roll on its current broker: the reason is kept, the partitions reordered for the
/// broker are given their order back (best effort: the broker may be down).
fn fail(roll: &mut Roll, cx: &mut Ctx<'_>, broker: i32, reason: String) {
    restore_requests(roll, cx);
    // A restart the agent has not finished must not happen later, outside the roll.
    let finished = cx.view.command.as_ref().is_some_and(|c| {
        Some(c.id) == roll.progress.command_id
            && matches!(
                c.state,
                CommandState::Succeeded | CommandState::Failed | CommandState::Cancelled
            )
    });
    if !finished {
        cx.cancel_command = roll.progress.command_id;
    }
    let started = roll.progress.broker_started_at_ms.unwrap_or(cx.now);
    roll.progress.brokers_done.push(BrokerOutcome {
        broker_id: broker,
        started_at_ms: started,
        finished_at_ms: cx.now,
        outcome: "failed".into(),
        detail: reason.clone(),
    });
    roll.state = RollState::Failed;
    roll.error = Some(format!("broker {broker}: {reason}"));
    roll.failed_broker = Some(broker);
    roll.finished_at_ms = Some(cx.now);
    roll.progress.waiting_for = None;
    let event = cx.event(
        roll,
        "rolling_restart.fail",
        500,
        json!({ "rollId": roll.id, "brokerId": broker, "reason": reason,
                "message": format!("rolling restart {} stopped at broker {broker}: {reason}", roll.id) }),
    );
    cx.audit.push(event);
}

/// Requests that give the reordered partitions their order back and their preferred leader.
fn restore_requests(roll: &Roll, cx: &mut Ctx<'_>) {
    let mut reorder = Vec::new();
    let mut elect = Vec::new();
    for r in &roll.progress.reordered {
        let Some(p) = cx.view.find(&r.topic, r.partition) else {
            continue;
        };
        if p.replicas != r.replicas {
            reorder.push((tp(&r.topic, r.partition), r.replicas.clone()));
        }
        if let Some(first) = r.replicas.first() {
            if p.leader != Some(*first) && p.isr.contains(first) {
                elect.push(tp(&r.topic, r.partition));
            }
        }
    }
    if !reorder.is_empty() {
        cx.requests.push(Request::Reorder(reorder));
    }
    if !elect.is_empty() {
        cx.requests.push(Request::ElectPreferred(elect));
    }
}

/// Ends the roll after its current broker was skipped (abort at a safe point).
fn aborted(roll: &mut Roll, cx: &mut Ctx<'_>) {
    roll.state = RollState::Aborted;
    roll.finished_at_ms = Some(cx.now);
    roll.progress.waiting_for = None;
    let left: Vec<i32> = roll.brokers.iter().skip(roll.position).copied().collect();
    let event = cx.event(
        roll,
        "rolling_restart.aborted",
        200,
        json!({ "rollId": roll.id, "notRestarted": left,
                "message": format!("rolling restart {} aborted; not restarted: {left:?}", roll.id) }),
    );
    cx.audit.push(event);
}

/// One pass of a roll. `roll` is as stored; the result is what to save and send.
pub fn step(roll: &Roll, view: &View, t: &Timeouts, now: i64) -> Step {
    let mut r = roll.clone();
    let mut cx = Ctx {
        view,
        t,
        now,
        requests: Vec::new(),
        command: None,
        audit: Vec::new(),
        cancel_command: None,
    };
    if r.state.is_unfinished() {
        advance(&mut r, &mut cx);
    }
    let changed =
        r != *roll || cx.command.is_some() || !cx.audit.is_empty() || cx.cancel_command.is_some();
    Step {
        roll: r,
        requests: cx.requests,
        command: cx.command,
        audit: cx.audit,
        cancel_command: cx.cancel_command,
        changed,
    }
}

fn advance(r: &mut Roll, cx: &mut Ctx<'_>) {
    let now = cx.now;
    let safe_point = matches!(r.phase, RollPhase::HealthyWait | RollPhase::Settling);
    if r.abort_requested {
        if safe_point {
            aborted(r, cx);
            return;
        }
        r.state = RollState::Aborting;
    } else if safe_point {
        match (r.state, r.pause_requested) {
            (RollState::Running, true) => {
                r.state = RollState::Paused;
                r.progress.waiting_for = Some("paused by an operator".into());
                return;
            }
            (RollState::Paused, true) => return,
            (RollState::Paused, false) => {
                r.state = RollState::Running;
                let phase = r.phase;
                enter(r, phase, now, None);
            }
            _ => {}
        }
    }
    let Some(broker) = r.current_broker() else {
        complete(r, cx);
        return;
    };
    match r.phase {
        RollPhase::HealthyWait => healthy_wait(r, cx, broker),
        RollPhase::LeadersOff => leaders_off(r, cx, broker),
        RollPhase::Restarting => restarting(r, cx, broker),
        RollPhase::Recovering => recovering(r, cx, broker),
        RollPhase::LeadersBack => leaders_back(r, cx, broker),
        RollPhase::Settling => {
            if elapsed(r, now) >= cx.t.settle_ms {
                enter(r, RollPhase::HealthyWait, now, None);
                healthy_wait(r, cx, broker);
            }
        }
    }
}

fn agent_fresh(view: &View, t: &Timeouts, now: i64) -> bool {
    view.agent
        .as_ref()
        .is_some_and(|a| now.saturating_sub(a.last_seen_at_ms) < t.agent_stale_ms)
}

fn healthy_wait(r: &mut Roll, cx: &mut Ctx<'_>, broker: i32) {
    let now = cx.now;
    let blocker = if !agent_fresh(cx.view, cx.t, now) {
        Some(format!(
            "no agent of broker {broker} has reported in the last {}",
            secs(cx.t.agent_stale_ms)
        ))
    } else if !cx.view.alive.contains(&broker) {
        Some(format!(
            "broker {broker} is not registered with the cluster"
        ))
    } else if let Some(c) = &cx.view.other_command {
        Some(format!(
            "the agent of broker {broker} has an unfinished {} command ({})",
            c.kind, c.id
        ))
    } else {
        cx.view.unhealthy_for(broker)
    };
    if let Some(why) = blocker {
        if elapsed(r, now) >= cx.t.healthy_ms {
            fail(
                r,
                cx,
                broker,
                format!("not healthy after {}: {why}", secs(cx.t.healthy_ms)),
            );
        } else if r.progress.waiting_for.as_deref() != Some(why.as_str()) {
            r.progress.waiting_for = Some(why);
        }
        return;
    }
    // Healthy: move leadership off. The original orders are saved with this step, before the
    // reorder is sent.
    r.progress.broker_started_at_ms = Some(now);
    r.progress.command_id = None;
    let mut reordered = Vec::new();
    let mut reorder = Vec::new();
    for p in cx.view.led_by(broker) {
        if let Some(order) = order_without(p, broker) {
            reordered.push(ReorderedPartition {
                topic: p.topic.clone(),
                partition: p.partition,
                replicas: p.replicas.clone(),
            });
            reorder.push((tp(&p.topic, p.partition), order));
        }
    }
    r.progress.reordered = reordered;
    if !reorder.is_empty() {
        cx.requests.push(Request::Reorder(reorder));
    }
    enter(
        r,
        RollPhase::LeadersOff,
        now,
        Some(format!("leadership to leave broker {broker}")),
    );
}

fn leaders_off(r: &mut Roll, cx: &mut Ctx<'_>, broker: i32) {
    let now = cx.now;
    if r.state == RollState::Aborting {
        // Not restarted yet: give leadership back and stop.
        enter(
            r,
            RollPhase::LeadersBack,
            now,
            Some(format!(
                "leadership to come back to broker {broker} (aborting)"
            )),
        );
        leaders_back(r, cx, broker);
        return;
    }
    let mut reorder = Vec::new();
    let mut elect = Vec::new();
    let mut still: Vec<String> = Vec::new();
    for saved in &r.progress.reordered {
        let Some(p) = cx.view.find(&saved.topic, saved.partition) else {
            continue;
        };
        if p.leader != Some(broker) {
            continue;
        }
        // A partition with no other replica in sync keeps its leader (offline while the
        // broker restarts); it does not hold the roll.
        match order_without(p, broker) {
            Some(order) if p.replicas != order => {
                reorder.push((tp(&p.topic, p.partition), order));
            }
            Some(_) => elect.push(tp(&p.topic, p.partition)),
            None => continue,
        }
        still.push(format!("{}-{}", p.topic, p.partition));
    }
    // Leaderships the broker gained since (e.g. a partition that came back) count too.
    let tracked: BTreeSet<(&str, i32)> = r
        .progress
        .reordered
        .iter()
        .map(|s| (s.topic.as_str(), s.partition))
        .collect();
    let mut gained = Vec::new();
    for p in cx.view.led_by(broker) {
        if tracked.contains(&(p.topic.as_str(), p.partition)) {
            continue;
        }
        if let Some(order) = order_without(p, broker) {
            gained.push(ReorderedPartition {
                topic: p.topic.clone(),
                partition: p.partition,
                replicas: p.replicas.clone(),
            });
            reorder.push((tp(&p.topic, p.partition), order));
            still.push(format!("{}-{}", p.topic, p.partition));
        }
    }
    r.progress.reordered.extend(gained);
    if still.is_empty() && cx.view.other_command.is_none() {
        info!(roll = %r.id, broker, "leadership moved off; restart requested");
        cx.command = Some(NewAgentCommand {
            broker_id: broker,
            kind: CommandKind::Restart,
            roll_id: Some(r.id.clone()),
            target_version: None,
            target_digest: None,
            requested_by: r.user_id.clone(),
        });
        let event = cx.event(
            r,
            "rolling_restart.broker",
            200,
            json!({ "rollId": r.id, "brokerId": broker,
                    "leadersMoved": r.progress.reordered.len(),
                    "message": format!("broker {broker}: leadership moved off ({} partitions), restart requested", r.progress.reordered.len()) }),
        );
        cx.audit.push(event);
        enter(
            r,
            RollPhase::Restarting,
            now,
            Some(format!("the agent of broker {broker} to restart it")),
        );
        return;
    }
    if elapsed(r, now) >= cx.t.leader_ms && still.is_empty() {
        let why = cx
            .view
            .other_command
            .as_ref()
            .map(|c| {
                format!(
                    "its agent still has an unfinished {} command ({})",
                    c.kind, c.id
                )
            })
            .unwrap_or_default();
        fail(r, cx, broker, why);
        return;
    }
    if elapsed(r, now) >= cx.t.leader_ms {
        fail(
            r,
            cx,
            broker,
            format!(
                "leadership did not leave within {}: {} partition(s) still led by it ({})",
                secs(cx.t.leader_ms),
                still.len(),
                sample(&still)
            ),
        );
        return;
    }
    if !reorder.is_empty() {
        cx.requests.push(Request::Reorder(reorder));
    }
    if !elect.is_empty() {
        cx.requests.push(Request::ElectPreferred(elect));
    }
}

fn restarting(r: &mut Roll, cx: &mut Ctx<'_>, broker: i32) {
    let now = cx.now;
    let cmd = cx
        .view
        .command
        .as_ref()
        .filter(|c| Some(c.id) == r.progress.command_id);
    match cmd.map(|c| c.state) {
        Some(CommandState::Succeeded) => {
            // Recovery is judged on the next pass, on metadata read after the outcome.
            enter(
                r,
                RollPhase::Recovering,
                now,
                Some(format!("broker {broker} to be back in every ISR")),
            );
        }
        Some(CommandState::Failed) | Some(CommandState::Cancelled) => {
            let detail = cmd
                .and_then(|c| c.detail.clone())
                .unwrap_or_else(|| "no detail".into());
            fail(
                r,
                cx,
                broker,
                format!("the restart command failed: {detail}"),
            );
        }
        None if r.progress.command_id.is_none() => {
            fail(r, cx, broker, "the restart command was not stored".into());
        }
        _ => {
            if elapsed(r, now) >= cx.t.restart_ms {
                let sent = cmd.is_some_and(|c| c.state == CommandState::Sent);
                let why = if sent {
                    "its agent took the restart command but reported no outcome"
                } else {
                    "its agent did not pick up the restart command"
                };
                fail(
                    r,
                    cx,
                    broker,
                    format!("{why} within {}", secs(cx.t.restart_ms)),
                );
            }
        }
    }
}

fn recovering(r: &mut Roll, cx: &mut Ctx<'_>, broker: i32) {
    let now = cx.now;
    let missing = cx.view.out_of_sync(broker);
    let registered = cx.view.alive.contains(&broker);
    if registered && missing.is_empty() {
        enter(
            r,
            RollPhase::LeadersBack,
            now,
            Some(format!("leadership to come back to broker {broker}")),
        );
        leaders_back(r, cx, broker);
        return;
    }
    let why = if registered {
        format!(
            "not back in the ISR of {} partition(s): {}",
            missing.len(),
            sample(&missing)
        )
    } else {
        "not registered with the cluster".to_string()
    };
    if elapsed(r, now) >= cx.t.recovery_ms {
        fail(
            r,
            cx,
            broker,
            format!("{why} {} after its restart", secs(cx.t.recovery_ms)),
        );
    } else {
        r.progress.waiting_for = Some(format!("broker {broker}: {why}"));
    }
}

fn leaders_back(r: &mut Roll, cx: &mut Ctx<'_>, broker: i32) {
    let now = cx.now;
    let mut pending = Vec::new();
    for saved in &r.progress.reordered {
        let Some(p) = cx.view.find(&saved.topic, saved.partition) else {
            continue;
        };
        let leader_ok = saved.replicas.first().is_none_or(|f| p.leader == Some(*f));
        if p.replicas != saved.replicas || !leader_ok {
            pending.push(format!("{}-{}", p.topic, p.partition));
        }
    }
    if pending.is_empty() {
        let started = r.progress.broker_started_at_ms.unwrap_or(now);
        let outcome = if r.progress.command_id.is_some() {
            "restarted"
        } else {
            "skipped"
        };
        r.progress.brokers_done.push(BrokerOutcome {
            broker_id: broker,
            started_at_ms: started,
            finished_at_ms: now,
            outcome: outcome.into(),
            detail: format!(
                "{} leadership(s) moved off and restored",
                r.progress.reordered.len()
            ),
        });
        r.progress.reordered.clear();
        r.progress.command_id = None;
        r.progress.broker_started_at_ms = None;
        if outcome == "restarted" {
            r.position += 1;
        }
        if r.state == RollState::Aborting {
            aborted(r, cx);
        } else if r.position >= r.brokers.len() {
            complete(r, cx);
        } else {
            enter(r, RollPhase::Settling, now, Some("the settle pause".into()));
        }
        return;
    }
    if elapsed(r, now) >= cx.t.leader_ms {
        fail(
            r,
            cx,
            broker,
            format!(
                "leadership did not come back within {}: {} partition(s) ({})",
                secs(cx.t.leader_ms),
                pending.len(),
                sample(&pending)
            ),
        );
        return;
    }
    restore_requests(r, cx);
}

fn complete(r: &mut Roll, cx: &mut Ctx<'_>) {
    r.state = RollState::Completed;
    r.finished_at_ms = Some(cx.now);
    r.progress.waiting_for = None;
    let event = cx.event(
        r,
        "rolling_restart.complete",
        200,
        json!({ "rollId": r.id, "brokers": r.brokers,
                "message": format!("rolling restart {} completed: brokers {:?}", r.id, r.brokers) }),
    );
    cx.audit.push(event);
}

/// After a roll failed, the partitions it reordered are given their order and preferred leader
/// back, pass after pass, for `recovery_ms` after the failure (the broker may come back later):
/// the remaining list and the requests. A partition whose replica set changed since (someone
/// reassigned it) is left alone.
pub fn restore_after_failure(roll: &Roll, view: &View, t: &Timeouts, now: i64) -> Option<Step> {
    let ended = roll.finished_at_ms.unwrap_or(now);
    if roll.state != RollState::Failed
        || roll.progress.reordered.is_empty()
        || now.saturating_sub(ended) > t.recovery_ms
    {
        return None;
    }
    let mut r = roll.clone();
    let mut cx = Ctx {
        view,
        t,
        now,
        requests: Vec::new(),
        command: None,
        audit: Vec::new(),
        cancel_command: None,
    };
    let same_set = |a: &[i32], b: &[i32]| {
        let mut a = a.to_vec();
        let mut b = b.to_vec();
        a.sort_unstable();
        b.sort_unstable();
        a == b
    };
    r.progress.reordered.retain(|saved| {
        let Some(p) = view.find(&saved.topic, saved.partition) else {
            return false;
        };
        if !same_set(&p.replicas, &saved.replicas) {
            return false;
        }
        let first = saved.replicas.first().copied();
        !(p.replicas == saved.replicas && (p.leader == first))
    });
    restore_requests(&r, &mut cx);
    let changed = r != *roll;
    Some(Step {
        roll: r,
        requests: cx.requests,
        command: None,
        audit: Vec::new(),
        cancel_command: None,
        changed,
    })
}

/// The IO shell: one pass over the unfinished roll, if any. Returns the roll as saved.
pub async fn drive(
    store: &Store,
    client: &Client,
    config: &Config,
    now: i64,
) -> Result<Option<Roll>, ExecError> {
    let Some(roll) = store.active_roll()? else {
        restore(store, client, config, now).await?;
        return Ok(None);
    };
    // Keep the slot while the roll runs (the unfinished roll refuses reassignments even when
    // the lease lapsed while the executor was down).
    let ttl = millis(config.timing.slot_lease_ttl).max(1);
    if store
        .acquire_slot(&roll_holder(&roll.id), ROLL_PURPOSE, None, now, ttl)?
        .is_none()
    {
        warn!(roll = %roll.id, "the mutation slot is held by another holder; the roll waits");
        return Ok(Some(roll));
    }
    let md = client.metadata(None).await?;
    let mut view = View::from_metadata(&md);
    if let Some(broker) = roll.current_broker() {
        view.agent = store.agent(broker)?;
        view.other_command = store.open_agent_command(broker, roll.progress.command_id)?;
    }
    if let Some(id) = roll.progress.command_id {
        view.command = store.agent_command(id)?;
    }
    let t = Timeouts::from_config(config);
    let out = step(&roll, &view, &t, now);
    let saved = if out.changed {
        store.save_roll(
            &out.roll,
            out.command.as_ref(),
            out.cancel_command,
            &out.audit,
            now,
        )?
    } else {
        out.roll
    };
    for req in &out.requests {
        send(client, req).await;
    }
    if saved.state != roll.state || saved.phase != roll.phase || saved.position != roll.position {
        info!(roll = %saved.id, state = %saved.state, phase = %saved.phase,
              broker = ?saved.current_broker(), error = ?saved.error, "rolling restart");
    }
    Ok(Some(saved))
}

/// Gives a failed roll's reordered partitions their leadership back, if any are left.
async fn restore(
    store: &Store,
    client: &Client,
    config: &Config,
    now: i64,
) -> Result<(), ExecError> {
    let Some(roll) = store.last_ended_roll()? else {
        return Ok(());
    };
    let t = Timeouts::from_config(config);
    let ended = roll.finished_at_ms.unwrap_or(now);
    if roll.state != RollState::Failed
        || roll.progress.reordered.is_empty()
        || now.saturating_sub(ended) > t.recovery_ms
    {
        return Ok(());
    }
    let md = client.metadata(None).await?;
    let view = View::from_metadata(&md);
    let Some(out) = restore_after_failure(&roll, &view, &t, now) else {
        return Ok(());
    };
    if out.changed {
        store.save_roll(&out.roll, None, None, &[], now)?;
    }
    for req in &out.requests {
        send(client, req).await;
    }
    Ok(())
}

/// Sends one request; failures are logged and retried by the next pass (every request is
/// recomputed from what the cluster reports).
async fn send(client: &Client, req: &Request) {
    match req {
        Request::Reorder(moves) => {
            let moves: Vec<(TopicPartition, Option<Vec<i32>>)> = moves
                .iter()
                .map(|(tp, order)| (tp.clone(), Some(order.clone())))
                .collect();
            match client.alter_partition_reassignments(&moves).await {
                Ok(results) => log_item_errors("reorder", &results),
                Err(e) => warn!(error = %e, "rolling restart: reorder not sent"),
            }
        }
        Request::ElectPreferred(parts) => {
            match client
                .elect_leaders(ElectionType::Preferred, Some(parts))
                .await
            {
                Ok(results) => log_item_errors("preferred election", &results),
                Err(e) => warn!(error = %e, "rolling restart: election not sent"),
            }
        }
    }
}

fn log_item_errors(what: &str, results: &[ballast_kafka::PartitionResult]) {
    let errors: BTreeMap<String, String> = results
        .iter()
        .filter_map(|r| {
            r.error
                .as_ref()
                .filter(|e| e.name != "ELECTION_NOT_NEEDED")
                .map(|e| (format!("{}-{}", r.topic, r.partition), e.to_string()))
        })
        .collect();
    if !errors.is_empty() {
        warn!(
            ?errors,
            "rolling restart: {what} refused for some partitions"
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ballast_schema::{AgentHeartbeat, RollProgress};

    const T: Timeouts = Timeouts {
        healthy_ms: 10_000,
        leader_ms: 5_000,
        restart_ms: 20_000,
        recovery_ms: 30_000,
        settle_ms: 1_000,
        agent_stale_ms: 3_000,
    };

    fn part(p: i32, replicas: &[i32], isr: &[i32], leader: Option<i32>) -> PartitionView {
        PartitionView {
            topic: "t".into(),
            partition: p,
            replicas: replicas.to_vec(),
            isr: isr.to_vec(),
            leader,
        }
    }

    fn agent(broker: i32, seen: i64) -> AgentRecord {
        AgentRecord {
            heartbeat: AgentHeartbeat {
                broker_id: broker,
                node_id: format!("h{broker}"),
                version: "v".into(),
                build_digest: "0".repeat(64),
                broker_process_up: Some(true),
                broker_uptime_s: None,
                agent_started_at_ms: 0,
                disks: serde_json::json!([]),
                remote_addr: None,
            },
            first_seen_at_ms: 0,
            last_seen_at_ms: seen,
        }
    }

    fn roll(brokers: &[i32], phase: RollPhase) -> Roll {
        Roll {
            id: "roll-1".into(),
            state: RollState::Running,
            brokers: brokers.to_vec(),
            position: 0,
            phase,
            phase_started_at_ms: 0,
            pause_requested: false,
            abort_requested: false,
            progress: RollProgress::default(),
            user_id: "alice".into(),
            method: "POST".into(),
            reason: None,
            error: None,
            failed_broker: None,
            audit_event_id: None,
            created_at_ms: 0,
            updated_at_ms: 0,
            finished_at_ms: None,
        }
    }

    /// Partition 0 led by broker 1, partition 1 led by broker 2; everything in sync.
    fn healthy(now: i64) -> View {
        View {
            partitions: vec![
                part(0, &[1, 2, 3], &[1, 2, 3], Some(1)),
                part(1, &[2, 3, 1], &[2, 3, 1], Some(2)),
            ],
            alive: [1, 2, 3].into_iter().collect(),
            agent: Some(agent(1, now)),
            command: None,
            other_command: None,
        }
    }

    #[test]
    fn a_healthy_cluster_moves_leadership_off_the_broker_saving_the_original_order_first() {
        let out = step(
            &roll(&[1, 2], RollPhase::HealthyWait),
            &healthy(100),
            &T,
            100,
        );
        assert_eq!(out.roll.phase, RollPhase::LeadersOff);
        assert_eq!(
            out.roll.progress.reordered,
            vec![ReorderedPartition {
                topic: "t".into(),
                partition: 0,
                replicas: vec![1, 2, 3]
            }]
        );
        assert_eq!(
            out.requests,
            vec![Request::Reorder(vec![(tp("t", 0), vec![2, 3, 1])])]
        );
        assert!(out.changed);
    }

    #[test]
    fn a_replica_out_of_sync_on_another_broker_holds_the_roll_then_fails_it_at_the_timeout() {
        let mut view = healthy(100);
        view.partitions[1].isr = vec![2, 1];
        let out = step(&roll(&[1], RollPhase::HealthyWait), &view, &T, 100);
        assert_eq!(out.roll.phase, RollPhase::HealthyWait);
        assert!(out.requests.is_empty());
        let waiting = out.roll.progress.waiting_for.clone().unwrap_or_default();
        assert!(waiting.contains("under-replicated"), "{waiting}");
        let out = step(&out.roll, &view, &T, T.healthy_ms + 1);
        assert_eq!(out.roll.state, RollState::Failed);
        assert_eq!(out.roll.failed_broker, Some(1));
        assert!(out.audit.iter().any(|e| e.action == "rolling_restart.fail"));
    }

    #[test]
    fn the_brokers_own_missing_replica_does_not_block_its_restart() {
        let mut view = healthy(100);
        view.partitions[1].isr = vec![2, 3];
        assert_eq!(view.unhealthy_for(1), None);
        assert!(view.unhealthy_for(2).is_some());
    }

    #[test]
    fn without_a_fresh_agent_the_broker_is_not_touched() {
        let view = healthy(0);
        let out = step(&roll(&[1], RollPhase::HealthyWait), &view, &T, 10_000 - 1);
        assert_eq!(out.roll.phase, RollPhase::HealthyWait);
        assert!(out
            .roll
            .progress
            .waiting_for
            .unwrap_or_default()
            .contains("no agent"));
    }

    #[test]
    fn once_the_broker_leads_nothing_its_agent_is_asked_to_restart_it() {
        let mut r = roll(&[1], RollPhase::LeadersOff);
        r.progress.reordered = vec![ReorderedPartition {
            topic: "t".into(),
            partition: 0,
            replicas: vec![1, 2, 3],
        }];
        let mut view = healthy(100);
        // reordered but the election has not happened: elect
        view.partitions[0].replicas = vec![2, 3, 1];
        let out = step(&r, &view, &T, 100);
        assert_eq!(out.roll.phase, RollPhase::LeadersOff);
        assert_eq!(
            out.requests,
            vec![Request::ElectPreferred(vec![tp("t", 0)])]
        );
        // elected: restart
        view.partitions[0].leader = Some(2);
        let out = step(&r, &view, &T, 200);
        assert_eq!(out.roll.phase, RollPhase::Restarting);
        let cmd = out.command.expect("a restart command");
        assert_eq!((cmd.broker_id, cmd.kind), (1, CommandKind::Restart));
        assert!(out
            .audit
            .iter()
            .any(|e| e.action == "rolling_restart.broker"));
    }

    fn command(state: CommandState, detail: Option<&str>) -> AgentCommand {
        AgentCommand {
            id: 7,
            broker_id: 1,
            kind: CommandKind::Restart,
            state,
            roll_id: Some("roll-1".into()),
            target_version: None,
            target_digest: None,
            requested_by: "alice".into(),
            audit_event_id: None,
            detail: detail.map(str::to_string),
            created_at_ms: 0,
            sent_at_ms: None,
            finished_at_ms: None,
        }
    }

    fn restarting() -> Roll {
        let mut r = roll(&[1, 2], RollPhase::Restarting);
        r.progress.command_id = Some(7);
        r.progress.reordered = vec![ReorderedPartition {
            topic: "t".into(),
            partition: 0,
            replicas: vec![1, 2, 3],
        }];
        r
    }

    #[test]
    fn a_failed_restart_command_stops_the_roll_naming_the_broker_and_the_reason() {
        let mut view = healthy(100);
        view.partitions[0].replicas = vec![2, 3, 1];
        view.partitions[0].leader = Some(2);
        view.command = Some(command(CommandState::Failed, Some("exit 3: disk full")));
        let out = step(&restarting(), &view, &T, 100);
        assert_eq!(out.roll.state, RollState::Failed);
        let error = out.roll.error.clone().unwrap_or_default();
        assert!(
            error.contains("broker 1") && error.contains("disk full"),
            "{error}"
        );
        // the original order is asked back
        assert!(out
            .requests
            .contains(&Request::Reorder(vec![(tp("t", 0), vec![1, 2, 3])])));
    }

    #[test]
    fn after_the_restart_the_roll_waits_for_every_isr_then_gives_leadership_back() {
        let mut view = healthy(100);
        view.partitions[0].replicas = vec![2, 3, 1];
        view.partitions[0].leader = Some(2);
        view.partitions[1].isr = vec![2, 3];
        view.command = Some(command(CommandState::Succeeded, None));
        let out = step(&restarting(), &view, &T, 100);
        assert_eq!(out.roll.phase, RollPhase::Recovering);
        assert!(out.requests.is_empty());
        view.partitions[1].isr = vec![2, 3, 1];
        let out = step(&out.roll, &view, &T, 200);
        assert_eq!(out.roll.phase, RollPhase::LeadersBack);
        assert_eq!(
            out.requests,
            vec![
                Request::Reorder(vec![(tp("t", 0), vec![1, 2, 3])]),
                Request::ElectPreferred(vec![tp("t", 0)])
            ]
        );
        // restored: the next broker after the settle pause
        view.partitions[0].replicas = vec![1, 2, 3];
        view.partitions[0].leader = Some(1);
        let out = step(&out.roll, &view, &T, 300);
        assert_eq!(out.roll.phase, RollPhase::Settling);
        assert_eq!(out.roll.position, 1);
        assert_eq!(out.roll.progress.brokers_done[0].outcome, "restarted");
    }

    #[test]
    fn a_broker_not_back_in_sync_by_the_recovery_timeout_fails_the_roll() {
        let mut r = restarting();
        r.phase = RollPhase::Recovering;
        let mut view = healthy(100);
        view.partitions[1].isr = vec![2, 3];
        let out = step(&r, &view, &T, T.recovery_ms + 1);
        assert_eq!(out.roll.state, RollState::Failed);
        assert!(out
            .roll
            .error
            .unwrap_or_default()
            .contains("not back in the ISR"));
    }

    #[test]
    fn pause_and_abort_take_effect_only_at_a_safe_point() {
        let mut r = restarting();
        r.pause_requested = true;
        let view = healthy(100);
        let out = step(&r, &view, &T, 100);
        assert_eq!(
            out.roll.state,
            RollState::Running,
            "a restart is finished first"
        );
        let mut r = roll(&[1, 2], RollPhase::Settling);
        r.pause_requested = true;
        let out = step(&r, &view, &T, 100);
        assert_eq!(out.roll.state, RollState::Paused);
        let mut paused = out.roll.clone();
        paused.pause_requested = false;
        let out = step(&paused, &view, &T, 5_000);
        assert_eq!(out.roll.state, RollState::Running);
        let mut r = restarting();
        r.abort_requested = true;
        let out = step(&r, &view, &T, 100);
        assert_eq!(out.roll.state, RollState::Aborting);
        let mut r = roll(&[1, 2], RollPhase::HealthyWait);
        r.abort_requested = true;
        let out = step(&r, &view, &T, 100);
        assert_eq!(out.roll.state, RollState::Aborted);
        assert!(out.requests.is_empty());
    }

    #[test]
    fn the_last_broker_done_completes_the_roll() {
        let mut r = roll(&[1], RollPhase::LeadersBack);
        r.progress.command_id = Some(7);
        let out = step(&r, &healthy(100), &T, 100);
        assert_eq!(out.roll.state, RollState::Completed);
        assert!(out
            .audit
            .iter()
            .any(|e| e.action == "rolling_restart.complete"));
    }

    #[test]
    fn the_new_order_puts_an_in_sync_replica_first_and_the_broker_last() {
        let p = part(0, &[1, 2, 3], &[1, 3], Some(1));
        assert_eq!(order_without(&p, 1), Some(vec![3, 2, 1]));
        let alone = part(0, &[1], &[1], Some(1));
        assert_eq!(order_without(&alone, 1), None);
    }

    #[test]
    fn a_partition_with_no_other_replica_in_sync_keeps_its_leader_and_does_not_hold_the_roll() {
        let mut r = roll(&[1], RollPhase::LeadersOff);
        r.progress.reordered = vec![];
        let mut view = healthy(100);
        view.partitions[0] = part(0, &[1], &[1], Some(1));
        let out = step(&r, &view, &T, 100);
        assert_eq!(out.roll.phase, RollPhase::Restarting);
        assert!(out.command.is_some());
    }

    #[test]
    fn another_unfinished_command_of_the_agent_holds_the_broker_back() {
        let mut view = healthy(100);
        let mut upgrade = command(CommandState::Pending, None);
        upgrade.kind = CommandKind::Upgrade;
        view.other_command = Some(upgrade);
        let out = step(&roll(&[1], RollPhase::HealthyWait), &view, &T, 100);
        assert_eq!(out.roll.phase, RollPhase::HealthyWait);
        assert!(out
            .roll
            .progress
            .waiting_for
            .unwrap_or_default()
            .contains("unfinished upgrade"));
    }

    #[test]
    fn a_roll_failing_before_the_agent_answered_cancels_the_restart_so_it_never_runs_later() {
        let mut view = healthy(100);
        view.command = Some(command(CommandState::Pending, None));
        let out = step(&restarting(), &view, &T, T.restart_ms + 1);
        assert_eq!(out.roll.state, RollState::Failed);
        assert_eq!(out.cancel_command, Some(7));
        // a command that failed by itself is not cancelled again
        view.command = Some(command(CommandState::Failed, Some("exit 1")));
        let out = step(&restarting(), &view, &T, 100);
        assert_eq!(out.cancel_command, None);
    }

    #[test]
    fn after_a_failure_leadership_is_given_back_until_restored_and_a_reassigned_partition_is_left_alone(
    ) {
        let mut failed = restarting();
        failed.state = RollState::Failed;
        failed.finished_at_ms = Some(100);
        failed.progress.reordered.push(ReorderedPartition {
            topic: "t".into(),
            partition: 1,
            replicas: vec![2, 3, 1],
        });
        let mut view = healthy(100);
        view.partitions[0].replicas = vec![2, 3, 1];
        view.partitions[0].leader = Some(2);
        // partition 1 was reassigned elsewhere since
        view.partitions[1].replicas = vec![2, 3, 4];
        let out = restore_after_failure(&failed, &view, &T, 200).expect("restoring");
        assert_eq!(out.roll.progress.reordered.len(), 1);
        assert!(out
            .requests
            .contains(&Request::Reorder(vec![(tp("t", 0), vec![1, 2, 3])])));
        view.partitions[0].replicas = vec![1, 2, 3];
        view.partitions[0].leader = Some(1);
        let out = restore_after_failure(&out.roll, &view, &T, 300).expect("restoring");
        assert!(out.roll.progress.reordered.is_empty());
        assert!(out.requests.is_empty());
        // and not forever
        assert!(restore_after_failure(&failed, &view, &T, 100 + T.recovery_ms + 1).is_none());
    }
}
