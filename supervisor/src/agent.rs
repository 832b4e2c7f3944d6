//! `ballast agent`: the on-broker agent (docs/rolling-restarts.md).
//!
//! It runs beside a broker under its own systemd unit, listens on nothing, and every
//! `BALLAST_AGENT_HEARTBEAT_INTERVAL` posts a heartbeat to the service (`POST
//! /api/v1/agent/heartbeat`, `Authorization: Bearer <BALLAST_AGENT_TOKEN>`): its version and build
//! digest, whether the broker process runs (`BALLAST_AGENT_STATUS_COMMAND`), since when, and
//! the disks of the log dirs. The answer may carry one command:
//! - `restart`: runs `BALLAST_AGENT_RESTART_COMMAND` (killed after
//!   `BALLAST_AGENT_COMMAND_TIMEOUT`) and reports its exit status and the end of its output;
//! - `upgrade`: downloads the service's executable over the same authenticated channel, checks
//!   its SHA-256 against the command's, puts it in place of its own executable (a rename in the
//!   same directory, so never half a file), reports, and executes the new build in its place.
//!
//! Synchronous on purpose: one loop, one request at a time, nothing to coordinate.

use std::io::Read;
use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use ballast_config::{AgentSettings, RawConfig};
use serde_json::{json, Value};
use tracing::{error, info, warn};

use crate::{EXIT_CONFIG, EXIT_FAILURE};

/// The most output of a command kept for its report.
const OUTPUT_TAIL: usize = 2000;

fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
        .unwrap_or(0)
}

pub fn run(file: Option<&Path>) -> ExitCode {
    let raw = match RawConfig::from_process_env(file) {
        Ok(raw) => raw,
        Err(e) => {
            eprintln!("ballast agent: invalid configuration: {e}");
            return ExitCode::from(EXIT_CONFIG);
        }
    };
    let settings = match AgentSettings::from_raw(&raw) {
        Ok(s) => s,
        Err(errors) => {
            for e in errors {
                eprintln!("ballast agent: invalid configuration: {e}");
            }
            return ExitCode::from(EXIT_CONFIG);
        }
    };
    ballast_runtime::init_logging("agent", settings.log_level, settings.log_format);
    match Agent::new(settings) {
        Ok(mut agent) => agent.run(),
        Err(e) => {
            error!("agent cannot start: {e}");
            eprintln!("ballast agent: cannot start: {e}");
            ExitCode::from(EXIT_FAILURE)
        }
    }
}

/// `ballast agent-token --broker N`: the credential of that broker's agent.
pub fn agent_token(broker: i32, file: Option<&Path>) -> ExitCode {
    if broker < 0 {
        eprintln!("ballast agent-token: --broker must be 0 or above");
        return ExitCode::from(EXIT_CONFIG);
    }
    let raw = match RawConfig::from_process_env(file) {
        Ok(raw) => raw,
        Err(e) => {
            eprintln!("ballast agent-token: invalid configuration: {e}");
            return ExitCode::from(EXIT_CONFIG);
        }
    };
    match raw
        .get("BALLAST_AGENT_TOKEN")
        .filter(|t| !t.trim().is_empty())
    {
        Some(secret) if secret.chars().count() >= ballast_config::AGENT_TOKEN_MIN_CHARS => {
            println!("{}", ballast_web::agents::broker_token(secret, broker));
            ExitCode::SUCCESS
        }
        Some(_) => {
            eprintln!(
                "ballast agent-token: BALLAST_AGENT_TOKEN must have at least {} characters",
                ballast_config::AGENT_TOKEN_MIN_CHARS
            );
            ExitCode::from(EXIT_CONFIG)
        }
        None => {
            eprintln!("ballast agent-token: set BALLAST_AGENT_TOKEN (the service's, e.g. --config /etc/ballast/ballast.env)");
            ExitCode::from(EXIT_CONFIG)
        }
    }
}

/// `ballast sim-broker`: one call to the simulated cluster's control API. Exit 0 when it
/// succeeded (for `alive`: the broker runs), 1 otherwise, with the reason on stderr.
pub fn sim_broker(control: &str, action: &str, broker: i32, down: Duration) -> ExitCode {
    let base = control.trim_end_matches('/');
    let http = reqwest::blocking::Client::new();
    let r = match action {
        "alive" => http.get(format!("{base}/brokers/{broker}/alive")).send(),
        "stop" | "start" => http
            .post(format!("{base}/brokers/{broker}/{action}"))
            .send(),
        "restart" => http
            .post(format!(
                "{base}/brokers/{broker}/restart?downMs={}",
                down.as_millis()
            ))
            .send(),
        other => {
            eprintln!("ballast sim-broker: unknown action {other:?} (restart, stop, start, alive)");
            return ExitCode::from(EXIT_CONFIG);
        }
    };
    match r {
        Ok(r) if r.status().is_success() => ExitCode::SUCCESS,
        Ok(r) => {
            eprintln!("ballast sim-broker: broker {broker}: {}", r.status());
            ExitCode::from(EXIT_FAILURE)
        }
        Err(e) => {
            eprintln!("ballast sim-broker: {e}");
            ExitCode::from(EXIT_FAILURE)
        }
    }
}

/// Runs an agent on a thread of this process (`ballast demo`: an agent per simulated broker).
pub fn spawn(settings: AgentSettings) -> Result<(), String> {
    let mut agent = Agent::new(settings)?;
    std::thread::Builder::new()
        .name(format!("ballast-agent-{}", agent.s.broker_id))
        .spawn(move || {
            agent.run();
        })
        .map(|_| ())
        .map_err(|e| format!("cannot start an agent thread: {e}"))
}

struct Agent {
    s: AgentSettings,
    http: reqwest::blocking::Client,
    node_id: String,
    version: String,
    digest: String,
    exe: PathBuf,
    started_at_ms: i64,
    /// When the agent first saw the broker process running in its current run.
    broker_up_since: Option<Instant>,
}

fn hostname() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|h| h.trim().to_string())
        .ok()
        .filter(|h| !h.is_empty())
        .unwrap_or_else(|| "unknown".into())
}

impl Agent {
    fn new(s: AgentSettings) -> Result<Agent, String> {
        match ballast_web::agents::token_broker(s.token.expose()) {
            Some(b) if b == s.broker_id => {}
            Some(b) => {
                return Err(format!(
                "BALLAST_AGENT_TOKEN is broker {b}'s credential, but BALLAST_AGENT_BROKER_ID is {}",
                s.broker_id
            ))
            }
            None => {
                return Err(
                    "BALLAST_AGENT_TOKEN is not an agent credential: make one with \
                     `ballast agent-token --broker N` where the service's configuration is"
                        .into(),
                )
            }
        }
        let bytes = std::fs::read("/proc/self/exe")
            .map_err(|e| format!("cannot read the agent's own executable: {e}"))?;
        let exe = std::env::current_exe()
            .map_err(|e| format!("cannot find the agent's own executable: {e}"))?;
        let mut builder = reqwest::blocking::Client::builder()
            .timeout(Duration::from_secs(60))
            .connect_timeout(Duration::from_secs(10));
        if let Some(path) = &s.ca_file {
            let pem = std::fs::read(path).map_err(|e| {
                format!("BALLAST_AGENT_CA_FILE {}: cannot read: {e}", path.display())
            })?;
            let certs = reqwest::Certificate::from_pem_bundle(&pem).map_err(|e| {
                format!(
                    "BALLAST_AGENT_CA_FILE {}: not PEM certificates: {e}",
                    path.display()
                )
            })?;
            if certs.is_empty() {
                return Err(format!(
                    "BALLAST_AGENT_CA_FILE {}: no certificate in it",
                    path.display()
                ));
            }
            for cert in certs {
                builder = builder.add_root_certificate(cert);
            }
        }
        let http = builder
            .build()
            .map_err(|e| format!("cannot build the HTTP client: {e}"))?;
        Ok(Agent {
            node_id: s.node_id.clone().unwrap_or_else(hostname),
            s,
            http,
            version: format!("{} ({})", ballast_web::VERSION, ballast_web::COMMIT),
            digest: ballast_web::agents::sha256_hex(&bytes),
            exe,
            started_at_ms: now_ms(),
            broker_up_since: None,
        })
    }

    fn url(&self, path: &str) -> String {
        format!("{}{path}", self.s.service_url)
    }

    fn run(&mut self) -> ExitCode {
        info!(
            broker = self.s.broker_id,
            node = %self.node_id,
            service = %self.s.service_url,
            version = %self.version,
            "agent started"
        );
        let mut last_error: Option<String> = None;
        loop {
            let again = match self.heartbeat(None) {
                Ok(cmd) => {
                    if last_error.take().is_some() {
                        info!("heartbeat accepted again");
                    }
                    match cmd {
                        Some(cmd) => {
                            self.perform(&cmd);
                            true
                        }
                        None => false,
                    }
                }
                Err(e) => {
                    // A failure is logged when it starts or changes, not every interval.
                    if last_error.as_deref() != Some(e.as_str()) {
                        warn!("heartbeat failed: {e}");
                        last_error = Some(e);
                    }
                    false
                }
            };
            if !again {
                std::thread::sleep(self.s.heartbeat_interval);
            }
        }
    }

    fn broker_process_up(&mut self) -> Option<bool> {
        let cmd = self.s.status_command.clone()?;
        let up = run_shell(&cmd, Duration::from_secs(30)).is_ok_and(|(ok, _)| ok);
        match (up, self.broker_up_since) {
            (true, None) => self.broker_up_since = Some(Instant::now()),
            (false, _) => self.broker_up_since = None,
            _ => {}
        }
        Some(up)
    }

    fn disks(&self) -> Vec<Value> {
        self.s
            .log_dirs
            .iter()
            .map(|dir| match nix::sys::statvfs::statvfs(dir) {
                Ok(v) => {
                    let block = v.fragment_size();
                    json!({
                        "path": dir.display().to_string(),
                        "totalBytes": v.blocks().saturating_mul(block),
                        "availableBytes": v.blocks_available().saturating_mul(block),
                    })
                }
                Err(e) => json!({ "path": dir.display().to_string(), "error": e.to_string() }),
            })
            .collect()
    }

    fn post(&self, path: &str, body: &Value) -> Result<Value, String> {
        let r = self
            .http
            .post(self.url(path))
            .bearer_auth(self.s.token.expose())
            .json(body)
            .send()
            .map_err(|e| format!("{path}: {e}"))?;
        let status = r.status();
        let v: Value = r
            .json()
            .map_err(|e| format!("{path}: answer is not JSON ({status}): {e}"))?;
        if !status.is_success() {
            return Err(format!(
                "{path}: {status}: {} ({})",
                v["error"].as_str().unwrap_or("?"),
                v["details"].as_str().unwrap_or("")
            ));
        }
        Ok(v["data"].clone())
    }

    /// Reports; `running` is the command being run now (the service then hands out none).
    fn heartbeat(&mut self, running: Option<i64>) -> Result<Option<Value>, String> {
        let up = self.broker_process_up();
        let uptime = self
            .broker_up_since
            .map(|t| i64::try_from(t.elapsed().as_secs()).unwrap_or(i64::MAX));
        let body = json!({
            "brokerId": self.s.broker_id,
            "nodeId": self.node_id,
            "version": self.version,
            "buildDigest": self.digest,
            "brokerProcessUp": up,
            "brokerUptimeSeconds": uptime,
            "agentStartedAt": self.started_at_ms,
            "disks": self.disks(),
            "runningCommandId": running,
        });
        let answer = self.post("/api/v1/agent/heartbeat", &body)?;
        Ok(Some(answer["command"].clone()).filter(|c| c.is_object()))
    }

    /// Reports an outcome, retrying a few times: a lost report leaves the service waiting
    /// until its timeout.
    fn report(&self, id: i64, succeeded: bool, detail: &str) {
        let body =
            json!({ "brokerId": self.s.broker_id, "succeeded": succeeded, "detail": detail });
        let path = format!("/api/v1/agent/commands/{id}/result");
        for attempt in 1..=5u32 {
            match self.post(&path, &body) {
                Ok(_) => return,
                // Refused for good (the command ended, e.g. cancelled): nothing to retry.
                Err(e) if e.contains("409") => {
                    warn!(command = id, "the outcome was not taken: {e}");
                    return;
                }
                Err(e) => {
                    warn!(
                        command = id,
                        attempt, "the outcome could not be reported: {e}"
                    );
                    std::thread::sleep(self.s.heartbeat_interval.min(Duration::from_secs(5)));
                }
            }
        }
    }

    /// An upgrade downloads code to run as this agent: only over https, or from this host.
    fn upgrade_channel_trusted(&self) -> bool {
        let url = self.s.service_url.to_ascii_lowercase();
        if url.starts_with("https://") {
            return true;
        }
        let host = url
            .trim_start_matches("http://")
            .split(['/', '?'])
            .next()
            .unwrap_or_default();
        let host = match host.rsplit_once(':') {
            Some((h, port)) if port.chars().all(|c| c.is_ascii_digit()) => h,
            _ => host,
        };
        matches!(host, "localhost" | "[::1]") || host.starts_with("127.")
    }

    fn perform(&mut self, cmd: &Value) {
        let Some(id) = cmd["id"].as_i64() else {
            warn!("a command without an id was ignored");
            return;
        };
        match cmd["kind"].as_str() {
            Some("restart") => {
                info!(command = id, command_line = %self.s.restart_command, "restarting the broker");
                // The command runs on its own thread; the agent keeps reporting meanwhile (so
                // it is not shown down during a long restart), asking for nothing.
                let line = self.s.restart_command.clone();
                let timeout = self.s.command_timeout;
                let run = std::thread::spawn(move || run_shell(&line, timeout));
                while !run.is_finished() {
                    std::thread::sleep(self.s.heartbeat_interval.min(Duration::from_secs(1)));
                    if run.is_finished() {
                        break;
                    }
                    if let Err(e) = self.heartbeat(Some(id)) {
                        tracing::debug!("heartbeat during the restart failed: {e}");
                    }
                }
                let outcome = run
                    .join()
                    .unwrap_or_else(|_| Err("the restart command's thread failed".into()));
                let (ok, detail) = match outcome {
                    Ok((true, out)) => (true, format!("the restart command exited 0{out}")),
                    Ok((false, out)) => (false, format!("the restart command failed{out}")),
                    Err(e) => (false, e),
                };
                if ok {
                    info!(command = id, "broker restarted");
                } else {
                    warn!(command = id, "restart failed: {detail}");
                }
                self.broker_up_since = None;
                self.report(id, ok, &detail);
            }
            Some("upgrade") => {
                let want = cmd["targetDigest"].as_str().unwrap_or_default().to_string();
                match self.install(&want) {
                    Ok(detail) => {
                        info!(command = id, "{detail}");
                        self.report(id, true, &detail);
                        let args: Vec<String> = std::env::args().skip(1).collect();
                        let e = Command::new(&self.exe).args(&args).exec();
                        // exec returns only on failure: the old process goes on.
                        error!("the new build could not be started: {e}");
                    }
                    Err(e) => {
                        warn!(command = id, "upgrade failed: {e}");
                        self.report(id, false, &e);
                    }
                }
            }
            other => {
                let detail = format!("unknown command kind {other:?}");
                warn!(command = id, "{detail}");
                self.report(id, false, &detail);
            }
        }
    }

    /// Downloads the service's build, checks it, and puts it in place of this executable.
    fn install(&self, want: &str) -> Result<String, String> {
        if want.len() != 64 {
            return Err("the upgrade command names no SHA-256 to install".into());
        }
        if !self.upgrade_channel_trusted() {
            return Err(format!(
                "refused: an upgrade is installed only from an https:// service URL (or this \
                 host); {} is plain http",
                self.s.service_url
            ));
        }
        let mut r = self
            .http
            .get(self.url("/api/v1/agent/binary"))
            .bearer_auth(self.s.token.expose())
            .timeout(Duration::from_secs(600))
            .send()
            .map_err(|e| format!("download failed: {e}"))?;
        if !r.status().is_success() {
            return Err(format!("download refused: {}", r.status()));
        }
        let mut bytes = Vec::new();
        r.read_to_end(&mut bytes)
            .map_err(|e| format!("download cut: {e}"))?;
        let got = ballast_web::agents::sha256_hex(&bytes);
        if got != want {
            return Err(format!(
                "the downloaded build's SHA-256 is {got}, the command named {want}: nothing installed"
            ));
        }
        let dir = self
            .exe
            .parent()
            .ok_or_else(|| format!("{} has no directory", self.exe.display()))?;
        let tmp = dir.join(format!(".ballast-upgrade-{}", std::process::id()));
        let write = || -> std::io::Result<()> {
            std::fs::write(&tmp, &bytes)?;
            let f = std::fs::File::open(&tmp)?;
            f.sync_all()?;
            std::fs::set_permissions(&tmp, std::fs::Permissions::from_mode(0o755))
        };
        if let Err(e) = write() {
            let _ = std::fs::remove_file(&tmp);
            return Err(format!(
                "cannot write the new build next to {}: {e} (the agent needs write access to its directory)",
                self.exe.display()
            ));
        }
        // The new build must run here before it takes this one's place.
        let line = format!("'{}' --version", tmp.display());
        match run_shell(&line, Duration::from_secs(30)) {
            Ok((true, _)) => {}
            Ok((false, out)) => {
                let _ = std::fs::remove_file(&tmp);
                return Err(format!(
                    "the new build does not run on this host{out}; nothing installed"
                ));
            }
            Err(e) => {
                let _ = std::fs::remove_file(&tmp);
                return Err(format!(
                    "the new build could not be tried: {e}; nothing installed"
                ));
            }
        }
        if let Err(e) = std::fs::rename(&tmp, &self.exe) {
            let _ = std::fs::remove_file(&tmp);
            return Err(format!("cannot replace {}: {e}", self.exe.display()));
        }
        Ok(format!(
            "installed the service's build (sha256 {got}, {} bytes) as {}; starting it",
            bytes.len(),
            self.exe.display()
        ))
    }
}

/// Runs `sh -c line`, killing it after `timeout`. `Ok((exited 0, " (exit …): <output tail>"))`.
/// The output goes to an unnamed temporary file, not a pipe: a broker the command leaves
/// running in the background cannot hold the agent up by keeping a pipe open.
fn run_shell(line: &str, timeout: Duration) -> Result<(bool, String), String> {
    let file = tempfile_in_tmp().map_err(|e| format!("cannot make a file for the output: {e}"))?;
    let clone = |f: &std::fs::File| {
        f.try_clone()
            .map_err(|e| format!("cannot make a file for the output: {e}"))
    };
    let mut child = Command::new("sh")
        .arg("-c")
        .arg(line)
        .stdin(Stdio::null())
        .stdout(Stdio::from(clone(&file)?))
        .stderr(Stdio::from(clone(&file)?))
        .process_group(0)
        .spawn()
        .map_err(|e| format!("cannot run the command: {e}"))?;
    let deadline = Instant::now() + timeout;
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) if Instant::now() >= deadline => {
                if let Ok(pid) = i32::try_from(child.id()) {
                    let _ = nix::sys::signal::killpg(
                        nix::unistd::Pid::from_raw(pid),
                        nix::sys::signal::Signal::SIGKILL,
                    );
                }
                let _ = child.wait();
                return Err(format!(
                    "the command did not finish within {} and was killed",
                    ballast_config::format_duration(timeout)
                ));
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(100)),
            Err(e) => return Err(format!("cannot wait for the command: {e}")),
        }
    };
    let mut text = String::new();
    {
        use std::io::Seek;
        let mut f = file;
        let _ = f.seek(std::io::SeekFrom::Start(0));
        let mut bytes = Vec::new();
        let _ = f.read_to_end(&mut bytes);
        text.push_str(&String::from_utf8_lossy(&bytes));
    }
    let trimmed = text.trim();
    let chars: Vec<char> = trimmed.chars().collect();
    let tail: String = chars[chars.len().saturating_sub(OUTPUT_TAIL)..]
        .iter()
        .collect();
    let code = status
        .code()
        .map(|c| format!("exit {c}"))
        .unwrap_or_else(|| "killed by a signal".into());
    let detail = if tail.is_empty() {
        format!(" ({code})")
    } else {
        format!(" ({code}): {tail}")
    };
    Ok((status.success(), detail))
}

/// A file in the temporary directory that is already unlinked (gone when closed).
fn tempfile_in_tmp() -> std::io::Result<std::fs::File> {
    let path = std::env::temp_dir().join(format!(
        ".ballast-agent-{}-{}",
        std::process::id(),
        now_ms()
    ));
    let f = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create_new(true)
        .open(&path)?;
    std::fs::remove_file(&path)?;
    Ok(f)
}
