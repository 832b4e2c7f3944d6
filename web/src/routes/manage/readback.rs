//! Reading a change back once the cluster shows it.
//!
//! On KRaft the controller answers an alter request once the change is committed to the
//! metadata log; the brokers apply it from there a moment later. A DescribeConfigs,
//! DescribeClientQuotas or DescribeAcls sent right after the alter can therefore still show the
//! old value, and an audit event recording that would be wrong (and its revert refused as
//! "target changed"). So a change is read back until the cluster shows it, for at most
//! `BALLAST_READBACK_TIMEOUT`, every `BALLAST_READBACK_POLL`. When it never shows, what the
//! cluster shows then is recorded with a note saying so ([`ReadBack::note`]), never silently.

use std::future::Future;
use std::time::Duration;

use crate::{ApiError, AppState};

/// The value read back after a change.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ReadBack<T> {
    pub value: T,
    /// Why `value` may not be the changed one: the cluster did not show the change in time, or
    /// could not be read (then `value` is what was asked for). None when it showed.
    pub note: Option<String>,
}

/// Reads with `read` until `shown` holds for what it read, or `BALLAST_READBACK_TIMEOUT` passes
/// (then the last value read, with a note). A failed read ends the wait: `asked` is the value,
/// with a note naming the failure.
pub(crate) async fn until_shown<T, F, Fut>(
    state: &AppState,
    asked: T,
    mut read: F,
    shown: impl Fn(&T) -> bool,
) -> ReadBack<T>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<T, ApiError>>,
{
    let timing = &state.config.timing;
    wait(
        timing.readback_timeout,
        timing.readback_poll,
        asked,
        &mut read,
        shown,
    )
    .await
}

async fn wait<T, F, Fut>(
    timeout: Duration,
    poll: Duration,
    asked: T,
    read: &mut F,
    shown: impl Fn(&T) -> bool,
) -> ReadBack<T>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<T, ApiError>>,
{
    let deadline = tokio::time::Instant::now() + timeout;
    loop {
        let value = match read().await {
            Ok(v) => v,
            Err(e) => {
                return ReadBack {
                    value: asked,
                    note: Some(format!(
                    "the change was made but could not be read back ({}: {}); recorded as asked",
                    e.error, e.details
                )),
                }
            }
        };
        if shown(&value) {
            return ReadBack { value, note: None };
        }
        let now = tokio::time::Instant::now();
        if now >= deadline {
            return ReadBack {
                value,
                note: Some(format!(
                    "the cluster did not show the change within {} of making it (BALLAST_READBACK_TIMEOUT); recorded as the cluster showed it then",
                    ballast_config::format_duration(timeout)
                )),
            };
        }
        tokio::time::sleep(poll.min(deadline - now)).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicU32, Ordering};

    #[tokio::test]
    async fn a_change_is_read_until_the_cluster_shows_it() {
        let reads = AtomicU32::new(0);
        let mut read = || {
            let n = reads.fetch_add(1, Ordering::SeqCst);
            async move { Ok::<_, ApiError>(if n < 3 { "old" } else { "new" }) }
        };
        let got = wait(
            Duration::from_secs(5),
            Duration::from_millis(1),
            "new",
            &mut read,
            |v| *v == "new",
        )
        .await;
        assert_eq!(
            got,
            ReadBack {
                value: "new",
                note: None
            }
        );
        assert_eq!(reads.load(Ordering::SeqCst), 4);
    }

    #[tokio::test]
    async fn a_change_never_shown_is_what_the_cluster_shows_with_a_note() {
        let mut read = || async { Ok::<_, ApiError>("old") };
        let got = wait(
            Duration::from_millis(30),
            Duration::from_millis(5),
            "new",
            &mut read,
            |v| *v == "new",
        )
        .await;
        assert_eq!(got.value, "old");
        let note = got.note.unwrap_or_default();
        assert!(
            note.contains("did not show the change within 30ms"),
            "{note}"
        );
    }

    #[tokio::test]
    async fn a_change_that_cannot_be_read_back_is_what_was_asked_with_a_note() {
        let mut read = || async {
            Err::<&str, _>(ApiError::new(
                axum::http::StatusCode::SERVICE_UNAVAILABLE,
                "cluster unreachable",
                "no broker answered",
            ))
        };
        let got = wait(
            Duration::from_millis(30),
            Duration::from_millis(5),
            "new",
            &mut read,
            |v| *v == "new",
        )
        .await;
        assert_eq!(got.value, "new");
        assert!(got
            .note
            .unwrap_or_default()
            .contains("could not be read back"));
    }
}
