//! Broker and topic configs with their sources, as Kafka reports them: per-broker dynamic
//! (DYNAMIC_BROKER_CONFIG), cluster-wide dynamic default (DYNAMIC_DEFAULT_BROKER_CONFIG), static
//! `server.properties` (STATIC_BROKER_CONFIG), built-in defaults (DEFAULT_CONFIG) and topic
//! overrides (TOPIC_CONFIG). Topic configs inherit from their broker synonyms.

use std::collections::BTreeMap;

use super::lag::ConfigKey;
use super::{err, ApiError, Broker, Cluster, Topic};

pub mod source {
    pub const TOPIC_CONFIG: i8 = 1;
    pub const DYNAMIC_BROKER_CONFIG: i8 = 2;
    pub const DYNAMIC_DEFAULT_BROKER_CONFIG: i8 = 3;
    pub const STATIC_BROKER_CONFIG: i8 = 4;
    pub const DEFAULT_CONFIG: i8 = 5;
}

/// ConfigResource types.
pub mod resource {
    pub const TOPIC: i8 = 2;
    pub const BROKER: i8 = 4;
    pub const BROKER_LOGGER: i8 = 8;
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Boolean = 1,
    String = 2,
    Int = 3,
    Long = 5,
    Double = 6,
    List = 7,
    Class = 8,
    Password = 9,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// Only in server.properties.
    ReadOnly,
    /// Per broker or as the cluster-wide default.
    Dynamic,
}

#[derive(Debug)]
pub struct BrokerDef {
    pub name: &'static str,
    pub default: Option<&'static str>,
    pub kind: Kind,
    pub mode: Mode,
    pub doc: &'static str,
}

#[derive(Debug)]
pub struct TopicDef {
    pub name: &'static str,
    /// Used when no broker synonym has a value.
    pub default: &'static str,
    pub kind: Kind,
    /// Broker configs this inherits from, in precedence order, with a factor to milliseconds
    /// (or 1) applied to their value.
    pub synonyms: &'static [(&'static str, i64)],
    pub doc: &'static str,
}

const LMAX: &str = "9223372036854775807";

macro_rules! b {
    ($name:expr, $default:expr, $kind:ident, $mode:ident, $doc:expr) => {
        BrokerDef {
            name: $name,
            default: $default,
            kind: Kind::$kind,
            mode: Mode::$mode,
            doc: $doc,
        }
    };
}

/// Broker configs: a realistic subset of Kafka's with Kafka's defaults.
pub static BROKER_CONFIGS: &[BrokerDef] = &[
    b!("advertised.listeners", None, String, Dynamic, "Listeners to publish for clients to use."),
    b!("auto.create.topics.enable", Some("true"), Boolean, ReadOnly, "Enable auto creation of topic on the server."),
    b!("auto.leader.rebalance.enable", Some("true"), Boolean, ReadOnly, "Enables auto leader balancing."),
    b!("background.threads", Some("10"), Int, Dynamic, "The number of threads to use for various background processing tasks."),
    b!("broker.id", Some("-1"), Int, ReadOnly, "The broker id for this server."),
    b!("broker.rack", None, String, ReadOnly, "Rack of the broker."),
    b!("compression.type", Some("producer"), String, Dynamic, "Specify the final compression type for a given topic."),
    b!("default.replication.factor", Some("1"), Int, ReadOnly, "The replication factor for automatically created topics, and for topics created with -1 as the replication factor."),
    b!("delete.topic.enable", Some("true"), Boolean, ReadOnly, "Enables delete topic."),
    b!("follower.replication.throttled.rate", Some(LMAX), Long, Dynamic, "A long representing the upper bound (bytes/sec) on replication traffic for followers enumerated in the property follower.replication.throttled.replicas (for each topic)."),
    b!("group.initial.rebalance.delay.ms", Some("3000"), Int, ReadOnly, "The amount of time the group coordinator will wait for more consumers to join a new group before performing the first rebalance."),
    b!("leader.replication.throttled.rate", Some(LMAX), Long, Dynamic, "A long representing the upper bound (bytes/sec) on replication traffic for leaders enumerated in the property leader.replication.throttled.replicas (for each topic)."),
    b!("listener.security.protocol.map", Some("SASL_SSL:SASL_SSL,PLAINTEXT:PLAINTEXT,SSL:SSL,SASL_PLAINTEXT:SASL_PLAINTEXT"), String, Dynamic, "Map between listener names and security protocols."),
    b!("listeners", Some("PLAINTEXT://:9092"), String, Dynamic, "Listener List - Comma-separated list of URIs we will listen on and the listener names."),
    b!("log.cleaner.delete.retention.ms", Some("86400000"), Long, Dynamic, "The amount of time to retain tombstone message markers for log compacted topics."),
    b!("log.cleaner.max.compaction.lag.ms", Some(LMAX), Long, Dynamic, "The maximum time a message will remain ineligible for compaction in the log."),
    b!("log.cleaner.min.cleanable.ratio", Some("0.5"), Double, Dynamic, "The minimum ratio of dirty log to total log for a log to eligible for cleaning."),
    b!("log.cleaner.min.compaction.lag.ms", Some("0"), Long, Dynamic, "The minimum time a message will remain uncompacted in the log."),
    b!("log.cleanup.policy", Some("delete"), List, Dynamic, "The default cleanup policy for segments beyond the retention window."),
    b!("log.dirs", None, String, ReadOnly, "A comma-separated list of the directories where the log data is stored."),
    b!("log.flush.interval.messages", Some(LMAX), Long, Dynamic, "The number of messages accumulated on a log partition before messages are flushed to disk."),
    b!("log.flush.interval.ms", None, Long, Dynamic, "The maximum time in ms that a message in any topic is kept in memory before flushed to disk."),
    b!("log.flush.scheduler.interval.ms", Some(LMAX), Long, ReadOnly, "The frequency in ms that the log flusher checks whether any log needs to be flushed to disk."),
    b!("log.index.interval.bytes", Some("4096"), Int, Dynamic, "The interval with which we add an entry to the offset index."),
    b!("log.index.size.max.bytes", Some("10485760"), Int, Dynamic, "The maximum size in bytes of the offset index."),
    b!("log.local.retention.bytes", Some("-2"), Long, Dynamic, "The maximum size of local log segments that can grow for a partition before it gets eligible for deletion."),
    b!("log.local.retention.ms", Some("-2"), Long, Dynamic, "The number of milliseconds to keep the local log segments before it gets eligible for deletion."),
    b!("log.message.timestamp.after.max.ms", Some(LMAX), Long, Dynamic, "The maximum allowed timestamp difference between the message timestamp and the broker's timestamp, for messages from the future."),
    b!("log.message.timestamp.before.max.ms", Some(LMAX), Long, Dynamic, "The maximum allowed timestamp difference between the broker's timestamp and the message timestamp, for messages from the past."),
    b!("log.message.timestamp.type", Some("CreateTime"), String, Dynamic, "Define whether the timestamp in the message is message create time or log append time."),
    b!("log.preallocate", Some("false"), Boolean, Dynamic, "Should pre allocate file when create new segment?"),
    b!("log.retention.bytes", Some("-1"), Long, Dynamic, "The maximum size of the log before deleting it."),
    b!("log.retention.hours", Some("168"), Int, ReadOnly, "The number of hours to keep a log file before deleting it (in hours), tertiary to log.retention.ms property."),
    b!("log.retention.minutes", None, Int, ReadOnly, "The number of minutes to keep a log file before deleting it (in minutes), secondary to log.retention.ms property."),
    b!("log.retention.ms", None, Long, Dynamic, "The number of milliseconds to keep a log file before deleting it (in milliseconds)."),
    b!("log.roll.hours", Some("168"), Int, ReadOnly, "The maximum time before a new log segment is rolled out (in hours)."),
    b!("log.roll.jitter.hours", Some("0"), Int, ReadOnly, "The maximum jitter to subtract from logRollTimeMillis (in hours)."),
    b!("log.roll.jitter.ms", None, Long, Dynamic, "The maximum jitter to subtract from logRollTimeMillis (in milliseconds)."),
    b!("log.roll.ms", None, Long, Dynamic, "The maximum time before a new log segment is rolled out (in milliseconds)."),
    b!("log.segment.bytes", Some("1073741824"), Int, Dynamic, "The maximum size of a single log file."),
    b!("log.segment.delete.delay.ms", Some("60000"), Long, Dynamic, "The amount of time to wait before deleting a file from the filesystem."),
    b!("max.connections", Some("2147483647"), Int, Dynamic, "The maximum number of connections we allow in the broker at any time."),
    b!("message.max.bytes", Some("1048588"), Int, Dynamic, "The largest record batch size allowed by Kafka (after compression if compression is enabled)."),
    b!("min.insync.replicas", Some("1"), Int, Dynamic, "The minimum number of replicas that must acknowledge a write for it to be considered successful when acks is all."),
    b!("node.id", Some("-1"), Int, ReadOnly, "The node ID associated with the roles this process is playing."),
    b!("num.io.threads", Some("8"), Int, Dynamic, "The number of threads that the server uses for processing requests."),
    b!("num.network.threads", Some("3"), Int, Dynamic, "The number of threads that the server uses for receiving requests from the network and sending responses to the network."),
    b!("num.partitions", Some("1"), Int, ReadOnly, "The default number of log partitions per topic."),
    b!("num.replica.fetchers", Some("1"), Int, Dynamic, "Number of fetcher threads used to replicate records from each source broker."),
    b!("offsets.topic.num.partitions", Some("50"), Int, ReadOnly, "The number of partitions for the offset commit topic."),
    b!("offsets.topic.replication.factor", Some("3"), Int, ReadOnly, "The replication factor for the offsets topic."),
    b!("process.roles", Some(""), List, ReadOnly, "The roles that this process plays: 'broker', 'controller', or 'broker,controller' if it is both."),
    b!("replica.alter.log.dirs.io.max.bytes.per.second", Some(LMAX), Long, Dynamic, "A long representing the upper bound (bytes/sec) on disk IO used for moving replica between log directories on the same broker."),
    b!("replica.fetch.max.bytes", Some("1048576"), Int, ReadOnly, "The number of bytes of messages to attempt to fetch for each partition."),
    b!("replica.lag.time.max.ms", Some("30000"), Long, ReadOnly, "If a follower hasn't sent any fetch requests or hasn't consumed up to the leaders log end offset for at least this time, the leader will remove the follower from isr."),
    b!("sasl.enabled.mechanisms", Some("GSSAPI"), List, Dynamic, "The list of SASL mechanisms enabled in the Kafka server."),
    b!("security.inter.broker.protocol", Some("PLAINTEXT"), String, ReadOnly, "Security protocol used to communicate between brokers."),
    b!("socket.receive.buffer.bytes", Some("102400"), Int, ReadOnly, "The SO_RCVBUF buffer of the socket server sockets."),
    b!("socket.request.max.bytes", Some("104857600"), Int, ReadOnly, "The maximum number of bytes in a socket request."),
    b!("socket.send.buffer.bytes", Some("102400"), Int, ReadOnly, "The SO_SNDBUF buffer of the socket server sockets."),
    b!("ssl.keystore.location", None, String, Dynamic, "The location of the key store file."),
    b!("ssl.keystore.password", None, Password, Dynamic, "The store password for the key store file."),
    b!("transaction.state.log.replication.factor", Some("3"), Int, ReadOnly, "The replication factor for the transaction topic."),
    b!("unclean.leader.election.enable", Some("false"), Boolean, Dynamic, "Indicates whether to enable replicas not in the ISR set to be elected as leader as a last resort, even though doing so may result in data loss."),
    b!("zookeeper.connect", None, String, ReadOnly, "Not used in KRaft mode."),
];

macro_rules! t {
    ($name:expr, $default:expr, $kind:ident, $syn:expr, $doc:expr) => {
        TopicDef {
            name: $name,
            default: $default,
            kind: Kind::$kind,
            synonyms: $syn,
            doc: $doc,
        }
    };
}

/// Topic configs with their broker synonyms.
pub static TOPIC_CONFIGS: &[TopicDef] = &[
    t!("cleanup.policy", "delete", List, &[("log.cleanup.policy", 1)], "A string that is either \"delete\" or \"compact\" or both."),
    t!("compression.type", "producer", String, &[("compression.type", 1)], "Specify the final compression type for a given topic."),
    t!("delete.retention.ms", "86400000", Long, &[("log.cleaner.delete.retention.ms", 1)], "The amount of time to retain delete tombstone markers for log compacted topics."),
    t!("file.delete.delay.ms", "60000", Long, &[("log.segment.delete.delay.ms", 1)], "The time to wait before deleting a file from the filesystem."),
    t!("flush.messages", LMAX, Long, &[("log.flush.interval.messages", 1)], "This setting allows specifying an interval at which we will force an fsync of data written to the log."),
    t!("flush.ms", LMAX, Long, &[("log.flush.interval.ms", 1)], "This setting allows specifying a time interval at which we will force an fsync of data written to the log."),
    t!("follower.replication.throttled.replicas", "", List, &[], "A list of replicas for which log replication should be throttled on the follower side."),
    t!("index.interval.bytes", "4096", Int, &[("log.index.interval.bytes", 1)], "This setting controls how frequently Kafka adds an index entry to its offset index."),
    t!("leader.replication.throttled.replicas", "", List, &[], "A list of replicas for which log replication should be throttled on the leader side."),
    t!("local.retention.bytes", "-2", Long, &[("log.local.retention.bytes", 1)], "The maximum size of local log segments that can grow for a partition before it deletes the old segments."),
    t!("local.retention.ms", "-2", Long, &[("log.local.retention.ms", 1)], "The number of milliseconds to keep the local log segment before it gets deleted."),
    t!("max.compaction.lag.ms", LMAX, Long, &[("log.cleaner.max.compaction.lag.ms", 1)], "The maximum time a message will remain ineligible for compaction in the log."),
    t!("max.message.bytes", "1048588", Int, &[("message.max.bytes", 1)], "The largest record batch size allowed by Kafka (after compression if compression is enabled)."),
    t!("message.timestamp.after.max.ms", LMAX, Long, &[("log.message.timestamp.after.max.ms", 1)], "The maximum allowed timestamp difference for messages from the future."),
    t!("message.timestamp.before.max.ms", LMAX, Long, &[("log.message.timestamp.before.max.ms", 1)], "The maximum allowed timestamp difference for messages from the past."),
    t!("message.timestamp.type", "CreateTime", String, &[("log.message.timestamp.type", 1)], "Define whether the timestamp in the message is message create time or log append time."),
    t!("min.cleanable.dirty.ratio", "0.5", Double, &[("log.cleaner.min.cleanable.ratio", 1)], "This configuration controls how frequently the log compactor will attempt to clean the log."),
    t!("min.compaction.lag.ms", "0", Long, &[("log.cleaner.min.compaction.lag.ms", 1)], "The minimum time a message will remain uncompacted in the log."),
    t!("min.insync.replicas", "1", Int, &[("min.insync.replicas", 1)], "When a producer sets acks to \"all\" (or \"-1\"), this configuration specifies the minimum number of replicas that must acknowledge a write for the write to be considered successful."),
    t!("preallocate", "false", Boolean, &[("log.preallocate", 1)], "True if we should preallocate the file on disk when creating a new log segment."),
    t!("remote.storage.enable", "false", Boolean, &[], "To enable tiered storage for a topic, set this configuration as true."),
    t!("retention.bytes", "-1", Long, &[("log.retention.bytes", 1)], "This configuration controls the maximum size a partition can grow to before we will discard old log segments."),
    t!("retention.ms", "604800000", Long, &[("log.retention.ms", 1), ("log.retention.minutes", 60_000), ("log.retention.hours", 3_600_000)], "This configuration controls the maximum time we will retain a log before we will discard old log segments."),
    t!("segment.bytes", "1073741824", Int, &[("log.segment.bytes", 1)], "This configuration controls the segment file size for the log."),
    t!("segment.index.bytes", "10485760", Int, &[("log.index.size.max.bytes", 1)], "This configuration controls the size of the index that maps offsets to file positions."),
    t!("segment.jitter.ms", "0", Long, &[("log.roll.jitter.ms", 1), ("log.roll.jitter.hours", 3_600_000)], "The maximum random jitter subtracted from the scheduled segment roll time."),
    t!("segment.ms", "604800000", Long, &[("log.roll.ms", 1), ("log.roll.hours", 3_600_000)], "This configuration controls the period of time after which Kafka will force the log to roll."),
    t!("unclean.leader.election.enable", "false", Boolean, &[("unclean.leader.election.enable", 1)], "Indicates whether to enable replicas not in the ISR set to be elected as leader as a last resort."),
];

pub fn broker_def(name: &str) -> Option<&'static BrokerDef> {
    BROKER_CONFIGS.iter().find(|d| d.name == name)
}

pub fn topic_def(name: &str) -> Option<&'static TopicDef> {
    TOPIC_CONFIGS.iter().find(|d| d.name == name)
}

/// The `server.properties` value of a broker config (`broker` None: what every broker shares).
pub fn static_broker_value(c: &Cluster, broker: Option<&Broker>, name: &str) -> Option<String> {
    let brokers = c.brokers.len();
    let rf = brokers.clamp(1, 3).to_string();
    let proto = c.security_protocol.as_str();
    match name {
        "auto.create.topics.enable" => Some("false".into()),
        "auto.leader.rebalance.enable" => Some("false".into()),
        "default.replication.factor" | "offsets.topic.replication.factor" => Some(rf),
        "transaction.state.log.replication.factor" => Some(rf),
        "log.dirs" => Some(c.log_dirs.join(",")),
        "process.roles" => Some("broker,controller".into()),
        "security.inter.broker.protocol" => Some(proto.to_string()),
        "sasl.enabled.mechanisms" if !c.sasl_mechanisms.is_empty() => {
            Some(c.sasl_mechanisms.join(","))
        }
        "broker.id" | "node.id" => broker.map(|b| b.id.to_string()),
        "broker.rack" => broker.and_then(|b| b.rack.clone()),
        "listeners" | "advertised.listeners" => {
            broker.map(|b| format!("{proto}://{}:{}", c.host, b.port))
        }
        _ => None,
    }
}

/// One config as DescribeConfigs reports it.
#[derive(Debug, Clone)]
pub struct Entry {
    pub name: String,
    pub value: Option<String>,
    pub source: i8,
    pub read_only: bool,
    pub sensitive: bool,
    pub kind: Kind,
    pub doc: &'static str,
    /// (name, value, source) in precedence order, the entry's own first.
    pub synonyms: Vec<(String, Option<String>, i8)>,
}

/// Every level at which a broker config has a value, in precedence order.
fn broker_levels(
    c: &Cluster,
    broker: Option<&Broker>,
    def: &BrokerDef,
) -> Vec<(String, Option<String>, i8)> {
    let mut out = Vec::new();
    if let Some(v) = broker.and_then(|b| b.configs.get(def.name)) {
        out.push((
            def.name.to_string(),
            Some(v.clone()),
            source::DYNAMIC_BROKER_CONFIG,
        ));
    }
    // What the brokers show: a change of the defaults still on its way is not visible yet.
    let defaults = c
        .lag
        .shown_config(&ConfigKey::BrokerDefaults)
        .unwrap_or(&c.broker_defaults);
    if let Some(v) = defaults.get(def.name) {
        out.push((
            def.name.to_string(),
            Some(v.clone()),
            source::DYNAMIC_DEFAULT_BROKER_CONFIG,
        ));
    }
    if let Some(v) = static_broker_value(c, broker, def.name) {
        out.push((def.name.to_string(), Some(v), source::STATIC_BROKER_CONFIG));
    }
    if let Some(v) = def.default {
        out.push((
            def.name.to_string(),
            Some(v.to_string()),
            source::DEFAULT_CONFIG,
        ));
    }
    out
}

/// Every broker config of `broker` (None: the cluster-wide default resource).
pub fn describe_broker(c: &Cluster, broker: Option<&Broker>) -> Vec<Entry> {
    BROKER_CONFIGS
        .iter()
        .map(|def| {
            let levels = broker_levels(c, broker, def);
            let (value, src) = match levels.first() {
                Some((_, v, s)) => (v.clone(), *s),
                None => (None, source::DEFAULT_CONFIG),
            };
            let sensitive = def.kind == Kind::Password;
            Entry {
                name: def.name.to_string(),
                value: if sensitive { None } else { value },
                source: src,
                read_only: def.mode == Mode::ReadOnly,
                sensitive,
                kind: def.kind,
                doc: def.doc,
                synonyms: levels
                    .into_iter()
                    .map(|(n, v, s)| (n, if sensitive { None } else { v }, s))
                    .collect(),
            }
        })
        // The cluster-default resource ("") holds only the dynamic defaults.
        .filter(|e| broker.is_some() || e.source == source::DYNAMIC_DEFAULT_BROKER_CONFIG)
        .collect()
}

/// (name, value, source) of one synonym.
pub type Synonym = (String, Option<String>, i8);

/// Value and source of a topic config, and the broker synonyms it inherits from.
pub fn topic_value(
    c: &Cluster,
    topic: Option<&Topic>,
    name: &str,
) -> (Option<String>, i8, Vec<Synonym>) {
    let Some(def) = topic_def(name) else {
        return (None, source::DEFAULT_CONFIG, Vec::new());
    };
    let mut synonyms = Vec::new();
    if let Some(v) = topic.and_then(|t| t.configs.get(name)) {
        synonyms.push((name.to_string(), Some(v.clone()), source::TOPIC_CONFIG));
    }
    let mut inherited: Option<(String, i8)> = None;
    for (syn, factor) in def.synonyms {
        let Some(bdef) = broker_def(syn) else {
            continue;
        };
        // Per-broker overrides do not apply to topics here; the cluster-wide levels do.
        for (n, v, s) in broker_levels(c, None, bdef) {
            if inherited.is_none() {
                if let Some(v) = &v {
                    let value = if *factor == 1 {
                        v.clone()
                    } else {
                        v.parse::<i64>()
                            .map(|x| x.saturating_mul(*factor).to_string())
                            .unwrap_or_else(|_| v.clone())
                    };
                    inherited = Some((value, s));
                }
            }
            synonyms.push((n, v, s));
        }
    }
    match (topic.and_then(|t| t.configs.get(name)), inherited) {
        (Some(v), _) => (Some(v.clone()), source::TOPIC_CONFIG, synonyms),
        (None, Some((v, s))) => (Some(v), s, synonyms),
        (None, None) => (
            Some(def.default.to_string()),
            source::DEFAULT_CONFIG,
            synonyms,
        ),
    }
}

pub fn describe_topic(c: &Cluster, topic: &Topic) -> Vec<Entry> {
    TOPIC_CONFIGS
        .iter()
        .map(|def| {
            let (value, src, synonyms) = topic_value(c, Some(topic), def.name);
            Entry {
                name: def.name.to_string(),
                value,
                source: src,
                read_only: false,
                sensitive: false,
                kind: def.kind,
                doc: def.doc,
                synonyms: synonyms
                    .into_iter()
                    .filter(|(_, v, _)| v.is_some())
                    .collect(),
            }
        })
        .collect()
}

/// Checks a value against a config's type (and the throttled-replica list format).
pub fn validate_value(name: &str, kind: Kind, value: &str) -> Result<(), ApiError> {
    let bad = |what: &str| {
        ApiError::new(
            err::INVALID_CONFIG,
            format!("Invalid value {value} for configuration {name}: {what}"),
        )
    };
    match kind {
        Kind::Boolean => {
            if !matches!(value.to_ascii_lowercase().as_str(), "true" | "false") {
                return Err(bad("Expected value to be either true or false"));
            }
        }
        Kind::Int => {
            value
                .trim()
                .parse::<i32>()
                .map_err(|_| bad("Not a number of type INT"))?;
        }
        Kind::Long => {
            value
                .trim()
                .parse::<i64>()
                .map_err(|_| bad("Not a number of type LONG"))?;
        }
        Kind::Double => {
            value
                .trim()
                .parse::<f64>()
                .map_err(|_| bad("Not a number of type DOUBLE"))?;
        }
        Kind::String | Kind::List | Kind::Class | Kind::Password => {}
    }
    if name.ends_with(".replication.throttled.replicas")
        && !super::reassign::valid_throttle_list(value)
    {
        return Err(bad(
            "must be the literal '*' or a list of replicas in the following format: [partitionId]:[brokerId],[partitionId]:[brokerId],...",
        ));
    }
    if name == "log.cleanup.policy" {
        for part in value.split(',') {
            if !matches!(part.trim(), "delete" | "compact") {
                return Err(bad("String must be one of: compact, delete"));
            }
        }
    }
    // Kafka's validators of the topic configs (ranges, enumerations): the same table ballast
    // checks a change against before sending it.
    ballast_model::configs::check_topic_config(name, value)
        .map_err(|why| ApiError::new(err::INVALID_CONFIG, why))?;
    if name.ends_with(".replication.throttled.rate")
        && value.trim().parse::<i64>().is_ok_and(|v| v < 0)
    {
        return Err(bad("Value must be at least 0"));
    }
    Ok(())
}

/// One alteration of one config.
#[derive(Debug, Clone)]
pub enum Op {
    Set(String),
    Delete,
    Append(String),
    Subtract(String),
}

/// Applies operations to a map of overrides after validating them against `kind_of`.
pub fn apply_ops(
    overrides: &mut BTreeMap<String, String>,
    ops: &[(String, Op)],
    kind_of: impl Fn(&str) -> Result<Kind, ApiError>,
    current: impl Fn(&str) -> Option<String>,
) -> Result<(), ApiError> {
    let mut next = overrides.clone();
    for (name, op) in ops {
        let kind = kind_of(name)?;
        match op {
            Op::Set(v) => {
                validate_value(name, kind, v)?;
                next.insert(name.clone(), v.clone());
            }
            Op::Delete => {
                next.remove(name);
            }
            Op::Append(v) | Op::Subtract(v) => {
                if kind != Kind::List {
                    return Err(ApiError::new(
                        err::INVALID_CONFIG,
                        format!("Config value append is not allowed for config key: {name}"),
                    ));
                }
                let base = next.get(name).cloned().or_else(|| current(name));
                let mut items: Vec<String> = base
                    .unwrap_or_default()
                    .split(',')
                    .map(|s| s.trim().to_string())
                    .filter(|s| !s.is_empty())
                    .collect();
                for item in v.split(',').map(str::trim).filter(|s| !s.is_empty()) {
                    if matches!(op, Op::Append(_)) {
                        if !items.iter().any(|x| x == item) {
                            items.push(item.to_string());
                        }
                    } else {
                        items.retain(|x| x != item);
                    }
                }
                let joined = items.join(",");
                validate_value(name, kind, &joined)?;
                next.insert(name.clone(), joined);
            }
        }
    }
    *overrides = next;
    Ok(())
}

/// Kind of a topic config name, or the error Kafka gives for an unknown one.
pub fn topic_kind(name: &str) -> Result<Kind, ApiError> {
    topic_def(name).map(|d| d.kind).ok_or_else(|| {
        ApiError::new(
            err::INVALID_CONFIG,
            format!("Unknown topic config name: {name}"),
        )
    })
}

/// Kind of a dynamically updatable broker config, or why it cannot be updated.
pub fn broker_kind(name: &str) -> Result<Kind, ApiError> {
    match broker_def(name) {
        Some(d) if d.mode == Mode::Dynamic => Ok(d.kind),
        Some(_) => Err(ApiError::new(
            err::INVALID_REQUEST,
            format!("Cannot update these configs dynamically: Set({name})"),
        )),
        None => Err(ApiError::new(
            err::INVALID_CONFIG,
            format!("Unknown broker config name: {name}"),
        )),
    }
}
