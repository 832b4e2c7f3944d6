//! The observer: how ballast knows the cluster.
//!
//! Each tick (every `BALLAST_SAMPLE_INTERVAL`, or sooner when a sample is requested through the
//! database: [`pacing::sample_loop`]) it reads the cluster ([`sample::take`]), folds the
//! sample into its rate history ([`derive::History::observe`]: counters, rolling rates, per-broker
//! loads), writes the current view and the readings in one transaction
//! ([`ballast_schema::Store::write_observed`]) and records the broker view's freshness
//! (`observations`, which `/api/v1/ready` follows). It plans the sample while the store writes
//! it ([`tick_planned`]), then [`proposals::finish`] makes the reading, the decision and the
//! current proposal; a sample that could not be planned while written is planned from the view
//! read back ([`proposals::evaluate`]). The whole tick: `README.md`.

pub mod derive;
pub mod pacing;
pub mod proposals;
pub mod realized;
pub mod sample;
pub mod settings_pass;

use std::sync::Arc;

use ballast_kafka::Client;
use ballast_runtime::{client_config, error_chain, WorkerContext, WorkerError};
use ballast_schema::{Observation, Store, StoreError};
use serde_json::json;
use tokio::sync::Mutex;
use tracing::warn;

pub use ballast_runtime::topology::policy;

pub const NAME: &str = "observer";

/// What the observer keeps between ticks: the cluster connection and the rate history (rebuilt
/// from the store after a restart or a failed write).
#[derive(Default)]
pub struct Observer {
    client: Option<Client>,
    history: Option<derive::History>,
    /// Successful samples since start: ACLs and quotas are read on every `SECURITY_EVERY`th.
    samples: u64,
    /// When this process started (its clock): the proposal warm-up runs from here.
    started_at_ms: i64,
}

pub async fn run(ctx: WorkerContext) -> Result<(), WorkerError> {
    let pacing = pacing::Pacing::from_timing(&ctx.config.timing);
    let state: Arc<Mutex<Observer>> = Arc::new(Mutex::new(Observer {
        started_at_ms: ctx.now_ms(),
        ..Observer::default()
    }));
    let shutdown = ctx.shutdown.clone();
    pacing::sample_loop(&ctx.store, pacing, shutdown.requested(), || {
        let ctx = ctx.clone();
        let state = state.clone();
        async move {
            match observe(&ctx, &state).await {
                Ok(detail) => ctx.set_status(detail),
                Err(err) => warn!(error = %error_chain(&err), "tick failed"),
            }
        }
    })
    .await;
    Ok(())
}

/// The windows the derivation follows, from the service's settings.
pub fn windows(timing: &ballast_config::Timing) -> derive::Windows {
    derive::Windows {
        rate_window_ms: i64::try_from(timing.rate_window.as_millis()).unwrap_or(i64::MAX),
        retention_ms: i64::try_from(timing.readings_retention.as_millis()).unwrap_or(i64::MAX),
        partition_reading_ms: i64::try_from(timing.partition_readings_interval.as_millis())
            .unwrap_or(i64::MAX),
    }
}

/// Resident and peak resident memory of this process in bytes (Linux; zeros elsewhere).
/// What the sample learnt of eligible leader replicas (KIP-966), for the view: `reported`
/// (the brokers answer DescribeTopicPartitions), `error`, and the partitions whose ELR or last
/// known ELR is not empty (`[topic, partition, elr, lastKnownElr]`); null where not offered.
fn elr_detail(elr: Option<&Result<Vec<ballast_kafka::PartitionElr>, String>>) -> serde_json::Value {
    match elr {
        None => serde_json::Value::Null,
        Some(Err(e)) => json!({"reported": false, "error": e}),
        Some(Ok(list)) => {
            let rows: Vec<serde_json::Value> = list
                .iter()
                .filter(|p| {
                    p.eligible_leader_replicas
                        .as_ref()
                        .is_some_and(|l| !l.is_empty())
                        || p.last_known_elr.as_ref().is_some_and(|l| !l.is_empty())
                })
                .map(|p| {
                    json!([
                        p.topic,
                        p.partition,
                        p.eligible_leader_replicas.clone().unwrap_or_default(),
                        p.last_known_elr.clone().unwrap_or_default()
                    ])
                })
                .collect();
            json!({"reported": true, "partitions": rows})
        }
    }
}

pub fn memory() -> (u64, u64) {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let field = |name: &str| -> u64 {
        status
            .lines()
            .find(|l| l.starts_with(name))
            .and_then(|l| l.split_whitespace().nth(1))
            .and_then(|v| v.parse::<u64>().ok())
            .unwrap_or(0)
            * 1024
    };
    (field("VmRSS:"), field("VmHWM:"))
}

/// What one tick did. The sample itself is dropped inside the tick (before the settings pass
/// and the proposal evaluation): only what the caller reports of it is kept.
#[derive(Debug, Clone)]
pub struct TickReport {
    pub summary: sample::Summary,
    pub sample_ms: u64,
    pub derive_ms: u64,
    pub write_ms: u64,
    pub stats: ballast_schema::WriteStats,
    /// The process's peak resident memory (VmHWM) at the end of each phase (`sample`,
    /// `derive`, `write`), for the benchmark.
    pub peaks: Vec<(&'static str, u64)>,
    /// The plan of the sample just written, made while it was written ([`tick_planned`]);
    /// None when not asked for or when it could not be made (then
    /// [`proposals::evaluate`] plans the view read back).
    pub planned: Option<proposals::Planned>,
    /// How long planning took on its own thread, alongside the write.
    pub plan_ms: u64,
}

/// One full tick against an open store: read the cluster, derive, write the view and readings.
/// The history is loaded from the store when `state` has none. Used by the worker and the
/// benchmark.
pub async fn tick(
    client: &Client,
    store: &Store,
    state: &mut Option<derive::History>,
    windows: derive::Windows,
    now_ms: i64,
) -> Result<TickReport, TickError> {
    tick_planned(client, store, state, windows, now_ms, None).await
}

/// [`tick`], planning the sample while it is written: the view a write leaves is known before
/// it commits (its topics and partitions, and its brokers merged into the stored ones:
/// `ObservedWrite::brokers_after`), so [`proposals::plan_parts`] plans it (and builds a new
/// proposal's detail) on a thread of its own while the store writes, and the worker only
/// records the reading, decision and proposal afterwards ([`proposals::finish`]). The plan is
/// the one [`proposals::evaluate`] would make of the view read back.
pub async fn tick_planned(
    client: &Client,
    store: &Store,
    state: &mut Option<derive::History>,
    windows: derive::Windows,
    now_ms: i64,
    plan: Option<proposals::Settings>,
) -> Result<TickReport, TickError> {
    if state.is_none() {
        // Before sampling, so the reload's temporary rows are freed before the sample grows.
        let store = store.clone();
        let loaded = tokio::task::spawn_blocking(move || {
            let mut history = derive::History::from_store(
                store.partition_totals()?,
                store.group_offsets()?,
                store.partition_counters()?,
            );
            history.set_last_partition_reading(store.latest_partition_reading_ms()?);
            Ok::<_, StoreError>(history)
        })
        .await
        .map_err(|e| TickError::Task(e.to_string()))?
        .map_err(TickError::Store)?;
        *state = Some(loaded);
    }
    let started = std::time::Instant::now();
    let sample = sample::take(client, now_ms)
        .await
        .map_err(TickError::Cluster)?;
    let sample_ms = started.elapsed().as_millis() as u64;
    let Some(history) = state.as_mut() else {
        return Err(TickError::Task("no history".into()));
    };
    let (rss, peak) = memory();
    let facts = ballast_schema::ClusterFacts {
        sample_duration_ms: sample_ms as i64,
        detail: json!({
            "timingsMs": sample.timings.iter().map(|(k, v)| (k.to_string(), json!(v))).collect::<serde_json::Map<_, _>>(),
            "observerRssBytes": rss,
            "observerPeakRssBytes": peak,
            "groupsError": sample.groups_error,
            "eligibleLeaderReplicas": elr_detail(sample.elr.as_ref()),
        }),
        ..ballast_schema::ClusterFacts::default()
    };
    let mut peaks = vec![("sample", peak)];
    let derived = std::time::Instant::now();
    let summary = sample::Summary::of(&sample);
    let write = history.observe(sample, windows, facts);
    let derive_ms = derived.elapsed().as_millis() as u64;
    peaks.push(("derive", memory().1));
    let write = Arc::new(write);
    // Planning reads the rows being written, so only rows stored the way the view reads them
    // back: topics unique by name, partitions unique and in (topic, partition) order.
    let plannable = write.topics.windows(2).all(|t| t[0].name < t[1].name)
        && write
            .partitions
            .windows(2)
            .all(|p| (&p[0].topic, p[0].partition) < (&p[1].topic, p[1].partition));
    let planning = match plan.filter(|_| plannable) {
        None => None,
        Some(settings) => {
            // The stored brokers before the write: the plan sees them as it leaves them.
            let reader = store.clone();
            let stored = tokio::task::spawn_blocking(move || reader.observed_brokers())
                .await
                .map_err(|e| TickError::Task(e.to_string()))?
                .map_err(TickError::Store)?;
            let (reader, rows) = (store.clone(), write.clone());
            Some(tokio::task::spawn_blocking(move || {
                let started = std::time::Instant::now();
                let brokers = rows.brokers_after(&stored);
                let parts = ballast_runtime::topology::ViewParts {
                    facts: &rows.cluster,
                    brokers: &brokers,
                    topics: &rows.topics,
                    partitions: &rows.partitions,
                };
                let planned =
                    proposals::plan_parts(&reader, &settings, &parts, rows.cluster.sampled_at_ms);
                (planned, started.elapsed().as_millis() as u64)
            }))
        }
    };
    let writer = store.clone();
    let rows = write.clone();
    let result = tokio::task::spawn_blocking(move || {
        let started = std::time::Instant::now();
        (
            writer.write_observed(&rows),
            started.elapsed().as_millis() as u64,
        )
    })
    .await;
    let (planned, plan_ms) = match planning {
        None => (None, 0),
        Some(handle) => match handle.await {
            Ok((Ok(planned), ms)) => (Some(planned), ms),
            Ok((Err(e), ms)) => {
                warn!(error = %error_chain(&e), "sample not planned while written");
                (None, ms)
            }
            Err(e) => {
                warn!(error = %e, "sample not planned while written");
                (None, 0)
            }
        },
    };
    drop(write);
    let (stats, write_ms) = match result {
        Ok((Ok(stats), ms)) => (stats, ms),
        Ok((Err(e), _)) => {
            // The store did not take this sample: rebuild the history from it next time.
            *state = None;
            return Err(TickError::Store(e));
        }
        Err(e) => {
            *state = None;
            return Err(TickError::Task(e.to_string()));
        }
    };
    peaks.push(("write", memory().1));
    Ok(TickReport {
        summary,
        sample_ms,
        derive_ms,
        write_ms,
        stats,
        peaks,
        planned,
        plan_ms,
    })
}

#[derive(Debug, thiserror::Error)]
pub enum TickError {
    #[error("cluster not read")]
    Cluster(#[source] ballast_kafka::Error),
    #[error("observed view not written")]
    Store(#[source] StoreError),
    #[error("store task failed: {0}")]
    Task(String),
}

/// One pass: read the cluster and record what was seen (or why nothing was). A failed read drops
/// the client so the next one reconnects.
async fn observe(
    ctx: &WorkerContext,
    state: &Mutex<Observer>,
) -> Result<serde_json::Value, WorkerError> {
    let mut state = state.lock().await;
    let Observer {
        client,
        history,
        samples,
        started_at_ms,
    } = &mut *state;
    let result = async {
        if client.is_none() {
            *client = Some(
                Client::connect(client_config(&ctx.config.kafka))
                    .await
                    .map_err(TickError::Cluster)?,
            );
        }
        match client.as_ref() {
            Some(c) => {
                tick_planned(
                    c,
                    &ctx.store,
                    history,
                    windows(&ctx.config.timing),
                    ctx.now_ms(),
                    Some(proposals::Settings::from_config(
                        &ctx.config,
                        *started_at_ms,
                    )),
                )
                .await
            }
            None => Err(TickError::Task("no client".into())),
        }
    }
    .await;
    let now = ctx.now_ms();
    let (observation, status) = match result {
        Ok(report) => {
            let s = &report.summary;
            let detail = json!({
                "brokers": s.brokers.len(),
                "partitions": s.partitions,
                "groups": s.groups,
                "sampleMs": report.sample_ms,
                "writeMs": report.write_ms,
                "generation": report.stats.generation,
            });
            let observation = Observation {
                kind: "brokers".into(),
                observed_at_ms: now,
                ok: true,
                error: None,
                detail: detail.clone(),
            };
            // The settings pass: broker configs each sample, ACLs and quotas less often.
            if let Some(c) = client.as_ref() {
                let mut seen =
                    vec![settings_pass::broker_configs(c, &ctx.store, &s.brokers, now).await];
                if *samples % settings_pass::SECURITY_EVERY == 0 {
                    seen.push(settings_pass::security(c, &ctx.store, now).await);
                }
                *samples += 1;
                for o in seen {
                    if let Some(e) = &o.error {
                        warn!(kind = %o.kind, error = %e, "cluster settings not stored");
                    }
                    ctx.blocking(move |store| store.record_observation(&o))
                        .await?;
                }
            }
            // A proposal on the view just written; a failure is logged and retried next tick.
            // Planned while the sample was written (else the view is read back and planned).
            let settings = proposals::Settings::from_config(&ctx.config, *started_at_ms);
            let planned = report.planned;
            let evaluated = ctx
                .blocking(move |store| match planned {
                    Some(planned) => proposals::finish(store, &settings, planned, now).map(Some),
                    None => proposals::evaluate(store, &settings, now),
                })
                .await;
            let mut detail = detail;
            match evaluated {
                Ok(Some(e)) => {
                    detail["proposal"] = json!({
                        "id": e.saved.id(),
                        "moves": e.plan.moves.len(),
                        "applicationAllowed": e.decision.application_allowed,
                    });
                }
                Ok(None) => {}
                Err(e) => {
                    let error = error_chain(&e);
                    warn!(error = %error, "proposal not evaluated");
                    detail["proposalError"] = json!(error);
                }
            }
            // Predicted vs realized of completed operations, from the reading just written.
            let after = ballast_runtime::realized::rates_after_ms(&ctx.config.timing);
            if let Err(e) = ctx
                .blocking(move |store| realized::pass(store, after))
                .await
            {
                warn!(error = %error_chain(&e), "realized loads not read");
            }
            (observation, detail)
        }
        Err(e) => {
            if matches!(e, TickError::Cluster(_)) {
                *client = None;
            }
            let error = error_chain(&e);
            warn!(error = %error, "cluster not observed");
            let observation = Observation {
                kind: "brokers".into(),
                observed_at_ms: now,
                ok: false,
                error: Some(error.clone()),
                detail: json!({}),
            };
            (observation, json!({ "error": error }))
        }
    };
    ctx.blocking(move |store| store.record_observation(&observation))
        .await?;
    Ok(status)
}
