//! Self-healing status (the healer worker's report), the processes, and the license.

use askama::Template;
use axum::http::StatusCode;
use axum::response::Response;
use serde_json::Value;

use super::state_class;
use crate::ui::fmt;
use crate::ui::{fact, render, Cell, Ctx, Fact, Layout, Notice, Table};

use crate::healing::SKIP_REASONS;

#[derive(Template)]
#[template(path = "healing.html")]
struct HealingPage {
    layout: Layout,
    facts: Vec<Fact>,
    notice: Option<Notice>,
    reasons: Table,
    loops: Table,
    events: Table,
    workers: Table,
}

#[derive(Template)]
#[template(path = "license.html")]
struct LicensePage {
    layout: Layout,
    facts: Vec<Fact>,
    trial: Vec<Fact>,
    sources: Table,
    fetch: Vec<Fact>,
}

/// `GET /ui/healing`.
pub async fn healing(ctx: Ctx) -> Response {
    let (health, status, events) = tokio::join!(
        ctx.api.get("/api/v1/health"),
        ctx.api.get("/api/v1/self-healing/status"),
        ctx.api
            .get("/api/v1/audit-log?action=selfheal.apply&limit=20"),
    );
    let health = match health {
        Ok(h) => h,
        Err(p) => return ctx.problem_page("Self-healing", "healing", &p).await,
    };
    let heal = &ctx.state.config.heal;
    let healer = fmt::arr(&health, "workers")
        .iter()
        .find(|w| fmt::s(w, "name") == "healer")
        .cloned()
        .unwrap_or(Value::Null);
    let detail = &healer["detail"];
    let skipped = fmt::s(detail, "skipped");
    let mut facts = vec![
        fact(
            "Healer process",
            match fmt::s(&healer, "state") {
                s if s.is_empty() => "not reported".to_string(),
                s => s,
            },
        )
        .class(state_class(&fmt::s(&healer, "state"))),
        fact(
            "Mode",
            match detail["dryRun"].as_bool() {
                Some(true) => "dry run: proposes and reports, changes nothing",
                Some(false) => "active: applies healing moves",
                None => "not reported yet",
            },
        )
        .class(if detail["dryRun"] == Value::Bool(false) {
            "warn"
        } else {
            ""
        }),
        fact("License seen by the healer", fmt::s(detail, "license")),
    ];
    if !skipped.is_empty() {
        let why = SKIP_REASONS
            .iter()
            .find(|(r, _)| *r == skipped)
            .map_or(String::new(), |(_, why)| format!(": {why}"));
        facts.push(fact("Last pass skipped", format!("{skipped}{why}")).class("warn"));
    }
    facts.push(fact("BALLAST_HEAL_DRY_RUN", heal.dry_run.to_string()));
    facts.push(fact(
        "Window (UTC)",
        match &heal.window {
            Some(w) => format!("{} to {}", w.start, w.end),
            None => "any time".to_string(),
        },
    ));
    facts.push(fact(
        "Partitions per run",
        heal.max_partitions_per_run
            .map_or_else(|| "unlimited".to_string(), |n| n.to_string()),
    ));
    facts.push(fact(
        "Heartbeat",
        fmt::opt(fmt::f(&healer, "heartbeatAgeMs"), |ms| {
            format!("{} ago", fmt::duration_s(ms / 1000.0))
        }),
    ));
    // Passes skipped per reason since the healer started (what /metrics counts).
    let counts = crate::healing::skipped_total(Some(detail));
    let mut reasons = Table::new(
        "Why a healing pass skips",
        &["Reason", "Meaning", "Passes skipped"],
    );
    for (r, why) in SKIP_REASONS {
        let cell = if r == skipped {
            Cell::t(r).class("warn").sub("last pass")
        } else {
            Cell::t(r).class("mono")
        };
        reasons.row(vec![
            cell,
            Cell::t(why),
            Cell::n(counts.get(r).map_or_else(String::new, fmt::text)),
        ]);
    }
    let (events, notice) = match &events {
        Ok(e) => (heal_events(e), None),
        Err(p) => (Table::new("", &[]), Some(Notice::from(p))),
    };
    let mut layout = ctx.layout("Self-healing", "healing").await;
    layout.refresh = Some(10);
    render(
        StatusCode::OK,
        &HealingPage {
            layout,
            facts,
            notice,
            reasons,
            loops: loops_table(status.as_ref().ok()),
            events,
            workers: workers_table(&health),
        },
    )
}

/// The three loops of `GET /api/v1/self-healing/status`.
fn loops_table(status: Option<&Value>) -> Table {
    let mut t = Table::new(
        "Healing loops, highest priority first",
        &[
            "Loop",
            "Enabled",
            "Last pass",
            "Decision",
            "Would move (dry run)",
            "Window (UTC)",
            "Cooldown until",
        ],
    )
    .empty("The healer has not reported yet.");
    for l in status.map(|s| fmt::arr(s, "loops")).unwrap_or_default() {
        let decision = fmt::s(l, "lastDecision");
        let reason = fmt::s(l, "reason");
        let then = fmt::s(l, "then");
        let cell = match decision.as_str() {
            "applied" => Cell::t(format!("applied {} move(s)", fmt::text(&l["moveCount"]))),
            "skipped" => Cell::t(format!("skipped: {reason}"))
                .class("warn")
                .sub(fmt::s(l, "why")),
            "" => Cell::t("not reported"),
            other => Cell::t(other),
        };
        let dry = &l["dryRun"];
        let would = if dry.is_null() {
            Cell::t("")
        } else {
            let moves: Vec<String> = fmt::arr(dry, "wouldMove")
                .iter()
                .take(10)
                .map(|m| {
                    format!(
                        "{}-{} {} → {}",
                        fmt::s(m, "topic"),
                        fmt::text(&m["partition"]),
                        m["replicasBefore"],
                        m["replicasAfter"]
                    )
                })
                .collect();
            Cell::t(format!(
                "{} partition(s){}",
                fmt::text(&dry["wouldMoveCount"]),
                if then.is_empty() {
                    String::new()
                } else {
                    format!(", then {then}")
                }
            ))
            .sub(moves.join("; "))
            .class("wrap mono")
        };
        let window = match &l["window"] {
            Value::Null => "any time".to_string(),
            w => format!("{} to {}", fmt::s(w, "start"), fmt::s(w, "end")),
        };
        t.row(vec![
            Cell::t(fmt::s(l, "loop")),
            Cell::t(fmt::text(&l["enabled"])),
            Cell::t(fmt::time(&fmt::s(l, "lastPassAt"))),
            cell,
            would,
            Cell::t(window),
            Cell::t(fmt::time(&fmt::s(l, "cooldownUntil"))),
        ]);
    }
    t
}

fn heal_events(e: &Value) -> Table {
    let mut t = Table::new(
        "Healing applies (selfheal.apply), newest first",
        &["Event", "When", "Status", "Target", "Summary"],
    )
    .empty("Self-healing has not applied anything.");
    for ev in fmt::arr(e, "events") {
        let id = fmt::text(&ev["id"]);
        t.row(vec![
            Cell::n(id.clone()).link(format!("/ui/audit/{id}")),
            Cell::t(fmt::time(&fmt::s(ev, "at"))),
            Cell::n(fmt::text(&ev["status"])),
            Cell::t(fmt::s(ev, "target")),
            Cell::t(fmt::clip(&ev["summary"].to_string(), 200)).class("wrap mono"),
        ]);
    }
    t
}

/// The workers of `GET /api/v1/health`.
pub fn workers_table(health: &Value) -> Table {
    let mut t = Table::new(
        format!(
            "Supervisor pid {}, up {}",
            fmt::text(&health["supervisor"]["pid"]),
            fmt::opt(fmt::f(health, "uptimeSeconds"), fmt::duration_s)
        ),
        &[
            "Worker",
            "State",
            "Pid",
            "Restarts",
            "Heartbeat",
            "Last exit",
            "Report",
        ],
    )
    .empty("No worker reported.");
    for w in fmt::arr(health, "workers") {
        let state = fmt::s(w, "state");
        let detail = match &w["detail"] {
            Value::Object(o) if o.is_empty() => String::new(),
            Value::Null => String::new(),
            d => fmt::clip(&d.to_string(), 160),
        };
        t.row(vec![
            Cell::t(fmt::s(w, "name")),
            Cell::t(state.clone()).class(state_class(&state)),
            Cell::n(fmt::text(&w["pid"])),
            Cell::n(fmt::text(&w["restarts"])),
            Cell::n(fmt::opt(fmt::f(w, "heartbeatAgeMs"), |ms| {
                format!("{} ago", fmt::duration_s(ms / 1000.0))
            })),
            Cell::t(fmt::s(w, "lastExit")).sub(fmt::time(&fmt::s(w, "lastExitAt"))),
            Cell::t(detail).class("wrap mono"),
        ]);
    }
    t
}

/// `GET /ui/license`.
pub async fn license(ctx: Ctx) -> Response {
    let l = match ctx.api.get("/api/v1/license").await {
        Ok(l) => l,
        Err(p) => return ctx.problem_page("License", "license", &p).await,
    };
    let state = fmt::s(&l, "state");
    let management = fmt::b(&l, "management_enabled");
    let mut facts = vec![
        fact("State", state.clone()).class(state_class(&state)),
        fact(
            "Mode",
            if management {
                "management: every feature is on"
            } else {
                "monitoring: management actions answer 403"
            },
        )
        .class(if management { "ok" } else { "warn" }),
        fact("Message", fmt::s(&l, "message")),
        fact("Source", fmt::s(&l, "source")),
        fact("Customer (sub)", fmt::s(&l, "sub")),
        fact("License id (lic)", fmt::s(&l, "lic")),
        fact("Expires", fmt::time(&fmt::s(&l, "expires_at"))),
        fact("Issued", fmt::time(&fmt::s(&l, "issued_at"))),
        fact("Not before", fmt::time(&fmt::s(&l, "not_before"))),
        fact(
            "Clock-skew leeway",
            format!("{} s", fmt::text(&l["leeway_seconds"])),
        ),
    ];
    for (key, label) in [("reason", "Reason"), ("notes", "Notes")] {
        let v = fmt::s(&l, key);
        if !v.is_empty() {
            facts.push(fact(label, v));
        }
    }
    let t = &l["trial"];
    let trial = if t.is_object() {
        vec![
            fact("Trial", fmt::s(t, "state")),
            fact("Cluster", fmt::s(t, "cluster_id")),
            fact("Started", fmt::time(&fmt::s(t, "started_at"))),
            fact("Ends", fmt::time(&fmt::s(t, "ends_at"))),
            fact("Days", fmt::text(&t["days"])),
        ]
    } else {
        Vec::new()
    };
    let mut sources = Table::new(
        "Every source's verdict (the best valid one wins)",
        &[
            "Source",
            "State",
            "Customer",
            "License id",
            "Expires",
            "Message",
        ],
    )
    .empty("No license source is configured.");
    for s in fmt::arr(&l, "sources") {
        let st = fmt::s(s, "state");
        sources.row(vec![
            Cell::t(fmt::s(s, "source")),
            Cell::t(st.clone()).class(state_class(&st)),
            Cell::t(fmt::s(s, "sub")),
            Cell::t(fmt::s(s, "lic")),
            Cell::t(fmt::time(&fmt::s(s, "expires_at"))),
            Cell::t(fmt::s(s, "message")).class("wrap"),
        ]);
    }
    let f = &l["fetch"];
    let mut fetch = vec![
        fact(
            "Auto-fetch",
            if fmt::b(f, "enabled") { "on" } else { "off" },
        ),
        fact(
            "Every",
            fmt::opt(fmt::f(f, "interval_seconds"), fmt::duration_s),
        ),
        fact("Last attempt", fmt::time(&fmt::s(f, "last_attempt_at"))),
        fact("Last result", fmt::s(f, "last_result")),
        fact("Last success", fmt::time(&fmt::s(f, "last_success_at"))),
    ];
    for (key, label) in [
        ("disabled_because", "Off because"),
        ("last_error", "Last error"),
    ] {
        let v = fmt::s(f, key);
        if !v.is_empty() {
            fetch.push(fact(label, v));
        }
    }
    let layout = ctx.layout("License", "license").await;
    render(
        StatusCode::OK,
        &LicensePage {
            layout,
            facts,
            trial,
            sources,
            fetch,
        },
    )
}
