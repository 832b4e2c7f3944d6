//! One module per area of the dashboard. Each handler asks the API, turns the JSON into view
//! structs of preformatted text (so templates only lay out and escape) and renders a template.

pub mod agents;
pub mod audit;
pub mod brokers;
pub mod groups;
pub mod overview;
pub mod proposals;
pub mod reassignments;
pub mod security;
pub mod simulate;
pub mod system;
pub mod tokens;
pub mod topic_change;
pub mod topics;

use serde_json::Value;

use super::fmt::{self, LOADS};
use super::{human, svg};
use super::{Cell, Problem, Table};

/// The CSS class of a state word the API uses (health, worker, operation, group, broker).
pub fn state_class(state: &str) -> &'static str {
    match state {
        "healthy" | "ok" | "running" | "Completed" | "Stable" | "alive" | "licensed" | "trial"
        | "complete" | "active" => "ok",
        "degraded"
        | "Pending"
        | "Active"
        | "PreparingRebalance"
        | "CompletingRebalance"
        | "Assigning"
        | "Reconciling"
        | "maintenance"
        | "partial"
        | "starting"
        | "backoff"
        | "warn" => "warn",
        "critical" | "Failed" | "Stalled" | "down" | "Dead" | "dead" | "expired" | "invalid"
        | "failed" | "stopped" | "bad" => "bad",
        _ => "",
    }
}

/// The balance status line of the overview and the proposal page.
pub struct BalanceStatus {
    pub class: &'static str,
    pub headline: String,
    pub detail: String,
    /// Loads that read `No traffic` (measured below the threshold: not balanced).
    pub no_traffic: Vec<String>,
    /// Loads still being measured (unknown: not balanced yet), with their readings.
    pub measuring: Vec<String>,
    /// Loads below `BALLAST_BALANCE_FLOOR` (left alone).
    pub below_floor: Vec<String>,
}

impl BalanceStatus {
    pub fn of(proposal: &Result<Value, Problem>) -> BalanceStatus {
        let p = match proposal {
            Ok(p) => p,
            Err(problem) if problem.status == 404 => {
                return BalanceStatus::plain(
                    "na",
                    "Waiting for the first evaluation",
                    "The observer evaluates a proposal after each reading of the cluster.",
                )
            }
            Err(problem) => {
                return BalanceStatus::plain("na", "Balance unknown", &problem.message());
            }
        };
        let loads = &p["fairShare"]["loads"];
        let flagged = |flag: &str| -> Vec<String> {
            LOADS
                .iter()
                .filter(|(name, _, _)| loads[*name][flag] == Value::Bool(true))
                .map(|(_, _, long)| long.to_string())
                .collect()
        };
        let d = &p["decision"];
        let reason = human::s(d, "reason");
        let moves = fmt::i(p, "totalReassignments").unwrap_or(0);
        let (class, headline, detail) = if fmt::b(p, "balanceHold") {
            (
                "bad",
                "Balancing paused".to_string(),
                format!(
                    "broker(s) {} down and not in maintenance: only repairs are planned",
                    human::ids(&p["downBrokers"])
                ),
            )
        } else if reason == "data_not_ready" {
            (
                "warn",
                "Measuring: not applicable until every load is measured".to_string(),
                human::s(d, "nextAction"),
            )
        } else if reason == "warming_up" {
            let left = fmt::f(d, "warmupRemainingMs").unwrap_or(0.0) / 1000.0;
            (
                "warn",
                format!("Warming up: {} remaining", fmt::duration_s(left)),
                "measurement history is collected before a proposal is evaluated".to_string(),
            )
        } else if moves == 0 {
            (
                "ok",
                "Balanced".to_string(),
                "every counted load is within its bounds; no move is proposed".to_string(),
            )
        } else if fmt::b(d, "applicationAllowed") {
            (
                "warn",
                "Imbalanced: a proposal is ready".to_string(),
                human::s(d, "nextAction"),
            )
        } else if reason == "confirming" {
            (
                "warn",
                format!(
                    "Confirming: {} of {} readings beyond the trigger",
                    human::text(&d["readingsBeyondTrigger"]),
                    human::text(&d["readingsRequired"])
                ),
                human::s(d, "nextAction"),
            )
        } else if reason == "not_recommended" {
            (
                "ok",
                "No worthwhile plan".to_string(),
                human::s(p, "reason"),
            )
        } else {
            (
                "warn",
                format!("Not applicable: {}", reason.replace('_', " ")),
                human::s(d, "nextAction"),
            )
        };
        BalanceStatus {
            class,
            headline,
            detail,
            no_traffic: flagged("noTraffic"),
            measuring: LOADS
                .iter()
                .filter_map(|(name, _, long)| {
                    let m = &loads[*name]["measuring"];
                    m.is_object().then(|| {
                        format!(
                            "{long} ({} of {} readings)",
                            human::text(&m["readings"]),
                            human::text(&m["needed"])
                        )
                    })
                })
                .collect(),
            below_floor: flagged("belowFloor"),
        }
    }

    fn plain(class: &'static str, headline: &str, detail: &str) -> BalanceStatus {
        BalanceStatus {
            class,
            headline: headline.to_string(),
            detail: detail.to_string(),
            no_traffic: Vec::new(),
            measuring: Vec::new(),
            below_floor: Vec::new(),
        }
    }
}

/// Column heads for a per-load table: the label, tagged `No traffic` / `below floor`.
pub fn load_heads(first: &[&str], loads: &Value) -> Vec<String> {
    let mut head: Vec<String> = first.iter().map(|s| s.to_string()).collect();
    for (name, short, _) in LOADS {
        let l = &loads[name];
        let tag = if l["measuring"].is_object() {
            " (measuring)"
        } else if l["noTraffic"] == Value::Bool(true) {
            " (No traffic)"
        } else if l["belowFloor"] == Value::Bool(true) {
            " (below floor)"
        } else {
            ""
        };
        head.push(format!("{short}{tag}"));
    }
    head
}

/// The brokers of a proposal's `fairShare.shares` with each load against fair share: value,
/// distance and a bar. `after` shows the loads once the moves are done.
pub fn fair_share_table(p: &Value, threshold: f64, after: bool) -> Table {
    let loads = &p["fairShare"]["loads"];
    let caption = if after {
        "After the proposal's moves: each load against fair share (the tick marks fair share; green within the threshold, amber within the trigger, red beyond)"
    } else {
        "Each load against fair share (the tick marks fair share; green within the threshold, amber within the trigger, red beyond)"
    };
    let head = load_heads(&["Broker", "Rack", "State"], loads);
    let head: Vec<&str> = head.iter().map(String::as_str).collect();
    let mut t = Table::new(caption, &head).empty("No broker in the proposal.");
    let (lkey, dkey) = if after {
        ("loadsAfter", "distanceAfter")
    } else {
        ("loads", "distance")
    };
    for share in fmt::arr(&p["fairShare"], "shares") {
        let id = human::text(&share["brokerId"]);
        let state = human::s(share, "state");
        let mut row = vec![
            Cell::t(format!("broker {id}")).link(format!("/ui/brokers/{}", crate::url::enc(&id))),
            Cell::t(human::s(share, "rack")),
            Cell::t(state.clone()).class(state_class(&state)),
        ];
        for (name, _, long) in LOADS {
            // A load still being measured is unknown: no value, no distance, no bar.
            if loads[name]["measuring"].is_object() {
                row.push(Cell::t("unknown").class("load").sub("being measured"));
                continue;
            }
            let value = share[lkey][name].as_f64();
            let distance = share[dkey][name].as_f64();
            let fair = loads[name]["fairShare"].as_f64();
            let counted = loads[name]["counted"] != Value::Bool(false);
            let shown = fmt::load_value(name, value);
            let d = distance.map_or_else(|| "takes no load".to_string(), fmt::pct);
            let label = format!("broker {id} {long}: {shown}, {d} from fair share");
            let bar = svg::load_bar(value, fair, distance.filter(|_| counted), threshold, &label);
            row.push(Cell::t(shown).class("load").sub(d).svg(bar));
        }
        t.row(row);
    }
    t
}
