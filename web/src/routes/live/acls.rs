//! ACL bindings with filters.

use axum::extract::State;
use ballast_kafka::{
    AclBinding, AclFilter, AclOperation, AclPatternFilter, AclPermissionType, AclResourceType,
};
use serde::{Deserialize, Serialize};

use super::{fail, kafka_name, non_empty, row_limit};
use crate::extract::Query;
use crate::{ApiError, ApiOk, ApiResult, AppState};

/// Rows: default and maximum (as the MCP `list_acls`).
const LIST_DEFAULT: usize = 100;
const LIST_MAX: usize = 500;

#[derive(Debug, Default, Deserialize, utoipa::IntoParams)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct AclQuery {
    /// `User:<name>`.
    #[param(schema_with = filter_principal)]
    pub(crate) principal: Option<String>,
    /// `Topic`, `Group`, `Cluster`, `TransactionalId`, `DelegationToken`.
    #[param(schema_with = filter_resource_type)]
    pub(crate) resource_type: Option<String>,
    pub(crate) resource_name: Option<String>,
    /// `Literal` or `Prefixed`.
    #[param(schema_with = filter_pattern_type)]
    pub(crate) pattern_type: Option<String>,
    #[param(schema_with = filter_operation)]
    pub(crate) operation: Option<String>,
    /// `Allow` or `Deny`.
    #[param(schema_with = filter_permission_type)]
    pub(crate) permission_type: Option<String>,
    pub(crate) host: Option<String>,
    /// Rows, default 100, at most 500 (not accepted by DELETE).
    pub(crate) limit: Option<u32>,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct AclList {
    count: usize,
    total: usize,
    truncated: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    hint: Option<String>,
    /// False when the cluster has no authorizer (Kafka answers SECURITY_DISABLED): there are no
    /// ACLs and every principal may do everything.
    authorizer_enabled: bool,
    bindings: Vec<AclBinding>,
}

/// Enum values are matched ignoring case, `_` and `-` (`Topic`, `TOPIC`, `transactional_id`);
/// `Any` (or an absent parameter) matches everything.
fn normalize(v: &str) -> String {
    v.chars()
        .filter(|c| *c != '_' && *c != '-')
        .flat_map(char::to_lowercase)
        .collect()
}

fn invalid(param: &str, value: &str, allowed: &str) -> ApiError {
    ApiError::bad_request(
        "invalid query",
        format!("{param}: unknown value {value:?}; expected one of {allowed}"),
    )
}

/// Schemas of a binding's fields (a concrete binding: no `Any`, no `Match`), from the names the
/// parsers below accept.
pub(crate) fn binding_resource_type_schema() -> utoipa::openapi::Object {
    crate::openapi::string_enum([
        "Topic",
        "Group",
        "Cluster",
        "TransactionalId",
        "DelegationToken",
        "User",
    ])
}

pub(crate) fn binding_pattern_type_schema() -> utoipa::openapi::Object {
    crate::openapi::string_enum_or_null(["Literal", "Prefixed"])
}

pub(crate) fn binding_operation_schema() -> utoipa::openapi::Object {
    crate::openapi::string_enum([
        "All",
        "Read",
        "Write",
        "Create",
        "Delete",
        "Alter",
        "Describe",
        "ClusterAction",
        "DescribeConfigs",
        "AlterConfigs",
        "IdempotentWrite",
        "CreateTokens",
        "DescribeTokens",
        "TwoPhaseCommit",
    ])
}

pub(crate) fn binding_permission_type_schema() -> utoipa::openapi::Object {
    crate::openapi::string_enum(["Allow", "Deny"])
}

/// `<type>:<name>`, both non-empty.
pub(crate) fn principal_schema() -> utoipa::openapi::Object {
    crate::openapi::string_pattern("^[^:]+:.")
}

/// A resource name or host: `ballast_ops::names::plain`.
pub(crate) fn plain_name_schema() -> utoipa::openapi::Object {
    utoipa::openapi::ObjectBuilder::new()
        .schema_type(utoipa::openapi::Type::String)
        .pattern(Some(ballast_ops::names::PLAIN_PATTERN))
        .max_length(Some(ballast_ops::names::PLAIN_MAX_CHARS))
        .build()
}

/// An optional host: `null` (any host) or a plain name.
pub(crate) fn host_schema() -> utoipa::openapi::Object {
    utoipa::openapi::ObjectBuilder::new()
        .schema_type(utoipa::openapi::schema::SchemaType::from_iter([
            utoipa::openapi::Type::String,
            utoipa::openapi::Type::Null,
        ]))
        .pattern(Some(ballast_ops::names::PLAIN_PATTERN))
        .max_length(Some(ballast_ops::names::PLAIN_MAX_CHARS))
        .build()
}

/// A filter: empty or absent matches every value.
fn filter_enum(values: &[&'static str]) -> utoipa::openapi::Object {
    crate::openapi::string_enum(std::iter::once("").chain(values.iter().copied()))
}

fn filter_resource_type() -> utoipa::openapi::Object {
    filter_enum(&[
        "Topic",
        "Group",
        "Cluster",
        "TransactionalId",
        "DelegationToken",
        "User",
        "Any",
    ])
}

fn filter_pattern_type() -> utoipa::openapi::Object {
    filter_enum(&["Literal", "Prefixed", "Match", "Any"])
}

fn filter_operation() -> utoipa::openapi::Object {
    filter_enum(&[
        "All",
        "Read",
        "Write",
        "Create",
        "Delete",
        "Alter",
        "Describe",
        "ClusterAction",
        "DescribeConfigs",
        "AlterConfigs",
        "IdempotentWrite",
        "CreateTokens",
        "DescribeTokens",
        "TwoPhaseCommit",
        "Any",
    ])
}

fn filter_permission_type() -> utoipa::openapi::Object {
    filter_enum(&["Allow", "Deny", "Any"])
}

/// Empty, or `<type>:<name>`.
fn filter_principal() -> utoipa::openapi::Object {
    crate::openapi::string_pattern("^$|^[^:]*:")
}

pub(crate) fn resource_type(v: &str) -> Result<Option<AclResourceType>, ApiError> {
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

pub(crate) fn pattern_type(v: &str) -> Result<AclPatternFilter, ApiError> {
    Ok(match normalize(v).as_str() {
        "any" => AclPatternFilter::Any,
        "match" => AclPatternFilter::Match,
        "literal" => AclPatternFilter::Literal,
        "prefixed" => AclPatternFilter::Prefixed,
        _ => return Err(invalid("patternType", v, "Literal, Prefixed, Match, Any")),
    })
}

pub(crate) fn operation(v: &str) -> Result<Option<AclOperation>, ApiError> {
    use AclOperation::*;
    let all = [
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
    ];
    let wanted = normalize(v);
    if wanted == "any" {
        return Ok(None);
    }
    all.into_iter()
        .find(|op| normalize(&format!("{op:?}")) == wanted)
        .map(Some)
        .ok_or_else(|| {
            let names: Vec<String> = all.iter().map(|op| format!("{op:?}")).collect();
            invalid("operation", v, &format!("{}, Any", names.join(", ")))
        })
}

pub(crate) fn permission_type(v: &str) -> Result<Option<AclPermissionType>, ApiError> {
    Ok(Some(match normalize(v).as_str() {
        "any" => return Ok(None),
        "allow" => AclPermissionType::Allow,
        "deny" => AclPermissionType::Deny,
        _ => return Err(invalid("permissionType", v, "Allow, Deny, Any")),
    }))
}

pub(crate) fn filter_of(q: &AclQuery) -> Result<AclFilter, ApiError> {
    let text = |v: &Option<String>| non_empty(v.clone());
    let principal = text(&q.principal);
    if let Some(p) = &principal {
        if !p.contains(':') {
            return Err(ApiError::bad_request(
                "invalid query",
                format!("principal: expected the form User:<name>, got {p:?}"),
            ));
        }
    }
    Ok(AclFilter {
        resource_type: match text(&q.resource_type) {
            Some(v) => resource_type(&v)?,
            None => None,
        },
        resource_name: text(&q.resource_name),
        pattern_type: match text(&q.pattern_type) {
            Some(v) => pattern_type(&v)?,
            None => AclPatternFilter::Any,
        },
        principal,
        host: text(&q.host),
        operation: match text(&q.operation) {
            Some(v) => operation(&v)?,
            None => None,
        },
        permission_type: match text(&q.permission_type) {
            Some(v) => permission_type(&v)?,
            None => None,
        },
    })
}

/// Resource type, resource name, principal (as the MCP `list_acls`), then the rest for a total
/// order.
pub(crate) fn sort_key(b: &AclBinding) -> (String, String, String, String, String, String, String) {
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

#[utoipa::path(
    get,
    path = "/api/v1/acls",
    tag = "acls",
    operation_id = "listAcls",
    summary = "List ACL bindings",
    description = "Bindings matching the filters, by resource type, resource name and principal.",
    params(AclQuery),
    responses(
        (status = 200, description = "List ACL bindings", body = ref("AclList")),
        (status = 502, description = "The cluster answered with an error"),
        (status = 503, description = "The cluster is unreachable"),
    )
)]
/// `GET /api/v1/acls`: the bindings matching the query's filters.
pub async fn list(State(state): State<AppState>, Query(q): Query<AclQuery>) -> ApiResult<AclList> {
    list_acls(&state, q).await.map(ApiOk)
}

/// The operation `list_acls`: the bindings matching the filters, in [`sort_key`] order.
pub(crate) async fn list_acls(state: &AppState, q: AclQuery) -> Result<AclList, ApiError> {
    let filter = filter_of(&q)?;
    let limit = row_limit(q.limit, LIST_DEFAULT, LIST_MAX);
    let client = state.kafka.client().await?;
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
        Err(e) => return Err(fail(state, e)),
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

    fn query(pairs: &[(&str, &str)]) -> AclQuery {
        let text: Vec<String> = pairs.iter().map(|(k, v)| format!("{k}={v}")).collect();
        serde_urlencoded_like(&text.join("&"))
    }

    // The extractor parses with serde_urlencoded; serde_json over a map is close enough here.
    fn serde_urlencoded_like(text: &str) -> AclQuery {
        let map: serde_json::Map<String, serde_json::Value> = text
            .split('&')
            .filter(|p| !p.is_empty())
            .map(|p| {
                let (k, v) = p.split_once('=').unwrap();
                (k.to_string(), serde_json::Value::String(v.to_string()))
            })
            .collect();
        serde_json::from_value(serde_json::Value::Object(map)).unwrap()
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
            assert_eq!(err.status, axum::http::StatusCode::BAD_REQUEST, "{k}={v}");
            assert!(err.details.contains(k), "{}", err.details);
        }
    }
}
