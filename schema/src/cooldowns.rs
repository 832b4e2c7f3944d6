//! `cooldowns`: partitions moved recently, one row per partition (the latest move).

use rusqlite::params;
use serde::{Deserialize, Serialize};

use crate::util::require_non_empty;
use crate::{Store, StoreError};

/// A partition that is still in its cooldown window.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Cooldown {
    pub topic: String,
    pub partition: i32,
    pub moved_at_ms: i64,
    pub operation_id: Option<String>,
    /// `moved_at_ms + cooldown_ms`: the first instant the partition may move again.
    pub until_ms: i64,
}

impl Store {
    /// Records that `topic`/`partition` was moved at `now_ms`, replacing an older move.
    pub fn record_move(
        &self,
        topic: &str,
        partition: i32,
        operation_id: Option<&str>,
        now_ms: i64,
    ) -> Result<(), StoreError> {
        require_non_empty("topic", topic)?;
        if partition < 0 {
            return Err(StoreError::Invalid(format!(
                "partition must not be negative, got {partition}"
            )));
        }
        self.write(|tx| {
            tx.prepare_cached(
                "INSERT INTO cooldowns (topic, partition, moved_at_ms, operation_id)
                 VALUES (?1, ?2, ?3, ?4)
                 ON CONFLICT (topic, partition) DO UPDATE SET
                    moved_at_ms = excluded.moved_at_ms, operation_id = excluded.operation_id
                 WHERE excluded.moved_at_ms >= cooldowns.moved_at_ms",
            )?
            .execute(params![topic, partition, now_ms, operation_id])?;
            Ok(())
        })
    }

    /// Partitions moved within the last `cooldown_ms` before `now_ms`
    /// (`now_ms - cooldown_ms < moved_at_ms`), ordered by topic and partition.
    pub fn partitions_in_cooldown(
        &self,
        now_ms: i64,
        cooldown_ms: i64,
    ) -> Result<Vec<Cooldown>, StoreError> {
        let conn = self.conn()?;
        let mut stmt = conn.prepare_cached(
            "SELECT topic, partition, moved_at_ms, operation_id FROM cooldowns
             WHERE moved_at_ms > ?1
             ORDER BY topic, partition",
        )?;
        let rows = stmt.query_map([now_ms.saturating_sub(cooldown_ms)], |r| {
            let moved_at_ms: i64 = r.get(2)?;
            Ok(Cooldown {
                topic: r.get(0)?,
                partition: r.get(1)?,
                moved_at_ms,
                operation_id: r.get(3)?,
                until_ms: moved_at_ms.saturating_add(cooldown_ms),
            })
        })?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// Deletes moves recorded before `older_than_ms` (an absolute unix-ms instant, typically
    /// `now_ms - cooldown_ms`); returns how many rows went.
    pub fn prune_cooldowns(&self, older_than_ms: i64) -> Result<usize, StoreError> {
        self.write(|tx| {
            Ok(tx
                .prepare_cached("DELETE FROM cooldowns WHERE moved_at_ms < ?1")?
                .execute([older_than_ms])?)
        })
    }
}
