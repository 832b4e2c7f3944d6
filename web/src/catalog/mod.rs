//! The catalog of operations (docs/api/mcp.md): every operation agents (MCP, chat) and the REST
//! API share is declared here once — name, category and area, scope, licensed or free, a typed
//! input whose JSON Schema is derived from the type, and one function that does the work.
//!
//! Where the rules live: in the **operation function** (`async fn(&AppState, &Actor, Input) ->
//! Result<Output, ApiError>`, next to its REST adapter in `routes/`): validation, the mutation
//! slot, the pre-flight and the audit event. It takes no HTTP type. Every door is an adapter over
//! it, and holds no rule of its own:
//! - the REST handler extracts `Path`/`Query`/`Json` into the input, calls the function and wraps
//!   the answer in the envelope (scope and licence come from the router's layers);
//! - [`invoke`] runs an operation for an agent: the scope from the operation's declaration, the
//!   licence gate from its `licensed` flag (the same verdict the REST layer uses), then its `run`,
//!   which maps the agent's input onto the function's, calls it with the caller's [`Actor`]
//!   (`MCP`: approver as `userId`, requester as `requestedBy`; `CHAT`: the user) and shapes the
//!   answer for agents (row limits, envelopes, omissions: declared here, per operation, once).
//! MCP (`crate::mcp`) and chat (`crate::chat`) look operations up, queue mutations for approval
//! and present the result; they call nothing but [`invoke`].

mod changes;
mod limits;
mod ops;
mod reads;

use std::future::Future;
use std::pin::Pin;

use axum::http::Method;
use serde_json::{Map, Value};

pub use limits::{envelope, limited, Limit};
pub use ops::{ListInput, TokenInput};

use crate::audit::Actor;
use crate::auth::{Identity, Scope};
use crate::{ApiError, AppState};

/// What an operation does, as agents see it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Category {
    /// Reads; runs at once.
    Read,
    /// Changes the cluster or ballast; queued for a second person's approval over MCP.
    Mutate,
    /// The approval workflow itself.
    Meta,
}

impl Category {
    pub fn as_str(self) -> &'static str {
        match self {
            Category::Read => "read",
            Category::Mutate => "mutate",
            Category::Meta => "meta",
        }
    }
}

/// Through which door a caller came: recorded as the audit event's `method`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Channel {
    /// An MCP tool, run on approval: `userId` is the approver, `requestedBy` the requester.
    Mcp { requested_by: String },
    /// A tool the chat assistant called for its user, who approved it when it changes something:
    /// `userId` and `requestedBy` are that user.
    Chat { user: String },
}

impl Channel {
    /// The audit `method`.
    pub fn method(&self) -> &'static str {
        match self {
            Channel::Mcp { .. } => "MCP",
            Channel::Chat { .. } => "CHAT",
        }
    }

    /// The audit `requestedBy`.
    pub fn requested_by(&self) -> &str {
        match self {
            Channel::Mcp { requested_by } => requested_by,
            Channel::Chat { user } => user,
        }
    }
}

/// Who runs an operation, and through which door.
#[derive(Debug, Clone)]
pub struct Caller {
    pub identity: Identity,
    pub channel: Channel,
}

impl Caller {
    /// The audit side of a run: the channel's method, this identity as `userId`, the requester.
    pub fn actor(&self) -> Actor {
        Actor {
            method: self.channel.method().to_string(),
            user: self.identity.user_id.clone(),
            requested_by: Some(self.channel.requested_by().to_string()),
        }
    }
}

/// Why an operation did not run or failed, with the API's words.
#[derive(Debug, Clone, PartialEq)]
pub struct OpError {
    /// HTTP-like status (400 bad input, 403 licence or scope, 404, 409, 503, ...).
    pub status: u16,
    /// `LICENSE_INVALID` / `LICENSE_EXPIRED` for the licence gate, else a short code.
    pub code: String,
    pub message: String,
}

impl OpError {
    pub fn invalid(message: impl Into<String>) -> OpError {
        OpError {
            status: 400,
            code: "INVALID_INPUT".into(),
            message: message.into(),
        }
    }

    fn from_problem(p: crate::ui::Problem) -> OpError {
        let code = match (&p.code, p.status) {
            (Some(code), _) => code.clone(),
            (None, 400) => "INVALID_INPUT".into(),
            (None, 401) => "UNAUTHENTICATED".into(),
            (None, 403) => "FORBIDDEN".into(),
            (None, 404) => "NOT_FOUND".into(),
            (None, 409) => "CONFLICT".into(),
            (None, 503) => "UNAVAILABLE".into(),
            (None, _) => "FAILED".into(),
        };
        OpError {
            status: p.status,
            code,
            message: p.message(),
        }
    }
}

/// An operation function's refusal, in the words the REST envelope gives it.
impl From<ApiError> for OpError {
    fn from(e: ApiError) -> OpError {
        OpError::from_problem(crate::ui::Problem::new(
            e.status.as_u16(),
            e.error,
            e.details,
        ))
    }
}

/// The licence gate's refusal: its code (`LICENSE_INVALID` / `LICENSE_EXPIRED`), status 403.
impl From<crate::envelope::LicenseError> for OpError {
    fn from(e: crate::envelope::LicenseError) -> OpError {
        OpError {
            status: 403,
            code: e.code.as_str().to_string(),
            message: e.message,
        }
    }
}

/// Whether a licensed operation may run or be requested now: the licence gate the REST layer
/// applies to its route (`license::status`), for every agent door. When the licence cannot be
/// read, that error.
pub async fn licence_gate(state: &AppState) -> Result<(), OpError> {
    let status = crate::license::status(state).await?;
    if status.allows_management() {
        Ok(())
    } else {
        Err(crate::license::refusal(&status).into())
    }
}

impl std::fmt::Display for OpError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.code, self.message)
    }
}

pub type OpFuture = Pin<Box<dyn Future<Output = Result<Value, OpError>> + Send>>;

/// One operation, declared once.
pub struct Operation {
    /// The MCP tool name (the spec's).
    pub name: &'static str,
    pub title: &'static str,
    pub category: Category,
    /// cluster, topics, groups, acls, quotas, messages, proposals, reassignments, brokers, audit
    pub area: &'static str,
    /// The scope a caller needs to run (or, for a mutation, to request) it.
    pub scope: Scope,
    /// Whether the licence gate applies (its REST route is in `license::licensed_routes`).
    pub licensed: bool,
    /// The REST route of the same operation, when it has one.
    pub rest: Option<(Method, &'static str)>,
    /// What an agent needs to know to use it.
    pub description: &'static str,
    /// The input's JSON Schema, derived from its type.
    pub schema: fn() -> Map<String, Value>,
    /// Parses and checks the input without doing anything: the summary of what will happen
    /// (mutations are checked before they are queued).
    pub check: fn(&Value) -> Result<String, OpError>,
    /// Does the work.
    pub run: fn(AppState, Caller, Value) -> OpFuture,
    /// For a mutation whose request can be refused on the live state before it is queued (run as
    /// the requester): `null` to queue it, else the answer to give instead (`apply_proposal`'s
    /// `status: blocked`).
    pub before_queue: Option<fn(AppState, Caller, Value) -> OpFuture>,
}

/// Every operation.
pub fn all() -> &'static [Operation] {
    ops::OPERATIONS
}

/// The operation named `name`.
pub fn find(name: &str) -> Option<&'static Operation> {
    all().iter().find(|op| op.name == name)
}

/// The derived JSON Schema of `T` as an object (what `tools/list` shows).
pub fn schema_of<T: schemars::JsonSchema>() -> Map<String, Value> {
    let schema = schemars::schema_for!(T);
    match serde_json::to_value(schema) {
        Ok(Value::Object(mut map)) => {
            map.remove("$schema");
            map.entry("type").or_insert(Value::String("object".into()));
            map.entry("properties").or_insert(Value::Object(Map::new()));
            map
        }
        _ => Map::new(),
    }
}

/// Parses an operation's input, naming the field that is wrong.
pub fn parse<T: serde::de::DeserializeOwned>(input: &Value) -> Result<T, OpError> {
    let input = if input.is_null() {
        Value::Object(Map::new())
    } else {
        input.clone()
    };
    serde_json::from_value(input).map_err(|e| OpError::invalid(e.to_string()))
}

/// An operation function's answer as the JSON agents get (the REST envelope's `data`).
pub(crate) fn answer<T: serde::Serialize, E: Into<ApiError>>(
    r: Result<T, E>,
) -> Result<Value, OpError> {
    let value = r.map_err(Into::into)?;
    serde_json::to_value(value).map_err(|e| OpError {
        status: 500,
        code: "FAILED".into(),
        message: format!("the answer could not be encoded: {e}"),
    })
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
) -> Result<Value, OpError> {
    if caller.identity.scope < op.scope {
        return Err(OpError {
            status: 403,
            code: "INSUFFICIENT_SCOPE".into(),
            message: format!(
                "{} needs the {} scope; {} has {}",
                op.name,
                op.scope.as_str(),
                caller.identity.user_id,
                caller.identity.scope.as_str()
            ),
        });
    }
    if op.licensed {
        licence_gate(state).await?;
    }
    // The input is checked here too, not only by the doors that queue it.
    (op.check)(&input)?;
    (op.run)(state.clone(), caller, input).await
}
