//! The real binary against a simulated cluster started in this test process.

use std::time::Duration;

use ballast_simcluster::{GenerateParams, Scenario, SimCluster, SimConfig};
use serde_json::Value;

use crate::support::{ballast_output, wait_for, Service};

/// A small simulated cluster on free loopback ports, served by its own runtime thread.
pub struct Sim {
    pub bootstrap: String,
    runtime: tokio::runtime::Runtime,
    sim: Option<SimCluster>,
}

impl Sim {
    pub fn start() -> Sim {
        Sim::start_with(
            GenerateParams {
                brokers: 3,
                racks: 3,
                topics: 4,
                partitions_per_topic: 6,
                ..GenerateParams::default()
            },
            1.0,
        )
    }

    pub fn start_with(params: GenerateParams, speed: f64) -> Sim {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .expect("runtime");
        let sim = runtime
            .block_on(SimCluster::start(SimConfig {
                scenario: Scenario::Generate(params),
                speed,
                ..SimConfig::default()
            }))
            .expect("simulated cluster");
        Sim {
            bootstrap: sim.bootstrap(),
            runtime,
            sim: Some(sim),
        }
    }
}

impl Sim {
    /// A simulated cluster with its control API (to stop and start brokers from a shell
    /// command, as an agent's restart command would); returns it and the API's URL.
    pub fn start_with_control(params: GenerateParams, speed: f64) -> (Sim, String) {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .expect("runtime");
        let sim = runtime
            .block_on(SimCluster::start(SimConfig {
                scenario: Scenario::Generate(params),
                speed,
                control_port: Some(0),
                ..SimConfig::default()
            }))
            .expect("simulated cluster");
        let control = sim.control_url().expect("control API");
        (
            Sim {
                bootstrap: sim.bootstrap(),
                runtime,
                sim: Some(sim),
            },
            control,
        )
    }

    fn cluster(&self) -> &SimCluster {
        self.sim.as_ref().expect("running until dropped")
    }

    pub fn truth(&self) -> ballast_simcluster::Truth {
        self.cluster().truth()
    }

    pub fn snapshot(&self) -> ballast_model::snapshot::Snapshot {
        self.cluster().snapshot()
    }

    pub fn stop_broker(&self, id: i32) {
        self.runtime
            .block_on(self.cluster().stop_broker(id))
            .expect("stop a broker");
    }

    /// Moves the KRaft quorum's leadership (the active controller) to broker `id`.
    pub fn move_controller(&self, id: i32) {
        self.cluster()
            .move_controller(id)
            .expect("move the quorum leader");
    }

    /// Dedicated controllers `ids` vote in the metadata quorum; the brokers observe it.
    pub fn dedicated_controllers(&self, ids: &[i32]) {
        self.cluster()
            .set_dedicated_controllers(ids)
            .expect("dedicated controllers");
    }

    /// Stops or starts dedicated controller `id`.
    pub fn controller_up(&self, id: i32, up: bool) {
        self.cluster()
            .set_controller_up(id, up)
            .expect("a dedicated controller");
    }

    /// Adds a topic (as the control API's `POST /topics` does).
    pub fn add_topic(&self, spec: &ballast_simcluster::NewTopic) {
        self.cluster().add_topic(spec).expect("add a topic");
    }

    /// Each partition's first local offset, local size and remote bytes (tiered storage).
    pub fn tiered_logs(&self) -> std::collections::BTreeMap<(String, i32), (i64, u64, u64)> {
        self.cluster().tiered_logs()
    }

    /// Each partition's log start and end offsets.
    pub fn log_offsets(&self) -> std::collections::BTreeMap<(String, i32), (i64, i64)> {
        self.cluster().log_offsets()
    }

    pub fn add_broker(&self) -> i32 {
        self.runtime
            .block_on(self.cluster().add_broker(None))
            .expect("add a broker")
    }
}

impl Drop for Sim {
    fn drop(&mut self) {
        if let Some(sim) = self.sim.take() {
            self.runtime.block_on(sim.shutdown());
        }
    }
}

#[test]
fn ready_turns_200_once_the_observer_has_read_the_brokers() {
    let sim = Sim::start();
    let service = Service::start_with(&[
        ("BALLAST_KAFKA_BOOTSTRAP_SERVERS", sim.bootstrap.as_str()),
        ("BALLAST_SAMPLE_INTERVAL", "1s"),
    ]);
    let body: Value = wait_for(Duration::from_secs(20), "ready 200", || {
        let r = reqwest::blocking::get(service.url("/api/v1/ready")).ok()?;
        (r.status().as_u16() == 200)
            .then(|| r.json().ok())
            .flatten()
    });
    assert_eq!(body["success"], true);
    assert_eq!(body["data"]["ready"], true);
}

#[test]
fn snapshot_writes_a_valid_snapshot_of_a_live_cluster_that_plan_accepts() {
    let sim = Sim::start();
    let dir = tempfile::tempdir().expect("temp dir");
    let out = dir.path().join("cluster.json");
    let out_text = out.to_string_lossy().into_owned();
    let result = ballast_output(
        &["snapshot", "--out", out_text.as_str(), "--window", "2s"],
        &[("BALLAST_KAFKA_BOOTSTRAP_SERVERS", sim.bootstrap.as_str())],
    );
    assert!(
        result.status.success(),
        "{}",
        String::from_utf8_lossy(&result.stderr)
    );
    let text = std::fs::read_to_string(&out).expect("snapshot written");
    let doc: Value = serde_json::from_str(&text).expect("json");
    assert_eq!(doc["format"], "ballast.snapshot/v1");
    assert_eq!(doc["brokers"].as_array().map(Vec::len), Some(3));
    assert_eq!(doc["partitions"].as_array().map(Vec::len), Some(24));
    let busy = doc["partitions"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|p| p["producerMsgRate"].as_f64().is_some_and(|r| r > 0.0))
        .count();
    assert!(busy > 0, "rates were measured");

    let planned = ballast_output(&["plan", "--snapshot", out_text.as_str()], &[]);
    assert!(
        planned.status.success(),
        "{}",
        String::from_utf8_lossy(&planned.stderr)
    );
    let plan: Value = serde_json::from_slice(&planned.stdout).expect("plan json");
    assert_eq!(plan["format"], "ballast.plan/v1");
}

#[test]
fn snapshot_of_an_unreachable_cluster_fails_with_one_clear_line() {
    let dir = tempfile::tempdir().expect("temp dir");
    let out = dir.path().join("cluster.json");
    let out_text = out.to_string_lossy().into_owned();
    let result = ballast_output(
        &["snapshot", "--out", out_text.as_str(), "--window", "1s"],
        &[("BALLAST_KAFKA_BOOTSTRAP_SERVERS", "127.0.0.1:9")],
    );
    assert_eq!(result.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&result.stderr);
    assert!(stderr.contains("cannot reach the cluster"), "{stderr}");
    assert!(!out.exists());
}

/// Kills the child if the test ends early (a failed assertion must not leave a demo running;
/// its workers follow their supervisor out).
struct KillOnDrop(std::process::Child);

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[test]
fn demo_runs_the_service_against_a_simulated_cluster_and_stops_cleanly() {
    let port = crate::support::free_port();
    let mut child = KillOnDrop(
        crate::support::ballast()
            .args(["demo", "--port", &port.to_string()])
            // Timings may be overridden: no warm-up and a fast sample so proposals come quickly.
            .env("BALLAST_WARMUP", "0s")
            .env("BALLAST_SAMPLE_INTERVAL", "1s")
            // Small, fast moves so the apply below completes in seconds.
            .env("BALLAST_PROPOSAL_MAX_PARTITIONS", "4")
            .env("BALLAST_THROTTLE_RATE_MB", "1000")
            .env("BALLAST_EXECUTOR_INTERVAL", "300ms")
            .env("TMPDIR", tempfile::tempdir().expect("tmp").keep())
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .expect("start demo"),
    );
    let url = format!("http://127.0.0.1:{port}/api/v1/ready");
    let ready = wait_for(Duration::from_secs(30), "demo ready", || {
        let r = reqwest::blocking::get(&url).ok()?;
        (r.status().as_u16() == 200)
            .then(|| r.json::<Value>().ok())
            .flatten()
    });
    assert_eq!(ready["data"]["ready"], true);
    // The observer's heartbeat reports what it read: the demo cluster's six brokers.
    let health: Value = wait_for(Duration::from_secs(10), "observer detail", || {
        let h: Value = reqwest::blocking::get(format!("http://127.0.0.1:{port}/api/v1/health"))
            .and_then(|r| r.json())
            .ok()?;
        let brokers = h["data"]["workers"]
            .as_array()?
            .iter()
            .find(|w| w["name"] == "observer")?["detail"]["brokers"]
            .as_u64();
        (brokers == Some(6)).then_some(h)
    });
    // The demo's newest broker is empty: a proposal moves data onto it, and it becomes
    // applicable once the same broker has been beyond the trigger in four readings.
    let url = format!("http://127.0.0.1:{port}/api/v1/proposals/current");
    let proposal = wait_for(Duration::from_secs(30), "an applicable proposal", || {
        let p: Value = reqwest::blocking::get(&url).ok()?.json().ok()?;
        (p["data"]["decision"]["applicationAllowed"] == true).then_some(p)
    });
    let moves = proposal["data"]["reassignments"].as_array().expect("moves");
    assert!(!moves.is_empty());
    assert!(moves
        .iter()
        .all(|m| m["replicasAfter"].as_array().is_some()));
    assert!(
        moves.iter().any(|m| m["replicasAfter"]
            .as_array()
            .is_some_and(|r| r.contains(&serde_json::json!(6)))),
        "moves go onto the new broker 6"
    );
    // Apply it: the executor runs exactly its moves to completion.
    let http = reqwest::blocking::Client::new();
    let applied: Value = http
        .post(format!(
            "http://127.0.0.1:{port}/api/v1/proposals/current/apply"
        ))
        .send()
        .and_then(|r| r.json())
        .expect("apply");
    assert_eq!(applied["success"], true, "{applied}");
    let op = applied["data"]["operationId"]
        .as_str()
        .expect("operation id")
        .to_string();
    let record = wait_for(
        Duration::from_secs(60),
        "the applied proposal completes",
        || {
            let r: Value = reqwest::blocking::get(format!(
                "http://127.0.0.1:{port}/api/v1/reassignments/{op}"
            ))
            .ok()?
            .json()
            .ok()?;
            (r["data"]["state"] == "Completed").then_some(r)
        },
    );
    let partitions = record["data"]["partitions"].as_array().expect("moves");
    assert_eq!(
        partitions.len(),
        applied["data"]["moves"].as_u64().unwrap_or(0) as usize
    );
    assert!(
        partitions.iter().all(|m| m["state"] == "Completed"),
        "{record}"
    );
    let pids: Vec<u32> = health["data"]["workers"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|w| w["pid"].as_u64().map(|p| p as u32))
        .collect();
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(child.0.id() as i32),
        nix::sys::signal::Signal::SIGTERM,
    )
    .expect("SIGTERM");
    let status = wait_for(Duration::from_secs(15), "demo exit", || {
        child.0.try_wait().ok().flatten()
    });
    assert!(status.success(), "{status:?}");
    for pid in pids {
        assert!(
            !crate::support::pid_running(pid),
            "worker {pid} left behind"
        );
    }
}

#[test]
fn sim_prints_exactly_one_bootstrap_line_and_stops_on_sigterm() {
    use std::io::{BufRead, BufReader, Read};
    // Three consecutive free ports are likely around a free one; retry a few bases if taken.
    for _attempt in 0..5 {
        let base = crate::support::free_port();
        if base > 65000 {
            continue;
        }
        let mut child = crate::support::ballast()
            .args([
                "sim",
                "--brokers",
                "3",
                "--racks",
                "3",
                "--topics",
                "2",
                "--partitions",
                "2",
            ])
            .args(["--base-port", &base.to_string()])
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::null())
            .spawn()
            .expect("start ballast sim");
        let mut stdout = BufReader::new(child.stdout.take().expect("stdout"));
        let mut line = String::new();
        let read = stdout.read_line(&mut line).unwrap_or(0);
        if read == 0 {
            // A port was taken: the simulator exited with an error; try another base.
            let _ = child.wait();
            continue;
        }
        let expected = format!(
            "bootstrap=127.0.0.1:{},127.0.0.1:{},127.0.0.1:{}\n",
            base,
            base + 1,
            base + 2
        );
        assert_eq!(line, expected);
        for port in base..base + 3 {
            std::net::TcpStream::connect(("127.0.0.1", port))
                .expect("every broker accepts connections");
        }
        nix::sys::signal::kill(
            nix::unistd::Pid::from_raw(child.id() as i32),
            nix::sys::signal::Signal::SIGTERM,
        )
        .expect("SIGTERM");
        let status = wait_for(Duration::from_secs(10), "sim exit", || {
            child.try_wait().ok().flatten()
        });
        assert!(status.success(), "{status:?}");
        let mut rest = String::new();
        stdout.read_to_string(&mut rest).expect("rest of stdout");
        assert_eq!(rest, "", "exactly one line on stdout");
        return;
    }
    panic!("no free run of three ports found");
}
