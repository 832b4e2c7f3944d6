//! Topic configuration: `update_topic_config` (one topic) and `bulk_update_topic_config`
//! (several, all or nothing), through the pipeline serialised per topic and audited
//! (`topics.config.update`, `topics.config.bulk_update`).
//!
//! What is changed and recorded are the topic's own overrides (`DYNAMIC_TOPIC_CONFIG`): a value
//! sets the override, `null` removes it (the topic inherits the broker's value again). The audit
//! event's `before` and `after` are `{"topics": {topic: {key: override or null}}}`, so a revert
//! knows whether to set a value back or remove an override.
//!
//! Input rules, before anything is sent: Kafka's topic name rule; at most 200 keys per topic and
//! 1000 topics; each value by Kafka's own validator (`ballast_model::configs`); each name against
//! the cluster's own definitions (unknown or read-only: 400); then the cluster validates the
//! whole change before any of it is applied.

use std::collections::BTreeMap;

use ballast_kafka::{AlterConfigOp, BrokerId, Client, ConfigEntry, ConfigResource, ConfigSource};
use serde::Serialize;
use serde_json::{json, Value};

use crate::actor::Actor;
use crate::cluster::{change_failed, item_failed};
use crate::context::Context;
use crate::error::OpError;
use crate::pipeline::{Audited, Done, NotDone, Resource};
use crate::readback::{per_broker, until_shown, ReadBack};

/// What `bulk_update_topic_config` is asked: the same `configs` for every one of `topics`, or
/// `updates` (a topic and its configs each); exactly one of the two forms.
#[derive(Debug, Default)]
pub struct BulkUpdate {
    pub topics: Option<Vec<String>>,
    pub configs: Option<BTreeMap<String, Value>>,
    pub updates: Option<Vec<(String, BTreeMap<String, Value>)>>,
}

/// Keys per topic and topics per bulk request.
const MAX_KEYS: usize = 200;
const MAX_TOPICS: usize = 1000;

/// Overrides of one topic: key → value, `None` for "not set on the topic".
pub type Overrides = BTreeMap<String, Option<String>>;
/// Overrides by topic.
pub type TopicOverrides = BTreeMap<String, Overrides>;

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Change {
    pub name: String,
    /// The topic's override before (null: none, the topic inherited its value).
    pub before: Option<String>,
    /// The topic's override after, as read back from the cluster.
    pub after: Option<String>,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TopicChanges {
    pub topic: String,
    pub changes: Vec<Change>,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Updated {
    pub topic: String,
    pub changes: Vec<Change>,
    /// Set when the cluster did not show the change in time (`after` is what it showed).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    #[serde(flatten)]
    pub audit: Audited,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct BulkUpdated {
    pub topics: Vec<TopicChanges>,
    /// Set when the cluster did not show the change in time (`after` is what it showed).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    #[serde(flatten)]
    pub audit: Audited,
}

/// A requested value: text, a number or a boolean as Kafka's string, or null (remove).
fn config_value(topic: &str, key: &str, v: &Value) -> Result<Option<String>, OpError> {
    match v {
        Value::Null => Ok(None),
        Value::String(s) => Ok(Some(s.clone())),
        Value::Number(n) => Ok(Some(n.to_string())),
        Value::Bool(b) => Ok(Some(b.to_string())),
        _ => Err(OpError::bad_input(
            "invalid request body",
            format!(
                "{topic}: value of {key} must be a string, a number, a boolean or null (remove the override)"
            ),
        )),
    }
}

pub(crate) fn requested(
    topic: &str,
    configs: &BTreeMap<String, Value>,
) -> Result<Overrides, OpError> {
    crate::names::topic(topic).map_err(|why| OpError::bad_input("invalid request", why))?;
    if configs.is_empty() {
        return Err(OpError::bad_input(
            "invalid request body",
            format!("{topic}: configs must name at least one key"),
        ));
    }
    if configs.len() > MAX_KEYS {
        return Err(OpError::bad_input(
            "invalid request body",
            format!("{topic}: at most {MAX_KEYS} keys per topic"),
        ));
    }
    configs
        .iter()
        .map(|(key, value)| {
            if key.is_empty() || key.chars().any(|c| c.is_whitespace() || c.is_control()) {
                return Err(OpError::bad_input(
                    "invalid request body",
                    format!("{topic}: {key:?} is not a configuration name"),
                ));
            }
            let value = config_value(topic, key, value)?;
            // Kafka's own validator of the value (type, range, allowed values): refused here,
            // before anything is sent.
            if let Some(v) = &value {
                ballast_model::configs::check_topic_config(key, v).map_err(|why| {
                    OpError::bad_input("invalid configuration value", format!("{topic}: {why}"))
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
    ctx: &Context,
    client: &Client,
    wanted: &TopicOverrides,
) -> Result<TopicOverrides, OpError> {
    let mut out = TopicOverrides::new();
    for (topic, keys) in wanted {
        let entries = client
            .describe_config(&ConfigResource::Topic(topic.clone()))
            .await
            .map_err(|e| change_failed(&ctx.kafka, e))?;
        for (key, value) in keys {
            if value.is_none() {
                continue;
            }
            match entries.iter().find(|e| &e.name == key) {
                None => {
                    return Err(OpError::bad_input(
                        "unknown configuration",
                        format!("{topic}: the cluster defines no topic configuration {key:?}"),
                    ))
                }
                Some(e) if e.read_only => {
                    return Err(OpError::bad_input(
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
pub async fn read_overrides(
    client: &Client,
    topic: &str,
    keys: impl Iterator<Item = &String>,
) -> ballast_kafka::Result<Overrides> {
    let entries = client
        .describe_config(&ConfigResource::Topic(topic.to_string()))
        .await?;
    Ok(overrides_of(&entries, keys))
}

/// Every override the topic has (its dynamic topic configs), as the cluster reports them now.
pub async fn all_overrides(
    client: &Client,
    topic: &str,
) -> ballast_kafka::Result<BTreeMap<String, String>> {
    let entries = client
        .describe_config(&ConfigResource::Topic(topic.to_string()))
        .await?;
    Ok(entries
        .into_iter()
        .filter(|e| e.source == ConfigSource::DynamicTopicConfig)
        .filter_map(|e| Some((e.name, e.value?)))
        .collect())
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
pub async fn read_all(
    ctx: &Context,
    client: &Client,
    wanted: &TopicOverrides,
) -> Result<TopicOverrides, OpError> {
    let mut out = TopicOverrides::new();
    for (topic, keys) in wanted {
        let current = read_overrides(client, topic, keys.keys())
            .await
            .map_err(|e| change_failed(&ctx.kafka, e))?;
        out.insert(topic.clone(), current);
    }
    Ok(out)
}

/// Sets (or removes) the overrides of `target`; with `validate_only` the cluster checks every
/// change and applies none. The first refusal is the error.
pub async fn apply(
    ctx: &Context,
    client: &Client,
    target: &TopicOverrides,
    validate_only: bool,
) -> Result<(), OpError> {
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
        .map_err(|e| change_failed(&ctx.kafka, e))?;
    for r in &results {
        if let (Some(e), ConfigResource::Topic(topic)) = (&r.error, &r.resource) {
            return Err(item_failed(&format!("topic {topic}"), e));
        }
    }
    Ok(())
}

/// The audit shape of overrides.
pub fn to_json(overrides: &TopicOverrides) -> Value {
    json!({ "topics": overrides })
}

/// Overrides back from the audit shape; None when `v` is not that shape.
pub fn from_json(v: &Value) -> Option<TopicOverrides> {
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
pub async fn read_back(
    ctx: &Context,
    client: &Client,
    wanted: &TopicOverrides,
) -> ReadBack<TopicOverrides> {
    until_shown(
        ctx,
        wanted.clone(),
        || {
            per_broker(client, |broker| async move {
                read_all_at(ctx, client, broker, wanted).await
            })
        },
        |after| after == wanted,
    )
    .await
}

/// The overrides of every key of `wanted`, per topic, as `broker` shows them.
async fn read_all_at(
    ctx: &Context,
    client: &Client,
    broker: BrokerId,
    wanted: &TopicOverrides,
) -> Result<TopicOverrides, OpError> {
    let resources: Vec<ConfigResource> = wanted
        .keys()
        .map(|t| ConfigResource::Topic(t.clone()))
        .collect();
    let results = client
        .describe_configs_at(broker, &resources)
        .await
        .map_err(|e| change_failed(&ctx.kafka, e))?;
    let mut out = TopicOverrides::new();
    for ((topic, keys), rc) in wanted.iter().zip(results) {
        if let Some(e) = &rc.error {
            return Err(item_failed(&format!("topic {topic}"), e));
        }
        out.insert(topic.clone(), overrides_of(&rc.entries, keys.keys()));
    }
    Ok(out)
}

/// Through the pipeline, serialised per topic: validated by the cluster, read, changed, read back
/// and audited.
async fn change(
    ctx: &Context,
    actor: &Actor,
    action: &str,
    target: String,
    wanted: TopicOverrides,
    summary: Value,
) -> Result<(Vec<TopicChanges>, Audited, Option<String>), OpError> {
    let client = ctx.kafka.client().await?;
    let mut event = actor.event(ctx.clock.now_ms(), action, target);
    event.summary = summary;
    let resources = wanted.keys().map(|t| Resource::Topic(t.clone()));
    let ((before, after, note), recorded) = ctx
        .pipeline
        .run(resources, event, || async {
            // Unknown topics are a 404, unknown or read-only names a 400, before anything is
            // asked to change.
            let before = read_checked(ctx, &client, &wanted)
                .await
                .map_err(NotDone::Refused)?;
            // The cluster checks every key and value of every topic first: one bad key changes
            // nothing.
            apply(ctx, &client, &wanted, true)
                .await
                .map_err(NotDone::Refused)?;
            if let Err(error) = apply(ctx, &client, &wanted, false).await {
                let details = format!(
                    "the cluster accepted the change when validating it, then failed it: {error}"
                );
                return Err(NotDone::Failed {
                    error,
                    before: Some(to_json(&before)),
                    details,
                });
            }
            // Read back once the cluster shows the change (KRaft brokers apply it a moment
            // later).
            let ReadBack { value: after, note } = read_back(ctx, &client, &wanted).await;
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

/// The operation `update_topic_config`: validated, read before, changed, read after, audited
/// `topics.config.update`.
pub async fn update_topic_config(
    ctx: &Context,
    actor: &Actor,
    topic: String,
    configs: BTreeMap<String, Value>,
) -> Result<Updated, OpError> {
    let overrides = requested(&topic, &configs)?;
    let summary = json!({ "topics": [topic], "configs": overrides });
    let wanted = TopicOverrides::from([(topic.clone(), overrides)]);
    let (mut topics, audit, note) = change(
        ctx,
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

/// The operation `bulk_update_topic_config`: the configuration changes of several topics, all or
/// nothing; audited `topics.config.bulk_update`.
pub async fn bulk_update_topic_config(
    ctx: &Context,
    actor: &Actor,
    body: BulkUpdate,
) -> Result<BulkUpdated, OpError> {
    let entries: Vec<(String, BTreeMap<String, Value>)> = match body {
        BulkUpdate {
            topics: Some(topics),
            configs: Some(configs),
            updates: None,
        } => topics.into_iter().map(|t| (t, configs.clone())).collect(),
        BulkUpdate {
            topics: None,
            configs: None,
            updates: Some(updates),
        } => updates,
        _ => {
            return Err(OpError::bad_input(
                "invalid request body",
                "give either topics with configs, or updates (a list of topic and configs)",
            ))
        }
    };
    if entries.is_empty() {
        return Err(OpError::bad_input(
            "invalid request body",
            "name at least one topic",
        ));
    }
    if entries.len() > MAX_TOPICS {
        return Err(OpError::bad_input(
            "invalid request body",
            format!("at most {MAX_TOPICS} topics per request"),
        ));
    }
    let mut wanted = TopicOverrides::new();
    for (topic, configs) in &entries {
        let overrides = requested(topic, configs)?;
        if wanted.insert(topic.clone(), overrides).is_some() {
            return Err(OpError::bad_input(
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
        ctx,
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
