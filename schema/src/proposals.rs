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
    /// What the plan was judged on: each load's status, in words (`leaderCount=triggered;…`).
    /// The current proposal is held only while a new plan's basis is the same.
    pub basis: String,
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

/// The current proposal as the hold sees it: fingerprint, moves digest, basis, creation time.
struct Current<'a> {
    fingerprint: &'a str,
    digest: &'a str,
    basis: &'a str,
    created_at_ms: i64,
}

/// Whether a plan judged on `new` may keep a proposal judged on `held` (both [`NewProposal::basis`]):
/// the caller's rule (the observer's keeps it unless a load's status changed in a way that
/// matters); [`same_basis`] where no rule is given.
pub type BasisKeeps = dyn Fn(&str, &str) -> bool;

/// The basis rule when none is given: the same text.
pub fn same_basis(held: &str, new: &str) -> bool {
    held == new
}

/// What saving a proposal of `(fingerprint, moves digest, basis)` at `now_ms` does to the
/// current one: the same placement judged on loads `keeps` accepts keeps it, with the same
/// moves always, with other moves while it is younger than `hold_ms`.
fn hold_of(
    current: &Current<'_>,
    p: (&str, &str, &str),
    now_ms: i64,
    hold_ms: i64,
    keeps: &BasisKeeps,
) -> Hold {
    let (fingerprint, digest, basis) = p;
    if current.fingerprint != fingerprint || !keeps(current.basis, basis) {
        Hold::New
    } else if current.digest == digest {
        Hold::Same
    } else if now_ms.saturating_sub(current.created_at_ms) < hold_ms {
        Hold::Held
    } else {
        Hold::New
    }
}

/// What saving a proposal would do to the current one ([`Store::proposal_hold`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Hold {
    /// No current proposal, or another placement, other load statuses, or the hold has passed:
    /// the plan becomes a new proposal.
    New,
    /// The current proposal has the same moves: it is re-checked with the new plan's figures.
    Same,
    /// The current proposal keeps its id and its (other) moves: it is re-checked with the
    /// figures of its own moves on the newest reading (`ballast_balancer::assess`).
    Held,
}

/// Re-checks the current proposal with `p` when `p` keeps it ([`hold_of`]): its check time,
/// decision, plan figures and detail become `p`'s, which the caller made of the moves the
/// proposal keeps ([`Hold::Held`]: the held moves assessed on the newest reading). Its id,
/// moves and digest stay. None: `p` is a new proposal (nothing was changed).
fn recheck(
    tx: &rusqlite::Transaction<'_>,
    p: &NewProposal,
    detail_json: &str,
    now_ms: i64,
    hold_ms: i64,
    keeps: &BasisKeeps,
) -> Result<Option<SavedProposal>, StoreError> {
    let current: Option<(String, String, String, String, i64)> = tx
        .prepare_cached(
            "SELECT id, fingerprint, moves_digest, basis, created_at_ms
             FROM proposals WHERE current = 1",
        )?
        .query_row([], |r| {
            Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?))
        })
        .optional()?;
    let Some((id, fingerprint, digest, basis, created)) = current else {
        return Ok(None);
    };
    let current = Current {
        fingerprint: &fingerprint,
        digest: &digest,
        basis: &basis,
        created_at_ms: created,
    };
    if hold_of(
        &current,
        (&p.fingerprint, &p.moves_digest, &p.basis),
        now_ms,
        hold_ms,
        keeps,
    ) == Hold::New
    {
        return Ok(None);
    }
    let bytes = to_i64("estimated_bytes", p.estimated_bytes)?;
    tx.prepare_cached(
        "UPDATE proposals SET checked_at_ms = ?2, decision = ?3, application_allowed = ?4,
            recommended = ?5, estimated_bytes = ?6, plan = ?7, detail = ?8 WHERE id = ?1",
    )?
    .execute(params![
        id,
        now_ms.max(created),
        json_text(&p.decision),
        p.application_allowed,
        p.recommended,
        bytes,
        json_text(&p.plan),
        detail_json,
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

    /// Makes `p` the current proposal at `now_ms`. When the current one has the same fingerprint,
    /// basis and moves, it is re-checked with `p`'s figures (its id and moves stay). Otherwise `p` is added as the
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
    /// unchanged (same fingerprint), its loads have the same statuses (same basis) and it was
    /// created less than `hold_ms` ago, it keeps its id and its moves even when `p`'s moves
    /// differ (a plan of the same placement under slightly different loads); its check time,
    /// decision, figures and detail become `p`'s, which the caller made of the held moves
    /// ([`Hold::Held`]). A changed placement or basis, or the hold passing, makes `p` the
    /// current one.
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
        self.save_proposal_judged(p, detail_json, now_ms, keep, hold_ms, &same_basis)
    }

    /// [`Store::save_proposal_with_detail`] with the caller's rule for which bases keep the
    /// current proposal (`keeps(held basis, new basis)`).
    pub fn save_proposal_judged(
        &self,
        p: &NewProposal,
        detail_json: &str,
        now_ms: i64,
        keep: usize,
        hold_ms: i64,
        keeps: &BasisKeeps,
    ) -> Result<SavedProposal, StoreError> {
        require_non_empty("id", &p.id)?;
        if serde_json::from_str::<serde::de::IgnoredAny>(detail_json).is_err() {
            return Err(StoreError::Invalid("detail is not JSON".into()));
        }
        let moves = to_i64("moves", p.moves)?;
        let bytes = to_i64("estimated_bytes", p.estimated_bytes)?;
        let keep = i64::try_from(keep.max(1)).unwrap_or(i64::MAX);
        self.write(|tx| {
            if let Some(saved) = recheck(tx, p, detail_json, now_ms, hold_ms, keeps)? {
                return Ok(saved);
            }
            tx.prepare_cached("UPDATE proposals SET current = 0 WHERE current = 1")?
                .execute([])?;
            tx.prepare_cached(
                "INSERT INTO proposals (id, created_at_ms, checked_at_ms, current, fingerprint,
                    moves_digest, recommended, application_allowed, moves, estimated_bytes,
                    balance_hold, plan, decision, detail, basis)
                 VALUES (?1, ?2, ?2, 1, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)",
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
                p.basis,
            ])?;
            tx.prepare_cached(
                "DELETE FROM proposals WHERE current = 0 AND id NOT IN
                    (SELECT id FROM proposals ORDER BY created_at_ms DESC, id DESC LIMIT ?1)",
            )?
            .execute([keep])?;
            Ok(SavedProposal::Inserted { id: p.id.clone() })
        })
    }

    /// What saving a proposal of `fingerprint`, `moves_digest` and `basis` at `now_ms` would do
    /// to the current one ([`Hold`]). Reads only: the observer asks while it plans, to know
    /// whose figures the re-check needs (the new plan's, or the held moves' on this reading).
    pub fn proposal_hold(
        &self,
        fingerprint: &str,
        moves_digest: &str,
        basis: &str,
        now_ms: i64,
        hold_ms: i64,
        keeps: &BasisKeeps,
    ) -> Result<Hold, StoreError> {
        let conn = self.conn()?;
        let current: Option<(String, String, String, i64)> = conn
            .prepare_cached(
                "SELECT fingerprint, moves_digest, basis, created_at_ms
                 FROM proposals WHERE current = 1",
            )?
            .query_row([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)))
            .optional()?;
        Ok(match current {
            None => Hold::New,
            Some((f, d, b, created)) => hold_of(
                &Current {
                    fingerprint: &f,
                    digest: &d,
                    basis: &b,
                    created_at_ms: created,
                },
                (fingerprint, moves_digest, basis),
                now_ms,
                hold_ms,
                keeps,
            ),
        })
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

    /// The current proposal's moves as the stored JSON text (its plan's `moves`), without
    /// reading its detail or the rest of its plan; None before the first proposal.
    pub fn current_proposal_moves(&self) -> Result<Option<String>, StoreError> {
        let conn = self.conn()?;
        let mut stmt = conn.prepare_cached(
            "SELECT json(json_extract(plan, '$.moves')) FROM proposals WHERE current = 1",
        )?;
        Ok(stmt
            .query_row([], |r| r.get::<_, Option<String>>(0))
            .optional()?
            .flatten())
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
