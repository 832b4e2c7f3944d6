//! The OpenAPI 3.1 description of the HTTP API, generated from the code, and the pages that show
//! it: `GET /api/v1/openapi.json`, `GET /api/v1/openapi.yaml` (both free) and `/docs/` (Swagger UI
//! at `/docs/swagger/`, Redoc at `/docs/redoc/`, every asset compiled in).
//!
//! How the document is made ([`document`]):
//!
//! 1. Every handler carries `#[utoipa::path(...)]` (method, path, parameters, request body,
//!    responses); each routes module lists its handlers in a `#[derive(OpenApi)] struct Api` next
//!    to its `routes()`, and [`documented`] merges them. Query parameters come from the
//!    query structs (`IntoParams`), request bodies from the body structs (`ToSchema`), so they
//!    follow the code.
//! 2. A route that serves an operation of the catalog (`ballast_ops::catalog`, its `rest`) answers
//!    what the operation declares, and nothing else says it: its success (status, description,
//!    the named schema of `ballast_ops::catalog::outputs` as the envelope's `data`) and the
//!    refusals of its own (status and when) are written into the route here
//!    ([`declared_answers`]); its handler's annotation lists no responses. The other routes name
//!    theirs in the annotation, with `body = ref("Name")` for a schema of [`schemas`] (which holds
//!    the operations' answer schemas too; a bare name is completed to
//!    `#/components/schemas/Name` here).
//! 3. Then the rules every operation shares are applied once, here: a JSON success answer is
//!    wrapped in the success envelope (`{"success": true, "data": ...}`); error answers get the
//!    failure envelope (`{"success": false, "error", "details"}`); an operation with parameters or
//!    a body gets its 400 (the extractors' rejection) and every operation its 500; and the routes of
//!    [`crate::license::licensed_routes`] (and only those) are marked licensed:
//!    `x-ballast-licensed: true`, a 403 with the license envelope, a note in the summary and
//!    description.
//!
//! The document is built once per process and served from memory.

mod schemas;

use std::sync::OnceLock;

use axum::http::header::{CACHE_CONTROL, CONTENT_TYPE};
use axum::http::{HeaderValue, StatusCode};
use axum::response::{IntoResponse, Redirect, Response};
use axum::routing::get;
use axum::Router;
use ballast_ops::catalog::Operation;
use serde_json::{json, Map, Value};
use utoipa::OpenApi;

use crate::{ApiError, AppState};

/// Where the description is served.
pub const JSON_PATH: &str = "/api/v1/openapi.json";
pub const YAML_PATH: &str = "/api/v1/openapi.yaml";

/// The extension that marks a licensed operation.
pub const LICENSED_EXTENSION: &str = "x-ballast-licensed";

/// The Redoc release compiled in (`web/openapi-assets/README.md`).
const REDOC_VERSION: &str = "2.5.4";
const REDOC_JS: &str = include_str!("../openapi-assets/redoc/redoc.standalone.js");

/// The Redoc bundle as served: its one image from the internet (Redocly's logo in the side
/// bar) replaced by an empty inline SVG, so the page makes no request outside this server.
static REDOC_SERVED: std::sync::LazyLock<String> = std::sync::LazyLock::new(|| {
    REDOC_JS.replace(
        "https://cdn.redoc.ly/redoc/logo-mini.svg",
        "data:image/svg+xml,%3Csvg xmlns=%27http://www.w3.org/2000/svg%27/%3E",
    )
});

/// The HTTP methods an OpenAPI path item may hold, as they are written in it.
const METHODS: [&str; 8] = [
    "get", "put", "post", "delete", "options", "head", "patch", "trace",
];

#[derive(OpenApi)]
#[openapi(
    info(
        title = "ballast",
        description = "Balances Apache Kafka clusters: observes the cluster, proposes and executes \
partition reassignments, manages topic configuration, consumer groups, quotas and ACLs, and \
records an audit log.\n\n\
Every JSON answer uses one of three envelopes: success `{\"success\": true, \"data\": ...}`; \
failure `{\"success\": false, \"error\": \"...\", \"details\": \"...\"}` (400 malformed input, \
404 unknown route or resource, 405 method not allowed, 409 conflict, 502 the cluster refused, \
503 data or cluster unavailable, 500 internal); and, on licensed routes in monitoring mode, the \
license failure `{\"data\": null, \"error\": {\"code\": \"LICENSE_INVALID\" | \
\"LICENSE_EXPIRED\", \"message\": \"...\"}}` with status 403.\n\n\
**Licensed routes** (management mode) carry `x-ballast-licensed: true` and say so in their \
summary; every other route is free (monitoring mode). The license state is served at \
`GET /api/v1/license`.\n\n\
Authentication (docs/auth.md) is off unless configured; then every route but `/api/v1/auth/*`, \
`/api/v1/health` and `/api/v1/ready` needs the session cookie of an OIDC login (`ballast_session`) \
or `Authorization: Bearer pat_...` (401 without), and the `write` scope for a mutation (403). \
Mutations record the acting identity in the audit log (with authentication off: the optional \
`X-Ballast-User` header).",
        license(name = "LicenseRef-ballast-commercial"),
    ),
    tags(
        (name = "system", description = "Health, readiness, version, metrics and this description"),
        (name = "cluster", description = "The observed cluster: overview, health, log dirs, follower lag, partitions, racks, load history (docs/api/observed.md)"),
        (name = "activity", description = "Traffic shares of partitions, topics and brokers (docs/api/observed.md)"),
        (name = "topics", description = "Topic search, partition-count recommendations, topic configuration (docs/api/observed.md, docs/api/live.md, docs/api/manage.md)"),
        (name = "consumer-groups", description = "Consumer groups, their lag, offset resets and deletion (docs/api/live.md, docs/api/manage.md)"),
        (name = "quotas", description = "Client quotas (docs/api/live.md, docs/api/manage.md)"),
        (name = "acls", description = "ACL bindings (docs/api/live.md, docs/api/manage.md)"),
        (name = "messages", description = "Message browsing and the live tail (docs/api/live.md)"),
        (name = "proposals", description = "Rebalancing proposals (docs/api/proposals.md)"),
        (name = "reassignments", description = "Applying proposals, redistribution, bulk reassignment, tracking, cancel, throttle (docs/api/reassignments.md)"),
        (name = "brokers", description = "Preferred leader election, broker maintenance, log-directory moves (docs/api/reassignments.md)"),
        (name = "simulation", description = "What-if simulation and blast radius (docs/api/simulation.md)"),
        (name = "license", description = "License status (docs/license.md)"),
        (name = "audit", description = "The audit log and reverting a recorded change (docs/api/audit.md)"),
        (name = "auth", description = "OIDC login, the session, personal access tokens (docs/auth.md)"),
        (name = "mcp", description = "The MCP endpoint for AI agents (docs/api/mcp.md)"),
        (name = "agents", description = "On-broker agents (the agent channel, authenticated by the agent token), agent upgrades and rolling restarts (docs/rolling-restarts.md)"),
        (name = "chat", description = "The chat assistant: conversations answered by a model with the catalog's tools, mutations approved by the user, answers streamed as server-sent events (docs/chat.md)"),
    ),
    paths(openapi_json, openapi_yaml, license_status)
)]
struct Base;

/// `GET /api/v1/license` is served by `crate::license` (which holds nothing but licensing); it is
/// described here.
#[utoipa::path(
    get,
    path = "/api/v1/license",
    tag = "license",
    operation_id = "getLicense",
    summary = "License status",
    description = "The license state (`licensed`, `trial`, `expired`, `invalid`), the claims of the best license, every source's verdict, the demo trial and auto-fetch. Free. Design: docs/license.md.",
    responses((status = 200, description = "The license status", body = ref("LicenseStatus")))
)]
#[allow(dead_code)]
fn license_status() {}

/// Every documented operation: each module's `Api` (listed next to its `routes()`), merged. The
/// description is built from this; `web/tests/openapi.rs` checks it against what the router
/// serves.
pub(crate) fn documented() -> utoipa::openapi::OpenApi {
    use utoipa::OpenApi;
    let mut api = crate::routes::system::Api::openapi();
    for part in [
        crate::routes::observed::Api::openapi(),
        crate::routes::live::Api::openapi(),
        crate::routes::proposals::Api::openapi(),
        crate::routes::reassignments::Api::openapi(),
        crate::routes::brokers::Api::openapi(),
        crate::routes::simulation::Api::openapi(),
        crate::routes::manage::Api::openapi(),
        crate::routes::audit::Api::openapi(),
        crate::auth::routes::Api::openapi(),
        crate::mcp::Api::openapi(),
        crate::chat::Api::openapi(),
        crate::agents::Api::openapi(),
    ] {
        api.merge(part);
    }
    api
}

/// The description as JSON, built once per process.
pub fn document() -> &'static Value {
    static DOC: OnceLock<Value> = OnceLock::new();
    DOC.get_or_init(build)
}

fn build() -> Value {
    let mut api = Base::openapi();
    api.merge(documented());
    api.info.version = crate::VERSION.to_string();
    // Serialising the crate's own model types cannot fail; should it, the document says so.
    let mut doc = serde_json::to_value(&api).unwrap_or_else(
        |e| json!({"openapi": "3.1.0", "info": {"title": "ballast", "version": crate::VERSION, "description": format!("the description could not be built: {e}")}, "paths": {}}),
    );
    declared_answers(&mut doc, ballast_ops::catalog::all());
    finish(&mut doc, crate::license::licensed_routes());
    doc
}

/// Module documentation, step 2: the success answer and the refusals of every route an
/// operation serves, from the operation's declaration (two operations serving one route declare
/// the same; a test proves it).
fn declared_answers(doc: &mut Value, ops: &[Operation]) {
    for op in ops {
        let (Some((method, path)), Some(output)) = (op.rest, op.output) else {
            continue;
        };
        let operation = doc
            .get_mut("paths")
            .and_then(|paths| paths.get_mut(path))
            .and_then(|item| item.get_mut(method.to_ascii_lowercase()));
        let Some(Value::Object(operation)) = operation else {
            continue;
        };
        let responses = operation.entry("responses").or_insert_with(|| json!({}));
        let Value::Object(responses) = responses else {
            continue;
        };
        responses.insert(
            output.status.to_string(),
            json!({
                "description": output.description,
                "content": {"application/json": {"schema": {"$ref": format!("#/components/schemas/{}", output.schema)}}}
            }),
        );
        for refusal in op.errors {
            responses.insert(
                refusal.status.to_string(),
                json!({"description": refusal.when}),
            );
        }
    }
}

/// The descriptions of the answers every route of a kind shares (step 3).
const MALFORMED: &str = "Malformed input: a path or query parameter of the wrong type, an unknown query parameter, a malformed or missing JSON body";
const BODY_NOT_TAKEN: &str = "A request body was sent; this route takes none (`unexpected request body`), and nothing was done";
const BODY_TOO_LARGE: &str = "The body is larger than 2 MB; nothing was done";
const BUSY: &str = "The database stayed busy, the audit log cannot be written, or another change of the same resource ran too long: nothing was changed; retry after `Retry-After` seconds";
const INTERNAL: &str = "Internal error (e.g. the database failed)";
const UNLICENSED: &str =
    "Monitoring mode: the license is invalid, expired or missing (no trial); nothing was done";
const UNAUTHENTICATED: &str =
    "Authentication is on and the request carries no valid session or token";
const READ_SCOPE: &str = "The identity has the read scope; this needs write";

/// The rules every operation shares (module documentation, step 3).
fn finish(doc: &mut Value, licensed: &[(axum::http::Method, &str)]) {
    let components = doc
        .as_object_mut()
        .map(|d| d.entry("components").or_insert_with(|| json!({})));
    if let Some(Value::Object(components)) = components {
        components.entry("securitySchemes").or_insert_with(|| {
            json!({
                "personalAccessToken": {
                    "type": "http", "scheme": "bearer",
                    "description": "A personal access token: `Authorization: Bearer pat_...` (docs/auth.md). Only when authentication is configured."
                },
                "sessionCookie": {
                    "type": "apiKey", "in": "cookie", "name": crate::auth::SESSION_COOKIE,
                    "description": "The session cookie of an OIDC login (`/api/v1/auth/login/{provider}`). Only when authentication is configured."
                }
            })
        });
        let schemas = components.entry("schemas").or_insert_with(|| json!({}));
        if let Value::Object(schemas) = schemas {
            for (name, schema) in schemas::all() {
                schemas.entry(name.to_string()).or_insert(schema);
            }
        }
    }
    if let Some(Value::Object(paths)) = doc.get_mut("paths") {
        for (path, item) in paths.iter_mut() {
            let Value::Object(item) = item else { continue };
            for (method, op) in item.iter_mut() {
                if !METHODS.contains(&method.as_str()) {
                    continue;
                }
                let is_licensed = licensed
                    .iter()
                    .any(|(m, p)| m.as_str().eq_ignore_ascii_case(method) && p == path);
                if let Value::Object(op) = op {
                    if matches!(method.as_str(), "post" | "put" | "patch" | "delete") {
                        mutation_rules(op);
                    }
                    parameter_rules(op);
                    // The description itself is served as it is, not in the envelope.
                    shared_rules(op, is_licensed, path != JSON_PATH);
                    auth_rules(op, method, path);
                }
            }
        }
    }
    complete_refs(doc);
}

/// What every mutation may answer besides its own codes: a body where none is taken (400), a
/// body over the limit (413), and 503 with `Retry-After` when the database is busy or the audit
/// intent cannot be written (nothing was changed).
fn mutation_rules(op: &mut Map<String, Value>) {
    let takes_body = op.contains_key("requestBody");
    let responses = op.entry("responses").or_insert_with(|| json!({}));
    let Value::Object(responses) = responses else {
        return;
    };
    if takes_body {
        responses
            .entry("413")
            .or_insert_with(|| json!({"description": BODY_TOO_LARGE}));
    } else {
        responses
            .entry("400")
            .or_insert_with(|| json!({"description": BODY_NOT_TAKEN}));
    }
    match responses.get_mut("503") {
        Some(Value::Object(r)) => {
            let text = r
                .get("description")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string();
            r.insert("description".into(), json!(format!("{text}; or: {BUSY}")));
        }
        _ => {
            responses.insert("503".into(), json!({"description": BUSY}));
        }
    }
}

fn shared_rules(op: &mut Map<String, Value>, licensed: bool, envelope: bool) {
    let takes_input = op
        .get("parameters")
        .and_then(Value::as_array)
        .is_some_and(|p| !p.is_empty())
        || op.contains_key("requestBody");
    let responses = op.entry("responses").or_insert_with(|| json!({}));
    let Value::Object(responses) = responses else {
        return;
    };
    if takes_input {
        responses
            .entry("400")
            .or_insert_with(|| json!({"description": MALFORMED}));
    }
    responses
        .entry("500")
        .or_insert_with(|| json!({"description": INTERNAL}));
    if licensed {
        responses.insert(
            "403".into(),
            json!({
                "description": UNLICENSED,
                "content": {"application/json": {"schema": {"$ref": "#/components/schemas/LicenseError"}}}
            }),
        );
    }
    for (code, response) in responses.iter_mut() {
        let Value::Object(response) = response else {
            continue;
        };
        if code.starts_with('2') && envelope {
            let json_content = response
                .get_mut("content")
                .and_then(|c| c.get_mut("application/json"));
            if let Some(Value::Object(media)) = json_content {
                if let Some(data) = media.remove("schema") {
                    media.insert("schema".into(), success_envelope(data));
                }
            }
        } else if !code.starts_with('2') && !response.contains_key("content") {
            response.insert(
                "content".into(),
                json!({"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}),
            );
        }
    }
    if licensed {
        op.insert(LICENSED_EXTENSION.into(), Value::Bool(true));
        let summary = op
            .get("summary")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string();
        op.insert(
            "summary".into(),
            Value::String(format!("{summary} (licensed)")),
        );
        let description = op
            .get("description")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string();
        op.insert(
            "description".into(),
            Value::String(format!(
                "**Licensed** (management mode): without a valid license or trial this answers 403 \
                 with the license envelope and does nothing.\n\n{description}"
            )),
        );
    }
}

/// Authentication (docs/auth.md): a route outside the open set names the two credentials and
/// answers 401 without them; a mutation answers 403 to a `read` identity (a licensed one's 403 is
/// the license envelope, which it keeps).
fn auth_rules(op: &mut Map<String, Value>, method: &str, path: &str) {
    if crate::auth::is_open(path, false) {
        return;
    }
    op.insert(
        "security".into(),
        json!([{}, {"personalAccessToken": []}, {"sessionCookie": []}]),
    );
    let Some(Value::Object(responses)) = op.get_mut("responses") else {
        return;
    };
    let error = json!({"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}});
    responses
        .entry("401")
        .or_insert_with(|| json!({"description": UNAUTHENTICATED, "content": error}));
    let method = axum::http::Method::from_bytes(method.to_ascii_uppercase().as_bytes())
        .unwrap_or(axum::http::Method::GET);
    if crate::auth::required_scope(&method, path) == crate::auth::Scope::Write {
        responses
            .entry("403")
            .or_insert_with(|| json!({"description": READ_SCOPE, "content": error}));
    }
}

/// The rules of parameters written once here. A parameter read into `usize` or `u64` is an
/// integer without a format in utoipa's output, which allows any size; the server reads at most
/// 64 bits: it is written `int64`, and `params.rs` refuses what does not fit before a handler
/// runs (never "number too large"). Path names carry Kafka's naming rules; a path partition or
/// offset is 0 or more.
fn parameter_rules(op: &mut Map<String, Value>) {
    let Some(Value::Array(params)) = op.get_mut("parameters") else {
        return;
    };
    for p in params {
        if let Some(Value::Object(schema)) = p.get_mut("schema") {
            let integer = match schema.get("type") {
                Some(Value::String(t)) => t == "integer",
                Some(Value::Array(ts)) => ts.iter().any(|t| t == "integer"),
                _ => false,
            };
            if integer && !schema.contains_key("format") {
                schema.insert("format".into(), json!("int64"));
            }
            // Names by Kafka's rules (`ballast_ops::names`), refused before anything is sent.
            let name = p
                .get("name")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string();
            if p.get("in").and_then(Value::as_str) == Some("path") {
                if let Some(Value::Object(schema)) = p.get_mut("schema") {
                    match name.as_str() {
                        "topic" => {
                            schema
                                .insert("pattern".into(), json!(ballast_ops::names::TOPIC_PATTERN));
                        }
                        "group" => {
                            schema
                                .insert("pattern".into(), json!(ballast_ops::names::PLAIN_PATTERN));
                            schema.insert(
                                "maxLength".into(),
                                json!(ballast_ops::names::PLAIN_MAX_CHARS),
                            );
                        }
                        "partition" | "offset" => {
                            schema.insert("minimum".into(), json!(0));
                        }
                        _ => {}
                    }
                }
            }
        }
    }
}

/// `{"success": true, "data": <data>}`.
fn success_envelope(data: Value) -> Value {
    json!({
        "type": "object",
        "required": ["success", "data"],
        "properties": {
            "success": {"type": "boolean", "const": true},
            "data": data,
        }
    })
}

/// `ref("Name")` in an annotation means `#/components/schemas/Name`.
fn complete_refs(v: &mut Value) {
    match v {
        Value::Object(map) => {
            for (key, value) in map.iter_mut() {
                match value {
                    Value::String(target) if key == "$ref" && !target.contains('/') => {
                        *target = format!("#/components/schemas/{target}");
                    }
                    _ => complete_refs(value),
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(complete_refs),
        _ => {}
    }
}

/// The document as JSON text.
pub fn json_text() -> &'static str {
    static TEXT: OnceLock<String> = OnceLock::new();
    TEXT.get_or_init(|| serde_json::to_string_pretty(document()).unwrap_or_default())
}

/// The document as YAML text; `Err` when it cannot be written as YAML.
pub fn yaml_text() -> Result<&'static str, String> {
    static TEXT: OnceLock<Result<String, String>> = OnceLock::new();
    TEXT.get_or_init(|| serde_norway::to_string(document()).map_err(|e| e.to_string()))
        .as_deref()
        .map_err(Clone::clone)
}

/// `/api/v1/openapi.{json,yaml}` and the `/docs/` pages.
pub fn routes() -> Router<AppState> {
    let swagger = utoipa_swagger_ui::SwaggerUi::new("/docs/swagger").config(
        utoipa_swagger_ui::Config::new([JSON_PATH])
            // no request to the public validator: the page works offline
            .validator_url("none")
            .display_operation_id(true)
            .show_extensions(true),
    );
    Router::new()
        .route("/api/v1/openapi.json", get(openapi_json))
        .route("/api/v1/openapi.yaml", get(openapi_yaml))
        .route("/docs", get(|| async { Redirect::permanent("/docs/") }))
        .route("/docs/", get(docs_index))
        .route(
            "/docs/redoc",
            get(|| async { Redirect::permanent("/docs/redoc/") }),
        )
        .route("/docs/redoc/", get(redoc_page))
        .route("/docs/redoc/redoc.standalone.js", get(redoc_js))
        .merge(swagger)
}

/// The OpenAPI description of this API, as JSON.
#[utoipa::path(
    get,
    path = "/api/v1/openapi.json",
    tag = "system",
    operation_id = "getOpenApiJson",
    summary = "This API description (OpenAPI 3.1, JSON)",
    description = "The OpenAPI 3.1 document describing every route, generated from the code. Not \
                   wrapped in the success envelope.",
    responses((status = 200, description = "The OpenAPI document", content_type = "application/json", body = Object))
)]
async fn openapi_json() -> Response {
    (
        [(CONTENT_TYPE, HeaderValue::from_static("application/json"))],
        json_text(),
    )
        .into_response()
}

/// The OpenAPI description of this API, as YAML.
#[utoipa::path(
    get,
    path = "/api/v1/openapi.yaml",
    tag = "system",
    operation_id = "getOpenApiYaml",
    summary = "This API description (OpenAPI 3.1, YAML)",
    description = "The same document as `/api/v1/openapi.json`, as YAML.",
    responses((status = 200, description = "The OpenAPI document", content_type = "application/yaml", body = Object))
)]
async fn openapi_yaml() -> Result<Response, ApiError> {
    let text = yaml_text().map_err(|e| ApiError::internal("openapi description failed", e))?;
    Ok((
        [(CONTENT_TYPE, HeaderValue::from_static("application/yaml"))],
        text,
    )
        .into_response())
}

fn html(body: String) -> Response {
    (
        [(
            CONTENT_TYPE,
            HeaderValue::from_static("text/html; charset=utf-8"),
        )],
        body,
    )
        .into_response()
}

async fn docs_index() -> Response {
    html(format!(
        r#"<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>ballast API documentation</title>
<link rel="icon" href="/ui/assets/favicon.svg" type="image/svg+xml">
<style>
  :root {{ color-scheme: light dark; }}
  body {{ font-family: system-ui, sans-serif; max-width: 42rem; margin: 3rem auto; padding: 0 1rem; line-height: 1.5; }}
  li {{ margin: .4rem 0; }}
</style>
</head>
<body>
<h1>ballast API {version}</h1>
<p>The REST API under <code>/api/v1</code>, described in OpenAPI 3.1. Licensed routes are marked
<code>x-ballast-licensed</code> and answer 403 in monitoring mode.</p>
<ul>
  <li><a href="/docs/swagger/">Swagger UI</a>: browse and try the endpoints</li>
  <li><a href="/docs/redoc/">Redoc</a>: the reference, one page</li>
  <li><a href="/api/v1/openapi.json">openapi.json</a> and <a href="/api/v1/openapi.yaml">openapi.yaml</a>: the description itself</li>
</ul>
</body>
</html>
"#,
        version = crate::VERSION
    ))
}

async fn redoc_page() -> Response {
    html(format!(
        r#"<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="generator" content="Redoc {REDOC_VERSION}">
<title>ballast API reference</title>
<link rel="icon" href="/ui/assets/favicon.svg" type="image/svg+xml">
<style>body {{ margin: 0; padding: 0; }}</style>
</head>
<body>
<redoc spec-url="/api/v1/openapi.json"></redoc>
<script src="/docs/redoc/redoc.standalone.js"></script>
</body>
</html>
"#
    ))
}

async fn redoc_js() -> Response {
    (
        StatusCode::OK,
        [
            (
                CONTENT_TYPE,
                HeaderValue::from_static("text/javascript; charset=utf-8"),
            ),
            (
                CACHE_CONTROL,
                HeaderValue::from_static("public, max-age=3600"),
            ),
        ],
        REDOC_SERVED.as_str(),
    )
        .into_response()
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::Method;

    fn op(doc: &Value, path: &str, method: &str) -> Value {
        doc["paths"][path][method].clone()
    }

    #[test]
    fn each_request_body_has_its_own_schema_and_parameters_carry_the_servers_rules() {
        let doc = document();
        let body = |path: &str, method: &str| {
            let r = doc["paths"][path][method]["requestBody"]["content"]["application/json"]
                ["schema"]["$ref"]
                .as_str()
                .unwrap_or_default()
                .trim_start_matches("#/components/schemas/")
                .to_string();
            doc["components"]["schemas"][r].clone()
        };
        // Two types named UpdateBody (ACLs, topic configs) once shared one schema.
        assert!(body("/api/v1/topics/{topic}/config", "put")["properties"]["configs"].is_object());
        assert!(body("/api/v1/acls", "put")["properties"]["from"].is_object());
        assert!(body("/api/v1/topics/config/bulk", "put")["properties"]["updates"].is_object());
        let param = |path: &str, name: &str| {
            doc["paths"][path]["get"]["parameters"]
                .as_array()
                .and_then(|ps| ps.iter().find(|p| p["name"] == name))
                .map(|p| p["schema"].clone())
                .unwrap_or_default()
        };
        assert_eq!(param("/api/v1/cluster/health", "limit")["format"], "int64");
        assert_eq!(
            param("/api/v1/topics/{topic}/config", "topic")["pattern"],
            ballast_ops::names::TOPIC_PATTERN
        );
        assert_eq!(
            param("/api/v1/topics/{topic}/messages/tail", "keepalive")["maximum"],
            300
        );
        assert!(param("/api/v1/activity/topics", "sortBy")["enum"]
            .as_array()
            .is_some_and(|e| e.iter().any(|v| v == "producerByteRate")));
        // The description itself is not in the envelope.
        assert!(
            doc["paths"][JSON_PATH]["get"]["responses"]["200"]["content"]["application/json"]
                ["schema"]
                .get("required")
                .is_none()
        );
    }

    /// Issue 27: a route an operation serves documents what the operation declares — its
    /// success status with the declared schema as the envelope's `data` (the component is the
    /// schema `ballast_ops::catalog::outputs` holds under that name), every declared refusal —
    /// and no other status but those every route of its kind shares.
    #[test]
    fn a_routes_success_schema_and_its_own_errors_are_its_operations_declaration() {
        let doc = document();
        let shared = |status: &str, d: &str| match status {
            "400" => d == MALFORMED || d == BODY_NOT_TAKEN,
            "401" => d == UNAUTHENTICATED,
            "403" => d == UNLICENSED || d == READ_SCOPE,
            "413" => d == BODY_TOO_LARGE,
            "500" => d == INTERNAL,
            "503" => d == BUSY,
            _ => false,
        };
        let mut problems = Vec::new();
        let mut routes = 0;
        for op in ballast_ops::catalog::all() {
            let Some((method, path)) = op.rest else {
                continue;
            };
            let name = format!("{} ({method} {path})", op.name);
            let Some(output) = op.output else {
                problems.push(format!("{name}: no output declared"));
                continue;
            };
            routes += 1;
            let Some(responses) =
                doc["paths"][path][method.to_ascii_lowercase()]["responses"].as_object()
            else {
                problems.push(format!("{name}: not documented"));
                continue;
            };
            let data = json!({"$ref": format!("#/components/schemas/{}", output.schema)});
            for (status, response) in responses {
                let said = response["description"].as_str().unwrap_or_default();
                if status.starts_with('2') {
                    let documented =
                        &response["content"]["application/json"]["schema"]["properties"]["data"];
                    if *status != output.status.to_string()
                        || *documented != data
                        || said != output.description
                    {
                        problems.push(format!(
                            "{name}: documents {status} {documented} ({said}), declares {} {} ({})",
                            output.status, output.schema, output.description
                        ));
                    }
                    continue;
                }
                match op.errors.iter().find(|e| e.status.to_string() == *status) {
                    Some(e) if said == e.when || said == format!("{}; or: {BUSY}", e.when) => {}
                    Some(e) => problems.push(format!(
                        "{name}: documents {status} \"{said}\", declares \"{}\"",
                        e.when
                    )),
                    None if shared(status, said) => {}
                    None => problems.push(format!(
                        "{name}: documents {status} \"{said}\", which it does not declare"
                    )),
                }
            }
            for e in op.errors {
                if !responses.contains_key(&e.status.to_string()) {
                    problems.push(format!(
                        "{name}: declares {} but does not document it",
                        e.status
                    ));
                }
            }
            let component = &doc["components"]["schemas"][output.schema];
            if output.json_schema().as_ref() != Some(component) {
                problems.push(format!(
                    "{name}: the component {} is not the operation's output schema",
                    output.schema
                ));
            }
        }
        assert!(routes > 40, "only {routes} routes of operations");
        assert!(problems.is_empty(), "{}", problems.join("\n"));
    }

    #[test]
    fn shared_rules_wrap_success_add_errors_and_mark_only_licensed_routes() {
        let mut doc = json!({
            "openapi": "3.1.0",
            "paths": {
                "/a/{id}": {
                    "get": {"summary": "read", "parameters": [{"name": "id", "in": "path"}],
                            "responses": {"200": {"description": "ok", "content": {"application/json": {"schema": {"$ref": "Thing"}}}},
                                          "404": {"description": "unknown"}}},
                    "put": {"summary": "write", "responses": {"200": {"description": "ok"}}}
                }
            }
        });
        finish(&mut doc, &[(Method::PUT, "/a/{id}")]);
        let get = op(&doc, "/a/{id}", "get");
        assert_eq!(
            get["responses"]["200"]["content"]["application/json"]["schema"]["properties"]["data"]
                ["$ref"],
            "#/components/schemas/Thing"
        );
        assert_eq!(
            get["responses"]["404"]["content"]["application/json"]["schema"]["$ref"],
            "#/components/schemas/Error"
        );
        assert!(get["responses"]["400"].is_object());
        assert!(get.get(LICENSED_EXTENSION).is_none());
        assert!(get["responses"].get("403").is_none());
        let put = op(&doc, "/a/{id}", "put");
        assert_eq!(put[LICENSED_EXTENSION], true);
        assert_eq!(put["summary"], "write (licensed)");
        assert_eq!(
            put["responses"]["403"]["content"]["application/json"]["schema"]["$ref"],
            "#/components/schemas/LicenseError"
        );
        // A mutation without a body: the 400 is for a body sent anyway; 503 for a busy database.
        assert!(put["responses"]["400"]["description"]
            .as_str()
            .is_some_and(|d| d.contains("takes none")));
        assert!(put["responses"]["503"].is_object());
        assert!(put["responses"].get("413").is_none());
        assert!(doc["components"]["schemas"]["Error"].is_object());
    }
}
