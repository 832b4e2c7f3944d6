//! The agent doors' entry to the catalog of operations. Every operation is declared once in
//! `ballast_ops::catalog` (name, category, scope, licence, input schema, check, how it runs);
//! this module adds only what the web process owns:
//! - [`invoke`], the one entry of every agent door (MCP, chat): the scope from the declaration
//!   (`ballast_ops::catalog::admit`), the licence gate from its `licensed` flag (the verdict the
//!   REST layer gives its route, read from this process's licence runtime), the input check,
//!   then the run over the operation context;
//! - the refusals of this process's layers (the REST envelope, the licence gate) in the words
//!   agents are given.
//!
//! MCP (`crate::mcp`) and chat (`crate::chat`) look operations up, queue mutations for approval
//! and present the result; they call nothing but [`invoke`].

pub use ballast_ops::catalog::{
    admit, all, envelope, find, limited, parse, schema_of, Caller, Category, Channel, Limit,
    ListInput, OpFuture, Operation, Run, TokenInput, ToolError,
};
use serde_json::Value;

use crate::auth::Identity;
use crate::{ApiError, AppState};

/// The caller an agent door runs an operation for: the identity it verified, through `channel`.
pub fn caller(identity: &Identity, channel: Channel) -> Caller {
    Caller {
        user: identity.user_id.clone(),
        scope: identity.scope,
        channel,
    }
}

/// A refusal of the REST layer, in the words of its envelope.
impl From<ApiError> for ToolError {
    fn from(e: ApiError) -> ToolError {
        ToolError::from_envelope(e.status.as_u16(), None, &e.error, &e.details)
    }
}

/// The licence gate's refusal: its code (`LICENSE_INVALID` / `LICENSE_EXPIRED`), status 403.
impl From<crate::envelope::LicenseError> for ToolError {
    fn from(e: crate::envelope::LicenseError) -> ToolError {
        ToolError {
            status: 403,
            code: e.code.as_str().to_string(),
            message: e.message,
        }
    }
}

/// Whether a licensed operation may run or be requested now: the licence gate the REST layer
/// applies to its route (`license::status`), for every agent door. When the licence cannot be
/// read, that error.
pub async fn licence_gate(state: &AppState) -> Result<(), ToolError> {
    let status = crate::license::status(state).await?;
    if status.allows_management() {
        Ok(())
    } else {
        Err(crate::license::refusal(&status).into())
    }
}

/// Runs `op` for `caller`, as every agent door does: the scope its declaration names, then the
/// licence gate when it is licensed (the verdict the REST layer gives its route, its error
/// status when the licence cannot be read), then the input check, then the operation. Nothing
/// runs when any of them refuses.
pub async fn invoke(
    op: &'static Operation,
    state: &AppState,
    caller: Caller,
    input: Value,
) -> Result<Value, ToolError> {
    admit(op, &caller)?;
    if op.licensed {
        licence_gate(state).await?;
    }
    // The input is checked here too, not only by the doors that queue it.
    (op.check)(&input)?;
    match op.run {
        Run::Context(run) => run(state.ops.clone(), caller, input).await,
        Run::Meta => Err(ToolError::invalid(
            "a meta tool is answered by the MCP endpoint",
        )),
    }
}
