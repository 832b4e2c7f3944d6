//! DescribeClientQuotas and AlterClientQuotas (Kafka 2.6+), any broker.

use std::collections::BTreeMap;

use kafka_protocol::messages::alter_client_quotas_request::{
    EntityData as AlterEntityData, EntryData as AlterEntryData, OpData,
};
use kafka_protocol::messages::describe_client_quotas_request::ComponentData;
use kafka_protocol::messages::{AlterClientQuotasRequest, DescribeClientQuotasRequest};

use ballast_model::BrokerId;

use crate::client::{str_bytes, Client};
use crate::error::{Error, ItemError, Result};
use crate::types::{
    ClientQuota, QuotaAlterResult, QuotaAlteration, QuotaEntity, QuotaFilter, QuotaMatch,
};

impl Client {
    /// DescribeClientQuotas: the quotas of every entity matching `filter`, sorted by entity.
    pub async fn describe_client_quotas(&self, filter: &QuotaFilter) -> Result<Vec<ClientQuota>> {
        self.describe_client_quotas_via(None, filter).await
    }

    /// As [`Client::describe_client_quotas`], answered by `broker` (on KRaft each broker shows a
    /// change once it applied it from the metadata log).
    pub async fn describe_client_quotas_at(
        &self,
        broker: BrokerId,
        filter: &QuotaFilter,
    ) -> Result<Vec<ClientQuota>> {
        self.describe_client_quotas_via(Some(broker), filter).await
    }

    async fn describe_client_quotas_via(
        &self,
        broker: Option<BrokerId>,
        filter: &QuotaFilter,
    ) -> Result<Vec<ClientQuota>> {
        self.retrying("DescribeClientQuotas", move || async move {
            let conn = self.connection_via(broker).await?;
            let version = conn.version::<DescribeClientQuotasRequest>()?;
            let mut request = DescribeClientQuotasRequest::default();
            request.strict = filter.strict;
            request.components = filter
                .components
                .iter()
                .map(|(entity_type, matching)| {
                    let mut c = ComponentData::default();
                    c.entity_type = str_bytes(entity_type.wire());
                    match matching {
                        QuotaMatch::Exact(name) => {
                            c.match_type = 0;
                            c._match = Some(str_bytes(name));
                        }
                        QuotaMatch::Default => {
                            c.match_type = 1;
                            c._match = None;
                        }
                        QuotaMatch::Any => {
                            c.match_type = 2;
                            c._match = None;
                        }
                    }
                    c
                })
                .collect();
            let response = conn.send(&request, version).await?;
            if response.error_code != 0 {
                return Err(Error::kafka(
                    "DescribeClientQuotas",
                    response.error_code,
                    response.error_message.map(|m| m.to_string()),
                ));
            }
            let mut out: Vec<ClientQuota> = response
                .entries
                .unwrap_or_default()
                .into_iter()
                .map(|e| ClientQuota {
                    entity: QuotaEntity::from_wire(
                        e.entity
                            .iter()
                            .map(|d| (d.entity_type.as_str(), d.entity_name.as_deref())),
                    ),
                    values: e
                        .values
                        .into_iter()
                        .map(|v| (v.key.to_string(), v.value))
                        .collect::<BTreeMap<_, _>>(),
                })
                .collect();
            out.sort_by(|a, b| a.entity.cmp(&b.entity));
            Ok(out)
        })
        .await
    }

    /// AlterClientQuotas: set (`Some`) or remove (`None`) quota keys per entity. One result per
    /// entity, in order.
    pub async fn alter_client_quotas(
        &self,
        alterations: &[QuotaAlteration],
        validate_only: bool,
    ) -> Result<Vec<QuotaAlterResult>> {
        for a in alterations {
            if a.entity.wire().is_empty() {
                return Err(Error::InvalidArgument(
                    "a quota entity needs a user, a client id or an ip".to_string(),
                ));
            }
        }
        self.retrying("AlterClientQuotas", move || async move {
            let conn = self.any_connection().await?;
            let version = conn.version::<AlterClientQuotasRequest>()?;
            let mut request = AlterClientQuotasRequest::default();
            request.validate_only = validate_only;
            request.entries = alterations
                .iter()
                .map(|a| {
                    let mut entry = AlterEntryData::default();
                    entry.entity = a
                        .entity
                        .wire()
                        .into_iter()
                        .map(|(entity_type, name)| {
                            let mut d = AlterEntityData::default();
                            d.entity_type = str_bytes(entity_type);
                            d.entity_name = name.map(str_bytes);
                            d
                        })
                        .collect();
                    entry.ops = a
                        .ops
                        .iter()
                        .map(|(key, value)| {
                            let mut op = OpData::default();
                            op.key = str_bytes(key);
                            op.value = value.unwrap_or(0.0);
                            op.remove = value.is_none();
                            op
                        })
                        .collect();
                    entry
                })
                .collect();
            let response = conn.send(&request, version).await?;
            Ok(alterations
                .iter()
                .map(|a| {
                    let found = response.entries.iter().find(|e| {
                        QuotaEntity::from_wire(
                            e.entity
                                .iter()
                                .map(|d| (d.entity_type.as_str(), d.entity_name.as_deref())),
                        ) == a.entity
                    });
                    QuotaAlterResult {
                        entity: a.entity.clone(),
                        error: match found {
                            Some(e) => ItemError::from_code(
                                e.error_code,
                                e.error_message.as_ref().map(|m| m.to_string()),
                            ),
                            None => Some(ItemError {
                                code: -1,
                                name: "UNKNOWN_SERVER_ERROR",
                                message: Some(
                                    "the broker's answer does not mention this entity".into(),
                                ),
                            }),
                        },
                    }
                })
                .collect())
        })
        .await
    }
}
