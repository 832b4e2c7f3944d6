//! What every ballast process shares: logging, the clock, shutdown and the worker harness.
//!
//! A worker is started by the supervisor as `ballast <worker>` in its own process group. The
//! harness here gives it a [`WorkerContext`] (configuration, store, clock, shutdown signal), writes
//! its heartbeat, and ends it when it is told to stop (SIGTERM, SIGINT) or when its supervisor
//! dies (`PR_SET_PDEATHSIG` plus a parent-pid check, so no worker outlives its supervisor).

mod clock;
mod kafka;
mod logging;
pub mod realized;
pub mod topology;
mod worker;

pub use clock::{format_rfc3339_ms, millis, Clock, SystemClock};
pub use kafka::client_config;
pub use logging::init_logging;
pub use worker::{
    database_path, error_chain, run_worker, Shutdown, WorkerContext, WorkerError,
    SUPERVISOR_PID_ENV,
};
