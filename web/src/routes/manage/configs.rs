//! Topic configuration updates: one topic, or several at once.
//!
//! What is changed and recorded are the topic's own overrides (`DYNAMIC_TOPIC_CONFIG`): a value
//! sets the override, `null` removes it (the topic inherits the broker's value again). The audit
//! event's `before` and `after` are `{"topics": {topic: {key: override or null}}}`, so a revert
//! knows whether to set a value back or remove an override.

use std::collections::BTreeMap;

use axum::extract::State;
use ballast_kafka::{AlterConfigOp, BrokerId, Client, ConfigEntry, ConfigResource, ConfigSource};
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use super::readback::{per_broker, until_shown, ReadBack};
use super::{check_topic, fail, item_fail};
use crate::audit::{Actor, Audited};
use crate::extract::{Json, Path};
use crate::{ApiError, ApiOk, ApiResult, AppState};
use ballast_ops::{Done, NotDone, Resource};

/// Keys per topic and topics per bulk request.
const MAX_KEYS: usize = 200;
const MAX_TOPICS: usize = 1000;

/// Overrides of one topic: key → value, `None` for "not set on the topic".
pub(crate) type Overrides = BTreeMap<String, Option<String>>;
/// Overrides by topic.
pub(crate) type TopicOverrides = BTreeMap<String, Overrides>;

#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[schema(as = TopicConfigUpdateBody)]
pub struct UpdateBody {
    /// key → new value (string, number or boolean), or null to remove the topic's override.
    pub(crate) configs: BTreeMap<String, Value>,
}

#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[schema(as = TopicConfigBulkBody)]
pub struct BulkBody {
    /// The same `configs` for every topic listed...
    pub(crate) topics: Option<Vec<String>>,
    pub(crate) configs: Option<BTreeMap<String, Value>>,
    /// ... or one entry per topic.
    pub(crate) updates: Option<Vec<TopicUpdate>>,
}

#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct TopicUpdate {
    pub(crate) topic: String,
    pub(crate) configs: BTreeMap<String, Value>,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Change {
    name: String,
    /// The topic's override before (null: none, the topic inherited its value).
    before: Option<String>,
    /// The topic's override after, as read back from the cluster.
    after: Option<String>,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TopicChanges {
    topic: String,
    changes: Vec<Change>,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Updated {
    topic: String,
    changes: Vec<Change>,
    /// Set when the cluster did not show the change in time (`after` is what it showed).
    #[serde(skip_serializing_if = "Option::is_none")]
    note: Option<String>,
    #[serde(flatten)]
    audit: Audited,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct BulkUpdated {
    topics: Vec<TopicChanges>,
    /// Set when the cluster did not show the change in time (`after` is what it showed).
    #[serde(skip_serializing_if = "Option::is_none")]
    note: Option<String>,
    #[serde(flatten)]
    audit: Audited,
}

/// A requested value: text, a number or a boolean as Kafka's string, or null (remove).
fn config_value(topic: &str, key: &str, v: &Value) -> Result<Option<String>, ApiError> {
    match v {
        Value::Null => Ok(None),
        Value::String(s) => Ok(Some(s.clone())),
        Value::Number(n) => Ok(Some(n.to_string())),
        Value::Bool(b) => Ok(Some(b.to_string())),
        _ => Err(ApiError::bad_request(
            "invalid request body",
            format!(
                "{topic}: value of {key} must be a string, a number, a boolean or null (remove the override)"
            ),
        )),
    }
}

fn requested(topic: &str, configs: &BTreeMap<String, Value>) -> Result<Overrides, ApiError> {
    check_topic(topic)?;
    if configs.is_empty() {
        return Err(ApiError::bad_request(
            "invalid request body",
            format!("{topic}: configs must name at least one key"),
        ));
    }
    if configs.len() > MAX_KEYS {
        return Err(ApiError::bad_request(
            "invalid request body",
            format!("{topic}: at most {MAX_KEYS} keys per topic"),
        ));
    }
    configs
        .iter()
        .map(|(key, value)| {
            if key.is_empty() || key.chars().any(|c| c.is_whitespace() || c.is_control()) {
                return Err(ApiError::bad_request(
                    "invalid request body",
                    format!("{topic}: {key:?} is not a configuration name"),
                ));
            }
            let value = config_value(topic, key, value)?;
            // Kafka's own validator of the value (type, range, allowed values): refused here,
            // before anything is sent.
            if let Some(v) = &value {
                ballast_model::configs::check_topic_config(key, v).map_err(|why| {
                    ApiError::bad_request("invalid configuration value", format!("{topic}: {why}"))
                })?;
            }
            Ok((key.clone(), value))
        })
        .collect()
}

/// The overrides of every key of `wanted`, per topic, after checking each key to be set against
/// the cluster's own definitions of the topic's configs: a name the cluster does not list, or
/// one it marks read-only, is a 400 naming it before anything is sent.
async fn read_checked(
    state: &AppState,
    client: &Client,
    wanted: &TopicOverrides,
) -> Result<TopicOverrides, ApiError> {
    let mut out = TopicOverrides::new();
    for (topic, keys) in wanted {
        let entries = client
            .describe_config(&ConfigResource::Topic(topic.clone()))
            .await
            .map_err(|e| fail(state, e))?;
        for (key, value) in keys {
            if value.is_none() {
                continue;
            }
            match entries.iter().find(|e| &e.name == key) {
                None => {
                    return Err(ApiError::bad_request(
                        "unknown configuration",
                        format!("{topic}: the cluster defines no topic configuration {key:?}"),
                    ))
                }
                Some(e) if e.read_only => {
                    return Err(ApiError::bad_request(
                        "read-only configuration",
                        format!("{topic}: {key} is read-only on this cluster"),
                    ))
                }
                Some(_) => {}
            }
        }
        out.insert(topic.clone(), overrides_of(&entries, keys.keys()));
    }
    Ok(out)
}

/// The overrides of `keys` on `topic` as the cluster reports them now.
pub(crate) async fn read_overrides(
    client: &Client,
    topic: &str,
    keys: impl Iterator<Item = &String>,
) -> ballast_kafka::Result<Overrides> {
    let entries = client
        .describe_config(&ConfigResource::Topic(topic.to_string()))
        .await?;
    Ok(overrides_of(&entries, keys))
}

/// The topic's own overrides of `keys` among described `entries`.
fn overrides_of<'a>(entries: &[ConfigEntry], keys: impl Iterator<Item = &'a String>) -> Overrides {
    keys.map(|k| {
        let value = entries
            .iter()
            .find(|e| &e.name == k && e.source == ConfigSource::DynamicTopicConfig)
            .and_then(|e| e.value.clone());
        (k.clone(), value)
    })
    .collect()
}

/// The overrides of every key of `wanted`, per topic.
pub(crate) async fn read_all(
    state: &AppState,
    client: &Client,
    wanted: &TopicOverrides,
) -> Result<TopicOverrides, ApiError> {
    let mut out = TopicOverrides::new();
    for (topic, keys) in wanted {
        let current = read_overrides(client, topic, keys.keys())
            .await
            .map_err(|e| fail(state, e))?;
        out.insert(topic.clone(), current);
    }
    Ok(out)
}

/// Sets (or removes) the overrides of `target`; with `validate_only` the cluster checks every
/// change and applies none. The first refusal is the error.
pub(crate) async fn apply(
    state: &AppState,
    client: &Client,
    target: &TopicOverrides,
    validate_only: bool,
) -> Result<(), ApiError> {
    let changes: Vec<(ConfigResource, Vec<AlterConfigOp>)> = target
        .iter()
        .map(|(topic, overrides)| {
            let ops = overrides
                .iter()
                .map(|(name, value)| match value {
                    Some(value) => AlterConfigOp::Set {
                        name: name.clone(),
                        value: value.clone(),
                    },
                    None => AlterConfigOp::Delete { name: name.clone() },
                })
                .collect();
            (ConfigResource::Topic(topic.clone()), ops)
        })
        .collect();
    let results = client
        .incremental_alter_configs(&changes, validate_only)
        .await
        .map_err(|e| fail(state, e))?;
    for r in &results {
        if let (Some(e), ConfigResource::Topic(topic)) = (&r.error, &r.resource) {
            return Err(item_fail(&format!("topic {topic}"), e));
        }
    }
    Ok(())
}

/// The audit shape of overrides.
pub(crate) fn to_json(overrides: &TopicOverrides) -> Value {
    json!({ "topics": overrides })
}

/// Overrides back from the audit shape; None when `v` is not that shape.
pub(crate) fn from_json(v: &Value) -> Option<TopicOverrides> {
    let topics = v.get("topics")?.as_object()?;
    let mut out = TopicOverrides::new();
    for (topic, keys) in topics {
        let mut overrides = Overrides::new();
        for (key, value) in keys.as_object()? {
            let value = match value {
                Value::Null => None,
                Value::String(s) => Some(s.clone()),
                _ => return None,
            };
            overrides.insert(key.clone(), value);
        }
        out.insert(topic.clone(), overrides);
    }
    Some(out)
}

/// The overrides of `wanted`'s keys once every broker shows exactly them (or what the cluster
/// shows when `BALLAST_READBACK_TIMEOUT` passes, with a note).
pub(crate) async fn read_back(
    state: &AppState,
    client: &Client,
    wanted: &TopicOverrides,
) -> ReadBack<TopicOverrides> {
    until_shown(
        state,
        wanted.clone(),
        || per_broker(client, |broker| read_all_at(state, client, broker, wanted)),
        |after| after == wanted,
    )
    .await
}

/// The overrides of every key of `wanted`, per topic, as `broker` shows them.
async fn read_all_at(
    state: &AppState,
    client: &Client,
    broker: BrokerId,
    wanted: &TopicOverrides,
) -> Result<TopicOverrides, ApiError> {
    let resources: Vec<ConfigResource> = wanted
        .keys()
        .map(|t| ConfigResource::Topic(t.clone()))
        .collect();
    let results = client
        .describe_configs_at(broker, &resources)
        .await
        .map_err(|e| fail(state, e))?;
    let mut out = TopicOverrides::new();
    for ((topic, keys), rc) in wanted.iter().zip(results) {
        if let Some(e) = &rc.error {
            return Err(item_fail(&format!("topic {topic}"), e));
        }
        out.insert(topic.clone(), overrides_of(&rc.entries, keys.keys()));
    }
    Ok(out)
}

/// Through the pipeline, serialised per topic: validated by the cluster, read, changed, read back
/// and audited.
async fn change(
    state: &AppState,
    actor: &Actor,
    action: &str,
    target: String,
    wanted: TopicOverrides,
    summary: Value,
) -> Result<(Vec<TopicChanges>, Audited, Option<String>), ApiError> {
    let client = state.kafka.client().await?;
    let mut event = actor.event(state.clock.now_ms(), action, target);
    event.summary = summary;
    let resources = wanted.keys().map(|t| Resource::Topic(t.clone()));
    let ((before, after, note), recorded) = state
        .pipeline
        .run(resources, event, || async {
            // Unknown topics are a 404, unknown or read-only names a 400, before anything is
            // asked to change.
            let before = read_checked(state, &client, &wanted)
                .await
                .map_err(NotDone::Refused)?;
            // The cluster checks every key and value of every topic first: one bad key changes
            // nothing.
            apply(state, &client, &wanted, true)
                .await
                .map_err(NotDone::Refused)?;
            if let Err(error) = apply(state, &client, &wanted, false).await {
                let details = format!(
                    "the cluster accepted the change when validating it, then failed it: {}: {}",
                    error.error, error.details
                );
                return Err(NotDone::Failed {
                    error,
                    before: Some(to_json(&before)),
                    details,
                });
            }
            // Read back once the cluster shows the change (KRaft brokers apply it a moment
            // later).
            let ReadBack { value: after, note } = read_back(state, &client, &wanted).await;
            let (b, a) = (to_json(&before), to_json(&after));
            Ok(Done::new((before, after, note.clone()), Some(b), Some(a)).noted(note))
        })
        .await?;
    let audit = Audited::from(recorded);
    let topics = wanted
        .keys()
        .map(|topic| TopicChanges {
            topic: topic.clone(),
            changes: wanted[topic]
                .keys()
                .map(|name| Change {
                    name: name.clone(),
                    before: before
                        .get(topic)
                        .and_then(|o| o.get(name))
                        .cloned()
                        .flatten(),
                    after: after
                        .get(topic)
                        .and_then(|o| o.get(name))
                        .cloned()
                        .flatten(),
                })
                .collect(),
        })
        .collect();
    Ok((topics, audit, note))
}

#[utoipa::path(
    put,
    path = "/api/v1/topics/{topic}/config",
    tag = "topics",
    operation_id = "updateTopicConfig",
    summary = "Update topic configuration",
    description = "Sets or removes (null) the topic's overrides: validated, read before, changed, read after, audited.",
    params(("topic" = String, Path, description = "topic name")),
    request_body(content = UpdateBody),
    responses(
        (status = 200, description = "Update topic configuration", body = ref("TopicConfigUpdated")),
        (status = 404, description = "Unknown topic"),
        (status = 400, description = "An invalid key or value, or the cluster refused it"),
        (status = 502, description = "The cluster answered with an error"),
        (status = 503, description = "The cluster is unreachable"),
    )
)]
/// `PUT /api/v1/topics/{topic}/config` with `{"configs": {key: value | null}}`.
pub async fn update(
    State(state): State<AppState>,
    actor: Actor,
    Path(topic): Path<String>,
    Json(body): Json<UpdateBody>,
) -> ApiResult<Updated> {
    update_topic_config(&state, &actor, topic, body)
        .await
        .map(ApiOk)
}

/// The operation `update_topic_config`: validated, read before, changed, read after, audited
/// `topics.config.update`.
pub(crate) async fn update_topic_config(
    state: &AppState,
    actor: &Actor,
    topic: String,
    body: UpdateBody,
) -> Result<Updated, ApiError> {
    let overrides = requested(&topic, &body.configs)?;
    let summary = json!({ "topics": [topic], "configs": overrides });
    let wanted = TopicOverrides::from([(topic.clone(), overrides)]);
    let (mut topics, audit, note) = change(
        state,
        actor,
        "topics.config.update",
        topic.clone(),
        wanted,
        summary,
    )
    .await?;
    let changes = topics.pop().map(|t| t.changes).unwrap_or_default();
    Ok(Updated {
        topic,
        changes,
        note,
        audit,
    })
}

#[utoipa::path(
    put,
    path = "/api/v1/topics/config/bulk",
    tag = "topics",
    operation_id = "bulkUpdateTopicConfig",
    summary = "Bulk update of topic configuration",
    description = "The same `configs` for every topic in `topics`, or one entry per topic in `updates`.",
    request_body(content = BulkBody),
    responses(
        (status = 200, description = "Bulk update of topic configuration", body = ref("TopicConfigsUpdated")),
        (status = 404, description = "Unknown topic"),
        (status = 400, description = "An invalid key or value, or the cluster refused it"),
        (status = 502, description = "The cluster answered with an error"),
        (status = 503, description = "The cluster is unreachable"),
    )
)]
/// `PUT /api/v1/topics/config/bulk` with `{"topics": [...], "configs": {...}}` (the same change
/// everywhere) or `{"updates": [{"topic", "configs"}]}`. All or nothing: the cluster validates
/// every topic's change before any is applied.
pub async fn bulk_update(
    State(state): State<AppState>,
    actor: Actor,
    Json(body): Json<BulkBody>,
) -> ApiResult<BulkUpdated> {
    bulk_update_topic_config(&state, &actor, body)
        .await
        .map(ApiOk)
}

/// The operation `bulk_update_topic_config`: the configuration changes of several topics, all or
/// nothing; audited `topics.config.bulk_update`.
pub(crate) async fn bulk_update_topic_config(
    state: &AppState,
    actor: &Actor,
    body: BulkBody,
) -> Result<BulkUpdated, ApiError> {
    let entries: Vec<(String, BTreeMap<String, Value>)> = match body {
        BulkBody {
            topics: Some(topics),
            configs: Some(configs),
            updates: None,
        } => topics.into_iter().map(|t| (t, configs.clone())).collect(),
        BulkBody {
            topics: None,
            configs: None,
            updates: Some(updates),
        } => updates.into_iter().map(|u| (u.topic, u.configs)).collect(),
        _ => {
            return Err(ApiError::bad_request(
                "invalid request body",
                "give either topics with configs, or updates (a list of topic and configs)",
            ))
        }
    };
    if entries.is_empty() {
        return Err(ApiError::bad_request(
            "invalid request body",
            "name at least one topic",
        ));
    }
    if entries.len() > MAX_TOPICS {
        return Err(ApiError::bad_request(
            "invalid request body",
            format!("at most {MAX_TOPICS} topics per request"),
        ));
    }
    let mut wanted = TopicOverrides::new();
    for (topic, configs) in &entries {
        let overrides = requested(topic, configs)?;
        if wanted.insert(topic.clone(), overrides).is_some() {
            return Err(ApiError::bad_request(
                "invalid request body",
                format!("topic {topic} is listed more than once"),
            ));
        }
    }
    let names: Vec<&String> = wanted.keys().collect();
    let target = match names.as_slice() {
        [one] => (*one).clone(),
        many => format!("{} topics", many.len()),
    };
    let summary = json!({ "topics": names, "configs": wanted });
    let (topics, audit, note) = change(
        state,
        actor,
        "topics.config.bulk_update",
        target,
        wanted,
        summary,
    )
    .await?;
    Ok(BulkUpdated {
        topics,
        note,
        audit,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_may_be_text_numbers_booleans_or_null_but_not_lists() {
        let configs: BTreeMap<String, Value> = serde_json::from_value(json!({
            "retention.ms": 86400000, "cleanup.policy": "compact", "preallocate": true,
            "segment.bytes": null
        }))
        .unwrap();
        let o = requested("t", &configs).unwrap();
        assert_eq!(o["retention.ms"].as_deref(), Some("86400000"));
        assert_eq!(o["preallocate"].as_deref(), Some("true"));
        assert_eq!(o["segment.bytes"], None);
        let bad: BTreeMap<String, Value> = serde_json::from_value(json!({"a": [1]})).unwrap();
        assert!(requested("t", &bad).is_err());
        assert!(requested("t", &BTreeMap::new()).is_err());
        let blank: BTreeMap<String, Value> = serde_json::from_value(json!({" ": "1"})).unwrap();
        assert!(requested("t", &blank).is_err());
    }

    #[test]
    fn the_audit_shape_round_trips() {
        let o = TopicOverrides::from([(
            "t".to_string(),
            Overrides::from([("a".into(), Some("1".into())), ("b".into(), None)]),
        )]);
        assert_eq!(from_json(&to_json(&o)), Some(o));
        assert_eq!(from_json(&json!({"replicas": [1]})), None);
    }
}
