//! `ballast plan --snapshot FILE`: one `ballast.plan/v1` document on stdout for a
//! `ballast.snapshot/v1` file, planned by the same code as the service's proposals.
//!
//! "Now" is the snapshot's `takenAt`, so the cooldown is judged as of when the snapshot was
//! taken and the same file always gives the same plan. Rules that need a history of readings
//! (four readings, warm-up) are the service's and count as satisfied here.

use std::path::Path;
use std::process::ExitCode;
use std::time::Instant;

use ballast_config::{PlanSettings, RawConfig};
use ballast_model::snapshot::Snapshot;

/// Reads and checks a snapshot file; the error is one line for the operator.
pub fn read_snapshot(path: &Path) -> Result<Snapshot, String> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    let snapshot: Snapshot = serde_json::from_str(&text).map_err(|e| {
        format!(
            "{} is not a ballast.snapshot/v1 document: {e}",
            path.display()
        )
    })?;
    snapshot
        .validate()
        .map_err(|e| format!("{}: {e}", path.display()))?;
    Ok(snapshot)
}

pub fn run(snapshot_path: &Path, config: Option<&Path>) -> ExitCode {
    let settings = match RawConfig::from_process_env(config)
        .map_err(|e| vec![e])
        .and_then(|raw| PlanSettings::from_raw(&raw))
    {
        Ok(s) => s,
        Err(errors) => {
            for e in errors {
                eprintln!("ballast: invalid configuration: {e}");
            }
            return ExitCode::from(crate::EXIT_CONFIG);
        }
    };
    let snapshot = match read_snapshot(snapshot_path) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("ballast: {e}");
            return ExitCode::from(crate::EXIT_CONFIG);
        }
    };
    let Some(now) = ballast_balancer::time::parse_rfc3339_ms(&snapshot.taken_at) else {
        eprintln!(
            "ballast: {}: takenAt {:?} is not an ISO 8601 UTC timestamp",
            snapshot_path.display(),
            snapshot.taken_at
        );
        return ExitCode::from(crate::EXIT_CONFIG);
    };
    let policy = ballast_observer::policy(&settings.balance, settings.move_cooldown);
    let started = Instant::now();
    let mut plan = ballast_balancer::plan(&snapshot, &policy, now);
    plan.elapsed_ms = (started.elapsed().as_secs_f64() * 1000.0 * 100.0).round() / 100.0;
    match serde_json::to_string_pretty(&plan) {
        Ok(text) => {
            println!("{text}");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("ballast: cannot write the plan: {e}");
            ExitCode::from(crate::EXIT_FAILURE)
        }
    }
}
