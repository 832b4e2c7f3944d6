//! Client quota entities: PUT sets an entity's quotas, DELETE removes them.
//!
//! PUT replaces: the entity ends up with exactly the keys of the body (keys it had and the body
//! leaves out are removed). Values are positive numbers; `request_percentage` may exceed 100 (100
//! is one request-handler thread per broker). The audit event's `before` and `after` are
//! `{"entityPath", "entity", "values"}`, so a revert can restore the entity.

use std::collections::BTreeMap;

use axum::extract::State;
use ballast_kafka::{
    BrokerId, Client, QuotaAlteration, QuotaEntity, QuotaEntityType, QuotaFilter, QuotaMatch,
    QuotaName,
};
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use super::super::live::quotas::{
    entity, entity_path, entity_type, parse_name, CLIENT_KEYS, DEFAULT_SEGMENT,
};
use super::readback::{per_broker, until_shown, ReadBack};
use super::{fail, item_fail};
use crate::audit::{Actor, Audited};
use crate::extract::{Json, Path};
use crate::{ApiError, ApiOk, ApiResult, AppState};
use ballast_ops::{Done, NotDone, Resource};

/// Quota values by key.
pub(crate) type Values = BTreeMap<String, f64>;

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
        .property_names(Some(crate::openapi::string_enum(
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

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct QuotaChange {
    entity: QuotaEntity,
    entity_type: String,
    path: String,
    before: Values,
    after: Values,
    /// Set when the cluster did not show the change in time (`after` is what it showed).
    #[serde(skip_serializing_if = "Option::is_none")]
    note: Option<String>,
    #[serde(flatten)]
    audit: Audited,
}

fn validate(body: PutBody) -> Result<Values, ApiError> {
    if body.values.is_empty() {
        return Err(ApiError::bad_request(
            "invalid request body",
            "values must set at least one quota (DELETE removes an entity's quotas)",
        ));
    }
    body.values
        .into_iter()
        .map(|(key, value)| {
            if !CLIENT_KEYS.contains(&key.as_str()) {
                return Err(ApiError::bad_request(
                    "invalid request body",
                    format!(
                        "{key:?} is not a client quota; expected one of {}",
                        CLIENT_KEYS.join(", ")
                    ),
                ));
            }
            match value.as_f64() {
                Some(v) if v.is_finite() && v > 0.0 => Ok((key, v)),
                _ => Err(ApiError::bad_request(
                    "invalid request body",
                    format!("{key}: expected a number above 0, got {value}"),
                )),
            }
        })
        .collect()
}

/// The quotas set on exactly `entity` now (empty when none).
pub(crate) async fn read(
    state: &AppState,
    client: &Client,
    e: &QuotaEntity,
) -> Result<Values, ApiError> {
    read_via(state, client, None, e).await
}

/// The quotas set on exactly `e` as `broker` shows them (None: any broker).
async fn read_via(
    state: &AppState,
    client: &Client,
    broker: Option<BrokerId>,
    e: &QuotaEntity,
) -> Result<Values, ApiError> {
    let component = |name: &QuotaName| match name {
        QuotaName::Default => QuotaMatch::Default,
        QuotaName::Name(n) => QuotaMatch::Exact(n.clone()),
    };
    let mut components = Vec::new();
    if let Some(u) = &e.user {
        components.push((QuotaEntityType::User, component(u)));
    }
    if let Some(c) = &e.client_id {
        components.push((QuotaEntityType::ClientId, component(c)));
    }
    let filter = QuotaFilter {
        components,
        strict: true,
    };
    let found = match broker {
        Some(b) => client.describe_client_quotas_at(b, &filter).await,
        None => client.describe_client_quotas(&filter).await,
    }
    .map_err(|err| fail(state, err))?;
    Ok(found
        .into_iter()
        .find(|q| &q.entity == e)
        .map(|q| q.values)
        .unwrap_or_default())
}

/// Makes `e` hold exactly `target`: sets its keys, removes the keys of `current` it lacks.
pub(crate) async fn apply(
    state: &AppState,
    client: &Client,
    e: &QuotaEntity,
    current: &Values,
    target: &Values,
) -> Result<(), ApiError> {
    let mut ops: Vec<(String, Option<f64>)> =
        target.iter().map(|(k, v)| (k.clone(), Some(*v))).collect();
    ops.extend(
        current
            .keys()
            .filter(|k| !target.contains_key(*k))
            .map(|k| (k.clone(), None)),
    );
    if ops.is_empty() {
        return Ok(());
    }
    let results = client
        .alter_client_quotas(
            &[QuotaAlteration {
                entity: e.clone(),
                ops,
            }],
            false,
        )
        .await
        .map_err(|err| fail(state, err))?;
    match results.iter().find_map(|r| r.error.as_ref()) {
        Some(err) => Err(item_fail(&format!("quota entity {}", path_of(e)), err)),
        None => Ok(()),
    }
}

pub(crate) fn path_of(e: &QuotaEntity) -> String {
    entity_path(e).unwrap_or_default()
}

/// The audit shape of an entity's quotas.
pub(crate) fn to_json(e: &QuotaEntity, values: &Values) -> Value {
    json!({ "entityPath": path_of(e), "entity": e, "values": values })
}

/// An entity and its quotas back from the audit shape; None when `v` is not that shape.
pub(crate) fn from_json(v: &Value) -> Option<(QuotaEntity, Values)> {
    let e = v.get("entity")?.as_object()?;
    let name = |key: &str| -> Option<Option<QuotaName>> {
        match e.get(key) {
            None | Some(Value::Null) => Some(None),
            Some(Value::String(s)) if s == DEFAULT_SEGMENT => Some(Some(QuotaName::Default)),
            Some(Value::String(s)) => Some(Some(QuotaName::Name(s.clone()))),
            Some(_) => None,
        }
    };
    if e.keys().any(|k| k != "user" && k != "clientId") {
        return None;
    }
    let entity = entity(name("user")?, name("clientId")?);
    if entity.user.is_none() && entity.client_id.is_none() {
        return None;
    }
    let values = v
        .get("values")?
        .as_object()?
        .iter()
        .map(|(k, v)| Some((k.clone(), v.as_f64()?)))
        .collect::<Option<Values>>()?;
    Some((entity, values))
}

/// The entity a user and a client id name as the REST paths do (`<default>`: the default one);
/// an empty name, or neither, is refused.
fn named(user: Option<String>, client_id: Option<String>) -> Result<QuotaEntity, ApiError> {
    let user = user.map(|u| parse_name("user", u)).transpose()?;
    let client_id = client_id.map(|c| parse_name("clientId", c)).transpose()?;
    if user.is_none() && client_id.is_none() {
        return Err(ApiError::bad_request(
            "invalid path",
            "name the user, the client id, or both",
        ));
    }
    Ok(entity(user, client_id))
}

/// The operation `update_quota`: the entity of `user` and `client_id` (`<default>` names the
/// default one) gets exactly the body's quotas; read before and after, audited `quotas.update`.
pub(crate) async fn update_quota(
    state: &AppState,
    actor: &Actor,
    user: Option<String>,
    client_id: Option<String>,
    body: PutBody,
) -> Result<QuotaChange, ApiError> {
    let e = named(user, client_id)?;
    let target = validate(body)?;
    change(state, actor, "quotas.update", e, target).await
}

/// The operation `delete_quota`: removes every quota of the entity of `user` and `client_id`
/// (`<default>` names the default one; 404 when it has none); audited `quotas.delete`.
pub(crate) async fn delete_quota(
    state: &AppState,
    actor: &Actor,
    user: Option<String>,
    client_id: Option<String>,
) -> Result<QuotaChange, ApiError> {
    let e = named(user, client_id)?;
    change(state, actor, "quotas.delete", e, Values::new()).await
}

/// The quotas of `e` once the cluster shows exactly `target` (or what it shows when
/// `BALLAST_READBACK_TIMEOUT` passes, with a note).
pub(crate) async fn read_back(
    state: &AppState,
    client: &Client,
    e: &QuotaEntity,
    target: Values,
) -> ReadBack<Values> {
    let wanted = target.clone();
    until_shown(
        state,
        target,
        || per_broker(client, |broker| read_via(state, client, Some(broker), e)),
        |now| *now == wanted,
    )
    .await
}

/// Through the pipeline, serialised per entity: read, changed to exactly `target` (an empty
/// `target` deletes: 404 when the entity has no quota), read back and audited.
async fn change(
    state: &AppState,
    actor: &Actor,
    action: &str,
    e: QuotaEntity,
    target: Values,
) -> Result<QuotaChange, ApiError> {
    let client = state.kafka.client().await?;
    let path = path_of(&e);
    let mut event = actor.event(state.clock.now_ms(), action, path.clone());
    event.summary = json!({ "entityPath": path, "entity": e, "values": target });
    let ((before, ReadBack { value: after, note }), recorded) = state
        .pipeline
        .run([Resource::QuotaEntity(path.clone())], event, || async {
            let before = read(state, &client, &e).await.map_err(NotDone::Refused)?;
            if target.is_empty() && before.is_empty() {
                return Err(NotDone::Refused(ApiError::not_found(
                    "no quota set",
                    format!("the entity {path} has no quota to delete"),
                )));
            }
            if let Err(error) = apply(state, &client, &e, &before, &target).await {
                let details = format!(
                    "the cluster failed the change: {}: {}",
                    error.error, error.details
                );
                return Err(NotDone::Failed {
                    error,
                    before: Some(to_json(&e, &before)),
                    details,
                });
            }
            let after = read_back(state, &client, &e, target.clone()).await;
            let (b, a, note) = (
                to_json(&e, &before),
                to_json(&e, &after.value),
                after.note.clone(),
            );
            Ok(Done::new((before, after), Some(b), Some(a)).noted(note))
        })
        .await?;
    let audit = Audited::from(recorded);
    Ok(QuotaChange {
        entity_type: entity_type(&e),
        entity: e,
        path,
        before,
        after,
        note,
        audit,
    })
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
    actor: Actor,
    Json(body): Json<PutBody>,
) -> ApiResult<QuotaChange> {
    update_quota(&state, &actor, default_segment(), default_segment(), body)
        .await
        .map(ApiOk)
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
    actor: Actor,
) -> ApiResult<QuotaChange> {
    delete_quota(&state, &actor, default_segment(), default_segment())
        .await
        .map(ApiOk)
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
    actor: Actor,
    Json(body): Json<PutBody>,
) -> ApiResult<QuotaChange> {
    update_quota(&state, &actor, default_segment(), None, body)
        .await
        .map(ApiOk)
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
    actor: Actor,
) -> ApiResult<QuotaChange> {
    delete_quota(&state, &actor, default_segment(), None)
        .await
        .map(ApiOk)
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
    actor: Actor,
    Json(body): Json<PutBody>,
) -> ApiResult<QuotaChange> {
    update_quota(&state, &actor, None, default_segment(), body)
        .await
        .map(ApiOk)
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
    actor: Actor,
) -> ApiResult<QuotaChange> {
    delete_quota(&state, &actor, None, default_segment())
        .await
        .map(ApiOk)
}

#[utoipa::path(
    put,
    path = "/api/v1/quotas/user/{user}",
    tag = "quotas",
    operation_id = "putUserQuota",
    summary = "Set the quota of a user",
    description = "Sets the given keys (e.g. `producer_byte_rate`, `request_percentage`, values above 100%% accepted); read before and after; audited.",
    params(("user" = String, Path, description = "user principal name")),
    request_body(content = PutBody),
    responses(
        (status = 200, description = "Set the quota of a user", body = ref("QuotaChange")),
        (status = 400, description = "An unknown key or invalid value"),
        (status = 502, description = "The cluster answered with an error"),
        (status = 503, description = "The cluster is unreachable"),
    )
)]
/// `PUT /api/v1/quotas/user/{user}` (`<default>` names the default user)
pub async fn put_user(
    State(state): State<AppState>,
    actor: Actor,
    Path(user): Path<String>,
    Json(body): Json<PutBody>,
) -> ApiResult<QuotaChange> {
    update_quota(&state, &actor, Some(user), None, body)
        .await
        .map(ApiOk)
}

#[utoipa::path(
    delete,
    path = "/api/v1/quotas/user/{user}",
    tag = "quotas",
    operation_id = "deleteUserQuota",
    summary = "Remove the quota of a user",
    description = "Removes every value of the entity; audited.",
    params(("user" = String, Path, description = "user principal name")),
    responses(
        (status = 200, description = "Remove the quota of a user", body = ref("QuotaChange")),
        (status = 404, description = "The entity has no quota"),
        (status = 502, description = "The cluster answered with an error"),
        (status = 503, description = "The cluster is unreachable"),
    )
)]
/// `DELETE /api/v1/quotas/user/{user}`
pub async fn delete_user(
    State(state): State<AppState>,
    actor: Actor,
    Path(user): Path<String>,
) -> ApiResult<QuotaChange> {
    delete_quota(&state, &actor, Some(user), None)
        .await
        .map(ApiOk)
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
    actor: Actor,
    Path(client_id): Path<String>,
    Json(body): Json<PutBody>,
) -> ApiResult<QuotaChange> {
    update_quota(&state, &actor, None, Some(client_id), body)
        .await
        .map(ApiOk)
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
    actor: Actor,
    Path(client_id): Path<String>,
) -> ApiResult<QuotaChange> {
    delete_quota(&state, &actor, None, Some(client_id))
        .await
        .map(ApiOk)
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
    actor: Actor,
    Path((user, client_id)): Path<(String, String)>,
    Json(body): Json<PutBody>,
) -> ApiResult<QuotaChange> {
    update_quota(&state, &actor, Some(user), Some(client_id), body)
        .await
        .map(ApiOk)
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
    actor: Actor,
    Path((user, client_id)): Path<(String, String)>,
) -> ApiResult<QuotaChange> {
    delete_quota(&state, &actor, Some(user), Some(client_id))
        .await
        .map(ApiOk)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn body(v: Value) -> PutBody {
        serde_json::from_value(v).unwrap()
    }

    #[test]
    fn percentages_above_100_are_accepted_but_unknown_keys_and_non_positive_values_are_not() {
        let values = validate(body(json!({"values": {"request_percentage": 250}}))).unwrap();
        assert_eq!(values["request_percentage"], 250.0);
        for bad in [
            json!({"values": {}}),
            json!({"values": {"bogus_rate": 1}}),
            json!({"values": {"producer_byte_rate": 0}}),
            json!({"values": {"producer_byte_rate": -5}}),
            json!({"values": {"producer_byte_rate": "fast"}}),
        ] {
            assert!(validate(body(bad.clone())).is_err(), "{bad}");
        }
    }

    #[test]
    fn the_audit_shape_round_trips_with_default_names() {
        let e = entity(Some(QuotaName::Default), Some(QuotaName::name("app")));
        let values = Values::from([("producer_byte_rate".to_string(), 1024.0)]);
        let v = to_json(&e, &values);
        assert_eq!(v["entityPath"], "/api/v1/quotas/user/<default>/app");
        assert_eq!(from_json(&v), Some((e, values)));
        assert_eq!(
            from_json(&json!({"entity": {"ip": "1.2.3.4"}, "values": {}})),
            None
        );
    }
}
