//! Identical live reads in flight are shared: a request that asks the cluster what another
//! request is already asking, with no change of this process between their arrivals
//! ([`ballast_ops::Pipeline::changes`]), waits for that read instead of sending its own. A
//! hundred clients listing consumer groups cost the cluster one listing at a time, and no answer
//! is older than a change its client saw complete. When every waiting client has left, the read
//! is dropped with them (a later request with the same number resumes it).

use std::collections::HashMap;
use std::future::Future;
use std::sync::{Arc, Mutex};

use futures_util::future::{BoxFuture, FutureExt, Shared};

use crate::error::OpError;

type Flight<T> = Shared<BoxFuture<'static, Result<T, OpError>>>;
/// The reads in flight by key, each with the `changes` number it started at.
type Table<T> = Arc<Mutex<HashMap<String, (u64, Flight<T>)>>>;

/// The live reads of the process shared while in flight and served again while fresh (held by
/// the operation [`Context`](crate::Context)).
#[derive(Default)]
pub struct LiveFlights {
    /// Every consumer group with its lag: the list and the summary are made from it
    /// (`crate::group_reads`).
    pub groups: Recent<crate::group_reads::read::GroupsRead>,
}

/// The reads in flight of one kind, by their parameters.
pub struct Flights<T: Clone> {
    inner: Table<T>,
}

impl<T: Clone + Send + Sync + 'static> Default for Flights<T> {
    fn default() -> Self {
        Flights {
            inner: Arc::new(Mutex::new(HashMap::new())),
        }
    }
}

impl<T: Clone + Send + Sync + 'static> Flights<T> {
    /// The answer of the read named `key`: joined when one in flight started with the same
    /// `changes` number, else `read` is started (and shared).
    pub async fn run<F>(&self, key: String, changes: u64, read: F) -> Result<T, OpError>
    where
        F: Future<Output = Result<T, OpError>> + Send + 'static,
    {
        self.start(key, changes, read).await
    }

    /// The read named `key` (joined or started as [`Flights::run`] does), to be awaited; it
    /// leaves the table once it completes.
    pub fn start<F>(
        &self,
        key: String,
        changes: u64,
        read: F,
    ) -> impl Future<Output = Result<T, OpError>> + Send + 'static
    where
        F: Future<Output = Result<T, OpError>> + Send + 'static,
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
        let table = self.inner.clone();
        async move {
            let out = flight.clone().await;
            let mut inner = table.lock().unwrap_or_else(|e| e.into_inner());
            if inner.get(&key).is_some_and(|(_, f)| f.ptr_eq(&flight)) {
                inner.remove(&key);
            }
            out
        }
    }
}

/// Runs `read` to its end on a thread of the blocking pool, its I/O still driven by the runtime.
/// A large live read (every consumer group's offsets and their partitions' log ends: hundreds
/// of thousands of rows decoded, filed and joined at 60,000 partitions) does tens of
/// milliseconds of CPU work between two awaits; on a runtime thread each such stretch holds up
/// every request and probe queued behind it, on a thread of its own the kernel shares the CPUs
/// out. Dropping the returned future ends the read at its next await, as dropping `read` would.
pub async fn off_the_runtime<F, T>(read: F) -> Result<T, OpError>
where
    F: Future<Output = Result<T, OpError>> + Send + 'static,
    T: Send + 'static,
{
    let handle = tokio::runtime::Handle::current();
    let (_running, dropped) = tokio::sync::oneshot::channel::<()>();
    let task = tokio::task::spawn_blocking(move || {
        handle.block_on(async move {
            tokio::select! {
                out = read => Some(out),
                // The caller left (`_running` dropped with its future).
                _ = dropped => None,
            }
        })
    });
    match task.await {
        Ok(Some(out)) => out,
        Ok(None) => Err(OpError::internal("read ended", "its caller left")),
        Err(e) => Err(OpError::internal("read failed", e.to_string())),
    }
}

/// The last completed read of one kind, served again while it is fresh: it started at most
/// `max_age` ago and no change went through this process's pipeline since it started. Once it is
/// older than half of `max_age` the next request starts a new read (a renewal) in a task of its
/// own and is still answered from the last one; while that renewal runs, every request is
/// answered from the last read at once, even past `max_age` (a read of the cluster can take
/// longer than half of it), so under steady load no client waits for the cluster and an answer
/// is at most `max_age` plus one read older than the cluster. A request that finds no fresh read
/// and no renewal running (the first one, one after a quiet spell longer than `max_age`, one
/// after a change through the pipeline) joins the read in flight or starts one and waits for it.
pub struct Recent<T> {
    flights: Flights<Arc<T>>,
    state: Arc<Mutex<RecentState<T>>>,
}

struct RecentState<T> {
    last: Option<Kept<T>>,
    /// The renewal running: when it started, and the `changes` number it started at.
    renewing: Option<(i64, u64)>,
}

struct Kept<T> {
    /// When the read started (a request's arrival: the read starts no earlier).
    started_ms: i64,
    /// [`ballast_ops::Pipeline::changes`] when it started.
    changes: u64,
    value: Arc<T>,
}

impl<T: Send + Sync + 'static> Default for Recent<T> {
    fn default() -> Self {
        Recent {
            flights: Flights::default(),
            state: Arc::new(Mutex::new(RecentState {
                last: None,
                renewing: None,
            })),
        }
    }
}

impl<T: Send + Sync + 'static> Recent<T> {
    /// The answer of a read made at most `max_age_ms` before `now_ms` with the same `changes`
    /// number (or older while its renewal runs), else the answer of `read` (joined when one is
    /// in flight). `max_age_ms` 0 serves no earlier read.
    pub async fn get<F>(
        &self,
        now_ms: i64,
        changes: u64,
        max_age_ms: i64,
        read: F,
    ) -> Result<Arc<T>, OpError>
    where
        F: Future<Output = Result<T, OpError>> + Send + 'static,
    {
        let state = self.state.clone();
        let store = async move {
            let value = Arc::new(read.await?);
            let mut state = state.lock().unwrap_or_else(|e| e.into_inner());
            if state.last.as_ref().is_none_or(|k| k.started_ms <= now_ms) {
                state.last = Some(Kept {
                    started_ms: now_ms,
                    changes,
                    value: value.clone(),
                });
            }
            Ok(value)
        };
        let (kept, renew) = {
            let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
            let renewing = state.renewing.filter(|(_, n)| *n == changes).is_some();
            let kept = state
                .last
                .as_ref()
                .filter(|k| max_age_ms > 0 && k.changes == changes)
                .filter(|k| renewing || now_ms - k.started_ms <= max_age_ms)
                .map(|k| (k.value.clone(), now_ms - k.started_ms));
            let renew = kept
                .as_ref()
                .is_some_and(|(_, age)| !renewing && age * 2 > max_age_ms);
            if renew {
                state.renewing = Some((now_ms, changes));
            }
            (kept, renew)
        };
        match kept {
            Some((value, _)) => {
                if renew {
                    // Renewed ahead of its expiry, by a task of its own: no client waits.
                    let flight = self.flights.start(String::new(), changes, store);
                    let state = self.state.clone();
                    tokio::spawn(async move {
                        let _ = flight.await;
                        let mut state = state.lock().unwrap_or_else(|e| e.into_inner());
                        if state.renewing == Some((now_ms, changes)) {
                            state.renewing = None;
                        }
                    });
                }
                Ok(value)
            }
            None => self.flights.run(String::new(), changes, store).await,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    #[tokio::test]
    async fn identical_reads_in_flight_share_one_and_a_change_between_them_starts_another() {
        let flights: Arc<Flights<usize>> = Arc::default();
        let started = Arc::new(AtomicUsize::new(0));
        let gate = Arc::new(tokio::sync::Semaphore::new(0));
        let read = |started: Arc<AtomicUsize>, gate: Arc<tokio::sync::Semaphore>| async move {
            let n = started.fetch_add(1, Ordering::SeqCst) + 1;
            let _ = gate.acquire().await;
            Ok::<usize, OpError>(n)
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

    fn counting(reads: &Arc<AtomicUsize>) -> impl Future<Output = Result<usize, OpError>> {
        let reads = reads.clone();
        async move { Ok(reads.fetch_add(1, Ordering::SeqCst) + 1) }
    }

    /// A read run off the runtime never holds a runtime thread: with one runtime thread, a read
    /// that blocks until a task of the runtime has run still finishes (run on that thread, it
    /// would wait for itself).
    #[tokio::test(flavor = "multi_thread", worker_threads = 1)]
    async fn a_read_off_the_runtime_leaves_the_runtime_threads_free_while_it_works() {
        let (ran, seen) = std::sync::mpsc::channel::<()>();
        let read = async move {
            // CPU work between two awaits, as a large read's decoding is.
            seen.recv_timeout(std::time::Duration::from_secs(10))
                .map_err(|_| OpError::internal("blocked", "the runtime's task never ran"))?;
            tokio::task::yield_now().await;
            Ok::<_, OpError>(7)
        };
        let reading = tokio::spawn(off_the_runtime(read));
        tokio::spawn(async move { ran.send(()) });
        assert_eq!(reading.await.unwrap().unwrap(), 7);
    }

    /// A caller that leaves ends the read: its future is dropped, as an awaited read's would be.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_read_off_the_runtime_ends_when_its_caller_leaves() {
        struct Flag(Arc<std::sync::atomic::AtomicBool>);
        impl Drop for Flag {
            fn drop(&mut self) {
                self.0.store(true, Ordering::SeqCst);
            }
        }
        let ended = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let flag = Flag(ended.clone());
        let (started, running) = tokio::sync::oneshot::channel::<()>();
        let read = async move {
            let _flag = flag;
            let _ = started.send(());
            // Long enough to tell; a read that ignored its caller would end here, after the check.
            tokio::time::sleep(std::time::Duration::from_secs(20)).await;
            Ok::<_, OpError>(())
        };
        let caller = tokio::spawn(off_the_runtime(read));
        running.await.unwrap();
        caller.abort();
        for _ in 0..500 {
            if ended.load(Ordering::SeqCst) {
                return;
            }
            tokio::time::sleep(std::time::Duration::from_millis(10)).await;
        }
        panic!("the read went on after its caller left");
    }

    #[tokio::test]
    async fn a_read_is_served_again_while_it_is_fresh_and_no_change_went_through() {
        let recent: Recent<usize> = Recent::default();
        let reads = Arc::new(AtomicUsize::new(0));
        let first = recent.get(0, 3, 2000, counting(&reads)).await.unwrap();
        let again = recent.get(900, 3, 2000, counting(&reads)).await.unwrap();
        assert_eq!((*first, *again), (1, 1));
        assert_eq!(
            reads.load(Ordering::SeqCst),
            1,
            "the second answer read nothing"
        );
    }

    #[tokio::test]
    async fn a_change_through_the_pipeline_makes_the_next_answer_a_read_of_its_own() {
        let recent: Recent<usize> = Recent::default();
        let reads = Arc::new(AtomicUsize::new(0));
        recent.get(0, 3, 2000, counting(&reads)).await.unwrap();
        let after_change = recent.get(10, 4, 2000, counting(&reads)).await.unwrap();
        assert_eq!(*after_change, 2);
        // And that read is the one served after it.
        assert_eq!(*recent.get(20, 4, 2000, counting(&reads)).await.unwrap(), 2);
    }

    #[tokio::test]
    async fn an_answer_older_than_its_max_age_is_never_served_and_a_max_age_of_0_serves_none() {
        let recent: Recent<usize> = Recent::default();
        let reads = Arc::new(AtomicUsize::new(0));
        recent.get(0, 3, 2000, counting(&reads)).await.unwrap();
        assert_eq!(
            *recent.get(2001, 3, 2000, counting(&reads)).await.unwrap(),
            2
        );
        assert_eq!(*recent.get(2001, 3, 0, counting(&reads)).await.unwrap(), 3);
    }

    #[tokio::test]
    async fn a_read_past_half_its_max_age_is_renewed_by_a_task_while_the_last_one_answers() {
        let recent: Recent<usize> = Recent::default();
        let reads = Arc::new(AtomicUsize::new(0));
        recent.get(0, 3, 2000, counting(&reads)).await.unwrap();
        let gate = Arc::new(tokio::sync::Semaphore::new(0));
        let (done_tx, done_rx) = tokio::sync::oneshot::channel();
        let renewal = {
            let (reads, gate) = (reads.clone(), gate.clone());
            async move {
                let _ = gate.acquire().await;
                let n = reads.fetch_add(1, Ordering::SeqCst) + 1;
                let _ = done_tx.send(());
                Ok(n)
            }
        };
        // Past half of its age: answered from the last read at once, the renewal runs apart.
        let answered = recent.get(1200, 3, 2000, renewal).await.unwrap();
        assert_eq!(*answered, 1);
        gate.add_permits(1);
        done_rx.await.unwrap();
        // The renewal stores its answer in the same step as it completes (one thread: the
        // test's runtime), and it answers from then on.
        let kept = recent.get(1300, 3, 2000, counting(&reads)).await.unwrap();
        assert_eq!(*kept, 2, "the renewed read answers from then on");
        assert_eq!(reads.load(Ordering::SeqCst), 2);
    }

    /// A read whose answer is `n` once `gate` lets it through; `done` fires when it has.
    fn gated(
        n: usize,
        gate: Arc<tokio::sync::Semaphore>,
    ) -> (
        impl Future<Output = Result<usize, OpError>>,
        tokio::sync::oneshot::Receiver<()>,
    ) {
        let (done_tx, done_rx) = tokio::sync::oneshot::channel();
        let read = async move {
            let _ = gate.acquire().await;
            let _ = done_tx.send(());
            Ok(n)
        };
        (read, done_rx)
    }

    #[tokio::test]
    async fn a_request_during_a_renewal_gets_the_last_read_at_once_even_past_its_max_age() {
        let recent: Recent<usize> = Recent::default();
        let reads = Arc::new(AtomicUsize::new(0));
        recent.get(0, 3, 2000, counting(&reads)).await.unwrap();
        let gate = Arc::new(tokio::sync::Semaphore::new(0));
        let (renewal, done) = gated(2, gate.clone());
        // Past half of its age: the renewal starts (and takes longer than the rest of the age).
        assert_eq!(*recent.get(1200, 3, 2000, renewal).await.unwrap(), 1);
        // Past the age while the renewal runs: still the last read, at once, and no new read.
        for now in [2100, 2500, 3100] {
            let answered = recent.get(now, 3, 2000, counting(&reads)).await.unwrap();
            assert_eq!(*answered, 1, "answered from the last read at {now}");
        }
        assert_eq!(
            reads.load(Ordering::SeqCst),
            1,
            "no request read the cluster"
        );
        gate.add_permits(1);
        done.await.unwrap();
        tokio::task::yield_now().await;
        // The renewal (started at 1200) answers from then on, while it is fresh.
        assert_eq!(
            *recent.get(3150, 3, 2000, counting(&reads)).await.unwrap(),
            2
        );
        assert_eq!(reads.load(Ordering::SeqCst), 1);
    }

    #[tokio::test]
    async fn a_change_through_the_pipeline_is_never_answered_from_an_earlier_read_during_a_renewal()
    {
        let recent: Recent<usize> = Recent::default();
        let reads = Arc::new(AtomicUsize::new(0));
        recent.get(0, 3, 2000, counting(&reads)).await.unwrap();
        let gate = Arc::new(tokio::sync::Semaphore::new(0));
        let (renewal, _done) = gated(99, gate.clone());
        recent.get(1200, 3, 2000, renewal).await.unwrap();
        // A change completed (changes 3 → 4) while the renewal that started before it runs: the
        // caller who saw it gets a read of its own, neither the last one nor the renewal's.
        let after_change = recent.get(1300, 4, 2000, counting(&reads)).await.unwrap();
        assert_eq!(*after_change, 2);
        gate.add_permits(1);
    }

    #[tokio::test]
    async fn a_read_past_its_max_age_is_not_served_once_its_renewal_failed() {
        let recent: Recent<usize> = Recent::default();
        let reads = Arc::new(AtomicUsize::new(0));
        recent.get(0, 3, 2000, counting(&reads)).await.unwrap();
        let (failed_tx, failed_rx) = tokio::sync::oneshot::channel();
        let failing = async move {
            let _ = failed_tx.send(());
            Err::<usize, OpError>(OpError::unavailable("cluster error", "down"))
        };
        assert_eq!(*recent.get(1200, 3, 2000, failing).await.unwrap(), 1);
        failed_rx.await.unwrap();
        tokio::task::yield_now().await;
        // Past its age with no renewal running: a read of its own.
        assert_eq!(
            *recent.get(2100, 3, 2000, counting(&reads)).await.unwrap(),
            2
        );
        assert_eq!(reads.load(Ordering::SeqCst), 2);
    }
}
