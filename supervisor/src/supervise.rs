//! `ballast run`: validate, migrate, then start and watch the workers.
//!
//! The loop is synchronous on the main thread on purpose: `PR_SET_PDEATHSIG` in a child fires
//! when the *thread* that forked it exits, so children must be forked by a thread that lives as
//! long as the supervisor.

use std::fs::File;
use std::io::Write as _;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicI32, Ordering};
use std::time::{Duration, Instant};

use ballast_config::{Config, RawConfig};
use ballast_runtime::{database_path, error_chain, Clock, SystemClock, SUPERVISOR_PID_ENV};
use ballast_schema::{ProcessRecord, ProcessState, Store};
use nix::fcntl::{Flock, FlockArg};
use nix::sys::signal::{self, SaFlags, SigAction, SigHandler, SigSet, Signal};
use nix::unistd::Pid;
use tracing::{error, info, warn};

use crate::restart::{Action, Event, Phase, RestartPolicy, WorkerState};

/// The workers `ballast run` starts, in start order.
pub const WORKERS: [&str; 4] = ["observer", "executor", "healer", "web"];

/// How often the loop looks at its children.
const POLL: Duration = Duration::from_millis(100);
/// The workers whose heap arenas are bounded, and how (glibc's `MALLOC_ARENA_MAX`).
const BOUNDED_ARENA_WORKERS: [&str; 2] = ["observer", "web"];
const MALLOC_ARENA_MAX: &str = "MALLOC_ARENA_MAX";
const BOUNDED_MALLOC_ARENAS: &str = "2";

/// Why `ballast run` could not start or had to stop.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    #[error("{0}")]
    Config(String),
    #[error("{0}")]
    Startup(String),
}

static SIGNALLED: AtomicI32 = AtomicI32::new(0);

extern "C" fn on_signal(sig: libc::c_int) {
    SIGNALLED.store(sig, Ordering::SeqCst);
}

fn install_signal_handlers() -> Result<(), RunError> {
    let action = SigAction::new(
        SigHandler::Handler(on_signal),
        SaFlags::SA_RESTART,
        SigSet::empty(),
    );
    for sig in [Signal::SIGTERM, Signal::SIGINT, Signal::SIGHUP] {
        // SAFETY: the handler only stores into an atomic, which is async-signal-safe.
        unsafe { signal::sigaction(sig, &action) }
            .map_err(|e| RunError::Startup(format!("cannot install a {sig} handler: {e}")))?;
    }
    Ok(())
}

fn take_signal() -> Option<i32> {
    match SIGNALLED.swap(0, Ordering::SeqCst) {
        0 => None,
        sig => Some(sig),
    }
}

/// Holds `ballast.lock` in the data directory for the supervisor's lifetime, so two supervisors
/// never run on one database.
struct InstanceLock {
    _lock: Flock<File>,
}

fn lock_data_dir(data_dir: &Path) -> Result<InstanceLock, RunError> {
    let path = data_dir.join("ballast.lock");
    let file = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .read(true)
        .write(true)
        .open(&path)
        .map_err(|e| RunError::Startup(format!("cannot open {}: {e}", path.display())))?;
    let mut lock = match Flock::lock(file, FlockArg::LockExclusiveNonblock) {
        Ok(lock) => lock,
        Err((_, _)) => {
            let holder = std::fs::read_to_string(&path).unwrap_or_default();
            return Err(RunError::Startup(format!(
                "another ballast supervisor (pid {}) is running on {}",
                holder.trim(),
                data_dir.display()
            )));
        }
    };
    let written = lock
        .set_len(0)
        .and_then(|()| write!(&mut *lock, "{}", std::process::id()));
    if let Err(e) = written {
        warn!(error = %e, "cannot write the pid into the lock file");
    }
    Ok(InstanceLock { _lock: lock })
}

/// One worker process and its restart state.
struct Worker {
    name: &'static str,
    child: Option<Child>,
    state: WorkerState,
    started_at_ms: Option<i64>,
    last_exit: Option<String>,
    last_exit_at_ms: Option<i64>,
}

pub struct Supervisor {
    exe: PathBuf,
    env: Vec<(String, String)>,
    store: Store,
    policy: RestartPolicy,
    grace: Duration,
    clock: SystemClock,
    workers: Vec<Worker>,
    started: Instant,
}

/// Checks configuration, takes the data directory, migrates the database and supervises the
/// workers until SIGTERM, SIGINT or SIGHUP. Returns once every child has exited.
pub fn run(raw: &RawConfig, config: &Config) -> Result<(), RunError> {
    std::fs::create_dir_all(&config.data_dir).map_err(|e| {
        RunError::Config(format!(
            "BALLAST_DATA_DIR: cannot create {}: {e}",
            config.data_dir.display()
        ))
    })?;
    let _lock = lock_data_dir(&config.data_dir)?;
    let addr = std::net::SocketAddr::new(config.bind, config.port);
    if let Err(e) = std::net::TcpListener::bind(addr) {
        return Err(RunError::Config(format!(
            "PORT: cannot listen on {addr}: {e}"
        )));
    }
    let db = database_path(config);
    let report = Store::migrate(&db)
        .map_err(|e| RunError::Startup(format!("database: {}", error_chain(&e))))?;
    if !report.applied.is_empty() {
        info!(from = report.from, to = report.to, applied = ?report.applied, "database migrated");
    }
    let store = Store::open(&db)
        .map_err(|e| RunError::Startup(format!("database: {}", error_chain(&e))))?;
    let exe = std::env::current_exe()
        .map_err(|e| RunError::Startup(format!("cannot find the ballast binary: {e}")))?;
    install_signal_handlers()?;

    let mut supervisor = Supervisor {
        exe,
        env: raw.exported(),
        store,
        policy: RestartPolicy {
            initial: config.timing.restart_backoff_initial,
            max: config.timing.restart_backoff_max,
            stable_after: config.timing.restart_stable_after,
        },
        grace: config.timing.shutdown_grace,
        clock: SystemClock,
        workers: WORKERS
            .iter()
            .map(|name| Worker {
                name,
                child: None,
                state: WorkerState::NEW,
                started_at_ms: None,
                last_exit: None,
                last_exit_at_ms: None,
            })
            .collect(),
        started: Instant::now(),
    };
    info!(pid = std::process::id(), data_dir = %config.data_dir.display(), %addr, "supervisor started");
    supervisor.record_self(ProcessState::Running);
    let signal = supervisor.supervise();
    info!(signal = signal_name(signal), "stopping workers");
    supervisor.shutdown();
    supervisor.record_self(ProcessState::Stopped);
    info!("supervisor stopped");
    Ok(())
}

impl Supervisor {
    fn now(&self) -> Duration {
        self.started.elapsed()
    }

    /// Watches the children until a stop signal arrives; returns that signal.
    fn supervise(&mut self) -> i32 {
        let mut last_beat = Instant::now();
        loop {
            if let Some(sig) = take_signal() {
                return sig;
            }
            for i in 0..self.workers.len() {
                self.reap(i);
                self.advance(i, Event::Tick);
            }
            if last_beat.elapsed() >= Duration::from_secs(1) {
                self.record_self(ProcessState::Running);
                last_beat = Instant::now();
            }
            std::thread::sleep(POLL);
        }
    }

    /// Applies an event to worker `i` and carries out the resulting action.
    fn advance(&mut self, i: usize, event: Event) {
        let now = self.now();
        let (state, action) = self.policy.next(self.workers[i].state, event, now);
        self.workers[i].state = state;
        match action {
            Action::None => {}
            Action::Spawn => {
                let event = match self.spawn(i) {
                    Ok(child) => {
                        self.workers[i].started_at_ms = Some(self.clock.now_ms());
                        self.workers[i].child = Some(child);
                        Event::Spawned
                    }
                    Err(e) => {
                        error!(worker = self.workers[i].name, error = %e, "cannot start worker");
                        self.workers[i].last_exit = Some(format!("spawn failed: {e}"));
                        self.workers[i].last_exit_at_ms = Some(self.clock.now_ms());
                        Event::SpawnFailed
                    }
                };
                let (state, _) = self.policy.next(self.workers[i].state, event, now);
                self.workers[i].state = state;
                if let (Event::Spawned, Some(child)) = (event, &self.workers[i].child) {
                    // The count after this start: what `processes` records and health reports.
                    info!(
                        worker = self.workers[i].name,
                        pid = child.id(),
                        restarts = state.restarts,
                        "worker started"
                    );
                }
            }
            Action::Terminate => {
                if let Some(child) = &self.workers[i].child {
                    signal_group(child, Signal::SIGTERM);
                }
            }
        }
        self.record(i);
    }

    fn spawn(&self, i: usize) -> std::io::Result<Child> {
        let name = self.workers[i].name;
        let mut command = Command::new(&self.exe);
        command.arg(name);
        // The web process answers on many threads at once (the runtime's and the blocking
        // pool's), the observer writes a sample while it plans it on another thread; glibc
        // gives each thread its own heap arena, which keeps memory freed in one resident for
        // the others. Two arenas keep them small (docs/big-clusters.md "Serving" and
        // "Observer"); an operator's own value wins.
        if BOUNDED_ARENA_WORKERS.contains(&name) && std::env::var_os(MALLOC_ARENA_MAX).is_none() {
            command.env(MALLOC_ARENA_MAX, BOUNDED_MALLOC_ARENAS);
        }
        command
            .envs(self.env.iter().map(|(k, v)| (k.as_str(), v.as_str())))
            .env(SUPERVISOR_PID_ENV, std::process::id().to_string())
            .stdin(Stdio::null())
            .process_group(0)
            .spawn()
    }

    /// Collects an exited child of worker `i`, if any.
    fn reap(&mut self, i: usize) {
        let Some(child) = self.workers[i].child.as_mut() else {
            return;
        };
        let status = match child.try_wait() {
            Ok(Some(status)) => status,
            Ok(None) => return,
            Err(e) => {
                warn!(worker = self.workers[i].name, error = %e, "cannot poll worker");
                return;
            }
        };
        let pid = child.id();
        self.workers[i].child = None;
        let how = describe_exit(status);
        let stopping = self.workers[i].state.phase == Phase::Stopping;
        if stopping {
            info!(worker = self.workers[i].name, pid, exit = %how, "worker stopped");
        } else {
            warn!(worker = self.workers[i].name, pid, exit = %how, "worker died");
        }
        self.workers[i].last_exit = Some(how);
        self.workers[i].last_exit_at_ms = Some(self.clock.now_ms());
        self.advance(i, Event::Exited);
    }

    /// SIGTERM to every worker's process group, SIGKILL to whatever is left after the grace
    /// period (or at once on a second signal), and every child reaped.
    fn shutdown(&mut self) {
        for i in 0..self.workers.len() {
            self.reap(i);
            self.advance(i, Event::Shutdown);
        }
        let deadline = Instant::now() + self.grace;
        loop {
            for i in 0..self.workers.len() {
                self.reap(i);
            }
            if self.workers.iter().all(|w| w.child.is_none()) {
                return;
            }
            if take_signal().is_some() {
                warn!("second signal: killing workers now");
                break;
            }
            if Instant::now() >= deadline {
                warn!(grace = ?self.grace, "workers still running after the grace period: killing them");
                break;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        for i in 0..self.workers.len() {
            if let Some(child) = self.workers[i].child.as_mut() {
                signal_group(child, Signal::SIGKILL);
                let _ = child.wait();
            }
            self.reap(i);
            if self.workers[i].child.is_some() {
                self.workers[i].child = None;
                self.workers[i].last_exit = Some("killed after the grace period".into());
                self.advance(i, Event::Exited);
            }
        }
    }

    fn record(&self, i: usize) {
        let w = &self.workers[i];
        let now_ms = self.clock.now_ms();
        let started = self.started;
        let (state, next_start_at_ms) = match w.state.phase {
            Phase::New => (ProcessState::Starting, None),
            Phase::Running { .. } => (ProcessState::Running, None),
            Phase::Backoff { until } => {
                let wait = until.saturating_sub(started.elapsed());
                (
                    ProcessState::Backoff,
                    Some(now_ms + wait.as_millis() as i64),
                )
            }
            Phase::Stopping => (ProcessState::Stopping, None),
            Phase::Stopped => (ProcessState::Stopped, None),
        };
        let record = ProcessRecord {
            name: w.name.to_string(),
            pid: w.child.as_ref().map(|c| c.id()),
            state,
            started_at_ms: w.started_at_ms,
            restarts: u32::try_from(w.state.restarts).unwrap_or(u32::MAX),
            last_exit: w.last_exit.clone(),
            last_exit_at_ms: w.last_exit_at_ms,
            next_start_at_ms,
            updated_at_ms: now_ms,
        };
        if let Err(e) = self.store.put_process(&record) {
            warn!(worker = w.name, error = %error_chain(&e), "cannot record worker state");
        }
    }

    fn record_self(&self, state: ProcessState) {
        let now_ms = self.clock.now_ms();
        let record = ProcessRecord {
            name: "supervisor".to_string(),
            pid: Some(std::process::id()),
            state,
            started_at_ms: Some(now_ms - self.started.elapsed().as_millis() as i64),
            restarts: 0,
            last_exit: None,
            last_exit_at_ms: None,
            next_start_at_ms: None,
            updated_at_ms: now_ms,
        };
        if let Err(e) = self.store.put_process(&record) {
            warn!(error = %error_chain(&e), "cannot record supervisor state");
        }
    }
}

fn signal_group(child: &Child, sig: Signal) {
    let pgid = Pid::from_raw(child.id() as i32);
    if let Err(e) = signal::killpg(pgid, sig) {
        // ESRCH: the group is already gone, which is what we wanted.
        if e != nix::errno::Errno::ESRCH {
            warn!(pid = child.id(), signal = %sig, error = %e, "cannot signal worker group");
        }
    }
}

fn describe_exit(status: ExitStatus) -> String {
    if let Some(code) = status.code() {
        return format!("exit status {code}");
    }
    match status.signal() {
        Some(sig) => format!("signal {sig} ({})", signal_name(sig)),
        None => "unknown".to_string(),
    }
}

fn signal_name(sig: i32) -> &'static str {
    Signal::try_from(sig)
        .map(|s| s.as_str())
        .unwrap_or("unknown")
}
