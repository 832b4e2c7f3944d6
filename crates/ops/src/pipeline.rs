//! The one pipeline every change runs through, whatever door it came by (REST, MCP, chat, the
//! dashboard): after the door has validated the input and checked scope and licence,
//!
//! 1. **serialise** on the resources it touches (the same topic, group, quota entity, broker,
//!    ACL set or the reassignment slot): one change at a time per resource, waiting at most
//!    [`Pipeline::wait`], else [`Unavailable`] (503 with `Retry-After`);
//! 2. write the **audit intent** durably (status [`AUDIT_INTENT`]): when it cannot be written,
//!    nothing is sent and the caller gets [`Unavailable`];
//! 3. run the **change**, which reads the state before, sends the change and reads it back;
//! 4. **complete** the intent with the true before and after (status 200), or with status 500
//!    and what is known when the change failed after it was sent; an intent whose change was
//!    refused before anything was sent is withdrawn.
//!
//! Because the before is read inside the serialised section, the audit rows of one resource form
//! an exact chain: each before is the previous after. An intent left in progress (the request was
//! dropped mid-change, or completing it failed) is completed as a failure by a guard, and any left
//! by a process that died by [`Pipeline::fail_stale_intents`] when the web process starts.

use std::collections::{BTreeSet, HashMap};
use std::future::Future;
use std::sync::{Arc, Mutex, PoisonError, Weak};
use std::time::Duration;

use ballast_schema::{NewAuditEvent, Store, StoreError};
use serde_json::Value;
use tracing::{error, warn};

/// What a change serialises on. Changes of different resources run side by side.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Resource {
    Topic(String),
    Group(String),
    /// A quota entity, by its canonical path (`user=alice/client-id=app`).
    QuotaEntity(String),
    Broker(i32),
    /// Every ACL binding: creations and filter deletions overlap in ways a key cannot show.
    Acls,
    /// The single reassignment slot (proposal apply, bulk and redistribution, maintenance,
    /// revert).
    ReassignmentSlot,
    /// A stored proposal of ballast's own.
    Proposal(String),
    /// Ballast's own settings (the throttle rate, healing switches, tokens).
    Setting(String),
}

impl std::fmt::Display for Resource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Resource::Topic(t) => write!(f, "topic {t}"),
            Resource::Group(g) => write!(f, "group {g}"),
            Resource::QuotaEntity(e) => write!(f, "quota entity {e}"),
            Resource::Broker(b) => write!(f, "broker {b}"),
            Resource::Acls => write!(f, "the ACLs"),
            Resource::ReassignmentSlot => write!(f, "the reassignment slot"),
            Resource::Proposal(p) => write!(f, "proposal {p}"),
            Resource::Setting(s) => write!(f, "setting {s}"),
        }
    }
}

/// The change could not start: the resource stayed busy, or its audit intent could not be
/// written. Nothing was sent. Doors answer 503 with `Retry-After: retry_after_s`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unavailable {
    pub error: String,
    pub details: String,
    pub retry_after_s: u64,
}

/// What a change reports when it was made: its value for the caller, and the state before and
/// after as the audit event records them.
#[derive(Debug)]
pub struct Done<T> {
    pub value: T,
    pub before: Option<Value>,
    pub after: Option<Value>,
    /// A note for the audit event (e.g. the cluster did not show the change in time).
    pub details: Option<String>,
    /// The event's status: 200, or 207 when only part of the change was made.
    pub status: u16,
}

impl<T> Done<T> {
    /// A change made in full (status 200) with no note.
    pub fn new(value: T, before: Option<Value>, after: Option<Value>) -> Done<T> {
        Done {
            value,
            before,
            after,
            details: None,
            status: 200,
        }
    }

    /// The same with a note for the audit event.
    pub fn noted(self, details: Option<String>) -> Done<T> {
        Done { details, ..self }
    }
}

/// How a change that was not made ended.
#[derive(Debug)]
pub enum NotDone<E> {
    /// Refused before anything was sent (bad input the cluster named, an unknown topic): the
    /// intent is withdrawn.
    Refused(E),
    /// Failed after the change was sent, or with an outcome unknown: recorded with status 500,
    /// the before when it was read, and why.
    Failed {
        error: E,
        before: Option<Value>,
        details: String,
    },
}

/// The audit event of a change, for the answer: its id, and why completing it failed (the change
/// was made; the event still shows it in progress or was completed later as a failure).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Recorded {
    pub event_id: i64,
    pub error: Option<String>,
}

/// What became of a change's audit event, as its answer reports it.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Audited {
    /// The event's id; null when the event was lost.
    pub audit_event_id: Option<i64>,
    /// Why the event was lost (only then).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub audit_error: Option<String>,
}

impl From<Recorded> for Audited {
    fn from(r: Recorded) -> Self {
        Audited {
            audit_event_id: Some(r.event_id),
            audit_error: r.error,
        }
    }
}

/// Pauses between attempts to complete an intent: four attempts in all, each waiting up to the
/// store's busy timeout for the write lock.
const COMPLETE_RETRY: [Duration; 3] = [
    Duration::from_millis(50),
    Duration::from_millis(200),
    Duration::from_millis(1000),
];

/// The serialisation and audit half of every change. Cheap to clone; one per process.
#[derive(Clone)]
pub struct Pipeline {
    store: Store,
    locks: Arc<Mutex<HashMap<Resource, Weak<tokio::sync::Mutex<()>>>>>,
    /// How long a change waits for its resources before it is refused with 503.
    pub wait: Duration,
    /// `Retry-After` of a refusal, in seconds.
    pub retry_after_s: u64,
    /// Counts changes starting and ending in this process ([`Pipeline::changes`]).
    changes: Arc<std::sync::atomic::AtomicU64>,
}

impl Pipeline {
    pub fn new(store: Store, wait: Duration) -> Pipeline {
        Pipeline {
            store,
            locks: Arc::default(),
            wait,
            retry_after_s: wait.as_secs().clamp(1, 30),
            changes: Arc::default(),
        }
    }

    /// A number that grows when a change starts and when it ends: two reads that saw the same
    /// number have no change of this process between them (a read in flight may be shared by a
    /// request that arrives later only then).
    pub fn changes(&self) -> u64 {
        self.changes.load(std::sync::atomic::Ordering::SeqCst)
    }

    fn count_change(&self) {
        self.changes
            .fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    }

    /// Completes as failures the intents a process that ended left in progress (written before
    /// `before_ms`): their change may or may not have reached the cluster.
    pub async fn fail_stale_intents(&self, before_ms: i64) -> Result<u64, StoreError> {
        let store = self.store.clone();
        blocking(move || {
            store.fail_stale_audit_intents(
                before_ms,
                "the process ended before the change was read back: it may or may not have reached the cluster",
            )
        })
        .await
    }

    /// Runs `change` as the pipeline's steps 1–4 for `event` (action, method, user, target and
    /// summary; its status, before, after and details are the pipeline's) on `resources`.
    pub async fn run<T, E, F, Fut>(
        &self,
        resources: impl IntoIterator<Item = Resource>,
        event: NewAuditEvent,
        change: F,
    ) -> Result<(T, Recorded), E>
    where
        E: From<Unavailable>,
        F: FnOnce() -> Fut,
        Fut: Future<Output = Result<Done<T>, NotDone<E>>>,
    {
        let resources: BTreeSet<Resource> = resources.into_iter().collect();
        let _held = self.serialise(&resources).await?;
        let mut intent = Intent {
            store: self.store.clone(),
            id: Some(self.write_intent(&event).await?),
        };
        self.count_change();
        let outcome = change().await;
        self.count_change();
        match outcome {
            Ok(done) => {
                let recorded = intent
                    .complete(done.status, done.before, done.after, done.details)
                    .await;
                Ok((done.value, recorded))
            }
            Err(NotDone::Refused(e)) => {
                intent.withdraw().await;
                Err(e)
            }
            Err(NotDone::Failed {
                error,
                before,
                details,
            }) => {
                intent.complete(500, before, None, Some(details)).await;
                Err(error)
            }
        }
    }

    /// Takes every resource's lock in their total order (so two changes never wait for each
    /// other), giving up after [`Pipeline::wait`].
    async fn serialise(
        &self,
        resources: &BTreeSet<Resource>,
    ) -> Result<Vec<tokio::sync::OwnedMutexGuard<()>>, Unavailable> {
        let mut held = Vec::with_capacity(resources.len());
        let deadline = tokio::time::Instant::now() + self.wait;
        for r in resources {
            let lock = self.lock_of(r);
            match tokio::time::timeout_at(deadline, lock.lock_owned()).await {
                Ok(guard) => held.push(guard),
                Err(_) => {
                    return Err(Unavailable {
                        error: "busy".into(),
                        details: format!(
                            "another change of {r} is still running after {} s; nothing was changed: try again",
                            self.wait.as_secs_f64()
                        ),
                        retry_after_s: self.retry_after_s,
                    })
                }
            }
        }
        Ok(held)
    }

    fn lock_of(&self, r: &Resource) -> Arc<tokio::sync::Mutex<()>> {
        let mut map = self.locks.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(lock) = map.get(r).and_then(Weak::upgrade) {
            return lock;
        }
        // Forget the locks nobody holds any more, so the map stays as small as the changes
        // running now.
        map.retain(|_, w| w.strong_count() > 0);
        let lock = Arc::new(tokio::sync::Mutex::new(()));
        map.insert(r.clone(), Arc::downgrade(&lock));
        lock
    }

    async fn write_intent(&self, event: &NewAuditEvent) -> Result<i64, Unavailable> {
        let store = self.store.clone();
        let event = event.clone();
        let action = event.action.clone();
        blocking(move || store.insert_audit_intent(&event))
            .await
            .map_err(|e| {
                let why = ballast_runtime::error_chain(&e);
                warn!(
                    action,
                    error = why,
                    "audit intent not written: the change is refused"
                );
                Unavailable {
                    error: "audit log unavailable".into(),
                    details: format!(
                        "the audit event could not be written, so nothing was changed: {why}"
                    ),
                    retry_after_s: self.retry_after_s,
                }
            })
    }
}

/// An intent written and not yet completed. Dropped before completion (the request ended
/// mid-change), it is completed as a failure in the background.
struct Intent {
    store: Store,
    id: Option<i64>,
}

impl Intent {
    async fn complete(
        &mut self,
        status: u16,
        before: Option<Value>,
        after: Option<Value>,
        details: Option<String>,
    ) -> Recorded {
        let Some(id) = self.id.take() else {
            return Recorded {
                event_id: 0,
                error: Some("the audit event was already completed".into()),
            };
        };
        let store = self.store.clone();
        let done = blocking(move || {
            let mut delays = COMPLETE_RETRY.iter();
            loop {
                match store.complete_audit(
                    id,
                    status,
                    before.as_ref(),
                    after.as_ref(),
                    details.as_deref(),
                ) {
                    Ok(()) => return Ok(()),
                    Err(e) if e.is_busy() || matches!(e, StoreError::Pool(_)) => {
                        match delays.next() {
                            Some(d) => std::thread::sleep(*d),
                            None => return Err(e),
                        }
                    }
                    Err(e) => return Err(e),
                }
            }
        })
        .await;
        match done {
            Ok(()) => Recorded {
                event_id: id,
                error: None,
            },
            Err(e) => {
                let why = ballast_runtime::error_chain(&e);
                error!(event = id, error = why, "audit event not completed");
                Recorded {
                    event_id: id,
                    error: Some(format!(
                        "the change was made, but audit event {id} could not be completed and still shows it in progress: {why}"
                    )),
                }
            }
        }
    }

    async fn withdraw(&mut self) {
        if let Some(id) = self.id.take() {
            let store = self.store.clone();
            if let Err(e) = blocking(move || store.withdraw_audit(id)).await {
                // Left in progress, it is completed as a failure at the next start: an honest
                // record of an attempt whose outcome this process could not write.
                warn!(event = id, error = %e, "refused change's audit intent not withdrawn");
            }
        }
    }
}

impl Drop for Intent {
    fn drop(&mut self) {
        let Some(id) = self.id.take() else { return };
        let store = self.store.clone();
        let details = "the request ended before the change was read back: it may or may not have reached the cluster";
        let run = move || {
            if let Err(e) = store.complete_audit(id, 500, None, None, Some(details)) {
                warn!(event = id, error = %e, "abandoned audit intent not completed");
            }
        };
        match tokio::runtime::Handle::try_current() {
            Ok(handle) => {
                handle.spawn_blocking(run);
            }
            Err(_) => run(),
        }
    }
}

/// Runs store work on the blocking pool.
async fn blocking<T: Send + 'static>(
    f: impl FnOnce() -> Result<T, StoreError> + Send + 'static,
) -> Result<T, StoreError> {
    match tokio::task::spawn_blocking(f).await {
        Ok(r) => r,
        Err(join) => Err(StoreError::Invalid(format!("store task failed: {join}"))),
    }
}
