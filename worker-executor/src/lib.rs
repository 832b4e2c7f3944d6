//! The executor: runs queued reassignment operations one at a time behind the mutation slot.
//!
//! Architecture Invariant: the executor never re-plans; it executes exactly the stored moves.
//! Operations and moves arrive with the execution capability; at this stage the executor reports
//! who holds the mutation slot, so a stuck lease is visible in its heartbeat.

pub mod stale;
pub mod throttle;
pub mod waves;

use ballast_runtime::{WorkerContext, WorkerError};
use serde_json::json;

pub const NAME: &str = "executor";

pub async fn run(ctx: WorkerContext) -> Result<(), WorkerError> {
    let interval = ctx.config.timing.heartbeat_interval;
    ctx.tick_loop(interval, || {
        let ctx = ctx.clone();
        async move {
            let now = ctx.now_ms();
            let slot = ctx.blocking(move |store| store.slot(now)).await?;
            Ok(json!({ "slot": slot }))
        }
    })
    .await;
    Ok(())
}
