//! `mutation_slot`: the single server-wide lease that lets one mutating reassignment run at a time.
//!
//! The slot is one row. Acquiring it bumps `token`, the fencing token, which never goes back and is
//! never reused, so a holder that paused past its expiry (and was superseded) is recognised by its
//! old token. Every guarded write checks the lease in the same `BEGIN IMMEDIATE` transaction as the
//! write itself: no window exists between the check and the write.
//!
//! A lease is valid while `now_ms < expires_at_ms`.

use rusqlite::{params, Transaction};
use serde::{Deserialize, Serialize};

use crate::util::require_non_empty;
use crate::{settings, FenceReason, Store, StoreError};

/// Proof of holding the mutation slot, returned by [`Store::acquire_slot`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Lease {
    /// The fencing token: strictly greater than every token handed out before.
    pub token: i64,
    pub holder: String,
    pub expires_at_ms: i64,
}

/// The current holder of the slot, as shown to operators.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SlotHolder {
    pub holder: String,
    pub purpose: String,
    pub operation_id: Option<String>,
    pub token: i64,
    pub acquired_at_ms: i64,
    pub expires_at_ms: i64,
}

struct SlotRow {
    holder: Option<String>,
    purpose: Option<String>,
    operation_id: Option<String>,
    token: i64,
    acquired_at_ms: Option<i64>,
    expires_at_ms: Option<i64>,
}

impl SlotRow {
    /// The holder, if its lease has not expired at `now_ms`.
    fn live_holder(self, now_ms: i64) -> Option<SlotHolder> {
        match (self.holder, self.expires_at_ms) {
            (Some(holder), Some(expires_at_ms)) if now_ms < expires_at_ms => Some(SlotHolder {
                holder,
                purpose: self.purpose.unwrap_or_default(),
                operation_id: self.operation_id,
                token: self.token,
                acquired_at_ms: self.acquired_at_ms.unwrap_or(expires_at_ms),
                expires_at_ms,
            }),
            _ => None,
        }
    }
}

fn read_slot(tx: &Transaction<'_>) -> Result<SlotRow, StoreError> {
    let row = tx
        .prepare_cached(
            "SELECT holder, purpose, operation_id, token, acquired_at_ms, expires_at_ms
             FROM mutation_slot WHERE id = 1",
        )?
        .query_row([], |r| {
            Ok(SlotRow {
                holder: r.get(0)?,
                purpose: r.get(1)?,
                operation_id: r.get(2)?,
                token: r.get(3)?,
                acquired_at_ms: r.get(4)?,
                expires_at_ms: r.get(5)?,
            })
        })?;
    Ok(row)
}

/// Fails with [`StoreError::Fenced`] unless `lease` is the current, unexpired holder at `now_ms`.
/// Call inside the write transaction that the lease guards.
pub(crate) fn check_fence(
    tx: &Transaction<'_>,
    lease: &Lease,
    now_ms: i64,
) -> Result<(), StoreError> {
    let row = read_slot(tx)?;
    let fenced = |reason| StoreError::Fenced {
        token: lease.token,
        holder: lease.holder.clone(),
        reason,
    };
    if row.token != lease.token || row.holder.as_deref().is_some_and(|h| h != lease.holder) {
        return Err(fenced(FenceReason::Superseded { current: row.token }));
    }
    match row.expires_at_ms {
        None => Err(fenced(FenceReason::Released)),
        Some(expired_at_ms) if now_ms >= expired_at_ms => {
            Err(fenced(FenceReason::Expired { expired_at_ms }))
        }
        Some(_) => Ok(()),
    }
}

/// Takes the slot unconditionally (the caller checked it may): a new token, `holder` until
/// `now_ms + ttl_ms`.
pub(crate) fn take(
    tx: &Transaction<'_>,
    holder: &str,
    purpose: &str,
    operation_id: Option<&str>,
    now_ms: i64,
    ttl_ms: i64,
) -> Result<Lease, StoreError> {
    check_ttl(ttl_ms)?;
    let expires_at_ms = now_ms.saturating_add(ttl_ms);
    let token: i64 = tx
        .prepare_cached(
            "UPDATE mutation_slot
             SET holder = ?1, purpose = ?2, operation_id = ?3, token = token + 1,
                 acquired_at_ms = ?4, expires_at_ms = ?5
             WHERE id = 1
             RETURNING token",
        )?
        .query_row(
            params![holder, purpose, operation_id, now_ms, expires_at_ms],
            |r| r.get(0),
        )?;
    Ok(Lease {
        token,
        holder: holder.to_string(),
        expires_at_ms,
    })
}

/// Frees the slot if `lease` still holds it; false when it was no longer ours.
pub(crate) fn release_tx(tx: &Transaction<'_>, lease: &Lease) -> Result<bool, StoreError> {
    let n = tx
        .prepare_cached(
            "UPDATE mutation_slot
             SET holder = NULL, purpose = NULL, operation_id = NULL,
                 acquired_at_ms = NULL, expires_at_ms = NULL
             WHERE id = 1 AND token = ?1 AND holder = ?2",
        )?
        .execute(params![lease.token, lease.holder])?;
    Ok(n == 1)
}

/// The holder whose lease has not expired at `now_ms`.
pub(crate) fn live_holder(
    tx: &Transaction<'_>,
    now_ms: i64,
) -> Result<Option<SlotHolder>, StoreError> {
    Ok(read_slot(tx)?.live_holder(now_ms))
}

fn check_ttl(ttl_ms: i64) -> Result<(), StoreError> {
    if ttl_ms <= 0 {
        return Err(StoreError::Invalid(format!(
            "lease ttl must be positive, got {ttl_ms} ms"
        )));
    }
    Ok(())
}

impl Store {
    /// Takes the mutation slot for `ttl_ms`. Returns `None` while another holder's lease has not
    /// expired. The same holder re-acquiring gets a new token and its old lease becomes stale, so
    /// use a holder name unique to the contender (e.g. `executor:<pid>` or an operation id) when
    /// two contenders of one process must exclude each other.
    pub fn acquire_slot(
        &self,
        holder: &str,
        purpose: &str,
        operation_id: Option<&str>,
        now_ms: i64,
        ttl_ms: i64,
    ) -> Result<Option<Lease>, StoreError> {
        require_non_empty("slot holder", holder)?;
        check_ttl(ttl_ms)?;
        self.write(|tx| {
            let row = read_slot(tx)?;
            if let Some(current) = row.live_holder(now_ms) {
                if current.holder != holder {
                    return Ok(None);
                }
            }
            Ok(Some(take(
                tx,
                holder,
                purpose,
                operation_id,
                now_ms,
                ttl_ms,
            )?))
        })
    }

    /// Extends a lease to `now_ms + ttl_ms`, keeping its token. Fails with
    /// [`StoreError::Fenced`] when the lease is no longer current or has expired.
    pub fn renew_slot(&self, lease: &Lease, now_ms: i64, ttl_ms: i64) -> Result<Lease, StoreError> {
        check_ttl(ttl_ms)?;
        let expires_at_ms = now_ms.saturating_add(ttl_ms);
        self.write(|tx| {
            check_fence(tx, lease, now_ms)?;
            tx.prepare_cached("UPDATE mutation_slot SET expires_at_ms = ?1 WHERE id = 1")?
                .execute([expires_at_ms])?;
            Ok(Lease {
                token: lease.token,
                holder: lease.holder.clone(),
                expires_at_ms,
            })
        })
    }

    /// Frees the slot if `lease` still holds it (expired or not, as long as nobody took it since).
    /// Returns false, changing nothing, when it was no longer ours.
    pub fn release_slot(&self, lease: &Lease) -> Result<bool, StoreError> {
        self.write(|tx| release_tx(tx, lease))
    }

    /// The holder of the slot at `now_ms`, or `None` when it is free or the lease expired.
    pub fn slot(&self, now_ms: i64) -> Result<Option<SlotHolder>, StoreError> {
        self.read(|tx| Ok(read_slot(tx)?.live_holder(now_ms)))
    }

    /// Sets a setting only if `lease` is still the current, unexpired holder at `now_ms`; the
    /// check and the write happen in one transaction. Fails with [`StoreError::Fenced`] (nothing
    /// written) otherwise.
    pub fn put_setting_fenced(
        &self,
        lease: &Lease,
        key: &str,
        value: &str,
        now_ms: i64,
    ) -> Result<(), StoreError> {
        self.write(|tx| {
            check_fence(tx, lease, now_ms)?;
            settings::upsert(tx, key, value, now_ms)
        })
    }

    /// Fails with [`StoreError::Fenced`] unless `lease` is the current, unexpired holder. Only a
    /// snapshot: to guard a write, the write must use a fenced method of the store.
    pub fn check_lease(&self, lease: &Lease, now_ms: i64) -> Result<(), StoreError> {
        self.read(|tx| check_fence(tx, lease, now_ms))
    }
}
