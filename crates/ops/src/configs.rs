//! Configuration reads: topic configuration (every entry, or only the topic's own overrides) and the broker default
//! configuration.

use ballast_kafka::{BrokerId, ConfigEntry, ConfigResource, ConfigSource};
use serde::{Deserialize, Serialize};

use crate::cluster::read_failed;
use crate::context::Context;
use crate::error::OpError;

/// An optional text filter; an empty value is no filter.
fn non_empty(value: Option<String>) -> Option<String> {
    value.filter(|v| !v.is_empty())
}

#[derive(Debug, Default, Deserialize, utoipa::IntoParams)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct TopicConfigQuery {
    /// Case-insensitive substring of the configuration name.
    pub key_filter: Option<String>,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TopicConfig {
    topic: String,
    count: usize,
    entries: Vec<ConfigEntry>,
}

#[derive(Debug, Default, Deserialize, utoipa::IntoParams)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct DefaultsQuery {
    /// The broker whose view is shown; default the controller.
    #[param(value_type = Option<i32>)]
    pub broker: Option<BrokerId>,
    /// Case-insensitive substring of the configuration name.
    pub key_filter: Option<String>,
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
    ctx: &Context,
    topic: String,
    filter: Option<String>,
    explicit_only: bool,
) -> Result<TopicConfig, OpError> {
    let client = ctx.kafka.client().await?;
    let entries = client
        .describe_config(&ConfigResource::Topic(topic.clone()))
        .await
        .map_err(|e| read_failed(&ctx.kafka, e))?;
    let filter = non_empty(filter);
    let entries: Vec<ConfigEntry> = entries
        .into_iter()
        .filter(|e| !explicit_only || e.source == ConfigSource::DynamicTopicConfig)
        .filter(|e| key_matches(filter.as_deref(), &e.name))
        .map(withhold_sensitive)
        .collect();
    Ok(TopicConfig {
        topic,
        count: entries.len(),
        entries,
    })
}

/// The operation `get_topic_config`: every configuration entry of the topic with its source
/// (sensitive values withheld), optionally only the keys containing `keyFilter`.
pub async fn get_topic_config(
    ctx: &Context,
    topic: String,
    q: TopicConfigQuery,
) -> Result<TopicConfig, OpError> {
    topic_entries(ctx, topic, q.key_filter, false).await
}

/// Only the entries set on the topic itself (sensitive values withheld), optionally only the
/// keys containing `keyFilter`.
pub async fn get_topic_config_explicit(
    ctx: &Context,
    topic: String,
    q: TopicConfigQuery,
) -> Result<TopicConfig, OpError> {
    topic_entries(ctx, topic, q.key_filter, true).await
}

/// The operation `get_default_configs`: the configuration of `broker` (default the controller),
/// optionally only the keys containing `keyFilter`; sensitive values withheld.
pub async fn get_default_configs(
    ctx: &Context,
    q: DefaultsQuery,
) -> Result<BrokerDefaults, OpError> {
    let client = ctx.kafka.client().await?;
    // A metadata request for no topic: the brokers and the controller, fresh and cheap.
    let metadata = client
        .metadata(Some(&[]))
        .await
        .map_err(|e| read_failed(&ctx.kafka, e))?;
    // The active controller (KRaft: the quorum's leader; Metadata's controller id there is a
    // broker the answering broker picks), when it is a broker; else the first broker.
    let controller = match client.active_controller().await {
        Ok(active) => active.id.filter(|id| metadata.broker(*id).is_some()),
        Err(e) => {
            tracing::warn!(error = %e, "active controller not read");
            None
        }
    };
    let broker = match q.broker {
        Some(id) if metadata.broker(id).is_none() => {
            let known: Vec<String> = metadata.brokers.iter().map(|b| b.id.to_string()).collect();
            return Err(OpError::not_found(
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
                return Err(OpError::unavailable(
                    "cluster unavailable",
                    "the cluster metadata lists no broker",
                ))
            }
        },
    };
    let entries = client
        .describe_config(&ConfigResource::Broker(broker))
        .await
        .map_err(|e| read_failed(&ctx.kafka, e))?;
    let total = entries.len();
    let filter = non_empty(q.key_filter);
    let entries: Vec<ConfigEntry> = entries
        .into_iter()
        .filter(|e| key_matches(filter.as_deref(), &e.name))
        .map(withhold_sensitive)
        .collect();
    Ok(BrokerDefaults {
        broker,
        controller: controller == Some(broker),
        count: entries.len(),
        total,
        entries,
    })
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

#[derive(Debug, Default, Deserialize, utoipa::IntoParams)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct ConfigSearchQuery {
    /// The configuration key, exactly (e.g. `retention.ms`, `cleanup.policy`).
    #[param(pattern = "\\S")]
    pub key: String,
    /// The value to compare with; omitted: every topic, with its value.
    pub value: Option<String>,
    /// How `value` compares: `eq` (default), `ne`, `contains` (case-insensitive), or numerically
    /// `lt`, `le`, `gt`, `ge`.
    pub op: Option<String>,
    /// Only topics that set the key themselves (a topic override), not inheriting it.
    pub overridden_only: Option<bool>,
    /// Include internal topics such as `__consumer_offsets` (default false).
    pub include_internal: Option<bool>,
    /// Rows, default 100, at most 1000 (counts cover every match).
    pub limit: Option<usize>,
}

/// One topic's value of the searched key.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ConfigMatch {
    topic: String,
    /// None for a sensitive value or one that is not set.
    value: Option<String>,
    /// Where the value comes from (`DynamicTopicConfig` = the topic's own override).
    source: ConfigSource,
    /// Whether the topic sets the key itself.
    overridden: bool,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ConfigSearch {
    key: String,
    value: Option<String>,
    op: &'static str,
    /// Topics searched (every topic, or every non-internal one).
    searched: usize,
    count: usize,
    total: usize,
    truncated: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    hint: Option<String>,
    /// Matches by topic name.
    topics: Vec<ConfigMatch>,
    /// Topics whose configuration the cluster did not return (with its error), by name.
    errors: Vec<serde_json::Value>,
}

/// How a config search compares values.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CompareOp {
    Eq,
    Ne,
    Contains,
    Lt,
    Le,
    Gt,
    Ge,
}

impl CompareOp {
    const ALL: [(&'static str, CompareOp); 7] = [
        ("eq", CompareOp::Eq),
        ("ne", CompareOp::Ne),
        ("contains", CompareOp::Contains),
        ("lt", CompareOp::Lt),
        ("le", CompareOp::Le),
        ("gt", CompareOp::Gt),
        ("ge", CompareOp::Ge),
    ];

    pub fn parse(raw: Option<&str>) -> Result<CompareOp, String> {
        match raw {
            None | Some("") => Ok(CompareOp::Eq),
            Some(s) => CompareOp::ALL
                .iter()
                .find(|(n, _)| n.eq_ignore_ascii_case(s))
                .map(|(_, op)| *op)
                .ok_or_else(|| {
                    format!("op: unknown {s:?}; use eq, ne, contains, lt, le, gt or ge")
                }),
        }
    }

    fn name(self) -> &'static str {
        CompareOp::ALL
            .iter()
            .find(|(_, op)| *op == self)
            .map_or("eq", |(n, _)| n)
    }

    fn numeric(self) -> bool {
        matches!(
            self,
            CompareOp::Lt | CompareOp::Le | CompareOp::Gt | CompareOp::Ge
        )
    }

    /// Whether a topic's `actual` value matches `wanted` (a numeric op never matches a value
    /// that is not a number).
    pub fn matches(self, actual: Option<&str>, wanted: &str) -> bool {
        let Some(actual) = actual else {
            return self == CompareOp::Ne;
        };
        match self {
            CompareOp::Eq => actual == wanted,
            CompareOp::Ne => actual != wanted,
            CompareOp::Contains => actual.to_lowercase().contains(&wanted.to_lowercase()),
            _ => {
                let (Ok(a), Ok(w)) = (actual.trim().parse::<f64>(), wanted.trim().parse::<f64>())
                else {
                    return false;
                };
                match self {
                    CompareOp::Lt => a < w,
                    CompareOp::Le => a <= w,
                    CompareOp::Gt => a > w,
                    _ => a >= w,
                }
            }
        }
    }
}

/// The operation `search_topics_by_config`: every topic's value of one configuration key, read
/// live, filtered by a comparison and whether the topic overrides it; by topic name.
pub async fn search_topics_by_config(
    ctx: &Context,
    q: ConfigSearchQuery,
) -> Result<ConfigSearch, OpError> {
    const CHUNK: usize = 500;
    let key = q.key.trim().to_string();
    if key.is_empty() {
        return Err(OpError::bad_input(
            "invalid query",
            "key: name a configuration key, e.g. retention.ms",
        ));
    }
    let op =
        CompareOp::parse(q.op.as_deref()).map_err(|e| OpError::bad_input("invalid query", e))?;
    let value = non_empty(q.value);
    if op != CompareOp::Eq && value.is_none() {
        return Err(OpError::bad_input(
            "invalid query",
            format!("value: op {} needs a value to compare with", op.name()),
        ));
    }
    if let (true, Some(v)) = (op.numeric(), &value) {
        if v.trim().parse::<f64>().is_err() {
            return Err(OpError::bad_input(
                "invalid query",
                format!("value: op {} compares numbers; {v:?} is not one", op.name()),
            ));
        }
    }
    let client = ctx.kafka.client().await?;
    let metadata = client
        .metadata(None)
        .await
        .map_err(|e| read_failed(&ctx.kafka, e))?;
    let include_internal = q.include_internal.unwrap_or(false);
    let mut names: Vec<String> = metadata
        .topics
        .iter()
        .filter(|t| t.error.is_none() && (include_internal || !t.internal))
        .map(|t| t.name.clone())
        .collect();
    names.sort();
    let searched = names.len();
    let mut found: Vec<ConfigMatch> = Vec::new();
    let mut errors = Vec::new();
    for chunk in names.chunks(CHUNK) {
        let resources: Vec<ConfigResource> = chunk
            .iter()
            .map(|t| ConfigResource::Topic(t.clone()))
            .collect();
        let results = client
            .describe_configs(&resources)
            .await
            .map_err(|e| read_failed(&ctx.kafka, e))?;
        for r in results {
            let ConfigResource::Topic(topic) = r.resource else {
                continue;
            };
            if let Some(e) = r.error {
                errors.push(serde_json::json!({"topic": topic, "error": e.to_string()}));
                continue;
            }
            let Some(entry) = r.entries.into_iter().find(|e| e.name == key) else {
                continue;
            };
            let entry = withhold_sensitive(entry);
            let overridden = entry.source == ConfigSource::DynamicTopicConfig;
            if q.overridden_only.unwrap_or(false) && !overridden {
                continue;
            }
            if let Some(wanted) = &value {
                if !op.matches(entry.value.as_deref(), wanted) {
                    continue;
                }
            }
            found.push(ConfigMatch {
                topic,
                value: entry.value,
                source: entry.source,
                overridden,
            });
        }
    }
    found.sort_by(|a, b| a.topic.cmp(&b.topic));
    let total = found.len();
    let n = match q.limit {
        None | Some(0) => 100,
        Some(n) => n.min(1000),
    };
    found.truncate(n);
    let truncated = found.len() < total;
    Ok(ConfigSearch {
        key,
        value,
        op: op.name(),
        searched,
        count: found.len(),
        total,
        truncated,
        hint: truncated
            .then(|| "narrow with value and op, or overriddenOnly; or raise limit".to_string()),
        topics: found,
        errors,
    })
}

#[cfg(test)]
mod search_tests {
    use super::CompareOp;

    #[test]
    fn config_search_compares_strings_exactly_or_by_substring_and_numbers_numerically() {
        assert!(CompareOp::Eq.matches(Some("delete"), "delete"));
        assert!(!CompareOp::Eq.matches(Some("compact,delete"), "delete"));
        assert!(CompareOp::Contains.matches(Some("compact,Delete"), "delete"));
        assert!(
            CompareOp::Ne.matches(None, "x"),
            "unset differs from any value"
        );
        assert!(CompareOp::Lt.matches(Some("3600000"), "86400000"));
        assert!(!CompareOp::Lt.matches(Some("86400000"), "86400000"));
        assert!(CompareOp::Le.matches(Some("86400000"), "86400000"));
        assert!(CompareOp::Gt.matches(Some("-1"), "-2"));
        assert!(!CompareOp::Ge.matches(Some("abc"), "1"), "not a number");
        assert!(!CompareOp::Gt.matches(None, "1"));
        assert_eq!(CompareOp::parse(Some("GE")), Ok(CompareOp::Ge));
        assert!(CompareOp::parse(Some("like")).is_err());
    }
}
