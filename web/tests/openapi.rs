//! The OpenAPI description (`/api/v1/openapi.json`, `/api/v1/openapi.yaml`) and the `/docs/`
//! pages: the document is valid OpenAPI 3.1, the YAML says the same as the JSON, the documented
//! operations are exactly the routes the router serves, exactly the licensed routes are marked
//! licensed, and the documentation pages load with every asset from the binary.

use std::collections::BTreeSet;
use std::sync::Arc;

use ballast_config::{Config, RawConfig};
use ballast_runtime::Clock;
use ballast_schema::Store;
use ballast_web::license::{licensed_routes, LicenseRuntime};
use ballast_web::openapi::{document, LICENSED_EXTENSION};
use ballast_web::AppState;
use serde_json::{json, Value};

/// 2027-01-15T08:00:00Z
const T0: i64 = 1_800_000_000_000;

mod routes_in_code;
use routes_in_code::{documentable, served, METHODS};

struct FixedClock;

impl Clock for FixedClock {
    fn now_ms(&self) -> i64 {
        T0
    }
}

struct Server {
    base: String,
    http: reqwest::Client,
    _dir: tempfile::TempDir,
}

/// The whole router on a loopback port, licensed (so licensed routes reach the router), with a
/// cluster address nothing listens on.
async fn start() -> Server {
    let dir = tempfile::tempdir().expect("temp dir");
    let db = dir.path().join("ballast.db");
    Store::migrate(&db).expect("migrate");
    let store = Store::open(&db).expect("open store");
    let pairs = [
        ("BALLAST_KAFKA_BOOTSTRAP_SERVERS", "127.0.0.1:9"),
        ("BALLAST_DATA_DIR", dir.path().to_str().expect("utf-8 path")),
    ];
    let raw = RawConfig::from_pairs(
        pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())),
        None,
    )
    .expect("raw config");
    let config = Config::from_raw(&raw).expect("valid config");
    let mut state = AppState::new(store.clone(), Arc::new(config), Arc::new(FixedClock));
    state.set_license(LicenseRuntime::licensed_for_tests(&store, T0).expect("license"));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let addr = listener.local_addr().expect("address");
    let app = ballast_web::router(state);
    tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    Server {
        base: format!("http://{addr}"),
        http: reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .timeout(std::time::Duration::from_secs(60))
            .build()
            .expect("client"),
        _dir: dir,
    }
}

impl Server {
    async fn get(&self, path: &str) -> (u16, String, Vec<u8>) {
        let r = self
            .http
            .get(format!("{}{path}", self.base))
            .send()
            .await
            .expect("request");
        let status = r.status().as_u16();
        let content_type = r
            .headers()
            .get(reqwest::header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default()
            .to_string();
        let body = r.bytes().await.expect("body").to_vec();
        (status, content_type, body)
    }

    /// Status and, for a JSON answer, its body (a stream such as the message tail is not read).
    async fn send(&self, method: &str, path: &str) -> (u16, Value) {
        let m =
            reqwest::Method::from_bytes(method.to_ascii_uppercase().as_bytes()).expect("method");
        let r = self
            .http
            .request(m, format!("{}{path}", self.base))
            .json(&json!({}))
            .send()
            .await
            .expect("request");
        let status = r.status().as_u16();
        let is_json = r
            .headers()
            .get(reqwest::header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v.starts_with("application/json"));
        if !is_json {
            return (status, Value::Null);
        }
        let text = r.text().await.expect("body");
        (status, serde_json::from_str(&text).unwrap_or(Value::Null))
    }
}

/// Every documented operation as (METHOD, path pattern).
fn documented() -> BTreeSet<(String, String)> {
    let mut out = BTreeSet::new();
    for (path, item) in document()["paths"].as_object().expect("paths") {
        for method in METHODS {
            if item.get(method).is_some() {
                out.insert((method.to_ascii_uppercase(), path.clone()));
            }
        }
    }
    out
}

fn operation<'a>(method: &str, path: &str) -> &'a Value {
    &document()["paths"][path][method.to_ascii_lowercase()]
}

/// A concrete path for a pattern: each `{name}` becomes a sample value of the parameter's type.
fn concrete(pattern: &str) -> String {
    pattern
        .split('/')
        .map(|segment| match segment {
            "{partition}" | "{offset}" | "{brokerId}" => "1".to_string(),
            "{id}" => "op-1".to_string(),
            s if s.starts_with('{') => "sample".to_string(),
            s => s.to_string(),
        })
        .collect::<Vec<_>>()
        .join("/")
}

/// Whether a response is the router's own "no such route" or "no such method" answer (not a
/// handler's 404 for an unknown resource).
fn router_refusal(status: u16, body: &Value) -> bool {
    let details = body["details"].as_str().unwrap_or_default();
    (status == 404 && body["error"] == "not found" && details.starts_with("no route for "))
        || (status == 405 && body["error"] == "method not allowed")
}

#[test]
fn the_json_description_validates_against_the_openapi_3_1_schema() {
    let schema: Value = serde_json::from_str(include_str!("data/openapi-3.1.schema.json"))
        .expect("the vendored schema is JSON");
    let validator = jsonschema::draft202012::new(&schema).expect("the OpenAPI schema compiles");
    let doc = document();
    let errors: Vec<String> = validator
        .iter_errors(doc)
        .map(|e| format!("{} at {}", e, e.instance_path()))
        .collect();
    assert!(errors.is_empty(), "{}", errors.join("\n"));
    assert_eq!(doc["openapi"], "3.1.0");
    assert_eq!(doc["info"]["version"], ballast_web::VERSION);
}

/// The OpenAPI schema leaves Schema Objects to their dialect: each one must be a valid JSON Schema
/// 2020-12 schema, and every `$ref` must point at something in the document.
#[test]
fn every_schema_in_the_description_is_valid_json_schema_and_every_ref_resolves() {
    let doc = document();
    let mut schemas = Vec::new();
    collect_schemas(doc, "", &mut schemas);
    if let Some(components) = doc["components"]["schemas"].as_object() {
        for (name, s) in components {
            schemas.push((format!("/components/schemas/{name}"), s));
        }
    }
    assert!(schemas.len() > 50, "only {} schemas found", schemas.len());
    let mut problems = Vec::new();
    for (at, schema) in &schemas {
        if let Err(e) = jsonschema::draft202012::meta::validate(schema) {
            problems.push(format!("{at}: {e}"));
        }
    }
    let mut refs = Vec::new();
    collect_refs(doc, &mut refs);
    for target in refs {
        let resolved = target
            .strip_prefix('#')
            .and_then(|pointer| doc.pointer(pointer));
        if resolved.is_none() {
            problems.push(format!("unresolved $ref {target}"));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

fn collect_schemas<'a>(v: &'a Value, at: &str, out: &mut Vec<(String, &'a Value)>) {
    match v {
        Value::Object(map) => {
            for (k, child) in map {
                let here = format!("{at}/{k}");
                if k == "schema" && child.is_object() {
                    out.push((here.clone(), child));
                }
                collect_schemas(child, &here, out);
            }
        }
        Value::Array(items) => {
            for (i, child) in items.iter().enumerate() {
                collect_schemas(child, &format!("{at}/{i}"), out);
            }
        }
        _ => {}
    }
}

fn collect_refs(v: &Value, out: &mut Vec<String>) {
    match v {
        Value::Object(map) => {
            for (k, child) in map {
                match child {
                    Value::String(s) if k == "$ref" => out.push(s.clone()),
                    _ => collect_refs(child, out),
                }
            }
        }
        Value::Array(items) => items.iter().for_each(|c| collect_refs(c, out)),
        _ => {}
    }
}

#[tokio::test]
async fn the_served_yaml_description_equals_the_served_json_one() {
    let server = start().await;
    let (status, content_type, json_body) = server.get("/api/v1/openapi.json").await;
    assert_eq!(status, 200);
    assert!(
        content_type.starts_with("application/json"),
        "{content_type}"
    );
    let from_json: Value = serde_json::from_slice(&json_body).expect("json");
    assert_eq!(&from_json, document());
    let (status, content_type, yaml_body) = server.get("/api/v1/openapi.yaml").await;
    assert_eq!(status, 200);
    assert!(
        content_type.starts_with("application/yaml"),
        "{content_type}"
    );
    let from_yaml: Value = serde_norway::from_slice(&yaml_body).expect("yaml");
    assert_eq!(from_yaml, from_json);
}

#[tokio::test]
async fn the_description_documents_the_content_types_its_two_forms_are_served_with() {
    let server = start().await;
    for (path, method) in [
        ("/api/v1/openapi.json", "get"),
        ("/api/v1/openapi.yaml", "get"),
    ] {
        let (status, served, _) = server.get(path).await;
        assert_eq!(status, 200, "{path}");
        let documented: Vec<&String> = operation(method, path)["responses"]["200"]["content"]
            .as_object()
            .expect("documented content")
            .keys()
            .collect();
        assert_eq!(documented.len(), 1, "{path}: {documented:?}");
        assert!(
            served.starts_with(documented[0].as_str()),
            "{path}: documented as {documented:?}, served as {served}"
        );
    }
}

#[test]
fn every_route_the_router_serves_is_documented_and_nothing_else() {
    let served: BTreeSet<_> = served()
        .into_iter()
        .filter(|(_, path)| documentable(path))
        .collect();
    let documented = documented();
    let undocumented: Vec<_> = served.difference(&documented).collect();
    let not_served: Vec<_> = documented.difference(&served).collect();
    assert!(
        undocumented.is_empty() && not_served.is_empty(),
        "served but not documented: {undocumented:?}\ndocumented but not in the router's code: {not_served:?}"
    );
    assert!(served.len() > 70, "only {} routes read", served.len());
}

#[tokio::test]
async fn every_documented_operation_is_answered_by_a_handler_not_the_routers_404_or_405() {
    let server = start().await;
    let mut missing = Vec::new();
    for (method, path) in documented() {
        let (status, body) = server.send(&method, &concrete(&path)).await;
        // (Logout and refresh answer a request from no page of this origin with their own
        // 403: the handler answered.)
        let own_403 = body["error"] == "cross-site request refused";
        if router_refusal(status, &body) || (status == 403 && !own_403) {
            missing.push(format!("{method} {path}: {status} {body}"));
        }
    }
    assert!(missing.is_empty(), "{}", missing.join("\n"));
}

#[tokio::test]
async fn methods_a_documented_path_does_not_document_answer_405() {
    let server = start().await;
    let documented = documented();
    let paths: BTreeSet<&String> = documented.iter().map(|(_, p)| p).collect();
    let mut served_anyway = Vec::new();
    for path in paths {
        for method in ["GET", "PUT", "POST", "DELETE", "PATCH"] {
            if documented.contains(&(method.to_string(), path.clone())) {
                continue;
            }
            let (status, body) = server.send(method, &concrete(path)).await;
            if !router_refusal(status, &body) {
                served_anyway.push(format!("{method} {path}: {status} {body}"));
            }
        }
    }
    assert!(served_anyway.is_empty(), "{}", served_anyway.join("\n"));
}

#[test]
fn exactly_the_licensed_routes_are_marked_licensed() {
    let licensed: BTreeSet<(String, String)> = licensed_routes()
        .iter()
        .map(|(m, p)| (m.as_str().to_string(), p.to_string()))
        .collect();
    let mut problems = Vec::new();
    for (method, path) in documented() {
        let op = operation(&method, &path);
        let marked = op.get(LICENSED_EXTENSION) == Some(&Value::Bool(true));
        let license_403 = op["responses"]["403"]["content"]["application/json"]["schema"]["$ref"]
            == "#/components/schemas/LicenseError";
        let summary_says = op["summary"]
            .as_str()
            .is_some_and(|s| s.ends_with("(licensed)"));
        let should = licensed.contains(&(method.clone(), path.clone()));
        if (marked, license_403, summary_says) != (should, should, should) {
            problems.push(format!(
                "{method} {path}: licensed {should}, marked {marked}, 403 {license_403}, summary {summary_says}"
            ));
        }
    }
    let documented = documented();
    for route in &licensed {
        if !documented.contains(route) {
            problems.push(format!("licensed but not documented: {route:?}"));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn every_operation_has_a_unique_id_a_summary_a_tag_and_its_envelopes() {
    let mut ids = BTreeSet::new();
    let mut problems = Vec::new();
    let tags: BTreeSet<&str> = document()["tags"]
        .as_array()
        .expect("tags")
        .iter()
        .filter_map(|t| t["name"].as_str())
        .collect();
    for (method, path) in documented() {
        let op = operation(&method, &path);
        let name = format!("{method} {path}");
        match op["operationId"].as_str() {
            Some(id) if ids.insert(id.to_string()) => {}
            other => problems.push(format!("{name}: operationId {other:?} missing or repeated")),
        }
        if op["summary"].as_str().is_none_or(str::is_empty) {
            problems.push(format!("{name}: no summary"));
        }
        let op_tags = op["tags"].as_array().cloned().unwrap_or_default();
        if op_tags.is_empty()
            || !op_tags
                .iter()
                .all(|t| t.as_str().is_some_and(|t| tags.contains(t)))
        {
            problems.push(format!("{name}: tags {op_tags:?} not declared"));
        }
        for param in op["parameters"].as_array().into_iter().flatten() {
            if param["in"] == "path"
                && !path.contains(&format!(
                    "{{{}}}",
                    param["name"].as_str().unwrap_or_default()
                ))
            {
                problems.push(format!(
                    "{name}: path parameter {} not in the path",
                    param["name"]
                ));
            }
        }
        let responses = op["responses"].as_object().cloned().unwrap_or_default();
        // A login step answers with a redirect (303) to the provider or back to the page.
        let success: Vec<_> = responses
            .keys()
            .filter(|c| c.starts_with('2') || c.as_str() == "303")
            .collect();
        if success.is_empty() {
            problems.push(format!("{name}: no success response"));
        }
        for (code, response) in &responses {
            let json_schema = &response["content"]["application/json"]["schema"];
            if code.starts_with('2') {
                let enveloped =
                    json_schema.is_null() || json_schema["properties"]["success"]["const"] == true;
                if !enveloped && !path.starts_with("/api/v1/openapi") {
                    problems.push(format!("{name} {code}: not in the success envelope"));
                }
            } else if (code != "403" || op.get(LICENSED_EXTENSION).is_none())
                && json_schema["$ref"] != "#/components/schemas/Error"
                // The MCP transport answers in its protocol's own errors (JSON-RPC), and a
                // browser's login callback with an HTML page saying why.
                && !(path == "/api/v1/mcp"
                    && json_schema["$ref"] == "#/components/schemas/JsonRpcError")
                && !(json_schema.is_null() && response["content"]["text/html"].is_object())
            {
                problems.push(format!("{name} {code}: not the failure envelope"));
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn the_metrics_and_the_message_tail_are_described_with_their_content_types() {
    let metrics = operation("GET", "/metrics");
    let content = metrics["responses"]["200"]["content"]
        .as_object()
        .expect("metrics content");
    assert!(
        content.keys().all(|k| k.starts_with("text/plain")),
        "{content:?}"
    );
    let tail = operation("GET", "/api/v1/topics/{topic}/messages/tail");
    assert!(
        tail["responses"]["200"]["content"]["text/event-stream"].is_object(),
        "{tail}"
    );
}

#[tokio::test]
async fn the_docs_pages_and_their_assets_load_from_the_binary() {
    let server = start().await;
    let (status, _, _) = server.get("/docs").await;
    assert_eq!(status, 308);
    let mut pages = Vec::new();
    for page in ["/docs/", "/docs/swagger/", "/docs/redoc/"] {
        let (status, content_type, body) = server.get(page).await;
        assert_eq!(status, 200, "{page}");
        assert!(
            content_type.starts_with("text/html"),
            "{page}: {content_type}"
        );
        pages.push((page, String::from_utf8(body).expect("utf-8 page")));
    }
    let index = &pages[0].1;
    for link in [
        "/docs/swagger/",
        "/docs/redoc/",
        "/api/v1/openapi.json",
        "/api/v1/openapi.yaml",
    ] {
        assert!(
            index.contains(&format!("href=\"{link}\"")),
            "{link} in {index}"
        );
    }
    // Every script and style sheet of every page is served by ballast itself.
    for (page, html) in &pages {
        for asset in assets(html) {
            assert!(!asset.contains("//"), "{page} loads {asset} from elsewhere");
            let url = if asset.starts_with('/') {
                asset.clone()
            } else {
                format!("{page}{}", asset.trim_start_matches("./"))
            };
            let (status, content_type, body) = server.get(&url).await;
            assert_eq!(status, 200, "{url}");
            let expected = if url.ends_with(".css") {
                "text/css"
            } else {
                "javascript"
            };
            assert!(content_type.contains(expected), "{url}: {content_type}");
            assert!(!body.is_empty(), "{url}");
        }
    }
    let (_, _, redoc) = server.get("/docs/redoc/redoc.standalone.js").await;
    assert!(
        redoc.len() > 500_000,
        "redoc bundle of {} bytes",
        redoc.len()
    );
    // The bundle's one image from the internet (Redocly's logo) is not fetched: offline it
    // would be a failed request on every page view.
    let redoc = String::from_utf8_lossy(&redoc);
    assert!(
        !redoc.contains("https://cdn.redoc.ly"),
        "redoc fetches its logo"
    );
    // Pages name their icon, so the browser does not ask for a missing /favicon.ico.
    for (page, html) in &pages {
        assert!(html.contains(r#"rel="icon""#), "{page} names no icon");
    }
    let (status, _, initializer) = server.get("/docs/swagger/swagger-initializer.js").await;
    assert_eq!(status, 200);
    let initializer = String::from_utf8(initializer).expect("utf-8");
    assert!(
        initializer.contains("/api/v1/openapi.json"),
        "{initializer}"
    );
    assert!(
        initializer.contains("\"validatorUrl\": \"none\"")
            || initializer.contains("\"validatorUrl\":\"none\""),
        "{initializer}"
    );
}

/// `src` of scripts and `href` of style sheets in a page.
fn assets(html: &str) -> Vec<String> {
    let mut out = Vec::new();
    for (tag, attribute) in [("<script", "src=\""), ("<link", "href=\"")] {
        for piece in html.split(tag).skip(1) {
            let element = piece.split('>').next().unwrap_or_default();
            if tag == "<link" && !element.contains("stylesheet") {
                continue;
            }
            if let Some(value) = element.split(attribute).nth(1) {
                out.push(value.split('"').next().unwrap_or_default().to_string());
            }
        }
    }
    out
}
