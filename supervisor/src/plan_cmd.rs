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

pub fn run(snapshot_path: &Path, config: Option<&Path>, table: bool) -> ExitCode {
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
    let text = if table {
        serde_json::to_value(&plan).map(|v| tables(&v))
    } else {
        serde_json::to_string_pretty(&plan)
    };
    match text {
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

/// Bytes in binary units (`11.6 GiB`), as the dashboard writes them.
pub fn human_bytes(b: f64) -> String {
    ballast_model::units::bytes(b)
}

/// Left-aligned columns, two spaces apart, with a rule under the header.
fn columns(header: &[&str], rows: &[Vec<String>]) -> String {
    let mut widths: Vec<usize> = header.iter().map(|h| h.chars().count()).collect();
    for row in rows {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let line = |cells: Vec<String>| {
        cells
            .iter()
            .zip(&widths)
            .map(|(c, w)| format!("{c:<w$}"))
            .collect::<Vec<_>>()
            .join("  ")
            .trim_end()
            .to_string()
    };
    let mut out = vec![line(header.iter().map(|h| h.to_string()).collect())];
    out.push(line(widths.iter().map(|w| "-".repeat(*w)).collect()));
    out.extend(rows.iter().map(|r| line(r.clone())));
    out.join("\n")
}

/// A `ballast.plan/v1` document as tables for people: what it recommends and copies, each load's
/// distance from fair share before and after and why it stops there, and the moves.
pub fn tables(plan: &serde_json::Value) -> String {
    use serde_json::Value;
    let text = |v: &Value| v.as_str().unwrap_or_default().to_string();
    let pct = |v: &Value| v.as_f64().map_or("-".into(), |x| format!("{x:.1}%"));
    let ids = |v: &Value| {
        v.as_array()
            .map(|a| {
                a.iter()
                    .map(|x| x.to_string())
                    .collect::<Vec<_>>()
                    .join(",")
            })
            .unwrap_or_default()
    };
    let moves = plan["moves"].as_array().cloned().unwrap_or_default();
    let mut out = vec![format!(
        "{}: {} moves, {} to copy, planned in {:.0} ms",
        if plan["recommended"] == true {
            "Recommended"
        } else {
            "Not recommended"
        },
        moves.len(),
        human_bytes(plan["estimatedBytes"].as_f64().unwrap_or(0.0)),
        plan["elapsedMs"].as_f64().unwrap_or(0.0)
    )];
    let reason = text(&plan["reasonText"]);
    if !reason.is_empty() {
        out.push(reason);
    }
    out.push(String::new());
    let mut loads: Vec<Vec<String>> = Vec::new();
    if let Some(map) = plan["loads"].as_object() {
        for (name, l) in map {
            loads.push(vec![
                name.clone(),
                pct(&l["maxDistanceBefore"]),
                pct(&l["maxDistanceAfter"]),
                text(&l["stopReason"]),
            ]);
        }
    }
    out.push(columns(
        &[
            "Load",
            "Farthest from fair share",
            "After",
            "Why it stops there",
        ],
        &loads,
    ));
    out.push(String::new());
    let rows: Vec<Vec<String>> = moves
        .iter()
        .map(|m| {
            vec![
                format!("{}-{}", text(&m["topic"]), m["partition"]),
                ids(&m["replicasBefore"]),
                ids(&m["replicasAfter"]),
                human_bytes(m["bytes"].as_f64().unwrap_or(0.0)),
                text(&m["reason"]),
            ]
        })
        .collect();
    if rows.is_empty() {
        out.push("No move.".into());
    } else {
        out.push(columns(
            &["Partition", "Replicas now", "After", "Copies", "Why"],
            &rows,
        ));
    }
    out.join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_table_names_units_and_each_loads_stop_for_people() {
        let plan = json!({
            "recommended": true, "reasonText": "broker 4 is 80% below fair share of diskBytes",
            "estimatedBytes": 12403935021u64, "elapsedMs": 12.3,
            "loads": {"diskBytes": {"maxDistanceBefore": 80.04, "maxDistanceAfter": 2.5, "stopReason": "within the threshold (5%)"}},
            "moves": [{"topic": "orders", "partition": 3, "replicasBefore": [1, 2], "replicasAfter": [4, 2], "bytes": 1073741824u64, "reason": "diskBytes: 1 → 4"}]
        });
        let t = tables(&plan);
        assert!(
            t.starts_with("Recommended: 1 moves, 11.6 GiB to copy"),
            "{t}"
        );
        assert!(t.contains("diskBytes  80.0%"), "{t}");
        assert!(t.contains("within the threshold (5%)"), "{t}");
        assert!(t.contains("orders-3"), "{t}");
        assert!(
            t.contains("1,2") && t.contains("4,2") && t.contains("1.00 GiB"),
            "{t}"
        );
        assert!(!t.contains('{'), "no JSON for people: {t}");
    }

    #[test]
    fn bytes_read_in_binary_units() {
        assert_eq!(human_bytes(512.0), "512 B");
        assert_eq!(human_bytes(1536.0), "1.50 KiB");
        assert_eq!(human_bytes(12403935021.0), "11.6 GiB");
    }
}
