//! ACL bindings: create (`POST`), replace one binding by another (`PUT`), delete what a filter
//! matches (`DELETE`, the filter in the query as for `GET /api/v1/acls`).
//!
//! The audit event's `before` and `after` are `{"bindings": [...]}`: of the bindings the change
//! touched, those present before and after it. A revert makes the same bindings present or absent
//! again.

use axum::extract::State;
use ballast_kafka::{AclBinding, AclFilter, AclPatternFilter, AclPatternType, BrokerId, Client};
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use super::super::live::acls::{
    filter_of, operation, pattern_type, permission_type, resource_type, sort_key, AclQuery,
};
use super::readback::{per_broker, until_shown, ReadBack};
use super::{check_name, fail, item_fail};
use crate::audit::{Actor, Audited};
use crate::extract::{Json, Query};
use crate::{ApiError, ApiOk, ApiResult, AppState};
use ballast_ops::{Done, NotDone, Resource};

/// Bindings per create request.
const MAX_BINDINGS: usize = 1000;

/// A binding as the API writes it (the spec's ACL binding fields).
#[derive(Debug, Clone, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct BindingBody {
    #[schema(schema_with = acl_schema::binding_resource_type_schema)]
    pub(crate) resource_type: String,
    #[schema(schema_with = acl_schema::plain_name_schema)]
    pub(crate) resource_name: String,
    /// `Literal` (default) or `Prefixed`.
    #[schema(schema_with = acl_schema::binding_pattern_type_schema)]
    pub(crate) pattern_type: Option<String>,
    /// `User:<name>` (any `<type>:<name>`).
    #[schema(schema_with = acl_schema::principal_schema)]
    pub(crate) principal: String,
    /// Default `*` (any host).
    #[schema(schema_with = acl_schema::host_schema)]
    pub(crate) host: Option<String>,
    #[schema(schema_with = acl_schema::binding_operation_schema)]
    pub(crate) operation: String,
    #[schema(schema_with = acl_schema::binding_permission_type_schema)]
    pub(crate) permission_type: String,
}

use crate::routes::live::acls as acl_schema;

#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CreateBody {
    #[schema(min_items = 1, max_items = 1000)]
    pub(crate) bindings: Vec<BindingBody>,
}

#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct UpdateBody {
    /// The binding to replace; it must exist.
    from: BindingBody,
    /// Its replacement.
    to: BindingBody,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CreateResult {
    binding: AclBinding,
    /// Whether the binding exists after the request.
    created: bool,
    /// Whether it existed before (creating it again changes nothing).
    existed: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<String>,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Created {
    count: usize,
    failed: usize,
    results: Vec<CreateResult>,
    /// Set when the cluster did not show the change in time (`created` is what it showed).
    #[serde(skip_serializing_if = "Option::is_none")]
    note: Option<String>,
    #[serde(flatten)]
    audit: Audited,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Updated {
    from: AclBinding,
    to: AclBinding,
    #[serde(flatten)]
    audit: Audited,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Deleted {
    count: usize,
    deleted: Vec<AclBinding>,
    #[serde(flatten)]
    audit: Audited,
}

/// A binding from its API form; the filter-only values (`Any`, `Match`) are refused.
pub(crate) fn binding(b: &BindingBody) -> Result<AclBinding, ApiError> {
    let only_concrete = |field: &str, value: &str| {
        ApiError::bad_request(
            "invalid binding",
            format!("{field}: {value:?} matches many values; a binding names exactly one"),
        )
    };
    check_name("resourceName", &b.resource_name)?;
    let (kind, name) = b.principal.split_once(':').unwrap_or_default();
    if kind.is_empty() || name.is_empty() {
        return Err(ApiError::bad_request(
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

/// The query parsers answer "invalid query"; here the values come from a body.
fn to_binding_error(e: ApiError) -> ApiError {
    ApiError::bad_request("invalid binding", e.details)
}

/// Whether each of `bindings` exists now, in order.
pub(crate) async fn present(
    state: &AppState,
    client: &Client,
    bindings: &[AclBinding],
) -> Result<Vec<bool>, ApiError> {
    present_via(state, client, None, bindings).await
}

/// Whether each of `bindings` exists as `broker` shows them (None: any broker), in order.
async fn present_via(
    state: &AppState,
    client: &Client,
    broker: Option<BrokerId>,
    bindings: &[AclBinding],
) -> Result<Vec<bool>, ApiError> {
    let mut out = Vec::with_capacity(bindings.len());
    for b in bindings {
        let filter = AclFilter::exact(b);
        let found = match broker {
            Some(id) => client.describe_acls_at(id, &filter).await,
            None => client.describe_acls(&filter).await,
        }
        .map_err(|e| fail(state, e))?;
        out.push(found.contains(b));
    }
    Ok(out)
}

/// Creates `bindings`; the first refusal is the error.
pub(crate) async fn create_all(
    state: &AppState,
    client: &Client,
    bindings: &[AclBinding],
) -> Result<(), ApiError> {
    if bindings.is_empty() {
        return Ok(());
    }
    let results = client
        .create_acls(bindings)
        .await
        .map_err(|e| fail(state, e))?;
    match results
        .iter()
        .find_map(|r| r.error.as_ref().map(|e| (r, e)))
    {
        Some((r, e)) => Err(item_fail(&format!("creating {}", describe(&r.binding)), e)),
        None => Ok(()),
    }
}

/// Deletes exactly `bindings`; the first refusal is the error.
pub(crate) async fn delete_all(
    state: &AppState,
    client: &Client,
    bindings: &[AclBinding],
) -> Result<(), ApiError> {
    if bindings.is_empty() {
        return Ok(());
    }
    let filters: Vec<AclFilter> = bindings.iter().map(AclFilter::exact).collect();
    let results = client
        .delete_acls(&filters)
        .await
        .map_err(|e| fail(state, e))?;
    match results.iter().find_map(|r| r.error.as_ref()) {
        Some(e) => Err(item_fail("deleting acl bindings", e)),
        None => Ok(()),
    }
}

/// One line naming a binding, for error details.
pub(crate) fn describe(b: &AclBinding) -> String {
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
pub(crate) fn to_json(bindings: &[AclBinding]) -> Value {
    let mut sorted = bindings.to_vec();
    sorted.sort_by_cached_key(sort_key);
    sorted.dedup();
    json!({ "bindings": sorted })
}

/// Bindings back from the audit shape; None when `v` is not that shape.
pub(crate) fn from_json(v: &Value) -> Option<Vec<AclBinding>> {
    v.get("bindings")?
        .as_array()?
        .iter()
        .map(|b| {
            let body: BindingBody = serde_json::from_value(b.clone()).ok()?;
            binding(&body).ok()
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
pub(crate) async fn read_back(
    state: &AppState,
    client: &Client,
    bindings: &[AclBinding],
    expected: Vec<bool>,
) -> ReadBack<Vec<bool>> {
    let wanted = expected.clone();
    until_shown(
        state,
        expected,
        || {
            per_broker(client, |broker| {
                present_via(state, client, Some(broker), bindings)
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

#[utoipa::path(
    post,
    path = "/api/v1/acls",
    tag = "acls",
    operation_id = "createAcls",
    summary = "Create ACL bindings",
    description = "Audited with the bindings before and after.",
    request_body(content = CreateBody),
    responses(
        (status = 200, description = "Create ACL bindings", body = ref("AclsCreated")),
        (status = 400, description = "No bindings, or an invalid binding"),
        (status = 502, description = "The cluster answered with an error"),
        (status = 503, description = "The cluster is unreachable"),
    )
)]
/// `POST /api/v1/acls` with `{"bindings": [...]}`. Every binding is validated before any is
/// sent; the cluster may still refuse some (each result says).
pub async fn create(
    State(state): State<AppState>,
    actor: Actor,
    Json(body): Json<CreateBody>,
) -> ApiResult<Created> {
    create_acls(&state, &actor, body).await.map(ApiOk)
}

/// The operation `create_acls`: creates the bindings (each validated before any is sent; one that
/// exists stays as it is); audited `acls.create` with the bindings before and after.
pub(crate) async fn create_acls(
    state: &AppState,
    actor: &Actor,
    body: CreateBody,
) -> Result<Created, ApiError> {
    if body.bindings.is_empty() {
        return Err(ApiError::bad_request(
            "invalid request body",
            "bindings must list at least one binding",
        ));
    }
    if body.bindings.len() > MAX_BINDINGS {
        return Err(ApiError::bad_request(
            "invalid request body",
            format!("at most {MAX_BINDINGS} bindings per request"),
        ));
    }
    let bindings = dedup(
        body.bindings
            .iter()
            .enumerate()
            .map(|(i, b)| {
                binding(b).map_err(|e| {
                    ApiError::bad_request(e.error, format!("bindings[{i}]: {}", e.details))
                })
            })
            .collect::<Result<Vec<_>, _>>()?,
    );
    let client = state.kafka.client().await?;
    let mut event = actor.event(state.clock.now_ms(), "acls.create", target_of(&bindings));
    event.summary = json!({ "bindings": bindings.len() });
    let ((existed, results, now, note), recorded) = state
        .pipeline
        .run([Resource::Acls], event, || async {
            let existed = present(state, &client, &bindings)
                .await
                .map_err(NotDone::Refused)?;
            let results = client
                .create_acls(&bindings)
                .await
                .map_err(|e| NotDone::Refused(fail(state, e)))?;
            if let Some(e) = results
                .iter()
                .filter_map(|r| r.error.as_ref())
                .next()
                .filter(|_| results.iter().all(|r| r.error.is_some()))
            {
                // Nothing was created: the first refusal is the answer, nothing to audit.
                return Err(NotDone::Refused(item_fail("creating acl bindings", e)));
            }
            // Read back once the cluster shows every binding it accepted (KRaft brokers apply
            // ACLs a moment after the controller).
            let expected: Vec<bool> = existed
                .iter()
                .zip(&results)
                .map(|(existed, r)| *existed || r.error.is_none())
                .collect();
            let ReadBack { value: now, note } =
                read_back(state, &client, &bindings, expected).await;
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

#[utoipa::path(
    put,
    path = "/api/v1/acls",
    tag = "acls",
    operation_id = "updateAcl",
    summary = "Replace an ACL binding",
    description = "`from` must exist; it is replaced by `to`.",
    request_body(content = UpdateBody),
    responses(
        (status = 200, description = "Replace an ACL binding", body = ref("AclUpdated")),
        (status = 400, description = "An invalid binding"),
        (status = 404, description = "`from` does not exist"),
        (status = 502, description = "The cluster answered with an error"),
        (status = 503, description = "The cluster is unreachable"),
    )
)]
/// `PUT /api/v1/acls` with `{"from": binding, "to": binding}`: creates `to`, then deletes
/// `from`. `from` must exist (404 otherwise).
pub async fn update(
    State(state): State<AppState>,
    actor: Actor,
    Json(body): Json<UpdateBody>,
) -> ApiResult<Updated> {
    let from = binding(&body.from)
        .map_err(|e| ApiError::bad_request(e.error, format!("from: {}", e.details)))?;
    let to = binding(&body.to)
        .map_err(|e| ApiError::bad_request(e.error, format!("to: {}", e.details)))?;
    if from == to {
        return Err(ApiError::bad_request(
            "invalid request body",
            "from and to are the same binding",
        ));
    }
    let affected = vec![from.clone(), to.clone()];
    let client = state.kafka.client().await?;
    let mut event = actor.event(state.clock.now_ms(), "acls.update", target_of(&affected));
    event.summary = json!({ "from": from, "to": to });
    let state = &state;
    let (deleted, recorded) = state
        .pipeline
        .run([Resource::Acls], event, || async {
            let existed = present(state, &client, &affected)
                .await
                .map_err(NotDone::Refused)?;
            if !existed[0] {
                return Err(NotDone::Refused(ApiError::not_found(
                    "unknown acl binding",
                    format!("no binding {} exists", describe(&from)),
                )));
            }
            create_all(state, &client, std::slice::from_ref(&to))
                .await
                .map_err(NotDone::Refused)?;
            let deleted = delete_all(state, &client, std::slice::from_ref(&from)).await;
            let ReadBack { value: now, note } =
                read_back(state, &client, &affected, vec![deleted.is_err(), true]).await;
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
        ApiError::new(
            e.status,
            e.error,
            format!(
                "{} (the new binding was created and the old one kept; audit event {:?})",
                e.details, audit.audit_event_id
            ),
        )
    })?;
    Ok(ApiOk(Updated { from, to, audit }))
}

#[utoipa::path(
    delete,
    path = "/api/v1/acls",
    tag = "acls",
    operation_id = "deleteAcls",
    summary = "Delete ACL bindings matching a filter",
    description = "The query is the filter (as `GET /api/v1/acls`, without `limit`).",
    params(super::super::live::acls::AclQuery),
    responses(
        (status = 200, description = "Delete ACL bindings matching a filter", body = ref("AclsDeleted")),
        (status = 400, description = "An invalid filter, or `limit`"),
        (status = 404, description = "The filter matches no binding; nothing was deleted (`no acl binding matches`)"),
        (status = 502, description = "The cluster answered with an error"),
        (status = 503, description = "The cluster is unreachable"),
    )
)]
/// `DELETE /api/v1/acls?principal=...&resourceType=...`: deletes every binding the filter
/// matches (the query of `GET /api/v1/acls`, which shows what would go). A filter that names
/// neither a principal, a resource type nor a resource name is refused: it would match everything.
pub async fn delete(
    State(state): State<AppState>,
    actor: Actor,
    Query(q): Query<AclQuery>,
) -> ApiResult<Deleted> {
    delete_acls(&state, &actor, q).await.map(ApiOk)
}

/// The operation `delete_acls`: deletes every binding the filter matches (a filter naming neither
/// a principal, a resource type nor a resource name is refused); audited `acls.delete`.
pub(crate) async fn delete_acls(
    state: &AppState,
    actor: &Actor,
    q: AclQuery,
) -> Result<Deleted, ApiError> {
    if q.limit.is_some() {
        return Err(ApiError::bad_request(
            "invalid query",
            "limit: a delete removes every matching binding; narrow the filter instead",
        ));
    }
    let filter = filter_of(&q)?;
    if filter.principal.is_none()
        && filter.resource_type.is_none()
        && filter.resource_name.is_none()
    {
        return Err(ApiError::bad_request(
            "invalid query",
            "the filter would match every binding: give principal, resourceType or resourceName",
        ));
    }
    let client = state.kafka.client().await?;
    let matched = client
        .describe_acls(&filter)
        .await
        .map_err(|e| fail(state, e))?;
    if matched.is_empty() {
        return Err(ApiError::not_found(
            "no acl binding matches",
            "the filter matches no binding; nothing was deleted",
        ));
    }
    let mut event = actor.event(state.clock.now_ms(), "acls.delete", target_of(&matched));
    event.summary = json!({ "filter": filter, "matched": matched.len() });
    let (deleted, recorded) = state
        .pipeline
        .run([Resource::Acls], event, || async {
            let results = client
                .delete_acls(std::slice::from_ref(&filter))
                .await
                .map_err(|e| NotDone::Refused(fail(state, e)))?;
            let mut deleted: Vec<AclBinding> = Vec::new();
            for r in &results {
                if let Some(e) = &r.error {
                    return Err(NotDone::Refused(item_fail("deleting acl bindings", e)));
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
                return Err(NotDone::Refused(ApiError::not_found(
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

#[cfg(test)]
mod tests {
    use super::*;
    use ballast_kafka::{AclOperation, AclPermissionType, AclResourceType};

    fn body(v: Value) -> BindingBody {
        serde_json::from_value(v).unwrap()
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
            assert_eq!(err.status, axum::http::StatusCode::BAD_REQUEST, "{field}");
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
}
