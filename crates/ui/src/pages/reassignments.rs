//! Reassignments: the operations the executor runs (progress, bytes, rate, ETA), one operation
//! with its partitions and a Cancel button, and the replication throttle form.

use askama::Template;
use axum::body::Bytes;
use axum::extract::{Path, RawQuery};
use axum::http::{HeaderMap, StatusCode};
use axum::response::Response;
use serde_json::{json, Value};

use super::state_class;
use crate::api::query;
use crate::fmt;
use crate::human;
use crate::svg;
use crate::url::enc;
use crate::{
    cross_site, fact, query_form, redirect, render, Cell, Ctx, Fact, Flash, Form, Layout, Notice,
    Table,
};

const STATES: [&str; 5] = ["Pending", "Active", "Completed", "Failed", "Cancelled"];

/// A move's progress states: an operation's, and `Stalled` (in flight, but a broker it needs is
/// down or its copied bytes stopped growing).
const MOVE_STATES: [&str; 6] = [
    "Pending",
    "Active",
    "Stalled",
    "Completed",
    "Failed",
    "Cancelled",
];

#[derive(Template)]
#[template(path = "reassignments.html")]
struct ListPage {
    layout: Layout,
    table: Table,
    state: String,
    states: [&'static str; 5],
    throttle: Vec<Fact>,
    throttle_notice: Option<Notice>,
    rate: String,
    max_rate: String,
    slot: String,
}

#[derive(Template)]
#[template(path = "reassignment.html")]
struct OnePage {
    layout: Layout,
    id: String,
    facts: Vec<Fact>,
    progress: String,
    cancellable: bool,
    partitions: Table,
    realized: Table,
    realized_brokers: Table,
}

/// `GET /ui/reassignments?state=`.
pub async fn list(ctx: Ctx, RawQuery(raw): RawQuery) -> Response {
    let q = query_form(raw.as_deref());
    let state = q.get("state").to_string();
    if !state.is_empty() && !STATES.contains(&state.as_str()) {
        return ctx
            .bad_request(
                "Reassignments",
                "reassignments",
                format!(
                    "unknown state {state:?}: choose one of {}",
                    STATES.join(", ")
                ),
            )
            .await;
    }
    let uri = format!(
        "/api/v1/reassignments{}",
        query(&[("state", &state), ("limit", "100")])
    );
    let (ops, throttle) = tokio::join!(
        ctx.api.get(&uri),
        ctx.api.get("/api/v1/reassignments/throttle")
    );
    let ops = match ops {
        Ok(o) => o,
        Err(p) => return ctx.problem_page("Reassignments", "reassignments", &p).await,
    };
    let table = operations_table(
        &ops,
        &format!("{} operations, newest first", human::text(&ops["total"])),
    );
    let (throttle_facts, throttle_notice, rate, max_rate) = match &throttle {
        Ok(t) => (
            {
                let mut facts = vec![
                    fact("Rate in force", throttle_rate(&t["rateMb"])),
                    fact(
                        "Configured (BALLAST_THROTTLE_RATE_MB)",
                        throttle_rate(&t["configuredRateMb"]),
                    ),
                    fact("Tuned at run time", human::text(&t["overridden"])),
                    fact("Managed by ballast", human::text(&t["managed"])),
                ];
                for (key, label) in [
                    ("kept", "Kept for a reassignment not ballast's"),
                    ("pending", "Changes not confirmed yet"),
                ] {
                    let items: Vec<String> = t[key]
                        .as_array()
                        .map(|a| a.iter().map(human::text).collect())
                        .unwrap_or_default();
                    if !items.is_empty() {
                        facts.push(fact(label, items.join("; ")));
                    }
                }
                facts
            },
            None,
            human::text(&t["rateMb"]),
            human::text(&t["maxRateMb"]),
        ),
        Err(p) => (
            Vec::new(),
            Some(Notice::from(p)),
            String::new(),
            String::new(),
        ),
    };
    let slot = match &ops["slot"] {
        Value::Null => "free".to_string(),
        Value::Object(o) => o
            .get("holder")
            .map(human::text)
            .unwrap_or_else(|| Value::Object(o.clone()).to_string()),
        other => human::text(other),
    };
    let mut layout = ctx.layout("Reassignments", "reassignments").await;
    layout.refresh = Some(5);
    render(
        StatusCode::OK,
        &ListPage {
            layout,
            table,
            state,
            states: STATES,
            throttle: throttle_facts,
            throttle_notice,
            rate,
            max_rate,
            slot,
        },
    )
}

/// `GET /ui/reassignments/{id}`.
pub async fn page(ctx: Ctx, Path(id): Path<String>) -> Response {
    let o = match ctx
        .api
        .get(&format!("/api/v1/reassignments/{}", enc(&id)))
        .await
    {
        Ok(o) => o,
        Err(p) => return ctx.problem_page("Reassignment", "reassignments", &p).await,
    };
    let state = human::s(&o, "state");
    let (done, total) = (
        fmt::f(&o, "bytesDone").unwrap_or(0.0),
        fmt::f(&o, "bytesTotal").unwrap_or(0.0),
    );
    let mut facts = vec![
        fact("State", state.clone()).class(state_class(&state)),
        fact(
            "Kind",
            format!("{} ({})", human::s(&o, "kind"), human::s(&o, "strategy")),
        ),
        fact("Description", human::s(&o, "description")),
        fact(
            "Requested by",
            format!("{} via {}", human::s(&o, "userId"), human::s(&o, "method")),
        ),
        fact("Created", fmt::time(&human::s(&o, "createdAt"))),
        fact("Started", fmt::time(&human::s(&o, "startedAt"))),
        fact("Finished", fmt::time(&human::s(&o, "finishedAt"))),
        fact("Moves", moves_summary(&o)),
        fact(
            "Bytes",
            format!("{} of {}", fmt::bytes(done), fmt::bytes(total)),
        ),
        fact("Rate", operation_rate(&o)),
        fact("ETA", eta(&o)),
    ];
    let proposal = human::s(&o, "proposalId");
    if !proposal.is_empty() {
        facts.push(
            fact("Proposal", proposal.clone()).link(format!("/ui/proposals/{}", enc(&proposal))),
        );
    }
    if fmt::b(&o, "forced") {
        facts.push(fact("Forced", "yes (a soft check was overridden)").class("warn"));
    }
    if fmt::b(&o, "cancelRequested") {
        facts.push(fact("Cancel requested", "yes").class("warn"));
    }
    let reason = human::s(&o, "reason");
    if !reason.is_empty() {
        facts.push(fact("Reason", reason));
    }
    if let Some(event) = fmt::i(&o, "auditEventId") {
        facts.push(fact("Audit event", event.to_string()).link(format!("/ui/audit/{event}")));
    }
    let cancellable =
        matches!(state.as_str(), "Pending" | "Active") && !fmt::b(&o, "cancelRequested");
    let mut partitions = Table::new(
        "Partitions",
        &[
            "Partition",
            "State",
            "Replicas",
            "Step",
            "Progress",
            "Rate",
            "ETA",
            "Note",
        ],
    )
    .empty("No partition moves.");
    for m in fmt::arr(&o, "partitions") {
        let st = human::s(m, "state");
        let (d, t) = (
            fmt::f(m, "bytesDone").unwrap_or(0.0),
            fmt::f(m, "bytesTotal").unwrap_or(0.0),
        );
        let part = format!("{}-{}", human::s(m, "topic"), human::text(&m["partition"]));
        let mut note = human::s(m, "reason");
        if st == "Stalled" && note.is_empty() {
            note = format!("stalled since {}", fmt::time(&human::s(m, "stalledSince")));
        }
        if fmt::b(m, "timedOut") {
            note = format!("timed out; {note}");
        }
        if m["cancelConfirmed"] == Value::Bool(false) && st == "Cancelled" {
            note = format!("cancel not confirmed by the cluster; {note}");
        }
        partitions.row(vec![
            Cell::t(part.clone()).link(format!("/ui/topics/{}", enc(&human::s(m, "topic")))),
            Cell::t(st.clone()).class(state_class(&st)),
            Cell::t(format!(
                "[{}] → [{}]",
                human::ids(&m["sourceReplicas"]),
                human::ids(&m["targetReplicas"])
            )),
            Cell::n(format!(
                "{}/{}",
                human::text(&m["step"]),
                human::text(&m["steps"])
            )),
            Cell::t(format!("{} of {}", fmt::bytes(d), fmt::bytes(t))).svg(svg::progress(
                d,
                t,
                &format!("{part}: {} of {}", fmt::bytes(d), fmt::bytes(t)),
            )),
            Cell::n(live_rate(m)),
            Cell::n(fmt::opt(fmt::f(m, "etaSeconds"), fmt::duration_s)),
            Cell::t(note.trim_end_matches("; ").to_string()).class("wrap"),
        ]);
    }
    let progress = svg::progress(
        done,
        total,
        &format!("{} of {} copied", fmt::bytes(done), fmt::bytes(total)),
    );
    let mut layout = ctx
        .layout(
            format!("Reassignment {}", human::s(&o, "id")),
            "reassignments",
        )
        .await;
    if !matches!(state.as_str(), "Completed" | "Failed" | "Cancelled") {
        layout.refresh = Some(3);
    }
    render(
        StatusCode::OK,
        &OnePage {
            layout,
            id: human::s(&o, "id"),
            facts,
            progress,
            cancellable,
            partitions,
            realized: realized_table(&o["realized"]),
            realized_brokers: realized_brokers_table(&o["realized"]),
        },
    )
}

/// Predicted vs realized per load: the farthest broker's distance from fair share before, as
/// predicted and as realized, the error and why a load is not measured.
fn realized_table(r: &Value) -> Table {
    let status = human::s(r, "status");
    let mut caption = format!("Predicted vs realized: {status}");
    let reason = human::s(r, "reason");
    if !reason.is_empty() {
        caption = format!("{caption} ({reason})");
    }
    let mut t = Table::new(
        caption,
        &[
            "Load",
            "Before",
            "Predicted",
            "Realized",
            "Error",
            "Status",
            "Note",
        ],
    )
    .empty("No prediction was kept with this operation.");
    let pct = |v: &Value| fmt::opt(v.as_f64(), fmt::pct_plain);
    for (name, _, _) in fmt::LOADS {
        let l = &r["loads"][name];
        if !l.is_object() {
            continue;
        }
        let st = human::s(l, "status");
        t.row(vec![
            Cell::t(fmt::load_label(name)),
            Cell::n(pct(&l["before"])),
            Cell::n(pct(&l["predicted"])),
            Cell::n(pct(&l["observed"])),
            Cell::n(fmt::opt(l["errorPercent"].as_f64(), |e| {
                format!("{e:.1} pts")
            })),
            Cell::t(st.clone()).class(match st.as_str() {
                "measured" => "ok",
                "unknown" | "unavailable" => "warn",
                _ => "",
            }),
            Cell::t(human::s(l, "reason")).class("wrap"),
        ]);
    }
    t
}

/// Predicted vs realized per broker and load, in the load's unit, each with its distance from
/// fair share.
fn realized_brokers_table(r: &Value) -> Table {
    let mut t = Table::new(
        "Predicted vs realized per broker (distance from fair share below each value)",
        &["Broker", "Load", "Before", "Predicted", "Realized"],
    )
    .empty("No prediction was kept with this operation.");
    for b in fmt::arr(r, "brokers") {
        for (name, _, _) in fmt::LOADS {
            let value = |side: &str| fmt::load_value(name, b[side][name].as_f64());
            let dist = |side: &str| b[side][name].as_f64().map(fmt::pct);
            let cell = |side: &str, d: Option<String>| {
                let c = Cell::n(value(side));
                match d {
                    Some(d) => c.sub(d),
                    None => c,
                }
            };
            t.row(vec![
                Cell::t(human::text(&b["brokerId"])),
                Cell::t(fmt::load_label(name)),
                Cell::n(value("before")),
                cell("predicted", dist("predictedDistance")),
                cell("observed", dist("observedDistance")),
            ]);
        }
    }
    t
}

/// `POST /ui/reassignments/{id}/cancel`.
pub async fn cancel(ctx: Ctx, headers: HeaderMap, Path(id): Path<String>) -> Response {
    if !ctx.same_origin(&headers) {
        return cross_site(&ctx).await;
    }
    let back = format!("/ui/reassignments/{}", enc(&id));
    match ctx
        .api
        .post(&format!("/api/v1/reassignments/{}/cancel", enc(&id)), None)
        .await
    {
        Ok(_) => redirect(
            &back,
            &Flash::ok(format!(
                "Cancel of {id} requested: in-flight moves are cancelled, pending ones never start, completed ones stay"
            )),
        ),
        Err(p) => redirect(&back, &Flash::problem(&p)),
    }
}

/// The throttle as Kafka applies it: decimal MB/s on each broker, with the binary figure the
/// rates on this page use beside it.
fn throttle_rate(mb: &Value) -> String {
    match mb.as_f64() {
        Some(mb) => format!(
            "{} MB/s per broker ({})",
            human::text(&Value::from(mb)),
            fmt::byte_rate(mb * 1e6)
        ),
        None => fmt::UNKNOWN.to_string(),
    }
}

/// A move's or operation's current rate while it copies; `—` once it stopped (a cancelled move
/// has no rate, whatever it had last).
fn live_rate(v: &Value) -> String {
    match human::s(v, "state").as_str() {
        "Active" | "Running" => fmt::opt(fmt::f(v, "rateBytesPerSecond"), fmt::byte_rate),
        _ => fmt::UNKNOWN.to_string(),
    }
}

/// The operation's rate now and on average since it started.
fn operation_rate(o: &Value) -> String {
    let now = live_rate(o);
    match fmt::f(o, "averageRateBytesPerSecond") {
        Some(avg) => format!(
            "{now} now, {} on average since the start",
            fmt::byte_rate(avg)
        ),
        None => now,
    }
}

/// The ETA with the rate it divides by, and the stalled moves it leaves out.
fn eta(o: &Value) -> String {
    let eta = fmt::opt(fmt::f(o, "etaSeconds"), fmt::duration_s);
    let said = match human::s(o, "etaBasis").as_str() {
        "average_rate" => format!("{eta} (at the average rate since the start)"),
        "current_rate" => format!("{eta} (at the current rate; steadier after 10 s)"),
        "stalled" => format!("{eta} (every unfinished move is stalled)"),
        _ => eta,
    };
    match left_out(o) {
        Some(out) => format!("{said}; {out}"),
        None => said,
    }
}

/// The stalled moves an operation's ETA leaves out, in words; None when none is.
fn left_out(o: &Value) -> Option<String> {
    let out = &o["etaLeavesOut"];
    let n = out["stalledMoves"].as_u64().filter(|n| *n > 0)?;
    let bytes = fmt::f(out, "bytesLeft").unwrap_or(0.0);
    Some(format!(
        "leaves out {n} stalled move{} ({} left)",
        if n == 1 { "" } else { "s" },
        fmt::bytes(bytes)
    ))
}

/// The ETA column of the operations table: the figure, and the stalled moves it leaves out.
fn eta_cell(o: &Value) -> String {
    let eta = fmt::opt(fmt::f(o, "etaSeconds"), fmt::duration_s);
    match left_out(o) {
        Some(out) => format!("{eta}; {out}"),
        None => eta,
    }
}

/// `POST /ui/reassignments/throttle` (`rateMb`).
pub async fn throttle(ctx: Ctx, headers: HeaderMap, body: Bytes) -> Response {
    if !ctx.same_origin(&headers) {
        return cross_site(&ctx).await;
    }
    let form = Form::parse(&body);
    let raw = form.get("rateMb");
    // A number goes as a number; anything else as it was typed, so the API's validation
    // answers it with its own words.
    let rate = match raw.parse::<u64>() {
        Ok(n) => json!(n),
        Err(_) => match raw.parse::<f64>() {
            Ok(f) if f.is_finite() => json!(f),
            _ => json!(raw),
        },
    };
    match ctx
        .api
        .put("/api/v1/reassignments/throttle", &json!({ "rateMb": rate }))
        .await
    {
        Ok(t) => redirect(
            "/ui/reassignments",
            &Flash::ok(format!(
                "Replication throttle set to {} MB/s; the executor applies it on its next pass",
                human::text(&t["rateMb"])
            )),
        ),
        Err(p) => redirect("/ui/reassignments", &Flash::problem(&p)),
    }
}

fn moves_summary(o: &Value) -> String {
    let by = &o["moves"];
    let parts: Vec<String> = MOVE_STATES
        .iter()
        .filter_map(|s| {
            by[*s]
                .as_u64()
                .filter(|n| *n > 0)
                .map(|n| format!("{n} {s}"))
        })
        .collect();
    format!(
        "{} total{}{}",
        human::text(&o["totalMoves"]),
        if parts.is_empty() { "" } else { ": " },
        parts.join(", ")
    )
}

/// The operations of `GET /api/v1/reassignments` as a table.
pub fn operations_table(ops: &Value, caption: &str) -> Table {
    let mut t = Table::new(
        caption,
        &[
            "Operation",
            "Kind",
            "State",
            "Created",
            "Moves",
            "Progress",
            "Rate",
            "ETA",
            "By",
        ],
    )
    .empty("No reassignment has run yet.");
    for o in fmt::arr(ops, "reassignments") {
        let id = human::s(o, "id");
        let state = human::s(o, "state");
        let (done, total) = (
            fmt::f(o, "bytesDone").unwrap_or(0.0),
            fmt::f(o, "bytesTotal").unwrap_or(0.0),
        );
        let label = format!("{} of {}", fmt::bytes(done), fmt::bytes(total));
        t.row(vec![
            Cell::t(id.clone())
                .link(format!("/ui/reassignments/{}", enc(&id)))
                .class("mono"),
            Cell::t(human::s(o, "strategy")).sub(human::s(o, "description")),
            Cell::t(state.clone()).class(state_class(&state)),
            Cell::t(fmt::time(&human::s(o, "createdAt"))),
            Cell::t(moves_summary(o)),
            Cell::t(label.clone()).svg(svg::progress(done, total, &label)),
            Cell::n(live_rate(o)),
            Cell::n(eta_cell(o)),
            Cell::t(human::s(o, "userId")),
        ]);
    }
    t
}
