//! The MCP endpoint against the real binary and a simulated cluster, driven by software we did not
//! write: the Python `mcp` SDK (tests/mcp/scenario.py). Tokens for two people and a read-only
//! client are made with `ballast token`; the scenario lists the tools, reads with limits and
//! envelopes, and takes a topic-configuration change through request → refused self-approval →
//! refused read approval → approval by the second person; this test then checks the cluster and the
//! audit row (`MCP`, approver, requester).

use std::process::Command;
use std::time::Duration;

use serde_json::{json, Value};

use crate::cluster::Sim;
use crate::support::{ballast_output, wait_for, Service};

const SECRET: &str = "an-mcp-e2e-secret-of-more-than-32-chars";
/// Long enough for every approval the scenario makes right after its request; the scenario
/// waits [`EXPIRY_WAIT`] before approving one action to see it refused as expired.
const APPROVAL_TTL: &str = "6s";
const EXPIRY_WAIT: &str = "7";

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
    let sim = Sim::start_with(
        ballast_simcluster::GenerateParams {
            brokers: 5,
            racks: 3,
            topics: 4,
            partitions_per_topic: 6,
            ..ballast_simcluster::GenerateParams::default()
        },
        1.0,
    );
    let license = crate::license::dev_license();
    let service = Service::start_with(&[
        ("LICENSE_STRING", license.as_str()),
        ("BALLAST_KAFKA_BOOTSTRAP_SERVERS", sim.bootstrap.as_str()),
        ("BALLAST_SAMPLE_INTERVAL", "1s"),
        ("AUTH_PAT_ENABLED", "true"),
        ("AUTH_PAT_HASH_SECRET", SECRET),
        ("BALLAST_APPROVAL_TTL", APPROVAL_TTL),
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
        .args([&alice, &bob, &reader, &sim.bootstrap])
        .arg(EXPIRY_WAIT)
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
        .list_audit(&ballast_schema::AuditQuery {
            limit: Some(ballast_schema::AUDIT_MAX_LIMIT),
            ..Default::default()
        })
        .expect("audit")
        .events
        .into_iter()
        .filter(|e| e.method == "MCP" && e.action == "topics.config.update")
        .collect();
    assert_eq!(events.len(), 1, "{events:?}");
    assert_eq!(events[0].user_id.as_deref(), Some("bob"));
    assert_eq!(events[0].requested_by.as_deref(), Some("alice"));
    // every approved change is audited as MCP, approved by bob for alice
    let mcp: Vec<_> = store
        .list_audit(&ballast_schema::AuditQuery {
            limit: Some(ballast_schema::AUDIT_MAX_LIMIT),
            ..Default::default()
        })
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
        "topics.config.bulk_update",
        "audit.revert",
        "acls.create",
        "acls.delete",
        "quotas.update",
        "quotas.delete",
        "consumer_groups.reset_offsets",
        "consumer_groups.delete",
        "reassignments.apply",
        "logdirs.move",
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

    // a reassignment tool is audited once per partition besides its operation: the moved
    // partition's own row, revertible on its own, pointing at the operation's event
    for (key, tool) in [
        ("partitionMove", "redistribute_partition"),
        ("bulkMove", "bulk_reassign_partitions"),
    ] {
        let partition = facts[key]["partition"].as_i64().expect("partition");
        let target = format!("{topic}-{partition}");
        let rows: Vec<_> = mcp
            .iter()
            .filter(|e| {
                e.action == "reassignments.apply" && e.target.as_deref() == Some(target.as_str())
            })
            .collect();
        assert!(
            !rows.is_empty(),
            "{tool}: no audit row for {target}: {mcp:?}"
        );
        let row = rows[0]; // newest first
        assert_eq!(
            row.after.as_ref().map(|a| a["replicas"].clone()),
            Some(facts[key]["replicas"].clone()),
            "{tool}: {row:?}"
        );
        assert!(row.related_event_id.is_some(), "{tool}: {row:?}");
    }

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
    // The text block beside it is the same JSON (the MCP specification's "SHOULD"); the
    // Inspector, in JavaScript, prints 1.0 as 1, so numbers compare as numbers.
    let text = called["content"][0]["text"].as_str().expect("a text block");
    let parsed: Value = serde_json::from_str(text).expect("the text block is JSON");
    assert!(same_json(&parsed, &called["structuredContent"]), "{called}");
}

/// `a` and `b` are the same JSON, numbers compared by value.
fn same_json(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => x.as_f64() == y.as_f64(),
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(x, y)| same_json(x, y))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(k, v)| y.get(k).is_some_and(|w| same_json(v, w)))
        }
        _ => a == b,
    }
}

/// A minimal Streamable HTTP client (JSON-RPC over POST; the answer as JSON or as one SSE
/// event): enough to hold a session across a restart of the web process, which the SDK's
/// session would not survive.
struct RawSession {
    url: String,
    token: String,
    session: Option<String>,
    next: u64,
}

impl RawSession {
    fn open(url: &str, token: &str) -> RawSession {
        let mut s = RawSession {
            url: url.to_string(),
            token: token.to_string(),
            session: None,
            next: 1,
        };
        s.rpc(
            "initialize",
            serde_json::json!({"protocolVersion": "2025-06-18", "capabilities": {},
                "clientInfo": {"name": "e2e", "version": "1"}}),
        );
        s.post(serde_json::json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        s
    }

    fn post(&mut self, body: Value) -> Option<Value> {
        let mut r = reqwest::blocking::Client::new()
            .post(&self.url)
            .bearer_auth(&self.token)
            .header("accept", "application/json, text/event-stream")
            .header("content-type", "application/json")
            .header("mcp-protocol-version", "2025-06-18")
            .timeout(Duration::from_secs(60))
            .body(body.to_string());
        if let Some(s) = &self.session {
            r = r.header("mcp-session-id", s);
        }
        let answer = r.send().expect("mcp request");
        assert!(answer.status().is_success(), "{}", answer.status());
        if let Some(id) = answer.headers().get("mcp-session-id") {
            self.session = id.to_str().ok().map(str::to_string);
        }
        let text = answer.text().expect("mcp answer");
        let json = text
            .lines()
            .filter_map(|l| l.strip_prefix("data:"))
            .map(str::trim)
            .find(|d| d.starts_with('{'))
            .unwrap_or(text.trim())
            .to_string();
        serde_json::from_str(&json).ok()
    }

    fn rpc(&mut self, method: &str, params: Value) -> Value {
        let id = self.next;
        self.next += 1;
        self.post(
            serde_json::json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}),
        )
        .expect("a JSON-RPC answer")
    }

    /// Ends the session (DELETE): the status.
    fn close(&mut self) -> u16 {
        let mut r = reqwest::blocking::Client::new()
            .delete(&self.url)
            .bearer_auth(&self.token)
            .header("mcp-protocol-version", "2025-06-18")
            .timeout(Duration::from_secs(60));
        if let Some(s) = &self.session {
            r = r.header("mcp-session-id", s);
        }
        r.send().expect("mcp delete").status().as_u16()
    }

    /// A tool's structured result and whether it is a tool error.
    fn call(&mut self, tool: &str, args: Value) -> (bool, Value) {
        let r = self.rpc(
            "tools/call",
            serde_json::json!({"name": tool, "arguments": args}),
        );
        let result = &r["result"];
        (
            result["isError"] == true,
            result["structuredContent"].clone(),
        )
    }
}

#[test]
fn a_pending_action_survives_a_restart_of_the_web_process_and_runs_once_on_approval() {
    let sim = Sim::start();
    let license = crate::license::dev_license();
    let service = Service::start_with(&[
        ("LICENSE_STRING", license.as_str()),
        ("BALLAST_KAFKA_BOOTSTRAP_SERVERS", sim.bootstrap.as_str()),
        ("AUTH_PAT_ENABLED", "true"),
        ("AUTH_PAT_HASH_SECRET", SECRET),
    ]);
    let alice = token(&service, "alice", "write");
    let bob = token(&service, "bob", "write");
    let url = service.url("/api/v1/mcp");
    let mut a = RawSession::open(&url, &alice);
    let (_, topics) = a.call("search_topics", serde_json::json!({"limit": 1}));
    let topic = topics["topics"][0]["name"]
        .as_str()
        .expect("a topic")
        .to_string();
    let (err, queued) = a.call(
        "update_topic_config",
        serde_json::json!({"topic": topic, "configs": {"retention.ms": 5400000}}),
    );
    assert!(!err && queued["status"] == "pending_approval", "{queued}");
    let approval = queued["token"].as_str().expect("token").to_string();

    // the web process dies; the supervisor starts a new one
    let before = service.worker_pids();
    let web = before["web"];
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(web as i32),
        nix::sys::signal::Signal::SIGKILL,
    )
    .expect("kill web");
    wait_for(Duration::from_secs(30), "a new web process", || {
        let pids = service.worker_pids();
        pids.get("web").filter(|p| **p != web).copied()
    });
    service.wait_all_running();
    wait_for(Duration::from_secs(20), "web answering", || {
        let r = reqwest::blocking::Client::new()
            .get(service.url("/api/v1/health"))
            .bearer_auth(&bob)
            .send()
            .ok()?;
        r.status().is_success().then_some(())
    });

    let mut b = RawSession::open(&url, &bob);
    let (_, pending) = b.call("list_pending_actions", serde_json::json!({}));
    assert_eq!(pending["count"], 1, "{pending}");
    let (err, done) = b.call("approve_action", serde_json::json!({"token": approval}));
    assert!(!err && done["status"] == "executed", "{done}");
    let (err, again) = b.call("approve_action", serde_json::json!({"token": approval}));
    assert!(err, "runs once only: {again}");
    let config: Value = reqwest::blocking::Client::new()
        .get(service.url(&format!("/api/v1/topics/{topic}/config/explicit")))
        .bearer_auth(&bob)
        .send()
        .expect("config")
        .json()
        .expect("json");
    assert!(config.to_string().contains("5400000"), "{config}");

    // Ending a session answers 200, as MCP clients expect (the Python SDK warns on a 202).
    assert_eq!(b.close(), 200);
}

/// `ballast mcp call` as the README's walk-through runs it: (exit code, stdout as JSON).
fn mcp_call(
    port: &str,
    token_file: Option<&std::path::Path>,
    tool: &str,
    args: &str,
) -> (i32, Value) {
    let mut cmd = crate::support::ballast();
    cmd.args(["mcp", "call", "--port", port]);
    if let Some(f) = token_file {
        cmd.arg("--token-file").arg(f);
    }
    let out = cmd.args([tool, args]).output().expect("ballast mcp call");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let json = serde_json::from_str(&stdout).unwrap_or_else(|e| {
        panic!(
            "{tool}: not JSON ({e}): {stdout}\n{}",
            String::from_utf8_lossy(&out.stderr)
        )
    });
    (out.status.code().unwrap_or(-1), json)
}

#[test]
fn the_demo_gives_two_identities_one_asks_over_mcp_and_only_the_other_approves() {
    let port = crate::support::free_port().to_string();
    let tmp = tempfile::tempdir().expect("temp dir");
    let data = tmp.path().join(format!("ballast-demo-{port}"));
    let mut child = crate::support::ballast()
        .args(["demo", "--port", port.as_str()])
        .env("TMPDIR", tmp.path())
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("start demo");
    let base = format!("http://127.0.0.1:{port}");
    // Management opens once the demo's trial starts, which waits for the observer's first
    // reading of the simulated cluster (a loaded CI machine takes seconds).
    let up = (0..300).any(|_| {
        std::thread::sleep(Duration::from_millis(200));
        reqwest::blocking::get(format!("{base}/api/v1/license"))
            .and_then(|r| r.json::<Value>())
            .is_ok_and(|body| body["data"]["state"] == "trial")
    });
    let agent = data.join("demo-agent.token");
    let reviewer = data.join("demo-reviewer.token");
    let result = std::panic::catch_unwind(|| {
        assert!(up, "the demo answered with its trial started");
        // The dashboard and the API stay open without credentials.
        let page = reqwest::blocking::get(format!("{base}/ui")).expect("dashboard");
        assert_eq!(page.status(), 200);
        let mode = std::fs::metadata(&agent).expect("the agent's token file");
        assert_eq!(
            std::os::unix::fs::PermissionsExt::mode(&mode.permissions()) & 0o777,
            0o600
        );
        let change = r#"{"topic":"orders","configs":{"retention.ms":"7200000"}}"#;
        // Without a token nobody is named: no change is queued.
        let (code, anon) = mcp_call(&port, None, "update_topic_config", change);
        assert_eq!(
            (code, &anon["error"]["code"]),
            (1, &json!("FORBIDDEN")),
            "{anon}"
        );
        let (code, queued) = mcp_call(&port, Some(&agent), "update_topic_config", change);
        assert_eq!(code, 0, "{queued}");
        assert_eq!(queued["status"], "pending_approval", "{queued}");
        assert_eq!(queued["requestedBy"], "demo-agent");
        let token = queued["token"]
            .as_str()
            .expect("approval token")
            .to_string();
        let approve = format!(r#"{{"token":"{token}"}}"#);
        // Nobody approves their own change; an anonymous caller approves nothing.
        let (code, own) = mcp_call(&port, Some(&agent), "approve_action", &approve);
        assert_eq!(code, 1, "{own}");
        assert!(
            own["error"]["message"].as_str().is_some_and(
                |m| m.contains("demo-agent requested this action and cannot approve it")
            ),
            "{own}"
        );
        let (code, anon) = mcp_call(&port, None, "approve_action", &approve);
        assert_eq!(
            (code, &anon["error"]["code"]),
            (1, &json!("FORBIDDEN")),
            "{anon}"
        );
        let config: Value = reqwest::blocking::get(format!(
            "{base}/api/v1/topics/orders/config?keyFilter=retention.ms"
        ))
        .and_then(|r| r.json())
        .expect("config");
        assert!(!config.to_string().contains("7200000"), "not yet: {config}");
        // The second person approves: the change runs, audited with both names.
        let (code, done) = mcp_call(&port, Some(&reviewer), "approve_action", &approve);
        assert_eq!(code, 0, "{done}");
        assert_eq!(done["status"], "executed", "{done}");
        let config: Value = reqwest::blocking::get(format!(
            "{base}/api/v1/topics/orders/config?keyFilter=retention.ms"
        ))
        .and_then(|r| r.json())
        .expect("config");
        assert!(config.to_string().contains("7200000"), "{config}");
        let audit: Value = reqwest::blocking::get(format!(
            "{base}/api/v1/audit-log?action=topics.config.update"
        ))
        .and_then(|r| r.json())
        .expect("audit");
        let event = &audit["data"]["events"][0];
        assert_eq!(
            (&event["userId"], &event["requestedBy"], &event["method"]),
            (&json!("demo-reviewer"), &json!("demo-agent"), &json!("MCP")),
            "{event}"
        );
        // Issue 42: a topic created over MCP: asked by the agent, made only once the reviewer
        // approves, with the placement ballast chose.
        let create = r#"{"name":"agent-made","partitions":3,"replicationFactor":2}"#;
        let (code, queued) = mcp_call(&port, Some(&agent), "create_topic", create);
        assert_eq!(code, 0, "{queued}");
        assert_eq!(queued["status"], "pending_approval", "{queued}");
        let watermarks = format!("{base}/api/v1/topics/agent-made/watermarks");
        let status = |url: &str| reqwest::blocking::get(url).map(|r| r.status().as_u16());
        assert_eq!(
            status(&watermarks).expect("watermarks"),
            404,
            "not before approval"
        );
        let approve = format!(
            r#"{{"token":"{}"}}"#,
            queued["token"].as_str().expect("token")
        );
        let (code, own) = mcp_call(&port, Some(&agent), "approve_action", &approve);
        assert_eq!(code, 1, "{own}");
        let (code, done) = mcp_call(&port, Some(&reviewer), "approve_action", &approve);
        assert_eq!(code, 0, "{done}");
        assert_eq!(done["status"], "executed", "{done}");
        assert_eq!(status(&watermarks).expect("watermarks"), 200, "{done}");
        let audit: Value =
            reqwest::blocking::get(format!("{base}/api/v1/audit-log?action=topics.create"))
                .and_then(|r| r.json())
                .expect("audit");
        let event = &audit["data"]["events"][0];
        assert_eq!(
            (&event["target"], &event["userId"], &event["requestedBy"]),
            (
                &json!("agent-made"),
                &json!("demo-reviewer"),
                &json!("demo-agent")
            ),
            "{event}"
        );
    });
    crate::support::terminate(&mut child, Duration::from_secs(10));
    if let Err(e) = result {
        std::panic::resume_unwind(e);
    }
}
