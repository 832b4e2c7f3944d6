//! Consumer groups: the list with lag, one group's members and per-partition lag, and the offset
//! reset form (a dry run shows the planned offsets and offers to apply exactly those settings).

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
use crate::url::enc;
use crate::{
    cross_site, fact, query_form, redirect, render, Cell, Ctx, Fact, Flash, Form, Layout, Table,
};

const STRATEGIES: [(&str, &str); 4] = [
    ("earliest", "earliest offset"),
    ("latest", "latest offset (skip everything)"),
    ("timestamp", "first offset at or after a time"),
    ("shift", "shift by a number of messages"),
];

#[derive(Template)]
#[template(path = "groups.html")]
struct ListPage {
    layout: Layout,
    search: String,
    state: String,
    table: Table,
}

/// The reset form's values.
#[derive(Default, Clone)]
struct ResetForm {
    strategy: String,
    topic: String,
    partitions: String,
    timestamp: String,
    shift_by: String,
}

#[derive(Template)]
#[template(path = "group.html")]
struct OnePage {
    layout: Layout,
    group: String,
    facts: Vec<Fact>,
    members: Table,
    topics: Table,
    offsets: Table,
    strategies: [(&'static str, &'static str); 4],
    topic_names: Vec<String>,
    form: ResetForm,
    /// The planned offsets of a dry run.
    plan: Option<Plan>,
}

/// A dry run's answer: the table shown, and exactly those offsets for its Apply button.
struct Plan {
    table: Table,
    /// `[{"topic", "partition", "offset"}]` of every partition the dry run planned: the Apply
    /// button commits these with strategy `offsets`, so nothing is recomputed at commit time.
    offsets: String,
    /// How many partitions the plan commits.
    count: usize,
}

/// `GET /ui/groups?search=&state=`.
pub async fn list(ctx: Ctx, RawQuery(raw): RawQuery) -> Response {
    let q = query_form(raw.as_deref());
    let search = q.get("search").to_string();
    let state = q.get("state").to_string();
    let uri = format!(
        "/api/v1/consumer-groups{}",
        query(&[("search", &search), ("state", &state), ("limit", "500")])
    );
    let data = match ctx.api.get(&uri).await {
        Ok(d) => d,
        Err(p) => return ctx.problem_page("Consumer groups", "groups", &p).await,
    };
    let mut table = Table::new(
        format!(
            "{} of {} groups{}",
            human::text(&data["count"]),
            human::text(&data["total"]),
            if fmt::b(&data, "truncated") {
                " (narrow the search to see the rest)"
            } else {
                ""
            }
        ),
        &[
            "Group",
            "Type",
            "State",
            "Protocol",
            "Members",
            "Coordinator",
            "Topics",
            "Lag",
        ],
    )
    .empty("No consumer group matches.");
    for g in fmt::arr(&data, "groups") {
        let id = human::s(g, "groupId");
        let st = human::s(g, "state");
        let mut lag = Cell::n(fmt::opt(fmt::f(g, "totalLag"), fmt::count));
        let error = human::s(g, "error");
        if !error.is_empty() {
            lag = lag.sub(error);
        }
        table.row(vec![
            Cell::t(id.clone()).link(format!("/ui/groups/{}", enc(&id))),
            Cell::t(group_type(&g["groupType"])),
            Cell::t(st.clone()).class(state_class(&st)),
            Cell::t(human::s(g, "protocolType")),
            Cell::n(human::text(&g["members"])),
            Cell::n(human::text(&g["coordinator"])),
            Cell::t(human::ids(&g["topics"])).class("wrap"),
            lag,
        ]);
    }
    let layout = ctx.layout("Consumer groups", "groups").await;
    render(
        StatusCode::OK,
        &ListPage {
            layout,
            search,
            state,
            table,
        },
    )
}

/// A group's type as the dashboard names it: the protocol it speaks (KIP-848 and KIP-932 named).
fn group_type(t: &Value) -> String {
    match t.as_str() {
        Some("classic") => "classic".into(),
        Some("consumer") => "consumer (KIP-848)".into(),
        Some("share") => "share (KIP-932)".into(),
        Some("streams") => "streams (KIP-1071)".into(),
        Some(other) => other.to_string(),
        None => fmt::UNKNOWN.to_string(),
    }
}

/// `GET /ui/groups/{group}`.
pub async fn page(ctx: Ctx, Path(group): Path<String>) -> Response {
    group_page(ctx, group, ResetForm::default(), None).await
}

async fn group_page(ctx: Ctx, group: String, form: ResetForm, plan: Option<Plan>) -> Response {
    let g = match ctx
        .api
        .get(&format!("/api/v1/consumer-groups/{}", enc(&group)))
        .await
    {
        Ok(g) => g,
        Err(p) => return ctx.problem_page("Consumer group", "groups", &p).await,
    };
    let st = human::s(&g, "state");
    let epochs = match (fmt::i(&g, "groupEpoch"), fmt::i(&g, "assignmentEpoch")) {
        (Some(group), Some(assignment)) => {
            format!("group {group}, target assignment {assignment}")
        }
        _ => "none (classic protocol: generations)".to_string(),
    };
    let consumer_protocol = g["groupType"] == "consumer";
    let facts = vec![
        fact("Type", group_type(&g["groupType"])),
        fact("State", st.clone()).class(state_class(&st)),
        fact("Epochs", epochs),
        fact(
            "Protocol",
            format!(
                "{} {}",
                human::s(&g, "protocolType"),
                human::s(&g, "protocol")
            ),
        ),
        fact(
            "Coordinator",
            format!("broker {}", human::text(&g["coordinator"])),
        ),
        fact("Members", fmt::arr(&g, "members").len().to_string()),
        fact("Total lag", fmt::opt(fmt::f(&g, "totalLag"), fmt::count)),
    ];
    let columns: &[&str] = if consumer_protocol {
        &[
            "Member", "Epoch", "Client", "Host", "Assigned", "Target", "Lag",
        ]
    } else {
        &["Member", "Client", "Host", "Assigned", "Lag"]
    };
    let mut members = Table::new("Members", columns)
        .empty("No active member: the group is empty (offsets can be reset).");
    let partitions = |list: &Value| {
        list.as_array()
            .map(|a| {
                a.iter()
                    .map(|a| {
                        format!(
                            "{} [{}]",
                            human::s(a, "topic"),
                            human::ids(&a["partitions"])
                        )
                    })
                    .collect::<Vec<_>>()
                    .join("; ")
            })
            .unwrap_or_default()
    };
    for m in fmt::arr(&g, "members") {
        let assigned = partitions(&m["assignment"]);
        let mut row = vec![Cell::t(human::s(m, "memberId")).class("mono wrap")];
        if consumer_protocol {
            row.push(Cell::n(human::text(&m["memberEpoch"])));
        }
        row.extend([
            Cell::t(human::s(m, "clientId")),
            Cell::t(human::s(m, "host")),
            Cell::t(assigned.clone()).class("wrap"),
        ]);
        if consumer_protocol {
            let target = partitions(&m["targetAssignment"]);
            // A member still reconciling owns other partitions than its target.
            let cell = Cell::t(if target == assigned {
                "= assigned".to_string()
            } else {
                target
            });
            row.push(cell.class("wrap"));
        }
        row.push(Cell::n(fmt::opt(fmt::f(m, "lag"), fmt::count)));
        members.row(row);
    }
    let mut topics = Table::new(
        "Lag per topic",
        &["Topic", "Partitions", "Total lag", "Max lag"],
    );
    let mut topic_names = Vec::new();
    for t in fmt::arr(&g, "topics") {
        let name = human::s(t, "topic");
        topic_names.push(name.clone());
        topics.row(vec![
            Cell::t(name.clone()).link(format!("/ui/topics/{}", enc(&name))),
            Cell::n(human::text(&t["partitions"])),
            Cell::n(fmt::opt(fmt::f(t, "totalLag"), fmt::count)),
            Cell::n(fmt::opt(fmt::f(t, "maxLag"), fmt::count)),
        ]);
    }
    let share = g["groupType"] == "share";
    let mut offsets = Table::new(
        "Lag per partition",
        &[
            "Partition",
            // A share group commits no offset: its backlog starts at the share-partition start.
            if share { "Start offset" } else { "Committed" },
            "Log end",
            "Lag",
            "Member",
        ],
    )
    .empty(if share {
        "No share-partition start offset yet."
    } else {
        "No committed offset."
    });
    for o in fmt::arr(&g, "offsets") {
        let mut member = Cell::t(human::s(o, "clientId"));
        let error = human::s(o, "error");
        if !error.is_empty() {
            member = member.sub(error);
        }
        offsets.row(vec![
            Cell::t(format!(
                "{}-{}",
                human::s(o, "topic"),
                human::text(&o["partition"])
            )),
            Cell::n(human::text(if share {
                &o["startOffset"]
            } else {
                &o["committedOffset"]
            })),
            Cell::n(human::text(&o["logEndOffset"])),
            Cell::n(fmt::opt(fmt::f(o, "lag"), fmt::count)),
            member,
        ]);
    }
    let mut layout = ctx
        .layout(format!("Consumer group {group}"), "groups")
        .await;
    if plan.is_some() && layout.flash.is_none() {
        layout.flash = Some(Flash {
            kind: "info",
            message: "Dry run: nothing was committed. Review the planned offsets, then apply."
                .into(),
            hint: String::new(),
        });
    }
    render(
        StatusCode::OK,
        &OnePage {
            layout,
            group,
            facts,
            members,
            topics,
            offsets,
            strategies: STRATEGIES,
            topic_names,
            form,
            plan,
        },
    )
}

/// `POST /ui/groups/{group}/reset`: a dry run renders the plan; a real reset redirects back.
pub async fn reset(
    ctx: Ctx,
    headers: HeaderMap,
    Path(group): Path<String>,
    body: Bytes,
) -> Response {
    if !ctx.same_origin(&headers) {
        return cross_site(&ctx).await;
    }
    let f = Form::parse(&body);
    let form = ResetForm {
        strategy: f.get("strategy").to_string(),
        topic: f.get("topic").to_string(),
        partitions: f.get("partitions").to_string(),
        timestamp: f.get("timestamp").to_string(),
        shift_by: f.get("shiftBy").to_string(),
    };
    let dry_run = f.checked("dryRun");
    let mut request = json!({ "strategy": form.strategy, "dryRun": dry_run });
    if !form.topic.is_empty() {
        request["topic"] = json!(form.topic);
    }
    if !form.partitions.is_empty() {
        let parsed: Result<Vec<i32>, _> = form
            .partitions
            .split(',')
            .map(|p| p.trim().parse::<i32>())
            .collect();
        match parsed {
            Ok(list) => request["partitions"] = json!(list),
            Err(_) => {
                return ctx
                    .bad_request(
                        "Consumer group",
                        "groups",
                        format!(
                        "partitions {:?}: give partition numbers separated by commas, e.g. 0, 1, 2",
                        form.partitions
                    ),
                    )
                    .await
            }
        }
    }
    if !form.timestamp.is_empty() {
        request["timestamp"] = match form.timestamp.parse::<i64>() {
            Ok(ms) => json!(ms),
            Err(_) => json!(form.timestamp),
        };
    }
    if !form.shift_by.is_empty() {
        request["shiftBy"] = match form.shift_by.parse::<i64>() {
            Ok(n) => json!(n),
            Err(_) => json!(form.shift_by),
        };
    }
    if form.strategy == "offsets" {
        // The Apply button of a dry run: exactly the offsets that were reviewed.
        match serde_json::from_str::<Vec<Value>>(f.get("offsets")) {
            Ok(list) => request["offsets"] = json!(list),
            Err(e) => {
                return ctx
                    .bad_request(
                        "Consumer group",
                        "groups",
                        format!("offsets: not a list of planned offsets ({e})"),
                    )
                    .await
            }
        }
    }
    let back = format!("/ui/groups/{}", enc(&group));
    let uri = format!("/api/v1/consumer-groups/{}/reset-offsets", enc(&group));
    match ctx.api.post(&uri, Some(&request)).await {
        Ok(d) if dry_run => {
            let plan = plan(&d);
            group_page(ctx, group, form, Some(plan)).await
        }
        Ok(d) => {
            let n = fmt::arr(&d, "partitions").len();
            let failed = fmt::arr(&d, "partitions")
                .iter()
                .filter(|p| !human::s(p, "error").is_empty())
                .count();
            let how = match (form.strategy.as_str(), f.get("reviewed")) {
                ("offsets", "") => "to the given offsets".to_string(),
                ("offsets", reviewed) => format!("to the offsets the {reviewed} dry run planned"),
                (strategy, _) => format!("({strategy})"),
            };
            let mut msg = format!("Offsets of {group} reset {how} on {n} partitions");
            if failed > 0 {
                msg.push_str(&format!("; {failed} refused by the cluster"));
            }
            redirect(&back, &Flash::ok(msg))
        }
        Err(p) => redirect(&back, &Flash::problem(&p)),
    }
}

/// The dry run's table and the offsets its Apply button commits: every partition with a planned
/// offset (a partition the cluster refused in the dry run has none and is left out).
fn plan(d: &Value) -> Plan {
    let offsets: Vec<Value> = fmt::arr(d, "partitions")
        .iter()
        .filter(|p| human::s(p, "error").is_empty())
        .filter_map(|p| {
            Some(json!({
                "topic": p["topic"].as_str()?,
                "partition": p["partition"].as_i64()?,
                "offset": p["newOffset"].as_i64()?,
            }))
        })
        .collect();
    Plan {
        table: plan_table(d),
        count: offsets.len(),
        offsets: Value::Array(offsets).to_string(),
    }
}

fn plan_table(d: &Value) -> Table {
    let mut t = Table::new(
        "Planned offsets (dry run)",
        &["Partition", "Current", "New", "Range", "Lag after", "Note"],
    )
    .empty("No partition would change.");
    for p in fmt::arr(d, "partitions") {
        let mut note = human::s(p, "error");
        if fmt::b(p, "clamped") {
            note = format!("clamped to the log {note}");
        }
        t.row(vec![
            Cell::t(format!(
                "{}-{}",
                human::s(p, "topic"),
                human::text(&p["partition"])
            )),
            Cell::n(human::text(&p["currentOffset"])),
            Cell::n(human::text(&p["newOffset"])),
            Cell::n(format!(
                "{} – {}",
                human::text(&p["earliestOffset"]),
                human::text(&p["latestOffset"])
            )),
            Cell::n(human::text(&p["lagAfter"])),
            Cell::t(note.trim().to_string()),
        ]);
    }
    t
}

/// `POST /ui/groups/{group}/delete`: deletes an empty group with its committed offsets
/// (`DELETE /api/v1/consumer-groups/{group}`).
pub async fn delete(ctx: Ctx, headers: HeaderMap, Path(group): Path<String>) -> Response {
    if !ctx.same_origin(&headers) {
        return cross_site(&ctx).await;
    }
    let uri = format!("/api/v1/consumer-groups/{}", enc(&group));
    match ctx.api.delete(&uri).await {
        Ok(d) => redirect(
            "/ui/groups",
            &Flash::ok(format!(
                "Consumer group {group} deleted with its {} committed offsets",
                human::text(&d["offsets"])
            )),
        ),
        Err(p) => redirect(&format!("/ui/groups/{}", enc(&group)), &Flash::problem(&p)),
    }
}
