//! The observer: how ballast knows the cluster.
//!
//! Each tick (every `BALLAST_SAMPLE_INTERVAL`) it will read the cluster, write readings and state
//! tables, and evaluate the proposal. The cluster client arrives with `crates/kafka`; until then
//! the observer records no broker view, so `/api/v1/ready` stays 503 and says why.

use ballast_runtime::{WorkerContext, WorkerError};
use serde_json::json;

pub const NAME: &str = "observer";

pub async fn run(ctx: WorkerContext) -> Result<(), WorkerError> {
    let interval = ctx.config.timing.sample_interval;
    let bootstrap = ctx.config.kafka.bootstrap_servers.join(",");
    ctx.tick_loop(interval, || {
        let bootstrap = bootstrap.clone();
        async move {
            Ok(json!({
                "bootstrap": bootstrap,
                "brokerView": "none: this build has no cluster client yet",
            }))
        }
    })
    .await;
    Ok(())
}
