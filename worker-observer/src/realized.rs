//! Predicted vs realized: after a sample, every completed operation with a prediction whose
//! realized loads are not all read gets them from this reading — leader and follower counts and
//! disk at the first reading after it completed, the four rates at the first reading
//! `BALLAST_REALIZED_SETTLE` plus a full `BALLAST_RATE_WINDOW` after it completed (the rates of
//! that reading are all after the moves and their settling:
//! `ballast_runtime::realized::rates_after_ms`).
//! Each part is written once ([`ballast_schema::Store::record_realized`]); the comparison
//! itself is `ballast_runtime::realized`.

use ballast_schema::{RealizedPart, Store, StoreError};

/// The parts of due operations a reading taken at `reading_at_ms` gives, with the operation.
pub fn due_parts(
    due: &[ballast_schema::RealizedDue],
    reading_at_ms: i64,
    rates_after_ms: i64,
) -> Vec<(String, RealizedPart)> {
    let mut out = Vec::new();
    for d in due {
        if reading_at_ms <= d.finished_at_ms {
            continue;
        }
        if d.counts_missing {
            out.push((d.operation_id.clone(), RealizedPart::Counts));
        }
        if d.rates_missing && reading_at_ms >= d.finished_at_ms.saturating_add(rates_after_ms) {
            out.push((d.operation_id.clone(), RealizedPart::Rates));
        }
    }
    out
}

/// One pass after a sample was written: the parts this reading gives, kept. Returns how many
/// parts were written. Reads nothing more than one query when no operation waits.
pub fn pass(store: &Store, rates_after_ms: i64) -> Result<usize, StoreError> {
    let due = store.realized_due()?;
    if due.is_empty() {
        return Ok(0);
    }
    // What is due at the latest reading, from its cluster row alone: the whole view is read
    // only when a part is written (not at every tick of the rate window an operation waits).
    let Some(cluster) = store.observed_cluster()? else {
        return Ok(0);
    };
    let parts = due_parts(&due, cluster.facts.sampled_at_ms, rates_after_ms);
    if parts.is_empty() {
        return Ok(0);
    }
    let Some(reading) = ballast_runtime::realized::reading_from_store(store)? else {
        return Ok(0);
    };
    let mut written = 0;
    for (id, part) in parts {
        if store.record_realized(&id, part, &reading)? {
            tracing::info!(operation = %id, part = ?part, "realized loads read");
            written += 1;
        }
    }
    Ok(written)
}

#[cfg(test)]
mod tests {
    use super::*;
    use ballast_schema::RealizedDue;

    fn due(counts: bool, rates: bool) -> RealizedDue {
        RealizedDue {
            operation_id: "op-1".into(),
            finished_at_ms: 1_000,
            counts_missing: counts,
            rates_missing: rates,
        }
    }

    #[test]
    fn counts_come_from_the_first_reading_after_completion_and_rates_a_full_rate_window_later() {
        let window = 60_000;
        assert!(
            due_parts(&[due(true, true)], 1_000, window).is_empty(),
            "a reading at the completion is not after it"
        );
        assert_eq!(
            due_parts(&[due(true, true)], 1_001, window),
            vec![("op-1".to_string(), RealizedPart::Counts)]
        );
        assert!(due_parts(&[due(false, true)], 60_999, window).is_empty());
        assert_eq!(
            due_parts(&[due(false, true)], 61_000, window),
            vec![("op-1".to_string(), RealizedPart::Rates)]
        );
        assert_eq!(
            due_parts(&[due(true, true)], 70_000, window).len(),
            2,
            "a late first reading gives both"
        );
    }
}
