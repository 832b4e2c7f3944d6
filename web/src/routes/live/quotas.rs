//! Client quotas: every entity, one entity, and the effective quota of a user and client id under
//! Kafka's precedence.

use std::collections::BTreeMap;

use axum::extract::State;
use ballast_kafka::{
    ClientQuota, QuotaEntity, QuotaEntityType, QuotaFilter, QuotaMatch, QuotaName,
};
use serde::{Deserialize, Serialize};

use super::fail;
use crate::extract::{Path, Query};
use crate::{ApiError, ApiOk, ApiResult, AppState};

pub(crate) use ballast_ops::quotas::{entity, entity_path, entity_type, parse_name, CLIENT_KEYS};

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct QuotaRow {
    /// `{"user": ..., "clientId": ..., "ip": ...}`; `<default>` names a default entity.
    entity: QuotaEntity,
    /// `user`, `client-id`, `user+client-id` or `ip`, with `default-` for default names.
    entity_type: String,
    /// The REST path of the entity (none for IP entities, which have no path).
    path: Option<String>,
    /// Whether any quota is set on the entity.
    configured: bool,
    values: BTreeMap<String, f64>,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct QuotaList {
    count: usize,
    quotas: Vec<QuotaRow>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct NoQuery {}

fn row(entity: QuotaEntity, values: BTreeMap<String, f64>) -> QuotaRow {
    QuotaRow {
        entity_type: entity_type(&entity),
        path: entity_path(&entity),
        configured: !values.is_empty(),
        entity,
        values,
    }
}

async fn all_quotas(state: &AppState) -> Result<Vec<ClientQuota>, ApiError> {
    let client = state.kafka.client().await?;
    client
        .describe_client_quotas(&QuotaFilter::all())
        .await
        .map_err(|e| fail(state, e))
}

#[utoipa::path(
    get,
    path = "/api/v1/quotas",
    tag = "quotas",
    operation_id = "listQuotas",
    summary = "List all quotas",
    description = "Every client-quota entity with its values.",
    responses(
        (status = 200, description = "List all quotas", body = ref("QuotaList")),
        (status = 502, description = "The cluster answered with an error"),
        (status = 503, description = "The cluster is unreachable"),
    )
)]
/// `GET /api/v1/quotas`: every entity with a quota, by entity.
pub async fn list(State(state): State<AppState>, Query(_): Query<NoQuery>) -> ApiResult<QuotaList> {
    list_quotas(&state).await.map(ApiOk)
}

/// The operation `list_quotas`: every client-quota entity with its values, by entity.
pub(crate) async fn list_quotas(state: &AppState) -> Result<QuotaList, ApiError> {
    let mut quotas: Vec<QuotaRow> = all_quotas(state)
        .await?
        .into_iter()
        .map(|q| row(q.entity, q.values))
        .collect();
    quotas.sort_by(|a, b| a.entity.cmp(&b.entity));
    Ok(QuotaList {
        count: quotas.len(),
        quotas,
    })
}

/// The quotas of exactly `entity` (200 with `configured: false` when none is set).
async fn one(state: &AppState, entity: QuotaEntity) -> ApiResult<QuotaRow> {
    let component = |name: &QuotaName| match name {
        QuotaName::Default => QuotaMatch::Default,
        QuotaName::Name(n) => QuotaMatch::Exact(n.clone()),
    };
    let mut components = Vec::new();
    if let Some(u) = &entity.user {
        components.push((QuotaEntityType::User, component(u)));
    }
    if let Some(c) = &entity.client_id {
        components.push((QuotaEntityType::ClientId, component(c)));
    }
    let client = state.kafka.client().await?;
    let found = client
        .describe_client_quotas(&QuotaFilter {
            components,
            strict: true,
        })
        .await
        .map_err(|e| fail(state, e))?;
    let values = found
        .into_iter()
        .find(|q| q.entity == entity)
        .map(|q| q.values)
        .unwrap_or_default();
    Ok(ApiOk(row(entity, values)))
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
    one(
        &state,
        entity(Some(QuotaName::Default), Some(QuotaName::Default)),
    )
    .await
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
    one(&state, entity(Some(QuotaName::Default), None)).await
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
    one(&state, entity(None, Some(QuotaName::Default))).await
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
    one(&state, entity(Some(user), None)).await
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
    one(&state, entity(None, Some(client_id))).await
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
    one(&state, entity(Some(user), Some(client_id))).await
}

// ---------------------------------------------------------------------------------------------
// resolution

#[derive(Debug, Default, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ResolveRequest {
    #[schema(min_length = 1)]
    user: Option<String>,
    client_id: Option<String>,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Level {
    /// 1 (most specific) to 8.
    rank: u8,
    /// e.g. `user+client-id`, `default-user`.
    level: &'static str,
    entity: QuotaEntity,
    /// Whether the level can apply to the request (it names a user or client id that was given).
    applies: bool,
    /// The quotas set on the entity (empty when none).
    values: BTreeMap<String, f64>,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Effective {
    key: String,
    /// None: no applicable level sets it (unlimited).
    value: Option<f64>,
    rank: Option<u8>,
    level: Option<&'static str>,
    entity: Option<QuotaEntity>,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Resolution {
    user: Option<String>,
    client_id: Option<String>,
    quotas: Vec<Effective>,
    levels: Vec<Level>,
}

/// Kafka's precedence (most specific first): user+client-id, user+default client-id, user,
/// default user+client-id, default user+default client-id, default user, client-id, default
/// client-id. A level naming a user or client id applies only when the request gives it; default
/// levels always apply. Each quota key resolves independently to the first level setting it.
fn resolve_levels(
    user: Option<&str>,
    client_id: Option<&str>,
    quotas: &[ClientQuota],
) -> (Vec<Level>, Vec<Effective>) {
    let named = |n: Option<&str>| n.map(|n| QuotaName::Name(n.to_string()));
    let d = || Some(QuotaName::Default);
    let placeholder = |kind: &str| Some(QuotaName::Name(format!("{{{kind}}}")));
    let (u, c) = (named(user), named(client_id));
    let levels: [(&'static str, Option<QuotaName>, Option<QuotaName>, bool); 8] = [
        (
            "user+client-id",
            u.clone().or_else(|| placeholder("user")),
            c.clone().or_else(|| placeholder("clientId")),
            u.is_some() && c.is_some(),
        ),
        (
            "user+default-client-id",
            u.clone().or_else(|| placeholder("user")),
            d(),
            u.is_some(),
        ),
        (
            "user",
            u.clone().or_else(|| placeholder("user")),
            None,
            u.is_some(),
        ),
        (
            "default-user+client-id",
            d(),
            c.clone().or_else(|| placeholder("clientId")),
            c.is_some(),
        ),
        ("default-user+default-client-id", d(), d(), true),
        ("default-user", d(), None, true),
        (
            "client-id",
            None,
            c.clone().or_else(|| placeholder("clientId")),
            c.is_some(),
        ),
        ("default-client-id", None, d(), true),
    ];
    let levels: Vec<Level> = levels
        .into_iter()
        .enumerate()
        .map(|(i, (level, user, client_id, applies))| {
            let entity = entity(user, client_id);
            let values = if applies {
                quotas
                    .iter()
                    .find(|q| q.entity == entity)
                    .map(|q| q.values.clone())
                    .unwrap_or_default()
            } else {
                BTreeMap::new()
            };
            Level {
                rank: i as u8 + 1,
                level,
                entity,
                applies,
                values,
            }
        })
        .collect();
    let mut keys: Vec<String> = CLIENT_KEYS.iter().map(|k| k.to_string()).collect();
    for l in &levels {
        for k in l.values.keys() {
            if !keys.contains(k) {
                keys.push(k.clone());
            }
        }
    }
    let effective = keys
        .into_iter()
        .map(|key| {
            let source = levels
                .iter()
                .find(|l| l.applies && l.values.contains_key(&key));
            Effective {
                value: source.and_then(|l| l.values.get(&key).copied()),
                rank: source.map(|l| l.rank),
                level: source.map(|l| l.level),
                entity: source.map(|l| l.entity.clone()),
                key,
            }
        })
        .collect();
    (levels, effective)
}

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
    if request.user.as_deref() == Some("") {
        return Err(ApiError::bad_request(
            "invalid body",
            "user must not be empty",
        ));
    }
    let quotas = all_quotas(&state).await?;
    let (levels, effective) = resolve_levels(
        request.user.as_deref(),
        request.client_id.as_deref(),
        &quotas,
    );
    Ok(ApiOk(Resolution {
        user: request.user,
        client_id: request.client_id,
        quotas: effective,
        levels,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn quota(
        user: Option<QuotaName>,
        client: Option<QuotaName>,
        values: &[(&str, f64)],
    ) -> ClientQuota {
        ClientQuota {
            entity: entity(user, client),
            values: values.iter().map(|(k, v)| (k.to_string(), *v)).collect(),
        }
    }

    fn n(s: &str) -> Option<QuotaName> {
        Some(QuotaName::name(s))
    }

    fn d() -> Option<QuotaName> {
        Some(QuotaName::Default)
    }

    fn effective<'a>(e: &'a [Effective], key: &str) -> &'a Effective {
        e.iter().find(|x| x.key == key).unwrap()
    }

    #[test]
    fn each_key_resolves_to_the_most_specific_level_that_sets_it() {
        let quotas = vec![
            quota(n("alice"), n("app"), &[("producer_byte_rate", 1.0)]),
            quota(
                n("alice"),
                None,
                &[("producer_byte_rate", 2.0), ("consumer_byte_rate", 3.0)],
            ),
            quota(d(), None, &[("request_percentage", 50.0)]),
            quota(
                None,
                n("app"),
                &[
                    ("consumer_byte_rate", 9.0),
                    ("controller_mutation_rate", 4.0),
                ],
            ),
        ];
        let (levels, e) = resolve_levels(Some("alice"), Some("app"), &quotas);
        assert_eq!(levels.len(), 8);
        assert_eq!(effective(&e, "producer_byte_rate").value, Some(1.0));
        assert_eq!(effective(&e, "producer_byte_rate").rank, Some(1));
        assert_eq!(effective(&e, "consumer_byte_rate").value, Some(3.0));
        assert_eq!(effective(&e, "consumer_byte_rate").level, Some("user"));
        assert_eq!(
            effective(&e, "request_percentage").level,
            Some("default-user")
        );
        assert_eq!(
            effective(&e, "controller_mutation_rate").level,
            Some("client-id")
        );
    }

    #[test]
    fn levels_naming_an_absent_user_or_client_do_not_apply_but_defaults_do() {
        let quotas = vec![
            quota(d(), d(), &[("producer_byte_rate", 5.0)]),
            quota(
                None,
                d(),
                &[("producer_byte_rate", 6.0), ("consumer_byte_rate", 7.0)],
            ),
        ];
        let (levels, e) = resolve_levels(None, Some("app"), &quotas);
        assert!(!levels[0].applies && !levels[1].applies && !levels[2].applies);
        assert!(levels[3].applies, "default user + this client id");
        assert_eq!(
            effective(&e, "producer_byte_rate").level,
            Some("default-user+default-client-id")
        );
        assert_eq!(
            effective(&e, "consumer_byte_rate").level,
            Some("default-client-id")
        );
        assert_eq!(
            effective(&e, "request_percentage").value,
            None,
            "unset is unlimited"
        );
    }

    #[test]
    fn entity_paths_and_types_name_defaults() {
        let e = entity(d(), n("app"));
        assert_eq!(entity_type(&e), "default-user+client-id");
        assert_eq!(
            entity_path(&e).as_deref(),
            Some("/api/v1/quotas/user/<default>/app")
        );
        assert_eq!(
            entity_path(&entity(d(), d())).as_deref(),
            Some("/api/v1/quotas/default")
        );
        assert_eq!(
            entity_path(&entity(None, n("x"))).as_deref(),
            Some("/api/v1/quotas/client-id/x")
        );
    }
}
