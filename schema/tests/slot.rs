//! The mutation slot in one process: lease, fencing token, renew, release.

mod common;

use ballast_schema::{FenceReason, StoreError};
use common::fresh_store;

const T0: i64 = 1_800_000_000_000;

#[test]
fn stale_lease_holder_is_fenced() {
    let (_dir, store) = fresh_store();
    let a = store
        .acquire_slot("executor-a", "apply", Some("op-1"), T0, 1_000)
        .unwrap()
        .expect("the slot is free");
    store.put_setting_fenced(&a, "owner", "a", T0 + 10).unwrap();

    // While A's lease runs, B is refused.
    assert_eq!(
        store
            .acquire_slot("executor-b", "apply", None, T0 + 999, 1_000)
            .unwrap(),
        None
    );

    // A pauses past its expiry; B acquires.
    let b = store
        .acquire_slot("executor-b", "apply", Some("op-2"), T0 + 1_500, 1_000)
        .unwrap()
        .expect("an expired lease frees the slot");
    assert!(b.token > a.token, "tokens strictly increase");

    // A wakes up: its guarded write and its renewal fail, and nothing was written.
    let err = store
        .put_setting_fenced(&a, "owner", "a-late", T0 + 1_600)
        .unwrap_err();
    assert!(
        matches!(
            &err,
            StoreError::Fenced { token, reason: FenceReason::Superseded { current }, .. }
                if *token == a.token && *current == b.token
        ),
        "{err:?}"
    );
    assert!(err.is_fenced());
    assert_eq!(
        err.to_string(),
        format!(
            "lease token {} of executor-a is fenced: superseded by token {}",
            a.token, b.token
        )
    );
    let err = store.renew_slot(&a, T0 + 1_600, 1_000).unwrap_err();
    assert!(err.is_fenced(), "{err:?}");
    assert_eq!(store.setting("owner").unwrap().as_deref(), Some("a"));

    // A's release does not free B's slot.
    assert!(!store.release_slot(&a).unwrap());
    let holder = store.slot(T0 + 1_600).unwrap().expect("b holds the slot");
    assert_eq!(holder.holder, "executor-b");
    assert_eq!(holder.token, b.token);
    assert_eq!(holder.operation_id.as_deref(), Some("op-2"));

    // B writes fine.
    store
        .put_setting_fenced(&b, "owner", "b", T0 + 1_700)
        .unwrap();
    assert_eq!(store.setting("owner").unwrap().as_deref(), Some("b"));
}

#[test]
fn an_expired_lease_is_fenced_even_if_nobody_took_the_slot() {
    let (_dir, store) = fresh_store();
    let a = store
        .acquire_slot("a", "apply", None, T0, 100)
        .unwrap()
        .unwrap();
    // Valid while now < expires_at_ms.
    store.put_setting_fenced(&a, "k", "1", T0 + 99).unwrap();
    let err = store
        .put_setting_fenced(&a, "k", "2", T0 + 100)
        .unwrap_err();
    assert!(
        matches!(err, StoreError::Fenced { reason: FenceReason::Expired { expired_at_ms }, .. }
            if expired_at_ms == T0 + 100),
        "{err:?}"
    );
    assert!(store.renew_slot(&a, T0 + 100, 100).unwrap_err().is_fenced());
    assert_eq!(store.setting("k").unwrap().as_deref(), Some("1"));
    assert_eq!(store.slot(T0 + 100).unwrap(), None);
    // Nobody took it since: releasing still tidies the row.
    assert!(store.release_slot(&a).unwrap());
}

#[test]
fn renewal_extends_the_lease_and_keeps_the_token() {
    let (_dir, store) = fresh_store();
    let a = store
        .acquire_slot("a", "apply", None, T0, 100)
        .unwrap()
        .unwrap();
    let renewed = store.renew_slot(&a, T0 + 90, 100).unwrap();
    assert_eq!(renewed.token, a.token);
    assert_eq!(renewed.expires_at_ms, T0 + 190);
    // The old value of the lease carries the same token, so it stays valid too.
    store.put_setting_fenced(&a, "k", "v", T0 + 150).unwrap();
    assert_eq!(
        store
            .acquire_slot("b", "apply", None, T0 + 150, 100)
            .unwrap(),
        None
    );
}

#[test]
fn the_same_holder_reacquiring_gets_a_new_token_and_the_old_one_is_stale() {
    let (_dir, store) = fresh_store();
    let first = store
        .acquire_slot("web", "apply", None, T0, 10_000)
        .unwrap()
        .unwrap();
    let second = store
        .acquire_slot("web", "apply", None, T0 + 1, 10_000)
        .unwrap()
        .expect("the same holder may re-acquire");
    assert!(second.token > first.token);
    assert!(store
        .put_setting_fenced(&first, "k", "old", T0 + 2)
        .unwrap_err()
        .is_fenced());
    store
        .put_setting_fenced(&second, "k", "new", T0 + 2)
        .unwrap();
}

#[test]
fn release_frees_the_slot_and_tokens_are_never_reused() {
    let (_dir, store) = fresh_store();
    let mut last = 0;
    for i in 0..5 {
        let lease = store
            .acquire_slot("x", "apply", None, T0 + i, 1_000)
            .unwrap()
            .unwrap();
        assert!(lease.token > last);
        last = lease.token;
        assert!(store.slot(T0 + i).unwrap().is_some());
        assert!(store.release_slot(&lease).unwrap());
        assert!(
            !store.release_slot(&lease).unwrap(),
            "a second release changes nothing"
        );
        assert_eq!(store.slot(T0 + i).unwrap(), None);
        let err = store
            .put_setting_fenced(&lease, "k", "v", T0 + i)
            .unwrap_err();
        assert!(
            matches!(
                err,
                StoreError::Fenced {
                    reason: FenceReason::Released,
                    ..
                }
            ),
            "{err:?}"
        );
    }
    assert_eq!(store.setting("k").unwrap(), None);
}

#[test]
fn the_token_cannot_go_back_even_by_hand() {
    let (dir, store) = fresh_store();
    let lease = store
        .acquire_slot("x", "apply", None, T0, 1_000)
        .unwrap()
        .unwrap();
    let conn = rusqlite::Connection::open(common::db_path(&dir)).unwrap();
    let err = conn
        .execute("UPDATE mutation_slot SET token = 0 WHERE id = 1", [])
        .unwrap_err();
    assert!(err.to_string().contains("must strictly increase"), "{err}");
    assert!(conn.execute("DELETE FROM mutation_slot", []).is_err());
    store.check_lease(&lease, T0 + 1).unwrap();
}

#[test]
fn bad_lease_arguments_are_refused() {
    let (_dir, store) = fresh_store();
    for ttl in [0, -5] {
        let err = store.acquire_slot("x", "apply", None, T0, ttl).unwrap_err();
        assert!(matches!(err, StoreError::Invalid(_)), "{err:?}");
    }
    let err = store.acquire_slot(" ", "apply", None, T0, 10).unwrap_err();
    assert!(matches!(err, StoreError::Invalid(_)), "{err:?}");
}

#[test]
fn concurrent_threads_never_both_hold_the_slot() {
    let (_dir, store) = fresh_store();
    let winners: usize = std::thread::scope(|s| {
        let handles: Vec<_> = (0..8)
            .map(|i| {
                let store = store.clone();
                s.spawn(move || {
                    store
                        .acquire_slot(&format!("t{i}"), "apply", None, T0, 60_000)
                        .unwrap()
                        .is_some()
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| usize::from(h.join().unwrap()))
            .sum()
    });
    assert_eq!(winners, 1);
}
