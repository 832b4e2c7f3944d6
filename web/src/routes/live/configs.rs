//! Topic configuration (every entry, or only the topic's own overrides) and the broker default
//! configuration.

use axum::extract::State;
use ballast_kafka::{BrokerId, ConfigEntry, ConfigResource, ConfigSource};
use serde::{Deserialize, Serialize};

use super::{fail, non_empty};
use crate::extract::{Path, Query};
use crate::{ApiError, ApiOk, ApiResult, AppState};

#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct TopicConfigQuery {
    /// Case-insensitive substring of the configuration name.
    key_filter: Option<String>,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TopicConfig {
    topic: String,
    count: usize,
    entries: Vec<ConfigEntry>,
}

#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct DefaultsQuery {
    /// The broker whose view is shown; default the controller.
    #[param(value_type = Option<i32>)]
    broker: Option<BrokerId>,
    /// Case-insensitive substring of the configuration name.
    key_filter: Option<String>,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct BrokerDefaults {
    broker: BrokerId,
    /// Whether `broker` is the controller named by the metadata.
    controller: bool,
    count: usize,
    /// Entries before `keyFilter`.
    total: usize,
    entries: Vec<ConfigEntry>,
}

/// A sensitive value never leaves the service, not even when the broker sends one.
fn withhold_sensitive(mut entry: ConfigEntry) -> ConfigEntry {
    if entry.sensitive {
        entry.value = None;
        for s in &mut entry.synonyms {
            s.value = None;
        }
    }
    entry
}

fn key_matches(filter: Option<&str>, name: &str) -> bool {
    filter.is_none_or(|f| name.to_lowercase().contains(&f.to_lowercase()))
}

async fn topic_entries(
    state: &AppState,
    topic: String,
    filter: Option<String>,
    explicit_only: bool,
) -> ApiResult<TopicConfig> {
    let client = state.kafka.client().await?;
    let entries = client
        .describe_config(&ConfigResource::Topic(topic.clone()))
        .await
        .map_err(|e| fail(state, e))?;
    let filter = non_empty(filter);
    let entries: Vec<ConfigEntry> = entries
        .into_iter()
        .filter(|e| !explicit_only || e.source == ConfigSource::DynamicTopicConfig)
        .filter(|e| key_matches(filter.as_deref(), &e.name))
        .map(withhold_sensitive)
        .collect();
    Ok(ApiOk(TopicConfig {
        topic,
        count: entries.len(),
        entries,
    }))
}

#[utoipa::path(
    get,
    path = "/api/v1/topics/{topic}/config",
    tag = "topics",
    operation_id = "getTopicConfig",
    summary = "Topic configuration",
    description = "Every configuration entry of the topic as the cluster reports it, with its source.",
    params(("topic" = String, Path, description = "topic name"), TopicConfigQuery),
    responses(
        (status = 200, description = "Topic configuration", body = ref("TopicConfig")),
        (status = 404, description = "Unknown topic"),
        (status = 502, description = "The cluster answered with an error"),
        (status = 503, description = "The cluster is unreachable"),
    )
)]
/// `GET /api/v1/topics/{topic}/config`: every configuration entry of the topic with its source.
pub async fn topic_config(
    State(state): State<AppState>,
    Path(topic): Path<String>,
    Query(q): Query<TopicConfigQuery>,
) -> ApiResult<TopicConfig> {
    topic_entries(&state, topic, q.key_filter, false).await
}

#[utoipa::path(
    get,
    path = "/api/v1/topics/{topic}/config/explicit",
    tag = "topics",
    operation_id = "getTopicConfigExplicit",
    summary = "Explicitly set topic configuration",
    description = "Only the entries set on the topic itself.",
    params(("topic" = String, Path, description = "topic name"), TopicConfigQuery),
    responses(
        (status = 200, description = "Explicitly set topic configuration", body = ref("TopicConfig")),
        (status = 404, description = "Unknown topic"),
        (status = 502, description = "The cluster answered with an error"),
        (status = 503, description = "The cluster is unreachable"),
    )
)]
/// `GET /api/v1/topics/{topic}/config/explicit`: only the entries set on the topic itself.
pub async fn topic_config_explicit(
    State(state): State<AppState>,
    Path(topic): Path<String>,
    Query(q): Query<TopicConfigQuery>,
) -> ApiResult<TopicConfig> {
    topic_entries(&state, topic, q.key_filter, true).await
}

#[utoipa::path(
    get,
    path = "/api/v1/config/defaults",
    tag = "topics",
    operation_id = "getConfigDefaults",
    summary = "Default broker configuration",
    description = "The broker configuration as one broker (default the controller) reports it.",
    params(DefaultsQuery),
    responses(
        (status = 200, description = "Default broker configuration", body = ref("BrokerDefaults")),
        (status = 404, description = "Unknown broker"),
        (status = 502, description = "The cluster answered with an error"),
        (status = 503, description = "The cluster is unreachable"),
    )
)]
/// `GET /api/v1/config/defaults`: the configuration one broker runs with (Kafka's defaults, its
/// static file, cluster-wide and per-broker dynamic values), by default the controller's.
pub async fn broker_defaults(
    State(state): State<AppState>,
    Query(q): Query<DefaultsQuery>,
) -> ApiResult<BrokerDefaults> {
    let client = state.kafka.client().await?;
    // A metadata request for no topic: the brokers and the controller, fresh and cheap.
    let metadata = client
        .metadata(Some(&[]))
        .await
        .map_err(|e| fail(&state, e))?;
    let controller = metadata
        .controller_id
        .filter(|id| metadata.broker(*id).is_some());
    let broker = match q.broker {
        Some(id) if metadata.broker(id).is_none() => {
            let known: Vec<String> = metadata.brokers.iter().map(|b| b.id.to_string()).collect();
            return Err(ApiError::not_found(
                "unknown broker",
                format!(
                    "broker {id} is not in the cluster (brokers: {})",
                    known.join(", ")
                ),
            ));
        }
        Some(id) => id,
        None => match controller.or_else(|| metadata.brokers.first().map(|b| b.id)) {
            Some(id) => id,
            None => {
                return Err(ApiError::unavailable(
                    "cluster unavailable",
                    "the cluster metadata lists no broker",
                ))
            }
        },
    };
    let entries = client
        .describe_config(&ConfigResource::Broker(broker))
        .await
        .map_err(|e| fail(&state, e))?;
    let total = entries.len();
    let filter = non_empty(q.key_filter);
    let entries: Vec<ConfigEntry> = entries
        .into_iter()
        .filter(|e| key_matches(filter.as_deref(), &e.name))
        .map(withhold_sensitive)
        .collect();
    Ok(ApiOk(BrokerDefaults {
        broker,
        controller: controller == Some(broker),
        count: entries.len(),
        total,
        entries,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use ballast_kafka::ConfigSynonym;

    #[test]
    fn sensitive_values_are_withheld_with_their_synonyms() {
        let entry = ConfigEntry {
            name: "ssl.keystore.password".into(),
            value: Some("secret".into()),
            source: ConfigSource::StaticBrokerConfig,
            is_default: false,
            read_only: true,
            sensitive: true,
            synonyms: vec![ConfigSynonym {
                name: "ssl.keystore.password".into(),
                value: Some("secret".into()),
                source: ConfigSource::StaticBrokerConfig,
            }],
        };
        let shown = withhold_sensitive(entry);
        assert_eq!(shown.value, None);
        assert_eq!(shown.synonyms[0].value, None);
    }

    #[test]
    fn key_filter_is_a_case_insensitive_substring() {
        assert!(key_matches(Some("RETENTION"), "log.retention.ms"));
        assert!(key_matches(None, "anything"));
        assert!(!key_matches(Some("segment"), "log.retention.ms"));
    }
}
