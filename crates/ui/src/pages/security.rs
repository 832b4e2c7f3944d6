//! ACLs (filter, create a binding, delete one) and quotas (every entity, resolve a user and
//! client id the way Kafka does).

use askama::Template;
use axum::body::Bytes;
use axum::extract::RawQuery;
use axum::http::{HeaderMap, StatusCode};
use axum::response::Response;
use serde_json::{json, Value};

use crate::api::query;
use crate::fmt;
use crate::human;
use crate::url::enc;
use crate::{
    cross_site, query_form, redirect, render, Cell, Ctx, Flash, Form, Layout, Notice, Table,
};

use ballast_model::acls::{OPERATIONS, PATTERN_TYPES, PERMISSIONS, RESOURCE_TYPES};

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
    operations: [&'static str; 14],
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

/// The quota keys the set form offers (the API's).
const QUOTA_KEYS: [&str; 4] = [
    "producer_byte_rate",
    "consumer_byte_rate",
    "request_percentage",
    "controller_mutation_rate",
];

/// The kinds of quota entity the set form offers: value, label.
const ENTITY_KINDS: [(&str, &str); 6] = [
    ("user", "a user"),
    ("client-id", "a client id"),
    ("user-client-id", "a user with a client id"),
    ("default-user", "the default user"),
    ("default-client-id", "the default client id"),
    ("default", "the default user with the default client id"),
];

/// One entity of the quota list, with what its Delete button sends.
struct QuotaRow {
    entity: String,
    entity_type: String,
    values: String,
    path: String,
}

#[derive(Template)]
#[template(path = "quotas.html")]
struct QuotaPage {
    layout: Layout,
    caption: String,
    rows: Vec<QuotaRow>,
    kinds: [(&'static str, &'static str); 6],
    keys: [&'static str; 4],
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
                    human::text(&d["count"]),
                    human::text(&d["total"]),
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
                    cells: FIELDS.iter().map(|f| human::s(b, f)).collect(),
                    fields: FIELDS.iter().map(|f| (*f, human::s(b, f))).collect(),
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
    if !ctx.same_origin(&headers) {
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
                    &Flash::ok(format!("Deleted {} binding(s)", human::text(&d["count"]))),
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
    let caption = format!("{} entities with quotas", human::text(&list["count"]));
    let rows = fmt::arr(&list, "quotas")
        .iter()
        .map(|row| QuotaRow {
            entity: entity(&row["entity"]),
            entity_type: human::s(row, "entityType"),
            values: values(&row["values"]),
            path: human::s(row, "path"),
        })
        .collect();
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
                        Cell::t(human::s(k, "key")).class("mono"),
                        Cell::n(match &k["value"] {
                            Value::Null => "unlimited".to_string(),
                            v => human::text(v),
                        }),
                        Cell::t(format!(
                            "{} {}",
                            human::text(&k["rank"]),
                            human::s(k, "level")
                        )),
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
                        Cell::n(human::text(&level["rank"])),
                        Cell::t(human::s(level, "level")),
                        Cell::t(entity(&level["entity"])),
                        Cell::t(human::text(&level["applies"])),
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
            caption,
            rows,
            kinds: ENTITY_KINDS,
            keys: QUOTA_KEYS,
            user,
            client_id,
            resolved,
            levels,
            notice,
        },
    )
}

/// `POST /ui/quotas` (`action` = `set` with `kind`, `user`, `clientId` and a value per key;
/// or `delete` with the entity's `path` as the quota list gives it).
pub async fn quota_change(ctx: Ctx, headers: HeaderMap, body: Bytes) -> Response {
    if !ctx.same_origin(&headers) {
        return cross_site(&ctx).await;
    }
    let form = Form::parse(&body);
    match form.get("action") {
        "set" => {
            let path = match set_path(form.get("kind"), form.get("user"), form.get("clientId")) {
                Ok(p) => p,
                Err(message) => return ctx.bad_request("Quotas", "quotas", message).await,
            };
            let mut values = serde_json::Map::new();
            for key in QUOTA_KEYS {
                let text = form.get(key);
                if text.is_empty() {
                    continue;
                }
                // A number when it reads as one; otherwise the text, for the API to refuse in
                // its own words.
                let value = text
                    .parse::<f64>()
                    .ok()
                    .and_then(serde_json::Number::from_f64)
                    .map_or_else(|| json!(text), Value::Number);
                values.insert(key.to_string(), value);
            }
            match ctx.api.put(&path, &json!({ "values": values })).await {
                Ok(d) => redirect(
                    "/ui/quotas",
                    &Flash::ok(format!(
                        "Quotas of {} set: {}",
                        entity(&d["entity"]),
                        self::values(&d["after"])
                    )),
                ),
                Err(p) => redirect("/ui/quotas", &Flash::problem(&p)),
            }
        }
        "delete" => {
            let Some(path) = delete_path(form.get("path")) else {
                return ctx
                    .bad_request(
                        "Quotas",
                        "quotas",
                        format!("{:?} is not a quota entity path", form.get("path")),
                    )
                    .await;
            };
            match ctx.api.delete(&path).await {
                Ok(d) => redirect(
                    "/ui/quotas",
                    &Flash::ok(format!(
                        "Quotas of {} deleted (were: {})",
                        entity(&d["entity"]),
                        values(&d["before"])
                    )),
                ),
                Err(p) => redirect("/ui/quotas", &Flash::problem(&p)),
            }
        }
        other => {
            ctx.bad_request(
                "Quotas",
                "quotas",
                format!("unknown action {other:?}: set or delete"),
            )
            .await
        }
    }
}

/// The API path of the entity the set form names.
fn set_path(kind: &str, user: &str, client: &str) -> Result<String, String> {
    let need = |what: &str, v: &str| {
        if v.is_empty() {
            Err(format!("give the {what} whose quotas to set"))
        } else {
            Ok(enc(v))
        }
    };
    Ok(match kind {
        "user" => format!("/api/v1/quotas/user/{}", need("user", user)?),
        "client-id" => format!("/api/v1/quotas/client-id/{}", need("client id", client)?),
        "user-client-id" => format!(
            "/api/v1/quotas/user/{}/{}",
            need("user", user)?,
            need("client id", client)?
        ),
        "default-user" => "/api/v1/quotas/default-user".to_string(),
        "default-client-id" => "/api/v1/quotas/default-client-id".to_string(),
        "default" => "/api/v1/quotas/default".to_string(),
        other => {
            return Err(format!(
                "unknown entity kind {other:?}: one of {}",
                ENTITY_KINDS.map(|(k, _)| k).join(", ")
            ))
        }
    })
}

/// A quota entity path from the list (`/api/v1/quotas/user/<default>/app`), its name segments
/// encoded again so the request is a valid URI; `None` for anything else.
fn delete_path(path: &str) -> Option<String> {
    let rest = path.strip_prefix("/api/v1/quotas/")?;
    let segments: Vec<&str> = rest.split('/').collect();
    let ok_shape = matches!(
        segments.as_slice(),
        ["default" | "default-user" | "default-client-id"]
            | ["user" | "client-id", _]
            | ["user", _, _]
    );
    if !ok_shape || segments.iter().any(|s| s.is_empty()) {
        return None;
    }
    let encoded: Option<Vec<String>> = segments
        .iter()
        .map(|s| crate::percent_decode(s).map(|d| enc(&d)))
        .collect();
    Some(format!("/api/v1/quotas/{}", encoded?.join("/")))
}

/// `user=alice, clientId=<default>`.
fn entity(e: &Value) -> String {
    match e.as_object() {
        Some(o) if !o.is_empty() => o
            .iter()
            .map(|(k, v)| format!("{k}={}", human::text(v)))
            .collect::<Vec<_>>()
            .join(", "),
        _ => human::text(e),
    }
}

fn values(v: &Value) -> String {
    match v.as_object() {
        Some(o) if !o.is_empty() => o
            .iter()
            .map(|(k, v)| format!("{k} = {}", human::text(v)))
            .collect::<Vec<_>>()
            .join(", "),
        Some(_) => "none".to_string(),
        None => human::text(v),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quota_paths_are_built_from_the_form_and_the_list_and_nothing_else() {
        assert_eq!(
            set_path("user-client-id", "a/b", "<default>").unwrap(),
            "/api/v1/quotas/user/a%2Fb/%3Cdefault%3E"
        );
        assert!(set_path("user", "", "").is_err());
        assert!(set_path("ip", "x", "").is_err());
        assert_eq!(
            delete_path("/api/v1/quotas/user/<default>/app").as_deref(),
            Some("/api/v1/quotas/user/%3Cdefault%3E/app")
        );
        assert_eq!(
            delete_path("/api/v1/quotas/default").as_deref(),
            Some("/api/v1/quotas/default")
        );
        assert_eq!(delete_path("/api/v1/acls"), None);
        assert_eq!(delete_path("/api/v1/quotas/user/a/b/c"), None);
        assert_eq!(delete_path("/api/v1/quotas/resolve"), None);
    }
}
