//! What every operation runs over: the store, the configuration, the clock, the cluster and the
//! pipeline. The web process makes one at start; tests make their own.

use std::sync::Arc;

use ballast_config::Config;
use ballast_kafka::{Client, ClientConfig};
use ballast_runtime::Clock;
use ballast_schema::Store;
use tokio::sync::Mutex;

use crate::error::OpError;
use crate::pipeline::Pipeline;

/// The context of an operation (cheap to clone).
#[derive(Clone)]
pub struct Context {
    pub store: Store,
    pub config: Arc<Config>,
    pub clock: Arc<dyn Clock>,
    pub kafka: KafkaHandle,
    pub pipeline: Pipeline,
}

/// The process's own connection to the cluster, for reads that must be live and for changes.
/// Connected on first use and again after a connection-level failure.
#[derive(Clone)]
pub struct KafkaHandle {
    config: ClientConfig,
    client: Arc<Mutex<Option<Client>>>,
}

impl KafkaHandle {
    pub fn new(config: ClientConfig) -> Self {
        Self {
            config,
            client: Arc::new(Mutex::new(None)),
        }
    }

    /// A connected client (cheap to clone), or `Unavailable` saying why there is none.
    pub async fn client(&self) -> Result<Client, OpError> {
        let mut slot = self.client.lock().await;
        if let Some(c) = slot.as_ref() {
            return Ok(c.clone());
        }
        match Client::connect(self.config.clone()).await {
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
