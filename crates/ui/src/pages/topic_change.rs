//! The topic lifecycle forms (docs/ui.md): create a topic (topics page), add partitions, change
//! the replication factor and delete a topic (topic page). Each is two steps over the API's
//! `validateOnly`: **Preview** renders what the change would do (the placement, every broker's
//! leader and replica count before and after, the moves and bytes, or what a deletion loses);
//! **Confirm** asks for a fresh preview first and changes the cluster only when it still plans
//! exactly what was reviewed. The rules are the operations' (`ballast_ops::topic_lifecycle`).

use askama::Template;
use axum::body::Bytes;
use axum::extract::Path;
use axum::http::{HeaderMap, StatusCode};
use axum::response::Response;
use serde_json::{json, Map, Value};

use crate::api::query;
use crate::url::enc;
use crate::{cross_site, fact, redirect, render, Cell, Ctx, Fact, Flash, Form, Layout, Table};
use crate::{fmt, human};

#[derive(Template)]
#[template(path = "topic_change.html")]
struct ChangePage {
    layout: Layout,
    /// Where the form posts (the same route, `action=confirm`).
    action: String,
    /// What the change is, in a sentence.
    summary: String,
    facts: Vec<Fact>,
    tables: Vec<Table>,
    /// The form's fields, sent again on confirm.
    fields: Vec<(String, String)>,
    /// The previewed plan: confirm refuses when a fresh preview differs.
    planned: String,
    confirm: String,
    /// Whether the preview can be confirmed (nothing to do: no).
    can_confirm: bool,
    /// Shown when a confirm found a different plan.
    changed: bool,
    /// Whether the change takes `force` (a replication-factor change or a deletion).
    force: Option<String>,
    back: String,
}

/// The broker counts of a preview.
fn brokers_table(d: &Value) -> Table {
    let mut t = Table::new(
        "Leaders and replicas per broker",
        &["Broker", "State", "Leaders", "Replicas"],
    );
    for b in fmt::arr(d, "brokers") {
        let pair = |before: &str, after: &str| {
            let (x, y) = (human::text(&b[before]), human::text(&b[after]));
            if x == y {
                x
            } else {
                format!("{x} → {y}")
            }
        };
        t.row(vec![
            Cell::n(human::text(&b["brokerId"])),
            Cell::t(human::s(b, "state")),
            Cell::n(pair("leadersBefore", "leadersAfter")),
            Cell::n(pair("replicasBefore", "replicasAfter")),
        ]);
    }
    t
}

fn assignment_table(title: &str, d: &Value) -> Table {
    let mut t = Table::new(title, &["Partition", "Replicas (leader first)"]);
    for a in fmt::arr(d, "assignment") {
        t.row(vec![
            Cell::n(human::text(&a["partition"])),
            Cell::t(human::ids(&a["replicas"])),
        ]);
    }
    t
}

/// The four forms, by what they change.
#[derive(Clone, Copy, PartialEq)]
enum Change {
    Create,
    Partitions,
    ReplicationFactor,
    Delete,
}

impl Change {
    fn confirm_label(self) -> &'static str {
        match self {
            Change::Create => "Create this topic",
            Change::Partitions => "Add these partitions",
            Change::ReplicationFactor => "Start these moves",
            Change::Delete => "Delete this topic",
        }
    }
}

/// The API call of a change, as a preview (`validate_only`) or for real.
async fn call(
    ctx: &Ctx,
    change: Change,
    topic: &str,
    form: &Form,
    validate_only: bool,
) -> crate::api::Answer {
    let t = enc(topic);
    match change {
        Change::Create => {
            let mut configs = Map::new();
            for line in form
                .get("configs")
                .lines()
                .map(str::trim)
                .filter(|l| !l.is_empty())
            {
                let (k, v) = line.split_once('=').unwrap_or((line, ""));
                configs.insert(k.trim().to_string(), Value::from(v.trim()));
            }
            let body = json!({
                "name": form.get("name").trim(),
                "partitions": number(form.get("partitions")),
                "replicationFactor": number(form.get("replicationFactor")),
                "configs": configs,
                "validateOnly": validate_only,
            });
            ctx.api.post("/api/v1/topics", Some(&body)).await
        }
        Change::Partitions => {
            let body = json!({"count": number(form.get("count")), "validateOnly": validate_only});
            ctx.api
                .post(&format!("/api/v1/topics/{t}/partitions"), Some(&body))
                .await
        }
        Change::ReplicationFactor => {
            let mut body = json!({
                "replicationFactor": number(form.get("replicationFactor")),
                "validateOnly": validate_only,
            });
            let parts: Vec<Value> = form
                .get("partitions")
                .split(',')
                .map(str::trim)
                .filter(|p| !p.is_empty())
                .map(number)
                .collect();
            if !parts.is_empty() {
                body["partitions"] = Value::Array(parts);
            }
            let force = if !validate_only && form.checked("force") {
                "?force=true"
            } else {
                ""
            };
            ctx.api
                .put(
                    &format!("/api/v1/topics/{t}/replication-factor{force}"),
                    &body,
                )
                .await
        }
        Change::Delete => {
            let mut q: Vec<(&str, &str)> = Vec::new();
            if form.checked("force") {
                q.push(("force", "true"));
            }
            if validate_only {
                q.push(("validateOnly", "true"));
            }
            ctx.api
                .delete(&format!("/api/v1/topics/{t}{}", query(&q)))
                .await
        }
    }
}

/// A form field as a JSON number when it is one; otherwise the text, for the API to refuse
/// with its own words.
fn number(s: &str) -> Value {
    s.trim()
        .parse::<i64>()
        .map(Value::from)
        .unwrap_or_else(|_| Value::from(s.trim()))
}

/// What a confirm compares: the part of a preview that the change is.
fn plan_of(change: Change, d: &Value) -> Value {
    match change {
        Change::Create | Change::Partitions => d["assignment"].clone(),
        Change::ReplicationFactor => d["moves"].clone(),
        Change::Delete => {
            json!({"partitions": d["partitions"], "consumerGroups": d["consumerGroups"]})
        }
    }
}

fn preview_page(change: Change, topic: &str, d: &Value) -> (String, Vec<Fact>, Vec<Table>, bool) {
    match change {
        Change::Create => (
            format!(
                "Create topic {topic}: {} partitions, replication factor {}. Checked by the cluster; nothing was created yet.",
                human::text(&d["partitions"]),
                human::text(&d["replicationFactor"])
            ),
            vec![fact("Configs", human::text(&d["configs"]))],
            vec![assignment_table("Placement", d), brokers_table(d)],
            true,
        ),
        Change::Partitions => (
            format!(
                "Raise topic {topic} from {} to {} partitions. Cannot be undone: Kafka cannot remove partitions. Nothing was added yet.",
                human::text(&d["partitionsBefore"]),
                human::text(&d["partitionsAfter"])
            ),
            Vec::new(),
            vec![assignment_table("New partitions", d), brokers_table(d)],
            true,
        ),
        Change::ReplicationFactor => {
            let mut moves = Table::new(
                "Moves (throttled reassignments; nothing was started yet)",
                &["Partition", "Replicas before", "Replicas after"],
            )
            .empty("Nothing to move: every partition named is at that replication factor.");
            for m in fmt::arr(d, "moves") {
                moves.row(vec![
                    Cell::n(human::text(&m["partition"])),
                    Cell::t(human::ids(&m["replicasBefore"])),
                    Cell::t(human::ids(&m["replicasAfter"])),
                ]);
            }
            let count = fmt::arr(d, "moves").len();
            (
                format!(
                    "Change the replication factor of topic {topic} to {}.",
                    human::text(&d["replicationFactor"])
                ),
                vec![
                    fact("Moves", count.to_string()),
                    fact("To copy", fmt::opt(fmt::f(d, "estimatedBytes"), fmt::bytes)),
                    fact(
                        "Time at the throttle",
                        fmt::opt(fmt::f(d, "estimatedSeconds"), fmt::duration_s),
                    ),
                ],
                vec![moves, brokers_table(d)],
                count > 0,
            )
        }
        Change::Delete => (
            format!(
                "Delete topic {topic} and every message in it. Cannot be undone. Nothing was deleted yet."
            ),
            vec![
                fact("Partitions", human::text(&d["partitions"])),
                fact("Size (one replica each)", fmt::opt(fmt::f(d, "sizeBytes"), fmt::bytes)),
                fact("Disk freed (every replica)", fmt::opt(fmt::f(d, "replicaBytes"), fmt::bytes)),
                fact("As read at", human::s(d, "sizeReadAt")),
                fact("Consumer groups with committed offsets", human::text(&d["consumerGroups"])),
            ],
            Vec::new(),
            true,
        ),
    }
}

/// The fields a confirm sends again.
fn fields(change: Change, form: &Form) -> Vec<(String, String)> {
    let names: &[&str] = match change {
        Change::Create => &["name", "partitions", "replicationFactor", "configs"],
        Change::Partitions => &["count"],
        Change::ReplicationFactor => &["replicationFactor", "partitions"],
        Change::Delete => &[],
    };
    let mut out: Vec<(String, String)> = names
        .iter()
        .map(|n| (n.to_string(), form.get(n).to_string()))
        .collect();
    if change == Change::Delete && form.checked("force") {
        out.push(("force".into(), "true".into()));
    }
    out
}

async fn handle(
    ctx: Ctx,
    headers: HeaderMap,
    change: Change,
    topic: String,
    body: Bytes,
) -> Response {
    if !ctx.same_origin(&headers) {
        return cross_site(&ctx).await;
    }
    let form = Form::parse(&body);
    let topic = if change == Change::Create {
        form.get("name").trim().to_string()
    } else {
        topic
    };
    let (back, action) = match change {
        Change::Create => ("/ui/topics".to_string(), "/ui/topics/create".to_string()),
        _ => {
            let back = format!("/ui/topics/{}", enc(&topic));
            let action = match change {
                Change::Partitions => format!("{back}/partitions"),
                Change::ReplicationFactor => format!("{back}/replication-factor"),
                _ => format!("{back}/delete"),
            };
            (back, action)
        }
    };
    let preview = match call(&ctx, change, &topic, &form, true).await {
        Ok(p) => p,
        Err(p) => return redirect(&back, &Flash::problem(&p)),
    };
    let fresh = plan_of(change, &preview);
    let confirming = form.get("action") == "confirm";
    let reviewed: Option<Value> = serde_json::from_str(form.get("planned")).ok();
    if confirming && reviewed.as_ref() == Some(&fresh) {
        return match call(&ctx, change, &topic, &form, false).await {
            Ok(d) => {
                let (to, msg) = match change {
                    Change::Create => {
                        if shown(&ctx, &topic).await {
                            (
                                format!("/ui/topics/{}", enc(&topic)),
                                format!("Topic {topic} created with the previewed placement"),
                            )
                        } else {
                            (
                                "/ui/topics".to_string(),
                                format!("Topic {topic} created with the previewed placement; it shows here once the observer's next reading has it"),
                            )
                        }
                    }
                    Change::Partitions => (
                        back.clone(),
                        format!(
                            "Topic {topic} now has {} partitions",
                            human::text(&d["partitionsAfter"])
                        ),
                    ),
                    Change::ReplicationFactor => {
                        let op = human::s(&d, "operationId");
                        (
                            if op.is_empty() { back.clone() } else { format!("/ui/reassignments/{}", enc(&op)) },
                            format!(
                                "Replication factor of {topic} to {}: {} moves queued as operation {op}",
                                human::text(&d["replicationFactor"]),
                                human::text(&d["totalMoves"])
                            ),
                        )
                    }
                    Change::Delete => ("/ui/topics".to_string(), format!("Topic {topic} deleted")),
                };
                redirect(&to, &Flash::ok(msg))
            }
            Err(p) => redirect(&back, &Flash::problem(&p)),
        };
    }
    let (summary, facts, tables, can_confirm) = preview_page(change, &topic, &preview);
    let layout = ctx.layout(format!("Preview: {topic}"), "topics").await;
    render(
        StatusCode::OK,
        &ChangePage {
            layout,
            action,
            summary,
            facts,
            tables,
            fields: fields(change, &form),
            planned: fresh.to_string(),
            confirm: change.confirm_label().to_string(),
            can_confirm,
            changed: confirming,
            force: (change == Change::ReplicationFactor)
                .then(|| "Force (override soft pre-flight reasons; audited)".to_string()),
            back,
        },
    )
}

/// Whether the observer's readings show `topic` yet, waiting a few seconds (a change asks the
/// observer for a reading at once).
async fn shown(ctx: &Ctx, topic: &str) -> bool {
    let uri = format!("/api/v1/partitions{}", query(&[("topic", topic)]));
    for _ in 0..20 {
        if ctx
            .api
            .get(&uri)
            .await
            .is_ok_and(|d| !fmt::arr(&d, "partitions").is_empty())
        {
            return true;
        }
        tokio::time::sleep(std::time::Duration::from_millis(250)).await;
    }
    false
}

/// `POST /ui/topics/create` (`name`, `partitions`, `replicationFactor`, `configs` as
/// `key=value` lines, `action`, `planned`).
pub async fn create(ctx: Ctx, headers: HeaderMap, body: Bytes) -> Response {
    handle(ctx, headers, Change::Create, String::new(), body).await
}

/// `POST /ui/topics/{topic}/partitions` (`count`, `action`, `planned`).
pub async fn partitions(
    ctx: Ctx,
    headers: HeaderMap,
    Path(topic): Path<String>,
    body: Bytes,
) -> Response {
    handle(ctx, headers, Change::Partitions, topic, body).await
}

/// `POST /ui/topics/{topic}/replication-factor` (`replicationFactor`, `partitions`, `force`,
/// `action`, `planned`).
pub async fn replication_factor(
    ctx: Ctx,
    headers: HeaderMap,
    Path(topic): Path<String>,
    body: Bytes,
) -> Response {
    handle(ctx, headers, Change::ReplicationFactor, topic, body).await
}

/// `POST /ui/topics/{topic}/delete` (`force`, `action`, `planned`).
pub async fn delete(
    ctx: Ctx,
    headers: HeaderMap,
    Path(topic): Path<String>,
    body: Bytes,
) -> Response {
    handle(ctx, headers, Change::Delete, topic, body).await
}
