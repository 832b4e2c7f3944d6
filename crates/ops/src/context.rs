//! What every operation runs over: the store, the configuration, the clock, the cluster, the
//! pipeline, the live reads shared in flight and the licence. The web process makes one at start; tests make
//! their own.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use ballast_config::Config;
use ballast_kafka::{Client, ClientConfig};
use ballast_runtime::Clock;
use ballast_schema::{Store, StoreError};
use tokio::sync::Mutex;

use crate::error::OpError;
use crate::flight::LiveFlights;
use crate::pipeline::Pipeline;

/// The context of an operation (cheap to clone).
#[derive(Clone)]
pub struct Context {
    pub store: Store,
    pub config: Arc<Config>,
    pub clock: Arc<dyn Clock>,
    pub kafka: KafkaHandle,
    pub pipeline: Pipeline,
    /// Live reads in flight, shared by identical requests, and the last ones while fresh
    /// (`flight.rs`): one per process, like the pipeline.
    pub flights: Arc<LiveFlights>,
    /// The licence verdict licensed operations are gated by (`licence.rs`): the web process
    /// gives the source its REST licence layer asks too.
    pub licence: Arc<dyn Licence>,
}

/// Seconds a caller is told to wait (`Retry-After`) when the database is busy.
pub const DB_RETRY_AFTER_S: u64 = 2;

impl Context {
    /// Runs store work on the blocking pool. A busy database (another process held the write
    /// lock past the busy timeout) or no free pooled connection is `Unavailable` with a retry
    /// time; any other store failure is `Internal`.
    pub async fn db<T, F>(&self, f: F) -> Result<T, OpError>
    where
        T: Send + 'static,
        F: FnOnce(&Store) -> Result<T, StoreError> + Send + 'static,
    {
        let store = self.store.clone();
        match tokio::task::spawn_blocking(move || f(&store)).await {
            Ok(Ok(value)) => Ok(value),
            Ok(Err(err)) if err.is_busy() || matches!(err, StoreError::Pool(_)) => Err(OpError {
                retry_after_s: Some(DB_RETRY_AFTER_S),
                ..OpError::unavailable(
                    "database busy",
                    format!(
                        "the database stayed busy; nothing was changed: {}",
                        ballast_runtime::error_chain(&err)
                    ),
                )
            }),
            Ok(Err(err)) => Err(OpError::internal(
                "database error",
                ballast_runtime::error_chain(&err),
            )),
            Err(join) => Err(OpError::internal("database task failed", join.to_string())),
        }
    }
}

/// The process's own connection to the cluster, for reads that must be live and for changes.
/// Connected on first use and again after a connection-level failure.
/// Cheap to clone: the web process clones its state (and so this) for every middleware layer
/// of every request, and a configuration with one string per bootstrap server cloned that
/// often was a measurable share of a request (`docs/big-clusters.md`).
#[derive(Clone)]
pub struct KafkaHandle {
    config: Arc<ClientConfig>,
    client: Arc<Mutex<Option<Client>>>,
}

impl KafkaHandle {
    pub fn new(config: ClientConfig) -> Self {
        Self {
            config: Arc::new(config),
            client: Arc::new(Mutex::new(None)),
        }
    }

    /// A connected client (cheap to clone), or `Unavailable` saying why there is none.
    pub async fn client(&self) -> Result<Client, OpError> {
        let mut slot = self.client.lock().await;
        if let Some(c) = slot.as_ref() {
            return Ok(c.clone());
        }
        match Client::connect(ClientConfig::clone(&self.config)).await {
            Ok(c) => {
                *slot = Some(c.clone());
                Ok(c)
            }
            Err(e) => Err(OpError::unavailable(
                "cluster unavailable",
                ballast_runtime::error_chain(&e),
            )),
        }
    }

    /// Drops the client after a connection-level failure so the next call reconnects.
    pub async fn reset(&self) {
        *self.client.lock().await = None;
    }
}
// ------------------------------------------------------------------------------ the licence

/// Why management is refused now (monitoring mode): the code every door gives
/// (`LICENSE_INVALID`, `LICENSE_EXPIRED`) and the licence's own message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    pub code: &'static str,
    pub message: String,
}

/// Management allowed (`Ok`), or refused and why.
pub type Verdict = Result<(), Refusal>;

/// A future of a verdict; `Err` when the licence could not be read (a busy database).
pub type VerdictFuture<'a> = Pin<Box<dyn Future<Output = Result<Verdict, OpError>> + Send + 'a>>;

/// The source of the licence verdict an operation context carries.
pub trait Licence: Send + Sync {
    /// Whether a licensed operation may run now.
    fn verdict<'a>(&'a self, ctx: &'a Context) -> VerdictFuture<'a>;
}
