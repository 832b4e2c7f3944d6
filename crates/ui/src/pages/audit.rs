//! The audit log: filters, one event with its before and after, and its revert (the API's
//! preview with the live values and a fingerprint, then the revert of exactly that preview).

use askama::Template;
use axum::body::Bytes;
use axum::extract::{Path, RawQuery};
use axum::http::{HeaderMap, StatusCode};
use axum::response::Response;
use serde_json::{json, Value};

use crate::api::query;
use crate::url::enc;
use crate::{
    cross_site, fact, query_form, redirect, render, Cell, Ctx, Fact, Flash, Form, Layout, Notice,
    Table,
};
use crate::{fmt, human};

const PAGE: u64 = 50;

#[derive(Template)]
#[template(path = "audit.html")]
struct ListPage {
    layout: Layout,
    action: String,
    user: String,
    since: String,
    until: String,
    search: String,
    notice: Option<Notice>,
    table: Table,
    prev: Option<String>,
    next: Option<String>,
}

#[derive(Template)]
#[template(path = "audit_event.html")]
struct EventPage {
    layout: Layout,
    id: i64,
    facts: Vec<Fact>,
    summary: String,
    before: String,
    after: String,
    preview: Option<Preview>,
    preview_notice: Option<Notice>,
}

/// The revert preview as the page shows it.
struct Preview {
    facts: Vec<Fact>,
    can_revert: bool,
    fingerprint: String,
    changes: Table,
    conflicts: Table,
}

/// `GET /ui/audit?action=&user=&since=&until=&search=&offset=`.
pub async fn list(ctx: Ctx, RawQuery(raw): RawQuery) -> Response {
    let q = query_form(raw.as_deref());
    let (action, user, since, until, search) = (
        q.get("action").to_string(),
        q.get("user").to_string(),
        q.get("since").to_string(),
        q.get("until").to_string(),
        q.get("search").to_string(),
    );
    let Ok(offset) = (match q.get("offset") {
        "" => Ok(0),
        o => o.parse::<u64>(),
    }) else {
        return ctx
            .bad_request("Audit log", "audit", "offset must be a whole number")
            .await;
    };
    let filters = [
        ("action", action.as_str()),
        ("user", user.as_str()),
        ("since", since.as_str()),
        ("until", until.as_str()),
        ("search", search.as_str()),
    ];
    let mut pairs = filters.to_vec();
    let (limit, off) = (PAGE.to_string(), offset.to_string());
    pairs.push(("limit", &limit));
    pairs.push(("offset", &off));
    let answer = ctx
        .api
        .get(&format!("/api/v1/audit-log{}", query(&pairs)))
        .await;
    let mut table = Table::new(
        "",
        &[
            "Event", "When", "Action", "By", "Status", "Target", "Summary",
        ],
    )
    .empty("No event matches.");
    let (mut prev, mut next, mut notice) = (None, None, None);
    let mut status = StatusCode::OK;
    match &answer {
        Ok(d) => {
            table.caption = format!("{} events, newest first", human::text(&d["total"]));
            for e in fmt::arr(d, "events") {
                let id = human::text(&e["id"]);
                let mut action = Cell::t(human::s(e, "action"));
                if fmt::b(e, "forced") {
                    action = action.sub("forced");
                } else if fmt::b(e, "revertible") {
                    action = action.sub("revertible");
                }
                let st = fmt::i(e, "status").unwrap_or(0);
                table.row(vec![
                    Cell::n(id.clone()).link(format!("/ui/audit/{}", enc(&id))),
                    Cell::t(fmt::time(&human::s(e, "at"))),
                    action,
                    Cell::t(human::s(e, "userId")).sub(human::s(e, "method")),
                    Cell::n(st.to_string()).class(if (200..300).contains(&st) {
                        "ok"
                    } else {
                        "bad"
                    }),
                    Cell::t(human::s(e, "target")).class("wrap"),
                    Cell::t(fmt::clip(&human::inline("", &e["summary"]), 240)).class("wrap"),
                ]);
            }
            let page = |o: u64| {
                let mut p = filters.to_vec();
                let o = o.to_string();
                p.push(("offset", &o));
                format!("/ui/audit{}", query(&p))
            };
            prev = (offset > 0).then(|| page(offset.saturating_sub(PAGE)));
            next = fmt::b(d, "hasMore").then(|| page(offset + PAGE));
        }
        Err(p) => {
            if p.status == 400 {
                status = StatusCode::BAD_REQUEST;
            }
            notice = Some(Notice::from(p));
        }
    }
    let layout = ctx.layout("Audit log", "audit").await;
    render(
        status,
        &ListPage {
            layout,
            action,
            user,
            since,
            until,
            search,
            notice,
            table,
            prev,
            next,
        },
    )
}

/// `GET /ui/audit/{id}`: the event and, for a revertible one, its revert preview.
pub async fn page(ctx: Ctx, Path(id): Path<String>) -> Response {
    let Ok(id) = id.parse::<i64>() else {
        return ctx
            .bad_request(
                "Audit event",
                "audit",
                format!("{id:?} is not an event number"),
            )
            .await;
    };
    let event = match ctx.host.audit_event(id).await {
        Ok(Some(e)) => e,
        Ok(None) => {
            let p = crate::Problem::new(404, "audit event not found", format!("no event {id}"));
            return ctx.problem_page("Audit event", "audit", &p).await;
        }
        Err(p) => return ctx.problem_page("Audit event", "audit", &p).await,
    };
    let mut facts = vec![
        fact("When", fmt::time(&crate::fmt::rfc3339_ms(event.at_ms))),
        fact("Action", event.action.clone()),
        fact("Method", event.method.clone()),
        fact("User", event.user_id.clone().unwrap_or_default()),
        fact(
            "Requested by",
            event.requested_by.clone().unwrap_or_default(),
        ),
        fact("Status", event.status.to_string()).class(if (200..300).contains(&event.status) {
            "ok"
        } else {
            "bad"
        }),
        fact("Target", event.target.clone().unwrap_or_default()),
    ];
    if event.forced {
        facts.push(fact("Forced", "yes: a soft check was overridden").class("warn"));
    }
    if let Some(related) = event.related_event_id {
        facts.push(fact("Related event", related.to_string()).link(format!("/ui/audit/{related}")));
    }
    if let Some(details) = &event.details {
        facts.push(fact("Details", details.clone()));
    }
    let shown = |v: &Option<Value>| match v {
        Some(v) => human::block("", v),
        None => "none recorded".to_string(),
    };
    let (preview, preview_notice) = match ctx
        .api
        .post(
            "/api/v1/audit-log/revert/preview",
            Some(&json!({ "eventId": id })),
        )
        .await
    {
        Ok(p) => (Some(preview(&p)), None),
        Err(p) => (None, Some(Notice::from(&p))),
    };
    let layout = ctx.layout(format!("Audit event {id}"), "audit").await;
    render(
        StatusCode::OK,
        &EventPage {
            layout,
            id,
            facts,
            summary: human::block("", &event.summary),
            before: shown(&event.before),
            after: shown(&event.after),
            preview,
            preview_notice,
        },
    )
}

/// `POST /ui/audit/{id}/revert` (`fingerprint` of the preview the page showed).
pub async fn revert(ctx: Ctx, headers: HeaderMap, Path(id): Path<String>, body: Bytes) -> Response {
    if !ctx.same_origin(&headers) {
        return cross_site(&ctx).await;
    }
    let Ok(event) = id.parse::<i64>() else {
        return ctx
            .bad_request(
                "Audit event",
                "audit",
                format!("{id:?} is not an event number"),
            )
            .await;
    };
    let form = Form::parse(&body);
    let back = format!("/ui/audit/{event}");
    let request = json!({ "eventId": event, "fingerprint": form.get("fingerprint") });
    match ctx
        .api
        .post("/api/v1/audit-log/revert", Some(&request))
        .await
    {
        Ok(d) => {
            let execution = human::s(&d, "executionId");
            let state = human::s(&d, "state");
            let msg = format!(
                "Revert of event {event} accepted ({state}): {} changes; recorded as event {}",
                fmt::arr(&d, "changes").len(),
                human::text(&d["auditEventId"])
            );
            let to = if human::s(&d, "kind") == "reassignment" && !execution.is_empty() {
                format!("/ui/reassignments/{}", enc(&execution))
            } else {
                back
            };
            redirect(&to, &Flash::ok(msg))
        }
        Err(p) => redirect(&back, &Flash::problem(&p)),
    }
}

fn preview(p: &Value) -> Preview {
    let can = fmt::b(p, "canRevert");
    let mut facts = vec![
        fact("Kind", human::s(p, "kind")),
        fact("Can be reverted now", if can { "yes" } else { "no" }).class(if can {
            "ok"
        } else {
            "bad"
        }),
    ];
    if let Some(by) = p["revertedBy"].as_i64() {
        facts.push(fact("Reverted by", format!("event {by}")).link(format!("/ui/audit/{by}")));
    }
    let reason = human::s(p, "reason");
    let conflicts = fmt::arr(p, "conflicts").len();
    if conflicts > 0 {
        // The API's details list every conflict; the table below shows them.
        facts.push(fact(
            "Why not",
            format!(
                "{conflicts} {} changed since the audited change (below): reverting would undo those later changes",
                if conflicts == 1 { "item" } else { "items" }
            ),
        ));
    } else if !reason.is_empty() {
        facts.push(fact("Why not", reason));
    }
    let items = |key: &str, caption: &str, empty: &str| {
        let mut t = Table::new(
            caption,
            &["Item", "After the audited change", "Now", "Revert to"],
        )
        .empty(empty);
        for c in fmt::arr(p, key) {
            t.row(vec![
                Cell::t(human::inline("item", &c["item"])).class("wrap"),
                Cell::t(human::inline("", &c["audited"])).class("wrap"),
                Cell::t(human::inline("", &c["current"])).class("wrap"),
                Cell::t(human::inline("", &c["revertTo"])).class("wrap"),
            ]);
        }
        t
    };
    Preview {
        facts,
        can_revert: can,
        fingerprint: human::s(p, "fingerprint"),
        changes: items(
            "changes",
            "What a revert would change",
            "Nothing would change.",
        ),
        conflicts: items(
            "conflicts",
            "Conflicts: changed since the audited change",
            "No conflict.",
        ),
    }
}
