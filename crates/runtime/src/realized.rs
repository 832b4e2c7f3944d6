//! Predicted vs realized: what an operation's moves were predicted to leave, and what the
//! readings after its completion showed (`docs/api/reassignments.md`, "Predicted vs realized").
//!
//! - [`predict`] (at queue time, by every door that queues an operation, in the operation's
//!   transaction): the operation's moves applied to the latest reading, every broker's seven
//!   loads before and after, computed as a proposal's `shares[].loads` / `loadsAfter` are
//!   (`ballast_balancer::whatif::add_replica_load` per replica; the first replica of a target
//!   leads, as the executor's preferred election after the moves makes it).
//! - [`reading`] (the observer, after a sample): every broker's loads at that reading.
//! - [`render`] (the API): predicted and observed per broker and per load, the farthest
//!   broker's distance from fair share on both sides and the error between them.
//!
//! Pure but for [`predict_from_store`] / [`reading_from_store`], which read the store.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use ballast_model::snapshot::Snapshot;
use ballast_model::{BrokerId, Load, LoadKind};
use ballast_schema::{
    LoadValues, LoadsReading, NewMove, ObservedView, OperationRecord, OperationState,
    PredictedBroker, Prediction, Realized, Store, StoreError,
};
use serde_json::{json, Map, Value};

use crate::format_rfc3339_ms;

/// Partitions of a view whose rates are not measured (no rate in the view).
fn without_rates(view: &ObservedView) -> u64 {
    view.partitions.iter().filter(|p| p.rates.is_none()).count() as u64
}

fn snapshot_of(store: &Store, view: &ObservedView) -> Result<Snapshot, StoreError> {
    let maintenance: BTreeSet<BrokerId> = store
        .maintenance()?
        .into_iter()
        .map(|m| m.broker_id)
        .collect();
    Ok(crate::topology::snapshot_with_maintenance(
        view,
        &[],
        &maintenance,
    ))
}

/// The prediction of `moves` on the latest reading in `store`; None before the first reading.
pub fn predict_from_store(
    store: &Store,
    moves: &[NewMove],
) -> Result<Option<Prediction>, StoreError> {
    let Some(view) = store.observed_view_for_planning()? else {
        return Ok(None);
    };
    let snapshot = snapshot_of(store, &view)?;
    let targets: Vec<(&str, i32, &[BrokerId])> = moves
        .iter()
        .map(|m| (m.topic.as_str(), m.partition, m.target.as_slice()))
        .collect();
    Ok(Some(predict(
        &snapshot,
        &targets,
        view.cluster.facts.sampled_at_ms,
        without_rates(&view),
    )))
}

/// Every broker's loads at the latest reading in `store` (the observer, after it wrote it);
/// None before the first reading.
pub fn reading_from_store(store: &Store) -> Result<Option<LoadsReading>, StoreError> {
    let Some(view) = store.observed_view_for_planning()? else {
        return Ok(None);
    };
    let snapshot = snapshot_of(store, &view)?;
    Ok(Some(reading(
        &snapshot,
        view.cluster.facts.sampled_at_ms,
        without_rates(&view),
    )))
}

/// The loads of `snapshot` with `targets` (topic, partition, replicas after; the first leads)
/// applied, beside its loads as they are.
pub fn predict(
    snapshot: &Snapshot,
    targets: &[(&str, i32, &[BrokerId])],
    reading_at_ms: i64,
    partitions_without_rates: u64,
) -> Prediction {
    let moved: HashMap<(&str, i32), &[BrokerId]> =
        targets.iter().map(|(t, p, r)| ((*t, *p), *r)).collect();
    let mut before: BTreeMap<BrokerId, LoadValues> =
        snapshot.brokers.iter().map(|b| (b.id, [0.0; 7])).collect();
    let mut after = before.clone();
    for p in &snapshot.partitions {
        for r in &p.replicas {
            let v = before.entry(*r).or_insert([0.0; 7]);
            ballast_balancer::whatif::add_replica_load(v, p, p.leader == Some(*r));
        }
        let (replicas, leader) = match moved.get(&(p.topic.as_str(), p.partition)) {
            Some(target) => (*target, target.first().copied()),
            None => (p.replicas.as_slice(), p.leader),
        };
        for r in replicas {
            let v = after.entry(*r).or_insert([0.0; 7]);
            ballast_balancer::whatif::add_replica_load(v, p, leader == Some(*r));
        }
    }
    let takes: BTreeSet<BrokerId> = snapshot
        .brokers
        .iter()
        .filter(|b| b.state.takes_load())
        .map(|b| b.id)
        .collect();
    Prediction {
        reading_at_ms,
        partitions: snapshot.partitions.len() as u64,
        partitions_without_rates,
        brokers: before
            .into_iter()
            .map(|(id, b)| PredictedBroker {
                broker_id: id,
                takes_load: takes.contains(&id),
                before: b,
                after: after.get(&id).copied().unwrap_or([0.0; 7]),
            })
            .collect(),
    }
}

/// Every broker's loads in `snapshot`.
pub fn reading(
    snapshot: &Snapshot,
    reading_at_ms: i64,
    partitions_without_rates: u64,
) -> LoadsReading {
    LoadsReading {
        reading_at_ms,
        partitions: snapshot.partitions.len() as u64,
        partitions_without_rates,
        brokers: ballast_balancer::whatif::broker_loads(snapshot)
            .into_iter()
            .collect(),
    }
}

fn is_rate(load: Load) -> bool {
    matches!(load.kind(), LoadKind::MessageRate | LoadKind::ByteRate)
}

fn round2(v: f64) -> f64 {
    (v * 100.0).round() / 100.0
}

/// Every broker's distance from fair share (percent), the fair share being the total over
/// `takes` divided by their number (as a proposal's `shares[].distance`); None for brokers
/// outside `takes`.
fn distances(
    values: &BTreeMap<BrokerId, f64>,
    takes: &BTreeSet<BrokerId>,
) -> BTreeMap<BrokerId, f64> {
    let total: f64 = takes.iter().filter_map(|b| values.get(b)).sum();
    let fair = if takes.is_empty() {
        0.0
    } else {
        total / takes.len() as f64
    };
    takes
        .iter()
        .map(|b| {
            let v = values.get(b).copied().unwrap_or(0.0);
            (*b, ballast_balancer::distance_pct(v, fair))
        })
        .collect()
}

/// The farthest broker's distance (largest absolute value), as a plan's `maxDistanceAfter`.
fn farthest(d: &BTreeMap<BrokerId, f64>) -> f64 {
    d.values().map(|v| v.abs()).fold(0.0, f64::max)
}

/// The comparison of one load.
#[derive(Debug, Clone, PartialEq)]
pub struct LoadComparison {
    pub load: Load,
    /// `pending`, `measured` or `unknown`.
    pub status: &'static str,
    pub reason: Option<String>,
    /// The farthest broker's distance from fair share before, as predicted, as observed.
    pub before: Option<f64>,
    pub predicted: Option<f64>,
    pub observed: Option<f64>,
    /// The largest difference, over brokers, between a broker's observed and predicted
    /// distance from fair share (percentage points).
    pub error: Option<f64>,
    /// Per broker: distance predicted and observed.
    pub predicted_by_broker: BTreeMap<BrokerId, f64>,
    pub observed_by_broker: BTreeMap<BrokerId, f64>,
}

/// How long after an operation completes its rates are read: `BALLAST_REALIZED_SETTLE` (leaders
/// moved, clients refreshing their metadata and catching up) and then a full
/// `BALLAST_RATE_WINDOW`, so the window the rates average holds none of the settling.
pub fn rates_after_ms(timing: &ballast_config::Timing) -> i64 {
    let ms = |d: std::time::Duration| i64::try_from(d.as_millis()).unwrap_or(i64::MAX);
    ms(timing.realized_settle).saturating_add(ms(timing.rate_window))
}

/// What the realized loads of an operation are, rates read `rates_after_ms` after completion
/// ([`rates_after_ms`]).
#[derive(Debug, Clone, PartialEq)]
pub struct Comparison {
    /// `pending`, `measured` or `unavailable`.
    pub status: &'static str,
    pub reason: Option<String>,
    pub rates_due_at_ms: Option<i64>,
    pub loads: Vec<LoadComparison>,
}

/// Compares what `realized` keeps of operation `op`.
pub fn compare(op: &OperationRecord, realized: &Realized, rates_after_ms: i64) -> Comparison {
    let p = &realized.prediction;
    let takes: BTreeSet<BrokerId> = p
        .brokers
        .iter()
        .filter(|b| b.takes_load)
        .map(|b| b.broker_id)
        .collect();
    let finished = op
        .finished_at_ms
        .filter(|_| op.state == OperationState::Completed);
    let rates_due_at_ms = finished.map(|f| f.saturating_add(rates_after_ms));
    let (status, reason) = match (op.state, &realized.counts, &realized.rates) {
        (OperationState::Pending | OperationState::Running, _, _) => (
            "pending",
            Some("the operation has not completed: loads are read after it completes".to_string()),
        ),
        (OperationState::Failed | OperationState::Cancelled, _, _) => (
            "unavailable",
            Some(format!(
                "the operation {}: not every move was made, so the prediction does not describe the cluster",
                if op.state == OperationState::Failed { "failed" } else { "was cancelled" }
            )),
        ),
        (OperationState::Completed, None, _) => (
            "pending",
            Some(format!(
                "waiting for the first reading after completion ({})",
                finished.map(format_rfc3339_ms).unwrap_or_default()
            )),
        ),
        (OperationState::Completed, Some(_), None) => (
            "pending",
            Some(rates_wait(rates_due_at_ms)),
        ),
        (OperationState::Completed, Some(_), Some(_)) => ("measured", None),
    };
    let completed = op.state == OperationState::Completed;
    let loads = Load::ALL
        .into_iter()
        .enumerate()
        .map(|(i, load)| {
            let rate = is_rate(load);
            let value_of = |values: &LoadValues| values[i];
            let before: BTreeMap<BrokerId, f64> =
                p.brokers.iter().map(|b| (b.broker_id, value_of(&b.before))).collect();
            let after: BTreeMap<BrokerId, f64> =
                p.brokers.iter().map(|b| (b.broker_id, value_of(&b.after))).collect();
            let predicted_unknown = rate && p.partitions_without_rates > 0;
            let predicted_by_broker = distances(&after, &takes);
            let before_d = distances(&before, &takes);
            let observed_reading = if rate { &realized.rates } else { &realized.counts };
            let mut cmp = LoadComparison {
                load,
                status: "pending",
                reason: None,
                before: (!predicted_unknown).then(|| round2(farthest(&before_d))),
                predicted: (!predicted_unknown).then(|| round2(farthest(&predicted_by_broker))),
                observed: None,
                error: None,
                predicted_by_broker: if predicted_unknown {
                    BTreeMap::new()
                } else {
                    predicted_by_broker.clone()
                },
                observed_by_broker: BTreeMap::new(),
            };
            match (completed, observed_reading) {
                (false, _) => {
                    cmp.reason = reason.clone();
                    if status == "unavailable" {
                        cmp.status = "unavailable";
                    }
                }
                (true, None) => {
                    cmp.reason = Some(if rate && realized.counts.is_some() {
                        rates_wait(rates_due_at_ms)
                    } else if rate {
                        format!(
                            "waiting for the first reading after completion, then {}",
                            rates_wait(rates_due_at_ms)
                        )
                    } else {
                        reason.clone().unwrap_or_default()
                    });
                }
                (true, Some(r)) => {
                    let observed: BTreeMap<BrokerId, f64> =
                        r.brokers.iter().map(|(b, v)| (*b, v[i])).collect();
                    let observed_d = distances(&observed, &takes);
                    let observed_unknown = rate && r.partitions_without_rates > 0;
                    if observed_unknown {
                        cmp.status = "unknown";
                        cmp.reason = Some(format!(
                            "{} of {} partitions had no measured rate at the reading of {}",
                            r.partitions_without_rates,
                            r.partitions,
                            format_rfc3339_ms(r.reading_at_ms)
                        ));
                    } else {
                        cmp.observed = Some(round2(farthest(&observed_d)));
                        cmp.observed_by_broker = observed_d.clone();
                        if predicted_unknown {
                            cmp.status = "unknown";
                            cmp.reason = Some(format!(
                                "nothing to compare with: {} of {} partitions had no measured rate at the reading it was predicted from ({})",
                                p.partitions_without_rates,
                                p.partitions,
                                format_rfc3339_ms(p.reading_at_ms)
                            ));
                        } else {
                            cmp.status = "measured";
                            cmp.error = Some(round2(
                                takes
                                    .iter()
                                    .map(|b| {
                                        let o = observed_d.get(b).copied().unwrap_or(0.0);
                                        let q = predicted_by_broker.get(b).copied().unwrap_or(0.0);
                                        (o - q).abs()
                                    })
                                    .fold(0.0, f64::max),
                            ));
                        }
                    }
                }
            }
            cmp
        })
        .collect();
    Comparison {
        status,
        reason,
        rates_due_at_ms,
        loads,
    }
}

fn rates_wait(due: Option<i64>) -> String {
    format!(
        "rates are read once the moves have settled (BALLAST_REALIZED_SETTLE) and a full rate window (BALLAST_RATE_WINDOW) has passed after that: at the first reading from {}",
        due.map(format_rfc3339_ms).unwrap_or_default()
    )
}

fn by_load(values: impl Fn(usize, Load) -> Value) -> Value {
    let mut m = Map::new();
    for (i, load) in Load::ALL.into_iter().enumerate() {
        m.insert(load.name().to_string(), values(i, load));
    }
    Value::Object(m)
}

/// `realized` of `GET /api/v1/reassignments/{id}` (shape: `docs/api/reassignments.md`).
pub fn render(op: &OperationRecord, realized: Option<&Realized>, rates_after_ms: i64) -> Value {
    let Some(realized) = realized else {
        return json!({
            "status": "unavailable",
            "reason": "no prediction was kept with this operation: one is made when an operation is queued, from the latest reading of the cluster (there was none, or the operation was queued before predictions were kept)",
            "predictedFrom": null,
            "countsObservedAt": null,
            "ratesObservedAt": null,
            "ratesDueAt": null,
            "loads": null,
            "brokers": [],
        });
    };
    let c = compare(op, realized, rates_after_ms);
    let p = &realized.prediction;
    let loads = by_load(|i, _| {
        let l = &c.loads[i];
        json!({
            "status": l.status,
            "reason": l.reason,
            "before": l.before,
            "predicted": l.predicted,
            "observed": l.observed,
            "errorPercent": l.error,
        })
    });
    let observed_of = |id: BrokerId, i: usize| -> Value {
        let reading = if is_rate(Load::ALL[i]) {
            &realized.rates
        } else {
            &realized.counts
        };
        let known = c.loads[i].observed.is_some();
        match reading {
            Some(r) if known => r
                .brokers
                .iter()
                .find(|(b, _)| *b == id)
                .map_or(json!(0.0), |(_, v)| json!(v[i])),
            _ => Value::Null,
        }
    };
    let brokers: Vec<Value> = p
        .brokers
        .iter()
        .map(|b| {
            let predicted_known = |i: usize| c.loads[i].predicted.is_some();
            json!({
                "brokerId": b.broker_id,
                "takesLoad": b.takes_load,
                "before": by_load(|i, _| if predicted_known(i) { json!(b.before[i]) } else { Value::Null }),
                "predicted": by_load(|i, _| if predicted_known(i) { json!(b.after[i]) } else { Value::Null }),
                "observed": by_load(|i, _| observed_of(b.broker_id, i)),
                "predictedDistance": by_load(|i, _| c.loads[i].predicted_by_broker.get(&b.broker_id).map(|d| json!(round2(*d))).unwrap_or(Value::Null)),
                "observedDistance": by_load(|i, _| c.loads[i].observed_by_broker.get(&b.broker_id).map(|d| json!(round2(*d))).unwrap_or(Value::Null)),
            })
        })
        .collect();
    json!({
        "status": c.status,
        "reason": c.reason,
        "predictedFrom": format_rfc3339_ms(p.reading_at_ms),
        "countsObservedAt": realized.counts.as_ref().map(|r| format_rfc3339_ms(r.reading_at_ms)),
        "ratesObservedAt": realized.rates.as_ref().map(|r| format_rfc3339_ms(r.reading_at_ms)),
        "ratesDueAt": c.rates_due_at_ms.map(format_rfc3339_ms),
        "loads": loads,
        "brokers": brokers,
    })
}

/// The measured error of every load of the last completed plan (`ballast_plan_realized_error_percent`):
/// loads still pending or unknown are left out (absent, not 0).
pub fn measured_errors(
    op: &OperationRecord,
    realized: &Realized,
    rates_after_ms: i64,
) -> Vec<(Load, f64)> {
    compare(op, realized, rates_after_ms)
        .loads
        .into_iter()
        .filter_map(|l| l.error.map(|e| (l.load, e)))
        .collect()
}

#[cfg(test)]
mod tests;
