//! Topics: search by name, one topic's configuration and partitions, and its messages (browse
//! with filters, live tail over the API's server-sent events).

use askama::Template;
use axum::body::Bytes;
use axum::extract::{Path, RawQuery};
use axum::http::{HeaderMap, StatusCode};
use axum::response::Response;
use serde_json::{json, Value};

use super::state_class;
use crate::api::query;
use crate::url::enc;
use crate::{
    cross_site, fact, query_form, redirect, render, Cell, Ctx, Fact, Flash, Form, Layout, Notice,
    Table,
};
use crate::{fmt, human, svg};

const MATCHES: [&str; 4] = ["contains", "prefix", "exact", "glob"];
const PAGE: u64 = 200;

#[derive(Template)]
#[template(path = "topics.html")]
struct ListPage {
    layout: Layout,
    q: String,
    matching: String,
    matches: [&'static str; 4],
    internal: bool,
    table: Table,
    prev: Option<String>,
    next: Option<String>,
}

#[derive(Template)]
#[template(path = "topic.html")]
struct OnePage {
    layout: Layout,
    topic: String,
    facts: Vec<Fact>,
    config: Table,
    config_notice: Option<Notice>,
    key_filter: String,
    partitions: Table,
    /// The configuration names the edit form suggests (the topic's entries that are not
    /// read-only).
    editable: Vec<String>,
    /// The form's brokers field as typed.
    brokers: String,
    /// A redistribution preview, when one was asked for.
    redistribution: Option<Redistribution>,
    /// Size and byte rates over [`HISTORY_MS`], from the partition readings.
    charts: Vec<svg::Chart>,
    charts_notice: Option<Notice>,
}

/// How far back the topic page's history charts reach.
const HISTORY_MS: i64 = 7 * 86_400_000;

/// The topic's size and byte rates over time (`GET /api/v1/topics/{topic}/history`): one chart
/// each, formatted like the broker loads of the same kind.
fn topic_charts(history: &Value) -> Vec<svg::Chart> {
    [
        ("sizeBytes", "Size", "diskBytes"),
        ("producerByteRate", "Produced", "producerByteRate"),
        ("consumerByteRate", "Consumed", "consumerByteRate"),
    ]
    .iter()
    .map(|(metric, caption, format_as)| {
        let series = [crate::svg::Series {
            label: caption.to_string(),
            points: svg::points(history, metric),
        }];
        svg::chart(caption, format_as, &series)
    })
    .collect()
}

/// A redistribution preview: the moves, and what its Start button sends.
struct Redistribution {
    facts: Vec<Fact>,
    moves: Table,
    /// `[{"partition", "replicas"}]` as previewed: Start refuses when a fresh preview differs.
    planned: String,
    count: usize,
}

#[derive(Template)]
#[template(path = "messages.html")]
struct MessagesPage {
    layout: Layout,
    topic: String,
    f: MessageForm,
    notice: Option<Notice>,
    summary: String,
    messages: Table,
    partitions: Table,
    tail_url: String,
}

/// The browse form as the user filled it.
#[derive(Default)]
struct MessageForm {
    partition: String,
    from: String,
    offset: String,
    timestamp: String,
    limit: String,
    key_filter: String,
    value_filter: String,
}

/// `GET /ui/topics?q=&match=&internal=&offset=`.
pub async fn list(ctx: Ctx, RawQuery(raw): RawQuery) -> Response {
    let form = query_form(raw.as_deref());
    let q = form.get("q").to_string();
    let matching = match form.get("match") {
        "" => "contains".to_string(),
        m if MATCHES.contains(&m) => m.to_string(),
        other => {
            return ctx
                .bad_request(
                    "Topics",
                    "topics",
                    format!("unknown match {other:?}: one of {}", MATCHES.join(", ")),
                )
                .await
        }
    };
    let Ok(offset) = (match form.get("offset") {
        "" => Ok(0),
        o => o.parse::<u64>(),
    }) else {
        return ctx
            .bad_request("Topics", "topics", "offset must be a whole number")
            .await;
    };
    let internal = form.checked("internal");
    let body = json!({
        "query": q,
        "match": matching,
        "includeInternal": internal,
        "limit": PAGE,
        "offset": offset,
    });
    let data = match ctx.api.post("/api/v1/topics/search", Some(&body)).await {
        Ok(d) => d,
        Err(p) => return ctx.problem_page("Topics", "topics", &p).await,
    };
    let total = fmt::i(&data, "total").unwrap_or(0).max(0) as u64;
    let mut table = Table::new(
        format!("{total} topics"),
        &[
            "Topic",
            "Partitions",
            "RF",
            "Min ISR",
            "Size",
            "Produce",
            "Consume",
            "Under-replicated",
            "Offline",
            "Activity",
        ],
    )
    .empty("No topic matches.");
    for t in fmt::arr(&data, "topics") {
        let name = human::s(t, "name");
        let urp = fmt::i(t, "underReplicatedPartitions").unwrap_or(0);
        let offline = fmt::i(t, "offlinePartitions").unwrap_or(0);
        let mut cell = Cell::t(name.clone()).link(format!("/ui/topics/{}", enc(&name)));
        if fmt::b(t, "internal") {
            cell = cell.sub("internal");
        } else if fmt::b(t, "compacted") {
            cell = cell.sub("compacted");
        }
        table.row(vec![
            cell,
            Cell::n(human::text(&t["partitionCount"])),
            Cell::n(human::text(&t["replicationFactor"])),
            Cell::n(human::text(&t["minInsyncReplicas"])),
            Cell::n(fmt::opt(fmt::f(t, "sizeBytes"), fmt::bytes)),
            Cell::n(fmt::opt(fmt::f(t, "producerByteRate"), fmt::byte_rate)),
            Cell::n(fmt::opt(fmt::f(t, "consumerByteRate"), fmt::byte_rate)),
            Cell::n(urp.to_string()).class(if urp > 0 { "warn" } else { "num" }),
            Cell::n(offline.to_string()).class(if offline > 0 { "bad" } else { "num" }),
            Cell::n(fmt::opt(fmt::f(t, "activityScore"), fmt::pct_plain)),
        ]);
    }
    let page_link = |o: u64| {
        format!(
            "/ui/topics{}",
            query(&[
                ("q", &q),
                ("match", &matching),
                ("internal", if internal { "on" } else { "" }),
                ("offset", &o.to_string()),
            ])
        )
    };
    let prev = (offset > 0).then(|| page_link(offset.saturating_sub(PAGE)));
    let next = (offset + PAGE < total).then(|| page_link(offset + PAGE));
    let layout = ctx.layout("Topics", "topics").await;
    render(
        StatusCode::OK,
        &ListPage {
            layout,
            q,
            matching,
            matches: MATCHES,
            internal,
            table,
            prev,
            next,
        },
    )
}

/// `GET /ui/topics/{topic}?keyFilter=`.
pub async fn page(ctx: Ctx, Path(topic): Path<String>, RawQuery(raw): RawQuery) -> Response {
    let form = query_form(raw.as_deref());
    let key_filter = form.get("keyFilter").to_string();
    topic_page(ctx, topic, key_filter, String::new(), None).await
}

async fn topic_page(
    ctx: Ctx,
    topic: String,
    key_filter: String,
    brokers: String,
    redistribution: Option<Redistribution>,
) -> Response {
    let search = json!({ "query": topic, "match": "exact", "includeInternal": true });
    let config_uri = format!(
        "/api/v1/topics/{}/config{}",
        enc(&topic),
        query(&[("keyFilter", &key_filter)])
    );
    let partitions_uri = format!("/api/v1/partitions{}", query(&[("topic", &topic)]));
    let since = ctx.host.now_ms() - HISTORY_MS;
    let history_uri = format!(
        "/api/v1/topics/{}/history{}",
        enc(&topic),
        query(&[("since", &since.to_string())])
    );
    let (summary, config, partitions, history) = tokio::join!(
        ctx.api.post("/api/v1/topics/search", Some(&search)),
        ctx.api.get(&config_uri),
        ctx.api.get(&partitions_uri),
        ctx.api.get(&history_uri),
    );
    let (charts, charts_notice) = match &history {
        Ok(h) => (topic_charts(h), None),
        Err(p) => (Vec::new(), Some(Notice::from(p))),
    };
    let partitions = match partitions {
        Ok(p) => p,
        Err(p) => return ctx.problem_page("Topic", "topics", &p).await,
    };
    let mut t = summary
        .ok()
        .and_then(|s| fmt::arr(&s, "topics").first().cloned())
        .unwrap_or(Value::Null);
    // The settings in the header as the cluster has them now (the configuration below is read
    // live), not as the last observer reading had them: a value just saved shows at once.
    if let (Ok(c), Some(obj)) = (&config, t.as_object_mut()) {
        for e in fmt::arr(c, "entries") {
            let value = human::s(e, "value");
            let number = value.parse::<f64>().ok().map(Value::from);
            match (human::s(e, "name").as_str(), number) {
                ("retention.ms", Some(n)) => {
                    obj.insert("retentionMs".into(), n);
                }
                ("retention.bytes", Some(n)) => {
                    obj.insert("retentionBytes".into(), n);
                }
                ("min.insync.replicas", Some(n)) => {
                    obj.insert("minInsyncReplicas".into(), n);
                }
                ("cleanup.policy", _) => {
                    obj.insert("cleanupPolicy".into(), Value::from(value));
                }
                _ => {}
            }
        }
    }
    let facts = vec![
        fact("Partitions", human::text(&t["partitionCount"])),
        fact("Replication factor", human::text(&t["replicationFactor"])),
        fact("min.insync.replicas", human::text(&t["minInsyncReplicas"])),
        fact("Cleanup policy", human::s(&t, "cleanupPolicy")),
        fact(
            "Retention",
            format!(
                "{} · {}",
                match fmt::f(&t, "retentionMs") {
                    Some(ms) if ms >= 0.0 => fmt::duration_s(ms / 1000.0),
                    Some(_) => "unlimited time".to_string(),
                    None => fmt::UNKNOWN.to_string(),
                },
                match fmt::f(&t, "retentionBytes") {
                    Some(b) if b >= 0.0 => fmt::bytes(b),
                    Some(_) => "unlimited size".to_string(),
                    None => fmt::UNKNOWN.to_string(),
                }
            ),
        ),
        fact(
            if t["remoteStorage"] == Value::Bool(true) {
                "Size on brokers (local)"
            } else {
                "Size"
            },
            format!(
                "{} (all replicas {})",
                fmt::opt(fmt::f(&t, "sizeBytes"), fmt::bytes),
                fmt::opt(fmt::f(&t, "replicaBytes"), fmt::bytes)
            ),
        ),
        fact("Remote storage", remote_storage(&t)),
        fact(
            "Produce",
            format!(
                "{} · {}",
                fmt::opt(fmt::f(&t, "producerMsgRate"), fmt::msg_rate),
                fmt::opt(fmt::f(&t, "producerByteRate"), fmt::byte_rate)
            ),
        ),
        fact(
            "Consume",
            format!(
                "{} · {}",
                fmt::opt(fmt::f(&t, "consumerMsgRate"), fmt::msg_rate),
                fmt::opt(fmt::f(&t, "consumerByteRate"), fmt::byte_rate)
            ),
        ),
        fact(
            "Health",
            format!(
                "{} under-replicated · {} offline · {} under min ISR",
                human::text(&t["underReplicatedPartitions"]),
                human::text(&t["offlinePartitions"]),
                human::text(&t["underMinIsrPartitions"])
            ),
        ),
        fact("Topic id", human::s(&t, "topicId")),
    ];
    let editable: Vec<String> = match &config {
        Ok(c) => fmt::arr(c, "entries")
            .iter()
            .filter(|e| !fmt::b(e, "readOnly"))
            .map(|e| human::s(e, "name"))
            .collect(),
        Err(_) => Vec::new(),
    };
    let (config, config_notice) = match &config {
        Ok(c) => (config_table(c), None),
        Err(p) => (Table::new("Configuration", &[]), Some(Notice::from(p))),
    };

    let layout = ctx.layout(format!("Topic {topic}"), "topics").await;
    render(
        StatusCode::OK,
        &OnePage {
            layout,
            topic,
            facts,
            config,
            config_notice,
            key_filter,
            partitions: partitions_table(&partitions),
            editable,
            brokers,
            redistribution,
            charts,
            charts_notice,
        },
    )
}

/// `POST /ui/topics/{topic}/config` (`name`, `value`, `remove`): sets one override of the
/// topic, or removes it so the topic inherits the broker's value
/// (`PUT /api/v1/topics/{topic}/config`).
pub async fn config(
    ctx: Ctx,
    headers: HeaderMap,
    Path(topic): Path<String>,
    body: Bytes,
) -> Response {
    if !ctx.same_origin(&headers) {
        return cross_site(&ctx).await;
    }
    let form = Form::parse(&body);
    let name = form.get("name");
    if name.is_empty() {
        return ctx
            .bad_request(
                "Topic",
                "topics",
                "name the configuration entry to change, e.g. retention.ms",
            )
            .await;
    }
    let remove = form.checked("remove");
    let value = if remove {
        Value::Null
    } else {
        json!(form.get("value"))
    };
    let back = format!("/ui/topics/{}", enc(&topic));
    let uri = format!("/api/v1/topics/{}/config", enc(&topic));
    let request = json!({ "configs": { name: value } });
    match ctx.api.put(&uri, &request).await {
        Ok(d) => {
            let changes = fmt::arr(&d, "changes")
                .iter()
                .map(|c| {
                    let shown = |v: &Value| match v {
                        Value::Null => "(no override)".to_string(),
                        v => human::text(v),
                    };
                    format!(
                        "{}: {} → {}",
                        human::s(c, "name"),
                        shown(&c["before"]),
                        shown(&c["after"])
                    )
                })
                .collect::<Vec<_>>()
                .join("; ");
            redirect(
                &back,
                &Flash::ok(format!("Configuration of {topic} changed: {changes}")),
            )
        }
        Err(p) => redirect(&back, &Flash::problem(&p)),
    }
}

/// `POST /ui/topics/{topic}/elect`: a preferred leader election of the topic's partitions.
pub async fn elect(ctx: Ctx, headers: HeaderMap, Path(topic): Path<String>) -> Response {
    if !ctx.same_origin(&headers) {
        return cross_site(&ctx).await;
    }
    let back = format!("/ui/topics/{}", enc(&topic));
    let uri = format!("/api/v1/topics/{}/preferred-leader-election", enc(&topic));
    match ctx.api.post(&uri, None).await {
        Ok(d) => redirect(&back, &Flash::ok(human::election_message(&d))),
        Err(p) => redirect(&back, &Flash::problem(&p)),
    }
}

/// `POST /ui/topics/{topic}/redistribute` (`brokers`, `action` = `preview` or `start`,
/// `planned`, `force`). A preview renders the topic page with the moves; Start runs a fresh
/// preview first and starts only when it plans exactly the moves that were reviewed.
pub async fn redistribute(
    ctx: Ctx,
    headers: HeaderMap,
    Path(topic): Path<String>,
    body: Bytes,
) -> Response {
    if !ctx.same_origin(&headers) {
        return cross_site(&ctx).await;
    }
    let form = Form::parse(&body);
    let brokers_text = form.get("brokers").to_string();
    let brokers: Result<Vec<i64>, _> = brokers_text
        .split(',')
        .map(str::trim)
        .filter(|b| !b.is_empty())
        .map(str::parse::<i64>)
        .collect();
    let Ok(brokers) = brokers else {
        return ctx
            .bad_request(
                "Topic",
                "topics",
                format!(
                    "brokers {brokers_text:?}: give broker ids separated by commas, e.g. 1, 2, 3 (or nothing for every available broker)"
                ),
            )
            .await;
    };
    let back = format!("/ui/topics/{}", enc(&topic));
    let uri = format!("/api/v1/topics/{}/redistribute", enc(&topic));
    let body_for = |preview: bool| {
        let mut b = json!({ "preview": preview });
        if !brokers.is_empty() {
            b["brokers"] = json!(brokers);
        }
        b
    };
    let preview = match ctx.api.post(&uri, Some(&body_for(true))).await {
        Ok(p) => p,
        Err(p) => return redirect(&back, &Flash::problem(&p)),
    };
    let fresh = planned(&preview);
    match form.get("action") {
        "preview" => {
            let r = redistribution(&preview, fresh);
            topic_page(ctx, topic, String::new(), brokers_text, Some(r)).await
        }
        "start" => {
            let reviewed: Option<Value> = serde_json::from_str(form.get("planned")).ok();
            if reviewed.as_ref() != Some(&fresh) {
                let mut r = redistribution(&preview, fresh);
                r.facts.insert(
                    0,
                    fact(
                        "Not started",
                        "the plan changed since it was reviewed: review these moves and start again",
                    )
                    .class("warn"),
                );
                return topic_page(ctx, topic, String::new(), brokers_text, Some(r)).await;
            }
            let force = if form.checked("force") {
                "?force=true"
            } else {
                ""
            };
            match ctx
                .api
                .post(&format!("{uri}{force}"), Some(&body_for(false)))
                .await
            {
                Ok(d) => {
                    let op = human::s(&d, "operationId");
                    let msg = format!(
                        "Redistribution of {topic} started: {} moves queued as operation {op}",
                        human::text(&d["totalMoves"])
                    );
                    let to = if op.is_empty() {
                        back
                    } else {
                        format!("/ui/reassignments/{}", enc(&op))
                    };
                    redirect(&to, &Flash::ok(msg))
                }
                Err(p) => redirect(&back, &Flash::problem(&p)),
            }
        }
        other => {
            ctx.bad_request(
                "Topic",
                "topics",
                format!("unknown action {other:?}: preview or start"),
            )
            .await
        }
    }
}

/// The moves of a redistribution answer as `[{"partition", "replicas"}]`, in partition order.
fn planned(d: &Value) -> Value {
    let mut moves: Vec<(i64, Value)> = fmt::arr(d, "moves")
        .iter()
        .map(|m| {
            let partition = fmt::i(m, "partition").unwrap_or(-1);
            (
                partition,
                json!({ "partition": partition, "replicas": m["replicas"].clone() }),
            )
        })
        .collect();
    moves.sort_by_key(|(p, _)| *p);
    Value::Array(moves.into_iter().map(|(_, m)| m).collect())
}

fn redistribution(d: &Value, planned: Value) -> Redistribution {
    let count = planned.as_array().map_or(0, Vec::len);
    let facts = vec![
        fact("Brokers", human::ids(&d["brokers"])),
        fact("Moves", human::text(&d["totalMoves"])),
        fact("To copy", fmt::opt(fmt::f(d, "estimatedBytes"), fmt::bytes)),
    ];
    let mut moves = Table::new(
        "Planned moves (preview: nothing was started)",
        &[
            "Partition",
            "Replicas",
            "Adding",
            "Removing",
            "Leader changes",
        ],
    )
    .empty("Nothing to move: the topic is already spread evenly over these brokers.");
    for m in fmt::arr(d, "moves") {
        moves.row(vec![
            Cell::n(human::text(&m["partition"])),
            Cell::t(format!(
                "[{}] → [{}]",
                human::ids(&m["currentReplicas"]),
                human::ids(&m["replicas"])
            )),
            Cell::t(human::ids(&m["adding"])),
            Cell::t(human::ids(&m["removing"])),
            Cell::t(human::text(&m["leaderChange"])),
        ]);
    }
    Redistribution {
        facts,
        moves,
        planned: planned.to_string(),
        count,
    }
}

fn config_table(c: &Value) -> Table {
    let mut t = Table::new(
        format!("{} configuration entries", human::text(&c["count"])),
        &["Name", "Value", "Source", "Flags"],
    )
    .empty("No entry matches.");
    for e in fmt::arr(c, "entries") {
        let mut flags = Vec::new();
        if fmt::b(e, "isDefault") {
            flags.push("default");
        }
        if fmt::b(e, "readOnly") {
            flags.push("read-only");
        }
        if fmt::b(e, "sensitive") {
            flags.push("sensitive");
        }
        let source = human::s(e, "source");
        t.row(vec![
            Cell::t(human::s(e, "name")).class("mono"),
            Cell::t(if fmt::b(e, "sensitive") {
                "(hidden)".to_string()
            } else {
                human::text(&e["value"])
            })
            .class("wrap"),
            Cell::t(source.clone()).class(if source == "DYNAMIC_TOPIC_CONFIG" {
                "warn"
            } else {
                ""
            }),
            Cell::t(flags.join(", ")),
        ]);
    }
    t
}

/// A topic's remote storage (KIP-405) in words: off, or the offsets held only remotely and the
/// estimate of their bytes with its basis (Kafka reports no remote size to a client).
fn remote_storage(t: &Value) -> String {
    match t["remoteStorage"] {
        Value::Bool(false) => "off".to_string(),
        Value::Bool(true) => format!(
            "on (tiered): {} offsets held only remotely · about {} (estimate: {})",
            human::text(&t["remoteOffsets"]),
            fmt::opt(fmt::f(t, "remoteBytesEstimate"), fmt::bytes),
            human::s(t, "remoteBytesBasis")
        ),
        _ => fmt::UNKNOWN.to_string(),
    }
}

fn partitions_table(p: &Value) -> Table {
    let caption = if fmt::i(p, "count") < fmt::i(p, "total") {
        format!(
            "The first {} of {} partitions",
            human::text(&p["count"]),
            human::text(&p["total"])
        )
    } else {
        format!("{} partitions", human::text(&p["total"]))
    };
    let mut t = Table::new(
        caption,
        &[
            "Partition",
            "Leader",
            "Replicas",
            "ISR",
            "Health",
            "Size",
            "Offsets",
            "Produce",
            "Consume",
            "Follower lag (bytes)",
        ],
    )
    .empty("No partitions.");
    for r in fmt::arr(p, "partitions") {
        let (health, class) = if fmt::b(r, "offline") {
            ("offline", "bad")
        } else if fmt::b(r, "underMinIsr") {
            ("under min ISR", "bad")
        } else if fmt::b(r, "underReplicated") {
            ("under-replicated", "warn")
        } else if fmt::b(r, "atMinIsr") {
            ("at min ISR", "warn")
        } else {
            ("ok", "ok")
        };
        let mut replicas = Cell::t(human::ids(&r["replicas"]));
        let adding = fmt::arr(r, "addingReplicas");
        if !adding.is_empty() {
            replicas = replicas.sub(format!(
                "moving: +{} −{}",
                human::ids(&r["addingReplicas"]),
                human::ids(&r["removingReplicas"])
            ));
        }
        let mut size = Cell::n(fmt::opt(fmt::f(r, "sizeBytes"), fmt::bytes));
        let mut offsets = Cell::n(format!(
            "{} – {}",
            human::text(&r["earliestOffset"]),
            human::text(&r["latestOffset"])
        ));
        if r["remoteStorage"] == Value::Bool(true) {
            size = size.sub(format!(
                "local · remote about {}",
                fmt::opt(fmt::f(r, "remoteBytesEstimate"), fmt::bytes)
            ));
            offsets = offsets.sub(format!(
                "local from {} · {} remote only",
                human::text(&r["localStartOffset"]),
                human::text(&r["remoteOffsets"])
            ));
        }
        let mut leader = Cell::t(human::text(&r["leader"]));
        if r["leaderIsPreferred"] == Value::Bool(false) {
            leader = leader.sub(format!("preferred {}", human::text(&r["preferredLeader"])));
        }
        t.row(vec![
            Cell::n(human::text(&r["partition"])),
            leader,
            replicas,
            isr_cell(r),
            Cell::t(health).class(state_class(class)),
            size,
            offsets,
            Cell::n(fmt::opt(fmt::f(r, "producerMsgRate"), fmt::msg_rate)),
            Cell::n(fmt::opt(fmt::f(r, "consumerMsgRate"), fmt::msg_rate)),
            Cell::n(fmt::opt(fmt::f(r, "followerLagBytes"), fmt::bytes)),
        ]);
    }
    t
}

/// The ISR, with the eligible leader replicas (KIP-966) and the last known ELR under it where
/// the cluster reports them and they are not empty (null: not reported, nothing said).
fn isr_cell(r: &Value) -> Cell {
    let mut under = Vec::new();
    for (key, label) in [
        ("eligibleLeaderReplicas", "ELR"),
        ("lastKnownElr", "last known ELR"),
    ] {
        if r[key].as_array().is_some_and(|a| !a.is_empty()) {
            under.push(format!("{label} {}", human::ids(&r[key])));
        }
    }
    let cell = Cell::t(human::ids(&r["isr"]));
    if under.is_empty() {
        cell
    } else {
        cell.sub(under.join(" · "))
    }
}

/// `GET /ui/topics/{topic}/messages?partition=&from=&offset=&timestamp=&limit=&keyFilter=&valueFilter=`.
pub async fn messages(ctx: Ctx, Path(topic): Path<String>, RawQuery(raw): RawQuery) -> Response {
    let q = query_form(raw.as_deref());
    let f = MessageForm {
        partition: q.get("partition").to_string(),
        from: q.get("from").to_string(),
        offset: q.get("offset").to_string(),
        timestamp: q.get("timestamp").to_string(),
        limit: q.get("limit").to_string(),
        key_filter: q.get("keyFilter").to_string(),
        value_filter: q.get("valueFilter").to_string(),
    };
    // A time may be typed as RFC 3339; the API takes milliseconds.
    let timestamp = match f.timestamp.parse::<i64>() {
        Ok(ms) => ms.to_string(),
        Err(_) if f.timestamp.is_empty() => String::new(),
        Err(_) => match humantime::parse_rfc3339_weak(&f.timestamp) {
            Ok(t) => t
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_millis().to_string())
                .unwrap_or_default(),
            Err(_) => {
                return ctx
                    .bad_request(
                        "Messages",
                        "topics",
                        format!(
                            "timestamp {:?} is neither milliseconds since the epoch nor a time like 2026-01-01T00:00:00Z",
                            f.timestamp
                        ),
                    )
                    .await
            }
        },
    };
    // Only one start may be given: an offset or a time wins over `from`.
    let from = if f.offset.is_empty() && timestamp.is_empty() {
        f.from.as_str()
    } else {
        ""
    };
    let uri = format!(
        "/api/v1/topics/{}/messages{}",
        enc(&topic),
        query(&[
            ("partition", &f.partition),
            ("from", from),
            ("offset", &f.offset),
            ("timestamp", &timestamp),
            ("limit", &f.limit),
            ("keyFilter", &f.key_filter),
            ("valueFilter", &f.value_filter),
        ])
    );
    let tail_url = format!(
        "/api/v1/topics/{}/messages/tail{}",
        enc(&topic),
        query(&[
            ("partition", &f.partition),
            ("keyFilter", &f.key_filter),
            ("valueFilter", &f.value_filter),
        ])
    );
    let answer = ctx.api.get(&uri).await;
    let (notice, summary, messages, partitions) = match &answer {
        Ok(d) => (
            None,
            format!(
                "{} messages ({} records examined{})",
                human::text(&d["count"]),
                human::text(&d["scanned"]),
                if fmt::b(d, "scanLimitReached") {
                    "; the scan budget ran out: narrow the range or continue from the next offset"
                } else {
                    ""
                }
            ),
            messages_table(&topic, d),
            watermarks_table(d),
        ),
        Err(p) if p.status == 404 && p.error.contains("topic") => {
            return ctx.problem_page("Messages", "topics", p).await
        }
        Err(p) => (
            Some(Notice::from(p)),
            String::new(),
            Table::new("Messages", &[]),
            Table::new("Partitions", &[]),
        ),
    };
    let layout = ctx.layout(format!("Messages of {topic}"), "topics").await;
    let status = match &answer {
        Err(p) if p.status == 400 => StatusCode::BAD_REQUEST,
        _ => StatusCode::OK,
    };
    render(
        status,
        &MessagesPage {
            layout,
            topic,
            f,
            notice,
            summary,
            messages,
            partitions,
            tail_url,
        },
    )
}

fn payload(v: &Value, encoding: &Value) -> String {
    match v {
        Value::Null => "(null)".to_string(),
        Value::String(s) if encoding == "base64" => format!("base64: {}", fmt::clip(s, 200)),
        Value::String(s) => fmt::clip(s, 200),
        other => other.to_string(),
    }
}

fn messages_table(topic: &str, d: &Value) -> Table {
    let mut t = Table::new(
        "Messages",
        &["Partition", "Offset", "Time", "Key", "Value", "Headers"],
    )
    .empty("No message in this range matches.");
    for m in fmt::arr(d, "messages") {
        let p = human::text(&m["partition"]);
        let o = human::text(&m["offset"]);
        let headers = fmt::arr(m, "headers")
            .iter()
            .map(|h| {
                format!(
                    "{}={}",
                    human::s(h, "key"),
                    fmt::clip(&human::text(&h["value"]), 60)
                )
            })
            .collect::<Vec<_>>()
            .join(", ");
        t.row(vec![
            Cell::n(p.clone()),
            Cell::n(o.clone()).link(format!(
                "/api/v1/topics/{}/messages/{}/{}",
                enc(topic),
                enc(&p),
                enc(&o)
            )),
            Cell::t(fmt::time(&human::s(m, "timestampIso"))).sub(human::s(m, "timestampType")),
            Cell::t(payload(&m["key"], &m["keyEncoding"])).class("wrap mono"),
            Cell::t(payload(&m["value"], &m["valueEncoding"]))
                .class("wrap mono")
                .sub(format!(
                    "{} bytes{}",
                    human::text(&m["valueSize"]),
                    if fmt::b(m, "truncated") {
                        ", cut at 64 KiB"
                    } else {
                        ""
                    }
                )),
            Cell::t(headers).class("wrap"),
        ]);
    }
    t
}

fn watermarks_table(d: &Value) -> Table {
    let mut t = Table::new(
        "Partitions read",
        &[
            "Partition",
            "Log start",
            "High watermark",
            "Examined from",
            "Next offset",
            "Error",
        ],
    );
    for p in fmt::arr(d, "partitions") {
        t.row(vec![
            Cell::n(human::text(&p["partition"])),
            Cell::n(human::text(&p["lowWatermark"])),
            Cell::n(human::text(&p["highWatermark"])),
            Cell::n(human::text(&p["startOffset"])),
            Cell::n(human::text(&p["nextOffset"])),
            Cell::t(human::s(p, "error")).class("bad"),
        ]);
    }
    t
}
