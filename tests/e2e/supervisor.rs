//! The supervisor's promises: isolated workers, restarts with backoff, clean stops, no orphans.

use std::time::Duration;

use nix::sys::signal::{kill, Signal};
use nix::unistd::Pid;

use crate::support::{
    ballast_output, fast_env, free_port, pid_running, wait_for, Service, WORKERS,
};

#[test]
fn each_worker_runs_in_its_own_process_group() {
    let service = Service::start();
    let pids = service.wait_all_running();
    assert_eq!(pids.len(), WORKERS.len());
    for (name, pid) in &pids {
        let pgid = nix::unistd::getpgid(Some(Pid::from_raw(*pid as i32))).expect("getpgid");
        assert_eq!(
            pgid.as_raw(),
            *pid as i32,
            "{name} leads its own process group"
        );
    }
}

#[test]
fn sigkilled_worker_is_restarted_while_others_keep_their_pids() {
    let service = Service::start();
    let before = service.wait_all_running();
    let victim = before["observer"];
    kill(Pid::from_raw(victim as i32), Signal::SIGKILL).expect("kill observer");

    let after = wait_for(Duration::from_secs(15), "observer restarted", || {
        let pids = service.worker_pids();
        pids.get("observer")
            .is_some_and(|pid| *pid != victim)
            .then_some(pids)
    });
    assert_eq!(service.restarts("observer"), 1);
    for other in ["executor", "healer", "web"] {
        assert_eq!(before[other], after[other], "{other} kept its pid");
        assert_eq!(service.restarts(other), 0);
    }

    // The restart is visible to operators: health details, metrics and `ballast status`.
    service.wait_all_running();
    let health: serde_json::Value = reqwest::blocking::get(service.url("/api/v1/health"))
        .and_then(|r| r.json())
        .expect("health");
    let observer = health["data"]["workers"]
        .as_array()
        .and_then(|ws| ws.iter().find(|w| w["name"] == "observer"))
        .expect("observer in health details");
    assert_eq!(observer["restarts"], 1);
    assert_eq!(observer["lastExit"], "signal 9 (SIGKILL)");

    let metrics = reqwest::blocking::get(service.url("/metrics"))
        .and_then(|r| r.text())
        .expect("metrics");
    assert!(
        metrics.contains("ballast_worker_restarts_total{worker=\"observer\"} 1"),
        "{metrics}"
    );
    assert!(metrics.contains("ballast_worker_restarts_total{worker=\"web\"} 0"));

    let dir = service.dir.path().to_string_lossy().into_owned();
    let status = ballast_output(&["status", "--json"], &[("BALLAST_DATA_DIR", dir.as_str())]);
    assert!(status.status.success(), "{status:?}");
    let doc: serde_json::Value = serde_json::from_slice(&status.stdout).expect("status json");
    let row = doc["workers"]
        .as_array()
        .and_then(|ws| ws.iter().find(|w| w["name"] == "observer"))
        .expect("observer row");
    assert_eq!(row["restarts"], 1);
    assert_eq!(doc["healthy"], true);
}

/// The supervisor's "worker started" line names the restart count the database records (and
/// `/api/v1/health` reports), not the count before this start.
#[test]
fn a_restarted_worker_is_logged_with_the_restart_count_health_reports() {
    let logs = tempfile::tempdir().expect("temp dir");
    let log_path = logs.path().join("supervisor.log");
    let log = std::fs::File::create(&log_path).expect("log file");
    let service = Service::start_logged(
        free_port(),
        &[("LOG_LEVEL", "INFO"), ("LOG_FORMAT", "json")],
        log.into(),
    );
    let before = service.wait_all_running();
    let victim = before["observer"];
    kill(Pid::from_raw(victim as i32), Signal::SIGKILL).expect("kill observer");
    let restarted = wait_for(Duration::from_secs(15), "observer restarted", || {
        service
            .worker_pids()
            .get("observer")
            .copied()
            .filter(|pid| *pid != victim)
    });
    assert_eq!(service.restarts("observer"), 1);
    let line = wait_for(Duration::from_secs(10), "the restart logged", || {
        let text = std::fs::read_to_string(&log_path).ok()?;
        text.lines()
            .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
            .find(|v| {
                v["message"] == "worker started"
                    && v["worker"] == "observer"
                    && v["pid"] == restarted
            })
    });
    assert_eq!(line["restarts"], 1, "{line}");
}

#[test]
fn a_crash_looping_worker_backs_off_and_is_counted() {
    let service = Service::start();
    let mut last = service.wait_all_running()["healer"];
    for round in 1..=3 {
        kill(Pid::from_raw(last as i32), Signal::SIGKILL).expect("kill healer");
        last = wait_for(Duration::from_secs(15), "healer back", || {
            service
                .worker_pids()
                .get("healer")
                .copied()
                .filter(|pid| *pid != last)
        });
        assert_eq!(service.restarts("healer"), round);
    }
}

fn stop_leaves_no_process_behind(sig: Signal) {
    let mut service = Service::start();
    let pids = service.wait_all_running();
    service.signal(sig);
    let status = service.wait_exit(Duration::from_secs(15));
    assert!(status.success(), "supervisor exit after {sig}: {status:?}");
    for (name, pid) in &pids {
        assert!(
            !pid_running(*pid),
            "{name} ({pid}) still running after {sig}"
        );
    }
    assert!(
        service.worker_pids().is_empty(),
        "every worker recorded as stopped"
    );
}

#[test]
fn sigterm_leaves_no_process_behind() {
    stop_leaves_no_process_behind(Signal::SIGTERM);
}

#[test]
fn sigint_leaves_no_process_behind() {
    stop_leaves_no_process_behind(Signal::SIGINT);
}

#[test]
fn workers_exit_when_their_supervisor_is_killed() {
    let mut service = Service::start();
    let pids = service.wait_all_running();
    service.signal(Signal::SIGKILL);
    service.wait_exit(Duration::from_secs(5));
    wait_for(Duration::from_secs(10), "orphaned workers to exit", || {
        pids.values().all(|pid| !pid_running(*pid)).then_some(())
    });
}

#[test]
fn a_worker_started_without_a_live_supervisor_refuses_to_run() {
    let dir = tempfile::tempdir().expect("temp dir");
    // Create the database the way the supervisor would.
    ballast_schema::Store::migrate(&dir.path().join("ballast.db")).expect("migrate");
    let env = fast_env(dir.path(), free_port());
    let mut env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    env.push(("BALLAST_SUPERVISOR_PID", "1"));
    let out = ballast_output(&["observer"], &env);
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("supervisor 1 is gone"), "{stderr}");
}

#[test]
fn a_second_supervisor_on_the_same_data_dir_is_refused() {
    let service = Service::start();
    let dir = service.dir.path().to_string_lossy().into_owned();
    let port = free_port().to_string();
    let out = ballast_output(
        &["run"],
        &[
            ("BALLAST_DATA_DIR", dir.as_str()),
            ("PORT", port.as_str()),
            ("BALLAST_KAFKA_BOOTSTRAP_SERVERS", "127.0.0.1:9"),
        ],
    );
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains(&format!(
            "another ballast supervisor (pid {}) is running",
            service.child.id()
        )),
        "{stderr}"
    );
}

#[test]
fn a_port_in_use_is_refused_before_anything_starts() {
    let taken = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = taken.local_addr().expect("addr").port().to_string();
    let dir = tempfile::tempdir().expect("temp dir");
    let data = dir.path().to_string_lossy().into_owned();
    let out = ballast_output(
        &["run"],
        &[
            ("BALLAST_DATA_DIR", data.as_str()),
            ("PORT", port.as_str()),
            ("BALLAST_KAFKA_BOOTSTRAP_SERVERS", "127.0.0.1:9"),
        ],
    );
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains(&format!("PORT: cannot listen on 127.0.0.1:{port}")),
        "{stderr}"
    );
    assert!(!dir.path().join("ballast.db").exists(), "nothing started");
}

#[test]
fn the_demo_on_a_taken_port_says_so_in_one_line_before_its_banner() {
    let taken = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = taken.local_addr().expect("addr").port().to_string();
    let tmp = tempfile::tempdir().expect("temp dir");
    let out = crate::support::ballast()
        .args(["demo", "--port", port.as_str()])
        .env("TMPDIR", tmp.path())
        .stdin(std::process::Stdio::null())
        .output()
        .expect("run the demo");
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains(&format!("port {port} is not free")) && stderr.contains("--port"),
        "{stderr}"
    );
    assert!(
        !stderr.contains("simulated Kafka cluster"),
        "no banner: {stderr}"
    );
    assert_eq!(stderr.trim().lines().count(), 1, "{stderr}");
}

#[test]
fn a_new_demo_starts_from_a_fresh_database_and_says_it_replaced_the_old_one() {
    let port = crate::support::free_port().to_string();
    let tmp = tempfile::tempdir().expect("temp dir");
    let data = tmp.path().join(format!("ballast-demo-{port}"));
    std::fs::create_dir_all(&data).expect("old demo dir");
    std::fs::write(data.join("ballast.db"), b"the previous demo's cluster").expect("old db");
    let child = crate::support::ballast()
        .args(["demo", "--port", port.as_str()])
        .env("TMPDIR", tmp.path())
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("start demo");
    let url = format!("http://127.0.0.1:{port}/api/v1/health");
    let up = (0..150).any(|_| {
        std::thread::sleep(Duration::from_millis(200));
        reqwest::blocking::get(&url).is_ok_and(|r| r.status().is_success())
    });
    let _ = nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(child.id() as i32),
        nix::sys::signal::Signal::SIGTERM,
    );
    let out = child.wait_with_output().expect("demo output");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(up, "the demo answered: {stderr}");
    assert!(
        stderr.contains("the previous demo's data was cleared"),
        "{stderr}"
    );
    assert!(stderr.contains("a line here says when"), "{stderr}");
}

#[test]
fn a_database_from_a_newer_ballast_is_refused() {
    let dir = tempfile::tempdir().expect("temp dir");
    let db = dir.path().join("ballast.db");
    ballast_schema::Store::migrate(&db).expect("migrate");
    let conn = rusqlite::Connection::open(&db).expect("open");
    conn.pragma_update(None, "user_version", 999)
        .expect("bump version");
    drop(conn);
    let data = dir.path().to_string_lossy().into_owned();
    let port = free_port().to_string();
    let out = ballast_output(
        &["run"],
        &[
            ("BALLAST_DATA_DIR", data.as_str()),
            ("PORT", port.as_str()),
            ("BALLAST_KAFKA_BOOTSTRAP_SERVERS", "127.0.0.1:9"),
        ],
    );
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("999"), "{stderr}");
    assert!(stderr.contains("newer"), "{stderr}");
}
