//! `cluster_broker_configs`, `cluster_acls`, `cluster_quotas`: what the observer last read of the
//! cluster's settings. Each write replaces the whole table in one transaction.

use rusqlite::params;
use serde::{Deserialize, Serialize};

use crate::util::{json_col, json_text};
use crate::{Store, StoreError};

/// One broker configuration entry. `value` is None for sensitive entries (never stored).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StoredBrokerConfig {
    pub broker_id: i32,
    pub name: String,
    pub value: Option<String>,
    pub source: String,
    pub is_default: bool,
    pub read_only: bool,
    pub sensitive: bool,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StoredAcl {
    pub resource_type: String,
    pub resource_name: String,
    pub pattern_type: String,
    pub principal: String,
    pub host: String,
    pub operation: String,
    pub permission: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StoredQuota {
    /// The entity's path, e.g. `user=alice/client-id=app-1`.
    pub entity: String,
    pub entity_json: serde_json::Value,
    pub values: serde_json::Value,
}

impl Store {
    /// Replaces every stored broker configuration entry (sensitive values are dropped).
    pub fn replace_broker_configs(
        &self,
        rows: &[StoredBrokerConfig],
        now_ms: i64,
    ) -> Result<(), StoreError> {
        self.write(|tx| {
            tx.execute("DELETE FROM cluster_broker_configs", [])?;
            let mut stmt = tx.prepare_cached(
                "INSERT OR REPLACE INTO cluster_broker_configs (broker_id, name, value, source,
                    is_default, read_only, sensitive, observed_at_ms)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
            )?;
            for r in rows {
                let value = if r.sensitive {
                    None
                } else {
                    r.value.as_deref()
                };
                stmt.execute(params![
                    r.broker_id,
                    r.name,
                    value,
                    r.source,
                    r.is_default,
                    r.read_only,
                    r.sensitive,
                    now_ms
                ])?;
            }
            Ok(())
        })
    }

    /// Stored broker configuration entries, of one broker or all, by broker and name.
    pub fn broker_configs(
        &self,
        broker_id: Option<i32>,
    ) -> Result<Vec<StoredBrokerConfig>, StoreError> {
        self.read(|tx| {
            Ok(tx
                .prepare_cached(
                    "SELECT broker_id, name, value, source, is_default, read_only, sensitive
                     FROM cluster_broker_configs WHERE ?1 IS NULL OR broker_id = ?1
                     ORDER BY broker_id, name",
                )?
                .query_map([broker_id], |r| {
                    Ok(StoredBrokerConfig {
                        broker_id: r.get(0)?,
                        name: r.get(1)?,
                        value: r.get(2)?,
                        source: r.get(3)?,
                        is_default: r.get(4)?,
                        read_only: r.get(5)?,
                        sensitive: r.get(6)?,
                    })
                })?
                .collect::<Result<Vec<_>, _>>()?)
        })
    }

    /// Replaces the stored ACL bindings and client quotas.
    pub fn replace_security(
        &self,
        acls: &[StoredAcl],
        quotas: &[StoredQuota],
        now_ms: i64,
    ) -> Result<(), StoreError> {
        self.write(|tx| {
            tx.execute("DELETE FROM cluster_acls", [])?;
            tx.execute("DELETE FROM cluster_quotas", [])?;
            let mut stmt = tx.prepare_cached(
                "INSERT OR IGNORE INTO cluster_acls (resource_type, resource_name, pattern_type,
                    principal, host, operation, permission, observed_at_ms)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
            )?;
            for a in acls {
                stmt.execute(params![
                    a.resource_type,
                    a.resource_name,
                    a.pattern_type,
                    a.principal,
                    a.host,
                    a.operation,
                    a.permission,
                    now_ms
                ])?;
            }
            let mut stmt = tx.prepare_cached(
                "INSERT OR REPLACE INTO cluster_quotas (entity, entity_json, quota_values,
                    observed_at_ms)
                 VALUES (?1, ?2, ?3, ?4)",
            )?;
            for q in quotas {
                stmt.execute(params![
                    q.entity,
                    json_text(&q.entity_json),
                    json_text(&q.values),
                    now_ms
                ])?;
            }
            Ok(())
        })
    }

    /// Stored ACL bindings, ordered by resource type, resource name, principal.
    pub fn stored_acls(&self) -> Result<Vec<StoredAcl>, StoreError> {
        self.read(|tx| {
            Ok(tx
                .prepare_cached(
                    "SELECT resource_type, resource_name, pattern_type, principal, host,
                        operation, permission
                     FROM cluster_acls
                     ORDER BY resource_type, resource_name, principal, host, operation, permission",
                )?
                .query_map([], |r| {
                    Ok(StoredAcl {
                        resource_type: r.get(0)?,
                        resource_name: r.get(1)?,
                        pattern_type: r.get(2)?,
                        principal: r.get(3)?,
                        host: r.get(4)?,
                        operation: r.get(5)?,
                        permission: r.get(6)?,
                    })
                })?
                .collect::<Result<Vec<_>, _>>()?)
        })
    }

    /// Stored client quotas by entity path.
    pub fn stored_quotas(&self) -> Result<Vec<StoredQuota>, StoreError> {
        self.read(|tx| {
            Ok(tx
                .prepare_cached(
                    "SELECT entity, entity_json, quota_values FROM cluster_quotas ORDER BY entity",
                )?
                .query_map([], |r| {
                    Ok(StoredQuota {
                        entity: r.get(0)?,
                        entity_json: json_col(r, 1)?,
                        values: json_col(r, 2)?,
                    })
                })?
                .collect::<Result<Vec<_>, _>>()?)
        })
    }
}
