//! Controllers are nodes: the real binary against a simulated cluster with dedicated
//! controllers (101–103, brokers 1–3 observing the metadata quorum), one of them stopped.

use std::time::Duration;

use reqwest::blocking::get;
use serde_json::{json, Value};

use crate::cluster::Sim;
use crate::support::{wait_for, Service};

fn data(service: &Service, path: &str) -> Value {
    let body: Value = get(service.url(path))
        .and_then(|r| r.json())
        .unwrap_or(Value::Null);
    body["data"].clone()
}

fn text(service: &Service, path: &str) -> String {
    get(service.url(path))
        .and_then(|r| r.text())
        .unwrap_or_default()
}

#[test]
fn a_stopped_dedicated_controller_degrades_health_saying_2_of_3_voters_and_recovers() {
    let sim = Sim::start();
    sim.dedicated_controllers(&[101, 102, 103]);
    let license = crate::support::dev_license();
    let service = Service::start_with(&[
        ("LICENSE_STRING", license.as_str()),
        ("BALLAST_KAFKA_BOOTSTRAP_SERVERS", sim.bootstrap.as_str()),
        ("BALLAST_SAMPLE_INTERVAL", "1s"),
        ("BALLAST_QUORUM_FETCH_TIMEOUT", "2s"),
    ]);

    // Every voter and observer, with its role; the leader a dedicated controller.
    let controllers = wait_for(Duration::from_secs(30), "the controllers view", || {
        let c = data(&service, "/api/v1/cluster/controllers");
        (c["nodes"].as_array().map(Vec::len) == Some(6)).then_some(c)
    });
    let roles: Vec<(i64, String, bool)> = controllers["nodes"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|n| {
            (
                n["id"].as_i64().unwrap_or(-1),
                n["role"].as_str().unwrap_or_default().to_string(),
                n["leader"] == true,
            )
        })
        .collect();
    assert_eq!(
        roles,
        vec![
            (101, "controller".into(), true),
            (102, "controller".into(), false),
            (103, "controller".into(), false),
            (1, "broker".into(), false),
            (2, "broker".into(), false),
            (3, "broker".into(), false),
        ],
        "{controllers}"
    );
    assert_eq!(controllers["quorum"]["text"], "quorum: 3 of 3 voters");
    let cluster = data(&service, "/api/v1/cluster");
    assert_eq!(cluster["controllerId"], 101);
    assert_eq!(cluster["controllers"]["nodes"][0]["role"], "controller");
    // The Controller tile says what 101 is: in no broker list.
    let page = text(&service, "/ui");
    assert!(page.contains("101 (dedicated controller)"), "{page}");

    // Voter 103 stops: health degraded, "quorum: 2 of 3 voters", its metric 0.
    sim.controller_up(103, false);
    let health = wait_for(Duration::from_secs(30), "voter 103 down", || {
        let h = data(&service, "/api/v1/cluster/health");
        (h["quorum"]["votersDown"] == json!([103])).then_some(h)
    });
    assert_eq!(health["status"], "degraded", "{health}");
    assert_eq!(
        health["quorum"]["text"], "quorum: 2 of 3 voters",
        "{health}"
    );
    assert_eq!(
        health["quorum"]["down"][0]["role"], "controller",
        "{health}"
    );
    let metrics = text(&service, "/metrics");
    assert!(
        metrics.contains("ballast_quorum_voter_up{node_id=\"103\",role=\"controller\"} 0"),
        "{metrics}"
    );
    assert!(metrics.contains("ballast_quorum_voter_up{node_id=\"101\",role=\"controller\"} 1"));
    assert!(metrics.contains("ballast_quorum_voters{state=\"up\"} 2"));
    let page = text(&service, "/ui");
    assert!(page.contains("degraded · quorum: 2 of 3 voters"), "{page}");
    assert!(page.contains("down: last fetched"), "{page}");

    // A roll naming the controller says why, in those words.
    let response = reqwest::blocking::Client::new()
        .post(service.url("/api/v1/rolling-restarts"))
        .json(&json!({"brokers": [103]}))
        .send()
        .expect("roll");
    let body: Value = response.json().unwrap_or(Value::Null);
    let said = body.to_string();
    assert!(
        said.contains("node 103 is a controller (a voter of the metadata quorum, not a broker) and no agent runs on it"),
        "{said}"
    );

    // Started again: the quorum is whole.
    sim.controller_up(103, true);
    let health = wait_for(Duration::from_secs(30), "the quorum whole", || {
        let h = data(&service, "/api/v1/cluster/health");
        (h["quorum"]["text"] == "quorum: 3 of 3 voters").then_some(h)
    });
    assert_eq!(health["status"], "healthy", "{health}");
}
