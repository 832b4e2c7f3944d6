//! The MCP endpoint against the real binary and a simulated cluster, driven by software we did not
//! write: the Python `mcp` SDK (tests/mcp/scenario.py). Tokens for two people and a read-only
//! client are made with `ballast token`; the scenario lists the tools, reads with limits and
//! envelopes, and takes a topic-configuration change through request → refused self-approval →
//! refused read approval → approval by the second person; this test then checks the cluster and the
//! audit row (`MCP`, approver, requester).

use std::process::Command;
use std::time::Duration;

use serde_json::Value;

use crate::cluster::Sim;
use crate::support::{ballast_output, wait_for, Service};

const SECRET: &str = "an-mcp-e2e-secret-of-more-than-32-chars";

fn token(service: &Service, user: &str, scope: &str) -> String {
    let data = service.dir.path().to_string_lossy().into_owned();
    let out = ballast_output(
        &[
            "token", "create", "--user", user, "--name", "mcp", "--scope", scope,
        ],
        &[
            ("BALLAST_DATA_DIR", data.as_str()),
            ("BALLAST_KAFKA_BOOTSTRAP_SERVERS", "127.0.0.1:9"),
            ("AUTH_PAT_ENABLED", "true"),
            ("AUTH_PAT_HASH_SECRET", SECRET),
        ],
    );
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

#[test]
fn the_python_mcp_sdk_lists_the_tools_reads_and_takes_a_change_through_a_second_persons_approval() {
    let probe = Command::new("python3")
        .args(["-c", "import mcp.client.streamable_http"])
        .env_remove("LD_LIBRARY_PATH")
        .output()
        .expect("python3");
    assert!(
        probe.status.success(),
        "the Python package mcp is not installed: scripts/test installs it (pip install mcp)"
    );
    let sim = Sim::start();
    let license = crate::license::dev_license();
    let service = Service::start_with(&[
        ("LICENSE_STRING", license.as_str()),
        ("BALLAST_KAFKA_BOOTSTRAP_SERVERS", sim.bootstrap.as_str()),
        ("BALLAST_SAMPLE_INTERVAL", "1s"),
        ("AUTH_PAT_ENABLED", "true"),
        ("AUTH_PAT_HASH_SECRET", SECRET),
    ]);
    let alice = token(&service, "alice", "write");
    let bob = token(&service, "bob", "write");
    let reader = token(&service, "reader", "read");
    wait_for(Duration::from_secs(20), "ready", || {
        let r = reqwest::blocking::Client::new()
            .get(service.url("/api/v1/ready"))
            .bearer_auth(&reader)
            .send()
            .ok()?;
        (r.status().as_u16() == 200).then_some(())
    });
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/../tests/mcp/scenario.py");
    let out = Command::new("python3")
        .arg(script)
        .arg(service.url("/api/v1/mcp"))
        .args([&alice, &bob, &reader])
        .env_remove("LD_LIBRARY_PATH")
        .output()
        .expect("run the scenario");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "scenario failed:\n{}\n{}",
        stdout,
        String::from_utf8_lossy(&out.stderr)
    );
    let facts: Value = serde_json::from_str(stdout.lines().last().unwrap_or("{}")).expect("facts");
    let topic = facts["topic"].as_str().expect("topic").to_string();

    // the change reached the cluster
    let config: Value = reqwest::blocking::Client::new()
        .get(service.url(&format!("/api/v1/topics/{topic}/config/explicit")))
        .bearer_auth(&reader)
        .send()
        .expect("config")
        .json()
        .expect("json");
    assert!(config.to_string().contains("7200000"), "{config}");

    // one audit row: MCP, the approver as userId, the requester as requestedBy
    let store = ballast_schema::Store::open(&service.db_path()).expect("db");
    let events: Vec<_> = store
        .list_audit(&ballast_schema::AuditQuery::default())
        .expect("audit")
        .events
        .into_iter()
        .filter(|e| e.method == "MCP" && e.action.starts_with("topics.config"))
        .collect();
    assert_eq!(events.len(), 1, "{events:?}");
    assert_eq!(events[0].user_id.as_deref(), Some("bob"));
    assert_eq!(events[0].requested_by.as_deref(), Some("alice"));
    // every approved change is audited as MCP, approved by bob for alice
    let mcp: Vec<_> = store
        .list_audit(&ballast_schema::AuditQuery::default())
        .expect("audit")
        .events
        .into_iter()
        .filter(|e| e.method == "MCP")
        .collect();
    let actions: Vec<&str> = mcp.iter().map(|e| e.action.as_str()).collect();
    for action in [
        "leaders.elect",
        "brokers.maintenance.enter",
        "brokers.maintenance.exit",
    ] {
        assert!(
            actions.contains(&action),
            "{action} not audited: {actions:?}"
        );
    }
    assert!(
        mcp.iter()
            .all(|e| e.user_id.as_deref() == Some("bob")
                && e.requested_by.as_deref() == Some("alice")),
        "{mcp:?}"
    );

    // and the MCP Inspector's CLI (npm @modelcontextprotocol/inspector) lists and calls
    let inspector = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../tests/mcp/node_modules/.bin/mcp-inspector"
    );
    assert!(
        std::path::Path::new(inspector).exists(),
        "the MCP Inspector is not installed: scripts/test runs npm ci --prefix tests/mcp"
    );
    let run = |args: &[&str]| {
        let out = Command::new(inspector)
            .arg("--cli")
            .arg(service.url("/api/v1/mcp"))
            .args(["--transport", "http", "--header"])
            .arg(format!("Authorization: Bearer {reader}"))
            .args(args)
            .env_remove("LD_LIBRARY_PATH")
            .env("HOME", service.dir.path())
            .output()
            .expect("run the inspector");
        let text = String::from_utf8_lossy(&out.stdout).to_string();
        assert!(
            out.status.success(),
            "inspector {args:?} failed:\n{text}\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        serde_json::from_str::<Value>(&text)
            .unwrap_or_else(|e| panic!("inspector JSON ({e}): {text}"))
    };
    let listed = run(&["--method", "tools/list"]);
    let names: Vec<&str> = listed["tools"]
        .as_array()
        .expect("tools")
        .iter()
        .filter_map(|t| t["name"].as_str())
        .collect();
    assert!(
        names.contains(&"get_cluster_health") && names.contains(&"approve_action"),
        "{names:?}"
    );
    let called = run(&[
        "--method",
        "tools/call",
        "--tool-name",
        "get_cluster_health",
    ]);
    assert_ne!(called["isError"], true, "{called}");
    assert!(
        called["structuredContent"]["rackAssessment"].is_object(),
        "{called}"
    );
}
