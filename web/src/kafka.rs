//! The web process's own connection to the cluster, for reads that must be live (messages,
//! groups, ACLs, quotas, configs). Connected on first use and again after a failure; a cluster
//! that cannot be reached is a 503 in the error envelope.

use std::sync::Arc;

use ballast_kafka::{Client, ClientConfig};
use tokio::sync::Mutex;

use crate::ApiError;

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

    /// A connected client (cheap to clone), or a 503 saying why there is none.
    pub async fn client(&self) -> Result<Client, ApiError> {
        let mut slot = self.client.lock().await;
        if let Some(c) = slot.as_ref() {
            return Ok(c.clone());
        }
        match Client::connect(self.config.clone()).await {
            Ok(c) => {
                *slot = Some(c.clone());
                Ok(c)
            }
            Err(e) => Err(ApiError::unavailable(
                "cluster unavailable",
                ballast_runtime::error_chain(&e),
            )),
        }
    }

    /// Drops the client after a connection-level failure so the next request reconnects.
    pub async fn reset(&self) {
        *self.client.lock().await = None;
    }
}
