//! The agent doors' entry to the catalog of operations. Every operation is declared once in
//! `ballast_ops::catalog` (name, category, scope, licence, input schema, check, how it runs),
//! and run there by [`invoke`] (re-exported): the scope from the declaration, the licence gate
//! from the operation context's licence (this process's licence runtime, the verdict the REST
//! layer gives its route), the input check, then the run over the context. This module adds only
//! what the web process owns:
//! - [`caller`]: the identity a door verified, as the catalog's `Caller`;
//! - the refusals of this process's REST layer (its envelope) in the words
//!   agents are given.
//!
//! MCP (`crate::mcp`) and chat (`crate::chat`) look operations up, queue mutations for approval
//! and present the result; they call nothing but [`invoke`].

pub use ballast_ops::catalog::{
    admit, all, envelope, find, invoke, kept, licence_gate, limited, parse, schema_of, Caller,
    Category, Channel, Limit, ListInput, OpFuture, Operation, Run, TokenInput, ToolError,
};

use crate::auth::Identity;
use crate::ApiError;

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
