//! What `ballast config check` prints and the example env file.

use crate::error::Secret;
use crate::raw::{RawConfig, Source};
use crate::settings::{provider_variable, PROVIDER_SETTINGS, SETTINGS};

/// One row of `ballast config check`.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct EffectiveSetting {
    pub name: String,
    /// the effective value; a secret shows as `<redacted>` when set, `""` when unset
    pub value: String,
    /// `env`, `file <path>` or `default` (also for a setting that is unset without a default)
    pub source: Source,
    pub secret: bool,
}

/// Every [`SETTINGS`] entry with its effective value and where it came from. An empty value
/// counts as unset, as it does for [`crate::Config::from_raw`].
/// Then, for each provider named in `AUTH_PROVIDERS`, its `AUTH_<P>_*` settings.
pub fn effective(raw: &RawConfig) -> Vec<EffectiveSetting> {
    let mut rows: Vec<EffectiveSetting> = SETTINGS
        .iter()
        .map(|spec| row(raw, spec.name.to_string(), spec.default, spec.secret))
        .collect();
    let providers = raw.get("AUTH_PROVIDERS").unwrap_or_default();
    for provider in providers
        .split(',')
        .map(str::trim)
        .filter(|p| !p.is_empty())
    {
        for (suffix, secret, default, _) in PROVIDER_SETTINGS {
            rows.push(row(
                raw,
                provider_variable(provider, suffix),
                *default,
                *secret,
            ));
        }
    }
    rows
}

fn row(raw: &RawConfig, name: String, default: Option<&str>, secret: bool) -> EffectiveSetting {
    let set = raw
        .get_with_source(&name)
        .filter(|(value, _)| !value.trim().is_empty());
    let (value, source) = match set {
        Some((value, source)) => (value.trim().to_string(), source.clone()),
        None => (default.unwrap_or("").to_string(), Source::Default),
    };
    let value = if secret && !value.is_empty() {
        Secret::REDACTED.to_string()
    } else {
        value
    };
    EffectiveSetting {
        name,
        value,
        source,
        secret,
    }
}

/// A commented example env file generated from [`SETTINGS`]: every setting with its help as a
/// comment and a `#NAME=default` line (`#NAME=` when it has no default).
pub fn example_env_file() -> String {
    let mut out = String::from(
        "# ballast configuration: an env file for `ballast run --config FILE` or systemd's\n\
         # EnvironmentFile=. Every setting is listed with its default; uncomment a line to change\n\
         # it. Variables in the process environment win over this file.\n\
         # `ballast config check --config FILE` validates it and prints the effective values.\n\
         # Durations: 500ms, 30s, 5m, 12h, 7d. Booleans: true or false.\n\
         # Generated from the settings table in crates/config; do not edit by hand.\n",
    );
    let mut group = "";
    for spec in SETTINGS {
        if spec.group != group {
            group = spec.group;
            out.push_str(&format!("\n# ---- {group} ----\n"));
        }
        out.push('\n');
        for line in spec.help.lines() {
            out.push_str(&format!("# {line}\n"));
        }
        if spec.secret {
            out.push_str("# secret: never printed, `ballast config check` shows <redacted>\n");
        }
        out.push_str(&format!("#{}={}\n", spec.name, spec.default.unwrap_or("")));
        if spec.name == "AUTH_PROVIDERS" {
            out.push_str(&provider_example());
        }
    }
    out
}

/// The per-provider settings, for an example provider `corp` (`AUTH_PROVIDERS=corp`).
fn provider_example() -> String {
    let mut out = String::from(
        "#\n# Per provider: for AUTH_PROVIDERS=corp the settings are AUTH_CORP_*, for example\n",
    );
    for (suffix, secret, default, help) in PROVIDER_SETTINGS {
        let secret = if *secret { " (secret)" } else { "" };
        out.push_str(&format!(
            "# {}{secret}: {help}\n",
            provider_variable("corp", suffix)
        ));
        let example = match *suffix {
            "ISSUER" => "https://login.example.com/realms/corp",
            "CLIENT_ID" => "ballast",
            "DISPLAY_NAME" => "Corp SSO",
            _ => default.unwrap_or(""),
        };
        out.push_str(&format!(
            "#{}={example}\n",
            provider_variable("corp", suffix)
        ));
    }
    out
}
