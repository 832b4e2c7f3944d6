//! The Access Tokens page (user menu → Access tokens). Tokens are made, listed and
//! revoked through `/api/v1/tokens`, which needs the login session the dashboard carries.

use askama::Template;
use axum::extract::Path;
use axum::http::{HeaderMap, StatusCode};
use axum::response::Response;
use serde_json::{json, Value};

use crate::fmt;
use crate::human;
use crate::url::enc;
use crate::{cross_site, redirect, render, Cell, Ctx, Flash, Form, Layout, Table};

/// The value of a token just made, shown once.
struct Created {
    name: String,
    value: String,
    scope: String,
    expires: String,
}

#[derive(Template)]
#[template(path = "tokens.html")]
struct TokensPage {
    layout: Layout,
    created: Option<Created>,
    pat_enabled: bool,
    can_write: bool,
    tokens: Table,
    /// (id, name) of the tokens that can still be revoked.
    revocable: Vec<(String, String)>,
}

async fn show(ctx: &Ctx, status: StatusCode, created: Option<Created>) -> Response {
    let list = match ctx.api.get("/api/v1/tokens").await {
        Ok(l) => l,
        Err(p) => return ctx.problem_page("Access tokens", "", &p).await,
    };
    let mut tokens = Table::new(
        "Your personal access tokens",
        &["Name", "Scope", "Status", "Created", "Expires", "Last used"],
    );
    tokens.empty = "No tokens yet.".into();
    let mut revocable = Vec::new();
    for t in fmt::arr(&list, "tokens") {
        let status = human::s(t, "status");
        if status == "active" {
            revocable.push((human::s(t, "id"), human::s(t, "name")));
        }
        let when = |k: &str| match human::s(t, k) {
            s if s.is_empty() => "—".to_string(),
            s => s,
        };
        tokens.rows.push(vec![
            Cell::t(human::s(t, "name")),
            Cell::t(human::s(t, "scope")),
            Cell::t(status.clone()).class(if status == "active" { "ok" } else { "bad" }),
            Cell::t(when("createdAt")),
            Cell::t(if human::s(t, "expiresAt").is_empty() {
                "never".into()
            } else {
                when("expiresAt")
            }),
            Cell::t(when("lastUsedAt")),
        ]);
    }
    let layout = ctx.layout("Access tokens", "").await;
    let can_write = ctx.api.identity().is_some_and(|i| i.write);
    render(
        status,
        &TokensPage {
            layout,
            created,
            pat_enabled: list["patEnabled"] == Value::Bool(true),
            can_write,
            tokens,
            revocable,
        },
    )
}

/// `GET /ui/tokens`.
pub async fn page(ctx: Ctx) -> Response {
    show(&ctx, StatusCode::OK, None).await
}

/// `POST /ui/tokens`: makes a token and shows its value on the answer itself (never in a
/// redirect or cookie).
pub async fn create(ctx: Ctx, headers: HeaderMap, body: axum::body::Bytes) -> Response {
    if !ctx.same_origin(&headers) {
        return cross_site(&ctx).await;
    }
    let form = Form::parse(&body);
    let mut request = json!({"name": form.get("name"), "scope": form.get("scope")});
    match form.get("expires") {
        "" => {}
        days => match days.parse::<u64>() {
            Ok(d) if (1..=3650).contains(&d) => {
                let at = ctx.host.now_ms() + (d as i64) * 86_400_000;
                request["expiresAt"] = json!(humantime::format_rfc3339_seconds(
                    std::time::UNIX_EPOCH + std::time::Duration::from_millis(at as u64)
                )
                .to_string());
            }
            _ => {
                return ctx
                    .bad_request(
                        "Access tokens",
                        "",
                        format!("expires: a number of days, got {days:?}"),
                    )
                    .await
            }
        },
    }
    match ctx.api.post("/api/v1/tokens", Some(&request)).await {
        Ok(t) => {
            let created = Created {
                name: human::s(&t, "name"),
                value: human::s(&t, "token"),
                scope: human::s(&t, "scope"),
                expires: fmt::time(&human::s(&t, "expiresAt")),
            };
            show(&ctx, StatusCode::OK, Some(created)).await
        }
        Err(p) => redirect("/ui/tokens", &Flash::problem(&p)),
    }
}

/// `POST /ui/tokens/{id}/revoke`.
pub async fn revoke(ctx: Ctx, headers: HeaderMap, Path(id): Path<String>) -> Response {
    if !ctx.same_origin(&headers) {
        return cross_site(&ctx).await;
    }
    match ctx
        .api
        .delete(&format!("/api/v1/tokens/{}", enc(&id)))
        .await
    {
        Ok(t) => redirect(
            "/ui/tokens",
            &Flash::ok(format!(
                "Token {} revoked: it no longer works",
                human::s(&t, "name")
            )),
        ),
        Err(p) => redirect("/ui/tokens", &Flash::problem(&p)),
    }
}
