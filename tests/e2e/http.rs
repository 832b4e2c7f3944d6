//! The web process's first endpoints and the spec's envelopes, over real HTTP.

use reqwest::blocking::get;
use serde_json::Value;

use crate::support::Service;

fn fetch(service: &Service, path: &str) -> (u16, Value) {
    let response = get(service.url(path)).expect("request");
    let status = response.status().as_u16();
    (status, response.json().expect("json body"))
}

#[test]
fn health_is_live_and_lists_every_worker() {
    let service = Service::start();
    let (status, body) = fetch(&service, "/api/v1/health");
    assert_eq!(status, 200);
    assert_eq!(body["success"], true);
    let names: Vec<&str> = body["data"]["workers"]
        .as_array()
        .expect("workers")
        .iter()
        .filter_map(|w| w["name"].as_str())
        .collect();
    assert_eq!(names, ["observer", "executor", "healer", "web"]);
    assert_eq!(body["data"]["supervisor"]["pid"], service.child.id());
}

#[test]
fn ready_is_503_in_the_error_envelope_until_the_observer_has_seen_the_brokers() {
    let service = Service::start();
    let (status, body) = fetch(&service, "/api/v1/ready");
    assert_eq!(status, 503);
    assert_eq!(body["success"], false);
    assert_eq!(body["error"], "broker view unavailable");
    assert!(body["details"].as_str().is_some_and(|d| !d.is_empty()));
}

#[test]
fn version_reports_version_commit_and_build_time() {
    let service = Service::start();
    let (status, body) = fetch(&service, "/api/v1/version");
    assert_eq!(status, 200);
    let data = &body["data"];
    assert_eq!(data["version"], env!("CARGO_PKG_VERSION"));
    assert!(data["commit"].as_str().is_some_and(|c| !c.is_empty()));
    assert!(data["buildTime"].as_str().is_some_and(|t| !t.is_empty()));
    assert!(data["schemaVersion"].as_u64().is_some_and(|v| v >= 1));

    // and `ballast --version` says the same
    let out = crate::support::ballast_output(&["--version"], &[]);
    let line = String::from_utf8_lossy(&out.stdout).to_string();
    let commit = data["commit"].as_str().unwrap_or_default();
    assert!(
        line.contains(env!("CARGO_PKG_VERSION")) && line.contains(commit) && line.contains("built"),
        "{line}"
    );
}

#[test]
fn third_party_notices_list_every_crate_with_its_licence_text_as_json_or_text() {
    let service = Service::start();
    let (status, body) = fetch(&service, "/api/v1/third-party-notices");
    assert_eq!(status, 200);
    let data = &body["data"];
    let crates = data["crates"].as_array().expect("crates");
    assert_eq!(data["count"].as_u64(), Some(crates.len() as u64));
    let tokio = crates
        .iter()
        .find(|c| c["name"] == "tokio")
        .expect("tokio listed");
    let text = tokio["licenseTexts"][0].as_u64().expect("a text") as usize;
    assert_eq!(data["licenses"][text]["id"], "MIT");
    assert!(data["licenses"][text]["text"]
        .as_str()
        .is_some_and(|t| t.contains("Permission is hereby granted")));

    let plain = reqwest::blocking::get(service.url("/api/v1/third-party-notices?format=text"))
        .expect("text");
    assert!(plain
        .headers()
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("text/plain")));
    let plain = plain.text().expect("body");
    assert!(plain.contains("\ntokio ") && plain.contains("Permission is hereby granted"));

    let (status, body) = fetch(&service, "/api/v1/third-party-notices?format=xml");
    assert_eq!(status, 400, "{body}");
    assert_eq!(body["success"], false);
}

#[test]
fn unknown_routes_and_methods_answer_in_the_error_envelope() {
    let service = Service::start();
    let (status, body) = fetch(&service, "/api/v1/no-such-thing");
    assert_eq!(status, 404);
    assert_eq!(body["success"], false);
    assert_eq!(body["details"], "no route for GET /api/v1/no-such-thing");

    let response = reqwest::blocking::Client::new()
        .delete(service.url("/api/v1/health"))
        .send()
        .expect("request");
    assert_eq!(response.status().as_u16(), 405);
    let body: Value = response.json().expect("json");
    assert_eq!(body["success"], false);
}

#[test]
fn metrics_are_prometheus_text_with_worker_and_process_families() {
    let service = Service::start();
    let response = get(service.url("/metrics")).expect("request");
    assert_eq!(response.status().as_u16(), 200);
    let text = response.text().expect("text");
    let families = crate::http::parse_families(&text);
    for family in [
        "ballast_worker_restarts_total",
        "ballast_worker_up",
        "ballast_worker_heartbeat_age_seconds",
        "ballast_build_info",
        "process_resident_memory_bytes",
    ] {
        assert!(
            families.iter().any(|(name, _)| name == family),
            "{family} missing:\n{text}"
        );
    }
    assert!(families.contains(&(
        "ballast_worker_restarts_total".to_string(),
        "counter".to_string()
    )));
}

/// `(name, type)` of every `# TYPE` line; panics on a sample line that is not `name{labels} value`.
pub fn parse_families(text: &str) -> Vec<(String, String)> {
    let mut families = Vec::new();
    for line in text.lines() {
        if let Some(rest) = line.strip_prefix("# TYPE ") {
            let mut parts = rest.split_whitespace();
            let name = parts.next().expect("family name");
            let kind = parts.next().expect("family type");
            families.push((name.to_string(), kind.to_string()));
        } else if !line.starts_with('#') && !line.is_empty() {
            let value = line.rsplit(' ').next().expect("sample value");
            assert!(value.parse::<f64>().is_ok(), "bad sample line: {line}");
        }
    }
    families
}
