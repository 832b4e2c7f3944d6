//! Client quota entities: `update_quota` makes an entity hold exactly the given quotas,
//! `delete_quota` removes them all; both read before and after and are audited through the
//! pipeline (`quotas.update`, `quotas.delete`), serialised per entity.
//!
//! An entity is named as the REST paths name it: a user, a client id, or both; `<default>` names
//! the default one. Values are positive numbers; `request_percentage` may exceed 100 (100 is one
//! request-handler thread per broker). The audit event's `before` and `after` are
//! `{"entityPath", "entity", "values"}`, so a revert can restore the entity.

use std::collections::BTreeMap;

use ballast_kafka::{
    BrokerId, Client, QuotaAlteration, QuotaEntity, QuotaEntityType, QuotaFilter, QuotaMatch,
    QuotaName,
};
use serde::Serialize;
use serde_json::{json, Value};

use crate::actor::Actor;
use crate::cluster::{change_failed, item_failed, read_failed};
use crate::context::Context;
use crate::error::OpError;
use crate::pipeline::{Audited, Done, NotDone, Resource};
use crate::readback::{per_broker, until_shown, ReadBack};

/// The quota keys a client is held to; the resolution reports each even when unset (unlimited).
pub const CLIENT_KEYS: [&str; 4] = [
    "producer_byte_rate",
    "consumer_byte_rate",
    "request_percentage",
    "controller_mutation_rate",
];

/// The path segment that names a default entity in `/quotas/user/{user}/{clientId}`.
pub const DEFAULT_SEGMENT: &str = "<default>";

/// Quota values by key.
pub type Values = BTreeMap<String, f64>;

/// What `update_quota` and `delete_quota` answer.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct QuotaChange {
    pub entity: QuotaEntity,
    pub entity_type: String,
    pub path: String,
    pub before: Values,
    pub after: Values,
    /// Set when the cluster did not show the change in time (`after` is what it showed).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    #[serde(flatten)]
    pub audit: Audited,
}

/// The operation `update_quota`: the entity of `user` and `client_id` (`<default>` names the
/// default one) gets exactly `values`; read before and after, audited `quotas.update`.
pub async fn update_quota(
    ctx: &Context,
    actor: &Actor,
    user: Option<String>,
    client_id: Option<String>,
    values: BTreeMap<String, Value>,
) -> Result<QuotaChange, OpError> {
    let e = named(user, client_id)?;
    let target = validate(values)?;
    change(ctx, actor, "quotas.update", e, target).await
}

/// The operation `delete_quota`: removes every quota of the entity of `user` and `client_id`
/// (`<default>` names the default one; 404 when it has none); audited `quotas.delete`.
pub async fn delete_quota(
    ctx: &Context,
    actor: &Actor,
    user: Option<String>,
    client_id: Option<String>,
) -> Result<QuotaChange, OpError> {
    let e = named(user, client_id)?;
    change(ctx, actor, "quotas.delete", e, Values::new()).await
}

/// Quota values as asked: at least one, each a known client quota with a number above 0.
pub fn validate(values: BTreeMap<String, Value>) -> Result<Values, OpError> {
    if values.is_empty() {
        return Err(OpError::bad_input(
            "invalid request body",
            "values must set at least one quota (DELETE removes an entity's quotas)",
        ));
    }
    values
        .into_iter()
        .map(|(key, value)| {
            if !CLIENT_KEYS.contains(&key.as_str()) {
                return Err(OpError::bad_input(
                    "invalid request body",
                    format!(
                        "{key:?} is not a client quota; expected one of {}",
                        CLIENT_KEYS.join(", ")
                    ),
                ));
            }
            match value.as_f64() {
                Some(v) if v.is_finite() && v > 0.0 => Ok((key, v)),
                _ => Err(OpError::bad_input(
                    "invalid request body",
                    format!("{key}: expected a number above 0, got {value}"),
                )),
            }
        })
        .collect()
}

/// A user or client-id name as a path segment gives it: `<default>` is the default entity;
/// empty is refused.
pub fn parse_name(kind: &str, raw: String) -> Result<QuotaName, OpError> {
    if raw.is_empty() {
        return Err(OpError::bad_input(
            "invalid path",
            format!("{kind} must not be empty"),
        ));
    }
    Ok(if raw == DEFAULT_SEGMENT {
        QuotaName::Default
    } else {
        QuotaName::Name(raw)
    })
}

/// The entity of a user and a client id (no IP).
pub fn entity(user: Option<QuotaName>, client_id: Option<QuotaName>) -> QuotaEntity {
    QuotaEntity {
        user,
        client_id,
        ip: None,
    }
}

/// The entity a user and a client id name as the REST paths do (`<default>`: the default one);
/// an empty name, or neither, is refused.
pub fn named(user: Option<String>, client_id: Option<String>) -> Result<QuotaEntity, OpError> {
    let user = user.map(|u| parse_name("user", u)).transpose()?;
    let client_id = client_id.map(|c| parse_name("clientId", c)).transpose()?;
    if user.is_none() && client_id.is_none() {
        return Err(OpError::bad_input(
            "invalid path",
            "name the user, the client id, or both",
        ));
    }
    Ok(entity(user, client_id))
}

fn name_label(name: &QuotaName, kind: &str) -> String {
    match name {
        QuotaName::Default => format!("default-{kind}"),
        QuotaName::Name(_) => kind.to_string(),
    }
}

fn segment(name: &QuotaName) -> String {
    match name {
        QuotaName::Default => DEFAULT_SEGMENT.to_string(),
        QuotaName::Name(n) => n.clone(),
    }
}

/// `user`, `client-id`, `user+client-id` or `ip`, with `default-` for default names.
pub fn entity_type(e: &QuotaEntity) -> String {
    let mut parts = Vec::new();
    if let Some(u) = &e.user {
        parts.push(name_label(u, "user"));
    }
    if let Some(c) = &e.client_id {
        parts.push(name_label(c, "client-id"));
    }
    if let Some(i) = &e.ip {
        parts.push(name_label(i, "ip"));
    }
    parts.join("+")
}

/// The REST path of an entity (none for IP entities, which have no path).
pub fn entity_path(e: &QuotaEntity) -> Option<String> {
    match (&e.user, &e.client_id, &e.ip) {
        (_, _, Some(_)) => None,
        (Some(QuotaName::Default), Some(QuotaName::Default), None) => {
            Some("/api/v1/quotas/default".into())
        }
        (Some(QuotaName::Default), None, None) => Some("/api/v1/quotas/default-user".into()),
        (None, Some(QuotaName::Default), None) => Some("/api/v1/quotas/default-client-id".into()),
        (Some(u), None, None) => Some(format!("/api/v1/quotas/user/{}", segment(u))),
        (None, Some(c), None) => Some(format!("/api/v1/quotas/client-id/{}", segment(c))),
        (Some(u), Some(c), None) => {
            Some(format!("/api/v1/quotas/user/{}/{}", segment(u), segment(c)))
        }
        (None, None, None) => None,
    }
}

/// The canonical path of an entity: the serialisation key and the audit target.
pub fn path_of(e: &QuotaEntity) -> String {
    entity_path(e).unwrap_or_default()
}

/// The quotas set on exactly `e` now (empty when none).
pub async fn read(ctx: &Context, client: &Client, e: &QuotaEntity) -> Result<Values, OpError> {
    read_via(ctx, client, None, e).await
}

/// The quotas set on exactly `e` as `broker` shows them (None: any broker).
async fn read_via(
    ctx: &Context,
    client: &Client,
    broker: Option<BrokerId>,
    e: &QuotaEntity,
) -> Result<Values, OpError> {
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
    .map_err(|err| read_failed(&ctx.kafka, err))?;
    Ok(found
        .into_iter()
        .find(|q| &q.entity == e)
        .map(|q| q.values)
        .unwrap_or_default())
}

/// Makes `e` hold exactly `target`: sets its keys, removes the keys of `current` it lacks.
pub async fn apply(
    ctx: &Context,
    client: &Client,
    e: &QuotaEntity,
    current: &Values,
    target: &Values,
) -> Result<(), OpError> {
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
        .map_err(|err| change_failed(&ctx.kafka, err))?;
    match results.iter().find_map(|r| r.error.as_ref()) {
        Some(err) => Err(item_failed(&format!("quota entity {}", path_of(e)), err)),
        None => Ok(()),
    }
}

/// The audit shape of an entity's quotas.
pub fn to_json(e: &QuotaEntity, values: &Values) -> Value {
    json!({ "entityPath": path_of(e), "entity": e, "values": values })
}

/// An entity and its quotas back from the audit shape; None when `v` is not that shape.
pub fn from_json(v: &Value) -> Option<(QuotaEntity, Values)> {
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

/// The quotas of `e` once the cluster shows exactly `target` (or what it shows when
/// `BALLAST_READBACK_TIMEOUT` passes, with a note).
pub async fn read_back(
    ctx: &Context,
    client: &Client,
    e: &QuotaEntity,
    target: Values,
) -> ReadBack<Values> {
    let wanted = target.clone();
    until_shown(
        ctx,
        target,
        || per_broker(client, |broker| read_via(ctx, client, Some(broker), e)),
        |now| *now == wanted,
    )
    .await
}

/// Through the pipeline, serialised per entity: read, changed to exactly `target` (an empty
/// `target` deletes: 404 when the entity has no quota), read back and audited.
async fn change(
    ctx: &Context,
    actor: &Actor,
    action: &str,
    e: QuotaEntity,
    target: Values,
) -> Result<QuotaChange, OpError> {
    let client = ctx.kafka.client().await?;
    let path = path_of(&e);
    let mut event = actor.event(ctx.clock.now_ms(), action, path.clone());
    event.summary = json!({ "entityPath": path, "entity": e, "values": target });
    let ((before, ReadBack { value: after, note }), recorded) = ctx
        .pipeline
        .run([Resource::QuotaEntity(path.clone())], event, || async {
            let before = read(ctx, &client, &e).await.map_err(NotDone::Refused)?;
            if target.is_empty() && before.is_empty() {
                return Err(NotDone::Refused(OpError::not_found(
                    "no quota set",
                    format!("the entity {path} has no quota to delete"),
                )));
            }
            if let Err(error) = apply(ctx, &client, &e, &before, &target).await {
                let details = format!("the cluster failed the change: {error}");
                return Err(NotDone::Failed {
                    error,
                    before: Some(to_json(&e, &before)),
                    details,
                });
            }
            let after = read_back(ctx, &client, &e, target.clone()).await;
            let (b, a, note) = (
                to_json(&e, &before),
                to_json(&e, &after.value),
                after.note.clone(),
            );
            Ok(Done::new((before, after), Some(b), Some(a)).noted(note))
        })
        .await?;
    Ok(QuotaChange {
        entity_type: entity_type(&e),
        entity: e,
        path,
        before,
        after,
        note,
        audit: Audited::from(recorded),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn values(v: Value) -> BTreeMap<String, Value> {
        serde_json::from_value(v).expect("a map")
    }

    #[test]
    fn percentages_above_100_are_accepted_but_unknown_keys_and_non_positive_values_are_not() {
        let ok = validate(values(json!({"request_percentage": 250}))).expect("valid");
        assert_eq!(ok["request_percentage"], 250.0);
        for bad in [
            json!({}),
            json!({"bogus_rate": 1}),
            json!({"producer_byte_rate": 0}),
            json!({"producer_byte_rate": -5}),
            json!({"producer_byte_rate": "fast"}),
        ] {
            assert!(validate(values(bad.clone())).is_err(), "{bad}");
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

    #[test]
    fn an_entity_needs_a_user_or_a_client_id_and_no_empty_name() {
        assert!(named(None, None).is_err());
        assert!(named(Some(String::new()), None).is_err());
        assert_eq!(
            named(Some("<default>".into()), None).map(|e| entity_type(&e)),
            Ok("default-user".to_string())
        );
    }
}
