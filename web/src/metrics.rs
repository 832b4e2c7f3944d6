//! `/metrics` in the Prometheus text format.
//!
//! Two sources: this process's own collectors (HTTP traffic, process figures) and figures read
//! from the store at scrape time (worker restarts and heartbeats, written by other processes; the
//! observer's view of the cluster: broker loads, rack assessment, sampling duration).

use prometheus::{
    Encoder, GaugeVec, HistogramOpts, HistogramVec, IntCounterVec, IntGaugeVec, Opts, Registry,
    TextEncoder,
};

use ballast_model::Load;
use ballast_schema::ProcessState;

use crate::etag::Finished;
use crate::observed_view;
use crate::{ApiError, AppState};

pub struct HttpMetrics {
    registry: Registry,
    requests: IntCounterVec,
    duration: HistogramVec,
    /// `ballast_audit_events_failure_total{error_type}`: audit writes that failed and were
    /// retried (`busy`, `pool`), and events that were lost (`dropped`).
    audit_failures: IntCounterVec,
    /// `ballast_mcp_tool_calls_total{tool, outcome}`: MCP tool calls answered, `outcome` `ok` or
    /// `error` (an answer with `isError` set: a refusal or a failure the agent is told of).
    mcp_calls: IntCounterVec,
    /// The latest scrape and when it started: concurrent scrapes share one rendering, finished
    /// once (its bytes, and its gzip encoding for scrapers that accept it, made once).
    latest: tokio::sync::Mutex<Option<(std::time::Instant, std::sync::Arc<Finished>)>>,
}

impl HttpMetrics {
    pub fn new() -> Self {
        let registry = Registry::new();
        let requests = IntCounterVec::new(
            Opts::new("ballast_http_requests_total", "HTTP requests answered"),
            &["method", "route", "status"],
        )
        .expect("valid metric definition");
        let duration = HistogramVec::new(
            HistogramOpts::new(
                "ballast_http_request_duration_seconds",
                "time to answer an HTTP request",
            )
            .buckets(vec![
                0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0,
            ]),
            &["method", "route"],
        )
        .expect("valid metric definition");
        let audit_failures = IntCounterVec::new(
            Opts::new(
                "ballast_audit_events_failure_total",
                "audit event writes that failed: error_type busy or pool counts attempts that were retried, dropped counts events that were lost",
            ),
            &["error_type"],
        )
        .expect("valid metric definition");
        let mcp_calls = IntCounterVec::new(
            Opts::new(
                "ballast_mcp_tool_calls_total",
                "MCP tool calls answered, by tool (a catalog tool's name, or unknown) and outcome: ok, or error (the answer has isError set)",
            ),
            &["tool", "outcome"],
        )
        .expect("valid metric definition");
        // Present from the start, so a scrape shows 0 rather than nothing.
        for error_type in crate::audit::FAILURE_TYPES {
            audit_failures.with_label_values(&[error_type]);
        }
        // Registration only fails on duplicate names, which these fixed definitions cannot have.
        let _ = registry.register(Box::new(requests.clone()));
        let _ = registry.register(Box::new(duration.clone()));
        let _ = registry.register(Box::new(audit_failures.clone()));
        let _ = registry.register(Box::new(mcp_calls.clone()));
        #[cfg(target_os = "linux")]
        let _ = registry.register(Box::new(
            prometheus::process_collector::ProcessCollector::for_self(),
        ));
        Self {
            registry,
            requests,
            duration,
            audit_failures,
            mcp_calls,
            latest: tokio::sync::Mutex::new(None),
        }
    }

    /// Counts one failed audit write of `error_type` (see [`crate::audit::FAILURE_TYPES`]).
    pub fn audit_failure(&self, error_type: &str) {
        self.audit_failures.with_label_values(&[error_type]).inc();
    }

    /// Counts one MCP tool call of `tool` answered: an error when its answer has `isError` set.
    pub fn mcp_call(&self, tool: &str, error: bool) {
        let outcome = if error { "error" } else { "ok" };
        self.mcp_calls.with_label_values(&[tool, outcome]).inc();
    }

    pub fn observe(&self, method: &str, route: &str, status: u16, seconds: f64) {
        self.requests
            .with_label_values(&[method, route, &status.to_string()])
            .inc();
        self.duration
            .with_label_values(&[method, route])
            .observe(seconds);
    }
}

impl Default for HttpMetrics {
    fn default() -> Self {
        Self::new()
    }
}

/// A scrape: concurrent scrapes share one rendering, and a scrape only takes a rendering that
/// started after it arrived, so no answer is older than its request. Under many concurrent
/// scrapers each waits for at most the rendering in progress plus its own. The rendering is
/// finished once: every scrape that shares it sends the same bytes, and the scrapes that accept
/// gzip (Prometheus does) the same compressed bytes, compressed once (`etag`'s layer).
pub async fn scrape(state: &AppState) -> Result<std::sync::Arc<Finished>, ApiError> {
    let arrived = std::time::Instant::now();
    // The reading first, outside the line of scrapes: the scrape that loads a new one does not
    // hold every other scrape up meanwhile (they render from the previous one, as the other
    // reads do).
    observed_view::current(state).await?;
    let mut latest = state.metrics.latest.lock().await;
    if let Some((started, text)) = latest.as_ref() {
        if *started >= arrived {
            return Ok(text.clone());
        }
    }
    let started = std::time::Instant::now();
    let text = std::sync::Arc::new(Finished::untagged(render(state).await?.into()));
    *latest = Some((started, text.clone()));
    Ok(text)
}

/// A rendering slower than this is logged with its parts' times: every scrape that arrives
/// meanwhile waits for it.
const SLOW_RENDERING: std::time::Duration = std::time::Duration::from_millis(250);

/// `f`'s output and how long it took.
async fn timed<T>(f: impl std::future::Future<Output = T>) -> (T, std::time::Duration) {
    let started = std::time::Instant::now();
    let out = f.await;
    (out, started.elapsed())
}

/// Renders every metric family, sorted by name.
pub async fn render(state: &AppState) -> Result<String, ApiError> {
    let started = std::time::Instant::now();
    let (read, processes_took) =
        timed(state.db(|store| Ok((store.processes()?, store.heartbeats()?)))).await;
    let (processes, heartbeats) = read?;
    let now = state.clock.now_ms();
    let scraped = Registry::new();

    let restarts = IntCounterVec::new(
        Opts::new(
            "ballast_worker_restarts_total",
            "times the supervisor restarted a worker after it died",
        ),
        &["worker"],
    )
    .map_err(metric_error)?;
    let up = IntGaugeVec::new(
        Opts::new(
            "ballast_worker_up",
            "1 when the supervisor reports the worker running",
        ),
        &["worker"],
    )
    .map_err(metric_error)?;
    let heartbeat_age = GaugeVec::new(
        Opts::new(
            "ballast_worker_heartbeat_age_seconds",
            "seconds since the worker last wrote its heartbeat",
        ),
        &["worker"],
    )
    .map_err(metric_error)?;
    let build = IntGaugeVec::new(
        Opts::new(
            "ballast_build_info",
            "version and commit of the running build",
        ),
        &["version", "commit"],
    )
    .map_err(metric_error)?;
    for collector in [
        Box::new(restarts.clone()) as Box<dyn prometheus::core::Collector>,
        Box::new(up.clone()),
        Box::new(heartbeat_age.clone()),
        Box::new(build.clone()),
    ] {
        scraped.register(collector).map_err(metric_error)?;
    }

    for p in processes.iter().filter(|p| p.name != "supervisor") {
        restarts
            .with_label_values(&[p.name.as_str()])
            .inc_by(u64::from(p.restarts));
        up.with_label_values(&[p.name.as_str()])
            .set(i64::from(p.state == ProcessState::Running));
    }
    for h in &heartbeats {
        let age = (now - h.at_ms).max(0) as f64 / 1000.0;
        heartbeat_age.with_label_values(&[h.name.as_str()]).set(age);
    }
    build
        .with_label_values(&[crate::VERSION, crate::COMMIT])
        .set(1);
    // Every reason from the start (0 until the healer reports one), from the healer's report.
    let healer = heartbeats.iter().find(|h| h.name == "healer");
    let healing = crate::healing::status(state, healer, now);
    let skipped = IntCounterVec::new(
        Opts::new(
            "ballast_selfhealing_skipped_total",
            "self-healing passes that applied nothing, by reason, since the healer started",
        ),
        &["reason"],
    )
    .map_err(metric_error)?;
    scraped
        .register(Box::new(skipped.clone()))
        .map_err(metric_error)?;
    if let Some(counts) = healing["skippedTotal"].as_object() {
        for (reason, n) in counts {
            skipped
                .with_label_values(&[reason.as_str()])
                .inc_by(n.as_u64().unwrap_or(0));
        }
    }

    // Four reads of their own, at once: a scrape waits for the slowest, not for their sum (every
    // scrape waits for the one rendering in progress before its own).
    let (
        (observed, observed_took),
        (reassignments, reassignments_took),
        (agents, agents_took),
        (proposal, proposal_took),
    ) = tokio::join!(
        timed(observed_metrics(state, &scraped)),
        timed(reassignment_metrics(state, &scraped)),
        timed(agent_metrics(state, &scraped, now)),
        timed(proposal_metrics(state, &scraped, now)),
    );
    let observed = observed?;
    reassignments?;
    agents?;
    proposal?;

    let mut families = state.metrics.registry.gather();
    families.extend(scraped.gather());
    let (license, license_took) = timed(crate::license::metric_families(state)).await;
    families.extend(license?);
    let took = started.elapsed();
    if took > SLOW_RENDERING {
        let ms = |d: std::time::Duration| d.as_millis() as u64;
        tracing::warn!(
            ms = ms(took),
            processes_ms = ms(processes_took),
            observed_ms = ms(observed_took),
            reassignments_ms = ms(reassignments_took),
            agents_ms = ms(agents_took),
            proposal_ms = ms(proposal_took),
            license_ms = ms(license_took),
            "metrics rendering slow (every scrape meanwhile waits for it)"
        );
    }
    families.sort_by(|a, b| a.name().cmp(b.name()));
    let mut out = Vec::new();
    TextEncoder::new()
        .encode(&families, &mut out)
        .map_err(metric_error)?;
    let mut text = String::from_utf8(out)
        .map_err(|e| ApiError::internal("metrics encoding failed", e.to_string()))?;
    if let Some(block) = observed {
        text.push_str(&block);
    }
    Ok(text)
}

/// `ballast_reassignment_*`: moves active, pending and stalled, completed in total, how long completed
/// moves took, and the moves each broker takes part in now (all read from SQLite).
async fn reassignment_metrics(state: &AppState, registry: &Registry) -> Result<(), ApiError> {
    let (stats, tracked) = state
        .db(|s| Ok((s.move_stats()?, s.tracked_moves()?)))
        .await?;
    let n = |k: &str| stats.by_state.get(k).copied().unwrap_or(0) as f64;
    gauge(
        registry,
        "ballast_reassignment_active",
        "partition moves being moved by the cluster",
    )?
    .set(n("active") + n("submitting"));
    gauge(
        registry,
        "ballast_reassignment_pending",
        "partition moves queued for broker capacity",
    )?
    .set(n("pending"));
    gauge(
        registry,
        "ballast_reassignment_stalled_moves",
        "in-flight partition moves that cannot progress: a broker they need is down or their copied bytes stopped growing (counted in ballast_reassignment_active too)",
    )?
    .set(stats.stalled as f64);
    let completed = prometheus::IntCounter::new(
        "ballast_reassignment_completed_total",
        "partition moves completed",
    )
    .map_err(metric_error)?;
    registry
        .register(Box::new(completed.clone()))
        .map_err(metric_error)?;
    completed.inc_by(stats.by_state.get("completed").copied().unwrap_or(0));
    let duration = prometheus::Histogram::with_opts(
        prometheus::HistogramOpts::new(
            "ballast_reassignment_duration_seconds",
            "time from a move's first submission to its completion",
        )
        .buckets(vec![
            1.0,
            5.0,
            15.0,
            60.0,
            300.0,
            900.0,
            3600.0,
            4.0 * 3600.0,
            12.0 * 3600.0,
        ]),
    )
    .map_err(metric_error)?;
    registry
        .register(Box::new(duration.clone()))
        .map_err(metric_error)?;
    for ms in &stats.durations_ms {
        duration.observe((*ms).max(0) as f64 / 1000.0);
    }
    let per_broker = gauge_vec(
        registry,
        "ballast_reassignment_broker_active_moves",
        "in-flight partition moves each broker takes part in (adding or removing a replica)",
        &["broker_id"],
    )?;
    let mut counts: std::collections::BTreeMap<i32, u64> = std::collections::BTreeMap::new();
    for m in tracked.iter().filter(|m| m.state.is_in_flight()) {
        let to = m.submitted.clone().unwrap_or_else(|| m.target.clone());
        for b in to.iter().filter(|b| !m.source.contains(b)) {
            *counts.entry(*b).or_default() += 1;
        }
        for b in m.source.iter().filter(|b| !to.contains(b)) {
            *counts.entry(*b).or_default() += 1;
        }
    }
    for (b, c) in counts {
        per_broker
            .with_label_values(&[b.to_string().as_str()])
            .set(c as f64);
    }
    realized_metrics(state, registry).await
}

/// `ballast_plan_realized_error_percent{load}`: of the operation that completed last with a
/// prediction, per load, the largest difference over brokers between a broker's observed and
/// predicted distance from fair share, in percentage points (`realized.loads.<load>.errorPercent`
/// of `GET /api/v1/reassignments/{id}`). A load not measured yet, or unknown, has no series.
async fn realized_metrics(state: &AppState, registry: &Registry) -> Result<(), ApiError> {
    let Some((op, realized)) = state.db(|s| s.last_realized()).await? else {
        return Ok(());
    };
    let error = gauge_vec(
        registry,
        "ballast_plan_realized_error_percent",
        "of the last completed plan, per load, the largest difference over brokers between the observed and the predicted distance from fair share, in percentage points",
        &["load"],
    )?;
    let after = ballast_runtime::realized::rates_after_ms(&state.config.timing);
    for (load, e) in ballast_runtime::realized::measured_errors(&op, &realized, after) {
        error.with_label_values(&[load.name()]).set(e);
    }
    Ok(())
}

/// The current proposal: how far each load is from fair share before and after its plan, whether
/// it may be applied, its size and how long ago it was checked. Absent before the first one.
async fn proposal_metrics(state: &AppState, registry: &Registry, now: i64) -> Result<(), ApiError> {
    // The head and the plan parsed once per proposal (never the whole plan per scrape).
    let Some((p, prepared)) = ballast_ops::proposal_view::load(state, None).await? else {
        return Ok(());
    };
    let before = gauge_vec(
        registry,
        "ballast_balance_imbalance_percent",
        "per load, the largest distance of a broker from its fair share, in percent, as the current proposal measured it",
        &["load"],
    )?;
    let after = gauge_vec(
        registry,
        "ballast_balance_imbalance_after_percent",
        "per load, the largest distance from fair share the current proposal's plan would leave, in percent",
        &["load"],
    )?;
    if let Some(loads) = prepared
        .plan
        .get("loads")
        .and_then(serde_json::Value::as_object)
    {
        for (load, l) in loads {
            if let Some(v) = l
                .get("maxDistanceBefore")
                .and_then(serde_json::Value::as_f64)
            {
                before.with_label_values(&[load.as_str()]).set(v);
            }
            if let Some(v) = l
                .get("maxDistanceAfter")
                .and_then(serde_json::Value::as_f64)
            {
                after.with_label_values(&[load.as_str()]).set(v);
            }
        }
    }
    gauge(
        registry,
        "ballast_proposal_applicable",
        "1 when the current proposal's decision allows applying it, else 0",
    )?
    .set(f64::from(u8::from(p.application_allowed)));
    gauge(
        registry,
        "ballast_proposal_moves",
        "partition moves in the current proposal",
    )?
    .set(p.moves as f64);
    gauge(
        registry,
        "ballast_proposal_bytes",
        "bytes the current proposal's moves would copy",
    )?
    .set(p.estimated_bytes as f64);
    gauge(
        registry,
        "ballast_proposal_checked_age_seconds",
        "seconds since the observer last checked the current proposal",
    )?
    .set((now - p.checked_at_ms).max(0) as f64 / 1000.0);
    Ok(())
}

/// `ballast_agent_*`, labelled `broker_id` and `node_id` (docs/rolling-restarts.md).
async fn agent_metrics(state: &AppState, registry: &Registry, now: i64) -> Result<(), ApiError> {
    let agents = state.db(|s| s.agents()).await?;
    let labels = ["broker_id", "node_id"];
    let up = gauge_vec(
        registry,
        "ballast_agent_up",
        "1 when the broker's agent was heard from within BALLAST_AGENT_STALE_AFTER",
        &labels,
    )?;
    let seen = gauge_vec(
        registry,
        "ballast_agent_last_seen_timestamp_seconds",
        "when the agent last reported, seconds since the epoch",
        &labels,
    )?;
    let info = gauge_vec(
        registry,
        "ballast_agent_info",
        "1, with the agent's version",
        &["broker_id", "node_id", "version"],
    )?;
    let process = gauge_vec(
        registry,
        "ballast_agent_broker_process_up",
        "1 when the agent reports the broker process running, 0 when not (absent when unknown)",
        &labels,
    )?;
    for a in &agents {
        let h = &a.heartbeat;
        let broker = h.broker_id.to_string();
        let l = [broker.as_str(), h.node_id.as_str()];
        up.with_label_values(&l)
            .set(f64::from(u8::from(crate::agents::agent_up(state, a, now))));
        seen.with_label_values(&l)
            .set(a.last_seen_at_ms as f64 / 1000.0);
        info.with_label_values(&[broker.as_str(), h.node_id.as_str(), h.version.as_str()])
            .set(1.0);
        // What a silent agent last said is not current: absent, not its old value.
        let live = crate::agents::agent_up(state, a, now);
        if let Some(p) = h.broker_process_up.filter(|_| live) {
            process.with_label_values(&l).set(f64::from(u8::from(p)));
        }
    }
    Ok(())
}

fn gauge(registry: &Registry, name: &str, help: &str) -> Result<prometheus::Gauge, ApiError> {
    let g = prometheus::Gauge::new(name, help).map_err(metric_error)?;
    registry
        .register(Box::new(g.clone()))
        .map_err(metric_error)?;
    Ok(g)
}

fn gauge_vec(
    registry: &Registry,
    name: &str,
    help: &str,
    labels: &[&str],
) -> Result<GaugeVec, ApiError> {
    let g = GaugeVec::new(Opts::new(name, help), labels).map_err(metric_error)?;
    registry
        .register(Box::new(g.clone()))
        .map_err(metric_error)?;
    Ok(g)
}

/// The observer's figures: whether the broker view is current, the rack assessment, the latest
/// loads of every broker and the cost of sampling. Cluster figures are left out while the view is
/// older than `BALLAST_READY_STALE_AFTER` (a scrape must not present old values as current).
async fn observed_metrics(
    state: &AppState,
    registry: &Registry,
) -> Result<Option<std::sync::Arc<String>>, ApiError> {
    let observation = state.db(|store| store.observation("brokers")).await?;
    let view = observed_view::current(state).await?;
    let now = state.clock.now_ms();
    let bound = state.config.timing.ready_stale_after.as_millis() as i64;
    let fresh_observation = observation
        .as_ref()
        .is_some_and(|o| o.ok && now - o.observed_at_ms <= bound);
    gauge(
        registry,
        "ballast_cluster_broker_observation_current",
        "1 while the observer's latest broker discovery succeeded within BALLAST_READY_STALE_AFTER, 0 on failed or stale discovery",
    )?
    .set(f64::from(u8::from(fresh_observation)));

    let status = gauge_vec(
        registry,
        "ballast_cluster_rack_assessment_status",
        "1 for the current rack assessment status (complete: every broker has a rack; partial; no_racks; unavailable: no current view)",
        &["status"],
    )?;
    let view = view.filter(|v| now - v.sampled_at_ms() <= bound);
    let current = view
        .as_ref()
        .map_or("unavailable", |v| v.rack_assessment.status);
    for s in observed_view::RACK_STATUSES
        .iter()
        .copied()
        .chain(["unavailable"])
    {
        status
            .with_label_values(&[s])
            .set(f64::from(u8::from(s == current)));
    }
    let Some(v) = view else {
        return Ok(None);
    };
    // The view's own figures change once per sample: encoded once per view.
    let block = v.rendered("metrics", || {
        let registry = Registry::new();
        let mut out = Vec::new();
        let encoded = view_metrics(&v, &registry).and_then(|()| {
            TextEncoder::new()
                .encode(&registry.gather(), &mut out)
                .map_err(metric_error)
        });
        match encoded {
            Ok(()) => String::from_utf8(out).unwrap_or_default(),
            Err(e) => {
                tracing::warn!(error = %e.details, "observed metrics not rendered");
                String::new()
            }
        }
    });
    Ok(Some(block))
}

/// The figures of one view: not-rack-aware partitions, broker loads, broker and partition
/// states, the observer's sampling cost and memory, coverage.
fn view_metrics(v: &observed_view::View, registry: &Registry) -> Result<(), ApiError> {
    if let Some(n) = v.rack_assessment.not_rack_aware_partitions {
        gauge(
            registry,
            "ballast_cluster_not_rack_aware_partitions",
            "partitions whose replicas span fewer than min(replication factor, racks) racks (only for a complete rack assessment)",
        )?
        .set(n as f64);
    }
    let loads = gauge_vec(
        registry,
        "ballast_broker_load",
        "each broker's latest value of each of the seven loads (leaderCount, followerCount, diskBytes, producer/consumer msg and byte rates per second)",
        &["broker_id", "load"],
    )?;
    for reading in &v.raw.latest_readings {
        let id = reading.broker_id.to_string();
        for (load, value) in Load::ALL.iter().zip(reading.values) {
            if let Some(value) = value {
                loads
                    .with_label_values(&[id.as_str(), load.name()])
                    .set(value);
            }
        }
    }
    let lag = gauge_vec(
        registry,
        "ballast_consumer_group_lag",
        "messages each consumer group is behind the log end, summed over the partitions it committed offsets for (groups whose offsets were read)",
        &["group"],
    )?;
    for (group, (_, total)) in v.raw.groups.iter().zip(&v.group_lag) {
        if group.offsets_read {
            lag.with_label_values(&[group.group_id.as_str()])
                .set(*total as f64);
        }
    }
    let brokers = gauge_vec(
        registry,
        "ballast_cluster_brokers",
        "brokers by state: alive (in the metadata) or down (holding replicas, missing from it)",
        &["state"],
    )?;
    brokers
        .with_label_values(&["alive"])
        .set(v.alive.len() as f64);
    brokers
        .with_label_values(&["down"])
        .set((v.raw.brokers.len() - v.alive.len()) as f64);
    let partitions = gauge_vec(
        registry,
        "ballast_cluster_partitions",
        "partitions by state: total, offline, under_replicated, under_min_isr, at_min_isr",
        &["state"],
    )?;
    for (label, n) in [
        ("total", v.parts.len()),
        ("offline", v.offline.len()),
        ("under_replicated", v.under_replicated.len()),
        ("under_min_isr", v.under_min_isr.len()),
        ("at_min_isr", v.at_min_isr.len()),
    ] {
        partitions.with_label_values(&[label]).set(n as f64);
    }
    if let Some(q) = &v.quorum {
        quorum_metrics(q, registry)?;
    }
    let facts = &v.raw.cluster.facts;
    gauge(
        registry,
        "ballast_observer_sample_duration_seconds",
        "time the observer's latest sample took to read the cluster",
    )?
    .set(facts.sample_duration_ms as f64 / 1000.0);
    gauge(
        registry,
        "ballast_observer_last_sample_timestamp_seconds",
        "unix time of the observer's latest successful sample",
    )?
    .set(facts.sampled_at_ms as f64 / 1000.0);
    if let Some(rss) = facts
        .detail
        .get("observerRssBytes")
        .and_then(|r| r.as_f64())
    {
        gauge(
            registry,
            "ballast_observer_resident_memory_bytes",
            "resident memory of the observer process at its latest sample",
        )?
        .set(rss);
    }
    let coverage = gauge_vec(
        registry,
        "ballast_cluster_coverage_ratio",
        "fraction of the cluster the latest sample covers: log_dirs (brokers read), offsets (partitions read), rates (partitions with rates)",
        &["part"],
    )?;
    coverage
        .with_label_values(&["log_dirs"])
        .set(v.coverage.log_dirs);
    coverage
        .with_label_values(&["offsets"])
        .set(v.coverage.offsets);
    coverage.with_label_values(&["rates"]).set(v.coverage.rates);
    Ok(())
}

/// The KRaft metadata quorum: per voter whether it is up and its lag, the voters up and in all.
/// A voter whose state is not known (no fetch times) has no `up` series.
fn quorum_metrics(q: &ballast_ops::quorum::Quorum, registry: &Registry) -> Result<(), ApiError> {
    let up = gauge_vec(
        registry,
        "ballast_quorum_voter_up",
        "1 while a metadata-quorum voter fetches from the quorum leader and is caught up with it within BALLAST_QUORUM_FETCH_TIMEOUT (the leader always), 0 when it does not",
        &["node_id", "role"],
    )?;
    let lag = gauge_vec(
        registry,
        "ballast_quorum_voter_lag_records",
        "records a metadata-quorum voter is behind the quorum leader's log end offset",
        &["node_id", "role"],
    )?;
    let age = gauge_vec(
        registry,
        "ballast_quorum_voter_fetch_age_seconds",
        "seconds between a metadata-quorum voter's last fetch and the quorum leader's answer",
        &["node_id", "role"],
    )?;
    for n in q.nodes.iter().filter(|n| n.voter) {
        let id = n.id.to_string();
        let labels = [id.as_str(), n.role];
        if let Some(u) = n.up {
            up.with_label_values(&labels).set(f64::from(u8::from(u)));
        }
        if let Some(l) = n.lag {
            lag.with_label_values(&labels).set(l as f64);
        }
        if let Some(a) = n.fetch_age_ms {
            age.with_label_values(&labels).set(a as f64 / 1000.0);
        }
    }
    let voters = gauge_vec(
        registry,
        "ballast_quorum_voters",
        "metadata-quorum voters by state: total, up, down (unknown ones are in total only)",
        &["state"],
    )?;
    voters.with_label_values(&["total"]).set(q.voters as f64);
    voters.with_label_values(&["up"]).set(q.voters_up as f64);
    voters
        .with_label_values(&["down"])
        .set(q.voters_down.len() as f64);
    Ok(())
}

fn metric_error(err: prometheus::Error) -> ApiError {
    ApiError::internal("metrics failed", err.to_string())
}
