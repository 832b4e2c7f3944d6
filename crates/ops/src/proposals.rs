//! Stored proposals: `delete_proposal` removes one that is no longer current, through the
//! pipeline serialised per proposal and audited `proposals.delete` (before: the proposal's id,
//! times, fingerprint, moves and bytes).

use ballast_runtime::format_rfc3339_ms;
use ballast_schema::DeletedProposal;
use serde::Serialize;

use crate::actor::Actor;
use crate::context::Context;
use crate::error::OpError;
use crate::pipeline::{Done, NotDone, Resource};

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
