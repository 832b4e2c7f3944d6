//! ACLs (filter, create a binding, delete one) and quotas (every entity, resolve a user and
//! client id the way Kafka does).

use askama::Template;
use axum::body::Bytes;
use axum::extract::RawQuery;
use axum::http::{HeaderMap, StatusCode};
use axum::response::Response;
use serde_json::{json, Value};

use crate::ui::api::query;
use crate::ui::fmt;
use crate::ui::{
    cross_site, query_form, redirect, render, same_origin, Cell, Ctx, Flash, Form, Layout, Notice,
    Table,
};

const RESOURCE_TYPES: [&str; 6] = [
    "Topic",
    "Group",
    "Cluster",
    "TransactionalId",
    "DelegationToken",
    "User",
];
const PATTERN_TYPES: [&str; 2] = ["Literal", "Prefixed"];
const OPERATIONS: [&str; 13] = [
    "All",
    "Read",
    "Write",
    "Create",
    "Delete",
    "Alter",
    "Describe",
    "ClusterAction",
    "DescribeConfigs",
    "AlterConfigs",
    "IdempotentWrite",
    "CreateTokens",
    "DescribeTokens",
];
const PERMISSIONS: [&str; 2] = ["Allow", "Deny"];

/// The binding fields, in the API's names.
const FIELDS: [&str; 7] = [
    "principal",
    "resourceType",
    "resourceName",
    "patternType",
    "operation",
    "permissionType",
    "host",
];

/// One binding of the list, with what its Delete button sends.
struct Binding {
    cells: Vec<String>,
    fields: Vec<(&'static str, String)>,
}

#[derive(Template)]
#[template(path = "acls.html")]
struct AclPage {
    layout: Layout,
    filter: Vec<(&'static str, String)>,
    resource_types: [&'static str; 6],
    pattern_types: [&'static str; 2],
    operations: [&'static str; 13],
    permissions: [&'static str; 2],
    summary: String,
    bindings: Vec<Binding>,
    notice: Option<Notice>,
}

impl AclPage {
    fn value(&self, name: &str) -> &str {
        self.filter
            .iter()
            .find(|(k, _)| *k == name)
            .map_or("", |(_, v)| v.as_str())
    }
}

#[derive(Template)]
#[template(path = "quotas.html")]
struct QuotaPage {
    layout: Layout,
    quotas: Table,
    user: String,
    client_id: String,
    resolved: Option<Table>,
    levels: Option<Table>,
    notice: Option<Notice>,
}

/// `GET /ui/acls?principal=&resourceType=&...`.
pub async fn acls(ctx: Ctx, RawQuery(raw): RawQuery) -> Response {
    let q = query_form(raw.as_deref());
    let filter: Vec<(&'static str, String)> =
        FIELDS.iter().map(|f| (*f, q.get(f).to_string())).collect();
    let mut pairs: Vec<(&str, &str)> = filter.iter().map(|(k, v)| (*k, v.as_str())).collect();
    pairs.push(("limit", "500"));
    let answer = ctx.api.get(&format!("/api/v1/acls{}", query(&pairs))).await;
    let (summary, bindings, notice) = match &answer {
        Ok(d) => {
            let summary = if d["authorizerEnabled"] == Value::Bool(false) {
                "The cluster has no authorizer: ACLs are not enforced and none are listed."
                    .to_string()
            } else {
                format!(
                    "{} of {} bindings{}",
                    fmt::text(&d["count"]),
                    fmt::text(&d["total"]),
                    if fmt::b(d, "truncated") {
                        " (narrow the filter)"
                    } else {
                        ""
                    }
                )
            };
            let bindings = fmt::arr(d, "bindings")
                .iter()
                .map(|b| Binding {
                    cells: FIELDS.iter().map(|f| fmt::s(b, f)).collect(),
                    fields: FIELDS.iter().map(|f| (*f, fmt::s(b, f))).collect(),
                })
                .collect();
            (summary, bindings, None)
        }
        Err(p) => (String::new(), Vec::new(), Some(Notice::from(p))),
    };
    let status = match &answer {
        Err(p) if p.status == 400 => StatusCode::BAD_REQUEST,
        _ => StatusCode::OK,
    };
    let layout = ctx.layout("ACLs", "acls").await;
    render(
        status,
        &AclPage {
            layout,
            filter,
            resource_types: RESOURCE_TYPES,
            pattern_types: PATTERN_TYPES,
            operations: OPERATIONS,
            permissions: PERMISSIONS,
            summary,
            bindings,
            notice,
        },
    )
}

/// `POST /ui/acls` (`action` = `create` or `delete`, and the binding's fields).
pub async fn acl_change(ctx: Ctx, headers: HeaderMap, body: Bytes) -> Response {
    if !same_origin(&headers) {
        return cross_site(&ctx).await;
    }
    let form = Form::parse(&body);
    match form.get("action") {
        "create" => {
            let mut binding = json!({});
            for f in FIELDS {
                if !form.get(f).is_empty() {
                    binding[f] = json!(form.get(f));
                }
            }
            match ctx
                .api
                .post("/api/v1/acls", Some(&json!({ "bindings": [binding] })))
                .await
            {
                Ok(d) => {
                    let existed = fmt::arr(&d, "results")
                        .first()
                        .is_some_and(|r| fmt::b(r, "existed"));
                    redirect(
                        "/ui/acls",
                        &Flash::ok(if existed {
                            "The binding already existed; nothing changed".to_string()
                        } else {
                            "Binding created".to_string()
                        }),
                    )
                }
                Err(p) => redirect("/ui/acls", &Flash::problem(&p)),
            }
        }
        "delete" => {
            let pairs: Vec<(&str, &str)> = FIELDS.iter().map(|f| (*f, form.get(f))).collect();
            match ctx
                .api
                .delete(&format!("/api/v1/acls{}", query(&pairs)))
                .await
            {
                Ok(d) => redirect(
                    "/ui/acls",
                    &Flash::ok(format!("Deleted {} binding(s)", fmt::text(&d["count"]))),
                ),
                Err(p) => redirect("/ui/acls", &Flash::problem(&p)),
            }
        }
        other => {
            ctx.bad_request(
                "ACLs",
                "acls",
                format!("unknown action {other:?}: create or delete"),
            )
            .await
        }
    }
}

/// `GET /ui/quotas?user=&clientId=`: every quota, and the resolution for a user and client id
/// when one is given.
pub async fn quotas(ctx: Ctx, RawQuery(raw): RawQuery) -> Response {
    let q = query_form(raw.as_deref());
    let user = q.get("user").to_string();
    let client_id = q.get("clientId").to_string();
    let list = match ctx.api.get("/api/v1/quotas").await {
        Ok(d) => d,
        Err(p) => return ctx.problem_page("Quotas", "quotas", &p).await,
    };
    let mut quotas = Table::new(
        format!("{} entities with quotas", fmt::text(&list["count"])),
        &["Entity", "Type", "Values", "REST path"],
    )
    .empty("No quota is set.");
    for row in fmt::arr(&list, "quotas") {
        quotas.row(vec![
            Cell::t(entity(&row["entity"])),
            Cell::t(fmt::s(row, "entityType")),
            Cell::t(values(&row["values"])).class("wrap"),
            Cell::t(fmt::s(row, "path")).class("mono"),
        ]);
    }
    let (mut resolved, mut levels, mut notice) = (None, None, None);
    if !user.is_empty() || !client_id.is_empty() {
        let mut body = json!({});
        if !user.is_empty() {
            body["user"] = json!(user);
        }
        if !client_id.is_empty() {
            body["clientId"] = json!(client_id);
        }
        match ctx.api.post("/api/v1/quotas/resolve", Some(&body)).await {
            Ok(r) => {
                let mut t = Table::new(
                    "Effective quotas (each key from the most specific level that sets it)",
                    &["Key", "Value", "From level", "Entity"],
                );
                for k in fmt::arr(&r, "quotas") {
                    t.row(vec![
                        Cell::t(fmt::s(k, "key")).class("mono"),
                        Cell::n(match &k["value"] {
                            Value::Null => "unlimited".to_string(),
                            v => fmt::text(v),
                        }),
                        Cell::t(format!("{} {}", fmt::text(&k["rank"]), fmt::s(k, "level"))),
                        Cell::t(entity(&k["entity"])),
                    ]);
                }
                resolved = Some(t);
                let mut l = Table::new(
                    "Kafka's precedence, most specific first",
                    &["Rank", "Level", "Entity", "Applies", "Values set"],
                );
                for level in fmt::arr(&r, "levels") {
                    l.row(vec![
                        Cell::n(fmt::text(&level["rank"])),
                        Cell::t(fmt::s(level, "level")),
                        Cell::t(entity(&level["entity"])),
                        Cell::t(fmt::text(&level["applies"])),
                        Cell::t(values(&level["values"])).class("wrap"),
                    ]);
                }
                levels = Some(l);
            }
            Err(p) => notice = Some(Notice::from(&p)),
        }
    }
    let layout = ctx.layout("Quotas", "quotas").await;
    render(
        StatusCode::OK,
        &QuotaPage {
            layout,
            quotas,
            user,
            client_id,
            resolved,
            levels,
            notice,
        },
    )
}

/// `user=alice, clientId=<default>`.
fn entity(e: &Value) -> String {
    match e.as_object() {
        Some(o) if !o.is_empty() => o
            .iter()
            .map(|(k, v)| format!("{k}={}", fmt::text(v)))
            .collect::<Vec<_>>()
            .join(", "),
        _ => fmt::text(e),
    }
}

fn values(v: &Value) -> String {
    match v.as_object() {
        Some(o) if !o.is_empty() => o
            .iter()
            .map(|(k, v)| format!("{k} = {}", fmt::text(v)))
            .collect::<Vec<_>>()
            .join(", "),
        Some(_) => "none".to_string(),
        None => fmt::text(v),
    }
}
