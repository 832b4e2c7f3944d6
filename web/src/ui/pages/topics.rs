//! Topics: search by name, one topic's configuration and partitions, and its messages (browse
//! with filters, live tail over the API's server-sent events).

use askama::Template;
use axum::extract::{Path, RawQuery};
use axum::http::StatusCode;
use axum::response::Response;
use serde_json::{json, Value};

use super::state_class;
use crate::ui::api::{enc, query};
use crate::ui::fmt;
use crate::ui::{fact, query_form, render, Cell, Ctx, Fact, Layout, Notice, Table};

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
        let name = fmt::s(t, "name");
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
            Cell::n(fmt::text(&t["partitionCount"])),
            Cell::n(fmt::text(&t["replicationFactor"])),
            Cell::n(fmt::text(&t["minInsyncReplicas"])),
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
    let search = json!({ "query": topic, "match": "exact", "includeInternal": true });
    let config_uri = format!(
        "/api/v1/topics/{}/config{}",
        enc(&topic),
        query(&[("keyFilter", &key_filter)])
    );
    let partitions_uri = format!("/api/v1/partitions{}", query(&[("topic", &topic)]));
    let (summary, config, partitions) = tokio::join!(
        ctx.api.post("/api/v1/topics/search", Some(&search)),
        ctx.api.get(&config_uri),
        ctx.api.get(&partitions_uri),
    );
    let partitions = match partitions {
        Ok(p) => p,
        Err(p) => return ctx.problem_page("Topic", "topics", &p).await,
    };
    let t = summary
        .ok()
        .and_then(|s| fmt::arr(&s, "topics").first().cloned())
        .unwrap_or(Value::Null);
    let facts = vec![
        fact("Partitions", fmt::text(&t["partitionCount"])),
        fact("Replication factor", fmt::text(&t["replicationFactor"])),
        fact("min.insync.replicas", fmt::text(&t["minInsyncReplicas"])),
        fact("Cleanup policy", fmt::s(&t, "cleanupPolicy")),
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
            "Size",
            format!(
                "{} (all replicas {})",
                fmt::opt(fmt::f(&t, "sizeBytes"), fmt::bytes),
                fmt::opt(fmt::f(&t, "replicaBytes"), fmt::bytes)
            ),
        ),
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
                fmt::text(&t["underReplicatedPartitions"]),
                fmt::text(&t["offlinePartitions"]),
                fmt::text(&t["underMinIsrPartitions"])
            ),
        ),
        fact("Topic id", fmt::s(&t, "topicId")),
    ];
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
        },
    )
}

fn config_table(c: &Value) -> Table {
    let mut t = Table::new(
        format!("{} configuration entries", fmt::text(&c["count"])),
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
        let source = fmt::s(e, "source");
        t.row(vec![
            Cell::t(fmt::s(e, "name")).class("mono"),
            Cell::t(if fmt::b(e, "sensitive") {
                "(hidden)".to_string()
            } else {
                fmt::text(&e["value"])
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

fn partitions_table(p: &Value) -> Table {
    let caption = if fmt::i(p, "count") < fmt::i(p, "total") {
        format!(
            "The first {} of {} partitions",
            fmt::text(&p["count"]),
            fmt::text(&p["total"])
        )
    } else {
        format!("{} partitions", fmt::text(&p["total"]))
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
            "Follower lag",
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
        let mut replicas = Cell::t(fmt::ids(&r["replicas"]));
        let adding = fmt::arr(r, "addingReplicas");
        if !adding.is_empty() {
            replicas = replicas.sub(format!(
                "moving: +{} −{}",
                fmt::ids(&r["addingReplicas"]),
                fmt::ids(&r["removingReplicas"])
            ));
        }
        let mut leader = Cell::t(fmt::text(&r["leader"]));
        if r["leaderIsPreferred"] == Value::Bool(false) {
            leader = leader.sub(format!("preferred {}", fmt::text(&r["preferredLeader"])));
        }
        t.row(vec![
            Cell::n(fmt::text(&r["partition"])),
            leader,
            replicas,
            Cell::t(fmt::ids(&r["isr"])),
            Cell::t(health).class(state_class(class)),
            Cell::n(fmt::opt(fmt::f(r, "sizeBytes"), fmt::bytes)),
            Cell::n(format!(
                "{} – {}",
                fmt::text(&r["earliestOffset"]),
                fmt::text(&r["latestOffset"])
            )),
            Cell::n(fmt::opt(fmt::f(r, "producerMsgRate"), fmt::msg_rate)),
            Cell::n(fmt::opt(fmt::f(r, "consumerMsgRate"), fmt::msg_rate)),
            Cell::n(fmt::text(&r["followerLag"])),
        ]);
    }
    t
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
                fmt::text(&d["count"]),
                fmt::text(&d["scanned"]),
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
        let p = fmt::text(&m["partition"]);
        let o = fmt::text(&m["offset"]);
        let headers = fmt::arr(m, "headers")
            .iter()
            .map(|h| {
                format!(
                    "{}={}",
                    fmt::s(h, "key"),
                    fmt::clip(&fmt::text(&h["value"]), 60)
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
            Cell::t(fmt::time(&fmt::s(m, "timestampIso"))).sub(fmt::s(m, "timestampType")),
            Cell::t(payload(&m["key"], &m["keyEncoding"])).class("wrap mono"),
            Cell::t(payload(&m["value"], &m["valueEncoding"]))
                .class("wrap mono")
                .sub(format!(
                    "{} bytes{}",
                    fmt::text(&m["valueSize"]),
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
            Cell::n(fmt::text(&p["partition"])),
            Cell::n(fmt::text(&p["lowWatermark"])),
            Cell::n(fmt::text(&p["highWatermark"])),
            Cell::n(fmt::text(&p["startOffset"])),
            Cell::n(fmt::text(&p["nextOffset"])),
            Cell::t(fmt::s(p, "error")).class("bad"),
        ]);
    }
    t
}
