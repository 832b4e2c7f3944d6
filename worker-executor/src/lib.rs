//! The executor: runs queued reassignment operations one at a time behind the mutation slot.
//!
//! Architecture Invariant: the executor never re-plans; it executes exactly the stored moves.
//! The pure core: `stale` (the pre-submission stale-plan check), `stall` (when an in-flight
//! move cannot progress: a broker it needs down, or no copied bytes for a number of readings),
//! `throttle` (exactly the moving
//! replicas, and what a reassignment in progress that is not ours needs kept), `restore` (a
//! cancelled step's partition put back in its original order and leader); `waves` (one added
//! replica per step, waves under the per-broker cap), `preflight` (hard and soft reasons) and
//! `placement` come from `crates/moves`, which the web process uses too. `engine` is the
//! reconciling pass over SQLite and the cluster.

pub mod engine;
pub mod restore;
pub mod roll;
pub mod stale;
pub mod stall;
pub mod throttle;

/// What the web process shares with the executor (`crates/moves`).
pub use ballast_moves::{placement, preflight, waves};

use std::sync::Arc;

use ballast_kafka::Client;
use ballast_runtime::{client_config, WorkerContext, WorkerError};
use serde_json::json;
use tokio::sync::Mutex;
use tracing::warn;

pub use ballast_moves::THROTTLE_RATE_KEY;
pub use engine::{Engine, Report};

pub const NAME: &str = "executor";

struct State {
    engine: Engine,
    client: Option<Client>,
}

pub async fn run(ctx: WorkerContext) -> Result<(), WorkerError> {
    let interval = ctx.config.timing.executor_interval;
    let state = Arc::new(Mutex::new(State {
        engine: Engine::new(ctx.store.clone(), ctx.config.clone()),
        client: None,
    }));
    ctx.tick_loop(interval, || {
        let ctx = ctx.clone();
        let state = state.clone();
        async move {
            let mut s = state.lock().await;
            if s.client.is_none() {
                match Client::connect(client_config(&ctx.config.kafka)).await {
                    Ok(c) => s.client = Some(c),
                    Err(e) => {
                        let now = ctx.now_ms();
                        let slot = ctx.blocking(move |store| store.slot(now)).await?;
                        return Ok(json!({ "slot": slot, "cluster": e.to_string() }));
                    }
                }
            }
            let Some(client) = s.client.clone() else {
                return Ok(json!({}));
            };
            let now = ctx.now_ms();
            // The engine calls the store synchronously: short statements on a small database, on
            // a worker thread of the multi-threaded runtime.
            let rolled = roll::drive(&ctx.store, &client, &ctx.config, now).await;
            let roll = match rolled {
                Ok(r) => r.map(|r| {
                    json!({"id": r.id, "state": r.state, "phase": r.phase,
                    "broker": r.current_broker(), "waitingFor": r.progress.waiting_for})
                }),
                Err(e) => {
                    warn!(error = %ballast_runtime::error_chain(&e), "rolling restart pass failed");
                    if matches!(e, engine::ExecError::Cluster(_)) {
                        s.client = None;
                        return Ok(json!({ "error": ballast_runtime::error_chain(&e) }));
                    }
                    None
                }
            };
            match s.engine.tick(&client, now).await {
                Ok(report) => Ok(json!({ "report": report, "roll": roll })),
                Err(e) => {
                    warn!(error = %ballast_runtime::error_chain(&e), "executor pass failed");
                    if matches!(e, engine::ExecError::Cluster(_)) {
                        s.client = None;
                    }
                    Ok(json!({ "error": ballast_runtime::error_chain(&e) }))
                }
            }
        }
    })
    .await;
    Ok(())
}
