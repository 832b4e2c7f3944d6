//! Identical live reads in flight are shared: a request that asks the cluster what another
//! request is already asking, with no change of this process between their arrivals
//! ([`ballast_ops::Pipeline::changes`]), waits for that read instead of sending its own. A
//! hundred clients listing consumer groups cost the cluster one listing at a time, and no answer
//! is older than a change its client saw complete. When every waiting client has left, the read
//! is dropped with them (a later request with the same number resumes it).

use std::collections::HashMap;
use std::future::Future;
use std::sync::Mutex;

use futures_util::future::{BoxFuture, FutureExt, Shared};

use crate::ApiError;

type Flight<T> = Shared<BoxFuture<'static, Result<T, ApiError>>>;

/// The reads in flight of one kind, by their parameters.
pub struct Flights<T: Clone> {
    inner: Mutex<HashMap<String, (u64, Flight<T>)>>,
}

impl<T: Clone + Send + Sync + 'static> Default for Flights<T> {
    fn default() -> Self {
        Flights {
            inner: Mutex::new(HashMap::new()),
        }
    }
}

impl<T: Clone + Send + Sync + 'static> Flights<T> {
    /// The answer of the read named `key`: joined when one in flight started with the same
    /// `changes` number, else `read` is started (and shared).
    pub async fn run<F>(&self, key: String, changes: u64, read: F) -> Result<T, ApiError>
    where
        F: Future<Output = Result<T, ApiError>> + Send + 'static,
    {
        let flight = {
            let mut inner = self.inner.lock().unwrap_or_else(|e| e.into_inner());
            match inner.get(&key) {
                Some((n, f)) if *n == changes => f.clone(),
                _ => {
                    let f = read.boxed().shared();
                    inner.insert(key.clone(), (changes, f.clone()));
                    f
                }
            }
        };
        let out = flight.clone().await;
        let mut inner = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        if inner.get(&key).is_some_and(|(_, f)| f.ptr_eq(&flight)) {
            inner.remove(&key);
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;

    #[tokio::test]
    async fn identical_reads_in_flight_share_one_and_a_change_between_them_starts_another() {
        let flights: Arc<Flights<usize>> = Arc::default();
        let started = Arc::new(AtomicUsize::new(0));
        let gate = Arc::new(tokio::sync::Semaphore::new(0));
        let read = |started: Arc<AtomicUsize>, gate: Arc<tokio::sync::Semaphore>| async move {
            let n = started.fetch_add(1, Ordering::SeqCst) + 1;
            let _ = gate.acquire().await;
            Ok::<usize, ApiError>(n)
        };
        let spawn = |changes: u64| {
            let (flights, started, gate) = (flights.clone(), started.clone(), gate.clone());
            tokio::spawn(async move {
                flights
                    .run("k".into(), changes, read(started, gate))
                    .await
                    .unwrap()
            })
        };
        let a = spawn(7);
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
        let b = spawn(7);
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
        // A change went through: a new request does not join the read that started before it.
        let c = spawn(8);
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
        gate.add_permits(10);
        let (a, b, c) = (a.await.unwrap(), b.await.unwrap(), c.await.unwrap());
        assert_eq!(a, b, "the second request shared the first one's read");
        assert_ne!(a, c, "a read after a change is a read of its own");
        assert_eq!(started.load(Ordering::SeqCst), 2);
    }
}
