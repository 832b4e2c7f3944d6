//! What-if simulation: apply operator scenarios to a snapshot (add or remove brokers, change a
//! topic's replication factor, scale traffic, add a topic), plan the changed cluster with the
//! same planner as proposals, and report every broker's seven loads before and after, the moves
//! the scenario needs with their bytes and cost classes, and warnings.
//!
//! Pure: no IO, no clock. The answer is deterministic (brokers by id, moves by topic and
//! partition, ties broken by ids). Request shapes and the answer: `docs/api/simulation.md`.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::fmt;

use ballast_model::snapshot::{Snapshot, SnapshotBroker, SnapshotPartition};
use ballast_model::{BrokerId, BrokerState, CostClass, Load};
use serde::ser::SerializeMap;
use serde::{Deserialize, Serialize, Serializer};

use crate::placement::{self, Resizing, Tallies};
use crate::plan::{Loads, StructuralLimit};
use crate::{apply_plan, distance_pct, plan, Policy};

/// Brokers one `addBrokers` scenario may add.
pub const MAX_ADDED_BROKERS: i64 = 1000;
/// Partitions one `addTopic` scenario may create.
pub const MAX_NEW_PARTITIONS: i64 = 100_000;
/// The largest replication factor a scenario may ask for (the planner models up to 16 replicas).
pub const MAX_REPLICATION_FACTOR: i64 = crate::model::MAX_RF as i64;
/// Moves listed by default, and at most (totals always cover every move).
pub const MOVES_LISTED: usize = 1000;
pub const MOVES_LISTED_MAX: usize = 100_000;

// ---------------------------------------------------------------------------------------------
// requests

/// `POST /api/v1/what-if/simulate`: scenarios applied in order, then planned.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct WhatIfRequest {
    pub scenarios: Vec<ScenarioSpec>,
    /// Moves (and new partitions' placements) listed; omitted or 0: [`MOVES_LISTED`].
    #[serde(default)]
    pub limit: Option<i64>,
}

/// One scenario as the request spells it: `type` and the fields of that type. A flat record
/// (not a tagged enum) so that a wrong value is reported with its path
/// (`scenarios[0].factor: invalid type ...`); [`ScenarioSpec::scenario`] checks which fields the
/// type needs and allows. Numbers are read wide (`i64`, `f64`) so that a negative or zero value
/// is refused with a message naming its field rather than a parser error.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ScenarioSpec {
    #[serde(rename = "type")]
    pub kind: String,
    pub count: Option<i64>,
    pub broker_ids: Option<Vec<i64>>,
    pub rack: Option<String>,
    pub topic: Option<String>,
    pub replication_factor: Option<i64>,
    pub factor: Option<f64>,
    pub size_factor: Option<f64>,
    pub partitions: Option<i64>,
    pub min_insync_replicas: Option<i64>,
    pub size_bytes: Option<f64>,
    pub producer_msg_rate: Option<f64>,
    pub producer_byte_rate: Option<f64>,
    pub consumer_msg_rate: Option<f64>,
    pub consumer_byte_rate: Option<f64>,
}

/// The scenario types and the fields each allows (`type` aside).
const SCENARIO_FIELDS: [(&str, &[&str]); 8] = [
    ("addPartitions", &["topic", "partitions"]),
    ("deleteTopic", &["topic"]),
    ("addBrokers", &["count", "brokerIds", "rack"]),
    ("removeBrokers", &["brokerIds"]),
    ("decommissionBrokers", &["brokerIds"]),
    ("changeReplicationFactor", &["topic", "replicationFactor"]),
    ("scaleTraffic", &["factor", "topic", "sizeFactor"]),
    (
        "addTopic",
        &[
            "topic",
            "partitions",
            "replicationFactor",
            "minInsyncReplicas",
            "sizeBytes",
            "producerMsgRate",
            "producerByteRate",
            "consumerMsgRate",
            "consumerByteRate",
        ],
    ),
];

impl ScenarioSpec {
    fn present(&self) -> [(&'static str, bool); 14] {
        [
            ("count", self.count.is_some()),
            ("brokerIds", self.broker_ids.is_some()),
            ("rack", self.rack.is_some()),
            ("topic", self.topic.is_some()),
            ("replicationFactor", self.replication_factor.is_some()),
            ("factor", self.factor.is_some()),
            ("sizeFactor", self.size_factor.is_some()),
            ("partitions", self.partitions.is_some()),
            ("minInsyncReplicas", self.min_insync_replicas.is_some()),
            ("sizeBytes", self.size_bytes.is_some()),
            ("producerMsgRate", self.producer_msg_rate.is_some()),
            ("producerByteRate", self.producer_byte_rate.is_some()),
            ("consumerMsgRate", self.consumer_msg_rate.is_some()),
            ("consumerByteRate", self.consumer_byte_rate.is_some()),
        ]
    }

    /// The scenario at index `i` of the request, or which field is wrong.
    pub fn scenario(&self, i: usize) -> Result<Scenario, InputError> {
        let kind = self.kind.as_str();
        let Some((_, allowed)) = SCENARIO_FIELDS.iter().find(|(k, _)| *k == kind) else {
            let known: Vec<&str> = SCENARIO_FIELDS.iter().map(|(k, _)| *k).collect();
            return Err(InputError::new(
                at(i, "type"),
                format!("unknown scenario type {kind:?}; use {}", known.join(", ")),
            ));
        };
        if let Some((name, _)) = self
            .present()
            .into_iter()
            .find(|(name, present)| *present && !allowed.contains(name))
        {
            return Err(InputError::new(
                at(i, name),
                format!(
                    "does not apply to {kind} (its fields: {})",
                    allowed.join(", ")
                ),
            ));
        }
        fn need<T: Clone>(
            i: usize,
            kind: &str,
            name: &str,
            v: &Option<T>,
        ) -> Result<T, InputError> {
            v.clone()
                .ok_or_else(|| InputError::new(at(i, name), format!("is required for {kind}")))
        }
        Ok(match kind {
            "addBrokers" => Scenario::AddBrokers {
                count: self.count,
                broker_ids: self.broker_ids.clone(),
                rack: self.rack.clone(),
            },
            "removeBrokers" | "decommissionBrokers" => Scenario::RemoveBrokers {
                broker_ids: need(i, kind, "brokerIds", &self.broker_ids)?,
            },
            "changeReplicationFactor" => Scenario::ChangeReplicationFactor {
                topic: need(i, kind, "topic", &self.topic)?,
                replication_factor: need(i, kind, "replicationFactor", &self.replication_factor)?,
            },
            "addPartitions" => Scenario::AddPartitions {
                topic: need(i, kind, "topic", &self.topic)?,
                partitions: need(i, kind, "partitions", &self.partitions)?,
            },
            "deleteTopic" => Scenario::DeleteTopic {
                topic: need(i, kind, "topic", &self.topic)?,
            },
            "scaleTraffic" => Scenario::ScaleTraffic {
                factor: need(i, kind, "factor", &self.factor)?,
                topic: self.topic.clone(),
                size_factor: self.size_factor,
            },
            _ => Scenario::AddTopic {
                topic: need(i, kind, "topic", &self.topic)?,
                partitions: need(i, kind, "partitions", &self.partitions)?,
                replication_factor: need(i, kind, "replicationFactor", &self.replication_factor)?,
                min_insync_replicas: self.min_insync_replicas,
                size_bytes: self.size_bytes.unwrap_or(0.0),
                producer_msg_rate: self.producer_msg_rate.unwrap_or(0.0),
                producer_byte_rate: self.producer_byte_rate.unwrap_or(0.0),
                consumer_msg_rate: self.consumer_msg_rate.unwrap_or(0.0),
                consumer_byte_rate: self.consumer_byte_rate.unwrap_or(0.0),
            },
        })
    }
}

/// One change to the cluster, checked for the fields its type needs.
#[derive(Debug, Clone, PartialEq)]
pub enum Scenario {
    /// New empty brokers: `count`, or explicit `brokerIds`, or both when they agree. Without a
    /// `rack`, each goes to the rack with the fewest brokers (when the cluster has racks).
    AddBrokers {
        count: Option<i64>,
        broker_ids: Option<Vec<i64>>,
        rack: Option<String>,
    },
    /// Decommission (`removeBrokers` or `decommissionBrokers`): every replica on these brokers
    /// moves elsewhere.
    RemoveBrokers { broker_ids: Vec<i64> },
    /// Every partition of `topic` gets `replicationFactor` replicas.
    ChangeReplicationFactor {
        topic: String,
        replication_factor: i64,
    },
    /// Multiplies the four rates (of one topic, or of every partition) by `factor`; partition
    /// sizes by `sizeFactor` (default 1: sizes unchanged).
    ScaleTraffic {
        factor: f64,
        topic: Option<String>,
        size_factor: Option<f64>,
    },
    /// `topic` raised to `partitions` partitions (the new total), the new ones empty, placed as
    /// a new topic's.
    AddPartitions { topic: String, partitions: i64 },
    /// `topic` deleted with its data and traffic.
    DeleteTopic { topic: String },
    /// A new topic; sizes and rates are the topic's totals, spread evenly over its partitions.
    AddTopic {
        topic: String,
        partitions: i64,
        replication_factor: i64,
        min_insync_replicas: Option<i64>,
        /// Bytes of one replica of every partition together.
        size_bytes: f64,
        producer_msg_rate: f64,
        producer_byte_rate: f64,
        consumer_msg_rate: f64,
        consumer_byte_rate: f64,
    },
}

impl Scenario {
    pub fn kind(&self) -> &'static str {
        match self {
            Scenario::AddBrokers { .. } => "addBrokers",
            Scenario::RemoveBrokers { .. } => "removeBrokers",
            Scenario::ChangeReplicationFactor { .. } => "changeReplicationFactor",
            Scenario::ScaleTraffic { .. } => "scaleTraffic",
            Scenario::AddTopic { .. } => "addTopic",
            Scenario::AddPartitions { .. } => "addPartitions",
            Scenario::DeleteTopic { .. } => "deleteTopic",
        }
    }
}

/// A request that cannot be simulated: which field, and why. Shown as `field: problem`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InputError {
    /// A JSON path into the request, e.g. `scenarios[1].replicationFactor`.
    pub field: String,
    pub problem: String,
}

impl InputError {
    pub fn new(field: impl Into<String>, problem: impl Into<String>) -> InputError {
        InputError {
            field: field.into(),
            problem: problem.into(),
        }
    }
}

impl fmt::Display for InputError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.field, self.problem)
    }
}

impl std::error::Error for InputError {}

/// A list limit as the API reads it: omitted or 0 selects `default`, above `max` is clamped,
/// negative is refused.
pub fn list_limit(
    field: &str,
    requested: Option<i64>,
    default: usize,
    max: usize,
) -> Result<usize, InputError> {
    match requested {
        None | Some(0) => Ok(default),
        Some(n) if n < 0 => Err(InputError::new(
            field,
            format!("must not be negative, got {n}"),
        )),
        Some(n) => Ok(usize::try_from(n).map_or(max, |n| n.min(max))),
    }
}

// ---------------------------------------------------------------------------------------------
// answers

/// Values of the seven loads, serialised as a map keyed by load name in contract order.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ByLoad<T>(pub [T; 7]);

impl<T: Serialize> Serialize for ByLoad<T> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut map = s.serialize_map(Some(7))?;
        for (load, v) in Load::ALL.iter().zip(&self.0) {
            map.serialize_entry(load.name(), v)?;
        }
        map.end()
    }
}

/// How long copying takes at the replication throttle.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Transfer {
    pub bytes: u64,
    /// The throttle in bytes per second (`BALLAST_THROTTLE_RATE_MB` × 10^6, or its runtime
    /// override); 0 when unknown.
    pub throttle_bytes_per_sec: f64,
    /// `bytes / throttle`: every copy through one throttled broker after the other (the upper
    /// bound). None without a throttle.
    pub estimated_seconds: Option<f64>,
    /// The busiest broker's bytes (copied in, or read out as the source) over the throttle: the
    /// lower bound when every broker copies at its throttle at once.
    pub estimated_seconds_parallel: Option<f64>,
    pub busiest_broker: Option<BrokerId>,
}

impl Transfer {
    /// `copies` are (source, destination, bytes); a source of None is not counted.
    pub fn estimate(copies: &[(Option<BrokerId>, BrokerId, u64)], throttle: f64) -> Transfer {
        let mut inbound: BTreeMap<BrokerId, u64> = BTreeMap::new();
        let mut outbound: BTreeMap<BrokerId, u64> = BTreeMap::new();
        let mut bytes = 0u64;
        for (from, to, b) in copies {
            bytes = bytes.saturating_add(*b);
            let e = inbound.entry(*to).or_default();
            *e = e.saturating_add(*b);
            if let Some(f) = from {
                let e = outbound.entry(*f).or_default();
                *e = e.saturating_add(*b);
            }
        }
        let mut busiest: Option<(BrokerId, u64)> = None;
        let ids: BTreeSet<BrokerId> = inbound.keys().chain(outbound.keys()).copied().collect();
        for id in ids {
            let v = inbound
                .get(&id)
                .copied()
                .unwrap_or(0)
                .max(outbound.get(&id).copied().unwrap_or(0));
            if busiest.is_none_or(|(_, best)| v > best) {
                busiest = Some((id, v));
            }
        }
        let seconds = |b: u64| (throttle > 0.0).then(|| round2(b as f64 / throttle));
        Transfer {
            bytes,
            throttle_bytes_per_sec: throttle,
            estimated_seconds: seconds(bytes),
            estimated_seconds_parallel: seconds(busiest.map_or(0, |(_, v)| v)),
            busiest_broker: busiest.map(|(id, _)| id),
        }
    }
}

/// A scenario as it was applied, with what was chosen for it (broker ids, racks).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct AppliedScenario {
    pub index: usize,
    #[serde(rename = "type")]
    pub kind: &'static str,
    pub summary: String,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub broker_ids: Vec<BrokerId>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub topic: Option<String>,
    /// Partitions the scenario touched (replication factor, traffic, new topic).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub partitions: Option<usize>,
}

/// One broker before the scenario, with the scenario applied but nothing moved yet, and after
/// the planned moves.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct BrokerChange {
    pub broker_id: BrokerId,
    pub rack: Option<String>,
    /// `added`, `removed` or `unchanged`.
    pub change: &'static str,
    /// Before the scenario: `alive`, `down`, `maintenance`; None for an added broker.
    pub state: Option<&'static str>,
    pub takes_load: bool,
    pub takes_load_after: bool,
    /// None for an added broker.
    pub loads: Option<ByLoad<f64>>,
    /// Percent from fair share; null for a broker that takes no load.
    pub distance: Option<ByLoad<Option<f64>>>,
    pub loads_before_moves: ByLoad<f64>,
    pub distance_before_moves: ByLoad<Option<f64>>,
    pub loads_after: ByLoad<f64>,
    pub distance_after: ByLoad<Option<f64>>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct FairShares {
    /// Of the cluster as it is.
    pub before: ByLoad<f64>,
    /// Of the changed cluster (moves change no totals: the same before and after them).
    pub after: ByLoad<f64>,
}

/// A partition's change from the cluster as it is to the planned result.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SimulatedMove {
    pub topic: String,
    pub partition: i32,
    pub replicas_before: Vec<BrokerId>,
    pub replicas_after: Vec<BrokerId>,
    pub leader_before: Option<BrokerId>,
    pub leader_after: Option<BrokerId>,
    /// As the planner classifies: no replica added is `leader-only` (also a replica removed by a
    /// lower replication factor); an added replica on a rack no removed replica was on is
    /// `cross-rack`; otherwise `inter-broker`.
    pub cost_class: CostClass,
    /// Bytes copied: the partition's size per added replica.
    pub bytes: u64,
    /// `replication-factor`, `broker-removal`, `repair` (a replica on a down broker),
    /// `maintenance` (a replica on a broker in maintenance, drained) or `balance`.
    pub cause: &'static str,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Tally {
    pub moves: u64,
    pub bytes: u64,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Movement {
    pub moves: u64,
    pub bytes: u64,
    pub replicas_added: u64,
    pub replicas_removed: u64,
    pub leader_changes: u64,
    /// Keyed `leader-only`, `inter-broker`, `cross-rack` (all three always present).
    pub by_cost_class: BTreeMap<&'static str, Tally>,
    /// Keyed by cause (only causes that occur).
    pub by_cause: BTreeMap<&'static str, Tally>,
    pub transfer: Transfer,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Placement {
    pub partition: i32,
    pub replicas: Vec<BrokerId>,
    pub leader: Option<BrokerId>,
}

/// A topic the scenarios create: where its partitions would be (after the plan). Creating a
/// topic copies nothing, so these are not moves.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct AddedTopic {
    pub topic: String,
    pub partitions: usize,
    pub requested_replication_factor: usize,
    /// The fewest replicas any partition got (below the request when brokers are too few).
    pub replication_factor: usize,
    pub placement: Vec<Placement>,
    pub placement_truncated: bool,
}

/// The planner's verdict on the changed cluster (`before` means: scenario applied, no moves).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PlanSummary {
    pub recommended: bool,
    /// The plan's reason code and words (`Plan::reason`, `Plan::reason_text`).
    pub reason: Option<String>,
    pub reason_text: Option<String>,
    pub balance_hold: bool,
    pub down_brokers: Vec<BrokerId>,
    pub evenness_before: f64,
    pub evenness_after: f64,
    pub effective_before: f64,
    pub effective_after: f64,
    pub structural_limits: Vec<StructuralLimit>,
    pub loads: Loads,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Warning {
    pub code: &'static str,
    /// Index of the scenario it is about; None for the result as a whole.
    pub scenario: Option<usize>,
    pub message: String,
}

/// The answer of a simulation.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct WhatIf {
    pub scenarios: Vec<AppliedScenario>,
    pub brokers: Vec<BrokerChange>,
    pub fair_share: FairShares,
    pub movement: Movement,
    pub moves: Vec<SimulatedMove>,
    pub moves_truncated: bool,
    pub added_topics: Vec<AddedTopic>,
    pub plan: PlanSummary,
    pub warnings: Vec<Warning>,
}

// ---------------------------------------------------------------------------------------------
// simulation

/// Applies `request.scenarios` in order to `snapshot`, plans the result under `policy` at
/// `now_ms`, and reports. `throttle_bytes_per_sec` (0 = unknown) gives the copy time.
pub fn simulate(
    snapshot: &Snapshot,
    request: &WhatIfRequest,
    policy: &Policy,
    now_ms: i64,
    throttle_bytes_per_sec: f64,
) -> Result<WhatIf, InputError> {
    let limit = list_limit("limit", request.limit, MOVES_LISTED, MOVES_LISTED_MAX)?;
    if request.scenarios.is_empty() {
        return Err(InputError::new(
            "scenarios",
            "give at least one scenario (addBrokers, removeBrokers, changeReplicationFactor, \
             scaleTraffic, addTopic)",
        ));
    }
    let scenarios: Vec<Scenario> = request
        .scenarios
        .iter()
        .enumerate()
        .map(|(i, spec)| spec.scenario(i))
        .collect::<Result<_, _>>()?;
    let before = normalized(snapshot);
    let mut work = Work::new(&before);
    for (i, scenario) in scenarios.iter().enumerate() {
        work.apply(i, scenario)?;
    }
    work.mark_removed();
    let changed = work.snap.clone();
    let planned = plan(&changed, policy, now_ms);
    let after = apply_plan(&changed, &planned, None);
    Ok(report(
        &before,
        &changed,
        &after,
        planned,
        work,
        limit,
        throttle_bytes_per_sec,
    ))
}

/// `snapshot` (normalized: brokers by id, partitions by topic and partition) with every named
/// topic's partitions at the given replication factor, placed as the `changeReplicationFactor`
/// scenario places them: rack-aware, on the brokers that take load holding the fewest replicas
/// of the topic, then of the cluster, then the least disk. Topics not in the snapshot and factors
/// outside 1 to 16 are left as they are. Self-healing raises replication factors with it.
pub fn with_replication_factors(
    snapshot: &Snapshot,
    targets: &std::collections::BTreeMap<String, usize>,
) -> Snapshot {
    let mut work = Work::new(&normalized(snapshot));
    for (i, (topic, rf)) in targets.iter().enumerate() {
        // A topic the snapshot lacks or an impossible factor changes nothing.
        let _ = work.change_rf(i, topic, i64::try_from(*rf).unwrap_or(i64::MAX));
    }
    work.snap
}

/// The snapshot with brokers by id and partitions by topic and partition.
fn normalized(snapshot: &Snapshot) -> Snapshot {
    let mut s = snapshot.clone();
    s.brokers.sort_by_key(|b| b.id);
    s.partitions
        .sort_by(|a, b| (a.topic.as_str(), a.partition).cmp(&(b.topic.as_str(), b.partition)));
    s
}

fn at(i: usize, name: &str) -> String {
    format!("scenarios[{i}].{name}")
}

fn broker_id(field: &str, v: i64) -> Result<BrokerId, InputError> {
    BrokerId::try_from(v)
        .ok()
        .filter(|id| *id >= 0)
        .ok_or_else(|| InputError::new(field, format!("{v} is not a broker id (0 to 2^31-1)")))
}

fn join(ids: &[BrokerId]) -> String {
    ids.iter()
        .map(|b| b.to_string())
        .collect::<Vec<_>>()
        .join(", ")
}

fn round2(x: f64) -> f64 {
    (x * 100.0).round() / 100.0
}

fn valid_topic_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 249
        && name != "."
        && name != ".."
        && name
            .bytes()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, b'.' | b'_' | b'-'))
}

/// The cluster as the scenarios change it.
struct Work {
    snap: Snapshot,
    removed: BTreeSet<BrokerId>,
    added: BTreeSet<BrokerId>,
    /// Topics whose replication factor a scenario changed.
    rf_topics: BTreeSet<String>,
    /// Topics created by a scenario, with the replication factor asked for.
    new_topics: Vec<(String, usize)>,
    applied: Vec<AppliedScenario>,
    warnings: Vec<Warning>,
}

impl Work {
    fn new(before: &Snapshot) -> Work {
        Work {
            snap: before.clone(),
            removed: BTreeSet::new(),
            added: BTreeSet::new(),
            rf_topics: BTreeSet::new(),
            new_topics: Vec::new(),
            applied: Vec::new(),
            warnings: Vec::new(),
        }
    }

    fn warn(&mut self, code: &'static str, scenario: Option<usize>, message: String) {
        self.warnings.push(Warning {
            code,
            scenario,
            message,
        });
    }

    fn eligible(&self) -> Vec<BrokerId> {
        self.snap
            .brokers
            .iter()
            .filter(|b| b.state.takes_load() && !self.removed.contains(&b.id))
            .map(|b| b.id)
            .collect()
    }

    fn racks(&self) -> HashMap<BrokerId, Option<String>> {
        self.snap
            .brokers
            .iter()
            .map(|b| (b.id, b.rack.clone()))
            .collect()
    }

    /// Distinct racks of the brokers that can take load, or None while some has no rack.
    fn rack_count(&self) -> Option<usize> {
        let eligible = self.eligible();
        let racks = self.racks();
        let mut names = BTreeSet::new();
        for b in &eligible {
            names.insert(racks.get(b).cloned().flatten()?);
        }
        (!names.is_empty()).then_some(names.len())
    }

    fn has_topic(&self, topic: &str) -> bool {
        self.snap.partitions.iter().any(|p| p.topic == topic)
    }

    fn apply(&mut self, i: usize, scenario: &Scenario) -> Result<(), InputError> {
        match scenario {
            Scenario::AddBrokers {
                count,
                broker_ids,
                rack,
            } => self.add_brokers(i, *count, broker_ids.as_deref(), rack.as_deref()),
            Scenario::RemoveBrokers { broker_ids } => self.remove_brokers(i, broker_ids),
            Scenario::ChangeReplicationFactor {
                topic,
                replication_factor,
            } => self.change_rf(i, topic, *replication_factor),
            Scenario::ScaleTraffic {
                factor,
                topic,
                size_factor,
            } => self.scale(i, *factor, topic.as_deref(), *size_factor),
            Scenario::AddTopic { .. } => self.add_topic(i, scenario),
            Scenario::AddPartitions { topic, partitions } => {
                self.add_partitions(i, topic, *partitions)
            }
            Scenario::DeleteTopic { topic } => self.delete_topic(i, topic),
        }
    }

    fn add_brokers(
        &mut self,
        i: usize,
        count: Option<i64>,
        ids: Option<&[i64]>,
        rack: Option<&str>,
    ) -> Result<(), InputError> {
        let existing: BTreeSet<BrokerId> = self.snap.brokers.iter().map(|b| b.id).collect();
        let mut new_ids: Vec<BrokerId> = Vec::new();
        match (count, ids) {
            (None, None) => {
                return Err(InputError::new(
                    at(i, "count"),
                    "give count or brokerIds (or both)",
                ))
            }
            (Some(n), _) if n < 1 => {
                return Err(InputError::new(
                    at(i, "count"),
                    format!("must be at least 1, got {n}"),
                ))
            }
            (Some(n), _) if n > MAX_ADDED_BROKERS => {
                return Err(InputError::new(
                    at(i, "count"),
                    format!("at most {MAX_ADDED_BROKERS} brokers per scenario, got {n}"),
                ))
            }
            (_, Some([])) => {
                return Err(InputError::new(
                    at(i, "brokerIds"),
                    "must not be empty (omit it to number new brokers after the highest id)",
                ))
            }
            (Some(n), Some(list)) if usize::try_from(n).ok() != Some(list.len()) => {
                return Err(InputError::new(
                    at(i, "count"),
                    format!("is {n} but brokerIds lists {}", list.len()),
                ))
            }
            (_, Some(list)) => {
                if list.len() as i64 > MAX_ADDED_BROKERS {
                    return Err(InputError::new(
                        at(i, "brokerIds"),
                        format!("at most {MAX_ADDED_BROKERS} brokers per scenario"),
                    ));
                }
                for (k, v) in list.iter().enumerate() {
                    let field = format!("{}[{k}]", at(i, "brokerIds"));
                    let id = broker_id(&field, *v)?;
                    if existing.contains(&id) {
                        return Err(InputError::new(
                            field,
                            format!("broker {id} already exists"),
                        ));
                    }
                    if new_ids.contains(&id) {
                        return Err(InputError::new(
                            field,
                            format!("broker {id} is listed twice"),
                        ));
                    }
                    new_ids.push(id);
                }
            }
            (Some(n), None) => {
                let first = existing.last().map_or(0, |m| i64::from(*m) + 1);
                for id in first..first + n {
                    new_ids.push(broker_id(&at(i, "count"), id)?);
                }
            }
        }
        if rack.is_some_and(|r| r.trim().is_empty()) {
            return Err(InputError::new(at(i, "rack"), "must not be empty"));
        }
        // Racks in use by brokers that stay, for the automatic choice.
        let mut per_rack: BTreeMap<String, usize> = BTreeMap::new();
        let mut unracked = 0usize;
        for b in self
            .snap
            .brokers
            .iter()
            .filter(|b| !self.removed.contains(&b.id))
        {
            match &b.rack {
                Some(r) => *per_rack.entry(r.clone()).or_default() += 1,
                None => unracked += 1,
            }
        }
        let racked = !per_rack.is_empty();
        let mut placed = Vec::new();
        for id in &new_ids {
            let chosen = match rack {
                Some(r) => Some(r.to_string()),
                None => per_rack
                    .iter()
                    .min_by(|a, b| a.1.cmp(b.1).then(a.0.cmp(b.0)))
                    .map(|(r, _)| r.clone()),
            };
            if let Some(r) = &chosen {
                *per_rack.entry(r.clone()).or_default() += 1;
            }
            placed.push(format!(
                "{id}{}",
                chosen
                    .as_ref()
                    .map(|r| format!(" (rack {r})"))
                    .unwrap_or_default()
            ));
            self.snap.brokers.push(SnapshotBroker {
                id: *id,
                rack: chosen,
                state: BrokerState::Alive,
            });
            self.added.insert(*id);
        }
        self.snap.brokers.sort_by_key(|b| b.id);
        if rack.is_some() && (!racked || unracked > 0) {
            self.warn(
                "rack_layout_partial",
                Some(i),
                format!(
                    "the new brokers get rack {:?} but {} other broker(s) have none: Kafka places \
                     replicas rack-aware only when every broker has a rack",
                    rack.unwrap_or_default(),
                    unracked
                ),
            );
        }
        self.applied.push(AppliedScenario {
            index: i,
            kind: "addBrokers",
            summary: format!(
                "adds broker{} {}",
                if new_ids.len() == 1 { "" } else { "s" },
                placed.join(", ")
            ),
            broker_ids: new_ids,
            topic: None,
            partitions: None,
        });
        Ok(())
    }

    fn remove_brokers(&mut self, i: usize, ids: &[i64]) -> Result<(), InputError> {
        if ids.is_empty() {
            return Err(InputError::new(at(i, "brokerIds"), "must not be empty"));
        }
        let mut list: Vec<BrokerId> = Vec::new();
        for (k, v) in ids.iter().enumerate() {
            let field = format!("{}[{k}]", at(i, "brokerIds"));
            let id = broker_id(&field, *v)?;
            if !self.snap.brokers.iter().any(|b| b.id == id) {
                return Err(InputError::new(
                    field,
                    format!("broker {id} is not in the cluster"),
                ));
            }
            if list.contains(&id) {
                return Err(InputError::new(
                    field,
                    format!("broker {id} is listed twice"),
                ));
            }
            if self.removed.contains(&id) {
                return Err(InputError::new(
                    field,
                    format!("broker {id} is already removed by an earlier scenario"),
                ));
            }
            list.push(id);
        }
        self.removed.extend(list.iter().copied());
        if self.eligible().is_empty() {
            return Err(InputError::new(
                at(i, "brokerIds"),
                "removes every broker that can take load: at least one alive broker must stay",
            ));
        }
        list.sort_unstable();
        let replicas = self
            .snap
            .partitions
            .iter()
            .map(|p| p.replicas.iter().filter(|r| list.contains(r)).count())
            .sum::<usize>();
        self.applied.push(AppliedScenario {
            index: i,
            kind: "removeBrokers",
            summary: format!(
                "removes broker{} {} ({replicas} replicas to move)",
                if list.len() == 1 { "" } else { "s" },
                join(&list)
            ),
            broker_ids: list,
            topic: None,
            partitions: None,
        });
        Ok(())
    }

    fn check_rf(&self, i: usize, rf: i64) -> Result<usize, InputError> {
        if rf < 1 {
            return Err(InputError::new(
                at(i, "replicationFactor"),
                format!("must be at least 1, got {rf}"),
            ));
        }
        if rf > MAX_REPLICATION_FACTOR {
            return Err(InputError::new(
                at(i, "replicationFactor"),
                format!("must be at most {MAX_REPLICATION_FACTOR}, got {rf}"),
            ));
        }
        Ok(rf as usize)
    }

    /// Warnings about a replication factor against brokers, racks and min ISR.
    fn rf_warnings(&mut self, i: usize, topic: &str, rf: usize, min_isr: i64) {
        let eligible = self.eligible().len();
        if rf > eligible {
            self.warn(
                "replication_factor_above_brokers",
                Some(i),
                format!(
                    "replication factor {rf} of {topic} is above the {eligible} broker(s) that can \
                     take load: partitions get at most {eligible} replicas (Kafka refuses such a \
                     topic)"
                ),
            );
        }
        if let Some(racks) = self.rack_count() {
            if rf > racks {
                self.warn(
                    "replication_factor_above_racks",
                    Some(i),
                    format!(
                        "replication factor {rf} of {topic} is above the {racks} rack(s): a rack \
                         failure takes more than one replica of some partitions"
                    ),
                );
            }
        }
        let placed = rf.min(eligible) as i64;
        if placed < min_isr {
            self.warn(
                "replication_factor_below_min_isr",
                Some(i),
                format!(
                    "{topic} would have {placed} replica(s) with min.insync.replicas {min_isr}: \
                     producers with acks=all fail"
                ),
            );
        } else if placed == min_isr && placed > 1 {
            self.warn(
                "replication_factor_at_min_isr",
                Some(i),
                format!(
                    "{topic} would have {placed} replicas with min.insync.replicas {min_isr}: \
                     losing any replica blocks producers with acks=all"
                ),
            );
        }
    }

    fn change_rf(&mut self, i: usize, topic: &str, rf: i64) -> Result<(), InputError> {
        if !self.has_topic(topic) {
            return Err(InputError::new(
                at(i, "topic"),
                format!("topic {topic:?} is not in the cluster"),
            ));
        }
        let rf = self.check_rf(i, rf)?;
        let Resizing {
            added,
            dropped,
            touched,
            short,
            min_isr,
            old_rfs,
        } = placement::resize(&mut self.snap, topic, None, rf, None);
        self.rf_topics.insert(topic.to_string());
        self.rf_warnings(i, topic, rf, min_isr);
        let from = old_rfs
            .iter()
            .map(|r| r.to_string())
            .collect::<Vec<_>>()
            .join("/");
        let mut summary = format!(
            "replication factor of {topic} from {from} to {rf}: {added} replica(s) added, \
             {dropped} removed"
        );
        if short > 0 {
            summary.push_str(&format!(
                "; {short} partition(s) short of {rf} replicas (too few brokers)"
            ));
        }
        self.applied.push(AppliedScenario {
            index: i,
            kind: "changeReplicationFactor",
            summary,
            broker_ids: Vec::new(),
            topic: Some(topic.to_string()),
            partitions: Some(touched),
        });
        Ok(())
    }

    fn scale(
        &mut self,
        i: usize,
        factor: f64,
        topic: Option<&str>,
        size_factor: Option<f64>,
    ) -> Result<(), InputError> {
        if !factor.is_finite() || factor < 0.0 {
            return Err(InputError::new(
                at(i, "factor"),
                format!("must be a number of 0 or more, got {factor}"),
            ));
        }
        let size_factor = size_factor.unwrap_or(1.0);
        if !size_factor.is_finite() || size_factor < 0.0 {
            return Err(InputError::new(
                at(i, "sizeFactor"),
                format!("must be a number of 0 or more, got {size_factor}"),
            ));
        }
        if let Some(t) = topic {
            if !self.has_topic(t) {
                return Err(InputError::new(
                    at(i, "topic"),
                    format!("topic {t:?} is not in the cluster"),
                ));
            }
        }
        let mut n = 0usize;
        for p in self
            .snap
            .partitions
            .iter_mut()
            .filter(|p| topic.is_none_or(|t| p.topic == t))
        {
            p.producer_msg_rate *= factor;
            p.producer_byte_rate *= factor;
            p.consumer_msg_rate *= factor;
            p.consumer_byte_rate *= factor;
            if size_factor != 1.0 {
                // `as` saturates: a huge product stays at u64::MAX.
                p.size_bytes = (p.size_bytes as f64 * size_factor).round() as u64;
            }
            n += 1;
        }
        let what = topic.map_or("every topic".to_string(), |t| format!("topic {t}"));
        let mut summary = format!("scales the traffic of {what} by {factor}");
        if size_factor != 1.0 {
            summary.push_str(&format!(" and partition sizes by {size_factor}"));
        }
        self.applied.push(AppliedScenario {
            index: i,
            kind: "scaleTraffic",
            summary,
            broker_ids: Vec::new(),
            topic: topic.map(str::to_string),
            partitions: Some(n),
        });
        Ok(())
    }

    fn add_partitions(&mut self, i: usize, topic: &str, total: i64) -> Result<(), InputError> {
        if !self.has_topic(topic) {
            return Err(InputError::new(
                at(i, "topic"),
                format!("topic {topic:?} is not in the cluster"),
            ));
        }
        let parts: Vec<&SnapshotPartition> = self
            .snap
            .partitions
            .iter()
            .filter(|p| p.topic == topic)
            .collect();
        let current = parts.len() as i64;
        if total <= current {
            return Err(InputError::new(
                at(i, "partitions"),
                format!(
                    "the new total must be more than the topic's {current} partitions (Kafka cannot remove partitions), got {total}"
                ),
            ));
        }
        if total - current > MAX_NEW_PARTITIONS {
            return Err(InputError::new(
                at(i, "partitions"),
                format!(
                    "at most {MAX_NEW_PARTITIONS} partitions can be added, got {}",
                    total - current
                ),
            ));
        }
        let rf = parts.iter().map(|p| p.replicas.len()).max().unwrap_or(1);
        let min_isr = parts
            .iter()
            .map(|p| p.min_insync_replicas)
            .max()
            .unwrap_or(1);
        let first = parts.iter().map(|p| p.partition).max().map_or(0, |p| p + 1);
        let eligible = self.eligible();
        let racks = self.racks();
        let mut tallies = Tallies::of(&self.snap, topic);
        let n = (total - current) as usize;
        for k in 0..n {
            let replicas = placement::place_one(&eligible, &racks, &mut tallies, rf, 0, None);
            self.snap.partitions.push(SnapshotPartition {
                topic: topic.to_string(),
                partition: first + k as i32,
                leader: replicas.first().copied(),
                isr: Some(replicas.clone()),
                replicas,
                size_bytes: 0,
                compacted: false,
                min_insync_replicas: min_isr,
                producer_msg_rate: 0.0,
                producer_byte_rate: 0.0,
                consumer_msg_rate: 0.0,
                consumer_byte_rate: 0.0,
                last_moved_at: None,
            });
        }
        self.snap
            .partitions
            .sort_by(|a, b| (a.topic.as_str(), a.partition).cmp(&(b.topic.as_str(), b.partition)));
        self.applied.push(AppliedScenario {
            index: i,
            kind: "addPartitions",
            summary: format!(
                "adds {n} partition(s) to {topic} (from {current} to {total}), replication factor {rf}; the new partitions hold no data and no traffic yet"
            ),
            broker_ids: Vec::new(),
            topic: Some(topic.to_string()),
            partitions: Some(n),
        });
        Ok(())
    }

    fn delete_topic(&mut self, i: usize, topic: &str) -> Result<(), InputError> {
        if !self.has_topic(topic) {
            return Err(InputError::new(
                at(i, "topic"),
                format!("topic {topic:?} is not in the cluster"),
            ));
        }
        let (mut n, mut bytes) = (0usize, 0u64);
        self.snap.partitions.retain(|p| {
            let gone = p.topic == topic;
            if gone {
                n += 1;
                bytes = bytes.saturating_add(p.size_bytes.saturating_mul(p.replicas.len() as u64));
            }
            !gone
        });
        self.applied.push(AppliedScenario {
            index: i,
            kind: "deleteTopic",
            summary: format!(
                "deletes topic {topic}: {n} partition(s), {bytes} bytes on the brokers' disks and its traffic"
            ),
            broker_ids: Vec::new(),
            topic: Some(topic.to_string()),
            partitions: Some(n),
        });
        Ok(())
    }

    fn add_topic(&mut self, i: usize, scenario: &Scenario) -> Result<(), InputError> {
        let Scenario::AddTopic {
            topic,
            partitions,
            replication_factor,
            min_insync_replicas,
            size_bytes,
            producer_msg_rate,
            producer_byte_rate,
            consumer_msg_rate,
            consumer_byte_rate,
        } = scenario
        else {
            return Ok(());
        };
        if !valid_topic_name(topic) {
            return Err(InputError::new(
                at(i, "topic"),
                format!(
                    "{topic:?} is not a valid topic name (1 to 249 of a-z, A-Z, 0-9, '.', '_', \
                     '-')"
                ),
            ));
        }
        if self.has_topic(topic) {
            return Err(InputError::new(
                at(i, "topic"),
                format!("topic {topic:?} already exists"),
            ));
        }
        if !(1..=MAX_NEW_PARTITIONS).contains(partitions) {
            return Err(InputError::new(
                at(i, "partitions"),
                format!("must be 1 to {MAX_NEW_PARTITIONS}, got {partitions}"),
            ));
        }
        let rf = self.check_rf(i, *replication_factor)?;
        let min_isr = min_insync_replicas.unwrap_or(1);
        if !(1..=i64::from(i32::MAX)).contains(&min_isr) {
            return Err(InputError::new(
                at(i, "minInsyncReplicas"),
                format!("must be at least 1, got {min_isr}"),
            ));
        }
        for (name, v) in [
            ("sizeBytes", *size_bytes),
            ("producerMsgRate", *producer_msg_rate),
            ("producerByteRate", *producer_byte_rate),
            ("consumerMsgRate", *consumer_msg_rate),
            ("consumerByteRate", *consumer_byte_rate),
        ] {
            if !v.is_finite() || v < 0.0 {
                return Err(InputError::new(
                    at(i, name),
                    format!("must be a number of 0 or more, got {v}"),
                ));
            }
        }
        let eligible = self.eligible();
        let racks = self.racks();
        let mut tallies = Tallies::of(&self.snap, topic);
        let n = *partitions as usize;
        let per = |total: f64| total / n as f64;
        let size = per(*size_bytes).round() as u64;
        for partition in 0..n {
            let replicas = placement::place_one(&eligible, &racks, &mut tallies, rf, size, None);
            self.snap.partitions.push(SnapshotPartition {
                topic: topic.clone(),
                partition: partition as i32,
                leader: replicas.first().copied(),
                isr: Some(replicas.clone()),
                replicas,
                size_bytes: size,
                compacted: false,
                min_insync_replicas: i32::try_from(min_isr).unwrap_or(i32::MAX),
                producer_msg_rate: per(*producer_msg_rate),
                producer_byte_rate: per(*producer_byte_rate),
                consumer_msg_rate: per(*consumer_msg_rate),
                consumer_byte_rate: per(*consumer_byte_rate),
                last_moved_at: None,
            });
        }
        self.snap
            .partitions
            .sort_by(|a, b| (a.topic.as_str(), a.partition).cmp(&(b.topic.as_str(), b.partition)));
        self.new_topics.push((topic.clone(), rf));
        self.rf_warnings(i, topic, rf, min_isr);
        self.applied.push(AppliedScenario {
            index: i,
            kind: "addTopic",
            summary: format!(
                "adds topic {topic}: {n} partition(s), replication factor {rf}, {size_bytes} bytes"
            ),
            broker_ids: Vec::new(),
            topic: Some(topic.clone()),
            partitions: Some(n),
        });
        Ok(())
    }

    /// Removed brokers are drained by the planner as brokers in maintenance are. While some
    /// broker is down the planner only repairs (balance hold): removed brokers are then marked
    /// down too, so their replicas still move.
    fn mark_removed(&mut self) {
        let down = self
            .snap
            .brokers
            .iter()
            .any(|b| b.state == BrokerState::Down);
        let state = if down {
            BrokerState::Down
        } else {
            BrokerState::Maintenance
        };
        for b in &mut self.snap.brokers {
            if self.removed.contains(&b.id) {
                b.state = state;
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// the answer

/// Every broker's seven loads under a placement, indexed like [`Load::ALL`].
pub fn broker_loads(snapshot: &Snapshot) -> BTreeMap<BrokerId, [f64; 7]> {
    let mut loads: BTreeMap<BrokerId, [f64; 7]> =
        snapshot.brokers.iter().map(|b| (b.id, [0.0; 7])).collect();
    for p in &snapshot.partitions {
        for r in &p.replicas {
            add_replica_load(loads.entry(*r).or_insert([0.0; 7]), p, p.leader == Some(*r));
        }
    }
    loads
}

/// What one replica of `p` adds to its broker's seven loads (indexed like [`Load::ALL`]): a
/// leader its partition count and every rate, a follower its follower count; both the size.
pub fn add_replica_load(v: &mut [f64; 7], p: &SnapshotPartition, led: bool) {
    if led {
        v[0] += 1.0;
        v[3] += p.producer_msg_rate;
        v[4] += p.producer_byte_rate;
        v[5] += p.consumer_msg_rate;
        v[6] += p.consumer_byte_rate;
    } else {
        v[1] += 1.0;
    }
    v[2] += p.size_bytes as f64;
}

/// Fair share of every load as the planner computes it: the cluster's total (every broker,
/// including those that take no load and must hand theirs over) over the brokers that take load.
fn fair(loads: &BTreeMap<BrokerId, [f64; 7]>, eligible: &BTreeSet<BrokerId>) -> [f64; 7] {
    let mut f = [0.0; 7];
    if eligible.is_empty() {
        return f;
    }
    for (l, slot) in f.iter_mut().enumerate() {
        let total: f64 = loads.values().map(|v| v[l]).sum();
        *slot = total / eligible.len() as f64;
    }
    f
}

fn distances(values: &[f64; 7], fair: &[f64; 7], takes: bool) -> ByLoad<Option<f64>> {
    let mut d = [None; 7];
    if takes {
        for (l, slot) in d.iter_mut().enumerate() {
            *slot = Some(round2(distance_pct(values[l], fair[l])));
        }
    }
    ByLoad(d)
}

fn state_name(s: BrokerState) -> &'static str {
    match s {
        BrokerState::Alive => "alive",
        BrokerState::Down => "down",
        BrokerState::Maintenance => "maintenance",
    }
}

fn takers(snapshot: &Snapshot) -> BTreeSet<BrokerId> {
    snapshot
        .brokers
        .iter()
        .filter(|b| b.state.takes_load())
        .map(|b| b.id)
        .collect()
}

/// The planner's cost class of a change from `before` to `after` replicas.
pub fn cost_class(
    before: &[BrokerId],
    after: &[BrokerId],
    rack: impl Fn(BrokerId) -> Option<String>,
) -> CostClass {
    let added: Vec<BrokerId> = after
        .iter()
        .copied()
        .filter(|r| !before.contains(r))
        .collect();
    if added.is_empty() {
        return CostClass::LeaderOnly;
    }
    let removed_racks: Vec<Option<String>> = before
        .iter()
        .filter(|r| !after.contains(r))
        .map(|r| rack(*r))
        .collect();
    let cross = added.iter().any(|a| {
        let r = rack(*a);
        r.is_some() && !removed_racks.contains(&r)
    });
    if cross {
        CostClass::CrossRack
    } else {
        CostClass::InterBroker
    }
}

pub fn cost_class_name(c: CostClass) -> &'static str {
    match c {
        CostClass::LeaderOnly => "leader-only",
        CostClass::InterBroker => "inter-broker",
        CostClass::CrossRack => "cross-rack",
    }
}

/// Partitions not spread over min(replicas, racks) racks, counting the racks of the brokers
/// that take load; None while some such broker has no rack (or none has one).
fn not_rack_aware(snapshot: &Snapshot) -> Option<usize> {
    let racks: HashMap<BrokerId, Option<&str>> = snapshot
        .brokers
        .iter()
        .map(|b| (b.id, b.rack.as_deref()))
        .collect();
    let mut names = BTreeSet::new();
    for b in snapshot.brokers.iter().filter(|b| b.state.takes_load()) {
        names.insert(b.rack.as_deref()?);
    }
    if names.is_empty() {
        return None;
    }
    let count = snapshot
        .partitions
        .iter()
        .filter(|p| {
            let distinct: BTreeSet<&str> = p
                .replicas
                .iter()
                .filter_map(|r| racks.get(r).copied().flatten())
                .collect();
            distinct.len() < p.replicas.len().min(names.len())
        })
        .count();
    Some(count)
}

fn report(
    before: &Snapshot,
    changed: &Snapshot,
    after: &Snapshot,
    planned: crate::Plan,
    mut work: Work,
    limit: usize,
    throttle: f64,
) -> WhatIf {
    let racks: HashMap<BrokerId, Option<String>> = changed
        .brokers
        .iter()
        .map(|b| (b.id, b.rack.clone()))
        .collect();
    let rack = |b: BrokerId| racks.get(&b).cloned().flatten();
    let before_state: HashMap<BrokerId, BrokerState> =
        before.brokers.iter().map(|b| (b.id, b.state)).collect();

    // Loads and fair shares.
    let (l0, l1, l2) = (
        broker_loads(before),
        broker_loads(changed),
        broker_loads(after),
    );
    let (e0, e1) = (takers(before), takers(changed));
    let (f0, f1, f2) = (fair(&l0, &e0), fair(&l1, &e1), fair(&l2, &e1));
    let zero = [0.0; 7];
    let brokers: Vec<BrokerChange> = changed
        .brokers
        .iter()
        .map(|b| {
            let existed = before_state.get(&b.id).copied();
            let v1 = l1.get(&b.id).unwrap_or(&zero);
            let v2 = l2.get(&b.id).unwrap_or(&zero);
            BrokerChange {
                broker_id: b.id,
                rack: b.rack.clone(),
                change: if work.added.contains(&b.id) {
                    "added"
                } else if work.removed.contains(&b.id) {
                    "removed"
                } else {
                    "unchanged"
                },
                state: existed.map(state_name),
                takes_load: e0.contains(&b.id),
                takes_load_after: e1.contains(&b.id),
                loads: existed.map(|_| ByLoad(*l0.get(&b.id).unwrap_or(&zero))),
                distance: existed
                    .map(|_| distances(l0.get(&b.id).unwrap_or(&zero), &f0, e0.contains(&b.id))),
                loads_before_moves: ByLoad(*v1),
                distance_before_moves: distances(v1, &f1, e1.contains(&b.id)),
                loads_after: ByLoad(*v2),
                distance_after: distances(v2, &f2, e1.contains(&b.id)),
            }
        })
        .collect();

    // Net moves of the partitions that exist today.
    let finals: HashMap<(&str, i32), &SnapshotPartition> = after
        .partitions
        .iter()
        .map(|p| ((p.topic.as_str(), p.partition), p))
        .collect();
    let mut moves = Vec::new();
    let mut copies: Vec<(Option<BrokerId>, BrokerId, u64)> = Vec::new();
    let mut by_class: BTreeMap<&'static str, Tally> = [
        CostClass::LeaderOnly,
        CostClass::InterBroker,
        CostClass::CrossRack,
    ]
    .into_iter()
    .map(|c| (cost_class_name(c), Tally::default()))
    .collect();
    let mut by_cause: BTreeMap<&'static str, Tally> = BTreeMap::new();
    let (mut added_n, mut removed_n, mut leader_changes) = (0u64, 0u64, 0u64);
    for p in &before.partitions {
        let Some(f) = finals.get(&(p.topic.as_str(), p.partition)) else {
            continue;
        };
        if f.replicas == p.replicas && f.leader == p.leader {
            continue;
        }
        let added: Vec<BrokerId> = f
            .replicas
            .iter()
            .copied()
            .filter(|r| !p.replicas.contains(r))
            .collect();
        let removed = p
            .replicas
            .iter()
            .filter(|r| !f.replicas.contains(r))
            .count();
        let bytes = f.size_bytes.saturating_mul(added.len() as u64);
        let class = cost_class(&p.replicas, &f.replicas, rack);
        let cause = if work.rf_topics.contains(&p.topic) && f.replicas.len() != p.replicas.len() {
            "replication-factor"
        } else if p.replicas.iter().any(|r| work.removed.contains(r)) {
            "broker-removal"
        } else if p
            .replicas
            .iter()
            .any(|r| before_state.get(r) == Some(&BrokerState::Down))
        {
            "repair"
        } else if p
            .replicas
            .iter()
            .any(|r| before_state.get(r) == Some(&BrokerState::Maintenance))
        {
            "maintenance"
        } else {
            "balance"
        };
        let source = p
            .leader
            .filter(|l| before_state.get(l) != Some(&BrokerState::Down));
        for a in &added {
            copies.push((source, *a, f.size_bytes));
        }
        added_n += added.len() as u64;
        removed_n += removed as u64;
        leader_changes += u64::from(f.leader != p.leader);
        for t in [
            by_class.entry(cost_class_name(class)).or_default(),
            by_cause.entry(cause).or_default(),
        ] {
            t.moves += 1;
            t.bytes = t.bytes.saturating_add(bytes);
        }
        moves.push(SimulatedMove {
            topic: p.topic.clone(),
            partition: p.partition,
            replicas_before: p.replicas.clone(),
            replicas_after: f.replicas.clone(),
            leader_before: p.leader,
            leader_after: f.leader,
            cost_class: class,
            bytes,
            cause,
        });
    }
    let transfer = Transfer::estimate(&copies, throttle);
    let movement = Movement {
        moves: moves.len() as u64,
        bytes: transfer.bytes,
        replicas_added: added_n,
        replicas_removed: removed_n,
        leader_changes,
        by_cost_class: by_class,
        by_cause,
        transfer,
    };
    let moves_truncated = moves.len() > limit;
    moves.truncate(limit);

    // New topics where the plan leaves them.
    let added_topics: Vec<AddedTopic> = work
        .new_topics
        .iter()
        .map(|(topic, rf)| {
            let parts: Vec<&SnapshotPartition> = after
                .partitions
                .iter()
                .filter(|p| &p.topic == topic)
                .collect();
            AddedTopic {
                topic: topic.clone(),
                partitions: parts.len(),
                requested_replication_factor: *rf,
                replication_factor: parts.iter().map(|p| p.replicas.len()).min().unwrap_or(0),
                placement_truncated: parts.len() > limit,
                placement: parts
                    .iter()
                    .take(limit)
                    .map(|p| Placement {
                        partition: p.partition,
                        replicas: p.replicas.clone(),
                        leader: p.leader,
                    })
                    .collect(),
            }
        })
        .collect();

    // Warnings about the result as a whole.
    if planned.balance_hold {
        work.warn(
            "balance_hold",
            None,
            format!(
                "broker(s) {} down: balancing is paused, only repairs and removals are planned",
                join(
                    &planned
                        .down_brokers
                        .iter()
                        .copied()
                        .filter(|b| !work.removed.contains(b))
                        .collect::<Vec<_>>()
                )
            ),
        );
    }
    let stuck: Vec<&SnapshotPartition> = after
        .partitions
        .iter()
        .filter(|p| p.replicas.iter().any(|r| work.removed.contains(r)))
        .collect();
    if !stuck.is_empty() {
        let replicas: usize = stuck
            .iter()
            .map(|p| {
                p.replicas
                    .iter()
                    .filter(|r| work.removed.contains(r))
                    .count()
            })
            .sum();
        let offline = stuck.iter().filter(|p| p.leader.is_none()).count();
        work.warn(
            "removed_broker_not_drained",
            None,
            format!(
                "{replicas} replica(s) of {} partition(s) stay on removed brokers ({offline} \
                 offline): no broker can take them without losing rack spread or duplicating a \
                 replica, or the partition is offline or in the move cooldown",
                stuck.len()
            ),
        );
    }
    let mut empty: Vec<BrokerId> = work
        .added
        .iter()
        .copied()
        .filter(|b| l2.get(b).is_none_or(|v| v[0] + v[1] == 0.0))
        .collect();
    empty.sort_unstable();
    if !empty.is_empty() {
        work.warn(
            "added_broker_empty",
            None,
            format!(
                "new broker(s) {} would get no replicas: {}",
                join(&empty),
                planned
                    .reason_text
                    .clone()
                    .unwrap_or_else(|| "no move onto them helps".to_string())
            ),
        );
    }
    if let (Some(was), Some(now)) = (not_rack_aware(before), not_rack_aware(after)) {
        if now > was {
            work.warn(
                "rack_spread_reduced",
                None,
                format!(
                    "{now} partition(s) would not be spread over min(replication factor, racks) \
                     racks ({was} today)"
                ),
            );
        }
    }

    WhatIf {
        scenarios: work.applied,
        brokers,
        fair_share: FairShares {
            before: ByLoad(f0),
            after: ByLoad(f1),
        },
        movement,
        moves,
        moves_truncated,
        added_topics,
        plan: PlanSummary {
            recommended: planned.recommended,
            reason: planned.reason,
            reason_text: planned.reason_text,
            balance_hold: planned.balance_hold,
            down_brokers: planned.down_brokers,
            evenness_before: planned.evenness_before,
            evenness_after: planned.evenness_after,
            effective_before: planned.effective_before,
            effective_after: planned.effective_after,
            structural_limits: planned.structural_limits,
            loads: planned.loads,
        },
        warnings: work.warnings,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scenarios_parse_from_their_json_names() {
        let r: WhatIfRequest = serde_json::from_str(
            r#"{"scenarios": [
                {"type": "addBrokers", "count": 2, "rack": "r1"},
                {"type": "decommissionBrokers", "brokerIds": [3]},
                {"type": "changeReplicationFactor", "topic": "t", "replicationFactor": 3},
                {"type": "scaleTraffic", "factor": 1.5},
                {"type": "addTopic", "topic": "n", "partitions": 6, "replicationFactor": 2,
                 "producerByteRate": 1e6}
            ]}"#,
        )
        .expect("parse");
        let kinds: Vec<&str> = r
            .scenarios
            .iter()
            .enumerate()
            .map(|(i, s)| s.scenario(i).expect("valid").kind())
            .collect();
        assert_eq!(
            kinds,
            [
                "addBrokers",
                "removeBrokers",
                "changeReplicationFactor",
                "scaleTraffic",
                "addTopic"
            ]
        );
    }

    #[test]
    fn unknown_fields_types_and_fields_of_another_type_are_refused() {
        let r = serde_json::from_str::<WhatIfRequest>(
            r#"{"scenarios": [{"type": "addBrokers", "count": 1, "racks": "r1"}]}"#,
        );
        assert!(r.is_err());
        let field = |json: &str| -> String {
            let r: WhatIfRequest = serde_json::from_str(json).expect("parse");
            r.scenarios[0].scenario(0).expect_err("refused").field
        };
        assert_eq!(
            field(r#"{"scenarios": [{"type": "explode"}]}"#),
            "scenarios[0].type"
        );
        assert_eq!(
            field(r#"{"scenarios": [{"type": "scaleTraffic", "factor": 2, "count": 1}]}"#),
            "scenarios[0].count"
        );
        assert_eq!(
            field(r#"{"scenarios": [{"type": "scaleTraffic"}]}"#),
            "scenarios[0].factor"
        );
    }

    #[test]
    fn raised_replication_factors_go_to_racks_the_partition_lacks_and_leave_other_topics_alone() {
        use ballast_model::snapshot::{SnapshotBroker, SnapshotPartition, SNAPSHOT_FORMAT};
        let part = |topic: &str, p: i32, replicas: Vec<BrokerId>| SnapshotPartition {
            topic: topic.into(),
            partition: p,
            leader: replicas.first().copied(),
            isr: Some(replicas.clone()),
            replicas,
            size_bytes: 1000,
            compacted: false,
            min_insync_replicas: 1,
            producer_msg_rate: 0.0,
            producer_byte_rate: 0.0,
            consumer_msg_rate: 0.0,
            consumer_byte_rate: 0.0,
            last_moved_at: None,
        };
        // Brokers 1,2 on rack a; 3 on b; 4 on c.
        let snap = Snapshot {
            format: SNAPSHOT_FORMAT.into(),
            taken_at: "2026-01-01T00:00:00Z".into(),
            cluster_id: None,
            brokers: [(1, "a"), (2, "a"), (3, "b"), (4, "c")]
                .into_iter()
                .map(|(id, r)| SnapshotBroker {
                    id,
                    rack: Some(r.into()),
                    state: ballast_model::BrokerState::Alive,
                })
                .collect(),
            partitions: vec![
                part("one", 0, vec![1]),
                part("one", 1, vec![2]),
                part("other", 0, vec![1]),
            ],
        };
        let targets = std::collections::BTreeMap::from([("one".to_string(), 3usize)]);
        let after = with_replication_factors(&snap, &targets);
        let rack = |b: &BrokerId| {
            snap.brokers
                .iter()
                .find(|x| x.id == *b)
                .and_then(|x| x.rack.clone())
        };
        for p in after.partitions.iter().filter(|p| p.topic == "one") {
            assert_eq!(p.replicas.len(), 3, "{p:?}");
            let racks: BTreeSet<_> = p.replicas.iter().map(rack).collect();
            assert_eq!(racks.len(), 3, "one replica per rack: {p:?}");
            assert_eq!(p.leader, Some(p.replicas[0]), "the leader stays first");
        }
        let other = after
            .partitions
            .iter()
            .find(|p| p.topic == "other")
            .expect("other");
        assert_eq!(other.replicas, vec![1]);
    }

    #[test]
    fn list_limits_default_clamp_and_refuse_negatives() {
        assert_eq!(list_limit("limit", None, 10, 100), Ok(10));
        assert_eq!(list_limit("limit", Some(0), 10, 100), Ok(10));
        assert_eq!(list_limit("limit", Some(1000), 10, 100), Ok(100));
        assert!(list_limit("limit", Some(-1), 10, 100).is_err());
    }

    #[test]
    fn transfer_time_is_bytes_over_the_throttle_and_the_busiest_broker_over_it_in_parallel() {
        let t = Transfer::estimate(
            &[(Some(1), 2, 600), (Some(1), 3, 400), (None, 3, 1000)],
            100.0,
        );
        assert_eq!(t.bytes, 2000);
        assert_eq!(t.estimated_seconds, Some(20.0));
        // Broker 3 takes 1400 bytes in; broker 1 sends 1000.
        assert_eq!(t.busiest_broker, Some(3));
        assert_eq!(t.estimated_seconds_parallel, Some(14.0));
        assert_eq!(Transfer::estimate(&[], 0.0).estimated_seconds, None);
    }
}
