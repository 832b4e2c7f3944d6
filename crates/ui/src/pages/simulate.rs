//! What-if and blast radius: forms whose answers come from `POST /api/v1/what-if/simulate` and
//! `POST /api/v1/blast-radius/analyze` (read-only: nothing changes), shown on the same page.

use askama::Template;
use axum::body::Bytes;
use axum::http::StatusCode;
use axum::response::Response;
use serde_json::{json, Map, Value};

use super::proposals::{limits_table, move_rows};
use crate::fmt::{self, LOADS};
use crate::human;
use crate::{fact, render, Cell, Ctx, Fact, Form, Layout, Notice, Table};

/// A scenario field: its name and whether it is a whole number.
type Field = (&'static str, bool);

/// Scenario types, their labels and the fields each takes.
const TYPES: [(&str, &str, &[Field]); 7] = [
    (
        "addBrokers",
        "add brokers",
        &[("count", true), ("brokerIds", true), ("rack", false)],
    ),
    (
        "removeBrokers",
        "remove (decommission) brokers",
        &[("brokerIds", true)],
    ),
    (
        "changeReplicationFactor",
        "change a topic's replication factor",
        &[("topic", false), ("replicationFactor", true)],
    ),
    (
        "scaleTraffic",
        "scale traffic",
        &[("factor", false), ("topic", false), ("sizeFactor", false)],
    ),
    (
        "addTopic",
        "add a topic",
        &[
            ("topic", false),
            ("partitions", true),
            ("replicationFactor", true),
            ("minInsyncReplicas", true),
            ("sizeBytes", false),
            ("producerMsgRate", false),
            ("producerByteRate", false),
            ("consumerMsgRate", false),
            ("consumerByteRate", false),
        ],
    ),
    (
        "addPartitions",
        "add partitions to a topic",
        &[("topic", false), ("partitions", true)],
    ),
    ("deleteTopic", "delete a topic", &[("topic", false)]),
];

/// Every field of the scenario form, in the API's names.
const FIELDS: [&str; 14] = [
    "count",
    "brokerIds",
    "rack",
    "topic",
    "replicationFactor",
    "factor",
    "sizeFactor",
    "partitions",
    "minInsyncReplicas",
    "sizeBytes",
    "producerMsgRate",
    "producerByteRate",
    "consumerMsgRate",
    "consumerByteRate",
];

#[derive(Template)]
#[template(path = "what_if.html")]
struct WhatIfPage {
    layout: Layout,
    types: Vec<(&'static str, &'static str, bool)>,
    values: Vec<(&'static str, String)>,
    advanced: String,
    notice: Option<Notice>,
    result: Option<WhatIfResult>,
}

impl WhatIfPage {
    fn value(&self, name: &str) -> &str {
        self.values
            .iter()
            .find(|(k, _)| *k == name)
            .map_or("", |(_, v)| v.as_str())
    }
}

struct WhatIfResult {
    scenarios: Vec<String>,
    warnings: Table,
    plan: Vec<Fact>,
    movement: Vec<Fact>,
    cost: Table,
    brokers: Table,
    limits: Table,
    moves: Table,
    added: Table,
}

#[derive(Template)]
#[template(path = "blast_radius.html")]
struct BlastPage {
    layout: Layout,
    brokers: Vec<String>,
    racks: Vec<String>,
    broker_id: String,
    broker_ids: String,
    rack: String,
    notice: Option<Notice>,
    result: Option<BlastResult>,
}

struct BlastResult {
    failure: Vec<Fact>,
    summary: Vec<Fact>,
    partitions: Table,
    leaders: Table,
    rereplication: Vec<Fact>,
    destinations: Table,
    groups: Table,
    topics: Table,
}

/// `GET /ui/what-if`: the form.
pub async fn what_if(ctx: Ctx) -> Response {
    let values = FIELDS.iter().map(|f| (*f, String::new())).collect();
    what_if_page(
        ctx,
        "addBrokers",
        values,
        String::new(),
        None,
        None,
        StatusCode::OK,
    )
    .await
}

/// `POST /ui/what-if`: simulate and show the answer under the form.
pub async fn what_if_run(ctx: Ctx, body: Bytes) -> Response {
    let form = Form::parse(&body);
    let kind = form.get("type").to_string();
    let values: Vec<(&'static str, String)> = FIELDS
        .iter()
        .map(|f| (*f, form.get(f).to_string()))
        .collect();
    let advanced = form.get("scenarios").to_string();
    let request = if advanced.is_empty() {
        let Some((_, _, fields)) = TYPES.iter().find(|(t, _, _)| *t == kind) else {
            let notice = Notice {
                message: format!("unknown scenario type {kind:?}"),
                hint: "Choose one of the listed scenarios.".into(),
            };
            return what_if_page(
                ctx,
                "addBrokers",
                values,
                advanced,
                Some(notice),
                None,
                StatusCode::BAD_REQUEST,
            )
            .await;
        };
        let mut scenario = Map::new();
        scenario.insert("type".into(), json!(kind));
        for (name, integer) in *fields {
            let raw = form.get(name);
            if raw.is_empty() {
                continue;
            }
            scenario.insert(name.to_string(), field_value(name, raw, *integer));
        }
        json!({ "scenarios": [Value::Object(scenario)], "limit": 500 })
    } else {
        match serde_json::from_str::<Value>(&advanced) {
            Ok(Value::Array(list)) => json!({ "scenarios": list, "limit": 500 }),
            Ok(Value::Object(o)) => Value::Object(o),
            Ok(_) | Err(_) => {
                let notice = Notice {
                    message: "the scenarios JSON does not parse as a list of scenarios".into(),
                    hint: r#"Write e.g. [{"type": "addBrokers", "count": 1}], or clear it to use the form."#.into(),
                };
                return what_if_page(
                    ctx,
                    &kind,
                    values,
                    advanced,
                    Some(notice),
                    None,
                    StatusCode::BAD_REQUEST,
                )
                .await;
            }
        }
    };
    match ctx
        .api
        .post("/api/v1/what-if/simulate", Some(&request))
        .await
    {
        Ok(d) => {
            let result = what_if_result(&d, ctx.threshold());
            what_if_page(
                ctx,
                &kind,
                values,
                advanced,
                None,
                Some(result),
                StatusCode::OK,
            )
            .await
        }
        Err(p) => {
            let status = StatusCode::from_u16(p.status).unwrap_or(StatusCode::BAD_REQUEST);
            what_if_page(
                ctx,
                &kind,
                values,
                advanced,
                Some(Notice::in_form_words(&p, &WHAT_IF_LABELS)),
                None,
                status,
            )
            .await
        }
    }
}

/// The what-if form's labels for the API's field names (what_if.html).
/// Only names that are never ordinary words: "topic" or "rack" in a message are the things.
const WHAT_IF_LABELS: [(&str, &str); 9] = [
    ("brokerIds", "Broker ids"),
    ("replicationFactor", "Replication factor"),
    ("sizeFactor", "Size factor"),
    ("minInsyncReplicas", "min.insync.replicas"),
    ("sizeBytes", "Size in bytes"),
    ("producerMsgRate", "Produce msg/s"),
    ("producerByteRate", "Produce bytes/s"),
    ("consumerMsgRate", "Consume msg/s"),
    ("consumerByteRate", "Consume bytes/s"),
];

/// A form value as JSON: broker id lists and numbers as numbers where they parse, else the text
/// as typed (the API then names the field and the problem).
fn field_value(name: &str, raw: &str, integer: bool) -> Value {
    if name == "brokerIds" {
        let ids: Result<Vec<i64>, _> = raw.split(',').map(|s| s.trim().parse::<i64>()).collect();
        return match ids {
            Ok(ids) => json!(ids),
            Err(_) => json!(raw),
        };
    }
    if name == "topic" || name == "rack" {
        return json!(raw);
    }
    if integer {
        if let Ok(n) = raw.parse::<i64>() {
            return json!(n);
        }
    }
    match raw.parse::<f64>() {
        Ok(f) if f.is_finite() => json!(f),
        _ => json!(raw),
    }
}

async fn what_if_page(
    ctx: Ctx,
    kind: &str,
    values: Vec<(&'static str, String)>,
    advanced: String,
    notice: Option<Notice>,
    result: Option<WhatIfResult>,
    status: StatusCode,
) -> Response {
    let layout = ctx.layout("What-if", "what-if").await;
    render(
        status,
        &WhatIfPage {
            layout,
            types: TYPES
                .iter()
                .map(|(t, label, _)| (*t, *label, *t == kind))
                .collect(),
            values,
            advanced,
            notice,
            result,
        },
    )
}

fn what_if_result(d: &Value, threshold: f64) -> WhatIfResult {
    let scenarios = fmt::arr(d, "scenarios")
        .iter()
        .map(|s| format!("{}: {}", human::s(s, "type"), human::s(s, "summary")))
        .collect();
    let mut warnings =
        Table::new("Warnings", &["Code", "Scenario", "Message"]).empty("No warnings.");
    for w in fmt::arr(d, "warnings") {
        warnings.row(vec![
            Cell::t(human::s(w, "code")).class("mono"),
            Cell::n(human::text(&w["scenario"])),
            Cell::t(human::s(w, "message")).class("wrap"),
        ]);
    }
    let p = &d["plan"];
    let mut plan = vec![
        fact(
            "Recommended",
            match human::s(p, "reason") {
                r if r.is_empty() => human::text(&p["recommended"]),
                r => format!("{} ({r})", human::text(&p["recommended"])),
            },
        ),
        fact(
            super::proposals::IMBALANCE,
            format!(
                "{} → {}",
                fmt::opt(fmt::f(p, "evennessBefore"), fmt::pct_plain),
                fmt::opt(fmt::f(p, "evennessAfter"), fmt::pct_plain)
            ),
        ),
        fact(
            "Effective distance",
            format!(
                "{} → {}",
                fmt::opt(fmt::f(p, "effectiveBefore"), fmt::pct_plain),
                fmt::opt(fmt::f(p, "effectiveAfter"), fmt::pct_plain)
            ),
        ),
    ];
    if fmt::b(p, "balanceHold") {
        plan.push(
            fact(
                "Balancing paused",
                format!("brokers down: {}", human::ids(&p["downBrokers"])),
            )
            .class("bad"),
        );
    }
    let m = &d["movement"];
    let t = &m["transfer"];
    let movement = vec![
        fact("Moves", human::text(&m["moves"])),
        fact("Bytes to copy", fmt::opt(fmt::f(m, "bytes"), fmt::bytes)),
        fact(
            "Replicas added / removed",
            format!(
                "{} / {}",
                human::text(&m["replicasAdded"]),
                human::text(&m["replicasRemoved"])
            ),
        ),
        fact("Leader changes", human::text(&m["leaderChanges"])),
        fact(
            "Copy time at the throttle",
            format!(
                "{} (one broker at a time) to {} (every broker at once; busiest broker {})",
                fmt::opt(fmt::f(t, "estimatedSeconds"), fmt::duration_s),
                fmt::opt(fmt::f(t, "estimatedSecondsParallel"), fmt::duration_s),
                human::text(&t["busiestBroker"])
            ),
        ),
        fact(
            "Throttle",
            format!(
                "{} MB/s per broker ({})",
                human::text(&d["throttle"]["rateMb"]),
                human::s(&d["throttle"], "source")
            ),
        ),
    ];
    let mut cost = Table::new("Moves by cost class", &["Cost class", "Moves", "Bytes"]);
    if let Some(classes) = m["byCostClass"].as_object() {
        for (class, v) in classes {
            cost.row(vec![
                Cell::t(class.clone()),
                Cell::n(human::text(&v["moves"])),
                Cell::n(fmt::opt(fmt::f(v, "bytes"), fmt::bytes)),
            ]);
        }
    }
    let mut head = vec!["Broker", "Rack", "Change"];
    head.extend(LOADS.iter().map(|(_, short, _)| *short));
    let mut brokers = Table::new(
        "Every broker: load after the moves, and its distance from fair share with the scenario applied before → after the moves",
        &head,
    );
    for b in fmt::arr(d, "brokers") {
        let change = human::s(b, "change");
        let mut row = vec![
            Cell::t(format!("broker {}", human::text(&b["brokerId"]))),
            Cell::t(human::s(b, "rack")),
            Cell::t(change.clone()).class(match change.as_str() {
                "added" => "ok",
                "removed" => "bad",
                _ => "",
            }),
        ];
        for (name, _, long) in LOADS {
            let after = b["loadsAfter"][name].as_f64();
            let d_before = b["distanceBeforeMoves"][name].as_f64();
            let d_after = b["distanceAfter"][name].as_f64();
            let label = format!(
                "broker {} {long}: {} after the moves, {} from fair share",
                human::text(&b["brokerId"]),
                fmt::load_value(name, after),
                fmt::opt(d_after, fmt::pct)
            );
            let fair = d["fairShare"]["after"][name].as_f64();
            row.push(
                Cell::t(fmt::load_value(name, after))
                    .class("load")
                    .sub(format!(
                        "{} → {}",
                        fmt::opt(d_before, fmt::pct),
                        fmt::opt(d_after, fmt::pct)
                    ))
                    .svg(crate::svg::load_bar(
                        after, fair, d_after, threshold, &label,
                    )),
            );
        }
        brokers.row(row);
    }
    let moves_list = fmt::arr(d, "moves");
    let mut moves = Table::new(
        if fmt::b(d, "movesTruncated") {
            format!("The first {} moves", moves_list.len())
        } else {
            format!("{} moves", moves_list.len())
        },
        &[
            "Partition",
            "Replicas",
            "Leader",
            "Cost class",
            "Bytes",
            "Cause",
        ],
    )
    .empty("No move is needed.");
    move_rows(&mut moves, moves_list, Some("cause"));
    let mut added = Table::new(
        "Added topics",
        &["Topic", "Partitions", "Replication factor", "Requested"],
    )
    .empty("No topic added.");
    for t in fmt::arr(d, "addedTopics") {
        added.row(vec![
            Cell::t(human::s(t, "topic")),
            Cell::n(human::text(&t["partitions"])),
            Cell::n(human::text(&t["replicationFactor"])),
            Cell::n(human::text(&t["requestedReplicationFactor"])),
        ]);
    }
    WhatIfResult {
        scenarios,
        warnings,
        plan,
        movement,
        cost,
        brokers,
        limits: limits_table(fmt::arr(p, "structuralLimits")),
        moves,
        added,
    }
}

/// `GET /ui/blast-radius`: the form.
pub async fn blast_radius(ctx: Ctx) -> Response {
    blast_page(
        ctx,
        String::new(),
        String::new(),
        String::new(),
        None,
        None,
        StatusCode::OK,
    )
    .await
}

/// `POST /ui/blast-radius`: analyze and show the answer under the form.
pub async fn blast_radius_run(ctx: Ctx, body: Bytes) -> Response {
    let form = Form::parse(&body);
    let (broker_id, broker_ids, rack) = (
        form.get("brokerId").to_string(),
        form.get("brokerIds").to_string(),
        form.get("rack").to_string(),
    );
    let given = [&broker_id, &broker_ids, &rack]
        .iter()
        .filter(|v| !v.trim().is_empty())
        .count();
    if given != 1 {
        let notice = Notice {
            message: format!(
                "Choose exactly one of One broker, Several brokers or A rack ({given} chosen)"
            ),
            hint: String::new(),
        };
        return blast_page(
            ctx,
            broker_id,
            broker_ids,
            rack,
            Some(notice),
            None,
            StatusCode::BAD_REQUEST,
        )
        .await;
    }
    let mut request = json!({ "limit": 200 });
    if !broker_id.is_empty() {
        request["brokerId"] = field_value("brokerId", &broker_id, true);
    }
    if !broker_ids.is_empty() {
        request["brokerIds"] = field_value("brokerIds", &broker_ids, true);
    }
    if !rack.is_empty() {
        request["rack"] = json!(rack);
    }
    match ctx
        .api
        .post("/api/v1/blast-radius/analyze", Some(&request))
        .await
    {
        Ok(d) => {
            let result = blast_result(&d);
            blast_page(
                ctx,
                broker_id,
                broker_ids,
                rack,
                None,
                Some(result),
                StatusCode::OK,
            )
            .await
        }
        Err(p) => {
            let status = StatusCode::from_u16(p.status).unwrap_or(StatusCode::BAD_REQUEST);
            blast_page(
                ctx,
                broker_id,
                broker_ids,
                rack,
                Some(Notice::in_form_words(
                    &p,
                    &[("brokerId", "One broker"), ("brokerIds", "Several brokers")],
                )),
                None,
                status,
            )
            .await
        }
    }
}

async fn blast_page(
    ctx: Ctx,
    broker_id: String,
    broker_ids: String,
    rack: String,
    notice: Option<Notice>,
    result: Option<BlastResult>,
    status: StatusCode,
) -> Response {
    let racks_answer = ctx
        .api
        .get("/api/v1/brokers/racks")
        .await
        .unwrap_or(Value::Null);
    let mut brokers: Vec<i64> = fmt::arr(&racks_answer, "racks")
        .iter()
        .flat_map(|r| fmt::arr(r, "brokers").iter().filter_map(Value::as_i64))
        .chain(
            fmt::arr(&racks_answer, "brokersWithoutRack")
                .iter()
                .filter_map(Value::as_i64),
        )
        .collect();
    brokers.sort_unstable();
    let racks = fmt::arr(&racks_answer, "racks")
        .iter()
        .map(|r| human::s(r, "rack"))
        .collect();
    let layout = ctx.layout("Blast radius", "blast-radius").await;
    render(
        status,
        &BlastPage {
            layout,
            brokers: brokers.iter().map(i64::to_string).collect(),
            racks,
            broker_id,
            broker_ids,
            rack,
            notice,
            result,
        },
    )
}

fn blast_result(d: &Value) -> BlastResult {
    let f = &d["failure"];
    let failure = vec![
        fact("Failure", human::s(f, "kind")),
        fact("Brokers failing", human::ids(&f["brokers"])),
        fact("Rack", human::s(f, "rack")),
        fact("Already down", human::ids(&f["alreadyDown"])),
        fact("Brokers remaining", human::text(&f["brokersRemaining"])),
    ];
    let s = &d["summary"];
    let bad = |key: &str| {
        if fmt::i(s, key).unwrap_or(0) > 0 {
            "bad"
        } else {
            "ok"
        }
    };
    let summary = vec![
        fact("Partitions affected", human::text(&s["partitionsAffected"])),
        fact("Offline", human::text(&s["offline"])).class(bad("offline")),
        fact("Under min ISR", human::text(&s["underMinIsr"])).class(bad("underMinIsr")),
        fact("At min ISR", human::text(&s["atMinIsr"])),
        fact("Under-replicated", human::text(&s["underReplicated"])),
        fact(
            "Leaders lost / failed over",
            format!(
                "{} / {}",
                human::text(&s["leadersLost"]),
                human::text(&s["leadersFailedOver"])
            ),
        ),
        fact("Replicas lost", human::text(&s["replicasLost"])),
        fact("Topics affected", human::text(&s["topicsAffected"])),
        fact(
            "Consumer groups affected",
            human::text(&s["consumerGroupsAffected"]),
        ),
    ];
    let mut partitions = Table::new(
        "Partitions that go offline, under or at min ISR",
        &[
            "Partition",
            "After",
            "Replicas",
            "Leader",
            "ISR",
            "Min ISR",
            "Size",
        ],
    )
    .empty("No partition goes offline or below min ISR.");
    for (key, label, class) in [
        ("offline", "offline", "bad"),
        ("underMinIsr", "under min ISR", "bad"),
        ("atMinIsr", "at min ISR", "warn"),
    ] {
        for p in fmt::arr(&d[key], "partitions") {
            partitions.row(vec![
                Cell::t(format!(
                    "{}-{}",
                    human::s(p, "topic"),
                    human::text(&p["partition"])
                )),
                Cell::t(label).class(class),
                Cell::t(human::ids(&p["replicas"])),
                Cell::t(format!(
                    "{} → {}",
                    human::text(&p["leaderBefore"]),
                    human::text(&p["leaderAfter"])
                )),
                Cell::t(format!(
                    "[{}] → [{}]",
                    human::ids(&p["isrBefore"]),
                    human::ids(&p["isrAfter"])
                )),
                Cell::n(human::text(&p["minInsyncReplicas"])),
                Cell::n(fmt::opt(fmt::f(p, "sizeBytes"), fmt::bytes)),
            ]);
        }
    }
    let mut leaders = Table::new(
        "Brokers taking over leadership",
        &[
            "Broker",
            "Leaders gained",
            "Produce msg/s",
            "Produce bytes/s",
            "Consume msg/s",
            "Consume bytes/s",
        ],
    )
    .empty("No leadership moves.");
    for b in fmt::arr(&d["leadership"], "byBroker") {
        leaders.row(vec![
            Cell::t(human::text(&b["brokerId"])),
            Cell::n(human::text(&b["leadersGained"])),
            Cell::n(fmt::opt(fmt::f(b, "producerMsgRate"), fmt::msg_rate)),
            Cell::n(fmt::opt(fmt::f(b, "producerByteRate"), fmt::byte_rate)),
            Cell::n(fmt::opt(fmt::f(b, "consumerMsgRate"), fmt::msg_rate)),
            Cell::n(fmt::opt(fmt::f(b, "consumerByteRate"), fmt::byte_rate)),
        ]);
    }
    let r = &d["reReplication"];
    let t = &r["transfer"];
    let rereplication = vec![
        fact(
            "To rebuild",
            replicas_and_bytes(r, "replicasToRebuild", "bytesToReplicate"),
        ),
        fact(
            "Unavailable (offline partitions)",
            replicas_and_bytes(r, "replicasUnavailable", "bytesUnavailable"),
        ),
        fact(
            "Without a destination",
            replicas_and_bytes(r, "replicasWithoutDestination", "bytesWithoutDestination"),
        ),
        fact(
            "Copy time at the throttle",
            format!(
                "{} to {}",
                fmt::opt(fmt::f(t, "estimatedSeconds"), fmt::duration_s),
                fmt::opt(fmt::f(t, "estimatedSecondsParallel"), fmt::duration_s)
            ),
        ),
    ];
    let mut destinations = Table::new("Where the copies go", &["Broker", "Replicas", "Bytes"])
        .empty("Nothing to copy.");
    for b in fmt::arr(r, "destinations") {
        destinations.row(vec![
            Cell::t(human::text(&b["brokerId"])),
            Cell::n(human::text(&b["replicas"])),
            Cell::n(fmt::opt(fmt::f(b, "bytes"), fmt::bytes)),
        ]);
    }
    let mut groups = Table::new(
        "Consumer groups that notice",
        &[
            "Group",
            "Offline partitions",
            "Leader moved",
            "Coordinator lost",
        ],
    )
    .empty("No consumer group is affected.");
    for g in fmt::arr(&d["consumerGroups"], "groups") {
        groups.row(vec![
            Cell::t(human::s(g, "groupId")),
            Cell::n(human::text(&g["offlinePartitions"])),
            Cell::n(human::text(&g["leaderMovedPartitions"])),
            Cell::t(human::text(&g["coordinatorLost"])),
        ]);
    }
    let mut topics = Table::new(
        "Topics, worst first",
        &[
            "Topic",
            "Partitions",
            "Affected",
            "Offline",
            "Under min ISR",
            "At min ISR",
            "Leaders lost",
            "To copy",
        ],
    )
    .empty("No topic is affected.");
    for t in fmt::arr(&d["topics"], "topics") {
        topics.row(vec![
            Cell::t(human::s(t, "topic")),
            Cell::n(human::text(&t["partitions"])),
            Cell::n(human::text(&t["affectedPartitions"])),
            Cell::n(human::text(&t["offline"])),
            Cell::n(human::text(&t["underMinIsr"])),
            Cell::n(human::text(&t["atMinIsr"])),
            Cell::n(human::text(&t["leadersLost"])),
            Cell::n(fmt::opt(fmt::f(t, "bytesToReplicate"), fmt::bytes)),
        ]);
    }
    BlastResult {
        failure,
        summary,
        partitions,
        leaders,
        rereplication,
        destinations,
        groups,
        topics,
    }
}

/// `N replicas, B` from a re-replication answer's count and bytes fields.
fn replicas_and_bytes(r: &Value, count: &str, bytes: &str) -> String {
    format!(
        "{} replicas, {}",
        human::text(&r[count]),
        fmt::opt(fmt::f(r, bytes), fmt::bytes)
    )
}
