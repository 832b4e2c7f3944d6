//! Starting the real binary, waiting for it, and cleaning up after it.

use std::collections::BTreeMap;
use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use ballast_schema::Store;
use nix::sys::signal::{kill, Signal};
use nix::unistd::Pid;

pub const WORKERS: [&str; 4] = ["executor", "healer", "observer", "web"];

pub fn ballast() -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_ballast"));
    cmd.env_clear();
    if let Ok(path) = std::env::var("PATH") {
        cmd.env("PATH", path);
    }
    cmd
}

/// A `ballast` invocation that is expected to end by itself.
pub fn ballast_output(args: &[&str], env: &[(&str, &str)]) -> Output {
    ballast()
        .args(args)
        .envs(env.iter().copied())
        .stdin(Stdio::null())
        .output()
        .expect("run ballast")
}

pub fn free_port() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind an ephemeral port");
    listener.local_addr().expect("local addr").port()
}

/// Polls `f` until it returns Some or `timeout` passes.
pub fn wait_for<T>(timeout: Duration, what: &str, mut f: impl FnMut() -> Option<T>) -> T {
    let deadline = Instant::now() + timeout;
    loop {
        if let Some(v) = f() {
            return v;
        }
        assert!(
            Instant::now() < deadline,
            "timed out after {timeout:?} waiting for {what}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Ends `child`: SIGTERM, then SIGKILL when it is still running after `grace`.
pub fn terminate(child: &mut Child, grace: Duration) {
    let _ = kill(Pid::from_raw(child.id() as i32), Signal::SIGTERM);
    let deadline = Instant::now() + grace;
    while Instant::now() < deadline {
        if let Ok(Some(_)) = child.try_wait() {
            return;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let _ = child.kill();
    let _ = child.wait();
}

/// True while `pid` is a live process (not gone, not a zombie).
pub fn pid_running(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => {
            // The state is the first field after the parenthesised command name.
            let state = stat
                .rsplit(')')
                .next()
                .and_then(|rest| rest.trim_start().chars().next());
            !matches!(state, Some('Z') | Some('X') | None)
        }
        Err(_) => false,
    }
}

/// A running `ballast run` in a temporary data directory.
pub struct Service {
    pub child: Child,
    pub port: u16,
    pub dir: tempfile::TempDir,
}

/// Short timings so supervision is observable in seconds.
pub fn fast_env(dir: &Path, port: u16) -> Vec<(String, String)> {
    [
        ("BALLAST_DATA_DIR", dir.to_string_lossy().into_owned()),
        ("PORT", port.to_string()),
        ("BALLAST_KAFKA_BOOTSTRAP_SERVERS", "127.0.0.1:9".to_string()),
        ("BALLAST_HEARTBEAT_INTERVAL", "200ms".to_string()),
        ("BALLAST_RESTART_BACKOFF_INITIAL", "200ms".to_string()),
        ("BALLAST_RESTART_BACKOFF_MAX", "1s".to_string()),
        ("BALLAST_SHUTDOWN_GRACE", "5s".to_string()),
        ("LOG_LEVEL", "WARN".to_string()),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v))
    .collect()
}

impl Service {
    pub fn start() -> Service {
        Self::start_with(&[])
    }

    pub fn start_with(extra: &[(&str, &str)]) -> Service {
        Self::start_on(free_port(), extra)
    }

    /// As `start_with`, on `port` (known before the start, e.g. for `BALLAST_PUBLIC_URL`).
    pub fn start_on<K: AsRef<OsStr>, V: AsRef<OsStr>>(port: u16, extra: &[(K, V)]) -> Service {
        Self::start_logged(port, extra, Stdio::inherit())
    }

    /// As `start_on`, with the supervisor's (and its workers') log going to `stderr`.
    pub fn start_logged<K: AsRef<OsStr>, V: AsRef<OsStr>>(
        port: u16,
        extra: &[(K, V)],
        stderr: Stdio,
    ) -> Service {
        let dir = tempfile::tempdir().expect("temp dir");
        let child = ballast()
            .arg("run")
            .envs(fast_env(dir.path(), port))
            .envs(extra.iter().map(|(k, v)| (k, v)))
            .stdin(Stdio::null())
            .stderr(stderr)
            .spawn()
            .expect("start ballast run");
        let service = Service { child, port, dir };
        service.wait_all_running();
        service
    }

    pub fn db_path(&self) -> PathBuf {
        self.dir.path().join("ballast.db")
    }

    pub fn url(&self, path: &str) -> String {
        format!("http://127.0.0.1:{}{path}", self.port)
    }

    /// Running workers and their pids, as the supervisor recorded them.
    pub fn worker_pids(&self) -> BTreeMap<String, u32> {
        let Ok(store) = Store::open(&self.db_path()) else {
            return BTreeMap::new();
        };
        store
            .processes()
            .unwrap_or_default()
            .into_iter()
            .filter(|p| p.name != "supervisor" && p.state == ballast_schema::ProcessState::Running)
            .filter_map(|p| p.pid.map(|pid| (p.name, pid)))
            .collect()
    }

    pub fn restarts(&self, worker: &str) -> u32 {
        Store::open(&self.db_path())
            .and_then(|s| s.processes())
            .unwrap_or_default()
            .into_iter()
            .find(|p| p.name == worker)
            .map_or(0, |p| p.restarts)
    }

    /// Waits until every worker runs and has written a heartbeat, and the web port answers.
    pub fn wait_all_running(&self) -> BTreeMap<String, u32> {
        let pids = wait_for(Duration::from_secs(20), "all workers running", || {
            let pids = self.worker_pids();
            let beats = Store::open(&self.db_path())
                .and_then(|s| s.heartbeats())
                .unwrap_or_default();
            let all = WORKERS.iter().all(|w| {
                pids.get(*w)
                    .is_some_and(|pid| beats.iter().any(|h| h.name == *w && h.pid == *pid))
            });
            all.then_some(pids)
        });
        wait_for(Duration::from_secs(10), "web answering", || {
            std::net::TcpStream::connect(("127.0.0.1", self.port)).ok()
        });
        pids
    }

    pub fn signal(&self, sig: Signal) {
        kill(Pid::from_raw(self.child.id() as i32), sig).expect("signal supervisor");
    }

    /// Waits for the supervisor to exit and returns its exit status.
    pub fn wait_exit(&mut self, timeout: Duration) -> std::process::ExitStatus {
        wait_for(timeout, "supervisor exit", || {
            self.child.try_wait().ok().flatten()
        })
    }
}

impl Drop for Service {
    fn drop(&mut self) {
        for pid in self.worker_pids().values() {
            let _ = kill(Pid::from_raw(*pid as i32), Signal::SIGKILL);
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A `LICENSE_STRING` for tests that drive licensed routes of `ballast run`: signed with the
/// committed development key, valid for a day. The test binary is a debug build, which accepts
/// that key (a release build would not: docs/license.md).
pub fn dev_license() -> String {
    let pem = std::fs::read_to_string(ballast_license::keys::development_private_key_path())
        .expect("keys/dev.pem");
    let key = ballast_license::SigningKey::from_pem(&pem).expect("development key");
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as i64);
    ballast_license::issue(
        &ballast_license::Claims {
            sub: "e2e".into(),
            lic: "e2e".into(),
            iat: now,
            nbf: now,
            exp: now + 86_400,
            notes: None,
        },
        &key,
    )
}
