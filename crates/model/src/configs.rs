//! Kafka's own rules for topic configuration values (its `LogConfig` definitions, Kafka 3.5 to
//! 4.1): the type of each known topic config and the validator Kafka applies. Ballast checks a
//! change against them before anything is sent, and the simulated cluster refuses what Kafka
//! refuses. A name not listed here is left to the cluster's own definitions (DescribeConfigs).

/// The type of a config value, as Kafka's `ConfigDef` parses it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Boolean,
    Int,
    Long,
    Double,
    String,
    List,
}

/// The validator Kafka applies beyond the type.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Rule {
    None,
    /// `atLeast(n)`.
    AtLeast(i64),
    /// `between(lo, hi)`.
    Between(f64, f64),
    /// `in(...)`: one of these (case-sensitive, as Kafka's `ValidString`).
    OneOf(&'static [&'static str]),
    /// `ValidList.in(...)`: a comma-separated list of these.
    ListOf(&'static [&'static str]),
}

/// One known topic config.
#[derive(Debug, Clone, Copy)]
pub struct TopicConfigDef {
    pub name: &'static str,
    pub kind: Kind,
    pub rule: Rule,
}

const fn def(name: &'static str, kind: Kind, rule: Rule) -> TopicConfigDef {
    TopicConfigDef { name, kind, rule }
}

/// Kafka's topic configs with a type or a validator worth checking before sending.
pub const TOPIC_CONFIG_RULES: &[TopicConfigDef] = &[
    def(
        "cleanup.policy",
        Kind::List,
        Rule::ListOf(&["compact", "delete"]),
    ),
    def(
        "compression.type",
        Kind::String,
        Rule::OneOf(&["uncompressed", "zstd", "lz4", "snappy", "gzip", "producer"]),
    ),
    def("delete.retention.ms", Kind::Long, Rule::AtLeast(0)),
    def("file.delete.delay.ms", Kind::Long, Rule::AtLeast(0)),
    def("flush.messages", Kind::Long, Rule::AtLeast(1)),
    def("flush.ms", Kind::Long, Rule::AtLeast(0)),
    def("index.interval.bytes", Kind::Int, Rule::AtLeast(0)),
    def("local.retention.bytes", Kind::Long, Rule::AtLeast(-2)),
    def("local.retention.ms", Kind::Long, Rule::AtLeast(-2)),
    def("max.compaction.lag.ms", Kind::Long, Rule::AtLeast(1)),
    def("max.message.bytes", Kind::Int, Rule::AtLeast(0)),
    def("message.downconversion.enable", Kind::Boolean, Rule::None),
    def(
        "message.timestamp.after.max.ms",
        Kind::Long,
        Rule::AtLeast(0),
    ),
    def(
        "message.timestamp.before.max.ms",
        Kind::Long,
        Rule::AtLeast(0),
    ),
    def(
        "message.timestamp.difference.max.ms",
        Kind::Long,
        Rule::AtLeast(0),
    ),
    def(
        "message.timestamp.type",
        Kind::String,
        Rule::OneOf(&["CreateTime", "LogAppendTime"]),
    ),
    def(
        "min.cleanable.dirty.ratio",
        Kind::Double,
        Rule::Between(0.0, 1.0),
    ),
    def("min.compaction.lag.ms", Kind::Long, Rule::AtLeast(0)),
    def("min.insync.replicas", Kind::Int, Rule::AtLeast(1)),
    def("preallocate", Kind::Boolean, Rule::None),
    def("remote.storage.enable", Kind::Boolean, Rule::None),
    def("retention.bytes", Kind::Long, Rule::None),
    def("retention.ms", Kind::Long, Rule::AtLeast(-1)),
    def("segment.bytes", Kind::Int, Rule::AtLeast(14)),
    def("segment.index.bytes", Kind::Int, Rule::AtLeast(4)),
    def("segment.jitter.ms", Kind::Long, Rule::AtLeast(0)),
    def("segment.ms", Kind::Long, Rule::AtLeast(1)),
    def("unclean.leader.election.enable", Kind::Boolean, Rule::None),
];

/// The rule of a known topic config.
pub fn topic_config_def(name: &str) -> Option<&'static TopicConfigDef> {
    TOPIC_CONFIG_RULES.iter().find(|d| d.name == name)
}

/// Checks `value` for topic config `name` as Kafka would; the message is Kafka's words
/// ("Invalid value -5 for configuration retention.ms: Value must be at least -1"). A name this
/// table does not know passes.
pub fn check_topic_config(name: &str, value: &str) -> Result<(), String> {
    let Some(d) = topic_config_def(name) else {
        return Ok(());
    };
    let bad = |what: String| format!("Invalid value {value} for configuration {name}: {what}");
    let v = value.trim();
    let number = match d.kind {
        Kind::Boolean => {
            if !v.eq_ignore_ascii_case("true") && !v.eq_ignore_ascii_case("false") {
                return Err(bad("Expected value to be either true or false".into()));
            }
            None
        }
        Kind::Int => Some(
            v.parse::<i32>()
                .map_err(|_| bad("Not a number of type INT".into()))? as f64,
        ),
        Kind::Long => Some(
            v.parse::<i64>()
                .map_err(|_| bad("Not a number of type LONG".into()))? as f64,
        ),
        Kind::Double => Some(
            v.parse::<f64>()
                .ok()
                .filter(|x| x.is_finite())
                .ok_or_else(|| bad("Not a number of type DOUBLE".into()))?,
        ),
        Kind::String | Kind::List => None,
    };
    match (d.rule, number) {
        (Rule::AtLeast(min), Some(x)) if x < min as f64 => {
            Err(bad(format!("Value must be at least {min}")))
        }
        (Rule::Between(lo, hi), Some(x)) if x < lo || x > hi => Err(bad(format!(
            "Value must be no less than {lo} and no more than {hi}"
        ))),
        (Rule::OneOf(allowed), _) if !allowed.contains(&v) => Err(bad(format!(
            "String must be one of: {}",
            allowed.join(", ")
        ))),
        (Rule::ListOf(allowed), _) => {
            for item in v.split(',').map(str::trim) {
                if !allowed.contains(&item) {
                    return Err(bad(format!(
                        "String must be one of: {}",
                        allowed.join(", ")
                    )));
                }
            }
            Ok(())
        }
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_kafka_refuses_are_refused_with_its_words() {
        let e = check_topic_config("retention.ms", "-5").unwrap_err();
        assert_eq!(
            e,
            "Invalid value -5 for configuration retention.ms: Value must be at least -1"
        );
        for (name, value) in [
            ("retention.ms", "soon"),
            ("segment.bytes", "3000000000"),
            ("min.insync.replicas", "0"),
            ("min.cleanable.dirty.ratio", "1.5"),
            ("cleanup.policy", "compact,shred"),
            ("compression.type", "brotli"),
            ("unclean.leader.election.enable", "yes"),
            ("message.timestamp.type", "createtime"),
        ] {
            assert!(check_topic_config(name, value).is_err(), "{name}={value}");
        }
    }

    #[test]
    fn values_kafka_accepts_pass_and_unknown_names_are_the_clusters_to_judge() {
        for (name, value) in [
            ("retention.ms", "-1"),
            ("retention.ms", "3600000"),
            ("retention.bytes", "-5"),
            ("cleanup.policy", "compact,delete"),
            ("compression.type", "zstd"),
            ("unclean.leader.election.enable", "TRUE"),
            ("min.cleanable.dirty.ratio", "0.5"),
            ("some.future.config", "anything"),
        ] {
            assert!(check_topic_config(name, value).is_ok(), "{name}={value}");
        }
    }
}
