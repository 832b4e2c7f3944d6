//! ACL bindings with filters (the filter's rules: `ballast_ops::acls::filter_of`).

use axum::extract::State;
use ballast_ops::acls::{self, list_acls, AclList};
use serde::Deserialize;

use crate::extract::Query;
use crate::{ApiOk, ApiResult, AppState};

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

/// Schemas of a binding's fields (a concrete binding: no `Any`, no `Match`), from the names the
/// parsers accept (`ballast_ops::acls`).
pub(crate) fn binding_resource_type_schema() -> utoipa::openapi::Object {
    ballast_ops::schema::string_enum(acls::RESOURCE_TYPES)
}

pub(crate) fn binding_pattern_type_schema() -> utoipa::openapi::Object {
    ballast_ops::schema::string_enum_or_null(acls::PATTERN_TYPES)
}

pub(crate) fn binding_operation_schema() -> utoipa::openapi::Object {
    ballast_ops::schema::string_enum(acls::OPERATIONS)
}

pub(crate) fn binding_permission_type_schema() -> utoipa::openapi::Object {
    ballast_ops::schema::string_enum(acls::PERMISSIONS)
}

/// `<type>:<name>`, both non-empty.
pub(crate) fn principal_schema() -> utoipa::openapi::Object {
    ballast_ops::schema::string_pattern("^[^:]+:.")
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
    ballast_ops::schema::string_enum(std::iter::once("").chain(values.iter().copied()))
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
    ballast_ops::schema::string_pattern("^$|^[^:]*:")
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
    params(AclQuery)
    // responses: declared by the operation `list_acls` (ballast_ops::catalog)
)]
/// `GET /api/v1/acls`: the bindings matching the query's filters.
pub async fn list(State(state): State<AppState>, Query(q): Query<AclQuery>) -> ApiResult<AclList> {
    Ok(ApiOk(list_acls(&state, q.into()).await?))
}
