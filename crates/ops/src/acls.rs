//! ACL bindings: `create_acls` (several bindings), `update_acl` (one binding replaced by
//! another) and `delete_acls` (what a filter matches), through the pipeline serialised on the
//! cluster's ACLs and audited (`acls.create`, `acls.update`, `acls.delete`).
//!
//! The audit event's `before` and `after` are `{"bindings": [...]}`: of the bindings the change
//! touched, those present before and after it. A revert makes the same bindings present or absent
//! again (`present`, `create_all`, `delete_all`, `read_back`, `to_json`, `from_json`).
//!
//! Input rules, before anything is sent: a binding names exactly one resource type, pattern type,
//! operation and permission type (the filter-only values `Any` and `Match` are refused), a
//! principal of the form `<type>:<name>`, and plain names (`crate::names::plain`); enum values
//! match ignoring case, `_` and `-`. A filter (`filter_of`, shared with the list of bindings)
//! takes the same values, `Any` matching everything.

use ballast_kafka::{
    AclBinding, AclFilter, AclOperation, AclPatternFilter, AclPatternType, AclPermissionType,
    AclResourceType, BrokerId, Client,
};
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use crate::actor::Actor;
use crate::cluster::{change_failed, item_failed, kafka_name, read_failed};
use crate::context::Context;
use crate::error::OpError;
use crate::pipeline::{Audited, Done, NotDone, Resource};
use crate::readback::{per_broker, until_shown, ReadBack};

/// Bindings per create request.
const MAX_BINDINGS: usize = 1000;

/// A binding as a caller writes it (the spec's ACL binding fields).
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct BindingInput {
    pub resource_type: String,
    pub resource_name: String,
    /// `Literal` (default) or `Prefixed`.
    pub pattern_type: Option<String>,
    /// `User:<name>` (any `<type>:<name>`).
    pub principal: String,
    /// Default `*` (any host).
    pub host: Option<String>,
    pub operation: String,
    pub permission_type: String,
}

/// A filter of bindings as a caller writes it (the query of `GET /api/v1/acls`); an absent or
/// empty value matches everything.
#[derive(Debug, Default, Clone, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Query {
    /// `User:<name>`.
    pub principal: Option<String>,
    /// `Topic`, `Group`, `Cluster`, `TransactionalId`, `DelegationToken`.
    pub resource_type: Option<String>,
    pub resource_name: Option<String>,
    /// `Literal` or `Prefixed`.
    pub pattern_type: Option<String>,
    pub operation: Option<String>,
    /// `Allow` or `Deny`.
    pub permission_type: Option<String>,
    pub host: Option<String>,
    /// Rows of a list (a delete refuses it).
    pub limit: Option<u32>,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CreateResult {
    pub binding: AclBinding,
    /// Whether the binding exists after the request.
    pub created: bool,
    /// Whether it existed before (creating it again changes nothing).
    pub existed: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Created {
    pub count: usize,
    pub failed: usize,
    pub results: Vec<CreateResult>,
    /// Set when the cluster did not show the change in time (`created` is what it showed).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    #[serde(flatten)]
    pub audit: Audited,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Updated {
    pub from: AclBinding,
    pub to: AclBinding,
    #[serde(flatten)]
    pub audit: Audited,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Deleted {
    pub count: usize,
    pub deleted: Vec<AclBinding>,
    #[serde(flatten)]
    pub audit: Audited,
}

/// Enum values are matched ignoring case, `_` and `-` (`Topic`, `TOPIC`, `transactional_id`);
/// `Any` (or an absent parameter) matches everything.
fn normalize(v: &str) -> String {
    v.chars()
        .filter(|c| *c != '_' && *c != '-')
        .flat_map(char::to_lowercase)
        .collect()
}

fn invalid(param: &str, value: &str, allowed: &str) -> OpError {
    OpError::bad_input(
        "invalid query",
        format!("{param}: unknown value {value:?}; expected one of {allowed}"),
    )
}

/// The names a binding's fields take, as the API writes them (`ballast_model::acls`: the
/// parsers below, the OpenAPI document and the dashboard's forms all read these).
pub use ballast_model::acls::{OPERATIONS, PATTERN_TYPES, PERMISSIONS, RESOURCE_TYPES};

/// The operations in the order of [`OPERATIONS`].
const OPERATION_VALUES: [AclOperation; 14] = {
    use AclOperation::*;
    [
        All,
        Read,
        Write,
        Create,
        Delete,
        Alter,
        Describe,
        ClusterAction,
        DescribeConfigs,
        AlterConfigs,
        IdempotentWrite,
        CreateTokens,
        DescribeTokens,
        TwoPhaseCommit,
    ]
};

/// A resource type; `Any` is None.
pub fn resource_type(v: &str) -> Result<Option<AclResourceType>, OpError> {
    Ok(Some(match normalize(v).as_str() {
        "any" => return Ok(None),
        "topic" => AclResourceType::Topic,
        "group" => AclResourceType::Group,
        "cluster" => AclResourceType::Cluster,
        "transactionalid" => AclResourceType::TransactionalId,
        "delegationtoken" => AclResourceType::DelegationToken,
        "user" => AclResourceType::User,
        _ => {
            return Err(invalid(
                "resourceType",
                v,
                "Topic, Group, Cluster, TransactionalId, DelegationToken, User, Any",
            ))
        }
    }))
}

/// A pattern type, the filter's `Any` and `Match` included.
pub fn pattern_type(v: &str) -> Result<AclPatternFilter, OpError> {
    Ok(match normalize(v).as_str() {
        "any" => AclPatternFilter::Any,
        "match" => AclPatternFilter::Match,
        "literal" => AclPatternFilter::Literal,
        "prefixed" => AclPatternFilter::Prefixed,
        _ => return Err(invalid("patternType", v, "Literal, Prefixed, Match, Any")),
    })
}

/// An operation; `Any` is None.
pub fn operation(v: &str) -> Result<Option<AclOperation>, OpError> {
    let wanted = normalize(v);
    if wanted == "any" {
        return Ok(None);
    }
    OPERATIONS
        .iter()
        .position(|name| normalize(name) == wanted)
        .map(|i| Some(OPERATION_VALUES[i]))
        .ok_or_else(|| invalid("operation", v, &format!("{}, Any", OPERATIONS.join(", "))))
}

/// A permission type; `Any` is None.
pub fn permission_type(v: &str) -> Result<Option<AclPermissionType>, OpError> {
    Ok(Some(match normalize(v).as_str() {
        "any" => return Ok(None),
        "allow" => AclPermissionType::Allow,
        "deny" => AclPermissionType::Deny,
        _ => return Err(invalid("permissionType", v, "Allow, Deny, Any")),
    }))
}

/// An optional text filter; an empty value is no filter.
fn non_empty(value: &Option<String>) -> Option<String> {
    value.clone().filter(|v| !v.is_empty())
}

/// The cluster's filter of a query (its `limit` aside).
pub fn filter_of(q: &Query) -> Result<AclFilter, OpError> {
    let principal = non_empty(&q.principal);
    if let Some(p) = &principal {
        if !p.contains(':') {
            return Err(OpError::bad_input(
                "invalid query",
                format!("principal: expected the form User:<name>, got {p:?}"),
            ));
        }
    }
    Ok(AclFilter {
        resource_type: match non_empty(&q.resource_type) {
            Some(v) => resource_type(&v)?,
            None => None,
        },
        resource_name: non_empty(&q.resource_name),
        pattern_type: match non_empty(&q.pattern_type) {
            Some(v) => pattern_type(&v)?,
            None => AclPatternFilter::Any,
        },
        principal,
        host: non_empty(&q.host),
        operation: match non_empty(&q.operation) {
            Some(v) => operation(&v)?,
            None => None,
        },
        permission_type: match non_empty(&q.permission_type) {
            Some(v) => permission_type(&v)?,
            None => None,
        },
    })
}

/// Resource type, resource name, principal (as the MCP `list_acls`), then the rest for a total
/// order.
pub fn sort_key(b: &AclBinding) -> (String, String, String, String, String, String, String) {
    (
        format!("{:?}", b.resource_type),
        b.resource_name.clone(),
        b.principal.clone(),
        format!("{:?}", b.pattern_type),
        b.host.clone(),
        format!("{:?}", b.operation),
        format!("{:?}", b.permission_type),
    )
}

/// A name given in a binding (`crate::names::plain`).
fn check_name(what: &str, name: &str) -> Result<(), OpError> {
    crate::names::plain(what, name).map_err(|why| OpError::bad_input("invalid request", why))
}

/// A binding from its input form; the filter-only values (`Any`, `Match`) are refused.
pub fn binding(b: &BindingInput) -> Result<AclBinding, OpError> {
    let only_concrete = |field: &str, value: &str| {
        OpError::bad_input(
            "invalid binding",
            format!("{field}: {value:?} matches many values; a binding names exactly one"),
        )
    };
    check_name("resourceName", &b.resource_name)?;
    let (kind, name) = b.principal.split_once(':').unwrap_or_default();
    if kind.is_empty() || name.is_empty() {
        return Err(OpError::bad_input(
            "invalid binding",
            format!(
                "principal: expected the form User:<name>, got {:?}",
                b.principal
            ),
        ));
    }
    let host = b.host.clone().unwrap_or_else(|| "*".to_string());
    check_name("host", &host)?;
    let pattern = match b.pattern_type.as_deref() {
        None => AclPatternType::Literal,
        Some(v) => match pattern_type(v).map_err(to_binding_error)? {
            AclPatternFilter::Literal => AclPatternType::Literal,
            AclPatternFilter::Prefixed => AclPatternType::Prefixed,
            _ => return Err(only_concrete("patternType", v)),
        },
    };
    Ok(AclBinding {
        resource_type: resource_type(&b.resource_type)
            .map_err(to_binding_error)?
            .ok_or_else(|| only_concrete("resourceType", &b.resource_type))?,
        resource_name: b.resource_name.clone(),
        pattern_type: pattern,
        principal: b.principal.clone(),
        host,
        operation: operation(&b.operation)
            .map_err(to_binding_error)?
            .ok_or_else(|| only_concrete("operation", &b.operation))?,
        permission_type: permission_type(&b.permission_type)
            .map_err(to_binding_error)?
            .ok_or_else(|| only_concrete("permissionType", &b.permission_type))?,
    })
}

/// The filter's parsers answer "invalid query"; here the values come from a binding.
fn to_binding_error(e: OpError) -> OpError {
    OpError::bad_input("invalid binding", e.details)
}

/// A binding's error with `prefix: ` before its details (which binding of a request).
fn prefixed(prefix: &str, e: OpError) -> OpError {
    OpError::bad_input(e.error, format!("{prefix}: {}", e.details))
}

/// Whether each of `bindings` exists now, in order.
pub async fn present(
    ctx: &Context,
    client: &Client,
    bindings: &[AclBinding],
) -> Result<Vec<bool>, OpError> {
    present_via(ctx, client, None, bindings).await
}

/// Whether each of `bindings` exists as `broker` shows them (None: any broker), in order.
async fn present_via(
    ctx: &Context,
    client: &Client,
    broker: Option<BrokerId>,
    bindings: &[AclBinding],
) -> Result<Vec<bool>, OpError> {
    let mut out = Vec::with_capacity(bindings.len());
    for b in bindings {
        let filter = AclFilter::exact(b);
        let found = match broker {
            Some(id) => client.describe_acls_at(id, &filter).await,
            None => client.describe_acls(&filter).await,
        }
        .map_err(|e| change_failed(&ctx.kafka, e))?;
        out.push(found.contains(b));
    }
    Ok(out)
}

/// Creates `bindings`; the first refusal is the error.
pub async fn create_all(
    ctx: &Context,
    client: &Client,
    bindings: &[AclBinding],
) -> Result<(), OpError> {
    if bindings.is_empty() {
        return Ok(());
    }
    let results = client
        .create_acls(bindings)
        .await
        .map_err(|e| change_failed(&ctx.kafka, e))?;
    match results
        .iter()
        .find_map(|r| r.error.as_ref().map(|e| (r, e)))
    {
        Some((r, e)) => Err(item_failed(
            &format!("creating {}", describe(&r.binding)),
            e,
        )),
        None => Ok(()),
    }
}

/// Deletes exactly `bindings`; the first refusal is the error.
pub async fn delete_all(
    ctx: &Context,
    client: &Client,
    bindings: &[AclBinding],
) -> Result<(), OpError> {
    if bindings.is_empty() {
        return Ok(());
    }
    let filters: Vec<AclFilter> = bindings.iter().map(AclFilter::exact).collect();
    let results = client
        .delete_acls(&filters)
        .await
        .map_err(|e| change_failed(&ctx.kafka, e))?;
    match results.iter().find_map(|r| r.error.as_ref()) {
        Some(e) => Err(item_failed("deleting acl bindings", e)),
        None => Ok(()),
    }
}

/// One line naming a binding, for error details.
pub fn describe(b: &AclBinding) -> String {
    format!(
        "{:?} {} on {:?}:{} ({:?}) from {} {:?}",
        b.permission_type,
        b.principal,
        b.resource_type,
        b.resource_name,
        b.pattern_type,
        b.host,
        b.operation
    )
}

/// The audit shape of a set of bindings (sorted as the list endpoint sorts).
pub fn to_json(bindings: &[AclBinding]) -> Value {
    let mut sorted = bindings.to_vec();
    sorted.sort_by_cached_key(sort_key);
    sorted.dedup();
    json!({ "bindings": sorted })
}

/// Bindings back from the audit shape; None when `v` is not that shape.
pub fn from_json(v: &Value) -> Option<Vec<AclBinding>> {
    v.get("bindings")?
        .as_array()?
        .iter()
        .map(|b| {
            let input: BindingInput = serde_json::from_value(b.clone()).ok()?;
            binding(&input).ok()
        })
        .collect()
}

fn dedup(mut bindings: Vec<AclBinding>) -> Vec<AclBinding> {
    let mut seen = std::collections::HashSet::new();
    bindings.retain(|b| seen.insert(b.clone()));
    bindings
}

/// Whether each of `bindings` exists, once the cluster shows `expected` (or what it shows when
/// `BALLAST_READBACK_TIMEOUT` passes, with a note).
pub async fn read_back(
    ctx: &Context,
    client: &Client,
    bindings: &[AclBinding],
    expected: Vec<bool>,
) -> ReadBack<Vec<bool>> {
    let wanted = expected.clone();
    until_shown(
        ctx,
        expected,
        || {
            per_broker(client, |broker| async move {
                present_via(ctx, client, Some(broker), bindings).await
            })
        },
        |now| *now == wanted,
    )
    .await
}

/// The audit target of a change of `affected` bindings.
fn target_of(affected: &[AclBinding]) -> String {
    match affected {
        [one] => format!("{:?}:{}", one.resource_type, one.resource_name),
        many => format!("{} acl bindings", many.len()),
    }
}

fn kept(bindings: &[AclBinding], present: &[bool]) -> Vec<AclBinding> {
    bindings
        .iter()
        .zip(present)
        .filter(|(_, p)| **p)
        .map(|(b, _)| b.clone())
        .collect()
}

/// The operation `create_acls`: creates the bindings (each validated before any is sent; one that
/// exists stays as it is; the cluster may still refuse some, each result says); audited
/// `acls.create` with the bindings before and after.
pub async fn create_acls(
    ctx: &Context,
    actor: &Actor,
    bindings: Vec<BindingInput>,
) -> Result<Created, OpError> {
    if bindings.is_empty() {
        return Err(OpError::bad_input(
            "invalid request body",
            "bindings must list at least one binding",
        ));
    }
    if bindings.len() > MAX_BINDINGS {
        return Err(OpError::bad_input(
            "invalid request body",
            format!("at most {MAX_BINDINGS} bindings per request"),
        ));
    }
    let bindings = dedup(
        bindings
            .iter()
            .enumerate()
            .map(|(i, b)| binding(b).map_err(|e| prefixed(&format!("bindings[{i}]"), e)))
            .collect::<Result<Vec<_>, _>>()?,
    );
    let client = ctx.kafka.client().await?;
    let mut event = actor.event(ctx.clock.now_ms(), "acls.create", target_of(&bindings));
    event.summary = json!({ "bindings": bindings.len() });
    let ((existed, results, now, note), recorded) = ctx
        .pipeline
        .run([Resource::Acls], event, || async {
            let existed = present(ctx, &client, &bindings)
                .await
                .map_err(NotDone::Refused)?;
            let results = client
                .create_acls(&bindings)
                .await
                .map_err(|e| NotDone::Refused(change_failed(&ctx.kafka, e)))?;
            if let Some(e) = results
                .iter()
                .filter_map(|r| r.error.as_ref())
                .next()
                .filter(|_| results.iter().all(|r| r.error.is_some()))
            {
                // Nothing was created: the first refusal is the answer, nothing to audit.
                return Err(NotDone::Refused(item_failed("creating acl bindings", e)));
            }
            // Read back once the cluster shows every binding it accepted (KRaft brokers apply
            // ACLs a moment after the controller).
            let expected: Vec<bool> = existed
                .iter()
                .zip(&results)
                .map(|(existed, r)| *existed || r.error.is_none())
                .collect();
            let ReadBack { value: now, note } = read_back(ctx, &client, &bindings, expected).await;
            let before = to_json(&kept(&bindings, &existed));
            let after = to_json(&kept(&bindings, &now));
            Ok(Done::new(
                (existed, results, now, note.clone()),
                Some(before),
                Some(after),
            )
            .noted(note))
        })
        .await?;
    let audit = Audited::from(recorded);
    let results: Vec<CreateResult> = results
        .into_iter()
        .zip(existed.iter().zip(&now))
        .map(|(r, (existed, now))| CreateResult {
            binding: r.binding,
            created: *now,
            existed: *existed,
            error: r.error.map(|e| e.to_string()),
        })
        .collect();
    Ok(Created {
        note,
        count: results.iter().filter(|r| r.created).count(),
        failed: results.iter().filter(|r| r.error.is_some()).count(),
        results,
        audit,
    })
}

/// The operation `update_acl`: replaces the binding `from` (it must exist: 404 otherwise) by
/// `to`, creating `to` first and then deleting `from`; audited `acls.update` with both bindings
/// before and after. When `to` was created but `from` could not be deleted, both stay, the event
/// records that (status 207) and the answer is the deletion's error naming the event.
pub async fn update_acl(
    ctx: &Context,
    actor: &Actor,
    from: BindingInput,
    to: BindingInput,
) -> Result<Updated, OpError> {
    let from = binding(&from).map_err(|e| prefixed("from", e))?;
    let to = binding(&to).map_err(|e| prefixed("to", e))?;
    if from == to {
        return Err(OpError::bad_input(
            "invalid request body",
            "from and to are the same binding",
        ));
    }
    let affected = vec![from.clone(), to.clone()];
    let client = ctx.kafka.client().await?;
    let mut event = actor.event(ctx.clock.now_ms(), "acls.update", target_of(&affected));
    event.summary = json!({ "from": from, "to": to });
    let (deleted, recorded) = ctx
        .pipeline
        .run([Resource::Acls], event, || async {
            let existed = present(ctx, &client, &affected)
                .await
                .map_err(NotDone::Refused)?;
            if !existed[0] {
                return Err(NotDone::Refused(OpError::not_found(
                    "unknown acl binding",
                    format!("no binding {} exists", describe(&from)),
                )));
            }
            create_all(ctx, &client, std::slice::from_ref(&to))
                .await
                .map_err(NotDone::Refused)?;
            let deleted = delete_all(ctx, &client, std::slice::from_ref(&from)).await;
            let ReadBack { value: now, note } =
                read_back(ctx, &client, &affected, vec![deleted.is_err(), true]).await;
            let before = to_json(&kept(&affected, &existed));
            let after = to_json(&kept(&affected, &now));
            let mut done = Done::new(deleted, Some(before), Some(after)).noted(note);
            if done.value.is_err() {
                // `to` was created but `from` stayed: the event records both present.
                done.status = 207;
            }
            Ok(done)
        })
        .await?;
    let audit = Audited::from(recorded);
    // `to` was created but `from` stayed: the event records both present; say so.
    deleted.map_err(|e| {
        OpError::new(
            e.kind,
            e.error,
            format!(
                "{} (the new binding was created and the old one kept; audit event {:?})",
                e.details, audit.audit_event_id
            ),
        )
    })?;
    Ok(Updated { from, to, audit })
}

/// The operation `delete_acls`: deletes every binding the filter matches (a filter naming neither
/// a principal, a resource type nor a resource name is refused: it would match everything; so is
/// a `limit`); audited `acls.delete`.
pub async fn delete_acls(ctx: &Context, actor: &Actor, q: Query) -> Result<Deleted, OpError> {
    if q.limit.is_some() {
        return Err(OpError::bad_input(
            "invalid query",
            "limit: a delete removes every matching binding; narrow the filter instead",
        ));
    }
    let filter = filter_of(&q)?;
    if filter.principal.is_none()
        && filter.resource_type.is_none()
        && filter.resource_name.is_none()
    {
        return Err(OpError::bad_input(
            "invalid query",
            "the filter would match every binding: give principal, resourceType or resourceName",
        ));
    }
    let client = ctx.kafka.client().await?;
    let matched = client
        .describe_acls(&filter)
        .await
        .map_err(|e| change_failed(&ctx.kafka, e))?;
    if matched.is_empty() {
        return Err(OpError::not_found(
            "no acl binding matches",
            "the filter matches no binding; nothing was deleted",
        ));
    }
    let mut event = actor.event(ctx.clock.now_ms(), "acls.delete", target_of(&matched));
    event.summary = json!({ "filter": filter, "matched": matched.len() });
    let (deleted, recorded) = ctx
        .pipeline
        .run([Resource::Acls], event, || async {
            let results = client
                .delete_acls(std::slice::from_ref(&filter))
                .await
                .map_err(|e| NotDone::Refused(change_failed(&ctx.kafka, e)))?;
            let mut deleted: Vec<AclBinding> = Vec::new();
            for r in &results {
                if let Some(e) = &r.error {
                    return Err(NotDone::Refused(item_failed("deleting acl bindings", e)));
                }
                deleted.extend(
                    r.deleted
                        .iter()
                        .filter(|d| d.error.is_none())
                        .map(|d| d.binding.clone()),
                );
            }
            deleted.sort_by_cached_key(sort_key);
            if deleted.is_empty() {
                return Err(NotDone::Refused(OpError::not_found(
                    "no acl binding matches",
                    "the bindings the filter matched were gone before the delete; nothing was deleted",
                )));
            }
            let before = to_json(&deleted);
            Ok(Done::new(deleted, Some(before), Some(to_json(&[]))))
        })
        .await?;
    let audit = Audited::from(recorded);
    Ok(Deleted {
        count: deleted.len(),
        deleted,
        audit,
    })
}

/// Rows of `list_acls`: default and maximum (as the MCP `list_acls`).
const LIST_DEFAULT: usize = 100;
const LIST_MAX: usize = 500;

/// What `list_acls` answers.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct AclList {
    pub count: usize,
    pub total: usize,
    pub truncated: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hint: Option<String>,
    /// False when the cluster has no authorizer (Kafka answers SECURITY_DISABLED): there are no
    /// ACLs and every principal may do everything.
    pub authorizer_enabled: bool,
    pub bindings: Vec<AclBinding>,
}

/// The operation `list_acls`: the bindings matching the filters, in [`sort_key`] order.
pub async fn list_acls(ctx: &Context, q: Query) -> Result<AclList, OpError> {
    let limit = crate::page::row_limit(q.limit, LIST_DEFAULT, LIST_MAX);
    let filter = filter_of(&q)?;
    let client = ctx.kafka.client().await?;
    let mut bindings = match client.describe_acls(&filter).await {
        Ok(b) => b,
        Err(e) if kafka_name(&e) == Some("SECURITY_DISABLED") => {
            return Ok(AclList {
                count: 0,
                total: 0,
                truncated: false,
                hint: None,
                authorizer_enabled: false,
                bindings: Vec::new(),
            })
        }
        Err(e) => return Err(read_failed(&ctx.kafka, e)),
    };
    bindings.sort_by_cached_key(sort_key);
    let total = bindings.len();
    bindings.truncate(limit);
    let truncated = total > bindings.len();
    Ok(AclList {
        count: bindings.len(),
        total,
        truncated,
        hint: truncated.then(|| {
            format!(
                "narrow with principal, resourceType, resourceName or operation, or raise limit (at most {LIST_MAX})"
            )
        }),
        authorizer_enabled: true,
        bindings,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_operation_names_are_the_operations_debug_names() {
        for (name, value) in OPERATIONS.iter().zip(OPERATION_VALUES) {
            assert_eq!(*name, format!("{value:?}"));
        }
    }
    use crate::error::Kind;

    fn body(v: Value) -> BindingInput {
        serde_json::from_value(v).unwrap()
    }

    fn query(pairs: &[(&str, &str)]) -> Query {
        let map: serde_json::Map<String, Value> = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), Value::String(v.to_string())))
            .collect();
        serde_json::from_value(Value::Object(map)).unwrap()
    }

    #[test]
    fn a_binding_defaults_to_literal_any_host_and_refuses_filter_values() {
        let b = binding(&body(json!({
            "resourceType": "Topic", "resourceName": "orders", "principal": "User:alice",
            "operation": "Read", "permissionType": "Allow"
        })))
        .unwrap();
        assert_eq!(b.pattern_type, AclPatternType::Literal);
        assert_eq!(b.host, "*");
        assert_eq!(b.resource_type, AclResourceType::Topic);
        assert_eq!(b.operation, AclOperation::Read);
        assert_eq!(b.permission_type, AclPermissionType::Allow);
        for (field, value) in [
            ("resourceType", "Any"),
            ("patternType", "Match"),
            ("operation", "Any"),
            ("permissionType", "Any"),
            ("principal", "alice"),
            ("resourceName", ""),
            ("operation", "Eat"),
        ] {
            let mut v = json!({
                "resourceType": "Topic", "resourceName": "orders", "principal": "User:alice",
                "operation": "Read", "permissionType": "Allow"
            });
            v[field] = json!(value);
            let err = binding(&body(v)).unwrap_err();
            assert_eq!(err.kind, Kind::BadInput, "{field}");
            assert!(err.details.contains(field), "{field}: {}", err.details);
        }
    }

    #[test]
    fn the_audit_shape_round_trips() {
        let b = binding(&body(json!({
            "resourceType": "Group", "resourceName": "app-", "patternType": "Prefixed",
            "principal": "User:bob", "host": "10.0.0.1", "operation": "Describe",
            "permissionType": "Deny"
        })))
        .unwrap();
        assert_eq!(from_json(&to_json(std::slice::from_ref(&b))), Some(vec![b]));
    }

    #[test]
    fn enum_values_match_ignoring_case_and_separators() {
        let f = filter_of(&query(&[
            ("resourceType", "transactional_id"),
            ("patternType", "PREFIXED"),
            ("operation", "describeConfigs"),
            ("permissionType", "deny"),
        ]))
        .unwrap();
        assert_eq!(f.resource_type, Some(AclResourceType::TransactionalId));
        assert_eq!(f.pattern_type, AclPatternFilter::Prefixed);
        assert_eq!(f.operation, Some(AclOperation::DescribeConfigs));
        assert_eq!(f.permission_type, Some(AclPermissionType::Deny));
    }

    #[test]
    fn unknown_enum_values_and_bare_principals_are_refused() {
        for (k, v) in [
            ("resourceType", "Table"),
            ("patternType", "Suffixed"),
            ("operation", "Eat"),
            ("permissionType", "Maybe"),
            ("principal", "alice"),
        ] {
            let err = filter_of(&query(&[(k, v)])).unwrap_err();
            assert_eq!(err.kind, Kind::BadInput, "{k}={v}");
            assert!(err.details.contains(k), "{}", err.details);
        }
    }
}
