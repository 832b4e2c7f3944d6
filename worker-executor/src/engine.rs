//! The executor's reconciling pass. Each [`Engine::tick`] reads the operation it runs and the
//! live cluster, and moves everything one step on: track what is in flight, submit the next wave,
//! keep throttles equal to exactly the moving replicas, finish, cancel, time out.
//!
//! Every submission is recorded (`submitting`) before it is sent, fenced by the operation's
//! lease; the next pass learns from the cluster whether it arrived. So a killed executor resumes
//! from SQLite and never sends a step twice: a step the cluster has (in flight or done) is
//! tracked, and only a step the cluster never saw is sent again.

use ballast_runtime::millis;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use ballast_config::Config;
use ballast_kafka::{
    AlterConfigOp, Client, ClusterMetadata, ConfigResource, Reassignment, TopicPartition,
};
use ballast_model::BrokerId;
use ballast_schema::{
    Lease, MoveRecord, MoveState, NewAuditEvent, OperationRecord, OperationState, Store, StoreError,
};
use serde_json::{json, Value};
use tracing::{debug, info, warn};

use crate::preflight;
use crate::restore::{self, Restore};
use crate::stale::{self, Verdict};
use crate::stall;
use crate::throttle::{self, Change, Configs, Moving, Target};
use crate::waves::{self, Waiting};

/// The settings key of the throttle rate changed at run time (MB/s).
pub use ballast_moves::THROTTLE_RATE_KEY;

/// The settings key of the throttle changes not confirmed yet (JSON: target and config names),
/// so a restarted executor still removes a throttle from a broker that was down when it started.
pub const THROTTLE_CLEANUP_KEY: &str = "executor.throttle_cleanup";

/// The reason a cancelled move shows until the cluster has dropped its reassignment and its
/// partition is back as it was.
const CANCEL_UNCONFIRMED: &str =
    "cancelled; the cluster has not confirmed the cancellation and the original replica order yet";

/// The reason a pending move shows while a hard pre-flight blocker holds its wave back.
const HELD_PREFIX: &str = "held back: ";

#[derive(Debug, thiserror::Error)]
pub enum ExecError {
    #[error("database")]
    Store(#[from] StoreError),
    #[error("cluster")]
    Cluster(#[from] ballast_kafka::Error),
}

/// What the executor keeps between passes. Everything that matters is in SQLite (throttle
/// changes not confirmed yet included); this is only what makes the next pass cheaper (the
/// lease, the throttles known set, the last progress, since when a blocker holds a wave back).
pub struct Engine {
    store: Store,
    config: Arc<Config>,
    lease: Option<Lease>,
    /// Throttle configs the cluster has as far as this process knows: set by it, found at start,
    /// or remembered as not removed yet.
    throttles: Configs,
    /// The value last written under [`THROTTLE_CLEANUP_KEY`].
    cleanup_saved: Option<String>,
    /// The unconfirmed throttle changes last logged (a new list is logged, not every pass).
    pending_logged: Vec<String>,
    /// The throttles last logged as kept for a reassignment in progress that is not ours.
    kept_logged: Vec<String>,
    /// A hard pre-flight blocker holding the running operation's next wave back.
    hold: Option<Hold>,
    started: bool,
    /// Last progress per move: (bytes done, at ms), for the rate.
    progress: BTreeMap<(String, i64), (u64, i64)>,
    /// Per in-flight move, its copied bytes reading by reading (the stall rule).
    watches: BTreeMap<(String, i64), stall::Watch>,
    /// Since when each broker a tracked move needs has been missing from the metadata.
    down_since: BTreeMap<BrokerId, i64>,
    /// Passes a move has been seen settling (not listed, metadata still transitional).
    settling: BTreeMap<(String, i64), u32>,
}

/// Passes a move may stay settling before the executor believes the metadata and fails it.
const SETTLE_PASSES: u32 = 10;

/// A wave held back by a hard pre-flight blocker, since the first pass that saw one.
#[derive(Debug, Clone)]
struct Hold {
    operation: String,
    since_ms: i64,
    reason: String,
}

/// What a throttle pass did.
#[derive(Debug, Default)]
struct ThrottlePass {
    /// Config changes sent.
    sent: usize,
    /// Changes not confirmed (a broker down or refusing): sent again every pass.
    pending: Vec<Change>,
    /// Throttles set in the cluster that ballast's moves do not need, kept because a
    /// reassignment in progress that ballast does not track needs them.
    kept: Vec<throttle::Kept>,
}

/// What a pass did, for the heartbeat.
#[derive(Debug, Clone, Default, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Report {
    pub operation: Option<String>,
    pub state: Option<String>,
    pub submitted: usize,
    pub in_flight: usize,
    pub pending: usize,
    pub finished: bool,
    pub throttle_changes: usize,
    /// Throttle changes not confirmed yet (a broker down or refusing), retried every pass.
    pub throttle_pending: Vec<String>,
    /// Throttles kept although ballast's moves do not need them, and why: a reassignment in
    /// progress that ballast does not track (another tool's) needs them. Cleared by the first
    /// pass after it completes.
    pub throttle_kept: Vec<String>,
    /// The hard pre-flight blocker holding the next wave back, if any.
    pub held: Option<String>,
    pub note: Option<String>,
}

impl Report {
    fn throttles(&mut self, pass: &ThrottlePass) {
        self.throttle_changes += pass.sent;
        self.throttle_pending = pass.pending.iter().map(ToString::to_string).collect();
        self.throttle_kept = pass.kept.iter().map(ToString::to_string).collect();
    }
}

fn tp(m: &MoveRecord) -> TopicPartition {
    TopicPartition::new(m.topic.clone(), m.partition)
}

fn same_set(a: &[BrokerId], b: &[BrokerId]) -> bool {
    let a: BTreeSet<_> = a.iter().collect();
    let b: BTreeSet<_> = b.iter().collect();
    a == b
}

/// How many steps a move takes (computed, not stored: a move stored by an older release may
/// have counted fewer).
fn steps_of(m: &MoveRecord) -> u32 {
    u32::try_from(waves::steps(&m.source, &m.target).len())
        .unwrap_or(u32::MAX)
        .max(1)
}

/// The replica list a move's current step goes to.
fn step_target(m: &MoveRecord) -> Vec<BrokerId> {
    let all = waves::steps(&m.source, &m.target);
    let i = (m.step as usize).min(all.len().saturating_sub(1));
    all.get(i).cloned().unwrap_or_else(|| m.target.clone())
}

/// The replica list a move's current step starts from.
fn step_source(m: &MoveRecord) -> Vec<BrokerId> {
    if m.step == 0 {
        return m.source.clone();
    }
    let all = waves::steps(&m.source, &m.target);
    all.get(m.step as usize - 1)
        .cloned()
        .unwrap_or_else(|| m.source.clone())
}

/// True when `live` is the transitional replica set of a step from `from` to `to`: every target
/// replica plus some of the ones being removed, and not yet the target itself.
fn is_settling(live: &[BrokerId], from: &[BrokerId], to: &[BrokerId]) -> bool {
    !same_set(live, to)
        && to.iter().all(|b| live.contains(b))
        && live.iter().all(|b| to.contains(b) || from.contains(b))
}

fn live_replicas(
    md: &ClusterMetadata,
    m: &MoveRecord,
) -> Option<(Vec<BrokerId>, Vec<BrokerId>, Option<BrokerId>)> {
    md.partition(&tp(m))
        .map(|p| (p.replicas.clone(), p.isr.clone(), p.leader))
}

/// Brokers a step keeps busy: the ones added, the ones removed and the leader the copies come
/// from (the simulator and Kafka's own tools count moves per broker the same way).
fn participants(from: &[BrokerId], to: &[BrokerId], leader: Option<BrokerId>) -> Vec<BrokerId> {
    let mut out: BTreeSet<BrokerId> = BTreeSet::new();
    let adding: Vec<BrokerId> = to.iter().copied().filter(|b| !from.contains(b)).collect();
    out.extend(adding.iter().copied());
    out.extend(from.iter().copied().filter(|b| !to.contains(b)));
    if !adding.is_empty() {
        if let Some(l) = leader.or(from.first().copied()) {
            out.insert(l);
        }
    }
    out.into_iter().collect()
}

fn resource_of(target: &Target) -> ConfigResource {
    match target {
        Target::Broker(b) => ConfigResource::Broker(*b),
        Target::BrokerDefaults => ConfigResource::BrokerDefaults,
        Target::Topic(t) => ConfigResource::Topic(t.clone()),
    }
}

fn op_of(c: &Change) -> AlterConfigOp {
    match &c.value {
        Some(v) => AlterConfigOp::Set {
            name: c.name.to_string(),
            value: v.clone(),
        },
        None => AlterConfigOp::Delete {
            name: c.name.to_string(),
        },
    }
}

fn moving_of(m: &MoveRecord) -> Moving {
    let from = step_source(m);
    let to = m.submitted.clone().unwrap_or_else(|| step_target(m));
    Moving {
        topic: m.topic.clone(),
        partition: m.partition,
        adding: to.iter().copied().filter(|b| !from.contains(b)).collect(),
        source: from,
    }
}

impl Engine {
    pub fn new(store: Store, config: Arc<Config>) -> Engine {
        Engine {
            store,
            config,
            lease: None,
            throttles: Configs::new(),
            cleanup_saved: None,
            pending_logged: Vec::new(),
            kept_logged: Vec::new(),
            hold: None,
            started: false,
            progress: BTreeMap::new(),
            watches: BTreeMap::new(),
            down_since: BTreeMap::new(),
            settling: BTreeMap::new(),
        }
    }

    fn managed(&self) -> bool {
        self.config.throttle.managed
    }

    /// The throttle rate in MB/s: the run-time setting when valid, else the configured one;
    /// never above the maximum.
    pub fn rate_mb(&self) -> u64 {
        let configured = self.config.throttle.rate_mb;
        let set = self
            .store
            .setting(THROTTLE_RATE_KEY)
            .ok()
            .flatten()
            .and_then(|v| v.trim().parse::<u64>().ok())
            .filter(|v| *v > 0);
        set.unwrap_or(configured)
            .min(self.config.throttle.max_rate_mb)
    }

    /// One pass at `now_ms`.
    pub async fn tick(&mut self, client: &Client, now_ms: i64) -> Result<Report, ExecError> {
        if !self.started {
            self.scan_throttles(client).await?;
            self.started = true;
        }
        let mut report = Report::default();
        self.track_undriven(client, now_ms).await?;
        let Some(op) = self.store.next_operation()? else {
            self.lease = None;
            self.hold = None;
            let pass = self.reconcile_throttles(client, &[], now_ms).await?;
            report.throttles(&pass);
            return Ok(report);
        };
        report.operation = Some(op.id.clone());
        let Some(lease) = self.hold(&op, now_ms)? else {
            report.note = Some("waiting for the mutation slot".into());
            return Ok(report);
        };
        if op.cancel_requested {
            let pass = self.cancel(client, &op, &lease, now_ms).await?;
            report.throttles(&pass);
            report.state = Some("cancelled".into());
            report.finished = true;
            return Ok(report);
        }
        if op.state == OperationState::Pending {
            self.store.start_operation(&lease, &op.id, now_ms)?;
            info!(operation = %op.id, kind = %op.kind, "operation started");
        }
        let mut moves = self.store.moves(&op.id)?;
        self.track(client, &lease, &mut moves, now_ms).await?;
        report.submitted = self
            .submit_wave(client, &op, &lease, &mut moves, now_ms)
            .await?;
        let in_flight: Vec<MoveRecord> = moves
            .iter()
            .filter(|m| m.state.is_in_flight())
            .cloned()
            .collect();
        report.in_flight = in_flight.len();
        report.pending = moves
            .iter()
            .filter(|m| m.state == MoveState::Pending)
            .count();
        report.held = self
            .hold
            .as_ref()
            .filter(|h| h.operation == op.id)
            .map(|h| h.reason.clone());
        // Throttle changes that fail (a broker down) stay pending and are retried every pass;
        // they never keep an operation from finishing.
        if moves.iter().all(|m| m.state.is_finished()) {
            let pass = self.reconcile_throttles(client, &[], now_ms).await?;
            report.throttles(&pass);
            self.finish(&op, &lease, &moves, now_ms)?;
            self.hold = None;
            report.finished = true;
            report.state = Some("finished".into());
        } else {
            let pass = self.reconcile_throttles(client, &in_flight, now_ms).await?;
            report.throttles(&pass);
            report.state = Some("running".into());
        }
        Ok(report)
    }

    /// The operation's lease: renewed, or re-taken under the operation's holder name when it
    /// expired (an executor that was down). None while someone else holds the slot.
    fn hold(&mut self, op: &OperationRecord, now_ms: i64) -> Result<Option<Lease>, StoreError> {
        let ttl = millis(self.config.timing.slot_lease_ttl);
        let candidate = match &self.lease {
            Some(l) if l.holder == op.holder() => Some(l.clone()),
            _ => op.slot_token.map(|token| Lease {
                token,
                holder: op.holder(),
                expires_at_ms: 0,
            }),
        };
        if let Some(l) = candidate {
            match self.store.renew_slot(&l, now_ms, ttl) {
                Ok(renewed) => {
                    self.lease = Some(renewed.clone());
                    return Ok(Some(renewed));
                }
                Err(e) if e.is_fenced() => {}
                Err(e) => return Err(e),
            }
        }
        let taken =
            self.store
                .acquire_slot(&op.holder(), "reassignment", Some(&op.id), now_ms, ttl)?;
        self.lease = taken.clone();
        Ok(taken)
    }

    /// Reads which throttle configs are set anywhere in the cluster (leftovers of an earlier run,
    /// or another tool's): every reconcile keeps those a reassignment in progress that ballast
    /// does not track needs, and clears the rest.
    async fn scan_throttles(&mut self, client: &Client) -> Result<(), ExecError> {
        if !self.managed() {
            return Ok(());
        }
        let md = client.metadata(None).await?;
        let mut resources: Vec<ConfigResource> = md
            .brokers
            .iter()
            .map(|b| ConfigResource::Broker(b.id))
            .collect();
        resources.push(ConfigResource::BrokerDefaults);
        resources.extend(
            md.topics
                .iter()
                .map(|t| ConfigResource::Topic(t.name.clone())),
        );
        let configs = client.describe_configs(&resources).await?;
        let mut found = Configs::new();
        for rc in configs {
            for e in &rc.entries {
                let Some(name) = throttle::throttle_name(&e.name) else {
                    continue;
                };
                let dynamic = matches!(
                    e.source,
                    ballast_kafka::ConfigSource::DynamicTopicConfig
                        | ballast_kafka::ConfigSource::DynamicBrokerConfig
                        | ballast_kafka::ConfigSource::DynamicDefaultBrokerConfig
                );
                if !dynamic || e.value.as_deref().is_none_or(str::is_empty) {
                    continue;
                }
                let target = match &rc.resource {
                    ConfigResource::Broker(b) => Target::Broker(*b),
                    ConfigResource::BrokerDefaults => Target::BrokerDefaults,
                    ConfigResource::Topic(t) => Target::Topic(t.clone()),
                };
                found
                    .entry(target)
                    .or_default()
                    .insert(name, e.value.clone());
            }
        }
        if !found.is_empty() {
            info!(
                targets = found.len(),
                "replication throttles found set at start; those a reassignment in progress needs are kept, the rest cleared"
            );
        }
        // Changes an earlier run could not confirm (e.g. on a broker that is down now, which the
        // scan cannot read): still to be removed unless wanted.
        let saved = self.store.setting(THROTTLE_CLEANUP_KEY)?;
        if let Some(text) = &saved {
            match serde_json::from_str::<Vec<(Target, Vec<String>)>>(text) {
                Ok(list) => {
                    for (target, names) in list {
                        let e = found.entry(target).or_default();
                        for name in names.iter().filter_map(|n| throttle::throttle_name(n)) {
                            e.entry(name).or_insert(None);
                        }
                    }
                }
                Err(e) => warn!(error = %e, "unreadable saved throttle cleanup ignored"),
            }
        }
        self.cleanup_saved = saved;
        self.throttles = found;
        Ok(())
    }

    /// Makes the cluster's throttles exactly those of `in_flight` (and of tracked moves of other
    /// operations). Changes are sent per resource: one a broker refuses or cannot take (it is
    /// down) stays pending, is retried every pass and is saved so a restart retries it too.
    async fn reconcile_throttles(
        &mut self,
        client: &Client,
        in_flight: &[MoveRecord],
        now_ms: i64,
    ) -> Result<ThrottlePass, StoreError> {
        if !self.managed() {
            return Ok(ThrottlePass::default());
        }
        let mut moving: Vec<Moving> = in_flight.iter().map(moving_of).collect();
        let seen: BTreeSet<(String, i64)> = in_flight
            .iter()
            .map(|m| (m.operation_id.clone(), m.seq))
            .collect();
        let tracked = self.store.tracked_moves()?;
        for m in &tracked {
            if m.state.is_in_flight() && !seen.contains(&(m.operation_id.clone(), m.seq)) {
                moving.push(moving_of(m));
            }
        }
        let ours: BTreeSet<TopicPartition> =
            in_flight.iter().chain(tracked.iter()).map(tp).collect();
        let desired = throttle::for_moves(&moving, self.rate_mb()).configs();
        let (desired, kept) = self.keep_needed(client, desired, &ours).await;
        self.note_kept(&kept);
        let changes = throttle::changes(&self.throttles, &desired);
        let sent = changes.len();
        let failures = if changes.is_empty() {
            Vec::new()
        } else {
            self.send_throttle_changes(client, changes).await
        };
        let pending = throttle::changes(&self.throttles, &desired);
        self.note_pending(&pending, &failures, now_ms);
        Ok(ThrottlePass {
            sent,
            pending,
            kept,
        })
    }

    /// `desired` plus the throttles set in the cluster that a reassignment in progress not in
    /// `ours` needs (see [`throttle::keep_for`]). The cluster's reassignments are listed only
    /// when a pass would delete or overwrite a config set in the cluster; when they cannot be
    /// listed, nothing set is deleted this pass.
    async fn keep_needed(
        &self,
        client: &Client,
        desired: Configs,
        ours: &BTreeSet<TopicPartition>,
    ) -> (Configs, Vec<throttle::Kept>) {
        let touches_set = throttle::changes(&self.throttles, &desired)
            .iter()
            .any(|c| {
                self.throttles
                    .get(&c.target)
                    .is_some_and(|n| n.contains_key(c.name))
            });
        if !touches_set {
            return (desired, Vec::new());
        }
        match client.list_partition_reassignments(None).await {
            Ok(listed) => {
                let foreign: Vec<throttle::Foreign> = listed
                    .into_iter()
                    .filter(|r| !ours.contains(&TopicPartition::new(r.topic.clone(), r.partition)))
                    .map(|r| throttle::Foreign {
                        topic: r.topic,
                        partition: r.partition,
                        replicas: r.replicas,
                    })
                    .collect();
                throttle::keep_for(&self.throttles, &desired, &foreign)
            }
            Err(e) => {
                let mut wanted = desired;
                let mut kept = Vec::new();
                for (target, names) in &self.throttles {
                    for (name, value) in names {
                        let w = wanted.entry(target.clone()).or_default();
                        if !w.contains_key(name) {
                            w.insert(name, value.clone());
                            kept.push(throttle::Kept {
                                target: target.clone(),
                                name,
                                because: format!(
                                    "the reassignments in progress could not be listed ({e})"
                                ),
                            });
                        }
                    }
                }
                (wanted, kept)
            }
        }
    }

    /// Logs the throttles kept for reassignments in progress when the list changes.
    fn note_kept(&mut self, kept: &[throttle::Kept]) {
        let lines: Vec<String> = kept.iter().map(ToString::to_string).collect();
        if lines == self.kept_logged {
            return;
        }
        if lines.is_empty() {
            info!(
                "no reassignment in progress needs the throttles kept any more; they are cleared"
            );
        } else {
            info!(kept = ?lines, "replication throttles kept: a reassignment in progress that ballast does not track needs them");
        }
        self.kept_logged = lines;
    }

    /// Sends `changes`: each broker's own configs in a request of their own (they go to that
    /// broker), the topic and default configs together; records what each target confirmed.
    /// Returns why the others were not.
    async fn send_throttle_changes(
        &mut self,
        client: &Client,
        changes: Vec<Change>,
    ) -> Vec<String> {
        let mut by_target: BTreeMap<Target, Vec<Change>> = BTreeMap::new();
        for c in changes {
            by_target.entry(c.target.clone()).or_default().push(c);
        }
        let mut requests: Vec<Vec<(Target, Vec<Change>)>> = Vec::new();
        let mut shared: Vec<(Target, Vec<Change>)> = Vec::new();
        for (target, list) in by_target {
            match target {
                Target::Broker(_) => requests.push(vec![(target, list)]),
                _ => shared.push((target, list)),
            }
        }
        if !shared.is_empty() {
            requests.push(shared);
        }
        let mut calls = tokio::task::JoinSet::new();
        for (i, request) in requests.iter().enumerate() {
            let client = client.clone();
            let wire: Vec<(ConfigResource, Vec<AlterConfigOp>)> = request
                .iter()
                .map(|(target, list)| (resource_of(target), list.iter().map(op_of).collect()))
                .collect();
            calls.spawn(async move { (i, client.incremental_alter_configs(&wire, false).await) });
        }
        let mut answers = BTreeMap::new();
        while let Some(joined) = calls.join_next().await {
            match joined {
                Ok((i, answer)) => {
                    answers.insert(i, answer);
                }
                Err(e) => warn!(error = %e, "a throttle change task failed"),
            }
        }
        let mut failures = Vec::new();
        for (i, request) in requests.iter().enumerate() {
            match answers.remove(&i) {
                Some(Ok(results)) => {
                    for (j, (target, list)) in request.iter().enumerate() {
                        let error = results.get(j).map(|r| r.error.as_ref());
                        let confirmed = match error {
                            Some(None) => true,
                            // A deleted topic keeps no throttle.
                            Some(Some(e)) => {
                                matches!(target, Target::Topic(_))
                                    && e.name == "UNKNOWN_TOPIC_OR_PARTITION"
                                    && list.iter().all(|c| c.value.is_none())
                            }
                            None => false,
                        };
                        if !confirmed {
                            let why = error.flatten().map_or("no answer", |e| e.name);
                            failures.push(format!("{target}: {why}"));
                        }
                        throttle::record(&mut self.throttles, list, confirmed);
                    }
                }
                Some(Err(e)) => {
                    for (target, list) in request {
                        failures.push(format!("{target}: {e}"));
                        throttle::record(&mut self.throttles, list, false);
                    }
                }
                None => {
                    for (target, list) in request {
                        failures.push(format!("{target}: not sent"));
                        throttle::record(&mut self.throttles, list, false);
                    }
                }
            }
        }
        failures
    }

    /// Logs the unconfirmed changes when they change, and saves them for a restart.
    fn note_pending(&mut self, pending: &[Change], failures: &[String], now_ms: i64) {
        let lines: Vec<String> = pending.iter().map(ToString::to_string).collect();
        if lines != self.pending_logged {
            if lines.is_empty() {
                info!("every throttle change is confirmed");
            } else {
                warn!(pending = ?lines, ?failures, "throttle changes not confirmed; retried every pass");
            }
            self.pending_logged = lines;
        } else if !failures.is_empty() {
            debug!(?failures, "throttle changes still not confirmed");
        }
        let mut by_target: BTreeMap<&Target, BTreeSet<&str>> = BTreeMap::new();
        for c in pending {
            by_target.entry(&c.target).or_default().insert(c.name);
        }
        let list: Vec<(&Target, Vec<&str>)> = by_target
            .into_iter()
            .map(|(t, names)| (t, names.into_iter().collect()))
            .collect();
        let Ok(text) = serde_json::to_string(&list) else {
            return;
        };
        if self.cleanup_saved.as_deref() == Some(text.as_str())
            || (self.cleanup_saved.is_none() && list.is_empty())
        {
            return;
        }
        match self.store.put_setting(THROTTLE_CLEANUP_KEY, &text, now_ms) {
            Ok(()) => self.cleanup_saved = Some(text),
            Err(e) => warn!(error = %e, "pending throttle changes not saved"),
        }
    }

    /// Learns from the cluster what happened to every in-flight move of the running operation.
    async fn track(
        &mut self,
        client: &Client,
        lease: &Lease,
        moves: &mut [MoveRecord],
        now_ms: i64,
    ) -> Result<(), ExecError> {
        let tracked: Vec<usize> = (0..moves.len())
            .filter(|i| moves[*i].state.is_in_flight())
            .collect();
        if tracked.is_empty() {
            return Ok(());
        }
        let tps: Vec<TopicPartition> = tracked.iter().map(|i| tp(&moves[*i])).collect();
        let topics: Vec<String> = tps
            .iter()
            .map(|t| t.topic.clone())
            .collect::<BTreeSet<_>>()
            .into_iter()
            .collect();
        // Reassignments first, metadata second: a reassignment that completes between the two
        // reads is then seen finished in the metadata rather than mid-way and not listed.
        let ongoing: BTreeSet<TopicPartition> = client
            .list_partition_reassignments(Some(&tps))
            .await?
            .into_iter()
            .map(|r| TopicPartition::new(r.topic, r.partition))
            .collect();
        let md = client.metadata(Some(&topics)).await?;
        let sizes = self.copied_bytes(client, moves, &tracked, &md).await;
        let up: BTreeSet<BrokerId> = md.brokers.iter().map(|b| b.id).collect();
        self.note_down(moves, &tracked, &up, now_ms);
        let mut updates = Vec::new();
        let mut elect: Vec<TopicPartition> = Vec::new();
        for i in tracked {
            let m = &moves[i];
            let mut u = m.clone();
            if m.stalled_since_ms.is_some() {
                // Judged again below while the move stays in flight.
                u.stalled_since_ms = None;
                u.stalled_brokers.clear();
                u.reason = None;
            }
            let target = m.submitted.clone().unwrap_or_else(|| step_target(m));
            let live = live_replicas(&md, m);
            let key = (m.operation_id.clone(), m.seq);
            let settling = !ongoing.contains(&tp(m))
                && m.submitted.is_some()
                && live
                    .as_ref()
                    .is_some_and(|(r, _, _)| is_settling(r, &step_source(m), &target))
                && {
                    let passes = self.settling.entry(key.clone()).or_insert(0);
                    *passes += 1;
                    *passes <= SETTLE_PASSES
                };
            if !settling {
                self.settling.remove(&key);
            }
            if ongoing.contains(&tp(m)) || settling {
                // Listed as ongoing, or no longer listed while the metadata still shows the
                // transitional replica set (a broker's metadata can trail the controller).
                u.state = MoveState::Active;
                let step_bytes = m.bytes_total / u64::from(steps_of(m));
                let from = step_source(m);
                let adding: Vec<BrokerId> = target
                    .iter()
                    .copied()
                    .filter(|b| !from.contains(b))
                    .collect();
                // The bytes the adding replica holds, when they could be read this pass.
                let reading = if adding.is_empty() {
                    Some(0)
                } else {
                    sizes.get(&i).copied()
                };
                if let Some(size) = reading {
                    let done = u64::from(m.step) * step_bytes + size.min(step_bytes);
                    u.bytes_done = done.max(m.bytes_done).min(m.bytes_total);
                    if let Some((before, at)) = self.progress.get(&key) {
                        let dt = (now_ms - at) as f64 / 1000.0;
                        if dt > 0.0 && u.bytes_done >= *before {
                            u.rate = Some((u.bytes_done - before) as f64 / dt);
                        }
                    }
                    self.progress.insert(key.clone(), (u.bytes_done, now_ms));
                } else {
                    // Not measured this pass (its destination down or unreadable): unknown.
                    u.rate = None;
                }
                let limit = self.config.throttle.move_stall_readings;
                let watch = self.watches.entry(key).or_insert_with(|| {
                    match m.stalled_since_ms {
                        // A stall for want of progress left by an earlier executor stays until
                        // the bytes are seen growing.
                        Some(since) if m.stalled_brokers.is_empty() => {
                            stall::Watch::stalled_since(since, limit)
                        }
                        _ => stall::Watch::new(now_ms),
                    }
                });
                if !adding.is_empty() {
                    watch.read(reading, now_ms);
                }
                let leader = live.as_ref().and_then(|(_, _, l)| *l);
                let judged = stall::judge(
                    &stall::Step {
                        adding: &adding,
                        sources: &from,
                        leader,
                        up: &up,
                        down_since: &self.down_since,
                    },
                    watch,
                    limit,
                    now_ms,
                );
                match judged {
                    Some(st) => {
                        if m.stalled_since_ms.is_none() {
                            warn!(operation = %m.operation_id, topic = %m.topic, partition = m.partition, reason = %st.reason, "move stalled");
                        }
                        u.stalled_since_ms = Some(st.since_ms);
                        u.stalled_brokers = st.brokers;
                        u.reason = Some(st.reason);
                    }
                    None if m.stalled_since_ms.is_some() => {
                        info!(operation = %m.operation_id, topic = %m.topic, partition = m.partition, "move no longer stalled; it goes on");
                    }
                    None => {}
                }
            } else if live.as_ref().is_some_and(|(r, _, _)| same_set(r, &target)) {
                u.step = m.step + 1;
                u.submitted = None;
                self.progress.remove(&(m.operation_id.clone(), m.seq));
                self.watches.remove(&(m.operation_id.clone(), m.seq));
                if u.step >= steps_of(m) {
                    // The target's first replica is the preferred leader: elect it when it does
                    // not lead yet (a reassignment alone does not move leadership).
                    if let (Some(first), Some((_, isr, leader))) = (m.target.first(), &live) {
                        if *leader != Some(*first) && isr.contains(first) {
                            elect.push(tp(m));
                        }
                    }
                    u.state = MoveState::Completed;
                    u.bytes_done = m.bytes_total;
                    u.finished_at_ms = Some(now_ms);
                    u.reason = None;
                } else {
                    u.state = MoveState::Pending;
                    u.bytes_done = m.bytes_total / u64::from(steps_of(m)) * u64::from(u.step);
                }
            } else if m.state == MoveState::Submitting {
                // Recorded but never seen by the cluster (the executor stopped in between):
                // back to pending; sending it again is not a duplicate.
                u.state = MoveState::Pending;
                u.submitted = None;
            } else {
                u.state = MoveState::Failed;
                u.finished_at_ms = Some(now_ms);
                u.reason = Some(match live {
                    Some((r, _, _)) => format!(
                        "the reassignment ended with replicas {r:?} instead of {target:?} (cancelled or changed outside this operation)"
                    ),
                    None => "the partition no longer exists".to_string(),
                });
            }
            if u != *m {
                updates.push(u);
            }
        }
        self.store.update_moves(Some(lease), &updates, now_ms)?;
        apply_updates(moves, &updates);
        elect_preferred(client, &elect, "after moves", "").await;
        Ok(())
    }

    /// Records since when each broker the tracked moves need (adding, or the replicas a step
    /// starts from) has been missing from the metadata; forgets those back. A fresh executor
    /// takes the time of a stall an earlier one stored for the broker, else now.
    fn note_down(
        &mut self,
        moves: &[MoveRecord],
        tracked: &[usize],
        up: &BTreeSet<BrokerId>,
        now_ms: i64,
    ) {
        self.down_since.retain(|b, _| !up.contains(b));
        for i in tracked {
            let m = &moves[*i];
            let to = m.submitted.clone().unwrap_or_else(|| step_target(m));
            for b in to.iter().chain(step_source(m).iter()) {
                if up.contains(b) || self.down_since.contains_key(b) {
                    continue;
                }
                let stored = m.stalled_since_ms.filter(|_| m.stalled_brokers.contains(b));
                self.down_since.insert(*b, stored.unwrap_or(now_ms));
            }
        }
    }

    /// Bytes the adding replicas of in-flight moves hold now, by move index (best effort).
    async fn copied_bytes(
        &self,
        client: &Client,
        moves: &[MoveRecord],
        idx: &[usize],
        md: &ClusterMetadata,
    ) -> BTreeMap<usize, u64> {
        let mut by_broker: BTreeMap<BrokerId, Vec<usize>> = BTreeMap::new();
        for i in idx {
            let m = &moves[*i];
            let to = m.submitted.clone().unwrap_or_else(|| step_target(m));
            let from = step_source(m);
            for b in to.iter().filter(|b| !from.contains(b)) {
                by_broker.entry(*b).or_default().push(*i);
            }
        }
        let mut out: BTreeMap<usize, u64> = BTreeMap::new();
        for (broker, list) in by_broker {
            if md.broker(broker).is_none() {
                continue;
            }
            let topics: Vec<String> = list
                .iter()
                .map(|i| moves[*i].topic.clone())
                .collect::<BTreeSet<_>>()
                .into_iter()
                .collect();
            let Ok(dirs) = client.describe_log_dirs(broker, Some(&topics)).await else {
                continue;
            };
            for i in list {
                let m = &moves[i];
                let size: i64 = dirs
                    .dirs
                    .iter()
                    .flat_map(|d| d.replicas.iter())
                    .filter(|r| r.topic == m.topic && r.partition == m.partition)
                    .map(|r| r.size)
                    .max()
                    .unwrap_or(0);
                *out.entry(i).or_default() += size.max(0) as u64;
            }
        }
        out
    }

    /// Submits the next wave of pending moves, after the pre-flight and the stale-plan check.
    async fn submit_wave(
        &mut self,
        client: &Client,
        op: &OperationRecord,
        lease: &Lease,
        moves: &mut [MoveRecord],
        now_ms: i64,
    ) -> Result<usize, ExecError> {
        // Moves of a higher phase wait until every move of the lower phases has finished.
        let phase = moves
            .iter()
            .filter(|m| !m.state.is_finished())
            .map(|m| m.phase)
            .min();
        let pending: Vec<usize> = (0..moves.len())
            .filter(|i| moves[*i].state == MoveState::Pending && Some(moves[*i].phase) == phase)
            .collect();
        if pending.is_empty() {
            return Ok(0);
        }
        let topics: Vec<String> = pending
            .iter()
            .map(|i| moves[*i].topic.clone())
            .collect::<BTreeSet<_>>()
            .into_iter()
            .collect();
        // The refresh of the affected topics, once per wave. If it fails the wave is submitted
        // without the stale-plan check (the spec's rule); the cluster still refuses nonsense.
        let md = client.metadata(Some(&topics)).await.ok();
        let min_isr = self.min_isr();
        let mut in_use: BTreeMap<BrokerId, usize> = BTreeMap::new();
        for m in moves.iter().filter(|m| m.state.is_in_flight()) {
            let from = step_source(m);
            let to = m.submitted.clone().unwrap_or_else(|| step_target(m));
            let leader = md.as_ref().and_then(|md| md.leader(&tp(m)));
            for b in participants(&from, &to, leader) {
                *in_use.entry(b).or_default() += 1;
            }
        }
        // A step adding a replica on a broker that is not up now waits for it.
        let up: Option<BTreeSet<BrokerId>> = md
            .as_ref()
            .map(|md| md.brokers.iter().map(|b| b.id).collect());
        let waiting: Vec<Waiting> = pending
            .iter()
            .filter(|i| {
                let m = &moves[**i];
                let from = step_source(m);
                up.as_ref().is_none_or(|up| {
                    step_target(m)
                        .iter()
                        .filter(|b| !from.contains(b))
                        .all(|b| up.contains(b))
                })
            })
            .map(|i| {
                let m = &moves[*i];
                let from = step_source(m);
                let to = step_target(m);
                let live = md.as_ref().and_then(|md| live_replicas(md, m));
                let (isr, leader) = live
                    .map(|(_, isr, leader)| (isr.len() as i32, leader))
                    .unwrap_or((from.len() as i32, None));
                let min = min_isr.get(&m.topic).copied().unwrap_or(1);
                Waiting {
                    id: *i as u64,
                    brokers: participants(&from, &to, leader),
                    isr_margin: isr - min,
                    bytes: m.bytes_total / u64::from(steps_of(m)),
                }
            })
            .collect();
        let cap = self.config.throttle.move_max_per_broker as usize;
        let wave: Vec<usize> = waves::next_wave(&waiting, &in_use, cap.max(1))
            .into_iter()
            .map(|id| id as usize)
            .collect();
        if wave.is_empty() {
            return Ok(0);
        }
        // Hard pre-flight before every wave (soft reasons were decided when the request came).
        let ours: BTreeSet<TopicPartition> = moves
            .iter()
            .filter(|m| m.state.is_in_flight())
            .map(tp)
            .collect();
        let view = self.store.observed_view().ok().flatten();
        let mut facts = preflight::gather(client, view.as_ref(), &ours, None).await?;
        facts.rolling_restart = self.store.active_roll()?.map(|r| r.id);
        let assessment = preflight::assess(&facts);
        if !assessment.hard.is_empty() {
            self.hold_back(op, lease, moves, &pending, assessment.message(true), now_ms)?;
            return Ok(0);
        }
        if self.hold.take().is_some() {
            info!(operation = %op.id, "the pre-flight passes again; the held wave goes ahead");
        }
        // Pending moves that showed the blocker show it no more.
        let cleared: Vec<MoveRecord> = pending
            .iter()
            .filter(|i| {
                moves[**i]
                    .reason
                    .as_deref()
                    .is_some_and(|r| r.starts_with(HELD_PREFIX))
            })
            .map(|i| MoveRecord {
                reason: None,
                ..moves[*i].clone()
            })
            .collect();
        self.store.update_moves(Some(lease), &cleared, now_ms)?;
        apply_updates(moves, &cleared);
        // The stale-plan check, with one reread of the partitions that look stale.
        let mut stale_ones: Vec<usize> = Vec::new();
        if let Some(md) = &md {
            for i in &wave {
                let m = &moves[*i];
                if let Some((live, _, _)) = live_replicas(md, m) {
                    if matches!(stale::check(&m.source, &m.target, &live), Verdict::Stale(_)) {
                        stale_ones.push(*i);
                    }
                }
            }
        }
        let mut updates: Vec<MoveRecord> = Vec::new();
        if !stale_ones.is_empty() {
            let reread_topics: Vec<String> = stale_ones
                .iter()
                .map(|i| moves[*i].topic.clone())
                .collect::<BTreeSet<_>>()
                .into_iter()
                .collect();
            if let Ok(md2) = client.metadata(Some(&reread_topics)).await {
                for i in &stale_ones {
                    let m = &moves[*i];
                    let Some((live, _, _)) = live_replicas(&md2, m) else {
                        continue;
                    };
                    if let Verdict::Stale(reason) = stale::check(&m.source, &m.target, &live) {
                        let mut u = m.clone();
                        u.state = MoveState::Failed;
                        u.reason = Some(reason);
                        u.finished_at_ms = Some(now_ms);
                        updates.push(u);
                    }
                }
            }
        }
        let failed_now: BTreeSet<i64> = updates.iter().map(|u| u.seq).collect();
        let sending: Vec<usize> = wave
            .into_iter()
            .filter(|i| !failed_now.contains(&moves[*i].seq))
            .collect();
        let unsent: Vec<MoveRecord> = sending.iter().map(|i| moves[*i].clone()).collect();
        for i in &sending {
            let m = &moves[*i];
            let mut u = m.clone();
            u.state = MoveState::Submitting;
            u.reason = None;
            u.submitted = Some(step_target(m));
            u.submitted_at_ms = Some(now_ms);
            u.submissions = m.submissions + 1;
            u.started_at_ms = m.started_at_ms.or(Some(now_ms));
            updates.push(u);
        }
        self.store.update_moves(Some(lease), &updates, now_ms)?;
        apply_updates(moves, &updates);
        if sending.is_empty() {
            return Ok(0);
        }
        // Throttles first, so no copy runs unthrottled.
        let in_flight: Vec<MoveRecord> = moves
            .iter()
            .filter(|m| m.state.is_in_flight())
            .cloned()
            .collect();
        let pass = self.reconcile_throttles(client, &in_flight, now_ms).await?;
        // A throttle not set yet on a topic or on a broker that is up would let copies run
        // unthrottled: the wave waits (never sent, so back to pending) and the next pass retries.
        let unset: Vec<String> = pass
            .pending
            .iter()
            .filter(|c| {
                c.value.is_some()
                    && match &c.target {
                        Target::Broker(b) => up.as_ref().is_none_or(|up| up.contains(b)),
                        _ => true,
                    }
            })
            .map(ToString::to_string)
            .collect();
        if !unset.is_empty() {
            warn!(operation = %op.id, ?unset, "wave held back until its throttles are set");
            self.store.update_moves(Some(lease), &unsent, now_ms)?;
            apply_updates(moves, &unsent);
            return Ok(0);
        }
        let request: Vec<(TopicPartition, Option<Vec<BrokerId>>)> = sending
            .iter()
            .map(|i| (tp(&moves[*i]), Some(step_target(&moves[*i]))))
            .collect();
        let results = match client.alter_partition_reassignments(&request).await {
            Ok(r) => r,
            Err(e) => {
                // Unknown whether it arrived: the moves stay `submitting` and the next pass asks
                // the cluster.
                warn!(operation = %op.id, error = %e, "submission failed; will check the cluster");
                return Ok(0);
            }
        };
        let mut after: Vec<MoveRecord> = Vec::new();
        for (i, r) in sending.iter().zip(results) {
            let m = &moves[*i];
            let mut u = m.clone();
            match r.error {
                None => u.state = MoveState::Active,
                Some(e) => {
                    u.state = MoveState::Failed;
                    u.finished_at_ms = Some(now_ms);
                    u.reason = Some(format!(
                        "the controller refused the reassignment: {}{}",
                        e.name,
                        e.message.map(|m| format!(" ({m})")).unwrap_or_default()
                    ));
                }
            }
            after.push(u);
        }
        self.store.update_moves(Some(lease), &after, now_ms)?;
        apply_updates(moves, &after);
        info!(operation = %op.id, moves = sending.len(), "wave submitted");
        Ok(sending.len())
    }

    /// A hard pre-flight blocker: the phase's pending moves stay pending, showing the blocker,
    /// and are checked again next pass; once the blocker has held them back for
    /// `BALLAST_PREFLIGHT_HOLD_MAX` they fail with it as their reason.
    fn hold_back(
        &mut self,
        op: &OperationRecord,
        lease: &Lease,
        moves: &mut [MoveRecord],
        pending: &[usize],
        blocker: String,
        now_ms: i64,
    ) -> Result<(), StoreError> {
        let since_ms = match &self.hold {
            Some(h) if h.operation == op.id => h.since_ms,
            _ => now_ms,
        };
        if self.hold.as_ref().is_none_or(|h| h.reason != blocker) {
            warn!(operation = %op.id, reason = %blocker, "wave held back by the pre-flight; checked again every pass");
        }
        let max = self.config.timing.preflight_hold_max;
        let expired = now_ms - since_ms >= millis(max);
        let reason = if expired {
            format!(
                "{blocker}; held back longer than {} (BALLAST_PREFLIGHT_HOLD_MAX)",
                humantime::format_duration(max)
            )
        } else {
            format!("{HELD_PREFIX}{blocker}")
        };
        let updates: Vec<MoveRecord> = pending
            .iter()
            .map(|i| &moves[*i])
            .filter(|m| expired || m.reason.as_deref() != Some(reason.as_str()))
            .map(|m| {
                let mut u = m.clone();
                u.reason = Some(reason.clone());
                if expired {
                    u.state = MoveState::Failed;
                    u.finished_at_ms = Some(now_ms);
                }
                u
            })
            .collect();
        self.store.update_moves(Some(lease), &updates, now_ms)?;
        apply_updates(moves, &updates);
        if expired {
            warn!(operation = %op.id, moves = updates.len(), reason = %blocker, "pre-flight hold expired; the held moves failed");
            self.hold = None;
        } else {
            self.hold = Some(Hold {
                operation: op.id.clone(),
                since_ms,
                reason: blocker,
            });
        }
        Ok(())
    }

    fn min_isr(&self) -> BTreeMap<String, i32> {
        self.store
            .observed_view()
            .ok()
            .flatten()
            .map(|v| {
                v.topics
                    .iter()
                    .filter_map(|t| t.min_insync.map(|m| (t.name.clone(), m)))
                    .collect()
            })
            .unwrap_or_default()
    }

    /// Every move is finished: record cooldowns, audit failures, release the slot.
    fn finish(
        &mut self,
        op: &OperationRecord,
        lease: &Lease,
        moves: &[MoveRecord],
        now_ms: i64,
    ) -> Result<(), StoreError> {
        for m in moves.iter().filter(|m| m.state == MoveState::Completed) {
            self.store
                .record_move(&m.topic, m.partition, Some(&op.id), now_ms)?;
        }
        let failed: Vec<&MoveRecord> = moves
            .iter()
            .filter(|m| m.state == MoveState::Failed)
            .collect();
        let completed = moves
            .iter()
            .filter(|m| m.state == MoveState::Completed)
            .count();
        let (state, reason) = if failed.is_empty() {
            (OperationState::Completed, None)
        } else if completed == 0 {
            (
                OperationState::Failed,
                Some(format!("all {} moves failed", failed.len())),
            )
        } else {
            (
                OperationState::Completed,
                Some(format!("{} of {} moves failed", failed.len(), moves.len())),
            )
        };
        let audit = (!failed.is_empty()).then(|| NewAuditEvent {
            at_ms: now_ms,
            action: "reassignments.apply".into(),
            method: op.method.clone(),
            user_id: op.user_id.clone(),
            requested_by: op.requested_by.clone(),
            status: 500,
            target: Some(op.id.clone()),
            summary: json!({
                "operation": op.id,
                "failed": failed.iter().map(|m| json!({
                    "topic": m.topic, "partition": m.partition, "reason": m.reason,
                })).collect::<Vec<Value>>(),
            }),
            related_event_id: op.audit_event_id,
            details: reason.clone(),
            ..NewAuditEvent::default()
        });
        self.store.finish_operation(
            Some(lease),
            &op.id,
            state,
            reason.as_deref(),
            audit.as_ref(),
            now_ms,
        )?;
        self.lease = None;
        info!(operation = %op.id, state = state.as_str(), "operation finished");
        Ok(())
    }

    /// Cancels an operation: in-flight moves are cancelled through the protocol, pending ones
    /// never start, completed ones stay. The cancellation is recorded before it is sent: every
    /// unfinished move is written cancelled, and an in-flight one stays tracked
    /// (`cancel_confirmed` = 0) until the cluster has dropped its reassignment and its partition
    /// is back as it was before the step (the original replica order, led by its first
    /// replica; see [`Engine::track_undriven`]), so a restarted executor finishes the job.
    /// Throttle changes that fail stay pending (retried every pass) and never keep the
    /// cancellation from ending.
    async fn cancel(
        &mut self,
        client: &Client,
        op: &OperationRecord,
        lease: &Lease,
        now_ms: i64,
    ) -> Result<ThrottlePass, ExecError> {
        let mut moves = self.store.moves(&op.id)?;
        // First learn what finished meanwhile: those stay as they are.
        self.track(client, lease, &mut moves, now_ms).await?;
        // In flight now, or recorded cancelled by a pass that died before sending the
        // cancellation: both are sent.
        let sending: Vec<usize> = (0..moves.len())
            .filter(|i| {
                let m = &moves[*i];
                m.state.is_in_flight()
                    || (m.state == MoveState::Cancelled && !m.cancel_confirmed && !m.timed_out)
            })
            .collect();
        let mut updates = Vec::new();
        for m in moves.iter().filter(|m| !m.state.is_finished()) {
            let mut u = m.clone();
            u.state = MoveState::Cancelled;
            u.finished_at_ms = Some(now_ms);
            u.cancel_confirmed = !m.state.is_in_flight();
            u.stalled_since_ms = None;
            u.stalled_brokers.clear();
            u.reason = Some(if u.cancel_confirmed {
                "cancelled".to_string()
            } else {
                CANCEL_UNCONFIRMED.to_string()
            });
            updates.push(u);
        }
        self.store.update_moves(Some(lease), &updates, now_ms)?;
        apply_updates(&mut moves, &updates);
        if !sending.is_empty() {
            let sending: Vec<MoveRecord> = sending.iter().map(|i| moves[*i].clone()).collect();
            self.send_cancel(client, &sending).await;
        }
        let pass = self.reconcile_throttles(client, &[], now_ms).await?;
        for m in moves.iter().filter(|m| m.state == MoveState::Completed) {
            self.store
                .record_move(&m.topic, m.partition, Some(&op.id), now_ms)?;
        }
        self.store.finish_operation(
            Some(lease),
            &op.id,
            OperationState::Cancelled,
            Some("cancelled on request"),
            None,
            now_ms,
        )?;
        self.lease = None;
        self.hold = None;
        info!(operation = %op.id, "operation cancelled");
        Ok(pass)
    }

    /// Sends the cancellation of `moves` (AlterPartitionReassignments with no target). A
    /// failure is logged; a later pass sends it again while the cluster still has the move.
    async fn send_cancel(&self, client: &Client, moves: &[MoveRecord]) {
        let request: Vec<(TopicPartition, Option<Vec<BrokerId>>)> =
            moves.iter().map(|m| (tp(m), None)).collect();
        match client.alter_partition_reassignments(&request).await {
            Ok(results) => {
                let refused: Vec<String> = moves
                    .iter()
                    .zip(results)
                    .filter_map(|(m, r)| {
                        r.error
                            .filter(|e| e.name != "NO_REASSIGNMENT_IN_PROGRESS")
                            .map(|e| format!("{}-{}: {}", m.topic, m.partition, e.name))
                    })
                    .collect();
                if !refused.is_empty() {
                    warn!(?refused, "cancellation refused; sent again next pass");
                }
            }
            Err(e) => warn!(error = %e, "cancellation not confirmed; sent again next pass"),
        }
    }

    /// Moves tracked with no execution driving them (a cancellation not confirmed yet, moves of
    /// an operation that ended): confirmed when the cluster is done with them; reverted to their
    /// original replicas, shown as timed out and audited once `BALLAST_MOVE_TIMEOUT` has passed
    /// since their last submission. The timeout and its audit event are recorded together before
    /// the revert is sent; a later pass sends the revert again only when the cluster does not
    /// have it, and never audits it twice. A cancellation the cluster still lacks is sent again.
    /// Once the cluster has dropped a cancelled or reverted move, its partition is put back
    /// exactly as it was ([`restore::next`]): Kafka's cancel restores the replica set, not its
    /// order, so a reorder to the original list and a preferred leader election follow; the
    /// move is confirmed when that is done (or cannot be, after `BALLAST_MOVE_TIMEOUT`).
    async fn track_undriven(&mut self, client: &Client, now_ms: i64) -> Result<(), ExecError> {
        let running: Option<String> = self
            .store
            .next_operation()?
            .filter(|o| o.state == OperationState::Running)
            .map(|o| o.id);
        let undriven: Vec<MoveRecord> = self
            .store
            .tracked_moves()?
            .into_iter()
            .filter(|m| Some(&m.operation_id) != running.as_ref())
            .collect();
        if undriven.is_empty() {
            return Ok(());
        }
        let tps: Vec<TopicPartition> = undriven.iter().map(tp).collect();
        let ongoing: BTreeMap<TopicPartition, Reassignment> = client
            .list_partition_reassignments(Some(&tps))
            .await?
            .into_iter()
            .map(|r| (TopicPartition::new(r.topic.clone(), r.partition), r))
            .collect();
        let timeout = millis(self.config.timing.move_timeout);
        let mut updates = Vec::new();
        let mut settled: Vec<MoveRecord> = Vec::new();
        let mut cancel_again: Vec<MoveRecord> = Vec::new();
        for m in &undriven {
            let mut u = m.clone();
            let Some(listed) = ongoing.get(&tp(m)) else {
                if m.state == MoveState::Cancelled {
                    settled.push(m.clone());
                } else {
                    u.state = MoveState::Failed;
                    u.reason = Some("no longer driven by an operation".into());
                    u.finished_at_ms = Some(now_ms);
                    updates.push(u);
                }
                continue;
            };
            if m.timed_out {
                // Recorded and audited already. The step is cancelled (again, if the cluster
                // still runs it); a revert to the source that runs as a reassignment of its own
                // (after a later step was cancelled) is left to finish.
                if !reverting_to(listed, &m.source) || stuck(listed) {
                    cancel_again.push(m.clone());
                }
                continue;
            }
            let last = m.submitted_at_ms.unwrap_or(m.started_at_ms.unwrap_or(0));
            if m.state == MoveState::Cancelled {
                let target = m.submitted.clone().unwrap_or_else(|| step_target(m));
                if !reverting_to(listed, &target) {
                    // Someone else reassigns the partition since our cancellation landed: there
                    // is nothing of ours to cancel or put back.
                    u.cancel_confirmed = true;
                    u.reason = Some(format!(
                        "cancelled; the partition is being reassigned to {:?} by someone else since, so its replica order is not restored",
                        listed_target(listed)
                    ));
                    updates.push(u);
                    continue;
                }
                if now_ms - last < timeout {
                    cancel_again.push(m.clone());
                    continue;
                }
            } else if now_ms - last < timeout {
                continue;
            }
            u.state = MoveState::Cancelled;
            u.timed_out = true;
            u.cancel_confirmed = false;
            u.finished_at_ms = Some(now_ms);
            u.reason = Some(format!(
                "timed out: tracked {} after its last submission with no execution driving it; reverted to the original replicas {:?}",
                humantime::format_duration(self.config.timing.move_timeout),
                m.source
            ));
            let audit = NewAuditEvent {
                at_ms: now_ms,
                action: "reassignments.timeout".into(),
                method: "INTERNAL".into(),
                user_id: Some("pilot".into()),
                requested_by: Some("pilot".into()),
                status: 200,
                target: Some(format!("{}-{}", m.topic, m.partition)),
                summary: json!({
                    "operation": m.operation_id,
                    "topic": m.topic,
                    "partition": m.partition,
                    "revertedTo": m.source,
                }),
                before: Some(json!({ "replicas": m.submitted })),
                after: Some(json!({ "replicas": m.source })),
                ..NewAuditEvent::default()
            };
            self.store
                .update_moves_audited(None, &[u], &[audit], now_ms)?;
            warn!(operation = %m.operation_id, topic = %m.topic, partition = m.partition, "tracked move timed out; reverting it");
            // Reverted by a cancel, which Kafka applies at once. A reassignment to the source
            // replacing the one in flight does not always end: KRaft 3.5 leaves `[1,2]` ->
            // `[3,2]` replaced by `[1,2]` stuck with 3 both adding and removing. The order and
            // leader are put back once the cluster has dropped it (`restore`).
            self.send_cancel(client, std::slice::from_ref(m)).await;
        }
        self.store.update_moves(None, &updates, now_ms)?;
        if !cancel_again.is_empty() {
            warn!(
                moves = cancel_again.len(),
                "cancelled moves the cluster still runs; sending the cancellation again"
            );
            self.send_cancel(client, &cancel_again).await;
        }
        if !settled.is_empty() {
            self.restore(client, &settled, now_ms).await?;
        }
        Ok(())
    }

    /// Puts the partitions of cancelled (or reverted) moves the cluster has dropped back exactly
    /// as they were before the step: each pass looks at the cluster and does the one thing left
    /// ([`restore::next`]), recorded in the move's reason before it is sent; the move is
    /// confirmed when nothing is left, when the partition changed since, or when
    /// `BALLAST_MOVE_TIMEOUT` has passed since the cancellation without it being possible.
    async fn restore(
        &mut self,
        client: &Client,
        settled: &[MoveRecord],
        now_ms: i64,
    ) -> Result<(), ExecError> {
        let topics: Vec<String> = settled
            .iter()
            .map(|m| m.topic.clone())
            .collect::<BTreeSet<_>>()
            .into_iter()
            .collect();
        let md = client.metadata(Some(&topics)).await?;
        let timeout = millis(self.config.timing.move_timeout);
        let mut updates = Vec::new();
        let mut reorder: Vec<(TopicPartition, Option<Vec<BrokerId>>)> = Vec::new();
        let mut elect: Vec<TopicPartition> = Vec::new();
        for m in settled {
            let mut u = m.clone();
            // A timed-out move was reverted to its source; a cancelled step goes back to where
            // the step started.
            let original = if m.timed_out {
                m.source.clone()
            } else {
                step_source(m)
            };
            let expired = now_ms - m.finished_at_ms.unwrap_or(now_ms) >= timeout;
            let say = |u: &mut MoveRecord, why: String| {
                if !m.timed_out {
                    u.reason = Some(why);
                }
            };
            let next = match live_replicas(&md, m) {
                None => Restore::Done,
                Some((replicas, isr, leader)) => restore::next(&original, &replicas, &isr, leader),
            };
            match next {
                Restore::Done => {
                    u.cancel_confirmed = true;
                    say(&mut u, "cancelled".into());
                }
                // A timed-out move whose cancelled step was a later one is back where that step
                // started: it goes on to its source replicas as a reassignment of its own.
                Restore::Changed(now)
                    if m.timed_out
                        && !expired
                        && same_set(&now, &step_source(m))
                        && !same_set(&now, &m.source) =>
                {
                    info!(topic = %m.topic, partition = m.partition, source = ?m.source, "timed-out move's step cancelled; reverting to its source replicas");
                    reorder.push((tp(m), Some(m.source.clone())));
                }
                Restore::Changed(now) => {
                    u.cancel_confirmed = true;
                    say(
                        &mut u,
                        format!(
                            "cancelled; the replicas are {now:?} since, not {original:?}, so nothing is restored"
                        ),
                    );
                }
                Restore::Reorder(_) | Restore::Elect(_) | Restore::Wait(_) if expired => {
                    u.cancel_confirmed = true;
                    say(
                        &mut u,
                        format!(
                            "cancelled; the original replica order {original:?} and its leader were not restored within {} (BALLAST_MOVE_TIMEOUT)",
                            humantime::format_duration(self.config.timing.move_timeout)
                        ),
                    );
                    warn!(topic = %m.topic, partition = m.partition, ?original, "cancelled move's partition not restored in time; given up");
                }
                Restore::Reorder(list) => {
                    say(
                        &mut u,
                        format!("cancelled; restoring the original replica order {list:?}"),
                    );
                    info!(topic = %m.topic, partition = m.partition, order = ?list, "cancel left the replicas in another order; restoring the original order");
                    reorder.push((tp(m), Some(list)));
                }
                Restore::Elect(b) => {
                    say(
                        &mut u,
                        format!("cancelled; electing the original preferred leader {b}"),
                    );
                    info!(topic = %m.topic, partition = m.partition, leader = b, "electing the original preferred leader after a cancel");
                    elect.push(tp(m));
                }
                Restore::Wait(why) => say(&mut u, format!("cancelled; {why}")),
            }
            if u != *m {
                updates.push(u);
            }
        }
        // Recorded before anything is sent.
        self.store.update_moves(None, &updates, now_ms)?;
        if !reorder.is_empty() {
            match client.alter_partition_reassignments(&reorder).await {
                Ok(results) => {
                    let refused: Vec<String> = reorder
                        .iter()
                        .zip(results)
                        .filter_map(|((t, _), r)| {
                            r.error
                                .map(|e| format!("{}-{}: {}", t.topic, t.partition, e.name))
                        })
                        .collect();
                    if !refused.is_empty() {
                        warn!(
                            ?refused,
                            "replica order restore refused; sent again next pass"
                        );
                    }
                }
                Err(e) => warn!(error = %e, "replica order restore not sent; sent again next pass"),
            }
        }
        elect_preferred(client, &elect, "after a cancel", "; sent again next pass").await;
        Ok(())
    }
}

/// Elects the preferred leader of `elect` (nothing when empty) and logs what the cluster refused
/// (an election not needed is no refusal) or why it was not sent; `when` and `then` word the log.
async fn elect_preferred(client: &Client, elect: &[TopicPartition], when: &str, then: &str) {
    if elect.is_empty() {
        return;
    }
    match client
        .elect_leaders(ballast_kafka::ElectionType::Preferred, Some(elect))
        .await
    {
        Ok(results) => {
            let failed: Vec<String> = results
                .iter()
                .filter_map(|r| {
                    r.error
                        .as_ref()
                        .filter(|e| e.name != "ELECTION_NOT_NEEDED")
                        .map(|e| format!("{}-{}: {}", r.topic, r.partition, e.name))
                })
                .collect();
            if !failed.is_empty() {
                warn!(?failed, "preferred leader election {when} refused{then}");
            }
        }
        Err(e) => warn!(error = %e, "preferred leader election {when} failed{then}"),
    }
}

/// The replica list an ongoing reassignment goes to.
fn listed_target(listed: &Reassignment) -> Vec<BrokerId> {
    listed
        .replicas
        .iter()
        .copied()
        .filter(|b| !listed.removing.contains(b))
        .collect()
}

/// Whether an ongoing reassignment has a replica both adding and removing: KRaft 3.5 leaves one
/// there when a reassignment back to the original set replaces one in flight, and never
/// completes it; only a cancel ends it.
fn stuck(listed: &Reassignment) -> bool {
    listed.adding.iter().any(|b| listed.removing.contains(b))
}

/// Whether the cluster's ongoing reassignment of a partition goes to `replicas` (as a set).
fn reverting_to(listed: &Reassignment, replicas: &[BrokerId]) -> bool {
    same_set(&listed_target(listed), replicas)
}

/// The records after `updates` were written.
fn apply_updates(moves: &mut [MoveRecord], updates: &[MoveRecord]) {
    for u in updates {
        if let Some(m) = moves
            .iter_mut()
            .find(|m| m.seq == u.seq && m.operation_id == u.operation_id)
        {
            *m = u.clone();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_step_keeps_busy_the_brokers_added_removed_and_the_leader() {
        assert_eq!(participants(&[1, 2, 3], &[4, 2, 3], Some(2)), vec![1, 2, 4]);
        // Leadership only: nothing is copied, no broker is kept busy by a copy.
        assert!(participants(&[1, 2, 3], &[2, 1, 3], Some(1)).is_empty());
    }

    #[test]
    fn a_revert_kraft_left_with_a_replica_both_adding_and_removing_is_stuck_and_gets_a_cancel() {
        // Kafka 3.5.1: [1,2] -> [3,2] in flight, replaced by [1,2].
        let stuck_one = Reassignment {
            topic: "cx".into(),
            partition: 0,
            replicas: vec![1, 2, 3],
            adding: vec![3],
            removing: vec![3],
        };
        assert!(reverting_to(&stuck_one, &[1, 2]));
        assert!(stuck(&stuck_one));
        // A revert running as a reassignment of its own: [4,2] -> [1,2].
        let running = Reassignment {
            topic: "cx".into(),
            partition: 0,
            replicas: vec![1, 2, 4],
            adding: vec![1],
            removing: vec![4],
        };
        assert!(reverting_to(&running, &[1, 2]) && !stuck(&running));
    }

    #[test]
    fn a_finished_reassignment_whose_metadata_still_shows_the_union_is_settling_not_failed() {
        // [4,3,5] -> [4,6,5]: Kafka shows [4,6,5,3] until the controller drops broker 3.
        assert!(is_settling(&[4, 6, 5, 3], &[4, 3, 5], &[4, 6, 5]));
        // The target itself is done, not settling.
        assert!(!is_settling(&[4, 6, 5], &[4, 3, 5], &[4, 6, 5]));
        // Back on the source (cancelled elsewhere) or some other set: not settling.
        assert!(!is_settling(&[4, 3, 5], &[4, 3, 5], &[4, 6, 5]));
        assert!(!is_settling(&[4, 6, 5, 7], &[4, 3, 5], &[4, 6, 5]));
    }
}
