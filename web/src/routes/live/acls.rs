//! ACL bindings with filters (the filter's rules: `ballast_ops::acls::filter_of`).

use axum::extract::State;
use ballast_kafka::AclBinding;
use ballast_ops::acls::{self, filter_of, sort_key};
use serde::{Deserialize, Serialize};

use super::{fail, kafka_name, row_limit};
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

/// Schemas of a binding's fields (a concrete binding: no `Any`, no `Match`), from the names the
/// parsers accept (`ballast_ops::acls`).
pub(crate) fn binding_resource_type_schema() -> utoipa::openapi::Object {
    crate::openapi::string_enum(acls::RESOURCE_TYPES)
}

pub(crate) fn binding_pattern_type_schema() -> utoipa::openapi::Object {
    crate::openapi::string_enum_or_null(acls::PATTERN_TYPES)
}

pub(crate) fn binding_operation_schema() -> utoipa::openapi::Object {
    crate::openapi::string_enum(acls::OPERATIONS)
}

pub(crate) fn binding_permission_type_schema() -> utoipa::openapi::Object {
    crate::openapi::string_enum(acls::PERMISSIONS)
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
    filter_enum(&[acls::RESOURCE_TYPES.as_slice(), &["Any"]].concat())
}

fn filter_pattern_type() -> utoipa::openapi::Object {
    filter_enum(&[acls::PATTERN_TYPES.as_slice(), &["Match", "Any"]].concat())
}

fn filter_operation() -> utoipa::openapi::Object {
    filter_enum(&[acls::OPERATIONS.as_slice(), &["Any"]].concat())
}

fn filter_permission_type() -> utoipa::openapi::Object {
    filter_enum(&[acls::PERMISSIONS.as_slice(), &["Any"]].concat())
}

/// Empty, or `<type>:<name>`.
fn filter_principal() -> utoipa::openapi::Object {
    crate::openapi::string_pattern("^$|^[^:]*:")
}

impl From<AclQuery> for ballast_ops::acls::Query {
    fn from(q: AclQuery) -> Self {
        Self {
            principal: q.principal,
            resource_type: q.resource_type,
            resource_name: q.resource_name,
            pattern_type: q.pattern_type,
            operation: q.operation,
            permission_type: q.permission_type,
            host: q.host,
            limit: q.limit,
        }
    }
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
    let limit = row_limit(q.limit, LIST_DEFAULT, LIST_MAX);
    let filter = filter_of(&q.into())?;
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
