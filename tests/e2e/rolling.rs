//! Rolling restarts through on-broker agents (docs/rolling-restarts.md), end to end: the real
//! binary as the service and as three `ballast agent` processes, a simulated cluster whose
//! brokers the agents restart through its control API (stop, a pause, start), as
//! `systemctl restart kafka` would.

use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::cluster::Sim;
use crate::support::{terminate, wait_for, Service};

const AGENT_TOKEN: &str = "an-agent-token-of-at-least-32-characters";

fn sim() -> (Sim, String) {
    Sim::start_with_control(
        ballast_simcluster::GenerateParams {
            brokers: 3,
            racks: 3,
            topics: 3,
            partitions_per_topic: 6,
            ..ballast_simcluster::GenerateParams::default()
        },
        1.0,
    )
}

fn service(sim: &Sim) -> Service {
    let license = crate::license::dev_license();
    Service::start_with(&[
        ("LICENSE_STRING", license.as_str()),
        ("BALLAST_KAFKA_BOOTSTRAP_SERVERS", sim.bootstrap.as_str()),
        ("BALLAST_SAMPLE_INTERVAL", "1s"),
        ("BALLAST_EXECUTOR_INTERVAL", "250ms"),
        ("BALLAST_AGENT_TOKEN", AGENT_TOKEN),
        ("BALLAST_AGENT_STALE_AFTER", "5s"),
        ("BALLAST_ROLL_HEALTHY_TIMEOUT", "60s"),
        ("BALLAST_ROLL_LEADER_TIMEOUT", "30s"),
        ("BALLAST_ROLL_RESTART_TIMEOUT", "30s"),
        ("BALLAST_ROLL_RECOVERY_TIMEOUT", "60s"),
        ("BALLAST_ROLL_SETTLE", "500ms"),
        ("BALLAST_HEAL_CRITICAL_ENABLED", "false"),
        ("BALLAST_HEAL_REPLICATION_ENABLED", "false"),
        ("BALLAST_HEAL_ACTIVITY_ENABLED", "false"),
    ])
}

struct Agent(Child);

impl Drop for Agent {
    fn drop(&mut self) {
        terminate(&mut self.0, Duration::from_secs(2));
    }
}

/// The broker's credential, made by `ballast agent-token` from the service's secret.
fn credential(broker: i32) -> String {
    let out = crate::support::ballast_output(
        &["agent-token", "--broker", &broker.to_string()],
        &[("BALLAST_AGENT_TOKEN", AGENT_TOKEN)],
    );
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

fn agent(exe: &Path, service: &Service, broker: i32, restart: &str, control: &str) -> Agent {
    let dir = tempfile::tempdir().expect("log dir");
    let child = Command::new(exe)
        .arg("agent")
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("BALLAST_AGENT_SERVICE_URL", service.url(""))
        .env("BALLAST_AGENT_TOKEN", credential(broker))
        .env("BALLAST_AGENT_BROKER_ID", broker.to_string())
        .env("BALLAST_AGENT_NODE_ID", format!("host-{broker}"))
        .env("BALLAST_AGENT_RESTART_COMMAND", restart)
        .env(
            "BALLAST_AGENT_STATUS_COMMAND",
            format!("curl -sf {control}/brokers/{broker}/alive"),
        )
        .env("BALLAST_AGENT_LOG_DIRS", dir.path())
        .env("BALLAST_AGENT_HEARTBEAT_INTERVAL", "300ms")
        .env("LOG_LEVEL", "WARN")
        .stdin(Stdio::null())
        .spawn()
        .expect("start ballast agent");
    std::mem::forget(dir);
    Agent(child)
}

fn restart_command(control: &str, broker: i32) -> String {
    format!("curl -sf -X POST '{control}/brokers/{broker}/restart?downMs=1500'")
}

fn get(service: &Service, path: &str) -> Value {
    reqwest::blocking::Client::new()
        .get(service.url(path))
        .send()
        .expect("GET")
        .json()
        .expect("json")
}

fn post(service: &Service, path: &str, body: Value) -> (u16, Value) {
    let request = reqwest::blocking::Client::new().post(service.url(path));
    // Null: no body at all (routes that take none refuse one).
    let request = if body.is_null() {
        request
    } else {
        request.json(&body)
    };
    let r = request.send().expect("POST");
    let status = r.status().as_u16();
    (status, r.json().unwrap_or(Value::Null))
}

fn agents_up(service: &Service, n: usize) {
    wait_for(Duration::from_secs(30), "agents reporting", || {
        let v = get(service, "/api/v1/agents");
        let up = v["data"]["agents"]
            .as_array()?
            .iter()
            .filter(|a| a["up"] == true && a["brokerProcessUp"] == true)
            .count();
        (up == n).then_some(())
    });
}

fn wait_roll(service: &Service, id: &str, states: &[&str], timeout: Duration) -> Value {
    wait_for(timeout, "the rolling restart to end", || {
        let v = get(service, &format!("/api/v1/rolling-restarts/{id}"));
        let state = v["data"]["state"].as_str()?.to_string();
        states.contains(&state.as_str()).then(|| v["data"].clone())
    })
}

fn leaders_are_preferred(sim: &Sim) -> Vec<String> {
    sim.snapshot()
        .partitions
        .iter()
        .filter(|p| p.leader != p.replicas.first().copied())
        .map(|p| {
            format!(
                "{}-{} leader {:?} replicas {:?}",
                p.topic, p.partition, p.leader, p.replicas
            )
        })
        .collect()
}

fn audit_actions(service: &Service) -> Vec<String> {
    let store = ballast_schema::Store::open(&service.db_path()).expect("db");
    store
        .list_audit(&ballast_schema::AuditQuery {
            limit: Some(ballast_schema::AUDIT_MAX_LIMIT),
            ..Default::default()
        })
        .expect("audit")
        .events
        .into_iter()
        .map(|e| format!("{} {}", e.action, e.status))
        .collect()
}

#[test]
fn a_rolling_restart_goes_broker_by_broker_with_no_partition_offline_and_leaders_restored() {
    let (sim, control) = sim();
    let service = service(&sim);
    let exe = Path::new(env!("CARGO_BIN_EXE_ballast"));
    let _agents: Vec<Agent> = (1..=3)
        .map(|b| agent(exe, &service, b, &restart_command(&control, b), &control))
        .collect();
    agents_up(&service, 3);
    assert!(
        leaders_are_preferred(&sim).is_empty(),
        "{:?}",
        leaders_are_preferred(&sim)
    );
    // The active controller is the quorum's leader (2), not the broker Metadata names per answer.
    sim.move_controller(2);
    let controller = sim.truth().controller;
    assert_eq!(controller, 2);
    let first = sim.snapshot().partitions[0].clone();
    let topic = first.topic.clone();
    // another order of the same replicas: a leadership change, queued as a reassignment
    let mut reordered = first.replicas.clone();
    reordered.rotate_left(1);

    // a forged agent request is refused and changes nothing
    let forged = ballast_web::agents::broker_token("not-the-service-secret-but-long-enough", 99);
    let raw_secret = format!("Bearer {AGENT_TOKEN}");
    for auth in [
        None,
        Some("Bearer not-the-agent-token-but-long-enough-anyway".to_string()),
        Some(format!("Bearer {forged}")),
        Some(raw_secret),
    ] {
        let mut req = reqwest::blocking::Client::new()
            .post(service.url("/api/v1/agent/heartbeat"))
            .json(&json!({"brokerId": 99, "nodeId": "evil", "version": "x",
                "buildDigest": "0".repeat(64), "brokerProcessUp": true,
                "brokerUptimeSeconds": 1, "agentStartedAt": 1, "disks": []}));
        if let Some(a) = &auth {
            req = req.header("authorization", a);
        }
        let r = req.send().expect("forged heartbeat");
        assert_eq!(r.status().as_u16(), 401);
        assert!(r.headers().contains_key("www-authenticate"));
    }
    // broker 1's credential cannot speak for broker 2
    let r = reqwest::blocking::Client::new()
        .post(service.url("/api/v1/agent/heartbeat"))
        .bearer_auth(credential(1))
        .json(&json!({"brokerId": 2, "nodeId": "impostor", "version": "x",
            "buildDigest": "0".repeat(64), "brokerProcessUp": true,
            "brokerUptimeSeconds": 1, "agentStartedAt": 1, "disks": []}))
        .send()
        .expect("impostor heartbeat");
    assert_eq!(r.status().as_u16(), 403);
    let binary = reqwest::blocking::Client::new()
        .get(service.url("/api/v1/agent/binary"))
        .send()
        .expect("binary");
    assert_eq!(binary.status().as_u16(), 401);
    let agents = get(&service, "/api/v1/agents");
    assert_eq!(
        agents["data"]["agents"].as_array().map(Vec::len),
        Some(3),
        "{agents}"
    );

    let (status, roll) = post(
        &service,
        "/api/v1/rolling-restarts",
        json!({"reason": "certificate rotation"}),
    );
    assert_eq!(status, 200, "{roll}");
    let id = roll["data"]["id"].as_str().expect("id").to_string();
    let order: Vec<i64> = roll["data"]["brokers"]
        .as_array()
        .expect("brokers")
        .iter()
        .filter_map(Value::as_i64)
        .collect();
    assert_eq!(order.len(), 3);
    assert_eq!(
        *order.last().expect("last"),
        i64::from(controller),
        "controller last: {order:?}"
    );

    // while it runs: zero offline partitions at every reading; reassignments and elections 409
    let started = Instant::now();
    let mut readings = 0;
    let mut refused = false;
    let mut killed = false;
    let end = loop {
        let truth = sim.truth();
        readings += 1;
        assert_eq!(
            truth.offline_partitions, 0,
            "a partition went offline during the roll"
        );
        if !refused {
            let (s, body) = post(
                &service,
                &format!(
                    "/api/v1/topics/{topic}/partitions/{}/redistribute",
                    first.partition
                ),
                json!({ "replicas": reordered }),
            );
            assert_eq!(s, 409, "{body}");
            assert!(body.to_string().contains("rolling restart"), "{body}");
            let (s, body) = post(&service, "/api/v1/preferred-leader-election", json!({}));
            assert_eq!(s, 409, "{body}");
            assert!(body.to_string().contains("rolling restart"), "{body}");
            refused = true;
        }
        let v = get(&service, &format!("/api/v1/rolling-restarts/{id}"));
        let state = v["data"]["state"].as_str().unwrap_or("").to_string();
        if !["running", "paused", "aborting"].contains(&state.as_str()) {
            break v["data"].clone();
        }
        // nothing is lost when the executor dies mid-roll: SIGKILL it at the second broker
        if !killed && v["data"]["position"].as_i64() == Some(1) {
            let pid = service.worker_pids()["executor"];
            nix::sys::signal::kill(
                nix::unistd::Pid::from_raw(pid as i32),
                nix::sys::signal::Signal::SIGKILL,
            )
            .expect("kill the executor");
            killed = true;
        }
        assert!(
            started.elapsed() < Duration::from_secs(150),
            "the roll did not end: {v}"
        );
        std::thread::sleep(Duration::from_millis(100));
    };
    assert_eq!(end["state"], "completed", "{end}");
    assert!(killed, "the executor was not killed mid-roll");
    assert!(service.restarts("executor") >= 1);
    assert!(readings > 20, "only {readings} readings");
    let done = end["progress"]["brokersDone"].as_array().expect("done");
    assert_eq!(done.len(), 3, "{end}");
    assert!(done.iter().all(|d| d["outcome"] == "restarted"), "{end}");
    // every broker was really restarted: the agents' commands succeeded
    let agents = get(&service, "/api/v1/agents");
    let restarts: Vec<&Value> = agents["data"]["commands"]
        .as_array()
        .expect("commands")
        .iter()
        .filter(|c| c["kind"] == "restart")
        .collect();
    assert_eq!(restarts.len(), 3, "{agents}");
    assert!(
        restarts.iter().all(|c| c["state"] == "succeeded"),
        "{agents}"
    );
    // leaders restored
    wait_for(Duration::from_secs(10), "preferred leaders", || {
        leaders_are_preferred(&sim).is_empty().then_some(())
    });
    assert_eq!(sim.truth().under_replicated_partitions, 0);
    let actions = audit_actions(&service);
    for want in ["rolling_restart.start 200", "rolling_restart.complete 200"] {
        assert!(actions.iter().any(|a| a == want), "{want}: {actions:?}");
    }
    assert_eq!(
        actions
            .iter()
            .filter(|a| *a == "rolling_restart.broker 200")
            .count(),
        3,
        "{actions:?}"
    );
    // the slot is free again
    let (s, body) = post(&service, "/api/v1/preferred-leader-election", json!({}));
    assert_eq!(s, 200, "{body}");
    // the dashboard's page
    let page = reqwest::blocking::get(service.url("/ui/agents"))
        .expect("page")
        .text()
        .expect("html");
    for want in [
        id.as_str(),
        "completed",
        "host-1",
        "Start a rolling restart",
    ] {
        assert!(page.contains(want), "{want} not on /ui/agents");
    }
    // agent metrics
    let metrics = reqwest::blocking::get(service.url("/metrics"))
        .expect("metrics")
        .text()
        .expect("text");
    for want in [
        "ballast_agent_up{broker_id=\"1\",node_id=\"host-1\"} 1",
        "ballast_agent_broker_process_up{broker_id=\"3\",node_id=\"host-3\"} 1",
        "ballast_agent_last_seen_timestamp_seconds{broker_id=\"2\",node_id=\"host-2\"}",
        "ballast_agent_info{broker_id=\"2\",node_id=\"host-2\",version=",
    ] {
        assert!(metrics.contains(want), "{want} missing:\n{metrics}");
    }
}

#[test]
fn a_failed_restart_stops_the_roll_there_and_an_old_agent_is_upgraded_to_the_services_build() {
    let (sim, control) = sim();
    let service = service(&sim);
    let exe = Path::new(env!("CARGO_BIN_EXE_ballast"));
    // broker 3's agent runs another build: the same program with bytes appended (another digest)
    let old = tempfile::tempdir().expect("dir");
    let old_exe = old.path().join("ballast");
    let mut bytes = std::fs::read(exe).expect("binary");
    bytes.extend_from_slice(b"\nan older build of ballast\n");
    std::fs::write(&old_exe, &bytes).expect("copy");
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&old_exe, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    }
    let _a1 = agent(exe, &service, 1, &restart_command(&control, 1), &control);
    let _a2 = agent(
        exe,
        &service,
        2,
        "echo 'kafka.service: disk full' >&2; exit 3",
        &control,
    );
    let _a3 = agent(
        &old_exe,
        &service,
        3,
        &restart_command(&control, 3),
        &control,
    );
    agents_up(&service, 3);

    // the roll: broker 2 comes first unless it is the controller; restrict it to 2 and 3
    let (status, roll) = post(
        &service,
        "/api/v1/rolling-restarts",
        json!({"brokers": [2, 3]}),
    );
    assert_eq!(status, 200, "{roll}");
    let id = roll["data"]["id"].as_str().expect("id").to_string();
    let first = roll["data"]["brokers"][0].as_i64().expect("first");
    let end = wait_roll(
        &service,
        &id,
        &["failed", "completed", "aborted"],
        Duration::from_secs(90),
    );
    if first == 2 {
        assert_eq!(end["state"], "failed", "{end}");
        assert_eq!(end["failedBroker"], 2, "{end}");
        let error = end["error"].as_str().unwrap_or("");
        assert!(
            error.contains("broker 2") && error.contains("exit 3") && error.contains("disk full"),
            "{end}"
        );
        // the broker's leadership was given back (it never went down)
        wait_for(Duration::from_secs(10), "preferred leaders", || {
            leaders_are_preferred(&sim).is_empty().then_some(())
        });
    } else {
        // broker 2 was the controller, so broker 3 went first and 2 failed after it
        assert_eq!(end["state"], "failed", "{end}");
        assert_eq!(end["failedBroker"], 2, "{end}");
    }
    let actions = audit_actions(&service);
    assert!(
        actions.iter().any(|a| a == "rolling_restart.fail 500"),
        "{actions:?}"
    );
    // the slot is free after a failure
    let (s, body) = post(&service, "/api/v1/preferred-leader-election", json!({}));
    assert_eq!(s, 200, "{body}");

    // the upgrade: broker 3's agent runs another build, then the service's own
    let agents = get(&service, "/api/v1/agents");
    let service_digest = agents["data"]["service"]["buildDigest"]
        .as_str()
        .expect("service digest")
        .to_string();
    let three = |v: &Value| {
        v["data"]["agents"]
            .as_array()
            .and_then(|a| a.iter().find(|a| a["brokerId"] == 3).cloned())
            .unwrap_or(Value::Null)
    };
    assert_eq!(three(&agents)["sameBuildAsService"], false, "{agents}");
    let (s, body) = post(&service, "/api/v1/agents/1/upgrade", Value::Null);
    assert_eq!(s, 409, "an agent on the same build is not upgraded: {body}");
    // a roll paused before its first broker holds the slot, then aborts without restarting any
    let (s, body) = post(
        &service,
        "/api/v1/rolling-restarts",
        json!({"brokers": [1, 3]}),
    );
    assert_eq!(s, 200, "{body}");
    let paused_id = body["data"]["id"].as_str().expect("id").to_string();
    let (s, body) = post(
        &service,
        &format!("/api/v1/rolling-restarts/{paused_id}/pause"),
        Value::Null,
    );
    assert_eq!(s, 200, "{body}");
    let (s, _) = post(&service, "/api/v1/rolling-restarts", json!({}));
    assert_eq!(s, 409, "a second roll while one is unfinished");
    let (s, body) = post(
        &service,
        &format!("/api/v1/rolling-restarts/{paused_id}/abort"),
        Value::Null,
    );
    assert_eq!(s, 200, "{body}");
    let ended = wait_roll(
        &service,
        &paused_id,
        &["aborted", "completed", "failed"],
        Duration::from_secs(30),
    );
    assert_eq!(ended["state"], "aborted", "{ended}");
    let (s, body) = post(
        &service,
        &format!("/api/v1/rolling-restarts/{paused_id}/resume"),
        Value::Null,
    );
    assert_eq!(s, 409, "an ended roll cannot be resumed: {body}");

    let (s, body) = post(&service, "/api/v1/agents/3/upgrade", Value::Null);
    assert_eq!(s, 200, "{body}");
    wait_for(Duration::from_secs(30), "the upgraded agent", || {
        let v = get(&service, "/api/v1/agents");
        (three(&v)["buildDigest"] == service_digest.as_str() && three(&v)["up"] == true)
            .then_some(())
    });
    let installed = std::fs::read(&old_exe).expect("installed");
    assert_eq!(ballast_web::agents::sha256_hex(&installed), service_digest);
    let actions = audit_actions(&service);
    assert!(
        actions.iter().any(|a| a == "agents.upgrade 200"),
        "{actions:?}"
    );
    assert!(
        actions.iter().any(|a| a == "agents.upgrade.result 200"),
        "{actions:?}"
    );
}
