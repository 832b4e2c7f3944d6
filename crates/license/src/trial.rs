//! The demo trial: management features on `ballast demo`'s simulated cluster, never on a real one.
//!
//! `ballast demo` gives its simulated cluster a fresh cluster id that real Kafka cannot carry
//! (`ballast-sim-demo-` and 16 hex digits; Kafka's ids are 22-character base64url UUIDs) and
//! passes that id to its workers in `BALLAST_DEMO_TRIAL`. A process grants the trial only when all
//! of these hold:
//!
//! 1. `BALLAST_DEMO_TRIAL` is set and is a simulator id (prefix `ballast-sim-`, not a Kafka id);
//! 2. every bootstrap server is a loopback address (the simulator listens on 127.0.0.1);
//! 3. the observer's latest successful sample, no older than `BALLAST_READY_STALE_AFTER`, read
//!    exactly that cluster id;
//! 4. fewer than [`TRIAL_DAYS`] days have passed since the trial started in this data directory
//!    (recorded in the `settings` key [`TRIAL_STARTED_SETTING`] the first time 1-3 held).

use base64::Engine;

/// The internal variable `ballast demo` sets for its workers: the cluster id of its simulator.
pub const DEMO_TRIAL_ENV: &str = "BALLAST_DEMO_TRIAL";
/// The `settings` key holding when the trial started (unix ms).
pub const TRIAL_STARTED_SETTING: &str = "license.trial_started_at_ms";
/// How long a trial lasts from its start in one data directory.
pub const TRIAL_DAYS: i64 = 14;
/// Cluster ids of the simulator when `ballast demo` starts it begin with this.
pub const SIM_CLUSTER_ID_PREFIX: &str = "ballast-sim-";

const DAY_MS: i64 = 86_400_000;

/// Whether `id` has the shape of a real Kafka cluster id: 22 characters of base64url that decode
/// to 16 bytes (a UUID), as both KRaft (`kafka-storage random-uuid`) and ZooKeeper mode generate.
pub fn is_kafka_cluster_id(id: &str) -> bool {
    id.len() == 22
        && base64::engine::general_purpose::URL_SAFE_NO_PAD
            .decode(id)
            .is_ok_and(|b| b.len() == 16)
}

/// Whether `id` is a cluster id `ballast demo` gives its simulator.
pub fn is_simulator_cluster_id(id: &str) -> bool {
    id.starts_with(SIM_CLUSTER_ID_PREFIX) && id.len() > 22 && !is_kafka_cluster_id(id)
}

/// A fresh simulator cluster id for one `ballast demo` run.
pub fn new_demo_cluster_id() -> String {
    let mut bytes = [0u8; 8];
    if getrandom::fill(&mut bytes).is_err() {
        // Only uniqueness on this machine matters here; the process id will do.
        bytes = u64::from(std::process::id()).to_be_bytes();
    }
    let hex: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
    format!("{SIM_CLUSTER_ID_PREFIX}demo-{hex}")
}

/// Whether a bootstrap entry (`host:port`, IPv6 as `[::1]:port`) names this machine.
pub fn is_loopback_server(server: &str) -> bool {
    let host = match server.strip_prefix('[') {
        Some(rest) => rest.split(']').next().unwrap_or_default(),
        None => server.rsplit_once(':').map_or(server, |(h, _)| h),
    };
    host.eq_ignore_ascii_case("localhost")
        || host
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback())
}

/// Everything the trial rule looks at.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct TrialFacts {
    /// `BALLAST_DEMO_TRIAL` of this process.
    pub demo_cluster_id: Option<String>,
    /// Every bootstrap server is a loopback address.
    pub bootstrap_loopback: bool,
    /// The observer's latest cluster id and when that sample was taken (unix ms).
    pub observed: Option<(Option<String>, i64)>,
    /// `BALLAST_READY_STALE_AFTER` in ms: an older sample does not count.
    pub stale_after_ms: i64,
    /// When the trial started in this data directory, if it has.
    pub started_at_ms: Option<i64>,
}

/// What the trial rule says at one moment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Trial {
    /// Not a demo: no trial is offered.
    NotOffered,
    /// A demo whose simulated cluster has not been read (recently) yet.
    Pending { why: String },
    /// A trial was asked for, but this is not the demo's simulated cluster.
    Refused { why: String },
    /// Management features are on until `ends_at_ms`. `record` is set when the start is not
    /// stored yet and should be (the first evaluation that grants the trial).
    Active {
        started_at_ms: i64,
        ends_at_ms: i64,
        cluster_id: String,
        record: bool,
    },
    /// The trial of this data directory is over.
    Ended {
        started_at_ms: i64,
        ended_at_ms: i64,
    },
}

impl TrialFacts {
    pub fn evaluate(&self, now_ms: i64) -> Trial {
        let Some(expected) = self.demo_cluster_id.as_deref() else {
            return Trial::NotOffered;
        };
        if !is_simulator_cluster_id(expected) {
            return Trial::Refused {
                why: format!("{DEMO_TRIAL_ENV} does not name a simulated cluster"),
            };
        }
        if !self.bootstrap_loopback {
            return Trial::Refused {
                why: "the trial runs only against the simulated cluster on this machine".into(),
            };
        }
        let Some((observed, sampled_at_ms)) = &self.observed else {
            return Trial::Pending {
                why: "the demo trial starts once the observer has read the simulated cluster"
                    .into(),
            };
        };
        if now_ms - sampled_at_ms > self.stale_after_ms {
            return Trial::Pending {
                why: "the observer has not read the simulated cluster recently".into(),
            };
        }
        if observed.as_deref() != Some(expected) {
            return Trial::Refused {
                why: "the connected cluster is not this demo's simulated cluster".into(),
            };
        }
        let (started_at_ms, record) = match self.started_at_ms {
            Some(t) => (t, false),
            None => (now_ms, true),
        };
        let ends_at_ms = started_at_ms.saturating_add(TRIAL_DAYS * DAY_MS);
        if now_ms >= ends_at_ms {
            return Trial::Ended {
                started_at_ms,
                ended_at_ms: ends_at_ms,
            };
        }
        Trial::Active {
            started_at_ms,
            ends_at_ms,
            cluster_id: expected.to_string(),
            record,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const NOW: i64 = 1_800_000_000_000;

    fn demo() -> TrialFacts {
        let id = "ballast-sim-demo-0123456789abcdef".to_string();
        TrialFacts {
            demo_cluster_id: Some(id.clone()),
            bootstrap_loopback: true,
            observed: Some((Some(id), NOW - 1_000)),
            stale_after_ms: 180_000,
            started_at_ms: None,
        }
    }

    #[test]
    fn real_kafka_cluster_ids_are_uuid_shaped_and_demo_ids_are_not() {
        // From kafka-storage random-uuid and a ZooKeeper-mode cluster.
        assert!(is_kafka_cluster_id("MkU3OEVBNTcwNTJENDM2Qg"));
        assert!(is_kafka_cluster_id("4L6g3nShT-eMCtK--X86sw"));
        let demo = new_demo_cluster_id();
        assert!(is_simulator_cluster_id(&demo), "{demo}");
        assert!(!is_kafka_cluster_id(&demo));
        assert_ne!(demo, new_demo_cluster_id());
        // A 22-character base64url id that happens to start with the prefix is still Kafka's.
        assert!(!is_simulator_cluster_id("ballast-sim-abcdefghij"));
        assert!(!is_simulator_cluster_id("redpanda.0b2a6e5c-6e5d"));
    }

    #[test]
    fn loopback_servers_are_recognised() {
        for s in [
            "127.0.0.1:9092",
            "127.3.2.1:1",
            "localhost:9092",
            "[::1]:9092",
        ] {
            assert!(is_loopback_server(s), "{s}");
        }
        for s in [
            "10.0.0.1:9092",
            "kafka:9092",
            "[2001:db8::1]:9092",
            "0.0.0.0:9092",
        ] {
            assert!(!is_loopback_server(s), "{s}");
        }
    }

    #[test]
    fn no_trial_outside_a_demo() {
        let facts = TrialFacts {
            demo_cluster_id: None,
            ..demo()
        };
        assert_eq!(facts.evaluate(NOW), Trial::NotOffered);
    }

    #[test]
    fn the_trial_starts_when_the_demo_cluster_is_observed_and_asks_to_be_recorded() {
        match demo().evaluate(NOW) {
            Trial::Active {
                started_at_ms,
                ends_at_ms,
                record,
                ..
            } => {
                assert_eq!(started_at_ms, NOW);
                assert_eq!(ends_at_ms, NOW + 14 * DAY_MS);
                assert!(record);
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn the_trial_is_pending_until_the_observer_reads_the_simulator() {
        let mut facts = demo();
        facts.observed = None;
        assert!(matches!(facts.evaluate(NOW), Trial::Pending { .. }));
        facts.observed = Some((
            Some("ballast-sim-demo-0123456789abcdef".into()),
            NOW - 200_000,
        ));
        assert!(matches!(facts.evaluate(NOW), Trial::Pending { .. }));
    }

    #[test]
    fn the_trial_is_refused_for_a_real_cluster_even_in_a_demo() {
        let mut facts = demo();
        facts.observed = Some((Some("MkU3OEVBNTcwNTJENDM2Qg".into()), NOW - 1_000));
        assert!(matches!(facts.evaluate(NOW), Trial::Refused { .. }));
        let mut facts = demo();
        facts.observed = Some((None, NOW - 1_000));
        assert!(matches!(facts.evaluate(NOW), Trial::Refused { .. }));
        // Naming a real cluster's id in the variable does not help.
        let mut facts = demo();
        facts.demo_cluster_id = Some("MkU3OEVBNTcwNTJENDM2Qg".into());
        facts.observed = Some((Some("MkU3OEVBNTcwNTJENDM2Qg".into()), NOW - 1_000));
        assert!(matches!(facts.evaluate(NOW), Trial::Refused { .. }));
        // Nor does a simulator id behind a remote bootstrap address.
        let mut facts = demo();
        facts.bootstrap_loopback = false;
        assert!(matches!(facts.evaluate(NOW), Trial::Refused { .. }));
    }

    #[test]
    fn another_demo_runs_simulator_does_not_carry_the_trial() {
        let mut facts = demo();
        facts.observed = Some((
            Some("ballast-sim-demo-ffffffffffffffff".into()),
            NOW - 1_000,
        ));
        assert!(matches!(facts.evaluate(NOW), Trial::Refused { .. }));
    }

    #[test]
    fn the_trial_ends_fourteen_days_after_it_started() {
        let mut facts = demo();
        facts.started_at_ms = Some(NOW - 14 * DAY_MS + 1);
        assert!(matches!(
            facts.evaluate(NOW),
            Trial::Active { record: false, .. }
        ));
        facts.started_at_ms = Some(NOW - 14 * DAY_MS);
        assert_eq!(
            facts.evaluate(NOW),
            Trial::Ended {
                started_at_ms: NOW - 14 * DAY_MS,
                ended_at_ms: NOW
            }
        );
    }
}
