//! `/metrics` in the Prometheus text format.
//!
//! Two sources: this process's own collectors (HTTP traffic, process figures) and figures read
//! from the store at scrape time (worker restarts and heartbeats, written by other processes).

use prometheus::{
    Encoder, GaugeVec, HistogramOpts, HistogramVec, IntCounterVec, IntGaugeVec, Opts, Registry,
    TextEncoder,
};

use ballast_schema::ProcessState;

use crate::{ApiError, AppState};

pub struct HttpMetrics {
    registry: Registry,
    requests: IntCounterVec,
    duration: HistogramVec,
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
        // Registration only fails on duplicate names, which these fixed definitions cannot have.
        let _ = registry.register(Box::new(requests.clone()));
        let _ = registry.register(Box::new(duration.clone()));
        #[cfg(target_os = "linux")]
        let _ = registry.register(Box::new(
            prometheus::process_collector::ProcessCollector::for_self(),
        ));
        Self {
            registry,
            requests,
            duration,
        }
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

/// Renders every metric family, sorted by name.
pub async fn render(state: &AppState) -> Result<String, ApiError> {
    let (processes, heartbeats) = state
        .db(|store| Ok((store.processes()?, store.heartbeats()?)))
        .await?;
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

    let mut families = state.metrics.registry.gather();
    families.extend(scraped.gather());
    families.sort_by(|a, b| a.name().cmp(b.name()));
    let mut out = Vec::new();
    TextEncoder::new()
        .encode(&families, &mut out)
        .map_err(metric_error)?;
    String::from_utf8(out).map_err(|e| ApiError::internal("metrics encoding failed", e.to_string()))
}

fn metric_error(err: prometheus::Error) -> ApiError {
    ApiError::internal("metrics failed", err.to_string())
}
