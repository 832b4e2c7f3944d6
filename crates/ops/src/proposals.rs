//! Stored proposals: the reads `list_proposals`, `get_proposal` and `generate_proposal` (the
//! answers rendered once per check by `proposal_view`), and `delete_proposal`, which removes one
//! that is no longer current, through the pipeline serialised per proposal and audited
//! `proposals.delete` (before: the proposal's id, times, fingerprint, moves and bytes).

use std::sync::Arc;

use ballast_runtime::format_rfc3339_ms;
use ballast_schema::{DeletedProposal, ProposalRecord};
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use crate::actor::Actor;
use crate::context::Context;
use crate::error::OpError;
use crate::pipeline::{Done, NotDone, Resource};
use crate::proposal_view::{self, Prepared};

/// Rows of `list_proposals` when no limit is given.
pub const DEFAULT_LIMIT: u64 = 50;
/// The most rows of `list_proposals` a page has (a larger limit is clamped).
pub const MAX_LIMIT: u64 = 500;

/// `list_proposals`' page.
#[derive(Debug, Default, Deserialize, utoipa::IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct ListQuery {
    /// Rows, default 50, at most 500 (absent or 0: the default; above: clamped).
    pub limit: Option<u64>,
    /// Rows to skip, default 0.
    pub offset: Option<u64>,
}

/// The operation `list_proposals`: a page of stored proposals, newest first, as summary rows
/// each with its own decision.
pub async fn list_proposals(ctx: &Context, q: ListQuery) -> Result<Value, OpError> {
    let limit = match q.limit {
        None | Some(0) => DEFAULT_LIMIT,
        Some(n) => n.min(MAX_LIMIT),
    };
    let offset = q.offset.unwrap_or(0);
    if i64::try_from(offset).is_err() {
        return Err(OpError::bad_input("invalid query", "offset: too large"));
    }
    let page = ctx.db(move |s| s.proposals(limit, offset)).await?;
    let rows: Vec<Value> = page.proposals.iter().map(proposal_view::summary).collect();
    let count = rows.len() as u64;
    Ok(json!({
        "total": page.total,
        "offset": offset,
        "count": count,
        "truncated": offset + count < page.total,
        "proposals": rows,
    }))
}

/// A proposal found: its head (this check) and its parsed plan.
pub struct Found {
    pub head: ProposalRecord,
    pub plan: Arc<Prepared>,
}

impl Found {
    /// The answer in another shape (the agents'), made once per check under `key` and kept as
    /// a value (a door that takes values copies it instead of parsing text).
    pub fn shaped(&self, key: &str, shape: impl FnOnce(Value) -> Value) -> Arc<crate::kept::Kept> {
        let (head, p) = (&self.head, &self.plan);
        p.shaped(head, key, || shape(proposal_view::full(head, p)))
    }

    /// The answer as JSON text, rendered once per check.
    pub fn full(&self) -> Arc<String> {
        let (head, p) = (&self.head, &self.plan);
        p.rendered(head, "full", || proposal_view::full(head, p).to_string())
    }
}

/// The proposal `id` (None: the current one), or its 404.
pub async fn load(ctx: &Context, id: Option<&str>) -> Result<Found, OpError> {
    match proposal_view::load(ctx, id).await? {
        Some((head, plan)) => Ok(Found { head, plan }),
        None => Err(match id {
            None => no_proposal(),
            Some(id) => unknown(id),
        }),
    }
}

/// `current` names the current proposal.
pub fn named(id: &str) -> Option<&str> {
    (id != "current").then_some(id)
}

/// The operation `generate_proposal`: the current candidate proposal and its decision (the web
/// process starts no calculation; the observer re-evaluates after every sample).
pub async fn generate_proposal(ctx: &Context) -> Result<Found, OpError> {
    load(ctx, None).await
}

/// The operation `get_proposal`: one stored proposal (its summary and first moves); `current`
/// names the current one.
pub async fn get_proposal(ctx: &Context, id: String) -> Result<Found, OpError> {
    load(ctx, named(&id)).await
}

/// What `delete_proposal` answers.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Deleted {
    pub id: String,
    pub deleted: bool,
    /// The audit event's id; null when the event was lost.
    pub audit_event_id: Option<i64>,
    /// Why the event was lost (null otherwise).
    pub audit_error: Option<String>,
}

/// No proposal yet: the observer evaluates one after each successful sample.
pub fn no_proposal() -> OpError {
    OpError::not_found(
        "no proposal",
        "the observer has not evaluated a proposal yet (it does after each successful sample)",
    )
}

/// No stored proposal `id`.
pub fn unknown(id: &str) -> OpError {
    OpError::not_found("proposal not found", format!("no stored proposal {id:?}"))
}

/// The operation `delete_proposal`: deletes the stored proposal `id` unless it is the current one
/// (409 `proposal is current`; 404 when there is none).
pub async fn delete_proposal(ctx: &Context, actor: &Actor, id: String) -> Result<Deleted, OpError> {
    let event = actor.event(ctx.clock.now_ms(), "proposals.delete", id.clone());
    let (_, recorded) = ctx
        .pipeline
        .run([Resource::Proposal(id.clone())], event, || async {
            let key = id.clone();
            let record = ctx
                .db(move |s| s.proposal(&key))
                .await
                .map_err(NotDone::Refused)?
                .ok_or_else(|| NotDone::Refused(unknown(&id)))?;
            let before = serde_json::json!({
                "id": record.id,
                "createdAt": format_rfc3339_ms(record.created_at_ms),
                "checkedAt": format_rfc3339_ms(record.checked_at_ms),
                "fingerprint": record.fingerprint,
                "moves": record.moves,
                "estimatedBytes": record.estimated_bytes,
            });
            let key = id.clone();
            match ctx
                .db(move |s| s.delete_proposal(&key))
                .await
                .map_err(NotDone::Refused)?
            {
                DeletedProposal::Deleted => Ok(Done::new((), Some(before), None)),
                DeletedProposal::NotFound => Err(NotDone::Refused(unknown(&id))),
                DeletedProposal::Current => Err(NotDone::Refused(OpError::conflict(
                    "proposal is current",
                    format!(
                        "{id} is the current proposal, which the observer keeps re-checking; only \
                         proposals that are no longer current can be deleted"
                    ),
                ))),
            }
        })
        .await?;
    Ok(Deleted {
        id,
        deleted: true,
        audit_event_id: Some(recorded.event_id),
        audit_error: recorded.error,
    })
}
