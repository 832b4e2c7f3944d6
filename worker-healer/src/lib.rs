//! The healer: three independent self-healing loops (activity, critical fixes, replication-factor
//! increases) that queue operations as user `pilot`. The loops arrive with the healing
//! capability; at this stage each pass decides whether healing may run at all and reports why
//! not (the spec's skip reasons), so an operator sees the gate before there is anything to heal:
//! `license_invalid` (no valid license or trial: nothing is applied), then `dry_run`
//! (`BALLAST_HEAL_DRY_RUN`, the default).

use ballast_runtime::{WorkerContext, WorkerError};
use serde_json::json;

pub const NAME: &str = "healer";

/// Why a pass applies nothing, in the order the gates are checked.
pub fn skip_reason(license_allows: bool, dry_run: bool) -> Option<&'static str> {
    if !license_allows {
        Some("license_invalid")
    } else if dry_run {
        Some("dry_run")
    } else {
        None
    }
}

pub async fn run(ctx: WorkerContext) -> Result<(), WorkerError> {
    let interval = ctx.config.timing.heartbeat_interval;
    let dry_run = ctx.config.heal.dry_run;
    ctx.tick_loop(interval, || {
        let ctx = ctx.clone();
        async move {
            let now = ctx.now_ms();
            let config = ctx.config.clone();
            let status = ctx
                .blocking(move |store| ballast_license::current(&config, store, now))
                .await?;
            let allows = status.allows_management();
            Ok(json!({
                "dryRun": dry_run,
                "license": status.state().as_str(),
                "skipped": skip_reason(allows, dry_run),
            }))
        }
    })
    .await;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn without_a_valid_license_healing_skips_with_license_invalid_before_anything_else() {
        assert_eq!(skip_reason(false, false), Some("license_invalid"));
        assert_eq!(skip_reason(false, true), Some("license_invalid"));
        assert_eq!(skip_reason(true, true), Some("dry_run"));
        assert_eq!(skip_reason(true, false), None);
    }
}
