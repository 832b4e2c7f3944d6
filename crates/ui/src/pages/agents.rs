//! The agents and rolling restarts page (docs/rolling-restarts.md): agents, the running roll with
//! its phase and what it waits for, past rolls, commands; forms act through the API.

use askama::Template;
use axum::extract::Path;
use axum::http::{HeaderMap, StatusCode};
use axum::response::Response;
use serde_json::{json, Value};

use crate::fmt;
use crate::human;
use crate::{
    cross_site, fact, redirect, render, Cell, Ctx, Fact, Flash, Form, Layout, Notice, Table,
};

#[derive(Template)]
#[template(path = "agents.html")]
struct AgentsPage {
    layout: Layout,
    notice: Option<Notice>,
    active: Option<String>,
    facts: Vec<Fact>,
    agents: Table,
    /// Brokers whose agent runs another build than the service (an upgrade form each).
    outdated: Vec<String>,
    rolls: Table,
    commands: Table,
}

/// A Unix-ms time in the dashboard's one format (`2026-11-21 16:23:56 UTC`).
fn when(v: &Value) -> String {
    v.as_i64()
        .map_or_else(String::new, |ms| fmt::time(&crate::fmt::rfc3339_ms(ms)))
}

fn error(message: String) -> Flash {
    Flash {
        kind: "error",
        message,
        hint: String::new(),
    }
}

/// `GET /ui/agents`
pub async fn page(ctx: Ctx) -> Response {
    let (agents, rolls) = tokio::join!(
        ctx.api.get("/api/v1/agents"),
        ctx.api.get("/api/v1/rolling-restarts"),
    );
    let mut notice = None;
    let agents = agents.unwrap_or_else(|p| {
        notice = Some(Notice::from(&p));
        Value::Null
    });
    let rolls = rolls.unwrap_or(Value::Null);
    let mut outdated = Vec::new();
    let mut table = Table::new(
        "Agents",
        &["Broker", "Host", "Agent", "Broker process", "Build", "Disks", "Last seen"],
    )
    .empty("No agent has reported. Run `ballast agent` on each broker host (docs/rolling-restarts.md).");
    for a in fmt::arr(&agents, "agents") {
        let broker = human::text(&a["brokerId"]);
        let disks: Vec<String> = fmt::arr(a, "disks")
            .iter()
            .map(
                |d| match (d["availableBytes"].as_f64(), d["totalBytes"].as_f64()) {
                    (Some(free), Some(total)) => format!(
                        "{}: {} free of {}",
                        human::s(d, "path"),
                        fmt::bytes(free),
                        fmt::bytes(total)
                    ),
                    _ => format!("{}: {}", human::s(d, "path"), human::s(d, "error")),
                },
            )
            .collect();
        let same = a["sameBuildAsService"] == Value::Bool(true);
        table.row(vec![
            Cell::t(broker.clone()).link(format!("/ui/brokers/{broker}")),
            Cell::t(human::s(a, "nodeId")),
            if a["up"] == Value::Bool(true) {
                Cell::t("up").class("ok")
            } else {
                Cell::t("down").class("bad")
            },
            match a["brokerProcessUp"].as_bool() {
                Some(true) => Cell::t("running").class("ok").sub(
                    a["brokerUptimeSeconds"]
                        .as_f64()
                        .map_or_else(String::new, |s| format!("for {}", fmt::duration_s(s))),
                ),
                Some(false) => Cell::t("not running").class("bad"),
                None => Cell::t("unknown"),
            },
            Cell::t(human::s(a, "version"))
                .sub(if same {
                    "same build as the service"
                } else {
                    "another build"
                })
                .class(if same { "" } else { "warn" }),
            Cell::t(disks.join("; ")),
            Cell::t(when(&a["lastSeenAt"])),
        ]);
        if !same {
            outdated.push(broker);
        }
    }
    let mut active = None;
    let mut facts = Vec::new();
    let mut past = Table::new(
        "Rolling restarts",
        &[
            "Id",
            "State",
            "Brokers",
            "Progress",
            "Started by",
            "Started",
            "Ended",
            "Error",
        ],
    )
    .empty("No rolling restart yet.");
    for r in fmt::arr(&rolls, "rollingRestarts") {
        let state = human::s(r, "state");
        let brokers = human::text(&r["brokers"]);
        let done: Vec<String> = fmt::arr(&r["progress"], "brokersDone")
            .iter()
            .map(|d| format!("{} {}", human::text(&d["brokerId"]), human::s(d, "outcome")))
            .collect();
        if active.is_none() && ["running", "paused", "aborting"].contains(&state.as_str()) {
            active = Some(human::s(r, "id"));
            facts = vec![
                fact("Rolling restart", human::s(r, "id")),
                fact("State", state.clone()).class(if state == "running" { "ok" } else { "warn" }),
                fact("Brokers (in order)", brokers.clone()),
                fact("Current broker", human::text(&r["currentBroker"])),
                fact("Phase", human::s(r, "phase")),
                fact("Waiting for", human::s(&r["progress"], "waitingFor")),
                fact("Done", done.join(", ")),
                fact(
                    "Requested",
                    match (r["pauseRequested"].as_bool(), r["abortRequested"].as_bool()) {
                        (_, Some(true)) => "abort",
                        (Some(true), _) => "pause",
                        _ => "",
                    },
                ),
            ];
        }
        past.row(vec![
            Cell::t(human::s(r, "id")).class("mono"),
            Cell::t(state.clone()).class(match state.as_str() {
                "completed" => "ok",
                "failed" => "bad",
                _ => "warn",
            }),
            Cell::t(brokers),
            Cell::t(done.join(", ")),
            Cell::t(human::s(r, "userId")),
            Cell::t(when(&r["createdAtMs"])),
            Cell::t(when(&r["finishedAtMs"])),
            Cell::t(human::s(r, "error")),
        ]);
    }
    let mut commands = Table::new(
        "Agent commands, newest first",
        &[
            "Id",
            "Broker",
            "Kind",
            "State",
            "Requested by",
            "Created",
            "Detail",
        ],
    )
    .empty("No command yet.");
    for c in fmt::arr(&agents, "commands") {
        commands.row(vec![
            Cell::t(human::text(&c["id"])),
            Cell::t(human::text(&c["brokerId"])),
            Cell::t(human::s(c, "kind")),
            Cell::t(human::s(c, "state")),
            Cell::t(human::s(c, "requestedBy")),
            Cell::t(when(&c["createdAt"])),
            Cell::t(human::s(c, "detail")),
        ]);
    }
    let mut layout = ctx.layout("Agents and rolling restarts", "agents").await;
    layout.refresh = Some(5);
    render(
        StatusCode::OK,
        &AgentsPage {
            layout,
            notice,
            active,
            facts,
            agents: table,
            outdated,
            rolls: past,
            commands,
        },
    )
}

/// `POST /ui/rolling-restarts`
pub async fn start(ctx: Ctx, headers: HeaderMap, body: axum::body::Bytes) -> Response {
    if !ctx.same_origin(&headers) {
        return cross_site(&ctx).await;
    }
    let f = Form::parse(&body);
    let reason = f.get("reason").to_string();
    let mut body = json!({});
    let list = f.get("brokers");
    if !list.is_empty() && list != "all" {
        let ids: Result<Vec<i32>, _> = list.split(',').map(|s| s.trim().parse::<i32>()).collect();
        match ids {
            Ok(ids) => body["brokers"] = json!(ids),
            Err(_) => {
                return redirect(
                    "/ui/agents",
                    &error(format!(
                        "Brokers must be ids separated by commas, got {list:?}"
                    )),
                )
            }
        }
    }
    if !reason.is_empty() {
        body["reason"] = json!(reason);
    }
    match ctx.api.post("/api/v1/rolling-restarts", Some(&body)).await {
        Ok(d) => redirect(
            "/ui/agents",
            &Flash::ok(format!(
                "Rolling restart {} started: brokers {}",
                human::s(&d, "id"),
                human::text(&d["brokers"])
            )),
        ),
        Err(p) => redirect("/ui/agents", &Flash::problem(&p)),
    }
}

/// `POST /ui/rolling-restarts/{id}/{action}` (pause, resume, abort)
pub async fn act(
    ctx: Ctx,
    headers: HeaderMap,
    Path((id, action)): Path<(String, String)>,
) -> Response {
    if !ctx.same_origin(&headers) {
        return cross_site(&ctx).await;
    }
    let plain = |s: &str| s.chars().all(|c| c.is_ascii_alphanumeric() || c == '-');
    if !["pause", "resume", "abort"].contains(&action.as_str()) || !plain(&id) {
        return redirect(
            "/ui/agents",
            &error(format!("no action {action:?} on {id:?}")),
        );
    }
    let path = format!("/api/v1/rolling-restarts/{id}/{action}");
    match ctx.api.post(&path, None).await {
        Ok(_) => redirect(
            "/ui/agents",
            &Flash::ok(format!("Rolling restart {id}: {action} requested")),
        ),
        Err(p) => redirect("/ui/agents", &Flash::problem(&p)),
    }
}

/// `POST /ui/agents/{broker}/upgrade`
pub async fn upgrade(ctx: Ctx, headers: HeaderMap, Path(broker): Path<i32>) -> Response {
    if !ctx.same_origin(&headers) {
        return cross_site(&ctx).await;
    }
    match ctx
        .api
        .post(&format!("/api/v1/agents/{broker}/upgrade"), None)
        .await
    {
        Ok(_) => redirect(
            "/ui/agents",
            &Flash::ok(format!(
                "The agent of broker {broker} will upgrade on its next heartbeat"
            )),
        ),
        Err(p) => redirect("/ui/agents", &Flash::problem(&p)),
    }
}
