//! Self-healing as the web process sees it: the healer worker's heartbeat report, served by
//! `GET /api/v1/self-healing/status`, the dashboard and `/metrics`
//! (`ballast_selfhealing_skipped_total{reason}`).

use ballast_runtime::format_rfc3339_ms;
use ballast_schema::Heartbeat;
use serde_json::{json, Value};

use crate::AppState;

/// The spec's self-healing skip reasons and what each means.
pub const SKIP_REASONS: [(&str, &str); 10] = [
    (
        "outside_window",
        "the current time is outside BALLAST_HEAL_WINDOW_START / _END",
    ),
    (
        "cooldown",
        "a healing loop applied within the last 30 minutes",
    ),
    (
        "partitions_in_cooldown",
        "a partition is still in its 30-minute move cooldown",
    ),
    (
        "dry_run",
        "BALLAST_HEAL_DRY_RUN is true (the default): healing only reports",
    ),
    ("active_reassignments", "reassignments are in progress"),
    ("license_invalid", "the license is expired or invalid"),
    (
        "data_not_ready",
        "measurements are still collecting or settling",
    ),
    (
        "benefit_unconfirmed",
        "the benefit is not yet shown on three fresh measurements",
    ),
    (
        "no_proposal",
        "the cluster is balanced or there is not enough data",
    ),
    (
        "higher_priority_running",
        "a higher-priority healing loop is running",
    ),
];

/// The self-healing status from the healer's heartbeat (`None` before its first report) and the
/// healing settings.
pub fn status(state: &AppState, healer: Option<&Heartbeat>, now_ms: i64) -> Value {
    let heal = &state.config.heal;
    let detail = healer.map(|h| &h.detail);
    let field = |name: &str| detail.map_or(Value::Null, |d| d[name].clone());
    json!({
        "reported": healer.is_some(),
        "dryRun": heal.dry_run,
        "window": heal.window.as_ref().map(|w| json!({
            "start": w.start.to_string(),
            "end": w.end.to_string(),
        })),
        "maxPartitionsPerRun": heal.max_partitions_per_run,
        "license": field("license"),
        "skipped": field("skipped"),
        "lastPassAt": detail
            .and_then(|d| d["lastPassAtMs"].as_i64())
            .map(format_rfc3339_ms),
        "passes": field("passes"),
        "skippedTotal": skipped_total(detail),
        "loops": loops(state, detail),
        "heartbeatAt": healer.map(|h| format_rfc3339_ms(h.at_ms)),
        "heartbeatAgeMs": healer.map(|h| (now_ms - h.at_ms).max(0)),
    })
}

/// Every skip reason with the passes the healer's report (`detail`) counts for it, 0 when none.
pub fn skipped_total(detail: Option<&Value>) -> serde_json::Map<String, Value> {
    SKIP_REASONS
        .iter()
        .map(|(reason, _)| {
            let n = detail
                .and_then(|d| d["skippedTotal"][*reason].as_u64())
                .unwrap_or(0);
            ((*reason).to_string(), json!(n))
        })
        .collect()
}

/// The three loops, highest priority first: whether each is enabled (the setting), and from the
/// healer's last pass its decision, the reason, what a dry run would have moved, the window and
/// when its cooldown ends.
pub fn loops(state: &AppState, detail: Option<&Value>) -> Vec<Value> {
    let heal = &state.config.heal;
    let window = heal.window.as_ref().map(|w| {
        json!({
            "start": w.start.to_string(),
            "end": w.end.to_string(),
        })
    });
    let time = |v: &Value| v.as_i64().map(format_rfc3339_ms);
    [
        ("critical", heal.critical_enabled),
        ("replicationFactor", heal.replication_enabled),
        ("activity", heal.activity_enabled),
    ]
    .into_iter()
    .map(|(name, enabled)| {
        let reported = detail
            .and_then(|d| d["loops"].as_array())
            .and_then(|loops| loops.iter().find(|l| l["loop"] == name))
            .cloned()
            .unwrap_or(Value::Null);
        let dry = &reported["lastDryRun"];
        json!({
            "loop": name,
            "enabled": enabled,
            "lastPassAt": time(&reported["lastPassAtMs"]),
            "lastDecision": reported["decision"],
            "reason": reported["reason"],
            "why": reported["why"],
            "then": reported["then"],
            "moves": reported["moves"],
            "moveCount": reported["moveCount"],
            "dryRun": if dry.is_null() { Value::Null } else { json!({
                "at": time(&dry["atMs"]),
                "wouldMove": dry["wouldMove"],
                "wouldMoveCount": dry["wouldMoveCount"],
            }) },
            "window": window,
            "cooldownUntil": time(&reported["cooldownUntilMs"]),
            "lastOperationId": reported["lastOperationId"],
            "lastAppliedAt": time(&reported["lastAppliedAtMs"]),
        })
    })
    .collect()
}
