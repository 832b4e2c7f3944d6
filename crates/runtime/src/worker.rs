use std::future::Future;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use ballast_config::Config;
use ballast_schema::{Store, StoreError};
use tokio::sync::watch;
use tracing::{info, warn, Instrument};

use crate::clock::{Clock, SystemClock};

/// Set by the supervisor on every worker it starts: the pid the worker must outlive no more than.
pub const SUPERVISOR_PID_ENV: &str = "BALLAST_SUPERVISOR_PID";

/// How often a worker checks that its supervisor is still its parent.
const PARENT_CHECK_EVERY: Duration = Duration::from_millis(500);

#[derive(Debug, thiserror::Error)]
pub enum WorkerError {
    #[error("store")]
    Store(#[from] StoreError),
    #[error("{context}")]
    Io {
        context: String,
        #[source]
        source: std::io::Error,
    },
    #[error("supervisor {expected} is gone (parent is now {actual})")]
    ParentGone { expected: i32, actual: i32 },
    #[error("{0}")]
    Other(String),
}

/// A signal that the process should stop. Cheap to clone; every clone sees the same signal.
#[derive(Clone, Debug)]
pub struct Shutdown {
    rx: watch::Receiver<bool>,
}

impl Shutdown {
    pub fn is_requested(&self) -> bool {
        *self.rx.borrow()
    }

    /// Completes once shutdown has been requested.
    pub async fn requested(&self) {
        let mut rx = self.rx.clone();
        // An error means the sender is gone, which only happens when the process is ending.
        let _ = rx.wait_for(|stop| *stop).await;
    }
}

/// Everything a worker body needs. Time comes from `clock`, never from the system directly.
#[derive(Clone)]
pub struct WorkerContext {
    pub name: &'static str,
    pub config: Arc<Config>,
    pub store: Store,
    pub clock: Arc<dyn Clock>,
    pub shutdown: Shutdown,
    status: Arc<watch::Sender<serde_json::Value>>,
}

impl WorkerContext {
    pub fn now_ms(&self) -> i64 {
        self.clock.now_ms()
    }

    /// Replaces the detail written with the next heartbeat.
    pub fn set_status(&self, detail: serde_json::Value) {
        self.status.send_replace(detail);
    }

    /// Runs `tick` every `interval` until shutdown. A tick is one idempotent reconciling pass: a
    /// failed tick is logged and the next one tries again. Its value becomes the heartbeat detail.
    pub async fn tick_loop<F, Fut>(&self, interval: Duration, mut tick: F)
    where
        F: FnMut() -> Fut,
        Fut: Future<Output = Result<serde_json::Value, WorkerError>>,
    {
        let mut timer = tokio::time::interval(interval);
        timer.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            tokio::select! {
                _ = self.shutdown.requested() => return,
                _ = timer.tick() => {}
            }
            match tick().await {
                Ok(detail) => self.set_status(detail),
                Err(err) => warn!(error = %error_chain(&err), "tick failed"),
            }
        }
    }

    /// Runs blocking store work off the async threads.
    pub async fn blocking<T, F>(&self, f: F) -> Result<T, WorkerError>
    where
        T: Send + 'static,
        F: FnOnce(&Store) -> Result<T, StoreError> + Send + 'static,
    {
        let store = self.store.clone();
        match tokio::task::spawn_blocking(move || f(&store)).await {
            Ok(result) => result.map_err(WorkerError::from),
            Err(join) => Err(WorkerError::Other(format!("store task failed: {join}"))),
        }
    }
}

/// The whole error chain on one line: `outer: inner: root`.
pub fn error_chain(err: &dyn std::error::Error) -> String {
    let mut text = err.to_string();
    let mut source = err.source();
    while let Some(s) = source {
        text.push_str(": ");
        text.push_str(&s.to_string());
        source = s.source();
    }
    text
}

/// Where the database of a data directory lives.
pub fn database_path(config: &Config) -> PathBuf {
    config.data_dir.join("ballast.db")
}

/// Runs a worker process: guards against outliving the supervisor, opens the store, starts the
/// heartbeat, runs `body` until it returns or shutdown is requested.
pub fn run_worker<F, Fut>(name: &'static str, config: Config, body: F) -> Result<(), WorkerError>
where
    F: FnOnce(WorkerContext) -> Fut,
    Fut: Future<Output = Result<(), WorkerError>>,
{
    let supervisor = watch_parent_setup()?;
    let store = Store::open(&database_path(&config))?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .thread_name(format!("ballast-{name}"))
        .build()
        .map_err(|source| WorkerError::Io {
            context: "cannot start the async runtime".into(),
            source,
        })?;
    let span = tracing::info_span!("worker", process = name);
    runtime.block_on(
        async move {
            let (stop_tx, stop_rx) = watch::channel(false);
            let stop_tx = Arc::new(stop_tx);
            let (status_tx, status_rx) = watch::channel(serde_json::json!({}));
            let ctx = WorkerContext {
                name,
                config: Arc::new(config),
                store,
                clock: Arc::new(SystemClock),
                shutdown: Shutdown { rx: stop_rx },
                status: Arc::new(status_tx),
            };
            tokio::spawn(stop_on_signals(stop_tx.clone()));
            if let Some(expected) = supervisor {
                tokio::spawn(stop_when_orphaned(expected, stop_tx.clone()));
            }
            tokio::spawn(heartbeat_loop(ctx.clone(), status_rx));
            info!(pid = std::process::id(), "started");
            let result = body(ctx.clone()).await;
            stop_tx.send_replace(true);
            match &result {
                Ok(()) => info!("stopped"),
                Err(err) => warn!(error = %error_chain(err), "stopped on error"),
            }
            result
        }
        .instrument(span),
    )
}

/// Asks the kernel to SIGTERM this process when its parent dies, then checks the parent is still
/// the supervisor (it may have died before the request). Returns the supervisor pid to watch.
fn watch_parent_setup() -> Result<Option<i32>, WorkerError> {
    let Some(expected) = std::env::var(SUPERVISOR_PID_ENV)
        .ok()
        .and_then(|v| v.parse::<i32>().ok())
    else {
        return Ok(None);
    };
    #[cfg(target_os = "linux")]
    if let Err(err) = nix::sys::prctl::set_pdeathsig(nix::sys::signal::Signal::SIGTERM) {
        warn!(error = %err, "cannot ask for a parent-death signal; relying on the parent check");
    }
    let actual = nix::unistd::getppid().as_raw();
    if actual != expected {
        return Err(WorkerError::ParentGone { expected, actual });
    }
    Ok(Some(expected))
}

async fn stop_on_signals(stop: Arc<watch::Sender<bool>>) {
    use tokio::signal::unix::{signal, SignalKind};
    let (Ok(mut term), Ok(mut int)) = (
        signal(SignalKind::terminate()),
        signal(SignalKind::interrupt()),
    ) else {
        warn!("cannot listen for SIGTERM and SIGINT");
        return;
    };
    tokio::select! {
        _ = term.recv() => info!("SIGTERM received, stopping"),
        _ = int.recv() => info!("SIGINT received, stopping"),
    }
    stop.send_replace(true);
}

async fn stop_when_orphaned(expected: i32, stop: Arc<watch::Sender<bool>>) {
    loop {
        tokio::time::sleep(PARENT_CHECK_EVERY).await;
        let actual = nix::unistd::getppid().as_raw();
        if actual != expected {
            warn!(expected, actual, "supervisor is gone, stopping");
            stop.send_replace(true);
            return;
        }
    }
}

async fn heartbeat_loop(ctx: WorkerContext, status: watch::Receiver<serde_json::Value>) {
    let interval = ctx.config.timing.heartbeat_interval;
    let pid = std::process::id();
    let mut timer = tokio::time::interval(interval);
    timer.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tokio::select! {
            _ = ctx.shutdown.requested() => return,
            _ = timer.tick() => {}
        }
        let detail = status.borrow().clone();
        let now = ctx.now_ms();
        let name = ctx.name;
        let written = ctx
            .blocking(move |store| store.heartbeat(name, pid, now, &detail))
            .await;
        if let Err(err) = written {
            warn!(error = %error_chain(&err), "heartbeat not written");
        }
    }
}
