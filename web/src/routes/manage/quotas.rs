//! Client quota entities over REST: PUT sets an entity's quotas, DELETE removes them. Adapters
//! over the operations `update_quota` and `delete_quota` (`ballast_ops::quotas`, where the
//! rules live).
//!
//! PUT replaces: the entity ends up with exactly the keys of the body (keys it had and the body
//! leaves out are removed).

use std::collections::BTreeMap;

use axum::extract::State;
use ballast_ops::quotas::{delete_quota, update_quota, QuotaChange, CLIENT_KEYS, DEFAULT_SEGMENT};
use serde::Deserialize;
use serde_json::Value;

use crate::audit::HttpActor;
use crate::extract::{Json, Path};
use crate::{ApiOk, ApiResult, AppState};

#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PutBody {
    /// key → value, e.g. `{"producer_byte_rate": 1048576, "request_percentage": 250}`.
    #[schema(schema_with = values_schema)]
    pub(crate) values: BTreeMap<String, Value>,
}

/// At least one client quota key, each a number above 0.
fn values_schema() -> utoipa::openapi::Object {
    use utoipa::openapi::{ObjectBuilder, Type};
    ObjectBuilder::new()
        .schema_type(Type::Object)
        .property_names(Some(ballast_ops::schema::string_enum(
            CLIENT_KEYS.iter().copied(),
        )))
        .additional_properties(Some(
            ObjectBuilder::new()
                .schema_type(Type::Number)
                .exclusive_minimum(Some(0.0)),
        ))
        .min_properties(Some(1))
        .build()
}

/// The path segment of a default entity.
fn default_segment() -> Option<String> {
    Some(DEFAULT_SEGMENT.to_string())
}

#[utoipa::path(
    put,
    path = "/api/v1/quotas/default",
    tag = "quotas",
    operation_id = "putDefaultPairQuota",
    summary = "Set the quota of the default user and client-id pair",
    description = "Sets the given keys (e.g. `producer_byte_rate`, `request_percentage`, values above 100%% accepted); read before and after; audited.",
    request_body(content = PutBody),
    responses(
        (status = 200, description = "Set the quota of the default user and client-id pair", body = ref("QuotaChange")),
        (status = 400, description = "An unknown key or invalid value"),
        (status = 502, description = "The cluster answered with an error"),
        (status = 503, description = "The cluster is unreachable"),
    )
)]
/// `PUT /api/v1/quotas/default`: the default user together with the default client id.
pub async fn put_default_pair(
    State(state): State<AppState>,
    HttpActor(actor): HttpActor,
    Json(body): Json<PutBody>,
) -> ApiResult<QuotaChange> {
    Ok(ApiOk(
        update_quota(
            &state,
            &actor,
            default_segment(),
            default_segment(),
            body.values,
        )
        .await?,
    ))
}

#[utoipa::path(
    delete,
    path = "/api/v1/quotas/default",
    tag = "quotas",
    operation_id = "deleteDefaultPairQuota",
    summary = "Remove the quota of the default user and client-id pair",
    description = "Removes every value of the entity; audited.",
    responses(
        (status = 200, description = "Remove the quota of the default user and client-id pair", body = ref("QuotaChange")),
        (status = 404, description = "The entity has no quota"),
        (status = 502, description = "The cluster answered with an error"),
        (status = 503, description = "The cluster is unreachable"),
    )
)]
/// `DELETE /api/v1/quotas/default`
pub async fn delete_default_pair(
    State(state): State<AppState>,
    HttpActor(actor): HttpActor,
) -> ApiResult<QuotaChange> {
    Ok(ApiOk(
        delete_quota(&state, &actor, default_segment(), default_segment()).await?,
    ))
}

#[utoipa::path(
    put,
    path = "/api/v1/quotas/default-user",
    tag = "quotas",
    operation_id = "putDefaultUserQuota",
    summary = "Set the quota of the default user",
    description = "Sets the given keys (e.g. `producer_byte_rate`, `request_percentage`, values above 100%% accepted); read before and after; audited.",
    request_body(content = PutBody),
    responses(
        (status = 200, description = "Set the quota of the default user", body = ref("QuotaChange")),
        (status = 400, description = "An unknown key or invalid value"),
        (status = 502, description = "The cluster answered with an error"),
        (status = 503, description = "The cluster is unreachable"),
    )
)]
/// `PUT /api/v1/quotas/default-user`
pub async fn put_default_user(
    State(state): State<AppState>,
    HttpActor(actor): HttpActor,
    Json(body): Json<PutBody>,
) -> ApiResult<QuotaChange> {
    Ok(ApiOk(
        update_quota(&state, &actor, default_segment(), None, body.values).await?,
    ))
}

#[utoipa::path(
    delete,
    path = "/api/v1/quotas/default-user",
    tag = "quotas",
    operation_id = "deleteDefaultUserQuota",
    summary = "Remove the quota of the default user",
    description = "Removes every value of the entity; audited.",
    responses(
        (status = 200, description = "Remove the quota of the default user", body = ref("QuotaChange")),
        (status = 404, description = "The entity has no quota"),
        (status = 502, description = "The cluster answered with an error"),
        (status = 503, description = "The cluster is unreachable"),
    )
)]
/// `DELETE /api/v1/quotas/default-user`
pub async fn delete_default_user(
    State(state): State<AppState>,
    HttpActor(actor): HttpActor,
) -> ApiResult<QuotaChange> {
    Ok(ApiOk(
        delete_quota(&state, &actor, default_segment(), None).await?,
    ))
}

#[utoipa::path(
    put,
    path = "/api/v1/quotas/default-client-id",
    tag = "quotas",
    operation_id = "putDefaultClientIdQuota",
    summary = "Set the quota of the default client id",
    description = "Sets the given keys (e.g. `producer_byte_rate`, `request_percentage`, values above 100%% accepted); read before and after; audited.",
    request_body(content = PutBody),
    responses(
        (status = 200, description = "Set the quota of the default client id", body = ref("QuotaChange")),
        (status = 400, description = "An unknown key or invalid value"),
        (status = 502, description = "The cluster answered with an error"),
        (status = 503, description = "The cluster is unreachable"),
    )
)]
/// `PUT /api/v1/quotas/default-client-id`
pub async fn put_default_client_id(
    State(state): State<AppState>,
    HttpActor(actor): HttpActor,
    Json(body): Json<PutBody>,
) -> ApiResult<QuotaChange> {
    Ok(ApiOk(
        update_quota(&state, &actor, None, default_segment(), body.values).await?,
    ))
}

#[utoipa::path(
    delete,
    path = "/api/v1/quotas/default-client-id",
    tag = "quotas",
    operation_id = "deleteDefaultClientIdQuota",
    summary = "Remove the quota of the default client id",
    description = "Removes every value of the entity; audited.",
    responses(
        (status = 200, description = "Remove the quota of the default client id", body = ref("QuotaChange")),
        (status = 404, description = "The entity has no quota"),
        (status = 502, description = "The cluster answered with an error"),
        (status = 503, description = "The cluster is unreachable"),
    )
)]
/// `DELETE /api/v1/quotas/default-client-id`
pub async fn delete_default_client_id(
    State(state): State<AppState>,
    HttpActor(actor): HttpActor,
) -> ApiResult<QuotaChange> {
    Ok(ApiOk(
        delete_quota(&state, &actor, None, default_segment()).await?,
    ))
}

#[utoipa::path(
    put,
    path = "/api/v1/quotas/user/{user}",
    tag = "quotas",
    operation_id = "putUserQuota",
    summary = "Set the quota of a user",
    description = "Sets the given keys (e.g. `producer_byte_rate`, `request_percentage`, values above 100%% accepted); read before and after; audited.",
    params(("user" = String, Path, description = "user principal name")),
    request_body(content = PutBody)
    // responses: declared by the operation `update_quota` (ballast_ops::catalog)
)]
/// `PUT /api/v1/quotas/user/{user}` (`<default>` names the default user)
pub async fn put_user(
    State(state): State<AppState>,
    HttpActor(actor): HttpActor,
    Path(user): Path<String>,
    Json(body): Json<PutBody>,
) -> ApiResult<QuotaChange> {
    Ok(ApiOk(
        update_quota(&state, &actor, Some(user), None, body.values).await?,
    ))
}

#[utoipa::path(
    delete,
    path = "/api/v1/quotas/user/{user}",
    tag = "quotas",
    operation_id = "deleteUserQuota",
    summary = "Remove the quota of a user",
    description = "Removes every value of the entity; audited.",
    params(("user" = String, Path, description = "user principal name"))
    // responses: declared by the operation `delete_quota` (ballast_ops::catalog)
)]
/// `DELETE /api/v1/quotas/user/{user}`
pub async fn delete_user(
    State(state): State<AppState>,
    HttpActor(actor): HttpActor,
    Path(user): Path<String>,
) -> ApiResult<QuotaChange> {
    Ok(ApiOk(delete_quota(&state, &actor, Some(user), None).await?))
}

#[utoipa::path(
    put,
    path = "/api/v1/quotas/client-id/{clientId}",
    tag = "quotas",
    operation_id = "putClientIdQuota",
    summary = "Set the quota of a client id",
    description = "Sets the given keys (e.g. `producer_byte_rate`, `request_percentage`, values above 100%% accepted); read before and after; audited.",
    params(("clientId" = String, Path, description = "client id")),
    request_body(content = PutBody),
    responses(
        (status = 200, description = "Set the quota of a client id", body = ref("QuotaChange")),
        (status = 400, description = "An unknown key or invalid value"),
        (status = 502, description = "The cluster answered with an error"),
        (status = 503, description = "The cluster is unreachable"),
    )
)]
/// `PUT /api/v1/quotas/client-id/{clientId}`
pub async fn put_client_id(
    State(state): State<AppState>,
    HttpActor(actor): HttpActor,
    Path(client_id): Path<String>,
    Json(body): Json<PutBody>,
) -> ApiResult<QuotaChange> {
    Ok(ApiOk(
        update_quota(&state, &actor, None, Some(client_id), body.values).await?,
    ))
}

#[utoipa::path(
    delete,
    path = "/api/v1/quotas/client-id/{clientId}",
    tag = "quotas",
    operation_id = "deleteClientIdQuota",
    summary = "Remove the quota of a client id",
    description = "Removes every value of the entity; audited.",
    params(("clientId" = String, Path, description = "client id")),
    responses(
        (status = 200, description = "Remove the quota of a client id", body = ref("QuotaChange")),
        (status = 404, description = "The entity has no quota"),
        (status = 502, description = "The cluster answered with an error"),
        (status = 503, description = "The cluster is unreachable"),
    )
)]
/// `DELETE /api/v1/quotas/client-id/{clientId}`
pub async fn delete_client_id(
    State(state): State<AppState>,
    HttpActor(actor): HttpActor,
    Path(client_id): Path<String>,
) -> ApiResult<QuotaChange> {
    Ok(ApiOk(
        delete_quota(&state, &actor, None, Some(client_id)).await?,
    ))
}

#[utoipa::path(
    put,
    path = "/api/v1/quotas/user/{user}/{clientId}",
    tag = "quotas",
    operation_id = "putUserClientQuota",
    summary = "Set the quota of a user and client id",
    description = "Sets the given keys (e.g. `producer_byte_rate`, `request_percentage`, values above 100%% accepted); read before and after; audited.",
    params(("user" = String, Path, description = "user principal name"), ("clientId" = String, Path, description = "client id")),
    request_body(content = PutBody),
    responses(
        (status = 200, description = "Set the quota of a user and client id", body = ref("QuotaChange")),
        (status = 400, description = "An unknown key or invalid value"),
        (status = 502, description = "The cluster answered with an error"),
        (status = 503, description = "The cluster is unreachable"),
    )
)]
/// `PUT /api/v1/quotas/user/{user}/{clientId}`
pub async fn put_user_client(
    State(state): State<AppState>,
    HttpActor(actor): HttpActor,
    Path((user, client_id)): Path<(String, String)>,
    Json(body): Json<PutBody>,
) -> ApiResult<QuotaChange> {
    Ok(ApiOk(
        update_quota(&state, &actor, Some(user), Some(client_id), body.values).await?,
    ))
}

#[utoipa::path(
    delete,
    path = "/api/v1/quotas/user/{user}/{clientId}",
    tag = "quotas",
    operation_id = "deleteUserClientQuota",
    summary = "Remove the quota of a user and client id",
    description = "Removes every value of the entity; audited.",
    params(("user" = String, Path, description = "user principal name"), ("clientId" = String, Path, description = "client id")),
    responses(
        (status = 200, description = "Remove the quota of a user and client id", body = ref("QuotaChange")),
        (status = 404, description = "The entity has no quota"),
        (status = 502, description = "The cluster answered with an error"),
        (status = 503, description = "The cluster is unreachable"),
    )
)]
/// `DELETE /api/v1/quotas/user/{user}/{clientId}`
pub async fn delete_user_client(
    State(state): State<AppState>,
    HttpActor(actor): HttpActor,
    Path((user, client_id)): Path<(String, String)>,
) -> ApiResult<QuotaChange> {
    Ok(ApiOk(
        delete_quota(&state, &actor, Some(user), Some(client_id)).await?,
    ))
}
