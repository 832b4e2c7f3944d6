//! The rules for applying a balancing proposal over HTTP (spec, "Rules for applying a balancing
//! proposal through the API"; `docs/api/reassignments.md`), one test per rule, against a
//! simulated cluster observed once and proposals stored as the observer stores them.

mod reassign_common;

use std::time::Duration;

use ballast_schema::AuditQuery;
use reassign_common::*;
use serde_json::Value;

const MINUTE_MS: i64 = 60_000;

async fn apply(bed: &Bed, id: &str, force: bool) -> (u16, Value) {
    let query = if force { "?force=true" } else { "" };
    bed.send_as(
        Some("ops"),
        reqwest::Method::POST,
        &format!("/api/v1/proposals/{id}/apply{query}"),
        None,
    )
    .await
}

fn applies(bed: &Bed) -> Vec<ballast_schema::AuditEvent> {
    bed.store
        .list_audit(&AuditQuery {
            action: Some("reassignments.apply".into()),
            ..AuditQuery::default()
        })
        .expect("audit")
        .events
}

/// A refused apply queued nothing and recorded nothing.
fn assert_nothing_changed(bed: &Bed) {
    assert_eq!(bed.operations(), 0, "no operation was queued");
    assert_eq!(bed.audit_count(), 0, "nothing was audited");
    assert!(
        bed.store.slot(now()).expect("slot").is_none(),
        "no slot held"
    );
}

/// A 409 whose details name `reason` and say that `force=true` overrides it.
fn assert_soft_409(status: u16, body: &Value, reason: &str) {
    assert_eq!(status, 409, "{body}");
    let text = error_text(body);
    assert!(text.contains(reason), "names {reason}: {text}");
    assert!(text.contains("force=true"), "says force overrides: {text}");
}

/// A forced apply: queued, answered `forced` with `reason` among the overridden reasons.
fn assert_forced(status: u16, body: &Value, reason: &str) -> String {
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["data"]["started"], true, "{body}");
    assert_eq!(body["data"]["forced"], true, "{body}");
    let overridden = body["data"]["overridden"].to_string();
    assert!(overridden.contains(reason), "{body}");
    body["data"]["operationId"]
        .as_str()
        .expect("operation id")
        .to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_proposal_that_is_not_current_is_409_even_with_force() {
    let bed = bed().await;
    let fingerprint = bed.observed_fingerprint();
    bed.save_proposal(&bed.proposal("p-old", &fingerprint, true), now());
    // A changed plan is a new proposal: the old one is no longer current.
    let mut newer = bed.proposal("p-new", &fingerprint, true);
    newer.moves_digest = "another plan".into();
    bed.save_proposal(&newer, now());
    for force in [false, true] {
        let (status, body) = apply(&bed, "p-old", force).await;
        assert_eq!(status, 409, "force={force}: {body}");
        assert_eq!(body["error"], "proposal is not current", "{body}");
        assert!(
            error_text(&body).contains("force=true does not override"),
            "{body}"
        );
    }
    assert_nothing_changed(&bed);
    bed.sim.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_proposal_checked_more_than_two_minutes_ago_is_409_and_force_overrides_it() {
    let bed = bed().await;
    let fingerprint = bed.observed_fingerprint();
    // Just inside the two minutes it applies (checked below); just outside it does not.
    bed.save_proposal(
        &bed.proposal("p-stale", &fingerprint, true),
        now() - 2 * MINUTE_MS - 5_000,
    );
    let (status, body) = apply(&bed, "p-stale", false).await;
    assert_soft_409(status, &body, "checkedAt");
    assert_eq!(body["error"], "proposal cannot be applied now");
    assert_nothing_changed(&bed);
    let (status, body) = apply(&bed, "current", true).await;
    assert_forced(status, &body, "checkedAt");
    bed.sim.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_proposal_checked_within_two_minutes_applies_without_force() {
    let bed = bed().await;
    let fingerprint = bed.observed_fingerprint();
    bed.save_proposal(
        &bed.proposal("p-fresh", &fingerprint, true),
        now() - 2 * MINUTE_MS + 15_000,
    );
    let (status, body) = apply(&bed, "p-fresh", false).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["data"]["forced"], false, "{body}");
    let event = &applies(&bed)[0];
    assert!(!event.forced);
    assert_eq!(event.details, None);
    bed.sim.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_proposal_whose_decision_disallows_application_is_409_and_force_overrides_it() {
    let bed = bed().await;
    let fingerprint = bed.observed_fingerprint();
    bed.save_proposal(&bed.proposal("p-held", &fingerprint, false), now());
    let (status, body) = apply(&bed, "p-held", false).await;
    assert_soft_409(status, &body, "applicationAllowed is false");
    assert_nothing_changed(&bed);
    let (status, body) = apply(&bed, "p-held", true).await;
    assert_forced(status, &body, "applicationAllowed is false");
    bed.sim.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_externally_managed_throttles_apply_is_409_throttles_externally_managed_unless_forced()
{
    let bed = bed_with(small(), &[("BALLAST_THROTTLE_MANAGED", "false")]).await;
    let fingerprint = bed.observed_fingerprint();
    bed.save_proposal(&bed.proposal("p-unmanaged", &fingerprint, true), now());
    let (status, body) = apply(&bed, "p-unmanaged", false).await;
    assert_soft_409(status, &body, "throttles_externally_managed");
    assert_nothing_changed(&bed);
    let (status, body) = apply(&bed, "p-unmanaged", true).await;
    assert_forced(status, &body, "throttles_externally_managed");
    bed.sim.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_changed_topology_fingerprint_is_a_soft_reason_that_force_overrides() {
    let bed = bed().await;
    bed.save_proposal(&bed.proposal("p-moved", "0123456789abcdef", true), now());
    let (status, body) = apply(&bed, "p-moved", false).await;
    assert_soft_409(status, &body, "topology fingerprint changed");
    assert_nothing_changed(&bed);
    let (status, body) = apply(&bed, "p-moved", true).await;
    assert_forced(status, &body, "topology fingerprint changed");
    bed.sim.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_forced_override_is_recorded_in_the_audit_row_with_forced_and_the_reasons_overridden() {
    let bed = bed().await;
    bed.save_proposal(
        &bed.proposal("p-forced", "0123456789abcdef", false),
        now() - 5 * MINUTE_MS,
    );
    let (status, body) = apply(&bed, "p-forced", true).await;
    let id = assert_forced(status, &body, "applicationAllowed is false");
    let events = applies(&bed);
    assert_eq!(events.len(), 1, "one audit row");
    let event = &events[0];
    assert!(event.forced, "the row says forced");
    let details = event.details.clone().unwrap_or_default();
    assert!(details.starts_with("forced override: "), "{details}");
    for reason in [
        "checkedAt",
        "applicationAllowed is false",
        "topology fingerprint changed",
    ] {
        assert!(details.contains(reason), "{reason} in {details}");
    }
    assert_eq!(event.user_id.as_deref(), Some("ops"));
    assert_eq!(event.target.as_deref(), Some("proposal p-forced"));
    let op = bed.store.operation(&id).expect("read").expect("op");
    assert!(op.forced, "the operation is marked forced too");
    bed.sim.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hard_preflight_blocker_is_409_even_with_force() {
    let bed = bed().await;
    let fingerprint = bed.observed_fingerprint();
    bed.save_proposal(&bed.proposal("p-unhealthy", &fingerprint, true), now());
    // The observer saw five brokers; three of them stop: a majority is unavailable.
    let stopped: Vec<i32> = (1..=bed.new_broker).rev().take(3).collect();
    for b in &stopped {
        bed.sim.stop_broker(*b).await.expect("stop");
    }
    tokio::time::sleep(Duration::from_millis(200)).await;
    for force in [false, true] {
        let (status, body) = apply(&bed, "p-unhealthy", force).await;
        assert_eq!(status, 409, "force={force}: {body}");
        assert_eq!(body["error"], "pre-flight blocked", "{body}");
        let text = error_text(&body);
        assert!(text.contains("not overridable"), "{text}");
        assert!(
            text.contains("majority of brokers is unavailable"),
            "{text}"
        );
    }
    assert_nothing_changed(&bed);
    bed.sim.shutdown().await;
}
