//! The healer: three independent self-healing loops (activity, critical fixes, replication-factor
//! increases) that queue operations as user `pilot`. The loops arrive with the healing
//! capability; at this stage each pass decides whether healing may run at all and reports why
//! not (the spec's skip reasons), so an operator sees the gate before there is anything to heal:
//! `license_invalid` (no valid license or trial: nothing is applied), then `dry_run`
//! (`BALLAST_HEAL_DRY_RUN`, the default).

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

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

/// Passes and skips counted since this process started: the heartbeat carries them, and the web
/// process serves them as `ballast_selfhealing_skipped_total{reason}` (a counter that restarts
/// with the healer, as Prometheus counters do).
#[derive(Debug, Default)]
pub struct Counts {
    pub passes: u64,
    pub skipped: BTreeMap<&'static str, u64>,
}

impl Counts {
    /// Counts one pass and its skip reason, if it skipped.
    pub fn pass(&mut self, skipped: Option<&'static str>) {
        self.passes += 1;
        if let Some(reason) = skipped {
            *self.skipped.entry(reason).or_default() += 1;
        }
    }
}

pub async fn run(ctx: WorkerContext) -> Result<(), WorkerError> {
    let interval = ctx.config.timing.heartbeat_interval;
    let dry_run = ctx.config.heal.dry_run;
    let counts = Arc::new(Mutex::new(Counts::default()));
    ctx.tick_loop(interval, || {
        let ctx = ctx.clone();
        let counts = counts.clone();
        async move {
            let now = ctx.now_ms();
            let config = ctx.config.clone();
            let status = ctx
                .blocking(move |store| ballast_license::current(&config, store, now))
                .await?;
            let allows = status.allows_management();
            let skipped = skip_reason(allows, dry_run);
            let mut counts = counts.lock().unwrap_or_else(|e| e.into_inner());
            counts.pass(skipped);
            Ok(json!({
                "dryRun": dry_run,
                "license": status.state().as_str(),
                "skipped": skipped,
                "lastPassAtMs": now,
                "passes": counts.passes,
                "skippedTotal": counts.skipped,
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

    #[test]
    fn every_pass_is_counted_and_each_skip_under_its_reason() {
        let mut c = Counts::default();
        c.pass(Some("license_invalid"));
        c.pass(Some("license_invalid"));
        c.pass(Some("dry_run"));
        c.pass(None);
        assert_eq!(c.passes, 4);
        assert_eq!(c.skipped.get("license_invalid"), Some(&2));
        assert_eq!(c.skipped.get("dry_run"), Some(&1));
        assert_eq!(c.skipped.len(), 2);
    }
}
