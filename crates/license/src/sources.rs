//! Reading a process's license sources: `LICENSE_STRING`, `BALLAST_LICENSE_FILE`, the fetched
//! token in `settings`, and the facts the demo trial needs.

use ballast_config::Config;
use ballast_schema::{Store, StoreError};

use crate::keys::Verifier;
use crate::status::{Candidate, Loaded, Source, Status, Verdict};
use crate::token::verify;
use crate::trial::{is_loopback_server, Trial, TrialFacts, DEMO_TRIAL_ENV, TRIAL_STARTED_SETTING};

/// The `settings` key of the token auto-fetch stored last.
pub const TOKEN_SETTING: &str = "license.token";

/// The raw sources of one process, before verification.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Inputs {
    /// `LICENSE_STRING`
    pub env_token: Option<String>,
    /// `BALLAST_LICENSE_FILE`: its content, or why it could not be read.
    pub file_token: Option<Result<String, String>>,
    /// `settings.license.token`
    pub fetched_token: Option<String>,
    pub trial: TrialFacts,
}

impl Inputs {
    /// Verifies every token once; the result is evaluated at any `now` by [`Loaded::status`].
    pub fn verify(&self, verifier: &Verifier) -> Loaded {
        let check = |token: &str| match verify(token, verifier) {
            Ok(v) => Verdict::Verified(v),
            Err(r) => Verdict::Rejected(r),
        };
        let mut candidates = Vec::new();
        if let Some(t) = non_empty(self.env_token.as_deref()) {
            candidates.push(Candidate {
                source: Source::Env,
                verdict: check(t),
            });
        }
        match &self.file_token {
            Some(Ok(t)) => candidates.push(Candidate {
                source: Source::File,
                verdict: match non_empty(Some(t)) {
                    Some(t) => check(t),
                    None => Verdict::Unreadable("the file is empty".into()),
                },
            }),
            Some(Err(why)) => candidates.push(Candidate {
                source: Source::File,
                verdict: Verdict::Unreadable(why.clone()),
            }),
            None => {}
        }
        if let Some(t) = non_empty(self.fetched_token.as_deref()) {
            candidates.push(Candidate {
                source: Source::Fetched,
                verdict: check(t),
            });
        }
        Loaded {
            candidates,
            trial: self.trial.clone(),
        }
    }
}

fn non_empty(t: Option<&str>) -> Option<&str> {
    t.map(str::trim).filter(|t| !t.is_empty())
}

/// Reads the sources: the configuration, the license file, the store. `demo_cluster_id` is this
/// process's `BALLAST_DEMO_TRIAL` (see [`demo_cluster_id_from_env`]).
pub fn load_inputs(
    config: &Config,
    store: &Store,
    demo_cluster_id: Option<&str>,
) -> Result<Inputs, StoreError> {
    let lic = &config.license;
    let file_token = lic.file.as_ref().map(|path| {
        std::fs::read_to_string(path)
            .map(|s| s.trim().to_string())
            .map_err(|e| format!("cannot read {}: {e}", path.display()))
    });
    let fetched_token = store.setting(TOKEN_SETTING)?;
    let trial = match demo_cluster_id {
        None => TrialFacts::default(),
        Some(id) => TrialFacts {
            demo_cluster_id: Some(id.to_string()),
            bootstrap_loopback: !config.kafka.bootstrap_servers.is_empty()
                && config
                    .kafka
                    .bootstrap_servers
                    .iter()
                    .all(|s| is_loopback_server(s)),
            observed: store
                .observed_cluster()?
                .map(|c| (c.facts.cluster_id, c.facts.sampled_at_ms)),
            stale_after_ms: i64::try_from(config.timing.ready_stale_after.as_millis())
                .unwrap_or(i64::MAX),
            started_at_ms: store
                .setting(TRIAL_STARTED_SETTING)?
                .and_then(|v| v.trim().parse().ok()),
        },
    };
    Ok(Inputs {
        env_token: lic.token.as_ref().map(|s| s.expose().to_string()),
        file_token,
        fetched_token,
        trial,
    })
}

/// `BALLAST_DEMO_TRIAL` of this process, when set and not empty.
pub fn demo_cluster_id_from_env() -> Option<String> {
    std::env::var(DEMO_TRIAL_ENV)
        .ok()
        .filter(|v| !v.trim().is_empty())
}

/// Stores the trial's start the first time a process grants it.
pub fn record_trial_start(store: &Store, status: &Status, now_ms: i64) -> Result<(), StoreError> {
    if let Trial::Active {
        started_at_ms,
        record: true,
        ..
    } = status.trial
    {
        store.put_setting(TRIAL_STARTED_SETTING, &started_at_ms.to_string(), now_ms)?;
    }
    Ok(())
}

/// The license state of this process at `now_ms`, from its configuration and the store, with the
/// keys this build accepts. For workers that act on it (the healer skips with `license_invalid`
/// when `!status.allows_management()`); the web process caches the same computation.
pub fn current(config: &Config, store: &Store, now_ms: i64) -> Result<Status, StoreError> {
    let demo = demo_cluster_id_from_env();
    let inputs = load_inputs(config, store, demo.as_deref())?;
    let status = inputs.verify(&Verifier::for_this_build()).status(now_ms);
    record_trial_start(store, &status, now_ms)?;
    Ok(status)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::keys::{KeyName, SigningKey, TrustedKey};
    use crate::status::{Reason, State};
    use crate::token::{issue, Claims};
    use ballast_config::RawConfig;

    const NOW: i64 = 1_800_000_000_000;

    struct Fixture {
        store: Store,
        dir: tempfile::TempDir,
    }

    fn fixture() -> Fixture {
        let dir = tempfile::tempdir().expect("dir");
        let db = dir.path().join("ballast.db");
        Store::migrate(&db).expect("migrate");
        let store = Store::open(&db).expect("open");
        Fixture { store, dir }
    }

    fn config(f: &Fixture, extra: &[(&str, &str)]) -> Config {
        let mut pairs = vec![
            ("BALLAST_KAFKA_BOOTSTRAP_SERVERS", "127.0.0.1:9"),
            ("BALLAST_DATA_DIR", f.dir.path().to_str().expect("utf-8")),
        ];
        pairs.extend_from_slice(extra);
        let raw = RawConfig::from_pairs(
            pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())),
            None,
        )
        .expect("raw");
        Config::from_raw(&raw).expect("config")
    }

    fn token(key: &SigningKey, lic: &str, exp_secs: i64) -> String {
        issue(
            &Claims {
                sub: "ACME".into(),
                lic: lic.into(),
                iat: NOW / 1000 - 60,
                nbf: NOW / 1000 - 60,
                exp: exp_secs,
                notes: None,
            },
            key,
        )
    }

    fn verifier(key: &SigningKey) -> Verifier {
        Verifier::with_keys(vec![TrustedKey {
            name: KeyName::Custom,
            key: key.public_key(),
        }])
    }

    #[test]
    fn every_source_is_read_and_the_fetched_token_comes_from_settings() {
        let f = fixture();
        let key = SigningKey::generate().expect("key");
        let file = f.dir.path().join("license.jwt");
        std::fs::write(&file, format!("{}\n", token(&key, "file", NOW / 1000 + 10)))
            .expect("write");
        let env = token(&key, "env", NOW / 1000 + 5);
        f.store
            .put_setting(TOKEN_SETTING, &token(&key, "fetched", NOW / 1000 + 20), NOW)
            .expect("put");
        let c = config(
            &f,
            &[
                ("LICENSE_STRING", env.as_str()),
                ("BALLAST_LICENSE_FILE", file.to_str().expect("utf-8")),
            ],
        );
        let inputs = load_inputs(&c, &f.store, None).expect("inputs");
        let status = inputs.verify(&verifier(&key)).status(NOW);
        assert_eq!(status.sources.len(), 3);
        assert_eq!(status.state(), State::Licensed);
        assert_eq!(status.best.source, Source::Fetched);
    }

    #[test]
    fn an_unreadable_license_file_is_invalid_and_names_the_file_not_the_token() {
        let f = fixture();
        let c = config(&f, &[("BALLAST_LICENSE_FILE", "/nonexistent/license.jwt")]);
        let status = load_inputs(&c, &f.store, None)
            .expect("inputs")
            .verify(&Verifier::release())
            .status(NOW);
        assert_eq!(status.state(), State::Invalid);
        assert_eq!(status.best.reason, Some(Reason::Unreadable));
        assert!(status.message().contains("/nonexistent/license.jwt"));
    }

    #[test]
    fn current_uses_this_builds_keys_and_reports_no_license_as_invalid() {
        let f = fixture();
        let status = current(&config(&f, &[]), &f.store, NOW).expect("status");
        assert_eq!(status.state(), State::Invalid);
        assert_eq!(status.best.reason, Some(Reason::NoLicense));
    }

    #[test]
    fn a_demo_trial_is_recorded_once_and_ends_after_fourteen_days() {
        let f = fixture();
        let id = crate::trial::new_demo_cluster_id();
        let c = config(&f, &[]);
        write_cluster(&f.store, &id, NOW - 1_000);
        let status = load_inputs(&c, &f.store, Some(&id))
            .expect("inputs")
            .verify(&Verifier::release())
            .status(NOW);
        assert_eq!(status.state(), State::Trial);
        record_trial_start(&f.store, &status, NOW).expect("record");
        assert_eq!(
            f.store.setting(TRIAL_STARTED_SETTING).expect("get"),
            Some(NOW.to_string())
        );
        let later = NOW + 14 * 86_400_000;
        write_cluster(&f.store, &id, later - 1_000);
        let status = load_inputs(&c, &f.store, Some(&id))
            .expect("inputs")
            .verify(&Verifier::release())
            .status(later);
        assert_eq!(status.state(), State::Expired);
        assert_eq!(status.best.reason, Some(Reason::TrialEnded));
    }

    #[test]
    fn no_trial_against_a_remote_bootstrap_even_with_the_demo_variable() {
        let f = fixture();
        let id = crate::trial::new_demo_cluster_id();
        let c = config(
            &f,
            &[("BALLAST_KAFKA_BOOTSTRAP_SERVERS", "kafka.example:9092")],
        );
        write_cluster(&f.store, &id, NOW - 1_000);
        let status = load_inputs(&c, &f.store, Some(&id))
            .expect("inputs")
            .verify(&Verifier::release())
            .status(NOW);
        assert_eq!(status.best.reason, Some(Reason::TrialRefused));
    }

    fn write_cluster(store: &Store, cluster_id: &str, at_ms: i64) {
        store
            .write_observed(&ballast_schema::ObservedWrite {
                cluster: ballast_schema::ClusterFacts {
                    cluster_id: Some(cluster_id.to_string()),
                    sampled_at_ms: at_ms,
                    ..Default::default()
                },
                ..Default::default()
            })
            .expect("write observed");
    }
}
