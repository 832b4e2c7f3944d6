use super::*;
use ballast_model::snapshot::{SnapshotBroker, SnapshotPartition, SNAPSHOT_FORMAT};
use ballast_model::BrokerState;

const WINDOW: i64 = 60_000;
const DONE: i64 = 1_000_000;

fn partition(
    topic: &str,
    n: i32,
    replicas: &[BrokerId],
    size: u64,
    rate: f64,
) -> SnapshotPartition {
    SnapshotPartition {
        topic: topic.into(),
        partition: n,
        replicas: replicas.to_vec(),
        leader: replicas.first().copied(),
        isr: Some(replicas.to_vec()),
        size_bytes: size,
        compacted: false,
        min_insync_replicas: 1,
        producer_msg_rate: rate,
        producer_byte_rate: rate * 100.0,
        consumer_msg_rate: 0.0,
        consumer_byte_rate: 0.0,
        last_moved_at: None,
    }
}

/// Three brokers; broker 1 leads everything.
fn cluster() -> Snapshot {
    Snapshot {
        format: SNAPSHOT_FORMAT.into(),
        taken_at: "2026-01-01T00:00:00Z".into(),
        cluster_id: None,
        brokers: (1..=3)
            .map(|id| SnapshotBroker {
                id,
                rack: None,
                state: BrokerState::Alive,
            })
            .collect(),
        partitions: vec![
            partition("orders", 0, &[1, 2], 3_000, 10.0),
            partition("orders", 1, &[1, 2], 3_000, 10.0),
            partition("orders", 2, &[1, 3], 3_000, 10.0),
        ],
    }
}

/// The moves of the test: partition 1 to [2, 3], partition 2 to [3, 1].
fn moves() -> Vec<(&'static str, i32, &'static [BrokerId])> {
    vec![("orders", 1, &[2, 3]), ("orders", 2, &[3, 1])]
}

/// `snapshot` as the moves leave it.
fn moved(mut s: Snapshot) -> Snapshot {
    for (topic, n, target) in moves() {
        let p = s
            .partitions
            .iter_mut()
            .find(|p| p.topic == topic && p.partition == n)
            .expect("partition");
        p.replicas = target.to_vec();
        p.leader = target.first().copied();
    }
    s
}

fn op(state: OperationState) -> OperationRecord {
    OperationRecord {
        id: "op-1".into(),
        kind: "proposal".into(),
        strategy: "PROPOSAL".into(),
        state,
        cancel_requested: false,
        method: "POST".into(),
        user_id: None,
        requested_by: None,
        description: None,
        proposal_id: None,
        fingerprint: None,
        forced: false,
        slot_token: None,
        audit_event_id: None,
        reason: None,
        detail: json!({}),
        created_at_ms: 0,
        started_at_ms: Some(1),
        finished_at_ms: state.is_finished().then_some(DONE),
        updated_at_ms: DONE,
    }
}

fn realized(counts: Option<LoadsReading>, rates: Option<LoadsReading>) -> Realized {
    Realized {
        operation_id: "op-1".into(),
        prediction: predict(&cluster(), &moves(), 500, 0),
        counts,
        rates,
    }
}

fn load(c: &Comparison, load: Load) -> &LoadComparison {
    &c.loads[ballast_balancer::load_index(load)]
}

#[test]
fn a_prediction_applies_the_moves_with_the_first_replica_of_a_target_leading() {
    let p = predict(&cluster(), &moves(), 500, 0);
    let by_id = |id: BrokerId| {
        p.brokers
            .iter()
            .find(|b| b.broker_id == id)
            .expect("broker")
    };
    assert_eq!(by_id(1).before[0], 3.0, "broker 1 leads all three before");
    assert_eq!(
        [by_id(1).after[0], by_id(2).after[0], by_id(3).after[0]],
        [1.0, 1.0, 1.0],
        "one leader each after"
    );
    assert_eq!(
        [by_id(1).after[1], by_id(2).after[1], by_id(3).after[1]],
        [1.0, 1.0, 1.0],
        "one follower each after"
    );
    assert_eq!(by_id(3).after[2], 6_000.0, "disk follows the replicas");
    assert_eq!(
        by_id(2).after[3],
        10.0,
        "a leader carries its partition's rates"
    );
    assert!(p.brokers.iter().all(|b| b.takes_load));
}

#[test]
fn counts_and_disk_are_measured_at_the_first_reading_after_completion_and_match_a_reading_of_the_plan_exactly(
) {
    let after = reading(&moved(cluster()), DONE + 10, 0);
    let r = realized(Some(after), None);
    let c = compare(&op(OperationState::Completed), &r, WINDOW);
    assert_eq!(c.status, "pending", "rates still wait");
    for l in [Load::LeaderCount, Load::FollowerCount, Load::DiskBytes] {
        let x = load(&c, l);
        assert_eq!(x.status, "measured", "{l}");
        assert_eq!(x.error, Some(0.0), "{l}");
        assert_eq!(x.predicted, x.observed, "{l}");
    }
    assert_eq!(
        load(&c, Load::LeaderCount).before,
        Some(200.0),
        "3 leaders on one of three brokers: +200%"
    );
    assert_eq!(load(&c, Load::LeaderCount).predicted, Some(0.0));
    let rate = load(&c, Load::ProducerMsgRate);
    assert_eq!(rate.status, "pending");
    assert_eq!(rate.observed, None);
    assert!(
        rate.reason
            .as_deref()
            .is_some_and(|r| r.contains("1970-01-01T00:17:40")),
        "says until when: {:?}",
        rate.reason
    );
    assert_eq!(c.rates_due_at_ms, Some(DONE + WINDOW));
}

#[test]
fn rates_are_measured_once_their_reading_is_kept_and_the_error_is_the_largest_per_broker_distance_difference(
) {
    let counts = reading(&moved(cluster()), DONE + 10, 0);
    // Traffic changed after the prediction: partition 0 doubled.
    let mut later = moved(cluster());
    later.partitions[0].producer_msg_rate = 20.0;
    let rates = reading(&later, DONE + WINDOW + 5, 0);
    let c = compare(
        &op(OperationState::Completed),
        &realized(Some(counts), Some(rates)),
        WINDOW,
    );
    assert_eq!(c.status, "measured");
    assert_eq!(c.reason, None);
    let x = load(&c, Load::ProducerMsgRate);
    assert_eq!(x.status, "measured");
    assert_eq!(x.predicted, Some(0.0));
    // Observed: 20, 10, 10 over fair 13.33: broker 1 at +50%, the others at -25%.
    assert_eq!(x.observed, Some(50.0));
    assert_eq!(x.error, Some(50.0));
    // Consumer rates are 0 everywhere: measured, at fair share.
    assert_eq!(load(&c, Load::ConsumerMsgRate).error, Some(0.0));
}

#[test]
fn a_rate_not_measured_is_unknown_with_why_never_zero() {
    let counts = reading(&moved(cluster()), DONE + 10, 0);
    let rates = reading(&moved(cluster()), DONE + WINDOW + 5, 2);
    let c = compare(
        &op(OperationState::Completed),
        &realized(Some(counts.clone()), Some(rates)),
        WINDOW,
    );
    let x = load(&c, Load::ProducerByteRate);
    assert_eq!(x.status, "unknown");
    assert_eq!((x.observed, x.error), (None, None));
    assert!(
        x.reason
            .as_deref()
            .is_some_and(|r| r.contains("2 of 3 partitions had no measured rate")),
        "{:?}",
        x.reason
    );
    // Unknown when predicted: nothing to compare with.
    let mut r = realized(Some(counts.clone()), Some(counts));
    r.prediction = predict(&cluster(), &moves(), 500, 1);
    let c = compare(&op(OperationState::Completed), &r, WINDOW);
    let x = load(&c, Load::ConsumerMsgRate);
    assert_eq!((x.status, x.predicted, x.error), ("unknown", None, None));
    assert!(x
        .reason
        .as_deref()
        .is_some_and(|r| r.contains("predicted from")));
    let v = render(&op(OperationState::Completed), Some(&r), WINDOW);
    assert_eq!(v["loads"]["consumerMsgRate"]["predicted"], Value::Null);
    assert_eq!(v["brokers"][0]["predicted"]["consumerMsgRate"], Value::Null);
    assert_eq!(v["brokers"][0]["predicted"]["leaderCount"], json!(1.0));
}

#[test]
fn realized_is_pending_until_the_operation_completes_and_unavailable_when_it_failed_or_was_cancelled_or_has_no_prediction(
) {
    let r = realized(None, None);
    let running = compare(&op(OperationState::Running), &r, WINDOW);
    assert_eq!(running.status, "pending");
    assert!(running
        .reason
        .as_deref()
        .is_some_and(|r| r.contains("has not completed")));
    let done = compare(&op(OperationState::Completed), &r, WINDOW);
    assert_eq!(done.status, "pending");
    assert!(done
        .reason
        .as_deref()
        .is_some_and(|r| r.contains("first reading after completion")));
    for state in [OperationState::Failed, OperationState::Cancelled] {
        let c = compare(&op(state), &r, WINDOW);
        assert_eq!(c.status, "unavailable", "{state:?}");
        assert!(c
            .loads
            .iter()
            .all(|l| l.observed.is_none() && l.status == "unavailable"));
    }
    let none = render(&op(OperationState::Completed), None, WINDOW);
    assert_eq!(none["status"], "unavailable");
    assert!(none["reason"]
        .as_str()
        .is_some_and(|r| r.contains("no prediction")));
}

#[test]
fn the_rendered_answer_names_every_load_and_every_broker_with_predicted_and_observed_values() {
    let counts = reading(&moved(cluster()), DONE + 10, 0);
    let v = render(
        &op(OperationState::Completed),
        Some(&realized(Some(counts), None)),
        WINDOW,
    );
    for l in Load::ALL {
        assert!(v["loads"][l.name()].is_object(), "{l}");
    }
    assert_eq!(v["brokers"].as_array().map(Vec::len), Some(3));
    let b1 = &v["brokers"][0];
    assert_eq!(b1["brokerId"], 1);
    assert_eq!(b1["before"]["leaderCount"], json!(3.0));
    assert_eq!(b1["predicted"]["leaderCount"], json!(1.0));
    assert_eq!(b1["observed"]["leaderCount"], json!(1.0));
    assert_eq!(
        b1["observed"]["producerMsgRate"],
        Value::Null,
        "rates still pending"
    );
    assert_eq!(b1["predictedDistance"]["leaderCount"], json!(0.0));
    assert_eq!(v["countsObservedAt"], "1970-01-01T00:16:40.010Z");
    assert_eq!(v["ratesObservedAt"], Value::Null);
}
