//! Proposal review: the stored proposals, one proposal in full (moves with cost class and bytes,
//! every broker's loads before and after, the decision and next action, structural limits with
//! their remediation) and its Apply button (`POST /api/v1/proposals/{id}/apply`, optional
//! `force=true`), whose 409 and 403 answers are shown as the API gives them.

use std::collections::BTreeMap;

use askama::Template;
use axum::body::Bytes;
use axum::extract::{Path, RawQuery};
use axum::http::{HeaderMap, StatusCode};
use axum::response::Response;
use serde_json::Value;

use super::{fair_share_table, state_class, BalanceStatus};
use crate::api::query;
use crate::fmt::{self, LOADS};
use crate::human;
use crate::url::enc;
use crate::{
    cross_site, fact, query_form, redirect, render, Cell, Ctx, Fact, Flash, Form, Layout, Notice,
    Table,
};

/// Moves listed on the page; the rest are counted (the API has them all).
const MOVES_SHOWN: usize = 1000;

#[derive(Template)]
#[template(path = "proposal.html")]
struct ProposalPage {
    layout: Layout,
    id: String,
    /// `current` when the page was asked for the current proposal.
    from: String,
    facts: Vec<Fact>,
    decision: Vec<Fact>,
    allowed: bool,
    /// Whether the license allows applying (else the button is disabled and says why).
    licensed: bool,
    balance: BalanceStatus,
    loads: Table,
    before: Table,
    after: Table,
    limits: Table,
    cost: Table,
    moves: Table,
    /// The moves' sort and filters as the reader chose them (`?sort=&topic=&brokerId=`).
    sort: String,
    topic: String,
    broker: String,
    moves_notice: Option<Notice>,
    tripped: Table,
}

#[derive(Template)]
#[template(path = "proposals.html")]
struct ProposalList {
    layout: Layout,
    table: Table,
}

/// `GET /ui/proposals`.
pub async fn list(ctx: Ctx) -> Response {
    let answer = ctx.api.get("/api/v1/proposals?limit=100").await;
    let data = match answer {
        Ok(d) => d,
        Err(p) => return ctx.problem_page("Proposals", "proposal", &p).await,
    };
    let mut table = Table::new(
        format!(
            "{} stored proposals, newest first",
            human::text(&data["total"])
        ),
        &[
            "Proposal",
            "Created",
            "Checked",
            "Current",
            "Moves",
            "Bytes",
            "Recommended",
            "Decision",
        ],
    )
    .empty("No proposal stored yet.");
    for p in fmt::arr(&data, "proposals") {
        let id = human::s(p, "id");
        let d = &p["decision"];
        let decision = if !fmt::b(p, "current") {
            "superseded by a newer proposal".to_string()
        } else if fmt::b(d, "applicationAllowed") {
            "applicable".to_string()
        } else {
            human::s(d, "reason").replace('_', " ")
        };
        table.row(vec![
            Cell::t(id.clone())
                .link(format!("/ui/proposals/{}", enc(&id)))
                .class("mono"),
            Cell::t(fmt::time(&human::s(p, "createdAt"))),
            Cell::t(fmt::time(&human::s(p, "checkedAt"))),
            Cell::t(if fmt::b(p, "current") { "current" } else { "" }).class("ok"),
            Cell::n(human::text(&p["totalReassignments"])),
            Cell::n(fmt::opt(fmt::f(p, "estimatedBytes"), fmt::bytes)),
            Cell::t(human::text(&p["recommended"])),
            Cell::t(decision),
        ]);
    }
    let layout = ctx.layout("Proposals", "proposal").await;
    render(StatusCode::OK, &ProposalList { layout, table })
}

/// `GET /ui/proposals/{id}` (`current` for the current proposal).
pub async fn page(ctx: Ctx, Path(id): Path<String>, RawQuery(raw): RawQuery) -> Response {
    let q = query_form(raw.as_deref());
    let (sort, topic, broker) = (
        q.get("sort").to_string(),
        q.get("topic").trim().to_string(),
        q.get("brokerId").trim().to_string(),
    );
    let uri = if id == "current" {
        "/api/v1/proposals/current".to_string()
    } else {
        format!("/api/v1/proposals/{}", enc(&id))
    };
    let p = match ctx.api.get(&uri).await {
        Ok(p) => p,
        Err(problem) => {
            let title = if id == "current" {
                "Current proposal"
            } else {
                "Proposal"
            };
            return ctx.problem_page(title, "proposal", &problem).await;
        }
    };
    let threshold = ctx.threshold();
    let pid = human::s(&p, "id");
    // The answer embeds the first moves; the table shows up to MOVES_SHOWN of them.
    let mut total = p["totalReassignments"].as_u64().unwrap_or(0) as usize;
    let chosen = !sort.is_empty() || !topic.is_empty() || !broker.is_empty();
    let mut moves_notice = None;
    let moves = if !broker.is_empty() && broker.parse::<i32>().is_err() {
        // Said in the form's words, before the API would name its field.
        moves_notice = Some(Notice {
            message: format!(
                "Broker involved: {broker:?} is not a broker id (a whole number such as 3)"
            ),
            hint: String::new(),
        });
        Vec::new()
    } else if chosen || total > fmt::arr(&p, "reassignments").len() {
        let page = format!(
            "/api/v1/proposals/{}/moves{}",
            enc(&pid),
            query(&[
                ("limit", &MOVES_SHOWN.to_string()),
                ("sort", &sort),
                ("topic", &topic),
                ("brokerId", &broker),
            ])
        );
        match ctx.api.get(&page).await {
            Ok(page) => {
                if chosen {
                    total = page["total"].as_u64().unwrap_or(0) as usize;
                }
                fmt::arr(&page, "moves").to_vec()
            }
            Err(problem) => {
                moves_notice = Some(Notice::from(&problem));
                Vec::new()
            }
        }
    } else {
        fmt::arr(&p, "reassignments").to_vec()
    };
    let title = if id == "current" {
        format!("Current proposal {pid}")
    } else {
        format!("Proposal {pid}")
    };
    let mut layout = ctx.layout(title, "proposal").await;
    if id == "current" {
        layout.refresh = Some(15);
    }
    let d = &p["decision"];
    let licensed = layout.manages();
    let page = ProposalPage {
        licensed,
        layout,
        id: pid,
        from: if id == "current" {
            "current".into()
        } else {
            String::new()
        },
        facts: proposal_facts(&p),
        decision: decision_facts(d, fmt::b(&p, "current")),
        allowed: fmt::b(&p, "current") && fmt::b(d, "applicationAllowed"),
        balance: BalanceStatus::of(&Ok(p.clone())),
        loads: loads_table(&p),
        before: fair_share_table(&p, threshold, false),
        after: fair_share_table(&p, threshold, true),
        limits: limits_table(fmt::arr(&p, "structuralLimits")),
        cost: cost_table(&p),
        moves: moves_table(&moves, total, chosen),
        sort,
        topic,
        broker,
        moves_notice,
        tripped: tripped_table(&p),
    };
    render(StatusCode::OK, &page)
}

/// `POST /ui/proposals/{id}/apply`: applies exactly the proposal the page showed.
pub async fn apply(ctx: Ctx, headers: HeaderMap, Path(id): Path<String>, body: Bytes) -> Response {
    if !ctx.same_origin(&headers) {
        return cross_site(&ctx).await;
    }
    let form = Form::parse(&body);
    let back = if form.get("from") == "current" {
        "/ui/proposals/current".to_string()
    } else {
        format!("/ui/proposals/{}", enc(&id))
    };
    let force = form.checked("force");
    let uri = format!(
        "/api/v1/proposals/{}/apply{}",
        enc(&id),
        if force { "?force=true" } else { "" }
    );
    match ctx.api.post(&uri, None).await {
        Ok(data) => {
            let op = human::s(&data, "operationId");
            let skipped = fmt::arr(&data, "skipped").len();
            let mut message = format!(
                "Applied {id}: {} moves queued as operation {op}",
                human::text(&data["moves"])
            );
            if skipped > 0 {
                message.push_str(&format!(" ({skipped} partitions skipped)"));
            }
            if fmt::b(&data, "forced") {
                message.push_str(&format!(
                    "; forced over: {}",
                    human::text(&data["overridden"])
                ));
            }
            let to = if op.is_empty() {
                back
            } else {
                format!("/ui/reassignments/{}", enc(&op))
            };
            redirect(&to, &Flash::ok(message))
        }
        Err(problem) => redirect(&back, &Flash::problem(&problem)),
    }
}

/// `POST /ui/proposals/generate`: asks the API for the current candidate
/// (`POST /api/v1/proposals/generate`; the observer evaluates every sample, so this starts no
/// calculation) and shows it.
pub async fn generate(ctx: Ctx, headers: HeaderMap) -> Response {
    if !ctx.same_origin(&headers) {
        return cross_site(&ctx).await;
    }
    match ctx.api.post("/api/v1/proposals/generate", None).await {
        Ok(p) => {
            let id = human::s(&p, "id");
            redirect(
                &format!("/ui/proposals/{}", enc(&id)),
                &Flash::ok(format!(
                    "The current candidate is proposal {id} (checked {})",
                    fmt::time(&human::s(&p, "checkedAt"))
                )),
            )
        }
        Err(p) => redirect("/ui/proposals", &Flash::problem(&p)),
    }
}

/// The short facts of a proposal for the overview.
pub fn summary_facts(p: &Value) -> Vec<Fact> {
    let id = human::s(p, "id");
    let d = &p["decision"];
    let (moves_by_class, _) = by_cost_class(p);
    let classes = moves_by_class
        .iter()
        .map(|(class, (n, bytes))| format!("{n} {class} ({})", fmt::bytes(*bytes)))
        .collect::<Vec<_>>()
        .join(", ");
    vec![
        fact("Proposal", id.clone()).link(format!("/ui/proposals/{}", enc(&id))),
        fact("Checked", fmt::time(&human::s(p, "checkedAt"))),
        fact(
            "Moves",
            format!(
                "{} ({} to copy)",
                human::text(&p["totalReassignments"]),
                fmt::opt(fmt::f(&p["movement"], "estimatedBytes"), fmt::bytes)
            ),
        ),
        fact(
            "By cost class",
            if classes.is_empty() {
                "none".into()
            } else {
                classes
            },
        ),
        fact(
            IMBALANCE,
            format!(
                "{} → {}",
                fmt::opt(fmt::f(&p["metrics"], "evennessBefore"), fmt::pct_plain),
                fmt::opt(fmt::f(&p["metrics"], "evennessAfter"), fmt::pct_plain)
            ),
        ),
        fact(
            "Can be applied",
            if fmt::b(d, "applicationAllowed") {
                "yes"
            } else {
                "no"
            },
        )
        .class(if fmt::b(d, "applicationAllowed") {
            "ok"
        } else {
            "warn"
        }),
        fact("Next action", human::s(d, "nextAction")),
    ]
}

fn proposal_facts(p: &Value) -> Vec<Fact> {
    let m = &p["metrics"];
    let mut facts = vec![
        fact("Created", fmt::time(&human::s(p, "createdAt"))),
        fact("Checked", fmt::time(&human::s(p, "checkedAt"))),
        fact("Current", human::text(&p["current"])),
        fact(
            "Recommended",
            // The words (`reasonText`) rather than the code (`reason`), when the plan has them.
            match (human::s(p, "reasonText"), human::s(p, "reason")) {
                (words, _) if !words.is_empty() => {
                    format!("{} ({words})", human::text(&p["recommended"]))
                }
                (_, code) if !code.is_empty() => format!(
                    "{} ({})",
                    human::text(&p["recommended"]),
                    code.replace('_', " ")
                ),
                _ => human::text(&p["recommended"]),
            },
        ),
        fact(
            "Moves",
            format!(
                "{} ({} to copy)",
                human::text(&p["totalReassignments"]),
                fmt::opt(fmt::f(&p["movement"], "estimatedBytes"), fmt::bytes)
            ),
        ),
        fact(
            IMBALANCE,
            format!(
                "{} → {}",
                fmt::opt(fmt::f(m, "evennessBefore"), fmt::pct_plain),
                fmt::opt(fmt::f(m, "evennessAfter"), fmt::pct_plain)
            ),
        ),
        fact(
            "Effective distance",
            format!(
                "{} → {}",
                fmt::opt(fmt::f(m, "effectiveBefore"), fmt::pct_plain),
                fmt::opt(fmt::f(m, "effective"), fmt::pct_plain)
            ),
        ),
        fact("Topology fingerprint", human::s(p, "fingerprint")),
    ];
    if fmt::b(p, "balanceHold") {
        facts.push(
            fact(
                "Balancing paused",
                format!("brokers down: {}", human::ids(&p["downBrokers"])),
            )
            .class("bad"),
        );
    }
    facts
}

/// The label of the root-mean-square distance from fair share (`metrics.evenness*`).
pub const IMBALANCE: &str = "Imbalance (average distance from fair share; 0% is even)";

/// "3 of the 4 needed in a row": the readings confirming a broker beyond the trigger, capped at
/// what is needed (a broker beyond it for 70 readings has confirmed it; the count goes on in the API).
fn readings_confirmed(d: &Value) -> String {
    let need = fmt::i(d, "readingsRequired").unwrap_or(0);
    match fmt::i(d, "readingsBeyondTrigger") {
        None => fmt::UNKNOWN.to_string(),
        Some(n) if need > 0 && n >= need => format!("yes: {need} in a row, as needed"),
        Some(n) => format!("{n} of the {need} needed in a row"),
    }
}

fn decision_facts(d: &Value, current: bool) -> Vec<Fact> {
    if !current {
        // Its decision was about the cluster as it was: only the current proposal can be applied.
        return vec![fact(
            "Application allowed",
            "no — superseded by a newer proposal (only the current one can be applied)",
        )
        .class("warn")];
    }
    let allowed = fmt::b(d, "applicationAllowed");
    let mut facts = vec![
        fact("Application allowed", if allowed { "yes" } else { "no" }).class(if allowed {
            "ok"
        } else {
            "warn"
        }),
        fact("Next action", human::s(d, "nextAction")),
    ];
    let reason = human::s(d, "reason");
    if !reason.is_empty() {
        facts.push(fact("Reason", reason.replace('_', " ")));
    }
    let unsafe_reasons = fmt::arr(d, "unsafeReasons");
    if !unsafe_reasons.is_empty() {
        facts.push(
            fact(
                "Unsafe",
                unsafe_reasons
                    .iter()
                    .map(human::text)
                    .collect::<Vec<_>>()
                    .join(", "),
            )
            .class("bad"),
        );
    }
    facts.push(fact("Confirmed by readings", readings_confirmed(d)));
    if let Some(ms) = fmt::f(d, "warmupRemainingMs").filter(|ms| *ms > 0.0) {
        facts.push(fact("Warm-up remaining", fmt::duration_s(ms / 1000.0)).class("warn"));
    }
    facts
}

fn loads_table(p: &Value) -> Table {
    let loads = &p["fairShare"]["loads"];
    let mut t = Table::new(
        "Per load: fair share, how far the farthest broker is before and after, and whether it triggered",
        &[
            "Load",
            "Fair share",
            "Status",
            "Max distance before",
            "After",
            "Largest difference",
            "Busiest → quietest",
        ],
    );
    for (name, _, long) in LOADS {
        let l = &loads[name];
        let measuring = &l["measuring"];
        let reading = format!(
            "measuring ({} of {} readings)",
            human::text(&measuring["readings"]),
            human::text(&measuring["needed"])
        );
        let status = if measuring.is_object() {
            (reading.as_str(), "warn")
        } else if fmt::b(l, "noTraffic") {
            ("No traffic", "na")
        } else if fmt::b(l, "belowFloor") {
            ("below floor", "na")
        } else if !fmt::b(l, "counted") {
            ("not counted", "na")
        } else if fmt::b(l, "triggered") {
            ("triggered", "bad")
        } else {
            ("within bounds", "ok")
        };
        if measuring.is_object() {
            // Unknown until measured: no figure is shown as if it were zero.
            t.row(vec![
                Cell::t(long),
                Cell::n("unknown"),
                Cell::t(status.0).class(status.1),
                Cell::n("—"),
                Cell::n("—"),
                Cell::n("—"),
                Cell::t("—"),
            ]);
            continue;
        }
        t.row(vec![
            Cell::t(long),
            Cell::n(fmt::load_value(name, fmt::f(l, "fairShare"))),
            Cell::t(status.0).class(status.1),
            Cell::n(fmt::opt(fmt::f(l, "maxDistanceBefore"), fmt::pct_plain)),
            Cell::n(fmt::opt(fmt::f(l, "maxDistanceAfter"), fmt::pct_plain)),
            Cell::n(fmt::load_value(name, fmt::f(l, "largestDifference"))),
            Cell::t(format!(
                "{} → {}",
                human::text(&l["busiestBroker"]),
                human::text(&l["quietestBroker"])
            )),
        ]);
    }
    t
}

/// Structural limits: what no move can fix, and what would.
pub fn limits_table(limits: &[Value]) -> Table {
    let mut t = Table::new(
        "Structural limits: brokers no move can bring within bounds, and what would help",
        &["Broker", "Load", "Distance", "Cause", "Remediation"],
    )
    .empty("None: every broker can be brought within bounds.");
    for l in limits {
        t.row(vec![
            Cell::t(human::text(&l["brokerId"])),
            Cell::t(fmt::load_label(&human::s(l, "load"))),
            Cell::n(fmt::opt(fmt::f(l, "distance"), fmt::pct)),
            Cell::t(human::s(l, "cause")),
            Cell::t(human::s(l, "remediation")).class("wrap"),
        ]);
    }
    t
}

/// Moves and bytes per cost class (every move, from the answer's totals), and the total.
fn by_cost_class(p: &Value) -> (BTreeMap<String, (u64, f64)>, usize) {
    let mut classes: BTreeMap<String, (u64, f64)> = BTreeMap::new();
    if let Some(counted) = p["movement"]["costClasses"].as_object() {
        for (class, c) in counted {
            classes.insert(
                class.clone(),
                (
                    c["moves"].as_u64().unwrap_or(0),
                    fmt::f(c, "bytes").unwrap_or(0.0),
                ),
            );
        }
    }
    let total = p["totalReassignments"].as_u64().unwrap_or(0) as usize;
    (classes, total)
}

fn cost_table(p: &Value) -> Table {
    let (classes, _) = by_cost_class(p);
    let mut t = Table::new(
        "Moves by cost class",
        &["Cost class", "Moves", "Bytes to copy"],
    )
    .empty("No moves.");
    for (class, (n, bytes)) in classes {
        t.row(vec![
            Cell::t(class),
            Cell::n(n.to_string()),
            Cell::n(fmt::bytes(bytes)),
        ]);
    }
    t
}

/// A move list (proposal, what-if): partition, replicas and leader before and after, cost
/// class, bytes.
/// Rows of moves; `extra` names one more field shown last (`cause` of a what-if, `reason` of a
/// proposal's move).
pub fn move_rows(t: &mut Table, moves: &[Value], extra: Option<&str>) {
    for m in moves.iter().take(MOVES_SHOWN) {
        let topic = human::s(m, "topic");
        let mut row = vec![
            Cell::t(format!("{topic}-{}", human::text(&m["partition"])))
                .link(format!("/ui/topics/{}", enc(&topic))),
            Cell::t(format!(
                "[{}] → [{}]",
                human::ids(&m["replicasBefore"]),
                human::ids(&m["replicasAfter"])
            )),
            Cell::t(format!(
                "{} → {}",
                human::text(&m["leaderBefore"]),
                human::text(&m["leaderAfter"])
            )),
            Cell::t(human::s(m, "costClass")),
            Cell::n(fmt::opt(fmt::f(m, "bytes"), fmt::bytes)),
        ];
        if let Some(key) = extra {
            row.push(Cell::t(human::s(m, key)).class("wrap"));
        }
        t.row(row);
    }
}

fn moves_table(moves: &[Value], total: usize, filtered: bool) -> Table {
    let which = if filtered { "matching moves" } else { "moves" };
    let caption = if total > moves.len() {
        format!(
            "The first {} of {total} {which} (the API pages every one: GET /api/v1/proposals/{{id}}/moves)",
            moves.len()
        )
    } else {
        format!("{total} {which}")
    };
    let mut t = Table::new(
        caption,
        &[
            "Partition",
            "Replicas",
            "Leader",
            "Cost class",
            "Bytes",
            "Why",
        ],
    )
    .empty(if filtered {
        "No move matches."
    } else {
        "No moves: nothing to apply."
    });
    move_rows(&mut t, moves, Some("reason"));
    t
}

fn tripped_table(p: &Value) -> Table {
    let mut t = Table::new(
        "Brokers beyond the trigger and whether the plan helps them",
        &["Broker", "Load", "Before", "After", "Helped"],
    )
    .empty("No broker is beyond the trigger.");
    for e in fmt::arr(&p["benefitEvidence"], "tripped") {
        let helped = fmt::b(e, "helped");
        t.row(vec![
            Cell::t(human::text(&e["brokerId"])),
            Cell::t(fmt::load_label(&human::s(e, "load"))),
            Cell::n(fmt::opt(fmt::f(e, "distanceBefore"), fmt::pct)),
            Cell::n(fmt::opt(fmt::f(e, "distanceAfter"), fmt::pct)),
            Cell::t(if helped { "yes" } else { "no" }).class(state_class(if helped {
                "ok"
            } else {
                "warn"
            })),
        ]);
    }
    t
}
