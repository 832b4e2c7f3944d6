//! Processes, heartbeats, observations, settings and cooldowns.

mod common;

use ballast_schema::{Observation, ProcessRecord, ProcessState, StoreError};
use common::fresh_store;
use serde_json::json;

const T0: i64 = 1_800_000_000_000;
const COOLDOWN_MS: i64 = 30 * 60 * 1000;

fn process(name: &str, state: ProcessState) -> ProcessRecord {
    ProcessRecord {
        name: name.into(),
        pid: Some(4242),
        state,
        started_at_ms: Some(T0),
        restarts: 0,
        last_exit: None,
        last_exit_at_ms: None,
        next_start_at_ms: None,
        updated_at_ms: T0,
    }
}

#[test]
fn processes_are_upserted_by_name_and_listed_by_name() {
    let (_dir, store) = fresh_store();
    for name in ["web", "executor", "observer"] {
        store
            .put_process(&process(name, ProcessState::Running))
            .unwrap();
    }
    let crashed = ProcessRecord {
        pid: None,
        state: ProcessState::Backoff,
        restarts: 2,
        last_exit: Some("signal 9 (SIGKILL)".into()),
        last_exit_at_ms: Some(T0 + 5),
        next_start_at_ms: Some(T0 + 2_000),
        updated_at_ms: T0 + 5,
        ..process("executor", ProcessState::Running)
    };
    store.put_process(&crashed).unwrap();

    let all = store.processes().unwrap();
    let names: Vec<&str> = all.iter().map(|p| p.name.as_str()).collect();
    assert_eq!(names, ["executor", "observer", "web"]);
    assert_eq!(all[0], crashed);
    assert_eq!(store.process("executor").unwrap(), Some(crashed));
    assert_eq!(store.process("healer").unwrap(), None);

    let json = serde_json::to_value(&all[0]).unwrap();
    assert_eq!(json["state"], "backoff");
    assert_eq!(json["lastExit"], "signal 9 (SIGKILL)");
    assert_eq!(json["nextStartAtMs"], T0 + 2_000);
}

#[test]
fn process_states_round_trip_as_text() {
    for s in ProcessState::ALL {
        assert_eq!(s.as_str().parse::<ProcessState>().unwrap(), s);
    }
    assert!(matches!(
        "zombie".parse::<ProcessState>(),
        Err(StoreError::Invalid(_))
    ));
}

#[test]
fn heartbeats_replace_the_previous_one() {
    let (_dir, store) = fresh_store();
    store
        .heartbeat("observer", 10, T0, &json!({"tick": 1}))
        .unwrap();
    store.heartbeat("executor", 11, T0, &json!({})).unwrap();
    store
        .heartbeat("observer", 12, T0 + 1_000, &json!({"tick": 2}))
        .unwrap();
    let beats = store.heartbeats().unwrap();
    assert_eq!(beats.len(), 2);
    assert_eq!(beats[0].name, "executor");
    assert_eq!(beats[1].name, "observer");
    assert_eq!(beats[1].pid, 12);
    assert_eq!(beats[1].at_ms, T0 + 1_000);
    assert_eq!(beats[1].detail, json!({"tick": 2}));
}

#[test]
fn observations_keep_the_latest_per_kind() {
    let (_dir, store) = fresh_store();
    assert_eq!(store.observation("brokers").unwrap(), None);
    let ok = Observation {
        kind: "brokers".into(),
        observed_at_ms: T0,
        ok: true,
        error: None,
        detail: json!({"count": 3}),
    };
    store.record_observation(&ok).unwrap();
    assert_eq!(store.observation("brokers").unwrap(), Some(ok));
    let failed = Observation {
        kind: "brokers".into(),
        observed_at_ms: T0 + 10_000,
        ok: false,
        error: Some("connection refused".into()),
        detail: json!(null),
    };
    store.record_observation(&failed).unwrap();
    assert_eq!(store.observation("brokers").unwrap(), Some(failed.clone()));
    assert_eq!(store.observations().unwrap(), vec![failed]);
}

#[test]
fn settings_round_trip() {
    let (_dir, store) = fresh_store();
    assert_eq!(store.setting("throttle").unwrap(), None);
    store.put_setting("throttle", "50", T0).unwrap();
    store.put_setting("throttle", "80", T0 + 1).unwrap();
    store.put_setting("dry_run", "true", T0 + 2).unwrap();
    assert_eq!(store.setting("throttle").unwrap().as_deref(), Some("80"));
    let all = store.settings().unwrap();
    assert_eq!(all.len(), 2);
    assert_eq!(all[0].key, "dry_run");
    assert_eq!(
        (all[1].value.as_str(), all[1].updated_at_ms),
        ("80", T0 + 1)
    );
}

#[test]
fn cooldown_window() {
    let (_dir, store) = fresh_store();
    store.record_move("orders", 0, Some("op-1"), T0).unwrap();
    store.record_move("orders", 1, None, T0 + 60_000).unwrap();
    store
        .record_move("audit", 7, Some("op-2"), T0 + 120_000)
        .unwrap();

    // Inside the window: all three, ordered by topic then partition.
    let now = T0 + 10 * 60_000;
    let cool = store.partitions_in_cooldown(now, COOLDOWN_MS).unwrap();
    let keys: Vec<(&str, i32)> = cool
        .iter()
        .map(|c| (c.topic.as_str(), c.partition))
        .collect();
    assert_eq!(keys, [("audit", 7), ("orders", 0), ("orders", 1)]);
    assert_eq!(cool[1].operation_id.as_deref(), Some("op-1"));
    assert_eq!(cool[1].until_ms, T0 + COOLDOWN_MS);

    // The window is half-open: a partition may move again exactly cooldown_ms after its move.
    let cool = store
        .partitions_in_cooldown(T0 + COOLDOWN_MS - 1, COOLDOWN_MS)
        .unwrap();
    assert_eq!(cool.len(), 3);
    let cool = store
        .partitions_in_cooldown(T0 + COOLDOWN_MS, COOLDOWN_MS)
        .unwrap();
    assert_eq!(cool.len(), 2);

    // A newer move restarts the window for that partition; an older one does not.
    store
        .record_move("orders", 0, Some("op-3"), T0 + COOLDOWN_MS)
        .unwrap();
    store
        .record_move("orders", 0, Some("op-0"), T0 + 5)
        .unwrap();
    let cool = store
        .partitions_in_cooldown(T0 + COOLDOWN_MS + 1, COOLDOWN_MS)
        .unwrap();
    let orders0 = cool
        .iter()
        .find(|c| c.topic == "orders" && c.partition == 0)
        .unwrap();
    assert_eq!(orders0.operation_id.as_deref(), Some("op-3"));
    assert_eq!(orders0.moved_at_ms, T0 + COOLDOWN_MS);

    // Prune deletes moves before the cut-off only.
    assert_eq!(store.prune_cooldowns(T0 + 120_000).unwrap(), 1);
    assert_eq!(store.prune_cooldowns(T0 + 120_000).unwrap(), 0);
    let left = store
        .partitions_in_cooldown(T0 + 120_001, COOLDOWN_MS)
        .unwrap();
    let keys: Vec<(&str, i32)> = left
        .iter()
        .map(|c| (c.topic.as_str(), c.partition))
        .collect();
    assert_eq!(keys, [("audit", 7), ("orders", 0)]);

    let json = serde_json::to_value(&left[0]).unwrap();
    assert_eq!(json["movedAtMs"], T0 + 120_000);
    assert_eq!(json["operationId"], "op-2");

    assert!(matches!(
        store.record_move("orders", -1, None, T0),
        Err(StoreError::Invalid(_))
    ));
}
