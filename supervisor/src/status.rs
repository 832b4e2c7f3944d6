//! `ballast status`: what the supervisor and its workers are doing, read from the database alone.
//! Exit 0 when the supervisor is alive and every worker runs; 1 otherwise; 2 when the database
//! cannot be read.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use ballast_config::RawConfig;
use ballast_runtime::{error_chain, format_rfc3339_ms, Clock, SystemClock};
use ballast_schema::{Heartbeat, ProcessRecord, ProcessState, Store};
use serde_json::json;

fn data_dir(raw: &RawConfig) -> PathBuf {
    let default = ballast_config::SETTINGS
        .iter()
        .find(|s| s.name == "BALLAST_DATA_DIR")
        .and_then(|s| s.default)
        .unwrap_or("./data");
    PathBuf::from(raw.get("BALLAST_DATA_DIR").unwrap_or(default))
}

pub fn run(file: Option<&Path>, as_json: bool) -> ExitCode {
    let raw = match RawConfig::from_process_env(file) {
        Ok(raw) => raw,
        Err(e) => {
            eprintln!("ballast: invalid configuration: {e}");
            return ExitCode::from(2);
        }
    };
    let db = data_dir(&raw).join("ballast.db");
    if !db.exists() {
        eprintln!(
            "ballast: no database at {}: has `ballast run` ever started with this BALLAST_DATA_DIR?{}",
            db.display(),
            demo_hint()
        );
        return ExitCode::from(2);
    }
    let read = Store::open(&db).and_then(|s| Ok((s.processes()?, s.heartbeats()?)));
    let (processes, heartbeats) = match read {
        Ok(rows) => rows,
        Err(e) => {
            eprintln!("ballast: cannot read {}: {}", db.display(), error_chain(&e));
            return ExitCode::from(2);
        }
    };
    let now = SystemClock.now_ms();
    let supervisor = processes.iter().find(|p| p.name == "supervisor");
    let supervisor_alive = supervisor.and_then(|p| p.pid).is_some_and(|pid| {
        pid_alive(pid) && supervisor.is_some_and(|p| p.state == ProcessState::Running)
    });
    let workers: Vec<&ProcessRecord> = processes
        .iter()
        .filter(|p| p.name != "supervisor")
        .collect();
    let all_running =
        !workers.is_empty() && workers.iter().all(|p| p.state == ProcessState::Running);
    let healthy = supervisor_alive && all_running;

    if as_json {
        let rows: Vec<_> = workers
            .iter()
            .map(|p| {
                let beat = heartbeats.iter().find(|h| h.name == p.name);
                json!({
                    "name": p.name, "state": p.state, "pid": p.pid, "restarts": p.restarts,
                    "startedAt": p.started_at_ms.map(format_rfc3339_ms),
                    "lastExit": p.last_exit, "lastExitAt": p.last_exit_at_ms.map(format_rfc3339_ms),
                    "heartbeatAgeMs": beat.map(|h| (now - h.at_ms).max(0)),
                })
            })
            .collect();
        let doc = json!({
            "healthy": healthy,
            "supervisor": supervisor.map(|p| json!({"pid": p.pid, "state": p.state, "alive": supervisor_alive})),
            "workers": rows,
        });
        println!("{doc:#}");
    } else {
        print_table(supervisor, supervisor_alive, &workers, &heartbeats, now);
    }
    if healthy {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}

fn print_table(
    supervisor: Option<&ProcessRecord>,
    alive: bool,
    workers: &[&ProcessRecord],
    heartbeats: &[Heartbeat],
    now: i64,
) {
    match supervisor {
        Some(p) if alive => println!(
            "supervisor  pid {}  running since {}",
            p.pid.unwrap_or(0),
            p.started_at_ms.map(format_rfc3339_ms).unwrap_or_default()
        ),
        Some(p) => println!(
            "supervisor  not running (last pid {}, last state {})",
            p.pid.map_or("-".to_string(), |p| p.to_string()),
            p.state
        ),
        None => println!("supervisor  never started"),
    }
    println!(
        "{:<9} {:<9} {:>8} {:>8}  {:<10} LAST EXIT",
        "WORKER", "STATE", "PID", "RESTARTS", "HEARTBEAT"
    );
    for p in workers {
        let beat = heartbeats
            .iter()
            .find(|h| h.name == p.name)
            .map(|h| format!("{}s ago", (now - h.at_ms).max(0) / 1000))
            .unwrap_or_else(|| "never".to_string());
        let exit = match (&p.last_exit, p.last_exit_at_ms) {
            (Some(how), Some(at)) => format!("{how} at {}", format_rfc3339_ms(at)),
            (Some(how), None) => how.clone(),
            _ => "-".to_string(),
        };
        println!(
            "{:<9} {:<9} {:>8} {:>8}  {:<10} {exit}",
            p.name,
            p.state.as_str(),
            p.pid.map_or("-".to_string(), |p| p.to_string()),
            p.restarts,
            beat
        );
    }
}

fn pid_alive(pid: u32) -> bool {
    let Ok(raw) = i32::try_from(pid) else {
        return false;
    };
    nix::sys::signal::kill(nix::unistd::Pid::from_raw(raw), None).is_ok()
}

/// Where running or past demos keep their databases (`ballast demo` uses
/// `<temp>/ballast-demo-<port>`), as a hint for `ballast status` run without BALLAST_DATA_DIR.
fn demo_hint() -> String {
    let temp = std::env::temp_dir();
    let mut found: Vec<String> = std::fs::read_dir(&temp)
        .map(|entries| {
            entries
                .filter_map(Result::ok)
                .filter(|e| e.file_name().to_string_lossy().starts_with("ballast-demo-"))
                .filter(|e| e.path().join("ballast.db").exists())
                .map(|e| e.path().display().to_string())
                .collect()
        })
        .unwrap_or_default();
    found.sort();
    match found.first() {
        None => String::new(),
        Some(dir) => format!(
            "\nA `ballast demo` keeps its database elsewhere: BALLAST_DATA_DIR={dir} ballast status"
        ),
    }
}
