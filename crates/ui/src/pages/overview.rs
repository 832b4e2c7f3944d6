//! `/ui`: cluster health, the brokers' loads against fair share, the balance status, the current
//! proposal and recent operations. Refreshes itself every 10 seconds.

use askama::Template;
use axum::http::StatusCode;
use axum::response::Response;
use serde_json::Value;

use super::{fair_share_table, state_class, BalanceStatus};
use crate::fmt;
use crate::human;
use crate::{fact, render, Cell, Ctx, Fact, Layout, Notice, Table};

#[derive(Template)]
#[template(path = "overview.html")]
struct Overview {
    layout: Layout,
    cards: Vec<Fact>,
    cluster_notice: Option<Notice>,
    health: Vec<Fact>,
    controllers: Option<Table>,
    balance: BalanceStatus,
    loads: Option<Table>,
    proposal: Vec<Fact>,
    operations: Table,
    operations_notice: Option<Notice>,
    workers: Table,
}

pub async fn page(ctx: Ctx) -> Response {
    let (cluster, health, proposal, ops, system) = tokio::join!(
        ctx.api.get("/api/v1/cluster"),
        ctx.api.get("/api/v1/cluster/health?limit=10"),
        ctx.api.get("/api/v1/proposals/current"),
        ctx.api.get("/api/v1/reassignments?limit=5"),
        ctx.api.get("/api/v1/health"),
    );
    let mut layout = ctx.layout("Overview", "overview").await;
    layout.refresh = Some(10);

    let (cards, cluster_notice) = match &cluster {
        Ok(c) => (cluster_cards(c), None),
        Err(p) => (Vec::new(), Some(Notice::from(p))),
    };
    let health = match &health {
        Ok(h) => health_facts(h),
        Err(p) => vec![fact("health", p.message()).class("bad")],
    };
    let controllers = cluster
        .as_ref()
        .ok()
        .map(|c| controllers_table(&c["controllers"]));
    let balance = BalanceStatus::of(&proposal);
    let (loads, proposal_facts) = match &proposal {
        Ok(p) => (
            Some(fair_share_table(p, ctx.threshold(), false)),
            super::proposals::summary_facts(p),
        ),
        Err(_) => (None, Vec::new()),
    };
    let (operations, operations_notice) = match &ops {
        Ok(o) => (
            super::reassignments::operations_table(o, "Recent operations"),
            None,
        ),
        Err(p) => (Table::new("Recent operations", &[]), Some(Notice::from(p))),
    };
    let workers = match &system {
        Ok(s) => super::system::workers_table(s),
        Err(_) => Table::new("Workers", &[]),
    };
    render(
        StatusCode::OK,
        &Overview {
            layout,
            cards,
            cluster_notice,
            health,
            controllers,
            balance,
            loads,
            proposal: proposal_facts,
            operations,
            operations_notice,
            workers,
        },
    )
}

/// The active controller; "unknown" when the quorum could not be read. An id that is in no
/// broker list says what it is: a dedicated controller (a voter of the metadata quorum).
fn controller_text(c: &Value) -> String {
    if c["controllerId"].is_null() && c["controllerSource"] == "unknown" {
        return "unknown".into();
    }
    let id = &c["controllerId"];
    let role = fmt::arr(&c["controllers"], "nodes")
        .iter()
        .find(|n| &n["id"] == id)
        .and_then(|n| n["role"].as_str());
    match role {
        Some("controller") => format!("{} (dedicated controller)", human::text(id)),
        Some("both") => format!("{} (broker and controller)", human::text(id)),
        _ => human::text(id),
    }
}

/// Every voter and observer of the metadata quorum (on ZooKeeper the controller broker): role,
/// endpoint, leader, lag, last fetch and catch-up, up or down with why.
fn controllers_table(c: &Value) -> Table {
    let mut t = Table::new(
        "Controllers and the metadata quorum",
        &[
            "Node",
            "Role",
            "Endpoint",
            "Leader",
            "Lag (records)",
            "Last fetch",
            "Caught up",
            "State",
        ],
    );
    t.empty = "No controller known yet.".into();
    let ago = |v: &Value| match v.as_f64() {
        Some(ms) => format!(
            "{} before the leader's answer",
            fmt::duration_s(ms / 1000.0)
        ),
        None => String::new(),
    };
    for n in fmt::arr(c, "nodes") {
        let role = match n["role"].as_str() {
            Some("controller") => "controller (voter)",
            Some("both") => "broker and controller (voter)",
            Some("broker") if n["voter"] == true => "broker (voter)",
            Some("broker") if c["quorum"].is_null() => "broker (ZooKeeper controller)",
            Some("broker") => "broker (observer)",
            _ => "",
        };
        let endpoints = fmt::arr(n, "endpoints")
            .iter()
            .map(|e| {
                format!(
                    "{} {}:{}",
                    human::s(e, "listener"),
                    human::s(e, "host"),
                    human::text(&e["port"])
                )
            })
            .collect::<Vec<_>>()
            .join(", ");
        let (state, class) = match n["up"].as_bool() {
            Some(true) => ("up".to_string(), "ok"),
            Some(false) => (format!("down: {}", human::s(n, "downReason")), "bad"),
            None if n["voter"] == true => ("not known".to_string(), ""),
            None => (String::new(), ""),
        };
        t.row(vec![
            Cell::t(human::text(&n["id"])),
            Cell::t(role),
            Cell::t(endpoints),
            Cell::t(if n["leader"] == true { "leader" } else { "" }),
            Cell::n(human::text(&n["lag"])),
            Cell::t(ago(&n["fetchAgeMs"])),
            Cell::t(ago(&n["caughtUpAgeMs"])),
            Cell::t(state).class(class),
        ]);
    }
    t
}

/// "3.5 to 3.6, KRaft": the release range and the metadata mode.
fn kafka_text(c: &Value) -> String {
    let mode = match c["metadataMode"].as_str() {
        Some("kraft") => "KRaft",
        Some("zookeeper") => "ZooKeeper",
        _ => return "unknown".into(),
    };
    match c["kafkaVersion"]["text"].as_str() {
        Some(v) => format!("{v}, {mode}"),
        None => mode.into(),
    }
}

fn cluster_cards(c: &Value) -> Vec<Fact> {
    let brokers = &c["brokers"];
    let down = fmt::arr(brokers, "down").len();
    let mut cards = vec![
        fact("Cluster", human::s(c, "clusterId")).class("small"),
        fact("Controller", controller_text(c)),
        fact("Kafka", kafka_text(c)).class("small"),
        fact(
            "Brokers alive",
            format!(
                "{} of {}",
                human::text(&brokers["alive"]),
                human::text(&brokers["total"])
            ),
        )
        .class(if down > 0 { "bad" } else { "ok" }),
        fact("Racks", human::text(&c["racks"])),
        fact("Topics", human::text(&c["topics"])),
        fact("Partitions", human::text(&c["partitions"])),
        fact(
            "Under-replicated",
            human::text(&c["underReplicatedPartitions"]),
        )
        .class(if fmt::i(c, "underReplicatedPartitions").unwrap_or(0) > 0 {
            "warn"
        } else {
            ""
        }),
        fact("Offline partitions", human::text(&c["offlinePartitions"])).class(
            if fmt::i(c, "offlinePartitions").unwrap_or(0) > 0 {
                "bad"
            } else {
                ""
            },
        ),
        fact("Consumer groups", human::text(&c["consumerGroups"])),
        fact(
            "Data (one copy)",
            fmt::opt(fmt::f(c, "sizeBytes"), fmt::bytes),
        ),
        fact(
            "Produce",
            fmt::opt(fmt::f(c, "producerByteRate"), fmt::byte_rate),
        ),
        fact(
            "Consume",
            fmt::opt(fmt::f(c, "consumerByteRate"), fmt::byte_rate),
        ),
    ];
    let age = fmt::f(c, "ageMs").unwrap_or(0.0) / 1000.0;
    cards.push(fact("Observed", format!("{} ago", fmt::duration_s(age))));
    cards
}

fn health_facts(h: &Value) -> Vec<Fact> {
    let status = human::s(h, "status");
    let parts = &h["partitions"];
    let mut facts = vec![
        fact(
            "Status",
            match (h["quorum"]["status"].as_str(), h["quorum"]["text"].as_str()) {
                (Some(q), Some(text)) if q != "healthy" => format!("{status} · {text}"),
                _ => status.clone(),
            },
        )
        .class(state_class(&status)),
        fact(
            "Metadata quorum",
            match h["quorum"]["text"].as_str() {
                Some(text) => text.to_string(),
                None => "no KRaft quorum (ZooKeeper) or not read".to_string(),
            },
        )
        .class(match h["quorum"]["status"].as_str() {
            Some("healthy") => "ok",
            Some("degraded") => "warn",
            Some("critical") => "bad",
            _ => "",
        }),
        fact(
            "Brokers down",
            match fmt::arr(&h["brokers"], "down") {
                [] => "none".to_string(),
                down => human::ids(&Value::Array(down.to_vec())),
            },
        ),
        fact(
            "Partitions",
            format!(
                "{} total · {} offline · {} under-replicated{} · {} under min ISR · {} at min ISR",
                human::text(&parts["total"]),
                human::text(&parts["offline"]),
                human::text(&parts["underReplicated"]),
                match fmt::i(parts, "underReplicatedByReassignment") {
                    Some(n) if n > 0 && Some(n) == fmt::i(parts, "underReplicated") => {
                        " (all of them by a reassignment in progress: their new replicas are still copying)".to_string()
                    }
                    Some(n) if n > 0 => format!(
                        " ({n} of them by a reassignment in progress: their new replicas are still copying)"
                    ),
                    _ => String::new(),
                },
                human::text(&parts["underMinIsr"]),
                human::text(&parts["atMinIsr"])
            ),
        ),
        fact(
            "Unclean-election risk",
            match fmt::i(parts, "uncleanElectionRisk") {
                Some(0) => "none: every partition below min ISR has an eligible leader replica (KIP-966)".to_string(),
                Some(n) => format!("{n} partitions below min ISR with no eligible leader replica"),
                None => "not known (the brokers do not report eligible leader replicas)".to_string(),
            },
        )
        .class(if fmt::i(parts, "uncleanElectionRisk").unwrap_or(0) > 0 {
            "bad"
        } else {
            ""
        }),
        fact(
            "Rack assessment",
            format!(
                "{} · {} partitions not rack-aware",
                human::s(&h["rackAssessment"], "status"),
                human::text(&h["rackAssessment"]["notRackAwarePartitions"])
            ),
        ),
    ];
    let offline_dirs = fmt::arr(h, "offlineLogDirs");
    if !offline_dirs.is_empty() {
        facts.push(
            fact(
                "Offline log dirs",
                offline_dirs
                    .iter()
                    .map(|d| {
                        format!(
                            "broker {} {}",
                            human::text(&d["brokerId"]),
                            human::s(d, "path")
                        )
                    })
                    .collect::<Vec<_>>()
                    .join(", "),
            )
            .class("bad"),
        );
    }
    facts
}
