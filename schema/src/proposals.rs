//! `proposals` and `proposal_readings`: the observer's rebalancing proposals (exactly one of them
//! current) and the readings of brokers beyond the trigger they are decided on.

use ballast_model::BrokerId;
use rusqlite::{params, OptionalExtension, Row};
use serde::{Deserialize, Serialize};

use crate::util::{json_col, json_text, require_non_empty};
use crate::{Store, StoreError};

/// Topic/broker pairs a proposal's stored detail keeps of `topicSpreadAtLimit` (the first by
/// key, `topic@broker`) and of `topicBreaches` (the most replicas beyond the cap first, then by
/// topic and broker); `topicSpreadAtLimitTotal` and `topicBreachesTotal` count every pair. A
/// large cluster has hundreds of thousands of pairs at their cap (65 MB of JSON at 300,000
/// partitions) that no answer shows.
pub const DETAIL_PAIRS: usize = 100;

/// One reading: the brokers beyond the trigger at `at_ms`, and those the reading's plan was
/// recommended for and helped (its benefit shown on this measurement).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ProposalReading {
    pub at_ms: i64,
    pub tripped: Vec<BrokerId>,
    #[serde(default)]
    pub helped: Vec<BrokerId>,
}

/// The `tripped` column (a JSON array, by its CHECK): `[[tripped...], [helped...]]`; rows written
/// before `helped` was kept hold a flat array of tripped brokers (nothing helped).
#[derive(Deserialize)]
#[serde(untagged)]
enum StoredReading {
    Both(Vec<BrokerId>, Vec<BrokerId>),
    Tripped(Vec<BrokerId>),
}

/// A proposal the observer wants to keep as the current one.
#[derive(Debug, Clone, PartialEq)]
pub struct NewProposal {
    pub id: String,
    /// Stable hash of the topology planned on.
    pub fingerprint: String,
    /// Stable hash of the moves.
    pub moves_digest: String,
    pub recommended: bool,
    pub application_allowed: bool,
    pub moves: u64,
    pub estimated_bytes: u64,
    pub balance_hold: bool,
    pub plan: serde_json::Value,
    pub decision: serde_json::Value,
    pub detail: serde_json::Value,
}

/// A stored proposal. `plan` and `detail` are `Null` in list rows.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ProposalRecord {
    pub id: String,
    pub created_at_ms: i64,
    pub checked_at_ms: i64,
    pub current: bool,
    pub fingerprint: String,
    pub moves_digest: String,
    pub recommended: bool,
    pub application_allowed: bool,
    pub moves: u64,
    pub estimated_bytes: u64,
    pub balance_hold: bool,
    pub plan: serde_json::Value,
    pub decision: serde_json::Value,
    pub detail: serde_json::Value,
}

/// What [`Store::save_proposal`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SavedProposal {
    /// A new current proposal was added.
    Inserted { id: String },
    /// The current proposal had the same fingerprint and moves: its check time and decision
    /// were updated.
    Rechecked { id: String },
}

impl SavedProposal {
    pub fn id(&self) -> &str {
        match self {
            SavedProposal::Inserted { id } | SavedProposal::Rechecked { id } => id,
        }
    }
}

/// What [`Store::delete_proposal`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DeletedProposal {
    Deleted,
    NotFound,
    /// The current proposal is never deleted.
    Current,
}

/// One page of proposals, newest first.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ProposalPage {
    pub total: u64,
    pub proposals: Vec<ProposalRecord>,
}

const SUMMARY_COLUMNS: &str =
    "id, created_at_ms, checked_at_ms, current, fingerprint, moves_digest,
    recommended, application_allowed, moves, estimated_bytes, balance_hold, decision";

fn summary_from_row(r: &Row<'_>) -> rusqlite::Result<ProposalRecord> {
    Ok(ProposalRecord {
        id: r.get(0)?,
        created_at_ms: r.get(1)?,
        checked_at_ms: r.get(2)?,
        current: r.get(3)?,
        fingerprint: r.get(4)?,
        moves_digest: r.get(5)?,
        recommended: r.get(6)?,
        application_allowed: r.get(7)?,
        moves: r.get::<_, i64>(8)?.max(0) as u64,
        estimated_bytes: r.get::<_, i64>(9)?.max(0) as u64,
        balance_hold: r.get(10)?,
        decision: json_col(r, 11)?,
        plan: serde_json::Value::Null,
        detail: serde_json::Value::Null,
    })
}

fn full_from_row(r: &Row<'_>) -> rusqlite::Result<ProposalRecord> {
    let mut p = summary_from_row(r)?;
    p.plan = json_col(r, 12)?;
    p.detail = json_col(r, 13)?;
    Ok(p)
}

fn to_i64(what: &str, v: u64) -> Result<i64, StoreError> {
    i64::try_from(v).map_err(|_| StoreError::Invalid(format!("{what} is too large: {v}")))
}

/// Whether a proposal of `(fingerprint, moves digest)` at `now_ms` keeps the current one of
/// `(fingerprint, moves digest, created_at_ms)`: the same placement, and the same moves or
/// within `hold_ms` of its creation.
fn keeps(current: (&str, &str, i64), new: (&str, &str), now_ms: i64, hold_ms: i64) -> bool {
    let held = now_ms.saturating_sub(current.2) < hold_ms;
    current.0 == new.0 && (current.1 == new.1 || held)
}

/// Re-checks the current proposal with `p` when `p` keeps it (see
/// [`Store::save_proposal_held`]): its check time and decision are updated. None: `p` is a new
/// proposal (nothing was changed).
fn recheck(
    tx: &rusqlite::Transaction<'_>,
    p: &NewProposal,
    now_ms: i64,
    hold_ms: i64,
) -> Result<Option<SavedProposal>, StoreError> {
    let current: Option<(String, String, String, i64, i64, i64)> = tx
        .prepare_cached(
            "SELECT id, fingerprint, moves_digest, created_at_ms, moves, estimated_bytes
             FROM proposals WHERE current = 1",
        )?
        .query_row([], |r| {
            Ok((
                r.get(0)?,
                r.get(1)?,
                r.get(2)?,
                r.get(3)?,
                r.get(4)?,
                r.get(5)?,
            ))
        })
        .optional()?;
    let Some((id, fingerprint, digest, created, held_moves, held_bytes)) = current else {
        return Ok(None);
    };
    if !keeps(
        (&fingerprint, &digest, created),
        (&p.fingerprint, &p.moves_digest),
        now_ms,
        hold_ms,
    ) {
        return Ok(None);
    }
    // The decision is the new check's; its next action names the moves this proposal keeps,
    // not the ones the new plan would have made.
    let mut decision = p.decision.clone();
    if digest != p.moves_digest {
        if let Some(next) = decision.get_mut("nextAction") {
            if next.as_str().is_some_and(|n| n.starts_with("apply: ")) {
                *next = serde_json::Value::from(ballast_model::units::apply_action(
                    usize::try_from(held_moves).unwrap_or(0),
                    u64::try_from(held_bytes).unwrap_or(0),
                ));
            }
        }
    }
    tx.prepare_cached(
        "UPDATE proposals SET checked_at_ms = ?2, decision = ?3,
            application_allowed = ?4 WHERE id = ?1",
    )?
    .execute(params![
        id,
        now_ms.max(created),
        json_text(&decision),
        p.application_allowed
    ])?;
    Ok(Some(SavedProposal::Rechecked { id }))
}

impl Store {
    /// Records a reading at `at_ms` (replacing one at the same instant), keeps the newest `keep`
    /// and returns them, oldest first.
    pub fn record_proposal_reading(
        &self,
        reading: &ProposalReading,
        keep: usize,
    ) -> Result<Vec<ProposalReading>, StoreError> {
        let tripped = serde_json::json!([reading.tripped, reading.helped]);
        let keep = i64::try_from(keep.max(1)).unwrap_or(i64::MAX);
        self.write(|tx| {
            tx.prepare_cached(
                "INSERT INTO proposal_readings (at_ms, tripped) VALUES (?1, ?2)
                 ON CONFLICT (at_ms) DO UPDATE SET tripped = excluded.tripped",
            )?
            .execute(params![reading.at_ms, json_text(&tripped)])?;
            tx.prepare_cached(
                "DELETE FROM proposal_readings WHERE at_ms NOT IN
                    (SELECT at_ms FROM proposal_readings ORDER BY at_ms DESC LIMIT ?1)",
            )?
            .execute([keep])?;
            Ok(())
        })?;
        self.proposal_readings()
    }

    /// Every kept reading, oldest first.
    pub fn proposal_readings(&self) -> Result<Vec<ProposalReading>, StoreError> {
        let conn = self.conn()?;
        let mut stmt =
            conn.prepare_cached("SELECT at_ms, tripped FROM proposal_readings ORDER BY at_ms")?;
        let rows = stmt.query_map([], |r| {
            let tripped = json_col(r, 1)?;
            Ok((r.get::<_, i64>(0)?, tripped))
        })?;
        let mut out = Vec::new();
        for row in rows {
            let (at_ms, tripped) = row?;
            let stored: StoredReading =
                serde_json::from_value(tripped).map_err(|e| StoreError::Invalid(e.to_string()))?;
            let (tripped, helped) = match stored {
                StoredReading::Both(tripped, helped) => (tripped, helped),
                StoredReading::Tripped(tripped) => (tripped, Vec::new()),
            };
            out.push(ProposalReading {
                at_ms,
                tripped,
                helped,
            });
        }
        Ok(out)
    }

    /// Makes `p` the current proposal at `now_ms`. When the current one has the same fingerprint
    /// and moves, only its `checked_at_ms` and decision change. Otherwise `p` is added as the
    /// current one and proposals beyond the newest `keep` are deleted (never the current one).
    pub fn save_proposal(
        &self,
        p: &NewProposal,
        now_ms: i64,
        keep: usize,
    ) -> Result<SavedProposal, StoreError> {
        self.save_proposal_held(p, now_ms, keep, 0)
    }

    /// [`Store::save_proposal`], holding the current proposal still: while the placement is
    /// unchanged (same fingerprint) and it was created less than `hold_ms` ago, it keeps its id
    /// and its moves even when `p`'s moves differ (a plan of the same placement under slightly
    /// different loads); only its `checked_at_ms` and decision change. A changed placement, or
    /// the hold passing, makes `p` the current one.
    pub fn save_proposal_held(
        &self,
        p: &NewProposal,
        now_ms: i64,
        keep: usize,
        hold_ms: i64,
    ) -> Result<SavedProposal, StoreError> {
        self.save_proposal_with_detail(p, &json_text(&p.detail), now_ms, keep, hold_ms)
    }

    /// [`Store::save_proposal_held`] with the detail given as JSON text (`p.detail` is not
    /// read): the observer writes a large cluster's detail as text (hundreds of thousands of
    /// entries) instead of building it as JSON values. Text that is not JSON is refused.
    pub fn save_proposal_with_detail(
        &self,
        p: &NewProposal,
        detail_json: &str,
        now_ms: i64,
        keep: usize,
        hold_ms: i64,
    ) -> Result<SavedProposal, StoreError> {
        require_non_empty("id", &p.id)?;
        if serde_json::from_str::<serde::de::IgnoredAny>(detail_json).is_err() {
            return Err(StoreError::Invalid("detail is not JSON".into()));
        }
        let moves = to_i64("moves", p.moves)?;
        let bytes = to_i64("estimated_bytes", p.estimated_bytes)?;
        let keep = i64::try_from(keep.max(1)).unwrap_or(i64::MAX);
        self.write(|tx| {
            if let Some(saved) = recheck(tx, p, now_ms, hold_ms)? {
                return Ok(saved);
            }
            tx.prepare_cached("UPDATE proposals SET current = 0 WHERE current = 1")?
                .execute([])?;
            tx.prepare_cached(
                "INSERT INTO proposals (id, created_at_ms, checked_at_ms, current, fingerprint,
                    moves_digest, recommended, application_allowed, moves, estimated_bytes,
                    balance_hold, plan, decision, detail)
                 VALUES (?1, ?2, ?2, 1, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)",
            )?
            .execute(params![
                p.id,
                now_ms,
                p.fingerprint,
                p.moves_digest,
                p.recommended,
                p.application_allowed,
                moves,
                bytes,
                p.balance_hold,
                json_text(&p.plan),
                json_text(&p.decision),
                detail_json,
            ])?;
            tx.prepare_cached(
                "DELETE FROM proposals WHERE current = 0 AND id NOT IN
                    (SELECT id FROM proposals ORDER BY created_at_ms DESC, id DESC LIMIT ?1)",
            )?
            .execute([keep])?;
            Ok(SavedProposal::Inserted { id: p.id.clone() })
        })
    }

    /// The part of [`Store::save_proposal_held`] that keeps the current proposal: when `p` would
    /// only re-check it (same fingerprint, and the same moves or within `hold_ms` of its
    /// creation), its `checked_at_ms` and decision are updated exactly as `save_proposal_held`
    /// does and it is returned; otherwise nothing changes and None says `p` must be saved as a
    /// new proposal. `p.detail` is not read: the observer builds the detail (the largest part of
    /// a proposal at 300,000 partitions) only for a proposal it adds.
    pub fn recheck_proposal(
        &self,
        p: &NewProposal,
        now_ms: i64,
        hold_ms: i64,
    ) -> Result<Option<SavedProposal>, StoreError> {
        self.write(|tx| recheck(tx, p, now_ms, hold_ms))
    }

    /// Whether saving a proposal of `fingerprint` and `moves_digest` at `now_ms` would only
    /// re-check the current one ([`Store::recheck_proposal`]); false before the first. Reads
    /// only: the observer asks while it plans, to build a detail only for a proposal it adds.
    pub fn proposal_would_recheck(
        &self,
        fingerprint: &str,
        moves_digest: &str,
        now_ms: i64,
        hold_ms: i64,
    ) -> Result<bool, StoreError> {
        let conn = self.conn()?;
        let current: Option<(String, String, i64)> = conn
            .prepare_cached(
                "SELECT fingerprint, moves_digest, created_at_ms FROM proposals WHERE current = 1",
            )?
            .query_row([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
            .optional()?;
        Ok(current.is_some_and(|(f, d, created)| {
            keeps(
                (&f, &d, created),
                (fingerprint, moves_digest),
                now_ms,
                hold_ms,
            )
        }))
    }

    /// The current proposal, None before the first evaluation.
    pub fn current_proposal(&self) -> Result<Option<ProposalRecord>, StoreError> {
        let conn = self.conn()?;
        let mut stmt = conn.prepare_cached(&format!(
            "SELECT {SUMMARY_COLUMNS}, plan, detail FROM proposals WHERE current = 1"
        ))?;
        Ok(stmt.query_row([], full_from_row).optional()?)
    }

    /// One proposal by id, None when unknown.
    pub fn proposal(&self, id: &str) -> Result<Option<ProposalRecord>, StoreError> {
        let conn = self.conn()?;
        let mut stmt = conn.prepare_cached(&format!(
            "SELECT {SUMMARY_COLUMNS}, plan, detail FROM proposals WHERE id = ?1"
        ))?;
        Ok(stmt.query_row([id], full_from_row).optional()?)
    }

    /// The current proposal's summary row (no plan, no detail): what changes with every check
    /// (check time, decision) without the plan, which never changes for an id.
    pub fn current_proposal_head(&self) -> Result<Option<ProposalRecord>, StoreError> {
        let conn = self.conn()?;
        let mut stmt = conn.prepare_cached(&format!(
            "SELECT {SUMMARY_COLUMNS} FROM proposals WHERE current = 1"
        ))?;
        Ok(stmt.query_row([], summary_from_row).optional()?)
    }

    /// One proposal's summary row by id (no plan, no detail), None when unknown.
    pub fn proposal_head(&self, id: &str) -> Result<Option<ProposalRecord>, StoreError> {
        let conn = self.conn()?;
        let mut stmt = conn.prepare_cached(&format!(
            "SELECT {SUMMARY_COLUMNS} FROM proposals WHERE id = ?1"
        ))?;
        Ok(stmt.query_row([id], summary_from_row).optional()?)
    }

    /// One proposal's plan and detail (they never change for an id), None when unknown.
    pub fn proposal_plan(
        &self,
        id: &str,
    ) -> Result<Option<(serde_json::Value, serde_json::Value)>, StoreError> {
        let conn = self.conn()?;
        let mut stmt = conn.prepare_cached("SELECT plan, detail FROM proposals WHERE id = ?1")?;
        Ok(stmt
            .query_row([id], |r| Ok((json_col(r, 0)?, json_col(r, 1)?)))
            .optional()?)
    }

    /// Summary rows (no plan, no detail), newest first.
    pub fn proposals(&self, limit: u64, offset: u64) -> Result<ProposalPage, StoreError> {
        let limit = to_i64("limit", limit)?;
        let offset = to_i64("offset", offset)?;
        self.read(|tx| {
            let total: i64 = tx
                .prepare_cached("SELECT count(*) FROM proposals")?
                .query_row([], |r| r.get(0))?;
            let proposals = tx
                .prepare_cached(&format!(
                    "SELECT {SUMMARY_COLUMNS} FROM proposals
                     ORDER BY created_at_ms DESC, id DESC LIMIT ?1 OFFSET ?2"
                ))?
                .query_map([limit, offset], summary_from_row)?
                .collect::<Result<Vec<_>, _>>()?;
            Ok(ProposalPage {
                total: total.max(0) as u64,
                proposals,
            })
        })
    }

    /// Deletes a proposal that is not the current one.
    pub fn delete_proposal(&self, id: &str) -> Result<DeletedProposal, StoreError> {
        self.write(|tx| {
            let current: Option<bool> = tx
                .prepare_cached("SELECT current FROM proposals WHERE id = ?1")?
                .query_row([id], |r| r.get(0))
                .optional()?;
            match current {
                None => Ok(DeletedProposal::NotFound),
                Some(true) => Ok(DeletedProposal::Current),
                Some(false) => {
                    tx.prepare_cached("DELETE FROM proposals WHERE id = ?1")?
                        .execute([id])?;
                    Ok(DeletedProposal::Deleted)
                }
            }
        })
    }
}
