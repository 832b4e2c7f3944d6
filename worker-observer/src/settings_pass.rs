//! The observer's settings pass: every broker's configuration after each sample, and ACLs and
//! client quotas every [`SECURITY_EVERY`] samples (they change rarely and can be many), stored in
//! SQLite for operators and the dashboard. Freshness goes to `observations` (`brokerConfigs`,
//! `security`). A failure is recorded there and never fails the sample.

use ballast_kafka::{AclFilter, Client, ConfigResource, QuotaEntity, QuotaFilter, QuotaName};
use ballast_model::BrokerId;
use ballast_schema::{Observation, Store, StoredAcl, StoredBrokerConfig, StoredQuota};
use serde::Serialize;
use serde_json::{json, Value};

/// ACLs and quotas are read on every this many samples (and on the first).
pub const SECURITY_EVERY: u64 = 5;

/// An enum's wire name as serde writes it (`"topic"`, `"allow"`, ...).
fn name_of(v: &impl Serialize) -> String {
    match serde_json::to_value(v) {
        Ok(Value::String(s)) => s,
        Ok(other) => other.to_string(),
        Err(_) => String::new(),
    }
}

fn quota_part(n: &QuotaName) -> String {
    match n {
        QuotaName::Default => "<default>".to_string(),
        QuotaName::Name(s) => s.clone(),
    }
}

/// `user=alice/client-id=app-1`, `user=<default>`, `ip=10.0.0.1`.
pub fn entity_path(e: &QuotaEntity) -> String {
    let mut parts = Vec::new();
    if let Some(u) = &e.user {
        parts.push(format!("user={}", quota_part(u)));
    }
    if let Some(c) = &e.client_id {
        parts.push(format!("client-id={}", quota_part(c)));
    }
    if let Some(i) = &e.ip {
        parts.push(format!("ip={}", quota_part(i)));
    }
    parts.join("/")
}

/// Reads every broker's configuration and stores it.
pub async fn broker_configs(
    client: &Client,
    store: &Store,
    brokers: &[BrokerId],
    now_ms: i64,
) -> Observation {
    let resources: Vec<ConfigResource> =
        brokers.iter().map(|b| ConfigResource::Broker(*b)).collect();
    let result = client.describe_configs(&resources).await;
    let (ok, error, detail) = match result {
        Ok(configs) => {
            let mut rows = Vec::new();
            let mut failed = Vec::new();
            for rc in configs {
                let ConfigResource::Broker(broker_id) = rc.resource else {
                    continue;
                };
                if let Some(e) = rc.error {
                    failed.push(json!({ "brokerId": broker_id, "error": e.to_string() }));
                    continue;
                }
                for e in rc.entries {
                    rows.push(StoredBrokerConfig {
                        broker_id,
                        name: e.name,
                        value: if e.sensitive { None } else { e.value },
                        source: name_of(&e.source),
                        is_default: e.is_default,
                        read_only: e.read_only,
                        sensitive: e.sensitive,
                    });
                }
            }
            let count = rows.len();
            match store.replace_broker_configs(&rows, now_ms) {
                Ok(()) => (
                    failed.is_empty(),
                    None,
                    json!({ "entries": count, "failed": failed }),
                ),
                Err(e) => (false, Some(e.to_string()), json!({})),
            }
        }
        Err(e) => (false, Some(e.to_string()), json!({})),
    };
    Observation {
        kind: "brokerConfigs".into(),
        observed_at_ms: now_ms,
        ok,
        error,
        detail,
    }
}

/// Reads ACL bindings and client quotas and stores them.
pub async fn security(client: &Client, store: &Store, now_ms: i64) -> Observation {
    let failed = |e: String| Observation {
        kind: "security".into(),
        observed_at_ms: now_ms,
        ok: false,
        error: Some(e),
        detail: json!({}),
    };
    // A cluster without an authorizer answers SECURITY_DISABLED: no ACLs, not a failure.
    let acls = match client.describe_acls(&AclFilter::all()).await {
        Ok(list) => list,
        Err(e) if e.kafka_code() == Some(54) => Vec::new(),
        Err(e) => return failed(format!("ACLs: {e}")),
    };
    let quotas = match client.describe_client_quotas(&QuotaFilter::all()).await {
        Ok(list) => list,
        Err(e) => return failed(format!("quotas: {e}")),
    };
    let acl_rows: Vec<StoredAcl> = acls
        .iter()
        .map(|a| StoredAcl {
            resource_type: name_of(&a.resource_type),
            resource_name: a.resource_name.clone(),
            pattern_type: name_of(&a.pattern_type),
            principal: a.principal.clone(),
            host: a.host.clone(),
            operation: name_of(&a.operation),
            permission: name_of(&a.permission_type),
        })
        .collect();
    let quota_rows: Vec<StoredQuota> = quotas
        .iter()
        .map(|q| StoredQuota {
            entity: entity_path(&q.entity),
            entity_json: serde_json::to_value(&q.entity).unwrap_or(Value::Null),
            values: json!(q.values),
        })
        .collect();
    match store.replace_security(&acl_rows, &quota_rows, now_ms) {
        Ok(()) => Observation {
            kind: "security".into(),
            observed_at_ms: now_ms,
            ok: true,
            error: None,
            detail: json!({ "acls": acl_rows.len(), "quotas": quota_rows.len() }),
        },
        Err(e) => failed(e.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quota_entities_are_stored_under_a_readable_path() {
        let e = QuotaEntity {
            user: Some(QuotaName::name("alice")),
            client_id: Some(QuotaName::Default),
            ip: None,
        };
        assert_eq!(entity_path(&e), "user=alice/client-id=<default>");
    }
}
