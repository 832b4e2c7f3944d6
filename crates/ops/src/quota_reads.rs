//! Client quotas read: every entity (`list_quotas`), one entity exactly (`quota_of`), and the
//! effective quotas of a user and client id under Kafka's precedence (`resolve_quotas`).

use std::collections::BTreeMap;

use ballast_kafka::{
    ClientQuota, QuotaEntity, QuotaEntityType, QuotaFilter, QuotaMatch, QuotaName,
};
use serde::{Deserialize, Serialize};

use crate::cluster::read_failed;
use crate::context::Context;
use crate::error::OpError;
use crate::quotas::{entity, entity_path, entity_type, CLIENT_KEYS};

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct QuotaRow {
    /// `{"user": ..., "clientId": ..., "ip": ...}`; `<default>` names a default entity.
    pub entity: QuotaEntity,
    /// `user`, `client-id`, `user+client-id` or `ip`, with `default-` for default names.
    pub entity_type: String,
    /// The REST path of the entity (none for IP entities, which have no path).
    pub path: Option<String>,
    /// Whether any quota is set on the entity.
    pub configured: bool,
    pub values: BTreeMap<String, f64>,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct QuotaList {
    pub count: usize,
    pub quotas: Vec<QuotaRow>,
}

fn row(entity: QuotaEntity, values: BTreeMap<String, f64>) -> QuotaRow {
    QuotaRow {
        entity_type: entity_type(&entity),
        path: entity_path(&entity),
        configured: !values.is_empty(),
        entity,
        values,
    }
}

async fn all_quotas(ctx: &Context) -> Result<Vec<ClientQuota>, OpError> {
    let client = ctx.kafka.client().await?;
    client
        .describe_client_quotas(&QuotaFilter::all())
        .await
        .map_err(|e| read_failed(&ctx.kafka, e))
}

/// The operation `list_quotas`: every client-quota entity with its values, by entity.
pub async fn list_quotas(ctx: &Context) -> Result<QuotaList, OpError> {
    let mut quotas: Vec<QuotaRow> = all_quotas(ctx)
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

/// The quotas of exactly `entity` (`configured: false` and no values when none is set).
pub async fn quota_of(ctx: &Context, entity: QuotaEntity) -> Result<QuotaRow, OpError> {
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
    let client = ctx.kafka.client().await?;
    let found = client
        .describe_client_quotas(&QuotaFilter {
            components,
            strict: true,
        })
        .await
        .map_err(|e| read_failed(&ctx.kafka, e))?;
    let values = found
        .into_iter()
        .find(|q| q.entity == entity)
        .map(|q| q.values)
        .unwrap_or_default();
    Ok(row(entity, values))
}

// ---------------------------------------------------------------------------------------------
// resolution

#[derive(Debug, Default, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ResolveRequest {
    #[schema(min_length = 1)]
    pub user: Option<String>,
    pub client_id: Option<String>,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Level {
    /// 1 (most specific) to 8.
    pub rank: u8,
    /// e.g. `user+client-id`, `default-user`.
    pub level: &'static str,
    pub entity: QuotaEntity,
    /// Whether the level can apply to the request (it names a user or client id that was given).
    pub applies: bool,
    /// The quotas set on the entity (empty when none).
    pub values: BTreeMap<String, f64>,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Effective {
    pub key: String,
    /// None: no applicable level sets it (unlimited).
    pub value: Option<f64>,
    pub rank: Option<u8>,
    pub level: Option<&'static str>,
    pub entity: Option<QuotaEntity>,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Resolution {
    pub user: Option<String>,
    pub client_id: Option<String>,
    pub quotas: Vec<Effective>,
    pub levels: Vec<Level>,
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

/// The operation behind `POST /api/v1/quotas/resolve`: the quotas that apply to a user and
/// client id, level by level as Kafka resolves them.
pub async fn resolve_quotas(ctx: &Context, request: ResolveRequest) -> Result<Resolution, OpError> {
    if request.user.as_deref() == Some("") {
        return Err(OpError::bad_input("invalid body", "user must not be empty"));
    }
    let quotas = all_quotas(ctx).await?;
    let (levels, effective) = resolve_levels(
        request.user.as_deref(),
        request.client_id.as_deref(),
        &quotas,
    );
    Ok(Resolution {
        user: request.user,
        client_id: request.client_id,
        quotas: effective,
        levels,
    })
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
