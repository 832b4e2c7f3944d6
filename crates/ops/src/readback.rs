//! Reading a change back once the cluster shows it.
//!
//! On KRaft the controller answers an alter request once the change is committed to the
//! metadata log; every broker applies it from there a moment later, each at its own pace. A
//! DescribeConfigs, DescribeClientQuotas or DescribeAcls sent right after the alter can therefore
//! still show the old value (on a 3-node Kafka 3.5.1, most describes sent to one broker did), and
//! an audit event recording that would be wrong (and its revert refused as "target changed"). So
//! a change is read back from every broker until each shows it, for at most
//! `BALLAST_READBACK_TIMEOUT`, every `BALLAST_READBACK_POLL`: then any later read, from any
//! broker, sees it too. When it never shows, what the cluster shows then is recorded with a note
//! saying so ([`ReadBack::note`]), never silently.

use std::future::Future;
use std::time::Duration;

use ballast_kafka::{BrokerId, Client};

use crate::context::Context;
use crate::error::OpError;

/// The value read back after a change.
#[derive(Debug, Clone, PartialEq)]
pub struct ReadBack<T> {
    pub value: T,
    /// Why `value` may not be the changed one: the cluster did not show the change in time, or
    /// could not be read (then `value` is what was asked for). None when it showed.
    pub note: Option<String>,
}

/// The brokers to read a change back from: every broker the client knows.
pub async fn brokers(client: &Client) -> Vec<BrokerId> {
    let cached = client.cached_metadata();
    if !cached.brokers.is_empty() {
        return cached.brokers.iter().map(|b| b.id).collect();
    }
    match client.metadata(Some(&[])).await {
        Ok(m) => m.brokers.iter().map(|b| b.id).collect(),
        Err(_) => Vec::new(),
    }
}

/// Reads every broker's view with `read` until `shown` holds for each, or
/// `BALLAST_READBACK_TIMEOUT` passes (then a view with a note: one that shows the change when a
/// broker does, else the first). When no broker can be read, `asked` with a note naming the
/// failure.
pub async fn until_shown<T, F, Fut>(
    ctx: &Context,
    asked: T,
    mut read: F,
    shown: impl Fn(&T) -> bool,
) -> ReadBack<T>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Vec<Result<T, OpError>>>,
{
    let timing = &ctx.config.timing;
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
    Fut: Future<Output = Vec<Result<T, OpError>>>,
{
    let deadline = tokio::time::Instant::now() + timeout;
    loop {
        let mut views = Vec::new();
        let mut failure = None;
        for view in read().await {
            match view {
                Ok(v) => views.push(v),
                Err(e) => failure = Some(e),
            }
        }
        if views.is_empty() {
            let why = failure.map_or_else(
                || "no broker to read from".to_string(),
                |e| format!("{}: {}", e.error, e.details),
            );
            return ReadBack {
                value: asked,
                note: Some(format!(
                    "the change was made but could not be read back ({why}); recorded as asked"
                )),
            };
        }
        let showing = views.iter().filter(|v| shown(v)).count();
        if showing == views.len() {
            return ReadBack {
                value: views.swap_remove(0),
                note: None,
            };
        }
        let now = tokio::time::Instant::now();
        if now >= deadline {
            let n = views.len();
            let pick = views.iter().position(&shown).unwrap_or(0);
            return ReadBack {
                value: views.swap_remove(pick),
                note: Some(format!(
                    "the cluster did not show the change within {} of making it (BALLAST_READBACK_TIMEOUT): {showing} of {n} brokers showed it; recorded as {} showed it then",
                    ballast_config::format_duration(timeout),
                    if showing > 0 { "the brokers that did" } else { "the cluster" },
                )),
            };
        }
        tokio::time::sleep(poll.min(deadline - now)).await;
    }
}

/// Every broker's view by `read_at`, in broker order; the brokers are asked at once (one poll
/// costs one round trip, not one per broker).
pub async fn per_broker<T, F, Fut>(client: &Client, read_at: F) -> Vec<Result<T, OpError>>
where
    F: Fn(BrokerId) -> Fut,
    Fut: Future<Output = Result<T, OpError>>,
{
    futures_util::future::join_all(brokers(client).await.into_iter().map(read_at)).await
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicU32, Ordering};

    #[tokio::test]
    async fn a_change_is_read_until_every_broker_shows_it() {
        let reads = AtomicU32::new(0);
        let mut read = || {
            let n = reads.fetch_add(1, Ordering::SeqCst);
            async move {
                vec![
                    Ok::<_, OpError>("new"),
                    Ok(if n < 3 { "old" } else { "new" }),
                ]
            }
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
        let mut read = || async { vec![Ok::<_, OpError>("old"), Ok("new"), Ok("old")] };
        let got = wait(
            Duration::from_millis(30),
            Duration::from_millis(5),
            "new",
            &mut read,
            |v| *v == "new",
        )
        .await;
        assert_eq!(got.value, "new", "as the brokers that applied it show it");
        let note = got.note.unwrap_or_default();
        assert!(
            note.contains("did not show the change within 30ms"),
            "{note}"
        );
        assert!(note.contains("1 of 3 brokers showed it"), "{note}");

        let mut none = || async { vec![Ok::<_, OpError>("old"), Ok("old")] };
        let got = wait(
            Duration::from_millis(30),
            Duration::from_millis(5),
            "new",
            &mut none,
            |v| *v == "new",
        )
        .await;
        assert_eq!(
            got.value, "old",
            "no broker showed it: what the cluster shows"
        );
        assert!(got.note.unwrap_or_default().contains("0 of 2 brokers"));
    }

    #[tokio::test]
    async fn a_change_that_cannot_be_read_back_is_what_was_asked_with_a_note() {
        let mut read = || async {
            vec![Err::<&str, _>(OpError::unavailable(
                "cluster unreachable",
                "no broker answered",
            ))]
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
