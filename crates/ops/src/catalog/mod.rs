//! The catalog of operations (docs/api/mcp.md): every operation agents (MCP, chat) and the REST
//! API share is declared here once — name, category and area, scope, licensed or free, the REST
//! route of the same operation, a typed input whose JSON Schema is derived from the type, the
//! check a mutation's input passes before it is queued, how it runs, what it answers (its
//! [`Output`]: the named JSON Schema of [`outputs`]) and the refusals it gives ([`Refusal`]). The
//! web door's OpenAPI document takes a route's success answer and its own error statuses from the
//! declaration of the operation it serves.
//!
//! Where the rules live: in the **operation function** of its family (`quotas`, `acls`,
//! `reassignments`, …: `async fn(&Context, [&Actor,] Input) -> Result<Output, OpError>`) — the
//! validation, the serialisation, the audit and the change — and, for agents, in this catalog:
//! the row limits, envelopes and omissions of an agent's answer are declared here per operation,
//! once. Every door is an adapter:
//! - the REST handler extracts its input, calls the operation function and wraps the envelope;
//! - the agent doors (MCP, chat) look an operation up here and call [`invoke`]: it [`admit`]s
//!   the caller (its scope), applies the licence gate when it is `licensed` (the context's
//!   licence, the verdict the REST licence layer gives), [`Operation::check`]s the input and runs
//!   it.
//!
//! Every operation but the approval workflow runs over the operation [`Context`] alone
//! ([`Run::Context`]): its per-reading caches (the observed view rendered once per reading) and
//! its live reads shared in flight are the context's, so no door binds an operation of its own.
//! [`Run::Meta`] is the approval workflow the MCP door answers itself.

mod changes;
mod inputs;
mod limits;
mod list;
pub mod outputs;
mod reads;

use std::future::Future;
use std::pin::Pin;

use serde_json::{Map, Value};

pub use changes::{
    AclBinding, BulkConfigInput, BulkEntry, BulkReassignInput, CreateAclsInput, DeleteAclsInput,
    LogdirMove, MoveLogdirsInput, OffsetInput, QuotaEntityInput, QuotaInput,
    RedistributePartitionInput, ResetOffsetsInput, RevertInput, APPLY_WAIT,
};
pub use inputs::*;
pub use limits::{envelope, limited, Limit};
pub use reads::{answer_text, given, need, proposal_for_agents, proposal_id, reshape, rows};

use crate::actor::{Actor, Scope};
use crate::context::Context;
use crate::error::OpError;

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

/// Who runs an operation (the identity the door verified: its user and scope), and through
/// which door.
#[derive(Debug, Clone)]
pub struct Caller {
    pub user: String,
    pub scope: Scope,
    pub channel: Channel,
}

impl Caller {
    /// The audit side of a run: the channel's method, this identity as `userId`, the requester.
    pub fn actor(&self) -> Actor {
        Actor {
            method: self.channel.method().to_string(),
            user: self.user.clone(),
            requested_by: Some(self.channel.requested_by().to_string()),
        }
    }
}

/// Why an operation did not run or failed, as agents are told: the REST envelope's words.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolError {
    /// HTTP-like status (400 bad input, 403 licence or scope, 404, 409, 503, ...).
    pub status: u16,
    /// `LICENSE_INVALID` / `LICENSE_EXPIRED` for the licence gate, else a short code.
    pub code: String,
    pub message: String,
}

impl ToolError {
    pub fn invalid(message: impl Into<String>) -> ToolError {
        ToolError {
            status: 400,
            code: "INVALID_INPUT".into(),
            message: message.into(),
        }
    }

    /// A refusal as the REST envelope says it (`status`, `error`, `details`, and the licence
    /// gate's `code`): the code from the status when there is none, the message one line.
    pub fn from_envelope(status: u16, code: Option<&str>, error: &str, details: &str) -> ToolError {
        let head = match code {
            Some(code) => format!("{status} {code}: {error}"),
            None => format!("{status}: {error}"),
        };
        let code = match (code, status) {
            (Some(code), _) => code.to_string(),
            (None, 400) => "INVALID_INPUT".into(),
            (None, 401) => "UNAUTHENTICATED".into(),
            (None, 403) => "FORBIDDEN".into(),
            (None, 404) => "NOT_FOUND".into(),
            (None, 409) => "CONFLICT".into(),
            (None, 503) => "UNAVAILABLE".into(),
            (None, _) => "FAILED".into(),
        };
        let message = if details.is_empty() {
            head
        } else {
            format!("{head} — {details}")
        };
        ToolError {
            status,
            code,
            message,
        }
    }

    fn failed(message: String) -> ToolError {
        ToolError {
            status: 500,
            code: "FAILED".into(),
            message,
        }
    }
}

/// An operation function's refusal, in the words the REST envelope gives it.
impl From<OpError> for ToolError {
    fn from(e: OpError) -> ToolError {
        ToolError::from_envelope(e.kind.status(), None, &e.error, &e.details)
    }
}

impl std::fmt::Display for ToolError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.code, self.message)
    }
}

pub type OpFuture = Pin<Box<dyn Future<Output = Result<Value, ToolError>> + Send>>;

/// A run over the operation context.
pub type RunFn = fn(Context, Caller, Value) -> OpFuture;

/// A future of an operation's kept answer ([`KeptFn`]).
pub type KeptFuture =
    Pin<Box<dyn Future<Output = Result<crate::kept::KeptAnswer, ToolError>> + Send>>;

/// A read's answer as a [`crate::kept::Kept`], for a door that writes the answer's bytes itself:
/// for its common inputs the one kept once (per reading, read of every group or check of a
/// proposal), for another input one made for the call. The operation's `run` answers the same
/// value (it takes it from here).
pub type KeptFn = fn(Context, Value) -> KeptFuture;

/// How an operation runs.
#[derive(Clone, Copy)]
pub enum Run {
    /// Over the operation context alone.
    Context(RunFn),
    /// The approval workflow: answered by the MCP door itself.
    Meta,
}

/// What an operation answers when it succeeds: the status of its REST route's success and the
/// JSON Schema of the answer (the REST envelope's `data`, the agent's answer before the catalog
/// shapes it), named in [`outputs::all`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Output {
    /// 200, or 202 for an answer that was queued (a revert of a reassignment).
    pub status: u16,
    /// The answer's schema: a name of [`outputs::all`].
    pub schema: &'static str,
    /// What the answer is, in a few words.
    pub description: &'static str,
}

impl Output {
    /// The answer's JSON Schema (`None` when its name is not one of [`outputs::all`]).
    pub fn json_schema(&self) -> Option<Value> {
        outputs::find(self.schema)
    }
}

/// A 200 answer of the schema named `schema`.
pub const fn ok(schema: &'static str, description: &'static str) -> Option<Output> {
    Some(Output {
        status: 200,
        schema,
        description,
    })
}

/// A refusal an operation gives: its status (the REST route's, and a [`ToolError`]'s) and when.
/// The refusals every route shares (an unknown query parameter or a body where none is taken,
/// 400; authentication, 401; scope or licence, 403; a body too large, 413; a busy database or an
/// audit intent that cannot be written, 503; 500) are the doors' own, not declared here.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Refusal {
    pub status: u16,
    pub when: &'static str,
}

/// A refusal with `status` when `when`.
pub const fn refusal(status: u16, when: &'static str) -> Refusal {
    Refusal { status, when }
}

/// The live cluster answered with an error.
pub const CLUSTER_ERROR: Refusal = refusal(502, "The cluster answered with an error");
/// The live cluster could not be reached.
pub const CLUSTER_UNREACHABLE: Refusal = refusal(503, "The cluster is unreachable");
/// The observer has no current sample of the cluster.
pub const NO_SAMPLE: Refusal = refusal(
    503,
    "No current sample of the cluster (`cluster data unavailable`)",
);

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
    /// Whether the licence gate applies (its REST route is one of the licensed routes).
    pub licensed: bool,
    /// The REST route of the same operation (method, path), when it has one.
    pub rest: Option<(&'static str, &'static str)>,
    /// What an agent needs to know to use it.
    pub description: &'static str,
    /// The input's JSON Schema, derived from its type.
    pub schema: fn() -> Map<String, Value>,
    /// Parses and checks the input without doing anything: the summary of what will happen
    /// (mutations are checked before they are queued).
    pub check: fn(&Value) -> Result<String, ToolError>,
    /// Does the work.
    pub run: Run,
    /// For a mutation whose request can be refused on the live state before it is queued (run as
    /// the requester): `null` to queue it, else the answer to give instead (`apply_proposal`'s
    /// `status: blocked`).
    pub before_queue: Option<RunFn>,
    /// For a read whose answer to common inputs is kept once: that answer ([`kept`]).
    pub kept: Option<KeptFn>,
    /// What it answers: every operation with a REST route declares it; `None` only for the
    /// approval workflow ([`Run::Meta`]), which the MCP door answers itself.
    pub output: Option<Output>,
    /// The refusals of its own, in the order the route documents them.
    pub errors: &'static [Refusal],
}

/// Every operation.
pub fn all() -> &'static [Operation] {
    list::OPERATIONS
}

/// The operation named `name`.
pub fn find(name: &str) -> Option<&'static Operation> {
    all().iter().find(|op| op.name == name)
}

/// Whether `caller` may run (or request) `op`: the scope its declaration names.
pub fn admit(op: &Operation, caller: &Caller) -> Result<(), ToolError> {
    if caller.scope < op.scope {
        return Err(ToolError {
            status: 403,
            code: "INSUFFICIENT_SCOPE".into(),
            message: format!(
                "{} needs the {} scope; {} has {}",
                op.name,
                op.scope.as_str(),
                caller.user,
                caller.scope.as_str()
            ),
        });
    }
    Ok(())
}

/// Whether a licensed operation may run or be requested now: the verdict of the context's
/// licence (the web process's licence runtime, the source its REST licence layer asks too), as
/// the `LICENSE_INVALID` / `LICENSE_EXPIRED` refusal with status 403; when the licence cannot be
/// read, that error.
pub async fn licence_gate(ctx: &Context) -> Result<(), ToolError> {
    match ctx.licence.verdict(ctx).await? {
        Ok(()) => Ok(()),
        Err(refusal) => Err(ToolError {
            status: 403,
            code: refusal.code.to_string(),
            message: refusal.message,
        }),
    }
}

/// Runs `op` for `caller`, as every agent door does: the scope its declaration names
/// ([`admit`]), then the licence gate when it is licensed ([`licence_gate`]), then the input
/// check, then the operation over the context. Nothing runs when any of them refuses.
pub async fn invoke(
    op: &'static Operation,
    ctx: &Context,
    caller: Caller,
    input: Value,
) -> Result<Value, ToolError> {
    admit(op, &caller)?;
    if op.licensed {
        licence_gate(ctx).await?;
    }
    // The input is checked here too, not only by the doors that queue it.
    (op.check)(&input)?;
    match op.run {
        Run::Context(run) => run(ctx.clone(), caller, input).await,
        Run::Meta => Err(ToolError::invalid(
            "a meta tool is answered by the MCP endpoint",
        )),
    }
}

/// The answer of `op` to `input` as a kept answer ([`KeptFn`]), admitted, licensed and checked as
/// [`invoke`] does: `None` when `op` declares no `kept` (run it with [`invoke`]).
pub async fn kept(
    op: &'static Operation,
    ctx: &Context,
    caller: &Caller,
    input: Value,
) -> Result<Option<crate::kept::KeptAnswer>, ToolError> {
    let Some(kept) = op.kept else {
        return Ok(None);
    };
    admit(op, caller)?;
    if op.licensed {
        licence_gate(ctx).await?;
    }
    (op.check)(&input)?;
    kept(ctx.clone(), input).await.map(Some)
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
pub fn parse<T: serde::de::DeserializeOwned>(input: &Value) -> Result<T, ToolError> {
    let input = if input.is_null() {
        Value::Object(Map::new())
    } else {
        input.clone()
    };
    serde_json::from_value(input).map_err(|e| ToolError::invalid(e.to_string()))
}

/// An operation function's answer as the JSON agents get (the REST envelope's `data`).
pub fn answer<T: serde::Serialize, E: Into<ToolError>>(
    r: Result<T, E>,
) -> Result<Value, ToolError> {
    let value = r.map_err(Into::into)?;
    serde_json::to_value(value)
        .map_err(|e| ToolError::failed(format!("the answer could not be encoded: {e}")))
}

/// A future of an operation's run, boxed.
pub fn boxed<F>(f: F) -> OpFuture
where
    F: Future<Output = Result<Value, ToolError>> + Send + 'static,
{
    Box::pin(f)
}

/// A read or meta operation: nothing to check before it runs.
pub fn no_check(_: &Value) -> Result<String, ToolError> {
    Ok(String::new())
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use serde_json::json;

    use super::*;
    use crate::licence::{Fixed, Refusal};

    /// A context over a fresh database whose licence gives `licence` (no cluster behind it).
    fn context(dir: &std::path::Path, licence: Fixed) -> Context {
        let path = dir.join("ballast.db");
        ballast_schema::Store::migrate(&path).expect("migrate");
        let store = ballast_schema::Store::open(&path).expect("open");
        let raw = ballast_config::RawConfig::from_pairs(
            [("BALLAST_KAFKA_BOOTSTRAP_SERVERS", "127.0.0.1:9")]
                .map(|(k, v)| (k.to_string(), v.to_string())),
            None,
        )
        .expect("raw config");
        let config = ballast_config::Config::from_raw(&raw).expect("valid config");
        Context {
            kafka: crate::KafkaHandle::new(ballast_runtime::client_config(&config.kafka)),
            pipeline: crate::Pipeline::new(store.clone(), std::time::Duration::from_secs(1)),
            store,
            config: Arc::new(config),
            clock: Arc::new(ballast_runtime::SystemClock),
            flights: Arc::default(),
            licence: Arc::new(licence),
        }
    }

    fn writer() -> Caller {
        Caller {
            user: "alice".into(),
            scope: Scope::Write,
            channel: Channel::Chat {
                user: "alice".into(),
            },
        }
    }

    #[tokio::test]
    async fn a_licensed_operation_gets_the_context_licences_refusal_before_its_input_is_checked() {
        let dir = tempfile::tempdir().expect("dir");
        let expired = Fixed(Err(Refusal {
            code: "LICENSE_EXPIRED",
            message: "license expired".into(),
        }));
        let ctx = context(dir.path(), expired);
        let op = find("update_topic_config").expect("declared");
        assert!(op.licensed);
        // Input that breaks the schema: the licence answers first, nothing is checked or run.
        let refused = invoke(op, &ctx, writer(), json!({"topic": "t", "configs": 5}))
            .await
            .expect_err("refused");
        assert_eq!(
            (refused.status, refused.code.as_str()),
            (403, "LICENSE_EXPIRED")
        );
        assert_eq!(
            licence_gate(&ctx).await.expect_err("refused").code,
            "LICENSE_EXPIRED"
        );
    }

    #[tokio::test]
    async fn with_a_licence_the_gate_passes_and_a_free_operation_runs_without_one() {
        let dir = tempfile::tempdir().expect("dir");
        let licensed = context(dir.path(), Fixed::licensed());
        let op = find("update_topic_config").expect("declared");
        let past_gate = invoke(op, &licensed, writer(), json!({"topic": "t", "configs": 5}))
            .await
            .expect_err("bad input");
        assert_eq!(
            past_gate.status, 400,
            "the input check answered: {past_gate}"
        );

        let other = tempfile::tempdir().expect("dir");
        let unlicensed = context(other.path(), Fixed::unlicensed());
        let free = find("search_audit_log").expect("declared");
        assert!(!free.licensed);
        let answer = invoke(free, &unlicensed, writer(), json!({}))
            .await
            .expect("a free read runs in monitoring mode");
        assert!(answer.get("events").is_some(), "{answer}");
    }
}
