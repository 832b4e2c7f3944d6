//! The license state of a process: every source's verdict at `now`, and the best of them.
//!
//! Precedence: the best license among the sources wins, ranked licensed > trial > expired >
//! not yet valid > invalid; between two of the same rank the one that runs longer wins, then the
//! source order `LICENSE_STRING`, `BALLAST_LICENSE_FILE`, fetched, trial. No source at all is
//! `invalid` with reason `no_license`: monitoring mode.

use serde::Serialize;

use crate::keys::KeyName;
use crate::token::{Claims, Rejection, Validity, Verified};
use crate::trial::{Trial, TrialFacts, TRIAL_DAYS};

/// The spec's four license states.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum State {
    Licensed,
    Trial,
    Expired,
    Invalid,
}

impl State {
    pub fn as_str(self) -> &'static str {
        match self {
            State::Licensed => "licensed",
            State::Trial => "trial",
            State::Expired => "expired",
            State::Invalid => "invalid",
        }
    }
}

/// Why a source (or the whole status) is not licensed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Reason {
    /// No source holds a token and no trial applies: monitoring mode.
    NoLicense,
    /// `BALLAST_LICENSE_FILE` cannot be read.
    Unreadable,
    Malformed,
    /// `alg` is not EdDSA.
    Algorithm,
    /// Signed by a key this build does not accept, or altered after signing.
    Signature,
    Claims,
    NotYetValid,
    Expired,
    /// A demo whose simulated cluster was not read (recently).
    TrialPending,
    /// A trial asked for against a cluster that is not the demo's simulator.
    TrialRefused,
    TrialEnded,
}

/// Where a license came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Source {
    /// `LICENSE_STRING`
    Env,
    /// `BALLAST_LICENSE_FILE`
    File,
    /// auto-fetch, stored in `settings` (`license.token`)
    Fetched,
    /// `ballast demo`'s trial
    Trial,
}

impl Source {
    pub fn describe(self) -> &'static str {
        match self {
            Source::Env => "LICENSE_STRING",
            Source::File => "BALLAST_LICENSE_FILE",
            Source::Fetched => "the fetched license",
            Source::Trial => "the demo trial",
        }
    }
}

/// A token source after verification (time not considered yet).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    Verified(Verified),
    Rejected(Rejection),
    /// The source could not be read (a file); the text says why.
    Unreadable(String),
}

/// One token source and its verdict.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Candidate {
    pub source: Source,
    pub verdict: Verdict,
}

/// One source's standing at `now`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SourceStatus {
    pub source: Source,
    pub state: State,
    pub reason: Option<Reason>,
    pub message: String,
    #[serde(skip)]
    pub claims: Option<Claims>,
    #[serde(skip)]
    pub key: Option<KeyName>,
    /// License expiry, or the trial's end (unix ms).
    #[serde(skip)]
    pub expires_at_ms: Option<i64>,
}

/// The license state of the process at one moment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Status {
    /// The winning source's standing (or `no_license`).
    pub best: SourceStatus,
    /// Whether a source was found at all (`false`: `best` is the `no_license` placeholder).
    pub any_source: bool,
    /// The trial rule's answer (also when another source wins).
    pub trial: Trial,
    /// Every source, in source order.
    pub sources: Vec<SourceStatus>,
}

impl Status {
    pub fn state(&self) -> State {
        self.best.state
    }

    /// Management mode: licensed or trial. Everything else is monitoring mode.
    pub fn allows_management(&self) -> bool {
        matches!(self.best.state, State::Licensed | State::Trial)
    }

    pub fn message(&self) -> &str {
        &self.best.message
    }

    /// When the current license or trial ends (unix ms), if there is one.
    pub fn expires_at_ms(&self) -> Option<i64> {
        self.best.expires_at_ms
    }

    pub fn claims(&self) -> Option<&Claims> {
        self.best.claims.as_ref()
    }
}

/// The sources of one process, verified, plus the trial's facts. Cheap to evaluate at any `now`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Loaded {
    pub candidates: Vec<Candidate>,
    pub trial: TrialFacts,
}

/// The placeholder of monitoring mode.
pub const NO_LICENSE_MESSAGE: &str = "no license: ballast runs in monitoring mode; set LICENSE_STRING or BALLAST_LICENSE_FILE, or LICENSE_FETCH_TOKEN and LICENSE_SUBSCRIPTION_ID for auto-fetch";

impl Loaded {
    pub fn status(&self, now_ms: i64) -> Status {
        let trial = self.trial.evaluate(now_ms);
        let mut sources: Vec<SourceStatus> = self
            .candidates
            .iter()
            .map(|c| standing(c, now_ms))
            .collect();
        if let Some(t) = trial_standing(&trial) {
            sources.push(t);
        }
        let best = sources.iter().max_by(|a, b| {
            rank(a)
                .cmp(&rank(b))
                // of equal rank, the earlier source is the better one
                .then(b.source.cmp(&a.source))
        });
        let (best, any_source) = match best {
            Some(b) => (b.clone(), true),
            None => (
                SourceStatus {
                    source: Source::Env,
                    state: State::Invalid,
                    reason: Some(Reason::NoLicense),
                    message: NO_LICENSE_MESSAGE.to_string(),
                    claims: None,
                    key: None,
                    expires_at_ms: None,
                },
                false,
            ),
        };
        Status {
            best,
            any_source,
            trial,
            sources,
        }
    }
}

/// Higher is better: the class, then how long it runs.
pub(crate) fn rank(s: &SourceStatus) -> (u8, i64) {
    let class = match (s.state, s.reason) {
        (State::Licensed, _) => 5,
        (State::Trial, _) => 4,
        (State::Expired, _) => 3,
        (State::Invalid, Some(Reason::NotYetValid)) => 2,
        (State::Invalid, _) => 1,
    };
    (class, s.expires_at_ms.unwrap_or(i64::MIN))
}

/// ISO 8601 UTC of unix seconds.
pub fn iso_secs(secs: i64) -> String {
    let t =
        std::time::UNIX_EPOCH + std::time::Duration::from_secs(u64::try_from(secs).unwrap_or(0));
    humantime::format_rfc3339_seconds(t).to_string()
}

fn iso_ms(ms: i64) -> String {
    iso_secs(ms.div_euclid(1000))
}

fn standing(c: &Candidate, now_ms: i64) -> SourceStatus {
    let from = c.source.describe();
    let invalid = |reason: Reason, message: String| SourceStatus {
        source: c.source,
        state: State::Invalid,
        reason: Some(reason),
        message,
        claims: None,
        key: None,
        expires_at_ms: None,
    };
    match &c.verdict {
        Verdict::Unreadable(why) => invalid(Reason::Unreadable, format!("{from}: {why}")),
        Verdict::Rejected(rejection) => {
            let reason = match rejection {
                Rejection::Malformed(_) => Reason::Malformed,
                Rejection::Algorithm(_) => Reason::Algorithm,
                Rejection::Signature => Reason::Signature,
                Rejection::Claims(_) => Reason::Claims,
            };
            invalid(reason, format!("{from}: {rejection}"))
        }
        Verdict::Verified(v) => {
            let cl = &v.claims;
            let (state, reason, message) = match cl.validity(now_ms) {
                Validity::Valid => (
                    State::Licensed,
                    None,
                    format!(
                        "licensed to {} (license {}) until {}",
                        cl.sub,
                        cl.lic,
                        iso_secs(cl.exp)
                    ),
                ),
                Validity::Expired => (
                    State::Expired,
                    Some(Reason::Expired),
                    format!(
                        "license {} of {} expired at {}; ballast runs in monitoring mode",
                        cl.lic,
                        cl.sub,
                        iso_secs(cl.exp)
                    ),
                ),
                Validity::NotYetValid => (
                    State::Invalid,
                    Some(Reason::NotYetValid),
                    format!(
                        "license {} of {} is not valid before {}",
                        cl.lic,
                        cl.sub,
                        iso_secs(cl.nbf)
                    ),
                ),
            };
            SourceStatus {
                source: c.source,
                state,
                reason,
                message,
                claims: Some(cl.clone()),
                key: Some(v.key),
                expires_at_ms: Some(cl.exp.saturating_mul(1000)),
            }
        }
    }
}

fn trial_standing(trial: &Trial) -> Option<SourceStatus> {
    let s = |state, reason, message: String, expires_at_ms| SourceStatus {
        source: Source::Trial,
        state,
        reason,
        message,
        claims: None,
        key: None,
        expires_at_ms,
    };
    match trial {
        Trial::NotOffered => None,
        Trial::Pending { why } => Some(s(
            State::Invalid,
            Some(Reason::TrialPending),
            why.clone(),
            None,
        )),
        Trial::Refused { why } => Some(s(
            State::Invalid,
            Some(Reason::TrialRefused),
            format!("no demo trial: {why}"),
            None,
        )),
        Trial::Active { ends_at_ms, .. } => Some(s(
            State::Trial,
            None,
            format!(
                "demo trial on the simulated cluster until {}",
                iso_ms(*ends_at_ms)
            ),
            Some(*ends_at_ms),
        )),
        Trial::Ended { ended_at_ms, .. } => Some(s(
            State::Expired,
            Some(Reason::TrialEnded),
            format!(
                "the {TRIAL_DAYS}-day demo trial of this data directory ended at {}",
                iso_ms(*ended_at_ms)
            ),
            Some(*ended_at_ms),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const NOW: i64 = 1_800_000_000_000;

    fn verified(lic: &str, nbf: i64, exp: i64) -> Verdict {
        Verdict::Verified(Verified {
            claims: Claims {
                sub: "ACME".into(),
                lic: lic.into(),
                iat: nbf,
                nbf,
                exp,
                notes: None,
            },
            key: KeyName::Vendor,
        })
    }

    fn loaded(candidates: Vec<(Source, Verdict)>) -> Loaded {
        Loaded {
            candidates: candidates
                .into_iter()
                .map(|(source, verdict)| Candidate { source, verdict })
                .collect(),
            trial: TrialFacts::default(),
        }
    }

    const S: i64 = NOW / 1000;

    #[test]
    fn no_source_is_invalid_with_reason_no_license() {
        let status = loaded(vec![]).status(NOW);
        assert_eq!(status.state(), State::Invalid);
        assert_eq!(status.best.reason, Some(Reason::NoLicense));
        assert!(!status.any_source);
        assert!(!status.allows_management());
        assert!(status.message().contains("monitoring mode"));
    }

    #[test]
    fn a_valid_token_is_licensed() {
        let status = loaded(vec![(Source::Env, verified("a", S - 10, S + 10))]).status(NOW);
        assert_eq!(status.state(), State::Licensed);
        assert!(status.allows_management());
        assert_eq!(status.expires_at_ms(), Some((S + 10) * 1000));
    }

    #[test]
    fn a_token_past_expiry_plus_leeway_is_expired() {
        let status = loaded(vec![(Source::Env, verified("a", S - 1000, S - 301))]).status(NOW);
        assert_eq!(status.state(), State::Expired);
        assert_eq!(status.best.reason, Some(Reason::Expired));
        assert!(!status.allows_management());
        let within = loaded(vec![(Source::Env, verified("a", S - 1000, S - 300))]).status(NOW);
        assert_eq!(within.state(), State::Licensed);
    }

    #[test]
    fn a_token_not_yet_valid_is_invalid() {
        let status = loaded(vec![(Source::Env, verified("a", S + 301, S + 1000))]).status(NOW);
        assert_eq!(status.state(), State::Invalid);
        assert_eq!(status.best.reason, Some(Reason::NotYetValid));
    }

    #[test]
    fn a_rejected_token_is_invalid_with_its_reason() {
        for (rejection, reason) in [
            (Rejection::Signature, Reason::Signature),
            (Rejection::Algorithm("HS256".into()), Reason::Algorithm),
            (Rejection::Malformed("x".into()), Reason::Malformed),
            (Rejection::Claims("x".into()), Reason::Claims),
        ] {
            let status = loaded(vec![(Source::File, Verdict::Rejected(rejection))]).status(NOW);
            assert_eq!(status.state(), State::Invalid);
            assert_eq!(status.best.reason, Some(reason));
            assert!(status.message().starts_with("BALLAST_LICENSE_FILE: "));
        }
    }

    #[test]
    fn the_best_valid_license_wins_over_expired_and_invalid_ones() {
        let status = loaded(vec![
            (Source::Env, verified("old", S - 1000, S - 500)),
            (Source::File, Verdict::Rejected(Rejection::Signature)),
            (Source::Fetched, verified("renewed", S - 10, S + 1000)),
        ])
        .status(NOW);
        assert_eq!(status.state(), State::Licensed);
        assert_eq!(status.best.source, Source::Fetched);
        assert_eq!(status.sources.len(), 3);
    }

    #[test]
    fn between_valid_licenses_the_longer_running_one_wins_then_source_order() {
        let status = loaded(vec![
            (Source::Env, verified("short", S - 10, S + 100)),
            (Source::File, verified("long", S - 10, S + 1000)),
        ])
        .status(NOW);
        assert_eq!(status.claims().map(|c| c.lic.as_str()), Some("long"));
        let tie = loaded(vec![
            (Source::Env, verified("env", S - 10, S + 100)),
            (Source::Fetched, verified("fetched", S - 10, S + 100)),
        ])
        .status(NOW);
        assert_eq!(tie.best.source, Source::Env);
    }

    #[test]
    fn expired_is_reported_over_not_yet_valid_and_invalid() {
        let status = loaded(vec![
            (Source::Env, Verdict::Rejected(Rejection::Signature)),
            (Source::File, verified("next", S + 1000, S + 5000)),
            (Source::Fetched, verified("old", S - 5000, S - 1000)),
        ])
        .status(NOW);
        assert_eq!(status.state(), State::Expired);
    }

    #[test]
    fn a_license_beats_the_demo_trial_and_the_trial_beats_nothing() {
        let id = "ballast-sim-demo-0123456789abcdef".to_string();
        let trial = TrialFacts {
            demo_cluster_id: Some(id.clone()),
            bootstrap_loopback: true,
            observed: Some((Some(id), NOW - 1000)),
            stale_after_ms: 60_000,
            started_at_ms: Some(NOW - 1000),
        };
        let mut l = loaded(vec![]);
        l.trial = trial.clone();
        let status = l.status(NOW);
        assert_eq!(status.state(), State::Trial);
        assert!(status.allows_management());
        assert_eq!(status.best.source, Source::Trial);
        let mut l = loaded(vec![(Source::Env, verified("a", S - 10, S + 10))]);
        l.trial = trial;
        assert_eq!(l.status(NOW).state(), State::Licensed);
    }

    #[test]
    fn an_ended_trial_is_expired_and_a_refused_one_invalid() {
        let id = "ballast-sim-demo-0123456789abcdef".to_string();
        let mut l = loaded(vec![]);
        l.trial = TrialFacts {
            demo_cluster_id: Some(id.clone()),
            bootstrap_loopback: true,
            observed: Some((Some(id.clone()), NOW - 1000)),
            stale_after_ms: 60_000,
            started_at_ms: Some(NOW - 15 * 86_400_000),
        };
        let status = l.status(NOW);
        assert_eq!(status.state(), State::Expired);
        assert_eq!(status.best.reason, Some(Reason::TrialEnded));
        l.trial.observed = Some((Some("MkU3OEVBNTcwNTJENDM2Qg".into()), NOW - 1000));
        let status = l.status(NOW);
        assert_eq!(status.state(), State::Invalid);
        assert_eq!(status.best.reason, Some(Reason::TrialRefused));
    }
}
