//! ACL bindings over REST: create (`POST`), replace one binding by another (`PUT`), delete what
//! a filter matches (`DELETE`, the filter in the query as for `GET /api/v1/acls`). Adapters over
//! the operations `create_acls`, `update_acl` and `delete_acls` (`ballast_ops::acls`, where the
//! rules live).

use axum::extract::State;
use ballast_ops::acls::{
    create_acls, delete_acls, update_acl, BindingInput, Created, Deleted, Updated,
};
use serde::Deserialize;

use super::super::live::acls::AclQuery;
use crate::audit::HttpActor;
use crate::extract::{Json, Query};
use crate::{ApiOk, ApiResult, AppState};

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

impl From<BindingBody> for BindingInput {
    fn from(b: BindingBody) -> BindingInput {
        BindingInput {
            resource_type: b.resource_type,
            resource_name: b.resource_name,
            pattern_type: b.pattern_type,
            principal: b.principal,
            host: b.host,
            operation: b.operation,
            permission_type: b.permission_type,
        }
    }
}

#[utoipa::path(
    post,
    path = "/api/v1/acls",
    tag = "acls",
    operation_id = "createAcls",
    summary = "Create ACL bindings",
    description = "Audited with the bindings before and after.",
    request_body(content = CreateBody)
    // responses: declared by the operation `create_acls` (ballast_ops::catalog)
)]
/// `POST /api/v1/acls` with `{"bindings": [...]}`. Every binding is validated before any is
/// sent; the cluster may still refuse some (each result says).
pub async fn create(
    State(state): State<AppState>,
    HttpActor(actor): HttpActor,
    Json(body): Json<CreateBody>,
) -> ApiResult<Created> {
    let bindings = body.bindings.into_iter().map(Into::into).collect();
    Ok(ApiOk(create_acls(&state, &actor, bindings).await?))
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
    HttpActor(actor): HttpActor,
    Json(body): Json<UpdateBody>,
) -> ApiResult<Updated> {
    Ok(ApiOk(
        update_acl(&state, &actor, body.from.into(), body.to.into()).await?,
    ))
}

#[utoipa::path(
    delete,
    path = "/api/v1/acls",
    tag = "acls",
    operation_id = "deleteAcls",
    summary = "Delete ACL bindings matching a filter",
    description = "The query is the filter (as `GET /api/v1/acls`, without `limit`).",
    params(super::super::live::acls::AclQuery)
    // responses: declared by the operation `delete_acls` (ballast_ops::catalog)
)]
/// `DELETE /api/v1/acls?principal=...&resourceType=...`: deletes every binding the filter
/// matches (the query of `GET /api/v1/acls`, which shows what would go). A filter that names
/// neither a principal, a resource type nor a resource name is refused: it would match everything.
pub async fn delete(
    State(state): State<AppState>,
    HttpActor(actor): HttpActor,
    Query(q): Query<AclQuery>,
) -> ApiResult<Deleted> {
    Ok(ApiOk(delete_acls(&state, &actor, q.into()).await?))
}
