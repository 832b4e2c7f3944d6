//! The healer: three independent self-healing loops (activity, critical fixes, replication-factor
//! increases) that queue operations as user `pilot`. The loops arrive with the planning and
//! execution capabilities; at this stage the healer reports its mode (dry run by default).

use ballast_runtime::{WorkerContext, WorkerError};
use serde_json::json;

pub const NAME: &str = "healer";

pub async fn run(ctx: WorkerContext) -> Result<(), WorkerError> {
    let interval = ctx.config.timing.heartbeat_interval;
    let dry_run = ctx.config.heal.dry_run;
    ctx.tick_loop(interval, || async move { Ok(json!({ "dryRun": dry_run })) })
        .await;
    Ok(())
}
