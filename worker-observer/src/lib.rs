//! The observer: how ballast knows the cluster.
//!
//! Each tick (every `BALLAST_SAMPLE_INTERVAL`) it reads the cluster ([`sample::take`]) and records
//! the broker view's freshness (`observations`, which `/api/v1/ready` follows). Readings, state
//! tables and proposal evaluation build on the same sample.

pub mod sample;

use std::sync::Arc;
use std::time::Duration;

use ballast_config::BalanceConfig;
use ballast_kafka::Client;
use ballast_runtime::{client_config, error_chain, WorkerContext, WorkerError};
use ballast_schema::Observation;
use serde_json::json;
use tokio::sync::Mutex;
use tracing::warn;

/// The planner's policy from the service's settings. The observer and `ballast plan` both build
/// it here, so offline plans and the service's proposals follow the same rules.
pub fn policy(balance: &BalanceConfig, move_cooldown: Duration) -> ballast_balancer::Policy {
    ballast_balancer::Policy {
        threshold_pct: balance.threshold_percent,
        floor_bytes_per_sec: balance.floor.bytes_per_sec,
        floor_disk_bytes: balance.floor.disk_bytes as f64,
        cooldown_ms: i64::try_from(move_cooldown.as_millis()).unwrap_or(i64::MAX),
        max_partitions: balance.proposal_max_partitions,
        workers: balance.workers,
    }
}

pub const NAME: &str = "observer";

pub async fn run(ctx: WorkerContext) -> Result<(), WorkerError> {
    let interval = ctx.config.timing.sample_interval;
    let client: Arc<Mutex<Option<Client>>> = Arc::new(Mutex::new(None));
    ctx.tick_loop(interval, || {
        let ctx = ctx.clone();
        let client = client.clone();
        async move { observe(&ctx, &client).await }
    })
    .await;
    Ok(())
}

/// One pass: read the cluster and record what was seen (or why nothing was). A failed pass drops
/// the client so the next one reconnects.
async fn observe(
    ctx: &WorkerContext,
    client: &Mutex<Option<Client>>,
) -> Result<serde_json::Value, WorkerError> {
    let mut slot = client.lock().await;
    let started = std::time::Instant::now();
    let result = async {
        if slot.is_none() {
            *slot = Some(Client::connect(client_config(&ctx.config.kafka)).await?);
        }
        match slot.as_ref() {
            Some(c) => sample::take(c, ctx.now_ms()).await,
            None => Err(ballast_kafka::Error::Config("no client".into())),
        }
    }
    .await;
    let now = ctx.now_ms();
    let (observation, status) = match result {
        Ok(s) => {
            let detail = json!({
                "brokers": s.brokers.len(),
                "partitions": s.partitions.len(),
                "groups": s.committed.len(),
                "sampleMs": started.elapsed().as_millis() as u64,
            });
            let observation = Observation {
                kind: "brokers".into(),
                observed_at_ms: now,
                ok: true,
                error: None,
                detail: detail.clone(),
            };
            (observation, detail)
        }
        Err(e) => {
            *slot = None;
            let error = error_chain(&e);
            warn!(error = %error, "cluster not read");
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
