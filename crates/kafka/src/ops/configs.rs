//! DescribeConfigs and IncrementalAlterConfigs for topics and brokers.

use std::collections::BTreeMap;

use ballast_model::BrokerId;
use kafka_protocol::messages::describe_configs_request::DescribeConfigsResource;
use kafka_protocol::messages::incremental_alter_configs_request::{
    AlterConfigsResource, AlterableConfig,
};
use kafka_protocol::messages::{DescribeConfigsRequest, IncrementalAlterConfigsRequest};
use kafka_protocol::protocol::StrBytes;

use crate::client::{join_all, str_bytes, Client};
use crate::error::{Error, ItemError, Result};
use crate::types::{
    AlterConfigOp, ConfigEntry, ConfigResource, ConfigSource, ConfigSynonym, ResourceConfig,
    ResourceResult,
};

impl Client {
    /// DescribeConfigs of one resource, with sources and synonyms. A per-resource error (e.g.
    /// UNKNOWN_TOPIC_OR_PARTITION) is returned as the error.
    pub async fn describe_config(&self, resource: &ConfigResource) -> Result<Vec<ConfigEntry>> {
        let mut results = self
            .describe_configs(std::slice::from_ref(resource))
            .await?;
        let result = results.pop().ok_or_else(|| Error::Protocol {
            broker: String::new(),
            detail: "describeconfigs answer lacks the resource".to_string(),
        })?;
        match result.error {
            Some(e) => Err(e.into_error("DescribeConfigs")),
            None => Ok(result.entries),
        }
    }

    /// DescribeConfigs of several resources: broker resources go to that broker, topics and the
    /// broker defaults to any broker. One result per resource, in order, each with its error.
    pub async fn describe_configs(
        &self,
        resources: &[ConfigResource],
    ) -> Result<Vec<ResourceConfig>> {
        self.describe_configs_routed(resources, None).await
    }

    /// DescribeConfigs of only the named `keys` of several resources, without synonyms (what a
    /// periodic read of a few settings of thousands of topics needs: a small answer the broker
    /// builds quickly). Routed and answered as [`Client::describe_configs`]; an entry's
    /// `synonyms` are empty.
    pub async fn describe_config_values(
        &self,
        resources: &[ConfigResource],
        keys: &[&str],
    ) -> Result<Vec<ResourceConfig>> {
        self.describe_configs_routed(resources, Some(keys)).await
    }

    async fn describe_configs_routed(
        &self,
        resources: &[ConfigResource],
        keys: Option<&[&str]>,
    ) -> Result<Vec<ResourceConfig>> {
        let groups = route(resources);
        let calls: Vec<_> = groups
            .iter()
            .map(|(broker, items)| async move {
                let broker = *broker;
                self.retrying("DescribeConfigs", move || async move {
                    self.describe_configs_on(broker, items, keys).await
                })
                .await
            })
            .collect();
        let mut by_resource: BTreeMap<usize, ResourceConfig> = BTreeMap::new();
        for ((_, items), result) in groups.iter().zip(join_all(calls).await) {
            for (index, config) in items.iter().map(|(i, _)| *i).zip(result?) {
                by_resource.insert(index, config);
            }
        }
        Ok(by_resource.into_values().collect())
    }

    /// DescribeConfigs of several resources, every one answered by `broker` (on KRaft each
    /// broker shows a change once it applied it from the metadata log). One result per resource,
    /// in order, each with its error.
    pub async fn describe_configs_at(
        &self,
        broker: BrokerId,
        resources: &[ConfigResource],
    ) -> Result<Vec<ResourceConfig>> {
        let items: Vec<(usize, ConfigResource)> = resources.iter().cloned().enumerate().collect();
        let items = &items;
        self.retrying("DescribeConfigs", move || async move {
            self.describe_configs_on(Some(broker), items, None).await
        })
        .await
    }

    async fn describe_configs_on(
        &self,
        broker: Option<BrokerId>,
        items: &[(usize, ConfigResource)],
        keys: Option<&[&str]>,
    ) -> Result<Vec<ResourceConfig>> {
        let conn = self.connection_via(broker).await?;
        let version = conn.version::<DescribeConfigsRequest>()?;
        let mut request = DescribeConfigsRequest::default();
        request.include_synonyms = keys.is_none();
        let keys: Option<Vec<StrBytes>> = keys.map(|k| k.iter().map(|k| str_bytes(k)).collect());
        request.resources = items
            .iter()
            .map(|(_, resource)| {
                let (resource_type, name) = resource.wire();
                let mut r = DescribeConfigsResource::default();
                r.resource_type = resource_type;
                r.resource_name = str_bytes(&name);
                r.configuration_keys = keys.clone();
                r
            })
            .collect();
        let response = conn.send(&request, version).await?;
        // Indexed: thousands of topics in one answer stay linear.
        let index: std::collections::HashMap<(i8, &str), usize> = response
            .results
            .iter()
            .enumerate()
            .map(|(i, r)| ((r.resource_type, r.resource_name.as_str()), i))
            .collect();
        let mut out = Vec::with_capacity(items.len());
        for (_, resource) in items {
            let (resource_type, name) = resource.wire();
            let found = index
                .get(&(resource_type, name.as_str()))
                .and_then(|i| response.results.get(*i));
            let Some(result) = found else {
                return Err(Error::Protocol {
                    broker: conn.label().to_string(),
                    detail: format!("describeconfigs answer lacks {resource:?}"),
                });
            };
            let mut entries: Vec<ConfigEntry> = result
                .configs
                .iter()
                .map(|c| {
                    let source = ConfigSource::from_wire(c.config_source);
                    ConfigEntry {
                        name: c.name.to_string(),
                        value: c.value.as_ref().map(|v| v.to_string()),
                        source,
                        is_default: source == ConfigSource::DefaultConfig,
                        read_only: c.read_only,
                        sensitive: c.is_sensitive,
                        synonyms: c
                            .synonyms
                            .iter()
                            .map(|s| ConfigSynonym {
                                name: s.name.to_string(),
                                value: s.value.as_ref().map(|v| v.to_string()),
                                source: ConfigSource::from_wire(s.source),
                            })
                            .collect(),
                    }
                })
                .collect();
            entries.sort_by(|a, b| a.name.cmp(&b.name));
            out.push(ResourceConfig {
                resource: resource.clone(),
                error: ItemError::from_code(
                    result.error_code,
                    result.error_message.as_ref().map(|m| m.to_string()),
                ),
                entries,
            });
        }
        Ok(out)
    }

    /// IncrementalAlterConfigs (Kafka 2.3+): Set, Delete, Append, Subtract per resource. Broker
    /// resources go to that broker, the rest to any broker. One result per resource, in order.
    pub async fn incremental_alter_configs(
        &self,
        changes: &[(ConfigResource, Vec<AlterConfigOp>)],
        validate_only: bool,
    ) -> Result<Vec<ResourceResult>> {
        let resources: Vec<ConfigResource> = changes.iter().map(|(r, _)| r.clone()).collect();
        let groups = route(&resources);
        let calls: Vec<_> = groups
            .iter()
            .map(|(broker, items)| async move {
                let broker = *broker;
                let items: Vec<(usize, &(ConfigResource, Vec<AlterConfigOp>))> =
                    items.iter().map(|(i, _)| (*i, &changes[*i])).collect();
                let items = &items;
                self.retrying("IncrementalAlterConfigs", move || async move {
                    self.alter_configs_on(broker, items, validate_only).await
                })
                .await
            })
            .collect();
        let mut by_resource: BTreeMap<usize, ResourceResult> = BTreeMap::new();
        for ((_, items), result) in groups.iter().zip(join_all(calls).await) {
            for (index, r) in items.iter().map(|(i, _)| *i).zip(result?) {
                by_resource.insert(index, r);
            }
        }
        Ok(by_resource.into_values().collect())
    }

    async fn alter_configs_on(
        &self,
        broker: Option<BrokerId>,
        items: &[(usize, &(ConfigResource, Vec<AlterConfigOp>))],
        validate_only: bool,
    ) -> Result<Vec<ResourceResult>> {
        let conn = match broker {
            Some(id) => {
                self.metadata_with_broker(id).await?;
                self.connection(id).await?
            }
            None => self.any_connection().await?,
        };
        let version = conn.version::<IncrementalAlterConfigsRequest>()?;
        let mut request = IncrementalAlterConfigsRequest::default();
        request.validate_only = validate_only;
        request.resources = items
            .iter()
            .map(|(_, (resource, ops))| {
                let (resource_type, name) = resource.wire();
                let mut r = AlterConfigsResource::default();
                r.resource_type = resource_type;
                r.resource_name = str_bytes(&name);
                r.configs = ops
                    .iter()
                    .map(|op| {
                        let (name, operation, value) = op.wire();
                        let mut c = AlterableConfig::default();
                        c.name = str_bytes(name);
                        c.config_operation = operation;
                        c.value = value.map(str_bytes);
                        c
                    })
                    .collect();
                r
            })
            .collect();
        let response = conn.send(&request, version).await?;
        let mut out = Vec::with_capacity(items.len());
        for (_, (resource, _)) in items {
            let (resource_type, name) = resource.wire();
            let found = response
                .responses
                .iter()
                .find(|r| r.resource_type == resource_type && r.resource_name.as_str() == name);
            let Some(result) = found else {
                return Err(Error::Protocol {
                    broker: conn.label().to_string(),
                    detail: format!("incrementalalterconfigs answer lacks {resource:?}"),
                });
            };
            out.push(ResourceResult {
                resource: resource.clone(),
                error: ItemError::from_code(
                    result.error_code,
                    result.error_message.as_ref().map(|m| m.to_string()),
                ),
            });
        }
        Ok(out)
    }
}

/// Resources grouped by the broker that must answer (None = any broker), keeping their index.
#[allow(clippy::type_complexity)]
fn route(resources: &[ConfigResource]) -> Vec<(Option<BrokerId>, Vec<(usize, ConfigResource)>)> {
    let mut groups: BTreeMap<Option<BrokerId>, Vec<(usize, ConfigResource)>> = BTreeMap::new();
    for (i, r) in resources.iter().enumerate() {
        groups.entry(r.broker()).or_default().push((i, r.clone()));
    }
    groups.into_iter().collect()
}
