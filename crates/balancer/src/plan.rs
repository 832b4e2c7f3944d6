//! From a snapshot to a plan: fair shares, which loads count and trigger, the search (or repairs
//! while a broker is down), and the decision whether the plan is worth recommending.

use std::collections::BTreeMap;
use std::ops::Range;
use std::sync::{PoisonError, RwLock};

use ballast_model::snapshot::{Snapshot, PLAN_FORMAT};
use ballast_model::{BrokerId, BrokerState, CostClass, Load};
use serde::ser::SerializeMap;
use serde::{Serialize, Serializer};

use crate::model::{effect, Action};
use crate::model::{Bx, Model, Why, DISK, MAX_RF};
use crate::policy::Policy;
use crate::proof::{prove, Proof};
use crate::prune::prune;
use crate::search::{objective, read, Job, Mode, Outcome, Pool, Search, Tally, AIM};
use crate::vocab::{RepairKey, Targets};
use crate::{is_no_traffic, load_index};

/// One partition's change, as the executor will carry it out.
#[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PlannedMove {
    pub topic: String,
    pub partition: i32,
    pub replicas_before: Vec<BrokerId>,
    pub replicas_after: Vec<BrokerId>,
    pub leader_before: Option<BrokerId>,
    pub leader_after: Option<BrokerId>,
    pub cost_class: CostClass,
    /// Bytes copied (0 for leader-only).
    pub bytes: u64,
    /// The goal the move serves, in words: `evens <load>` (a leadership change says so), or
    /// `exchange evens <load> ...` naming both halves of a replica exchange (both moves carry
    /// the same text), `repair ...` or `drain ...`.
    pub reason: String,
}

/// One load before and after the plan.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct LoadSummary {
    pub fair_share: f64,
    /// The load is balanced (has traffic and its imbalance is above the floor).
    pub counted: bool,
    /// Cluster average per broker below the `No traffic` threshold (a measured load only).
    pub no_traffic: bool,
    /// The load is still being measured: unknown, not counted, never `No traffic`
    /// (`stop` `measuring`). Null once measured.
    pub measuring: Option<crate::policy::Measuring>,
    /// Largest difference from fair share below `BALLAST_BALANCE_FLOOR`.
    pub below_floor: bool,
    /// Some broker was beyond twice the threshold: the load is evened.
    pub triggered: bool,
    pub max_distance_before: f64,
    pub max_distance_after: f64,
    /// Largest absolute difference from fair share, in the load's unit, before the plan.
    pub largest_difference: f64,
    pub busiest_broker: Option<BrokerId>,
    pub quietest_broker: Option<BrokerId>,
    /// Where the load ends and why it stops there, read from the plan's result alone (so a
    /// re-plan of the result says the same): `measuring`, `no_traffic`, `below_floor`, `within_threshold`,
    /// `limit` (a proven structural limit, or beyond the trigger with no move that helps) or
    /// `within_trigger` (beyond the threshold, not beyond the trigger: not evened again).
    pub stop: String,
    /// The same in words, with the numbers (the floor's, the farthest broker's, the proof's).
    pub stop_reason: String,
}

/// Why a broker stays away from its fair share, and what would help.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct StructuralLimit {
    pub broker_id: BrokerId,
    pub load: Load,
    pub distance: f64,
    pub cause: String,
    pub remediation: String,
    /// The constraint and the numbers that show no plan can bring the broker within the
    /// threshold; where no constraint proves it, the search's reading (said as such: what it
    /// tried for the broker and why each candidate was refused), with no `bound`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub proof: Option<String>,
    /// The closest to fair share (percent) any plan can bring the broker, per the proof.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bound: Option<f64>,
}

/// A broker beyond the trigger on a load before the plan (`benefitEvidence.tripped`).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Tripped {
    pub broker_id: BrokerId,
    pub load: Load,
    pub distance_before: f64,
    pub distance_after: f64,
    /// The plan brings it within the trigger, or halfway to the threshold, by at least a
    /// quarter of a partition.
    pub helped: bool,
}

/// Optimizer diagnostics (`movement.search`).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SearchStats {
    pub iterations: u64,
    pub candidates_evaluated: u64,
    pub steps_applied: u64,
    pub stopped_at_partition_cap: bool,
    /// Threads allowed to evaluate candidates (`BALLAST_BALANCE_WORKERS`, 0 resolved to the
    /// CPUs).
    pub workers: usize,
    /// The most parts one step's work was split into: a step's candidates are split only when
    /// every part gets enough of them, its broker pairs' exchanges one pair a part at least,
    /// a leadership step's sampled partitions one part per thread, a rack repair's destination
    /// brokers one range per thread. The parts are done by at most `workers` threads, and at
    /// most one per CPU.
    pub threads_used: usize,
    /// Steps (and rack repairs) whose work was split into more than one part.
    pub parallel_steps: u64,
}

/// Topic spread against the caps (`topicSpread`): a topic should hold at most
/// `ceil(partitions × rf / eligible brokers)` replicas and `ceil(partitions / eligible brokers)`
/// leaders on one broker. Counted over brokers that take load, before and after the plan.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TopicSpread {
    /// Topic/broker pairs holding more replicas of the topic than its cap.
    pub over_cap: u64,
    pub projected_over_cap: u64,
    /// Leaders beyond their topic's leader cap, summed over brokers.
    pub excess_leaders: u64,
    pub projected_excess_leaders: u64,
    /// Replicas beyond their topic's replica cap, summed over brokers.
    pub excess_replicas: u64,
    pub projected_excess_replicas: u64,
}

/// Rack awareness before and after the plan (`rackAwareness`): a partition violates it when
/// its replicas sit on fewer racks than `min(replication factor, racks)`. Repairing it is a
/// hard goal, planned before any balancing.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RackAwareness {
    /// Distinct racks among the brokers that take load; 0 when rack awareness is not assessed
    /// (no racks, or a broker that takes load has none).
    pub racks: usize,
    pub violations_before: u64,
    pub violations_after: u64,
    /// Partitions the plan moves onto enough racks.
    pub repaired: u64,
    /// Why the partitions still on too few racks stay there, one entry per cause.
    pub limits: Vec<RackLimit>,
}

/// Partitions left on too few racks for one reason.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RackLimit {
    pub partitions: u64,
    /// `recent moves`, `no move helps`, `proposal cap` or `balance held`.
    pub cause: String,
    /// The constraint and the numbers.
    pub proof: String,
    pub remediation: String,
}

/// Per-load summaries serialized as a map keyed by load name, in the contract's load order.
#[derive(Debug, Clone, PartialEq)]
pub struct Loads(pub Vec<(Load, LoadSummary)>);

impl Serialize for Loads {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut map = s.serialize_map(Some(self.0.len()))?;
        for (load, summary) in &self.0 {
            map.serialize_entry(load.name(), summary)?;
        }
        map.end()
    }
}

/// A `ballast.plan/v1` document.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Plan {
    pub format: &'static str,
    pub recommended: bool,
    /// Why the plan is not recommended, or that balancing is held, as a code: `balance_held`,
    /// `too_few_brokers`, `balanced`, `no_move_helps`, `not_beneficial`,
    /// `likely_not_beneficial`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// The same in words, with the numbers behind it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason_text: Option<String>,
    pub moves: Vec<PlannedMove>,
    pub loads: Loads,
    pub estimated_bytes: u64,
    pub structural_limits: Vec<StructuralLimit>,
    /// Brokers are down (not in maintenance): balancing is paused and only repairs are planned.
    pub balance_hold: bool,
    pub down_brokers: Vec<BrokerId>,
    pub tripped: Vec<Tripped>,
    /// Half the distance of the farthest broker, before and after (`metrics.effective`).
    pub effective_before: f64,
    pub effective_after: f64,
    /// Root-mean-square distance over counted loads and eligible brokers, before and after.
    pub evenness_before: f64,
    pub evenness_after: f64,
    pub topic_spread: TopicSpread,
    pub rack_awareness: RackAwareness,
    pub search: SearchStats,
    /// Filled in by the caller, who owns the clock.
    pub elapsed_ms: f64,
}

/// Plans moves for `snapshot` under `policy` at time `now_ms`. Pure and deterministic.
pub fn plan(snapshot: &Snapshot, policy: &Policy, now_ms: i64) -> Plan {
    plan_or_assess(snapshot, policy, now_ms, None)
}

/// A plan made earlier (`moves`), assessed on `snapshot`: the plan document of exactly those
/// moves, with every figure (fair shares, loads before and after, stops, benefit evidence,
/// bytes) read from this snapshot, as [`plan`] would report them had it chosen these moves. A
/// held proposal is re-checked with it, so its evidence is that of the newest reading, never of
/// the reading it was planned on. Moves naming a partition or broker the snapshot lacks are
/// left out (the placement changed: such a proposal is not held). Each move keeps its reason.
pub fn assess(snapshot: &Snapshot, policy: &Policy, now_ms: i64, moves: &[PlannedMove]) -> Plan {
    let mut out = plan_or_assess(snapshot, policy, now_ms, Some(moves));
    let reasons: std::collections::HashMap<(&str, i32), &str> = moves
        .iter()
        .map(|m| ((m.topic.as_str(), m.partition), m.reason.as_str()))
        .collect();
    for m in &mut out.moves {
        if let Some(r) = reasons.get(&(m.topic.as_str(), m.partition)) {
            m.reason = (*r).to_string();
        }
    }
    out
}

/// Carries out `moves` on the model as they were planned; returns how many were placed.
fn place_given(model: &mut Model, moves: &[PlannedMove]) -> u64 {
    let bx: std::collections::HashMap<BrokerId, Bx> = model
        .brokers
        .iter()
        .enumerate()
        .map(|(i, b)| (b.id, i as Bx))
        .collect();
    let topics: std::collections::HashMap<String, u32> = model
        .topics
        .iter()
        .enumerate()
        .map(|(i, t)| (t.clone(), i as u32))
        .collect();
    let parts: std::collections::HashMap<(u32, i32), u32> = model
        .parts
        .iter()
        .enumerate()
        .map(|(i, p)| ((p.topic, p.partition), i as u32))
        .collect();
    let mut placed = 0;
    for m in moves {
        let Some(pi) = topics
            .get(m.topic.as_str())
            .and_then(|t| parts.get(&(*t, m.partition)))
        else {
            continue;
        };
        let replicas: Option<Vec<Bx>> = m
            .replicas_after
            .iter()
            .map(|b| bx.get(b).copied())
            .collect();
        let Some(replicas) = replicas.filter(|r| !r.is_empty() && r.len() <= MAX_RF) else {
            continue;
        };
        let leader = m.leader_after.and_then(|l| bx.get(&l).copied());
        model.place(*pi, &replicas, leader, Why::Load(0));
        placed += 1;
    }
    placed
}

fn plan_or_assess(
    snapshot: &Snapshot,
    policy: &Policy,
    now_ms: i64,
    given: Option<&[PlannedMove]>,
) -> Plan {
    let mut model = Model::build(snapshot, now_ms, policy.cooldown_ms);
    let nb = model.nb();
    let eligible: Vec<bool> = model.brokers.iter().map(|b| b.eligible()).collect();
    let eligible_count = eligible.iter().filter(|e| **e).count();
    let down: Vec<BrokerId> = model
        .brokers
        .iter()
        .filter(|b| b.state == BrokerState::Down)
        .map(|b| b.id)
        .collect();

    let total = model.load_totals();
    let fair = fair_shares(total, eligible_count);
    let (mut targets, summaries) = classify(&model, total, &eligible, eligible_count, policy);
    let counted = targets.counted;
    let first_active = targets.active;
    let first = targets.clone();
    let before_loads = model.loads.clone();
    let (over_cap, excess_leaders, excess_replicas) =
        spread_counts(&model, &eligible, eligible_count);
    let violations_before = violations(&model);
    let evenness_before = evenness(&model, &first);
    let effective_before = effective(&model, &first);
    let typical_size = {
        let n = model
            .parts
            .iter()
            .map(|p| p.replicas.len())
            .sum::<usize>()
            .max(1);
        model
            .parts
            .iter()
            .map(|p| p.size * p.replicas.len() as f64)
            .sum::<f64>()
            / n as f64
    };
    let workers = if policy.workers == 0 {
        std::thread::available_parallelism().map_or(1, |n| n.get())
    } else {
        policy.workers
    };

    let balance_hold = !down.is_empty();
    let mut stuck: Vec<(Bx, usize, Tally)> = Vec::new();
    let mut stats = SearchStats {
        iterations: 0,
        candidates_evaluated: 0,
        steps_applied: 0,
        stopped_at_partition_cap: false,
        workers,
        threads_used: 1,
        parallel_steps: 0,
    };
    let mut drained = false;
    let mut repaired = 0u64;
    let mut rack_limits: Vec<RackLimit>;
    if let Some(given) = given {
        // An assessment: the given moves, no search. The loads that triggered are evened as
        // the plan that chose them evened them (`targets` as its last pass had them).
        stats.steps_applied = place_given(&mut model, given);
        repaired = violations_before.saturating_sub(violations(&model));
        rack_limits = Vec::new();
        let (mut now_targets, _) = classify(&model, total, &eligible, eligible_count, policy);
        let placement = PLACEMENT.iter().any(|&l| first_active[l]);
        for (l, &was) in first_active.iter().enumerate() {
            now_targets.active[l] |=
                (was || (placement && PLACEMENT.contains(&l))) && now_targets.counted[l];
            now_targets.kept[l] = now_targets.counted[l] && !was;
        }
        targets = now_targets;
        drained = given.iter().any(|m| {
            m.replicas_before.iter().any(|b| {
                snapshot
                    .brokers
                    .iter()
                    .any(|x| x.id == *b && x.state == BrokerState::Maintenance)
            })
        });
    } else if balance_hold {
        stats.steps_applied = evacuate(
            &mut model,
            BrokerState::Down,
            &eligible,
            eligible_count,
            policy.max_partitions,
        );
        // A partition the repairs move ends on enough racks; the others wait for balancing.
        let (n, left) = repair_racks(
            &mut model,
            &eligible,
            (policy, workers, &mut stats),
            (&targets, Scope::Moved),
        );
        stats.steps_applied += n;
        repaired = n;
        rack_limits = left;
    } else {
        // Brokers in maintenance are drained first: fair share assumes their load goes elsewhere.
        stats.steps_applied = evacuate(
            &mut model,
            BrokerState::Maintenance,
            &eligible,
            eligible_count,
            policy.max_partitions,
        );
        drained = stats.steps_applied > 0;
        // Rack awareness first: the repairs choose which copy leaves the doubled rack and where
        // it lands while the brokers still lie where the snapshot has them, so a repair copy
        // takes load off a broker that must give and onto one that must receive, and the
        // search evens what is left rather than balancing first and repairing after.
        let (drained_targets, _) = classify(&model, total, &eligible, eligible_count, policy);
        let (n, left) = repair_racks(
            &mut model,
            &eligible,
            (policy, workers, &mut stats),
            (&drained_targets, Scope::All),
        );
        repaired += n;
        rack_limits = left;
        stats.steps_applied += n;
        // Which loads count and trigger depends on the placement, so the search runs until a
        // pass on its own result changes nothing: re-planning the plan's result then proposes
        // nothing new.
        let mut ever_active = first_active;
        for _pass in 0..MAX_PASSES {
            let (mut pass_targets, _) = classify(&model, total, &eligible, eligible_count, policy);
            // A load that triggered is evened to within the threshold, even once a pass has
            // brought it inside the trigger.
            // The same holds for a load a repair pushed beyond the trigger in an earlier pass:
            // a re-plan of the result would find it triggered.
            for (l, was) in ever_active.iter_mut().enumerate() {
                *was |= pass_targets.active[l];
                pass_targets.active[l] |= *was && pass_targets.counted[l];
            }
            // Replicas carry disk, leaders and followers together: once one of the three
            // triggered, the plan moves replicas anyway and evens all three to the threshold.
            if PLACEMENT.iter().any(|&l| ever_active[l]) {
                for l in PLACEMENT {
                    pass_targets.active[l] |= pass_targets.counted[l];
                }
            }
            // A load within the trigger before the plan, and not pushed beyond it since by a
            // repair, is never pushed beyond it by balancing, even when evened with another.
            // (Read from where it has been, so a re-plan of the result, which finds it within
            // the trigger, keeps it too.)
            for (l, was) in ever_active.iter().enumerate() {
                pass_targets.kept[l] = pass_targets.counted[l] && !was;
            }
            targets = pass_targets;
            let (mut applied, mut capped) = (0, false);
            if targets.active.iter().any(|a| *a) {
                // Leadership first: preferred-leader changes inside the replica sets copy no data,
                // so replica moves follow only where leadership alone cannot reach balance.
                let mut result = None;
                for mode in [Mode::Leadership, Mode::Full] {
                    // What leadership brought within the threshold, replica moves keep there: a
                    // load evened for free is not paid for again with copies.
                    let mut mode_targets = targets.clone();
                    if mode == Mode::Full {
                        for l in 0..7 {
                            if mode_targets.active[l]
                                && max_distance(&model, &mode_targets, l) <= mode_targets.threshold
                            {
                                mode_targets.active[l] = false;
                            }
                        }
                    }
                    let r = Search {
                        model: &mut model,
                        targets: &mode_targets,
                        max_partitions: policy.max_partitions,
                        workers,
                        min_chunk: policy.parallel_min_chunk,
                        typical_size,
                        mode,
                    }
                    .run();
                    stats.iterations += r.iterations;
                    stats.candidates_evaluated += r.evaluated;
                    stats.steps_applied += r.applied;
                    stats.stopped_at_partition_cap |= r.capped;
                    stats.parallel_steps += r.parallel_steps;
                    stats.threads_used = stats.threads_used.max(r.threads_used);
                    applied += r.applied;
                    capped |= r.capped;
                    result = Some(r);
                }
                if let Some(result) = result {
                    stuck = result.stuck;
                }
            } else {
                stuck.clear();
            }
            // Rack awareness is a hard goal: the search moves a partition on too few racks only
            // onto more racks (where that also evens a load), and what it leaves is repaired
            // here; the next pass evens what the repairs changed. The search never moves a
            // partition the repair could not reach.
            let (n, left) = repair_racks(
                &mut model,
                &eligible,
                (policy, workers, &mut stats),
                (&targets, Scope::All),
            );
            repaired += n;
            rack_limits = left;
            stats.steps_applied += n;
            if (applied == 0 && n == 0) || capped {
                break;
            }
        }
        // Copies the targets do not need are taken back (the largest first) or handed to
        // smaller partitions. Only when no counted load is left beyond the trigger: the
        // take-back never pushes a load past the threshold (or farther than it is), so a
        // re-plan of the result still finds nothing to even; where a load is left beyond the
        // trigger, a re-plan searches again, and the plan must stay the search's fixed point.
        let settled = (0..7)
            .all(|l| !targets.counted[l] || max_distance(&model, &targets, l) <= targets.trigger);
        if settled {
            prune(&mut model, &targets, policy.max_partitions);
        }
    }

    let moves = moves(&model);
    let estimated_bytes = moves.iter().map(|m| m.bytes).sum();
    let mut structural_limits = limits(&model, &targets, &stuck, policy);
    let stops = stops(
        &model,
        total,
        (&eligible, eligible_count, balance_hold),
        policy,
    );
    name_every_limit(
        &model,
        &targets,
        &stuck,
        (&stops, &first_active, balance_hold),
        policy,
        &mut structural_limits,
    );
    let loads = Loads(
        summaries
            .into_iter()
            .zip(stops)
            .map(
                |((load, no_traffic, below_floor, largest, max_before), (stop, why))| {
                    let l = load_index(load);
                    let (busiest, quietest) = extremes(&before_loads, &eligible, l);
                    (
                        load,
                        LoadSummary {
                            fair_share: fair[l],
                            counted: counted[l],
                            no_traffic,
                            measuring: policy.measuring[l],
                            below_floor,
                            triggered: first_active[l],
                            max_distance_before: round2(max_before),
                            max_distance_after: round2(max_distance(&model, &targets, l)),
                            largest_difference: largest,
                            busiest_broker: busiest.map(|b| model.brokers[b].id),
                            quietest_broker: quietest.map(|b| model.brokers[b].id),
                            stop: stop.to_string(),
                            stop_reason: why,
                        },
                    )
                },
            )
            .collect(),
    );

    // Benefit evidence: every broker beyond the trigger before the plan.
    let quarter = quarter_partition(&model);
    let mut tripped = Vec::new();
    for b in 0..nb {
        if !eligible[b] {
            continue;
        }
        for load in Load::ALL {
            let l = load_index(load);
            if !first_active[l] {
                continue;
            }
            let d0 = targets.dev(l, before_loads[b][l]);
            if d0.abs() <= targets.trigger {
                continue;
            }
            let d1 = targets.dev(l, model.loads[b][l]);
            let moved = model.loads[b][l] - before_loads[b][l];
            tripped.push(Tripped {
                broker_id: model.brokers[b].id,
                load,
                distance_before: round2(d0),
                distance_after: round2(d1),
                helped: helps(d0, d1, moved, quarter[l], &targets),
            });
        }
    }
    let (projected_over_cap, projected_excess_leaders, projected_excess_replicas) =
        spread_counts(&model, &eligible, eligible_count);
    let topic_spread = TopicSpread {
        over_cap,
        projected_over_cap,
        excess_leaders,
        projected_excess_leaders,
        excess_replicas,
        projected_excess_replicas,
    };
    let violations_after = violations(&model);
    let explained: u64 = rack_limits.iter().map(|l| l.partitions).sum();
    let held = violations_after.saturating_sub(explained);
    if balance_hold && held > 0 {
        rack_limits.push(RackLimit {
            partitions: held,
            cause: "balance held".to_string(),
            proof: format!(
                "{} on too few racks: while a broker is down only replicas lost with it are restored",
                partitions(held)
            ),
            remediation: "the first proposal once the down brokers are back or in maintenance repairs them".to_string(),
        });
    }
    let rack_awareness = RackAwareness {
        racks: model.racks,
        violations_before,
        violations_after,
        repaired,
        limits: rack_limits,
    };
    let evenness_after = evenness(&model, &first);
    let effective_after = effective(&model, &first);

    let (recommended, reason) = if balance_hold {
        let text = format!(
            "broker{} {} down and not in maintenance: balancing is paused and only repairs are planned",
            if down.len() == 1 { "" } else { "s" },
            join(&down)
        );
        (!moves.is_empty(), Some((BALANCE_HELD, text)))
    } else if eligible_count < 2 {
        (
            false,
            Some((
                "too_few_brokers",
                "fewer than two brokers can take load".to_string(),
            )),
        )
    } else if !first_active.iter().any(|a| *a) && !drained && repaired == 0 {
        (
            false,
            Some((
                "balanced",
                format!(
                    "no counted load has a broker beyond {}% of its fair share",
                    targets.trigger
                ),
            )),
        )
    } else if moves.is_empty() && !drained {
        (
            false,
            Some((
                "no_move_helps",
                "no move helps: see structural limits".to_string(),
            )),
        )
    } else if repaired > 0 {
        // Repairing rack awareness is worth a proposal on its own.
        (true, None)
    } else {
        match not_beneficial(&tripped, evenness_before, evenness_after) {
            Some(why) => (false, Some(why)),
            None => (true, None),
        }
    };
    let (reason, reason_text) = match reason {
        Some((code, text)) => (Some(code.to_string()), Some(text)),
        None => (None, None),
    };

    Plan {
        format: PLAN_FORMAT,
        recommended,
        reason,
        reason_text,
        moves,
        loads,
        estimated_bytes,
        structural_limits,
        balance_hold,
        down_brokers: down,
        tripped,
        effective_before: round2(effective_before),
        effective_after: round2(effective_after),
        evenness_before: round2(evenness_before),
        evenness_after: round2(evenness_after),
        topic_spread,
        rack_awareness,
        search: stats,
        elapsed_ms: 0.0,
    }
}

/// The loads a replica's placement decides: leader count, follower count, disk.
const PLACEMENT: [usize; 3] = [0, 1, DISK];

/// Passes of the search at most; each pass either changes nothing or lowers the objective.
const MAX_PASSES: usize = 8;

/// The plan's `reason` while a broker is down and not in maintenance.
pub const BALANCE_HELD: &str = "balance_held";

/// The benefit test for one broker beyond the trigger (`before`, `after`: its distance from fair
/// share in percent; `moved`: how much of the load it gave or took): the plan brings it within
/// the trigger (10%) or halfway from where it was to the threshold (5%), and moves it by at least
/// `quarter`, a quarter of the average partition's share of the load.
fn helps(before: f64, after: f64, moved: f64, quarter: f64, t: &Targets) -> bool {
    let within = after.abs() <= t.trigger || after.abs() <= (before.abs() + t.threshold) / 2.0;
    within && moved.abs() >= quarter
}

/// The likely-not-beneficial threshold: the evenness improves by at least 2 percentage points,
/// or by at least 10% of where it was while clearing 0.5 points.
fn clears_likely_not_beneficial(before: f64, after: f64) -> bool {
    let improvement = before - after;
    let relative = if before > 0.0 {
        improvement / before
    } else {
        0.0
    };
    improvement >= 2.0 || (relative >= 0.10 && improvement >= 0.5)
}

/// Why a balancing plan is not recommended (code and words), or `None` when it is: some broker
/// beyond the trigger is helped (see [`helps`]), the cluster is more even overall (root-mean-square
/// distance), and the improvement clears the likely-not-beneficial threshold.
fn not_beneficial(
    tripped: &[Tripped],
    evenness_before: f64,
    evenness_after: f64,
) -> Option<(&'static str, String)> {
    let improvement = evenness_before - evenness_after;
    if !tripped.iter().any(|t| t.helped) {
        Some(("not_beneficial", "no broker beyond the trigger is brought within it or halfway to the threshold by at least a quarter of a partition".to_string()))
    } else if evenness_after >= evenness_before {
        Some((
            "not_beneficial",
            "the cluster would not be more even overall".to_string(),
        ))
    } else if !clears_likely_not_beneficial(evenness_before, evenness_after) {
        Some((
            "likely_not_beneficial",
            format!(
                "evenness improves by {improvement:.2} points ({:.1}%), below 2 points, or 10% while clearing 0.5 points",
                improvement / evenness_before * 100.0
            ),
        ))
    } else {
        None
    }
}

type LoadFacts = (Load, bool, bool, f64, f64);

/// Fair share of each load: its total (over every broker, drained ones included) over the
/// brokers that take load.
fn fair_shares(total: [f64; 7], eligible_count: usize) -> [f64; 7] {
    total.map(|sum| {
        if eligible_count == 0 {
            0.0
        } else {
            sum / eligible_count as f64
        }
    })
}

/// Which loads count (traffic, floor) and which trigger, on the current placement.
fn classify(
    model: &Model,
    total: [f64; 7],
    eligible: &[bool],
    eligible_count: usize,
    policy: &Policy,
) -> (Targets, Vec<LoadFacts>) {
    let nb = model.nb();
    let fair = fair_shares(total, eligible_count);
    let mut targets = Targets {
        fair,
        total,
        counted: [false; 7],
        active: [false; 7],
        floor: [None; 7],
        kept: [false; 7],
        threshold: policy.threshold_pct,
        trigger: policy.trigger_pct(),
        eligible: eligible.to_vec(),
        eligible_count,
    };
    let mut facts = Vec::with_capacity(7);
    for load in Load::ALL {
        let l = load_index(load);
        // A load still being measured is unknown: neither `No traffic` nor counted.
        let measuring = policy.measuring[l].is_some();
        let no_traffic = !measuring && eligible_count > 0 && is_no_traffic(load, fair[l]);
        let largest = (0..nb)
            .filter(|&b| eligible[b])
            .map(|b| (model.loads[b][l] - fair[l]).abs())
            .fold(0.0, f64::max);
        let floor = match l {
            4 | 6 => policy.floor_bytes_per_sec,
            DISK => policy.floor_disk_bytes,
            _ => 0.0,
        };
        let below_floor = !measuring && floor > 0.0 && largest < floor;
        targets.counted[l] =
            !measuring && eligible_count > 1 && !no_traffic && !below_floor && fair[l] > 0.0;
        if below_floor && !no_traffic {
            targets.floor[l] = Some(floor);
        }
        let max_before = max_distance(model, &targets, l);
        targets.active[l] = targets.counted[l] && max_before > targets.trigger;
        facts.push((load, no_traffic, below_floor, largest, max_before));
    }
    (targets, facts)
}

/// Topic/broker pairs over the replica cap, leaders beyond the leader cap and replicas beyond
/// the replica cap, on eligible brokers.
fn spread_counts(model: &Model, eligible: &[bool], eligible_count: usize) -> (u64, u64, u64) {
    let nb = model.nb();
    let (mut over, mut excess, mut replicas) = (0u64, 0u64, 0u64);
    for t in 0..model.topics.len() {
        let (rcap, lcap) = (
            model.replica_cap(t, eligible_count),
            model.leader_cap(t, eligible_count),
        );
        for b in (0..nb).filter(|&b| eligible[b]) {
            over += u64::from(model.topic_replicas[t * nb + b] > rcap);
            excess += u64::from(model.topic_leaders[t * nb + b].saturating_sub(lcap));
            replicas += u64::from(model.topic_replicas[t * nb + b].saturating_sub(rcap));
        }
    }
    (over, excess, replicas)
}

/// Partitions whose replicas sit on too few racks ([`Model::too_few_racks`]).
fn violations(model: &Model) -> u64 {
    model
        .parts
        .iter()
        .filter(|p| model.too_few_racks(p.replicas.as_slice()))
        .count() as u64
}

fn partitions(n: u64) -> String {
    format!("{n} partition{}", if n == 1 { "" } else { "s" })
}

/// Repairs every partition on too few racks that may move: a copy in a doubled rack goes to a
/// broker of a rack the partition lacks ([`repair_copy`] chooses which copy and where), until
/// the partition spans `min(replication factor, racks)`. The largest partitions first (ties in
/// index order); the proposal cap counts them with the partitions the drain changed. Each
/// repair reads the loads the previous one left, so the repairs run one after another; a
/// repair's candidate copies are scored in ranges of destination brokers on `workers` threads
/// ([`Pool::repair`]) and the best of the ranges taken by [`RepairKey::before`], a total order:
/// the copy one thread would choose. A repair split counts in `stats` as a parallel step.
/// Returns how many it repaired and, per cause, those it could not.
fn repair_racks(
    model: &mut Model,
    eligible: &[bool],
    (policy, workers, stats): (&Policy, usize, &mut SearchStats),
    (t, scope_of_repairs): (&Targets, Scope),
) -> (u64, Vec<RackLimit>) {
    if model.racks == 0 {
        return (0, Vec::new());
    }
    let mut changed = model.parts.iter().filter(|p| p.changed()).count();
    let (mut repaired, mut cooling, mut offline, mut capped) = (0u64, 0u64, 0u64, 0u64);
    // The largest first: they take the most off the brokers that must give, and the smaller
    // ones after them even out what is left.
    let mut order: Vec<u32> = (0..model.parts.len() as u32)
        .filter(|&pi| model.too_few_racks(model.parts[pi as usize].replicas.as_slice()))
        .collect();
    order.sort_by(|&a, &b| {
        model.parts[b as usize]
            .size
            .total_cmp(&model.parts[a as usize].size)
            .then(a.cmp(&b))
    });
    let nb = model.nb();
    let lock = RwLock::new(model);
    let work = |job: &Job, i: usize| {
        Outcome::of_repair(
            job.repair_of()
                .and_then(|pi| repair_copy(&read(&lock), t, pi, eligible, job.range(i))),
        )
    };
    // Not asked with one worker, nor when nothing is to be repaired: no thread is started.
    let cpus = if workers > 1 && !order.is_empty() {
        std::thread::available_parallelism().map_or(1, |n| n.get())
    } else {
        1
    };
    std::thread::scope(|scope| {
        let pool = Pool::start(scope, workers, cpus, 1, &work);
        for pi in order {
            let mut model = lock.write().unwrap_or_else(PoisonError::into_inner);
            let p = &model.parts[pi as usize];
            if !model.too_few_racks(p.replicas.as_slice())
                || (scope_of_repairs == Scope::Moved && !p.changed())
            {
                continue;
            }
            if p.leader.is_none() || p.replicas.len() > MAX_RF {
                offline += 1;
                continue;
            }
            if p.frozen {
                cooling += 1;
                continue;
            }
            let was_changed = p.changed();
            if !was_changed && policy.max_partitions.is_some_and(|c| changed >= c) {
                capped += 1;
                continue;
            }
            let mut moved = false;
            while model.too_few_racks(model.parts[pi as usize].replicas.as_slice()) {
                // The threads read the model: this one lets go of it while they score.
                drop(model);
                let (best, chunks) = pool.repair(pi, nb, work);
                if chunks > 1 {
                    stats.parallel_steps += 1;
                    stats.threads_used = stats.threads_used.max(chunks);
                }
                model = lock.write().unwrap_or_else(PoisonError::into_inner);
                let best = best
                    .into_iter()
                    .flatten()
                    .reduce(|a, b| if b.before(&a) { b } else { a });
                let Some(RepairKey {
                    pair: (from, to, lead),
                    ..
                }) = best
                else {
                    break;
                };
                model.parts[pi as usize].why.get_or_insert(Why::RackRepair);
                model.apply_replica_move(pi, from, to);
                if model.parts[pi as usize].leader != Some(lead) {
                    model.apply_leader_swap(pi, lead);
                }
                moved = true;
            }
            if moved {
                repaired += 1;
                if !was_changed {
                    changed += 1;
                }
            }
        }
    });
    let cooldown_min = policy.cooldown_ms / 60_000;
    let mut out = Vec::new();
    if cooling > 0 {
        out.push(RackLimit {
            partitions: cooling,
            cause: "recent moves".to_string(),
            proof: format!(
                "{} on too few racks moved within the last {cooldown_min} minutes and are not moved again until the cooldown ends",
                partitions(cooling)
            ),
            remediation: "a proposal after the cooldown repairs them".to_string(),
        });
    }
    if offline > 0 {
        out.push(RackLimit {
            partitions: offline,
            cause: "no move helps".to_string(),
            proof: format!(
                "{} on too few racks have no leader or more than {MAX_RF} replicas: the planner cannot move them",
                partitions(offline)
            ),
            remediation: "bringing their replicas back online lets a proposal repair them".to_string(),
        });
    }
    if capped > 0 {
        out.push(RackLimit {
            partitions: capped,
            cause: "proposal cap".to_string(),
            proof: format!(
                "{} on too few racks are beyond BALLAST_PROPOSAL_MAX_PARTITIONS ({})",
                partitions(capped),
                policy.max_partitions.unwrap_or(0)
            ),
            remediation: "the next proposal repairs them".to_string(),
        });
    }
    (repaired, out)
}

/// The copy that repairs (or brings closer to repair) partition `pi`: one of the copies in a
/// doubled rack leaves for an eligible broker of a rack the partition lacks. Among those pairs,
/// in order: one that adds nothing to its topic's replicas and leaders beyond their caps; one
/// that pushes the fewest loads beyond the trigger (or farther beyond it, except a load only
/// leaders carry that is beyond it already: leadership changes even those at no copy); the one
/// that lowers the search's objective on disk the most, so the repair takes bytes off a broker
/// that must give and onto one that must receive (disk is what copies pay for: counts are
/// evened afterwards by leadership changes and small partitions, and weighing them here sent
/// repairs to brokers that needed no bytes: 8-broker `random` seed 1 copied 4.02 GB instead of
/// 3.46); a follower rather than the leader; leadership where Kafka puts it (the first replica
/// of the new list) rather than elsewhere; the lowest broker indexes.
///
/// When the copy is the leader's, leadership may go to the first replica of the new list or to
/// another in-sync replica (made the preferred one), whichever pushes fewer loads beyond the
/// trigger: otherwise a leader's copy that takes bytes off a broker that must give was passed
/// over whenever the broker it lands on could not also take the partition's traffic (8-broker
/// `random` seeds 5 and 6 copied 3.89 and 3.18 GB for bounds of 3.15 and 2.75). Looks only at
/// destinations in `tos` (a range of broker indexes: the repairs split them over threads).
/// Returns the best copy's key: its source, destination and the partition's leader after it
/// are its `pair`.
fn repair_copy(
    model: &Model,
    t: &Targets,
    pi: u32,
    eligible: &[bool],
    tos: Range<usize>,
) -> Option<RepairKey> {
    let p = &model.parts[pi as usize];
    let rack = |b: Bx| model.brokers[b as usize].rack;
    let band = AIM * t.threshold / 100.0;
    let (lv, fv) = (p.leader_vec(), p.follower_vec());
    let mut best: Option<RepairKey> = None;
    for &from in p.replicas.iter() {
        if p.replicas
            .iter()
            .filter(|&&x| rack(x) == rack(from))
            .count()
            < 2
        {
            continue;
        }
        for to in tos.start as Bx..tos.end as Bx {
            if !eligible[to as usize]
                || p.holds(to)
                || p.replicas.iter().any(|&r| rack(r) == rack(to))
            {
                continue;
            }
            let base = effect(model, Action::Replica { pi, from, to });
            // Where leadership goes when the copy is the leader's: the first replica of the new
            // list (Kafka's preferred leader), or another in-sync replica the plan makes
            // preferred, whichever pushes fewer loads beyond the trigger.
            let natural = if p.leader != Some(from) {
                p.leader
            } else if p.replicas.first() == Some(&from) {
                Some(to)
            } else {
                p.replicas.first().copied()
            };
            let Some(natural) = natural else { continue };
            let mut natural_clean = false;
            // On the stack: this runs for every pair of every partition repaired.
            let mut leads = [natural; MAX_RF + 1];
            let mut n = 1;
            if p.leader == Some(from) {
                for &r in p.replicas.iter() {
                    if r != from && r != natural && p.isr.contains(&r) && eligible[r as usize] {
                        leads[n] = r;
                        n += 1;
                    }
                }
                if natural != to {
                    leads[n] = to;
                    n += 1;
                }
            }
            for &lead in &leads[..n] {
                // Another leader can only win on the caps or on harm (the same disk, a later
                // tie-break): once Kafka's own choice is within the caps and harms nothing, the
                // others are not looked at.
                if natural_clean {
                    break;
                }
                let moved;
                let e = if lead == natural {
                    &base
                } else {
                    let mut x = base;
                    x.add(natural, lv, -1.0);
                    x.add(natural, fv, 1.0);
                    x.add(lead, fv, -1.0);
                    x.add(lead, lv, 1.0);
                    moved = x;
                    &moved
                };
                let (mut harm, mut disk) = (0u32, 0.0);
                for &(x, ref dv) in &e.items[..e.len] {
                    if !t.eligible[x as usize] {
                        continue;
                    }
                    for (l, &dl) in dv.iter().enumerate() {
                        if dl == 0.0 || !(t.counted[l] || t.floor[l].is_some()) {
                            continue;
                        }
                        let v = model.loads[x as usize][l];
                        let (d0, d1) = (t.dev(l, v), t.dev(l, v + dl));
                        // A load only leaders carry (leader count, the rates) that is beyond
                        // the trigger already is evened by leadership changes afterwards, which
                        // copy nothing: pushing it farther is no harm. (Counting it sent
                        // repairs away from the leader's copy, and so away from the broker
                        // that must give.)
                        let evened_anyway = LEADERSHIP_ONLY[l] && d0.abs() > t.trigger;
                        if d1.abs() > t.trigger && d1.abs() > d0.abs() && !evened_anyway {
                            harm += 1;
                        }
                        if l == DISK && t.counted[l] {
                            disk += objective(d1 / 100.0, band) - objective(d0 / 100.0, band);
                        }
                    }
                }
                let key = RepairKey {
                    over: spread_growth(model, t, pi, from, to, lead) > 0,
                    harm,
                    disk,
                    leader: p.leader == Some(from),
                    moved_lead: lead != natural,
                    pair: (from, to, lead),
                };
                natural_clean = lead == natural && !key.over && key.harm == 0;
                if best.as_ref().is_none_or(|b| key.before(b)) {
                    best = Some(key);
                }
            }
        }
    }
    best
}

/// The loads only a partition's leader carries (leader count and the four rates): a leadership
/// change moves all of them, and no copy needs to.
const LEADERSHIP_ONLY: [bool; 7] = [true, false, false, true, true, true, true];

/// How much copying `pi`'s replica from `from` to `to` adds to its topic's replicas and leaders
/// beyond their caps, summed over eligible brokers (the search's topic spread check): negative
/// when it lowers them. A copy leaving a broker over the cap for one at the cap adds nothing.
fn spread_growth(model: &Model, t: &Targets, pi: u32, from: Bx, to: Bx, lead: Bx) -> i64 {
    let p = &model.parts[pi as usize];
    let topic = p.topic as usize;
    let nb = model.nb();
    let (rcap, lcap) = (
        model.replica_cap(topic, t.eligible_count),
        model.leader_cap(topic, t.eligible_count),
    );
    let over = |counts: &[u32], b: Bx, d: i64, cap: u32| {
        if !t.eligible[b as usize] {
            return 0;
        }
        let c = i64::from(counts[topic * nb + b as usize]);
        let cap = i64::from(cap);
        (c + d - cap).max(0) - (c - cap).max(0)
    };
    let mut growth =
        over(&model.topic_replicas, from, -1, rcap) + over(&model.topic_replicas, to, 1, rcap);
    if let Some(old) = p.leader.filter(|&l| l != lead) {
        growth +=
            over(&model.topic_leaders, old, -1, lcap) + over(&model.topic_leaders, lead, 1, lcap);
    }
    growth
}

/// Which partitions on too few racks [`repair_racks`] repairs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Scope {
    /// Every one that may move.
    All,
    /// Only those the plan moves already (the repairs of down brokers under balance hold).
    Moved,
}

/// A load's `stop` and `stopReason`.
type Stop = (&'static str, String);

/// Where each load ends and why it stops there, in [`Load::ALL`] order, read from the model's
/// placement alone: a re-plan of the result finds the same placement and says the same.
fn stops(
    model: &Model,
    total: [f64; 7],
    (eligible, eligible_count, held): (&[bool], usize, bool),
    policy: &Policy,
) -> Vec<Stop> {
    let (t, facts) = classify(model, total, eligible, eligible_count, policy);
    let fair = t.fair;
    facts
        .iter()
        .map(|&(load, no_traffic, below_floor, largest, max)| {
            let l = load_index(load);
            let unit = |v: f64| match l {
                0 | 1 => format!("{v:.0}"),
                DISK => format!("{:.2} GiB", v / (1u64 << 30) as f64),
                3 | 5 => format!("{v:.1} msg/s"),
                _ => format!("{:.2} MB/s", v / 1e6),
            };
            if let Some(m) = policy.measuring[l] {
                return ("measuring", measuring_reason(&m));
            }
            if no_traffic {
                return (
                    "no_traffic",
                    format!(
                        "the cluster average per broker, {}, is below the No traffic threshold: not balanced",
                        unit(fair[l])
                    ),
                );
            }
            if below_floor {
                let floor = t.floor[l].unwrap_or(0.0);
                return (
                    "below_floor",
                    format!(
                        "the largest difference from fair share, {}, is below the floor of {} (BALLAST_BALANCE_FLOOR): left alone, and never pushed beyond {}%",
                        unit(largest),
                        unit(floor),
                        t.trigger
                    ),
                );
            }
            let far = (0..model.nb())
                .filter(|&b| eligible[b])
                .map(|b| (b, t.dev(l, model.loads[b][l])))
                .fold(None, |best: Option<(usize, f64)>, (b, d)| match best {
                    Some((_, bd)) if bd.abs() >= d.abs() => best,
                    _ => Some((b, d)),
                });
            let Some((b, d)) = far else {
                return ("within_threshold", "no broker takes load".to_string());
            };
            let id = model.brokers[b].id;
            if max <= t.threshold {
                return (
                    "within_threshold",
                    format!(
                        "the farthest broker, {id}, ends {d:+.2}% from fair share {}: within the threshold of {}%",
                        unit(fair[l]),
                        t.threshold
                    ),
                );
            }
            if let Some(Proof { cause, proof, bound, .. }) =
                prove(model, &t, b as Bx, l, policy.cooldown_ms / 60_000)
            {
                return (
                    "limit",
                    format!("broker {id} ends {d:+.2}% from fair share, held by {cause} (no plan brings it closer than {bound:+.2}%): {proof}"),
                );
            }
            if max <= t.trigger {
                return (
                    "within_trigger",
                    format!(
                        "the farthest broker, {id}, ends {d:+.2}% from fair share {}: beyond the threshold of {}% but within the trigger of {}%, so the load is not evened again",
                        unit(fair[l]),
                        t.threshold,
                        t.trigger
                    ),
                );
            }
            if held {
                return (
                    "limit",
                    format!(
                        "the farthest broker, {id}, ends {d:+.2}% from fair share {}, beyond the trigger of {}%: balancing is paused while a broker is down and not in maintenance (structuralLimits names it)",
                        unit(fair[l]),
                        t.trigger
                    ),
                );
            }
            (
                "limit",
                format!(
                    "the farthest broker, {id}, ends {d:+.2}% from fair share {}, beyond the trigger of {}%: no move brings it closer without breaking another rule (structuralLimits names it)",
                    unit(fair[l]),
                    t.trigger
                ),
            )
        })
        .collect()
}

/// Why a load still being measured is not balanced, with its readings so far and needed.
pub fn measuring_reason(m: &crate::policy::Measuring) -> String {
    format!(
        "still being measured: {} of {} readings so far (about {} s more); unknown until then, so not balanced",
        m.readings,
        m.needed,
        (m.remaining_ms.max(0) + 999) / 1000
    )
}

fn round2(x: f64) -> f64 {
    (x * 100.0).round() / 100.0
}

fn join(ids: &[BrokerId]) -> String {
    ids.iter()
        .map(|b| b.to_string())
        .collect::<Vec<_>>()
        .join(", ")
}

fn max_distance(model: &Model, t: &Targets, l: usize) -> f64 {
    (0..model.nb())
        .filter(|&b| t.eligible[b])
        .map(|b| t.dev(l, model.loads[b][l]).abs())
        .fold(0.0, f64::max)
}

/// Half the distance of the farthest broker over counted loads.
fn effective(model: &Model, t: &Targets) -> f64 {
    (0..7)
        .filter(|&l| t.counted[l])
        .map(|l| max_distance(model, t, l))
        .fold(0.0, f64::max)
        / 2.0
}

/// Root-mean-square distance (percent) over counted loads and eligible brokers.
fn evenness(model: &Model, t: &Targets) -> f64 {
    let mut sum = 0.0;
    let mut n = 0usize;
    for l in (0..7).filter(|&l| t.counted[l]) {
        for b in (0..model.nb()).filter(|&b| t.eligible[b]) {
            let d = t.dev(l, model.loads[b][l]);
            sum += d * d;
            n += 1;
        }
    }
    if n == 0 {
        0.0
    } else {
        (sum / n as f64).sqrt()
    }
}

fn extremes(loads: &[[f64; 7]], eligible: &[bool], l: usize) -> (Option<usize>, Option<usize>) {
    let mut busiest: Option<usize> = None;
    let mut quietest: Option<usize> = None;
    for b in (0..loads.len()).filter(|&b| eligible[b]) {
        if busiest.is_none_or(|x| loads[b][l] > loads[x][l]) {
            busiest = Some(b);
        }
        if quietest.is_none_or(|x| loads[b][l] < loads[x][l]) {
            quietest = Some(b);
        }
    }
    (busiest, quietest)
}

/// A quarter of the average partition's contribution to each load.
fn quarter_partition(model: &Model) -> [f64; 7] {
    let mut sums = [0.0; 7];
    let mut leaders = 0usize;
    let mut replicas = 0usize;
    for p in &model.parts {
        replicas += p.replicas.len();
        if p.leader.is_some() {
            leaders += 1;
            for (i, r) in p.rates.iter().enumerate() {
                sums[3 + i] += r;
            }
        }
        sums[DISK] += p.size * p.replicas.len() as f64;
    }
    let avg = |sum: f64, n: usize| if n == 0 { 0.0 } else { sum / n as f64 };
    [
        0.25,
        0.25,
        0.25 * avg(sums[DISK], replicas),
        0.25 * avg(sums[3], leaders),
        0.25 * avg(sums[4], leaders),
        0.25 * avg(sums[5], leaders),
        0.25 * avg(sums[6], leaders),
    ]
}

/// Moves every replica off brokers in `state` (down: repairs; maintenance: the drain) to
/// brokers that can take them: partitions at or under min ISR first, same rack first, never
/// reducing a partition's rack spread, the emptiest disk first. Cooldown blocks a drain but not
/// a repair: restoring redundancy is not churn.
fn evacuate(
    model: &mut Model,
    state: BrokerState,
    eligible: &[bool],
    eligible_count: usize,
    cap: Option<usize>,
) -> u64 {
    let mut applied = 0;
    let mut touched = 0usize;
    let nb = model.nb();
    let mut order: Vec<u32> = (0..model.parts.len() as u32).collect();
    order.sort_by_key(|&pi| {
        let p = &model.parts[pi as usize];
        let live = p
            .isr
            .iter()
            .filter(|&&r| model.brokers[r as usize].state != state)
            .count() as i64;
        (live - i64::from(p.min_isr), pi)
    });
    for pi in order {
        let p = &model.parts[pi as usize];
        if p.leader.is_none() {
            continue;
        }
        let lost: Vec<Bx> = p
            .replicas
            .iter()
            .copied()
            .filter(|&r| model.brokers[r as usize].state == state)
            .collect();
        // A drain waits for the cooldown; a repair of a down broker does not.
        if lost.is_empty() || (p.frozen && state != BrokerState::Down) {
            continue;
        }
        if cap.is_some_and(|c| touched >= c) {
            break;
        }
        touched += 1;
        for from in lost {
            let p = &model.parts[pi as usize];
            let topic = p.topic as usize;
            let rcap = model.replica_cap(topic, eligible_count);
            let from_rack = model.brokers[from as usize].rack;
            let best = (0..nb as Bx)
                .filter(|&d| eligible[d as usize] && !p.holds(d))
                .filter(|&d| model.keeps_rack_spread(pi, from, d))
                .min_by(|&a, &b| {
                    // A destination that leaves the partition on too few racks is the last
                    // choice: a repair or drain never ends in rack violation where it can help.
                    let too_few = |d: Bx| {
                        let mut moved = p.replicas;
                        if let Some(at) = moved.position(from) {
                            moved.set(at, d);
                        }
                        model.too_few_racks(moved.as_slice())
                    };
                    let key = |d: Bx| {
                        (
                            too_few(d),
                            model.brokers[d as usize].rack != from_rack,
                            model.topic_replicas[topic * nb + d as usize] >= rcap,
                        )
                    };
                    key(a)
                        .cmp(&key(b))
                        .then(
                            model.loads[a as usize][DISK].total_cmp(&model.loads[b as usize][DISK]),
                        )
                        .then(a.cmp(&b))
                });
            if let Some(to) = best {
                let why = if state == BrokerState::Down {
                    Why::Repair
                } else {
                    Why::Drain
                };
                model.parts[pi as usize].why.get_or_insert(why);
                model.apply_replica_move(pi, from, to);
                applied += 1;
            }
        }
    }
    applied
}

/// The net change of every partition that moved, in topic and partition order.
fn moves(model: &Model) -> Vec<PlannedMove> {
    let id = |b: Bx| model.brokers[b as usize].id;
    let mut out = Vec::new();
    for (pi, p) in model.parts.iter().enumerate().filter(|(_, p)| p.changed()) {
        let (added, removed) = (p.added(), p.removed());
        let cost_class = if added.is_empty() {
            CostClass::LeaderOnly
        } else {
            let removed_racks: Vec<Option<u32>> = removed
                .iter()
                .map(|&r| model.brokers[r as usize].rack)
                .collect();
            let cross = added.iter().any(|&a| {
                let rack = model.brokers[a as usize].rack;
                rack.is_some() && !removed_racks.contains(&rack)
            });
            if cross {
                CostClass::CrossRack
            } else {
                CostClass::InterBroker
            }
        };
        out.push(PlannedMove {
            topic: model.topics[p.topic as usize].clone(),
            partition: p.partition,
            replicas_before: p.original_replicas.iter().map(|&b| id(b)).collect(),
            replicas_after: p.replicas.iter().map(|&b| id(b)).collect(),
            leader_before: p.original_leader.map(id),
            leader_after: p.leader.map(id),
            cost_class,
            bytes: (p.size as u64).saturating_mul(added.len() as u64),
            reason: reason(model, pi as u32, cost_class == CostClass::LeaderOnly),
        });
    }
    out
}

/// A move's `reason`: the goal it serves. Both halves of an exchange get the same words.
fn reason(model: &Model, pi: u32, leader_only: bool) -> String {
    let id = |b: Bx| model.brokers[b as usize].id;
    let name = |pi: u32| {
        let p = &model.parts[pi as usize];
        format!("{}/{}", model.topics[p.topic as usize], p.partition)
    };
    match model.parts[pi as usize].why {
        Some(Why::Leadership(l) | Why::Load(l)) if leader_only => format!(
            "evens {} by a leadership change (no data copied)",
            Load::ALL[l as usize].name()
        ),
        Some(Why::Leadership(l) | Why::Load(l)) => {
            format!("evens {}", Load::ALL[l as usize].name())
        }
        Some(Why::Exchange {
            load,
            with,
            from,
            to,
        }) => {
            // The lower partition first, so both halves read the same.
            let (first, second, x, y) = if pi < with {
                (pi, with, from, to)
            } else {
                (with, pi, to, from)
            };
            format!(
                "exchange evens {} between brokers {} and {}: {} {}->{} with {} {}->{}",
                Load::ALL[load as usize].name(),
                id(x).min(id(y)),
                id(x).max(id(y)),
                name(first),
                id(x),
                id(y),
                name(second),
                id(y),
                id(x)
            )
        }
        Some(Why::Repair) => "repair: restores a replica lost with a down broker".to_string(),
        Some(Why::Drain) => "drain: moves a replica off a broker in maintenance".to_string(),
        Some(Why::RackRepair) => {
            let p = &model.parts[pi as usize];
            format!(
                "rack repair: moves the surplus copy out of a doubled rack (on {} of {} racks before, {} after)",
                model.rack_spread(p.original_replicas.as_slice()),
                p.replicas.len().min(model.racks),
                model.rack_spread(p.replicas.as_slice())
            )
        }
        None => "evens the cluster".to_string(),
    }
}

/// Every load that stops short of the threshold is named in `structuralLimits`: a load whose
/// `stop` is `limit`, and a load that triggered and was evened but ends beyond the threshold.
/// A limit [`limits`] found (proven, or the search's reading of a rate) names it already;
/// otherwise its farthest broker is named with the search's reading as the proof: what the
/// search tried for that broker and why each candidate was refused, said as the search's
/// reading (no `bound`: it is not a proof over every plan).
fn name_every_limit(
    model: &Model,
    t: &Targets,
    stuck: &[(Bx, usize, Tally)],
    (stops, triggered, held): (&[Stop], &[bool; 7], bool),
    policy: &Policy,
    out: &mut Vec<StructuralLimit>,
) {
    let mut added = false;
    for (l, (stop, _)) in stops.iter().enumerate() {
        let load = Load::ALL[l];
        let short = *stop == "limit" || (triggered[l] && *stop == "within_trigger");
        if !short || out.iter().any(|x| x.load == load) {
            continue;
        }
        let far = (0..model.nb())
            .filter(|&b| t.eligible[b])
            .map(|b| (b, t.dev(l, model.loads[b][l])))
            .fold(None, |best: Option<(usize, f64)>, (b, d)| match best {
                Some((_, bd)) if bd.abs() >= d.abs() => best,
                _ => Some((b, d)),
            });
        let Some((b, d)) = far else { continue };
        let broker = model.brokers[b].id;
        let tally = stuck
            .iter()
            .find(|(x, y, _)| *x as usize == b && *y == l)
            .map(|(_, _, tally)| *tally);
        let cooldown_min = policy.cooldown_ms / 60_000;
        added = true;
        if let Some(p) = prove(model, t, b as Bx, l, cooldown_min) {
            out.push(StructuralLimit {
                broker_id: broker,
                load,
                distance: round2(d),
                cause: p.cause.to_string(),
                remediation: p.remediation,
                proof: Some(p.proof),
                bound: Some(round2(p.bound)),
            });
            continue;
        }
        if held {
            out.push(StructuralLimit {
                broker_id: broker,
                load,
                distance: round2(d),
                cause: "balance held".to_string(),
                remediation: "the first proposal once the down brokers are back or in maintenance evens it".to_string(),
                proof: Some(format!(
                    "broker {broker} ends {d:+.2}% from fair share of {}: balancing is paused while a broker is down and not in maintenance, and only repairs are planned",
                    load.name()
                )),
                bound: None,
            });
            continue;
        }
        let (cause, remediation) = match tally {
            Some(tally) => reading_cause(&tally, l, broker, load, cooldown_min),
            None => no_move_helps(broker, load),
        };
        let reading = reading(broker, d, load, tally.as_ref(), cooldown_min);
        out.push(StructuralLimit {
            broker_id: broker,
            load,
            distance: round2(d),
            cause: cause.to_string(),
            remediation,
            proof: Some(reading),
            bound: None,
        });
    }
    if added {
        out.sort_by_key(|a| (a.broker_id, a.load));
    }
}

/// The search's reading of why broker `broker` stops `d` percent from fair share of `load`:
/// what it tried for the broker last and why each candidate was refused (a structural
/// limit's `proof` where no constraint proves one).
fn reading(
    broker: BrokerId,
    d: f64,
    load: Load,
    tally: Option<&Tally>,
    cooldown_min: i64,
) -> String {
    match tally {
        Some(x) => format!(
            "the search's reading, not a proof over every plan: broker {broker} ends {d:+.2}% from fair share of {}; its last step for the broker scored {} candidate moves and none brought it closer without breaking another rule (refusals counted in that step: {} pushed another load beyond the threshold, the trigger or its floor, {} overshot fair share or left the cluster less even, {} lost rack spread, {} went over a topic's spread cap, {} moved a partition moved within the last {cooldown_min} minutes)",
            load.name(),
            x.evaluated,
            x.conflict,
            x.overshoot,
            x.rack,
            x.spread,
            x.cooldown
        ),
        None => format!(
            "the search's reading, not a proof over every plan: broker {broker} ends {d:+.2}% from fair share of {}, and no move the search tried brought it closer without breaking another rule",
            load.name()
        ),
    }
}

/// A limit's cause and remediation from the search's tally of why candidates were refused:
/// the blocker that refused the most names it; cooldown first on a tie because it is the one
/// that goes away by itself.
fn reading_cause(
    tally: &Tally,
    l: usize,
    broker: BrokerId,
    load: Load,
    cooldown_min: i64,
) -> (&'static str, String) {
    let blockers = [
        (tally.cooldown, "recent moves"),
        (tally.rack, "rack layout"),
        (
            tally.conflict,
            if l >= 3 {
                "messages vs bytes"
            } else {
                "another load"
            },
        ),
        (tally.overshoot, "large partition"),
        (tally.spread, "topic spread"),
    ];
    let top = blockers
        .iter()
        .fold((0u32, "no move helps"), |best, &(n, c)| {
            if n > best.0 {
                (n, c)
            } else {
                best
            }
        });
    match top.1 {
        "recent moves" => (
            "recent moves",
            format!("the partitions that would help broker {broker} were moved within the last {cooldown_min} minutes; a proposal after the cooldown can move them"),
        ),
        "rack layout" => (
            "rack layout",
            format!("the partitions that could leave broker {broker} would lose rack diversity; adding brokers to the under-used racks would help"),
        ),
        "messages vs bytes" => (
            "messages vs bytes",
            format!("moves that even {load} on broker {broker} unbalance another rate, because message sizes differ between topics; raising BALLAST_BALANCE_FLOOR for bytes or accepting the difference would help"),
        ),
        "large partition" => (
            "large partition",
            format!("every partition broker {broker} could give or take overshoots fair share of {load}; more partitions for the largest topics (smaller partitions) would help"),
        ),
        "topic spread" => (
            "no move helps",
            format!("the topics on broker {broker} would exceed their spread limit on every other broker; more brokers or more partitions per topic would help"),
        ),
        _ => no_move_helps(broker, load),
    }
}

fn no_move_helps(broker: BrokerId, load: Load) -> (&'static str, String) {
    (
        "no move helps",
        format!("no single partition move brings broker {broker} closer to fair share of {load} without unbalancing another load; adding capacity would help"),
    )
}

fn limits(
    model: &Model,
    t: &Targets,
    stuck: &[(Bx, usize, Tally)],
    policy: &Policy,
) -> Vec<StructuralLimit> {
    let mut out = Vec::new();
    let mut seen = BTreeMap::new();
    for (b, l, tally) in stuck {
        if seen.insert((*b, *l), ()).is_some() {
            continue;
        }
        let load = Load::ALL[*l];
        let broker = model.brokers[*b as usize].id;
        let distance = round2(t.dev(*l, model.loads[*b as usize][*l]));
        let cooldown_min = policy.cooldown_ms / 60_000;
        if let Some(p) = prove(model, t, *b, *l, cooldown_min) {
            out.push(StructuralLimit {
                broker_id: broker,
                load,
                distance,
                cause: p.cause.to_string(),
                remediation: p.remediation,
                proof: Some(p.proof),
                bound: Some(round2(p.bound)),
            });
            continue;
        }
        // Placement loads are reported only when proven; a rate may be held by the trade-off
        // between rates (the search's reading of why its candidates were refused).
        if *l <= DISK {
            continue;
        }
        let (cause, remediation) = reading_cause(tally, *l, broker, load, cooldown_min);
        out.push(StructuralLimit {
            broker_id: broker,
            load,
            distance,
            cause: cause.to_string(),
            remediation,
            proof: Some(reading(broker, distance, load, Some(tally), cooldown_min)),
            bound: None,
        });
    }
    out.sort_by_key(|a| (a.broker_id, a.load));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn targets() -> Targets {
        Targets {
            fair: [1.0; 7],
            total: [1.0; 7],
            counted: [true; 7],
            active: [true; 7],
            floor: [None; 7],
            kept: [false; 7],
            threshold: 5.0,
            trigger: 10.0,
            eligible: vec![true],
            eligible_count: 1,
        }
    }

    fn tripped(helped: bool) -> Tripped {
        Tripped {
            broker_id: 1,
            load: Load::DiskBytes,
            distance_before: 40.0,
            distance_after: 4.0,
            helped,
        }
    }

    #[test]
    fn a_plan_helps_a_broker_it_brings_within_10_percent() {
        let t = targets();
        assert!(helps(12.0, 9.9, 1.0, 0.25, &t));
        assert!(helps(-12.0, -10.0, 1.0, 0.25, &t));
        // 10.1% is neither within the trigger nor halfway from 12% to 5% (8.5%).
        assert!(!helps(12.0, 10.1, 1.0, 0.25, &t));
    }

    #[test]
    fn a_plan_helps_a_broker_it_brings_halfway_to_5_percent() {
        let t = targets();
        // From 40%: halfway to 5% is 22.5%.
        assert!(helps(40.0, 22.5, 1.0, 0.25, &t));
        assert!(helps(-40.0, -22.5, 1.0, 0.25, &t));
        assert!(!helps(40.0, 22.6, 1.0, 0.25, &t));
    }

    #[test]
    fn a_plan_that_moves_a_broker_by_less_than_a_quarter_of_a_partition_does_not_help_it() {
        let t = targets();
        assert!(!helps(12.0, 4.0, 0.24, 0.25, &t));
        assert!(helps(12.0, 4.0, 0.25, 0.25, &t));
        assert!(helps(12.0, 4.0, -0.3, 0.25, &t), "giving load counts too");
    }

    #[test]
    fn a_plan_that_helps_no_broker_beyond_the_trigger_is_not_recommended() {
        let why = not_beneficial(&[tripped(false), tripped(false)], 20.0, 5.0);
        assert_eq!(why.map(|w| w.0), Some("not_beneficial"));
        assert_eq!(
            not_beneficial(&[tripped(false), tripped(true)], 20.0, 5.0),
            None
        );
    }

    #[test]
    fn a_plan_that_does_not_leave_the_cluster_more_even_overall_is_not_recommended() {
        for after in [10.0, 10.5] {
            let why = not_beneficial(&[tripped(true)], 10.0, after);
            assert!(
                why.as_ref()
                    .is_some_and(|w| w.0 == "not_beneficial" && w.1.contains("more even")),
                "{why:?}"
            );
        }
    }

    #[test]
    fn the_likely_not_beneficial_threshold_is_2_points_absolute_or_10_percent_relative_while_clearing_half_a_point(
    ) {
        // 2 points absolute, whatever the relative improvement (6.7% here).
        assert!(clears_likely_not_beneficial(30.0, 28.0));
        assert!(!clears_likely_not_beneficial(30.0, 28.01));
        // 10% relative while clearing 0.5 points.
        assert!(clears_likely_not_beneficial(5.0, 4.5));
        assert!(!clears_likely_not_beneficial(5.0, 4.51));
        assert!(!clears_likely_not_beneficial(10.0, 9.05), "9.5% relative");
        assert!(
            !clears_likely_not_beneficial(3.0, 2.6),
            "13% but only 0.4 points"
        );
        let why = not_beneficial(&[tripped(true)], 30.0, 28.5);
        assert_eq!(why.map(|w| w.0), Some("likely_not_beneficial"));
        assert_eq!(not_beneficial(&[tripped(true)], 30.0, 27.0), None);
    }

    /// Brokers 1, 2 on rack r1 and 3, 4 on r2. 240 partitions of 1 MB with one replica per
    /// rack, placed by `fillers` in turn (the first replica leads), each with 10 msg/s and 10 kB/s
    /// in and out; then `parts` as (replicas, GB, msg/s). Returns the model and the targets
    /// `plan` would read from it.
    fn two_racks(fillers: &[&[i32]], parts: &[(&[i32], u64, f64)]) -> (Model, Targets) {
        use ballast_model::snapshot::SnapshotBroker;
        let with_rates = |mut p: ballast_model::snapshot::SnapshotPartition, msg: f64| {
            p.producer_msg_rate = msg;
            p.producer_byte_rate = msg * 1000.0;
            p.consumer_msg_rate = msg;
            p.consumer_byte_rate = msg * 1000.0;
            p
        };
        let mut partitions = Vec::new();
        for i in 0..240 {
            let replicas = fillers[i as usize % fillers.len()];
            let p = crate::fixtures::partition("filler", i, replicas, 1_000_000);
            partitions.push(with_rates(p, 10.0));
        }
        for (i, (replicas, gb, msg)) in parts.iter().enumerate() {
            let p = crate::fixtures::partition(&format!("big{i}"), 0, replicas, gb * 1_000_000_000);
            partitions.push(with_rates(p, *msg));
        }
        let snapshot = Snapshot {
            format: ballast_model::snapshot::SNAPSHOT_FORMAT.to_string(),
            taken_at: "2026-11-21T10:00:00Z".into(),
            cluster_id: None,
            brokers: (1..=4)
                .map(|id| SnapshotBroker {
                    id,
                    rack: Some(if id <= 2 { "r1" } else { "r2" }.to_string()),
                    state: BrokerState::Alive,
                })
                .collect(),
            partitions,
        };
        let model = Model::build(&snapshot, 0, 0);
        let eligible = vec![true; 4];
        let total = model.load_totals();
        let (t, _) = classify(&model, total, &eligible, 4, &Policy::default());
        (model, t)
    }

    /// The partition of topic `name` (each `big` topic has one).
    fn part_of(model: &Model, name: &str) -> u32 {
        (0..model.parts.len() as u32)
            .find(|&pi| model.topics[model.parts[pi as usize].topic as usize] == name)
            .expect("the partition")
    }

    /// Disk: broker 1 holds 216 GB, 2 and 4 200, 3 184 (fair 200). `x` (10 GB, `big0`) sits on
    /// brokers 1 and 2, both in r1, led by 1: one copy goes to r2. From broker 1 to broker 3 it
    /// evens disk on both (206 and 194); from broker 2 it leaves broker 1 at +8%, for the search
    /// to copy more off it.
    const DISK_PARTS: [(&[i32], u64); 6] = [
        (&[1, 2], 10),
        (&[3, 1], 100),
        (&[4, 1], 106),
        (&[2, 3], 84),
        (&[2, 4], 94),
        (&[2], 12),
    ];

    #[test]
    fn a_rack_repair_moves_the_leaders_copy_off_the_broker_that_must_give_when_only_leadership_loads_already_beyond_the_trigger_get_farther(
    ) {
        // Broker 1 leads none of the fillers (1 leader of a fair 61.5 and the least traffic)
        // and broker 3 leads 80: the leader's copy from 1 to 3 takes a leader off 1 and gives
        // one to 3, both beyond the trigger already on leader count and the rates, which
        // leadership changes even at no copy. That is no reason to copy from broker 2 instead.
        let fillers: [&[i32]; 6] = [&[3, 1], &[4, 1], &[2, 3], &[3, 2], &[2, 4], &[4, 2]];
        let parts: Vec<(&[i32], u64, f64)> =
            DISK_PARTS.iter().map(|&(r, gb)| (r, gb, 0.0)).collect();
        let (model, t) = two_racks(&fillers, &parts);
        assert!(t.counted[0] && t.counted[DISK]);
        let x = part_of(&model, "big0");
        assert_eq!(model.parts[x as usize].leader, Some(0));
        let (from, to, _) = repair_copy(&model, &t, x, &t.eligible, 0..model.nb())
            .expect("a repair")
            .pair;
        assert_eq!((from, to), (0, 2), "broker 1's copy goes to broker 3");
    }

    #[test]
    fn a_repaired_leaders_copy_hands_leadership_to_the_replica_it_pushes_no_load_beyond_the_trigger(
    ) {
        // Fillers led by broker 1 four times in twelve, 3 and 4 three times, 2 twice: 3 and 4
        // at fair share of the rates, 2 a third below. `x` carries 150 msg/s, as much as 15
        // fillers: where the copy from broker 1 to 3 makes 3 the leader (the first replica of
        // the new list), 3 goes from -6% to +18% on the message rates, beyond the trigger, and
        // the copy from broker 2 (which copies off a broker that need not give) would be chosen
        // instead. Handing leadership to broker 2 (-37% to -14%) pushes nothing beyond it.
        let fillers: [&[i32]; 12] = [
            &[1, 3],
            &[1, 4],
            &[1, 3],
            &[1, 4],
            &[3, 1],
            &[3, 2],
            &[3, 2],
            &[4, 1],
            &[4, 2],
            &[4, 2],
            &[2, 3],
            &[2, 4],
        ];
        let mut parts: Vec<(&[i32], u64, f64)> =
            DISK_PARTS.iter().map(|&(r, gb)| (r, gb, 0.0)).collect();
        parts[0].2 = 150.0;
        let (model, t) = two_racks(&fillers, &parts);
        assert!(t.counted[3] && t.counted[DISK]);
        let x = part_of(&model, "big0");
        let (from, to, lead) = repair_copy(&model, &t, x, &t.eligible, 0..model.nb())
            .expect("a repair")
            .pair;
        assert_eq!((from, to, lead), (0, 2, 1), "1 -> 3, broker 2 leads");
    }

    /// Three brokers without racks (the shape of a counterexample the property test found):
    /// `t1`, ten partitions on all three brokers, led 3, 4 and 3 times, so followers are 7, 6
    /// and 7 of a fair 20/3: broker 2 is exactly 10% below, within the trigger. `t0`, one
    /// replica each, ten on broker 1 and four on broker 2: leader count (13, 8, 3) and disk
    /// trigger.
    fn followers_at_the_trigger() -> Snapshot {
        let mut partitions = Vec::new();
        for (i, replicas) in [[1, 2, 3]; 3]
            .iter()
            .chain(&[[2, 3, 1]; 4])
            .chain(&[[3, 1, 2]; 3])
            .enumerate()
        {
            partitions.push(crate::fixtures::partition("t1", i as i32, replicas, GB));
        }
        for (i, broker) in [1; 10].iter().chain(&[2; 4]).enumerate() {
            partitions.push(crate::fixtures::partition("t0", i as i32, &[*broker], GB));
        }
        crate::fixtures::cluster(3, partitions)
    }

    const GB: u64 = 1_000_000_000;

    #[test]
    fn a_count_exactly_at_the_trigger_is_within_it() {
        let snapshot = followers_at_the_trigger();
        let model = Model::build(&snapshot, 0, 0);
        let total = model.load_totals();
        let (t, _) = classify(&model, total, &[true; 3], 3, &Policy::default());
        assert_eq!((t.total[1], t.fair[1]), (20.0, 20.0 / 3.0));
        assert_eq!(t.dev(1, 6.0), -10.0, "6 followers of 20 over 3 brokers");
        assert!(
            t.counted[1] && !t.active[1],
            "follower count does not trigger"
        );
        assert!(t.active[0] && t.active[DISK]);
    }
}
