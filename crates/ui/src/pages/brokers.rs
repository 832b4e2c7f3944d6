//! Brokers: state, racks, log directories, maintenance enter and exit; one broker's load history
//! as SVG charts; every broker's load history side by side.

use std::collections::BTreeMap;

use askama::Template;
use axum::body::Bytes;
use axum::extract::{Path, RawQuery};
use axum::http::{HeaderMap, StatusCode};
use axum::response::Response;
use serde_json::{json, Value};

use super::state_class;
use crate::api::query;
use crate::fmt::{self, LOADS};
use crate::human;
use crate::svg::{chart, points, Chart, Series};
use crate::url::enc;
use crate::{
    cross_site, fact, query_form, redirect, render, Cell, Ctx, Fact, Flash, Form, Layout, Notice,
    Table,
};

/// The time ranges offered for load history: name, label, milliseconds.
const RANGES: [(&str, &str, i64); 5] = [
    ("1h", "last hour", 3_600_000),
    ("6h", "last 6 hours", 6 * 3_600_000),
    ("24h", "last 24 hours", 24 * 3_600_000),
    ("7d", "last 7 days", 7 * 24 * 3_600_000),
    ("30d", "last 30 days", 30 * 24 * 3_600_000),
];

/// Points per chart line.
const POINTS: &str = "120";

/// One broker's maintenance controls.
struct Maint {
    id: String,
    alive: bool,
    /// `None`: the maintenance list could not be read, so whether it is in maintenance is not
    /// known (no button is offered).
    in_maintenance: Option<bool>,
    since: String,
    reason: String,
    by: String,
}

#[derive(Template)]
#[template(path = "brokers.html")]
struct ListPage {
    layout: Layout,
    brokers: Table,
    maint: Vec<Maint>,
    racks: Table,
    assessment: Vec<Fact>,
    not_rack_aware: Table,
    dirs: Table,
    notice: Option<Notice>,
    /// Why the maintenance list is missing.
    maint_notice: Option<Notice>,
}

/// A broker's state word and its maintenance record. `maintenance` is `None` when the list
/// could not be read: the state then says so instead of guessing "not in maintenance".
fn broker_state<'a>(
    alive: bool,
    maintenance: Option<&'a [crate::Maintenance]>,
    id: &str,
) -> (&'static str, Option<&'a crate::Maintenance>) {
    let Some(list) = maintenance else {
        return (
            if alive {
                "alive (maintenance unknown)"
            } else {
                "down (maintenance unknown)"
            },
            None,
        );
    };
    let m = list.iter().find(|m| m.broker_id.to_string() == id);
    let state = match (alive, m.is_some()) {
        (_, true) => "maintenance",
        (true, false) => "alive",
        (false, false) => "down",
    };
    (state, m)
}

/// A range choice of the history form.
struct RangeOpt {
    key: &'static str,
    label: &'static str,
    selected: bool,
}

#[derive(Template)]
#[template(path = "broker.html")]
struct OnePage {
    layout: Layout,
    id: String,
    facts: Vec<Fact>,
    ranges: Vec<RangeOpt>,
    charts: Vec<Chart>,
    charts_notice: Option<Notice>,
    dirs: Table,
    replicas: Table,
}

#[derive(Template)]
#[template(path = "history.html")]
struct HistoryPage {
    layout: Layout,
    ranges: Vec<RangeOpt>,
    loads: Vec<(&'static str, &'static str, bool)>,
    charts: Vec<Chart>,
}

/// `GET /ui/brokers`.
pub async fn list(ctx: Ctx) -> Response {
    let (health, dirs, racks, activity, maintenance) = tokio::join!(
        ctx.api.get("/api/v1/cluster/health?limit=1"),
        ctx.api.get("/api/v1/cluster/logdirs"),
        ctx.api.get("/api/v1/brokers/racks"),
        ctx.api.get("/api/v1/activity/brokers"),
        ctx.host.maintenance(),
    );
    let health = match health {
        Ok(h) => h,
        Err(p) => return ctx.problem_page("Brokers", "brokers", &p).await,
    };
    // Unreadable is said as such: never shown as "no broker is in maintenance".
    let (maintenance, maint_notice) = match maintenance {
        Ok(list) => (Some(list), None),
        Err(e) => (
            None,
            Some(Notice {
                message: format!(
                    "The maintenance list could not be read: {} — {}",
                    e.error, e.details
                ),
                hint: "Whether a broker is in maintenance is unknown; try again shortly."
                    .to_string(),
            }),
        ),
    };
    let activity = activity.unwrap_or(Value::Null);
    let dirs = dirs.unwrap_or(Value::Null);
    let mut brokers = Table::new(
        "Brokers",
        &[
            "Broker",
            "Rack",
            "Address",
            "State",
            "Leaders",
            "Replicas",
            "Disk used",
            "Traffic",
            "Last seen",
        ],
    )
    .empty("No broker observed yet.");
    let mut maint = Vec::new();
    // The racks table sums exactly the numbers the brokers table shows (one reading, one source),
    // so the two never disagree (a drain moves replicas between readings of different answers).
    let mut by_rack: BTreeMap<String, RackSum> = BTreeMap::new();
    for b in fmt::arr(&health["brokers"], "list") {
        let id = human::text(&b["id"]);
        let alive = fmt::b(b, "alive");
        let (state, m) = broker_state(alive, maintenance.as_deref(), &id);
        let act = fmt::arr(&activity, "brokers")
            .iter()
            .find(|a| human::text(&a["brokerId"]) == id)
            .cloned()
            .unwrap_or(Value::Null);
        let dir = fmt::arr(&dirs, "brokers")
            .iter()
            .find(|d| human::text(&d["brokerId"]) == id)
            .cloned()
            .unwrap_or(Value::Null);
        let used = fmt::f(&dir, "usedBytes");
        let disk = match (used, fmt::f(&dir, "totalBytes")) {
            (Some(u), Some(t)) if t > 0.0 => {
                format!(
                    "{} of {} ({})",
                    fmt::bytes(u),
                    fmt::bytes(t),
                    fmt::pct_plain(u / t * 100.0)
                )
            }
            (Some(u), _) => fmt::bytes(u),
            _ => fmt::UNKNOWN.to_string(),
        };
        let sum = by_rack.entry(human::s(b, "rack")).or_default();
        sum.brokers.push(id.clone());
        sum.alive += usize::from(alive);
        sum.leaders += fmt::i(&act, "leaders").unwrap_or(0);
        sum.replicas += fmt::i(&act, "replicas").unwrap_or(0);
        sum.disk = match (sum.disk, used) {
            (Some(a), Some(u)) => Some(a + u),
            (None, Some(u)) if sum.brokers.len() == 1 => Some(u),
            _ => None,
        };
        brokers.row(vec![
            Cell::t(format!("broker {id}")).link(format!("/ui/brokers/{}", enc(&id))),
            Cell::t(human::s(b, "rack")),
            Cell::t(format!(
                "{}:{}",
                human::s(b, "host"),
                human::text(&b["port"])
            ))
            .class("mono"),
            Cell::t(state).class(state_class(state)),
            Cell::n(human::text(&act["leaders"])),
            Cell::n(human::text(&act["replicas"])),
            Cell::n(disk),
            Cell::n(fmt::opt(fmt::f(&act, "trafficBytesPerSec"), fmt::byte_rate)),
            Cell::t(fmt::time(&human::s(b, "lastSeenAt"))),
        ]);
        maint.push(Maint {
            id: id.clone(),
            alive,
            in_maintenance: maintenance.as_ref().map(|_| m.is_some()),
            since: m
                .map(|m| fmt::time(&crate::fmt::rfc3339_ms(m.entered_at_ms)))
                .unwrap_or_default(),
            reason: m.and_then(|m| m.reason.clone()).unwrap_or_default(),
            by: m.and_then(|m| m.requested_by.clone()).unwrap_or_default(),
        });
    }
    let (racks_table, assessment, not_rack_aware, notice) = match &racks {
        Ok(r) => {
            // The API's racks answer gives the assessment; the sums are the table's own.
            let (a, n) = rack_assessment(&r["assessment"]);
            (racks_table(&by_rack), a, n, None)
        }
        Err(p) => (
            Table::new("Racks", &[]),
            Vec::new(),
            Table::new("", &[]),
            Some(Notice::from(p)),
        ),
    };
    let layout = ctx.layout("Brokers", "brokers").await;
    render(
        StatusCode::OK,
        &ListPage {
            layout,
            brokers,
            maint,
            racks: racks_table,
            assessment,
            not_rack_aware,
            dirs: dirs_table(&dirs, None),
            notice,
            maint_notice,
        },
    )
}

/// `POST /ui/brokers/{id}/maintenance` (`action` = `enter` with `reason`, `drain`, `force`; or
/// `exit`).
pub async fn maintenance(
    ctx: Ctx,
    headers: HeaderMap,
    Path(id): Path<String>,
    body: Bytes,
) -> Response {
    if !ctx.same_origin(&headers) {
        return cross_site(&ctx).await;
    }
    let form = Form::parse(&body);
    let uri = format!("/api/v1/brokers/{}/maintenance", enc(&id));
    match form.get("action") {
        "enter" => {
            let mut body = json!({ "drain": form.checked("drain") });
            if !form.get("reason").is_empty() {
                body["reason"] = json!(form.get("reason"));
            }
            let uri = if form.checked("force") {
                format!("{uri}?force=true")
            } else {
                uri
            };
            match ctx.api.post(&uri, Some(&body)).await {
                Ok(d) => {
                    let mut msg = format!("Broker {id} is in maintenance");
                    match human::s(&d, "operationId") {
                        op if op.is_empty() => msg.push_str(": nothing to drain"),
                        op => msg.push_str(&format!(
                            "; drain queued as operation {op} ({} leadership and {} replica moves, {} skipped)",
                            human::text(&d["leadershipMoves"]),
                            human::text(&d["replicaMoves"]),
                            fmt::arr(&d, "skipped").len()
                        )),
                    }
                    redirect("/ui/brokers", &Flash::ok(msg))
                }
                Err(p) => redirect("/ui/brokers", &Flash::problem(&p)),
            }
        }
        "exit" => match ctx
            .api
            .delete(&if form.checked("cancelDrain") {
                uri
            } else {
                format!("{uri}?keepDrain=true")
            })
            .await
        {
            Ok(d) => redirect(
                "/ui/brokers",
                &Flash::ok(format!("Broker {id}: {}", human::s(&d, "message"))),
            ),
            Err(p) => redirect("/ui/brokers", &Flash::problem(&p)),
        },
        other => {
            ctx.bad_request(
                "Brokers",
                "brokers",
                format!("unknown maintenance action {other:?}: enter or exit"),
            )
            .await
        }
    }
}

/// `GET /ui/brokers/{id}?range=`.
pub async fn page(ctx: Ctx, Path(id): Path<String>, RawQuery(raw): RawQuery) -> Response {
    let q = query_form(raw.as_deref());
    let Some((range, since)) = range_since(&ctx, q.get("range")) else {
        return ctx
            .bad_request(
                "Broker",
                "brokers",
                format!("unknown range {:?}", q.get("range")),
            )
            .await;
    };
    let history_uri = format!(
        "/api/v1/brokers/{}/loads/history{}",
        enc(&id),
        query(&[("since", &since.to_string()), ("maxPoints", POINTS)])
    );
    let dirs_uri = format!(
        "/api/v1/cluster/logdirs{}",
        query(&[("brokerId", &id), ("limit", "50")])
    );
    let (history, dirs, health, proposal) = tokio::join!(
        ctx.api.get(&history_uri),
        ctx.api.get(&dirs_uri),
        ctx.api.get("/api/v1/cluster/health?limit=1"),
        ctx.api.get("/api/v1/proposals/current"),
    );
    let broker = health.as_ref().ok().and_then(|h| {
        fmt::arr(&h["brokers"], "list")
            .iter()
            .find(|b| human::text(&b["id"]) == id)
            .cloned()
    });
    let Some(broker) = broker else {
        let problem = match (&health, &history) {
            (Err(p), _) | (_, Err(p)) => p.clone(),
            _ => crate::Problem::new(404, "broker not found", format!("no broker {id} is known")),
        };
        return ctx.problem_page("Broker", "brokers", &problem).await;
    };
    let alive = fmt::b(&broker, "alive");
    let mut facts = vec![
        fact("State", if alive { "alive" } else { "down" }).class(if alive { "ok" } else { "bad" }),
        fact("Rack", human::s(&broker, "rack")),
        fact(
            "Address",
            format!(
                "{}:{}",
                human::s(&broker, "host"),
                human::text(&broker["port"])
            ),
        ),
        fact("Last seen", fmt::time(&human::s(&broker, "lastSeenAt"))),
    ];
    let share = proposal.as_ref().ok().and_then(|p| {
        fmt::arr(&p["fairShare"], "shares")
            .iter()
            .find(|s| human::text(&s["brokerId"]) == id)
            .map(|s| (s.clone(), p["fairShare"]["loads"].clone()))
    });
    if let Some((s, loads)) = &share {
        for (name, _, long) in LOADS {
            facts.push(fact(
                format!("{long} now"),
                format!(
                    "{} ({} from fair share {})",
                    fmt::load_value(name, s["loads"][name].as_f64()),
                    fmt::opt(s["distance"][name].as_f64(), fmt::pct),
                    fmt::load_value(name, loads[name]["fairShare"].as_f64())
                ),
            ));
        }
    }
    let (charts, charts_notice) = match &history {
        Ok(h) => (broker_charts(h), None),
        Err(p) => (Vec::new(), Some(Notice::from(p))),
    };
    let dirs = dirs.unwrap_or(Value::Null);
    let layout = ctx.layout(format!("Broker {id}"), "brokers").await;
    render(
        StatusCode::OK,
        &OnePage {
            layout,
            id,
            facts,
            ranges: range_options(range),
            charts,
            charts_notice,
            dirs: dirs_table(&dirs, Some("Log directories")),
            replicas: replicas_table(&dirs),
        },
    )
}

/// `GET /ui/history?range=&load=`: every broker's loads over time, one chart per load.
pub async fn history(ctx: Ctx, RawQuery(raw): RawQuery) -> Response {
    let q = query_form(raw.as_deref());
    let Some((range, since)) = range_since(&ctx, q.get("range")) else {
        return ctx
            .bad_request(
                "Load history",
                "history",
                format!("unknown range {:?}", q.get("range")),
            )
            .await;
    };
    let load = q.get("load");
    if !load.is_empty() && !LOADS.iter().any(|(n, _, _)| *n == load) {
        return ctx
            .bad_request("Load history", "history", format!("unknown load {load:?}"))
            .await;
    }
    let uri = format!(
        "/api/v1/brokers/loads/history{}",
        query(&[
            ("since", &since.to_string()),
            ("maxPoints", POINTS),
            ("load", load)
        ])
    );
    let h = match ctx.api.get(&uri).await {
        Ok(h) => h,
        Err(p) => return ctx.problem_page("Load history", "history", &p).await,
    };
    let brokers = fmt::arr(&h, "brokers");
    let mut charts = Vec::new();
    for (name, _, long) in LOADS {
        if !load.is_empty() && name != load {
            continue;
        }
        let series: Vec<Series> = brokers
            .iter()
            .map(|b| Series {
                label: format!("broker {}", human::text(&b["brokerId"])),
                points: points(b, name),
            })
            .collect();
        charts.push(chart(&format!("{long}, every broker"), name, &series));
    }
    let layout = ctx.layout("Load history", "history").await;
    render(
        StatusCode::OK,
        &HistoryPage {
            layout,
            ranges: range_options(range),
            loads: LOADS
                .iter()
                .map(|(n, _, long)| (*n, *long, *n == load))
                .collect(),
            charts,
        },
    )
}

fn range_since(ctx: &Ctx, range: &str) -> Option<(&'static str, i64)> {
    let key = if range.is_empty() { "1h" } else { range };
    let (k, _, ms) = RANGES.iter().find(|(k, _, _)| *k == key)?;
    Some((k, ctx.host.now_ms() - ms))
}

fn range_options(selected: &str) -> Vec<RangeOpt> {
    RANGES
        .iter()
        .map(|(key, label, _)| RangeOpt {
            key,
            label,
            selected: *key == selected,
        })
        .collect()
}

fn broker_charts(h: &Value) -> Vec<Chart> {
    let id = human::text(&h["brokerId"]);
    LOADS
        .iter()
        .map(|(name, _, long)| {
            let series = [Series {
                label: long.to_string(),
                points: points(h, name),
            }];
            chart(&format!("broker {id}: {long}"), name, &series)
        })
        .collect()
}

/// One rack's sums of the brokers table's numbers.
#[derive(Default)]
struct RackSum {
    brokers: Vec<String>,
    alive: usize,
    leaders: i64,
    replicas: i64,
    /// Disk used; None when any of its brokers' is unknown.
    disk: Option<f64>,
}

fn racks_table(by_rack: &BTreeMap<String, RackSum>) -> Table {
    let mut t = Table::new(
        "Racks: the brokers table summed by rack",
        &[
            "Rack",
            "Brokers",
            "Alive",
            "Leaders",
            "Replicas",
            "Disk used",
        ],
    )
    .empty("No rack is configured on any broker.");
    if by_rack.keys().all(String::is_empty) {
        return t;
    }
    for (rack, sum) in by_rack {
        let name = if rack.is_empty() { "(no rack)" } else { rack };
        t.row(vec![
            Cell::t(name).class(if rack.is_empty() { "warn" } else { "" }),
            Cell::t(sum.brokers.join(", ")),
            Cell::n(sum.alive.to_string()),
            Cell::n(fmt::count(sum.leaders as f64)),
            Cell::n(fmt::count(sum.replicas as f64)),
            Cell::n(fmt::opt(sum.disk, fmt::bytes)),
        ]);
    }
    t
}

fn rack_assessment(a: &Value) -> (Vec<Fact>, Table) {
    let status = human::s(a, "status");
    let facts = vec![
        fact("Assessment", status.clone()).class(state_class(&status)),
        fact("Racks", human::text(&a["rackCount"])),
        fact("Brokers with a rack", human::text(&a["brokersWithRack"])),
        fact(
            "Partitions not rack-aware",
            human::text(&a["notRackAwarePartitions"]),
        ),
        fact("Topics affected", human::text(&a["topicsAffected"])),
    ];
    let mut t = Table::new(
        "Partitions whose replicas span fewer racks than they could (at most 20)",
        &["Partition", "Replicas", "Racks", "Distinct", "Expected"],
    )
    .empty("Every partition is spread over as many racks as it can be.");
    for d in fmt::arr(a, "notRackAwareDetails") {
        t.row(vec![
            Cell::t(format!(
                "{}-{}",
                human::s(d, "topic"),
                human::text(&d["partition"])
            )),
            Cell::t(human::ids(&d["replicas"])),
            Cell::t(human::ids(&d["racks"])),
            Cell::n(human::text(&d["distinctRacks"])),
            Cell::n(human::text(&d["expectedRacks"])),
        ]);
    }
    (facts, t)
}

fn dirs_table(dirs: &Value, caption: Option<&str>) -> Table {
    let mut t = Table::new(
        caption.unwrap_or("Log directories of every broker"),
        &[
            "Broker",
            "Directory",
            "Used",
            "Usable",
            "Total",
            "Replicas",
            "Error",
        ],
    )
    .empty("No log directory was read.");
    for b in fmt::arr(dirs, "brokers") {
        let id = human::text(&b["brokerId"]);
        if !fmt::b(b, "logDirsRead") {
            t.row(vec![
                Cell::t(id.clone()),
                Cell::t("not read"),
                Cell::n(""),
                Cell::n(""),
                Cell::n(""),
                Cell::n(""),
                Cell::t(human::s(b, "error")).class("bad"),
            ]);
        }
        for d in fmt::arr(b, "dirs") {
            let error = human::s(d, "error");
            t.row(vec![
                Cell::t(id.clone()),
                Cell::t(human::s(d, "path")).class("mono"),
                Cell::n(fmt::opt(fmt::f(d, "usedBytes"), fmt::bytes)),
                Cell::n(fmt::opt(fmt::f(d, "usableBytes"), fmt::bytes)),
                Cell::n(fmt::opt(fmt::f(d, "totalBytes"), fmt::bytes)),
                Cell::n(human::text(&d["replicaCount"])),
                Cell::t(error).class("bad"),
            ]);
        }
    }
    t
}

fn replicas_table(dirs: &Value) -> Table {
    let caption = format!(
        "Largest replicas on this broker ({} of {})",
        fmt::arr(dirs, "partitions").len(),
        human::text(&dirs["totalPartitions"])
    );
    let mut t = Table::new(
        caption,
        &["Partition", "Directory", "Size", "Behind leader", "Moving"],
    )
    .empty("No replica.");
    for p in fmt::arr(dirs, "partitions") {
        let topic = human::s(p, "topic");
        t.row(vec![
            Cell::t(format!("{topic}-{}", human::text(&p["partition"])))
                .link(format!("/ui/topics/{}", enc(&topic))),
            Cell::t(human::s(p, "logDir")).class("mono"),
            Cell::n(fmt::opt(fmt::f(p, "sizeBytes"), fmt::bytes)),
            Cell::n(fmt::opt(fmt::f(p, "lagBytes"), fmt::bytes)),
            Cell::t(if fmt::b(p, "isFuture") { "yes" } else { "" }),
        ]);
    }
    t
}

/// `POST /ui/brokers/elect`: a preferred leader election of every partition whose preferred
/// leader does not lead (`POST /api/v1/preferred-leader-election`).
pub async fn elect(ctx: Ctx, headers: HeaderMap) -> Response {
    if !ctx.same_origin(&headers) {
        return cross_site(&ctx).await;
    }
    match ctx
        .api
        .post("/api/v1/preferred-leader-election", None)
        .await
    {
        Ok(d) => redirect("/ui/brokers", &Flash::ok(human::election_message(&d))),
        Err(p) => redirect("/ui/brokers", &Flash::problem(&p)),
    }
}

/// `POST /ui/brokers/refresh-metadata`: the web process's cluster client reads the metadata
/// again (`POST /api/v1/cluster/refresh-metadata`).
pub async fn refresh_metadata(ctx: Ctx, headers: HeaderMap) -> Response {
    if !ctx.same_origin(&headers) {
        return cross_site(&ctx).await;
    }
    match ctx.api.post("/api/v1/cluster/refresh-metadata", None).await {
        Ok(d) => redirect(
            "/ui/brokers",
            &Flash::ok(format!(
                "Metadata refreshed: {} brokers, {} topics, {} partitions, controller {}",
                human::text(&d["brokers"]),
                human::text(&d["topics"]),
                human::text(&d["partitions"]),
                human::text(&d["controllerId"])
            )),
        ),
        Err(p) => redirect("/ui/brokers", &Flash::problem(&p)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_unreadable_maintenance_list_makes_the_state_unknown_not_out_of_maintenance() {
        assert_eq!(
            broker_state(true, None, "2").0,
            "alive (maintenance unknown)"
        );
        assert_eq!(
            broker_state(false, None, "2").0,
            "down (maintenance unknown)"
        );
        let list = vec![crate::Maintenance {
            broker_id: 2,
            entered_at_ms: 0,
            requested_by: None,
            operation_id: None,
            reason: None,
        }];
        assert_eq!(broker_state(true, Some(&list), "2").0, "maintenance");
        assert_eq!(broker_state(true, Some(&list), "3").0, "alive");
        assert_eq!(broker_state(false, Some(&[]), "3").0, "down");
    }
}
