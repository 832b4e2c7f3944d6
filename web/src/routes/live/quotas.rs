//! Client quotas: every entity, one entity, and the effective quota of a user and client id under
//! Kafka's precedence.

use axum::extract::State;
use ballast_kafka::QuotaName;
pub(crate) use ballast_ops::quota_reads::{
    list_quotas, quota_of, resolve_quotas, QuotaList, QuotaRow, Resolution, ResolveRequest,
};
use serde::Deserialize;

use crate::extract::{Path, Query};
use crate::{ApiOk, ApiResult, AppState};

pub(crate) use ballast_ops::quotas::{entity, parse_name};

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct NoQuery {}

#[utoipa::path(
    get,
    path = "/api/v1/quotas",
    tag = "quotas",
    operation_id = "listQuotas",
    summary = "List all quotas",
    description = "Every client-quota entity with its values."
    // responses: declared by the operation `list_quotas` (ballast_ops::catalog)
)]
/// `GET /api/v1/quotas`: every entity with a quota, by entity.
pub async fn list(State(state): State<AppState>, Query(_): Query<NoQuery>) -> ApiResult<QuotaList> {
    Ok(ApiOk(list_quotas(&state).await?))
}

#[utoipa::path(
    get,
    path = "/api/v1/quotas/default",
    tag = "quotas",
    operation_id = "getDefaultQuota",
    summary = "Default user and client-id quota",
    description = "Quota values of the entity (an empty `values` when none is set).",
    responses(
        (status = 200, description = "Default user and client-id quota", body = ref("QuotaRow")),
        (status = 502, description = "The cluster answered with an error"),
        (status = 503, description = "The cluster is unreachable"),
    )
)]
/// `GET /api/v1/quotas/default`: the default user together with the default client id.
pub async fn default_pair(
    State(state): State<AppState>,
    Query(_): Query<NoQuery>,
) -> ApiResult<QuotaRow> {
    Ok(ApiOk(
        quota_of(
            &state,
            entity(Some(QuotaName::Default), Some(QuotaName::Default)),
        )
        .await?,
    ))
}

#[utoipa::path(
    get,
    path = "/api/v1/quotas/default-user",
    tag = "quotas",
    operation_id = "getDefaultUserQuota",
    summary = "Default user quota",
    description = "Quota values of the entity (an empty `values` when none is set).",
    responses(
        (status = 200, description = "Default user quota", body = ref("QuotaRow")),
        (status = 502, description = "The cluster answered with an error"),
        (status = 503, description = "The cluster is unreachable"),
    )
)]
/// `GET /api/v1/quotas/default-user`
pub async fn default_user(
    State(state): State<AppState>,
    Query(_): Query<NoQuery>,
) -> ApiResult<QuotaRow> {
    Ok(ApiOk(
        quota_of(&state, entity(Some(QuotaName::Default), None)).await?,
    ))
}

#[utoipa::path(
    get,
    path = "/api/v1/quotas/default-client-id",
    tag = "quotas",
    operation_id = "getDefaultClientIdQuota",
    summary = "Default client-id quota",
    description = "Quota values of the entity (an empty `values` when none is set).",
    responses(
        (status = 200, description = "Default client-id quota", body = ref("QuotaRow")),
        (status = 502, description = "The cluster answered with an error"),
        (status = 503, description = "The cluster is unreachable"),
    )
)]
/// `GET /api/v1/quotas/default-client-id`
pub async fn default_client_id(
    State(state): State<AppState>,
    Query(_): Query<NoQuery>,
) -> ApiResult<QuotaRow> {
    Ok(ApiOk(
        quota_of(&state, entity(None, Some(QuotaName::Default))).await?,
    ))
}

#[utoipa::path(
    get,
    path = "/api/v1/quotas/user/{user}",
    tag = "quotas",
    operation_id = "getUserQuota",
    summary = "Quota of a user",
    description = "Quota values of the entity (an empty `values` when none is set).",
    params(("user" = String, Path, description = "user principal name")),
    responses(
        (status = 200, description = "Quota of a user", body = ref("QuotaRow")),
        (status = 502, description = "The cluster answered with an error"),
        (status = 503, description = "The cluster is unreachable"),
    )
)]
/// `GET /api/v1/quotas/user/{user}`
pub async fn user(
    State(state): State<AppState>,
    Path(user): Path<String>,
    Query(_): Query<NoQuery>,
) -> ApiResult<QuotaRow> {
    let user = parse_name("user", user)?;
    Ok(ApiOk(quota_of(&state, entity(Some(user), None)).await?))
}

#[utoipa::path(
    get,
    path = "/api/v1/quotas/client-id/{clientId}",
    tag = "quotas",
    operation_id = "getClientIdQuota",
    summary = "Quota of a client id",
    description = "Quota values of the entity (an empty `values` when none is set).",
    params(("clientId" = String, Path, description = "client id")),
    responses(
        (status = 200, description = "Quota of a client id", body = ref("QuotaRow")),
        (status = 502, description = "The cluster answered with an error"),
        (status = 503, description = "The cluster is unreachable"),
    )
)]
/// `GET /api/v1/quotas/client-id/{clientId}`
pub async fn client_id(
    State(state): State<AppState>,
    Path(client_id): Path<String>,
    Query(_): Query<NoQuery>,
) -> ApiResult<QuotaRow> {
    let client_id = parse_name("clientId", client_id)?;
    Ok(ApiOk(
        quota_of(&state, entity(None, Some(client_id))).await?,
    ))
}

#[utoipa::path(
    get,
    path = "/api/v1/quotas/user/{user}/{clientId}",
    tag = "quotas",
    operation_id = "getUserClientIdQuota",
    summary = "Quota of a user and client id",
    description = "Quota values of the entity (an empty `values` when none is set).",
    params(("user" = String, Path, description = "user principal name"), ("clientId" = String, Path, description = "client id")),
    responses(
        (status = 200, description = "Quota of a user and client id", body = ref("QuotaRow")),
        (status = 502, description = "The cluster answered with an error"),
        (status = 503, description = "The cluster is unreachable"),
    )
)]
/// `GET /api/v1/quotas/user/{user}/{clientId}`
pub async fn user_client(
    State(state): State<AppState>,
    Path((user, client_id)): Path<(String, String)>,
    Query(_): Query<NoQuery>,
) -> ApiResult<QuotaRow> {
    let user = parse_name("user", user)?;
    let client_id = parse_name("clientId", client_id)?;
    Ok(ApiOk(
        quota_of(&state, entity(Some(user), Some(client_id))).await?,
    ))
}

// ---------------------------------------------------------------------------------------------
// resolution

#[utoipa::path(
    post,
    path = "/api/v1/quotas/resolve",
    tag = "quotas",
    operation_id = "resolveQuotas",
    summary = "Resolve effective quotas",
    description = "The quotas that apply to a user and client id, level by level as Kafka resolves them.",
    request_body(content = ResolveRequest, description = "`user` and/or `clientId`; both may be left out (`{}`)"),
    responses(
        (status = 200, description = "Resolve effective quotas", body = ref("QuotaResolution")),
        (status = 502, description = "The cluster answered with an error"),
        (status = 503, description = "The cluster is unreachable"),
    )
)]
/// `POST /api/v1/quotas/resolve` with `{"user": ..., "clientId": ...}` (both optional): the
/// effective quota per key and the eight levels it was resolved from.
pub async fn resolve(
    State(state): State<AppState>,
    crate::extract::Json(request): crate::extract::Json<ResolveRequest>,
) -> ApiResult<Resolution> {
    Ok(ApiOk(resolve_quotas(&state, request).await?))
}
