//! Raw variables: the process environment merged with an optional env file.

use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};

use crate::error::ConfigError;
use crate::settings::{setting_spec, INTERNAL_VARIABLES};

/// Where a value came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Source {
    /// the process environment
    Env,
    /// the env file given with `--config`
    File(PathBuf),
    /// the default of [`crate::SETTINGS`] (or unset, when there is none)
    Default,
}

impl fmt::Display for Source {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Source::Env => f.write_str("env"),
            Source::File(path) => write!(f, "file {}", path.display()),
            Source::Default => f.write_str("default"),
        }
    }
}

impl serde::Serialize for Source {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

/// Raw variables after merging the process environment with an optional env file; the real
/// environment wins over the file.
#[derive(Clone, Default)]
pub struct RawConfig {
    vars: BTreeMap<String, (String, Source)>,
    /// variables the file sets that the environment replaced with a different value
    overridden: Vec<(String, PathBuf)>,
}

impl RawConfig {
    /// Merges `env` (the process environment, or a stand-in in tests) over the env file `file`.
    /// An unreadable or malformed file is an error on `--config`.
    pub fn from_pairs(
        env: impl IntoIterator<Item = (String, String)>,
        file: Option<&Path>,
    ) -> Result<RawConfig, ConfigError> {
        let mut raw = RawConfig::default();
        if let Some(path) = file {
            let text = std::fs::read_to_string(path).map_err(|err| {
                ConfigError::new("--config", format!("cannot read {}: {err}", path.display()))
            })?;
            let pairs = parse_env_file(&text).map_err(|(line, problem)| {
                ConfigError::new(
                    "--config",
                    format!("{} line {line}: {problem}", path.display()),
                )
            })?;
            for (name, value) in pairs {
                raw.vars
                    .insert(name, (value, Source::File(path.to_path_buf())));
            }
        }
        for (name, value) in env {
            if let Some((file_value, Source::File(path))) = raw.vars.get(&name) {
                if *file_value != value {
                    raw.overridden.push((name.clone(), path.clone()));
                }
            }
            raw.vars.insert(name, (value, Source::Env));
        }
        Ok(raw)
    }

    /// [`RawConfig::from_pairs`] over the real process environment. Variables that are not
    /// valid UTF-8 are skipped, unless they are settings or `BALLAST_` variables.
    pub fn from_process_env(file: Option<&Path>) -> Result<RawConfig, ConfigError> {
        let mut env = Vec::new();
        for (name, value) in std::env::vars_os() {
            let Ok(name) = name.into_string() else {
                continue;
            };
            match value.into_string() {
                Ok(value) => env.push((name, value)),
                Err(_) if is_ours(&name) => {
                    return Err(ConfigError::new(name, "is not valid UTF-8"));
                }
                Err(_) => {}
            }
        }
        RawConfig::from_pairs(env, file)
    }

    /// The value of `name` as set in the environment or the file (not its default).
    pub fn get(&self, name: &str) -> Option<&str> {
        self.vars.get(name).map(|(value, _)| value.as_str())
    }

    /// The value of `name` and where it came from, if it was set.
    pub fn get_with_source(&self, name: &str) -> Option<(&str, &Source)> {
        self.vars
            .get(name)
            .map(|(value, source)| (value.as_str(), source))
    }

    /// The variables to pass to child processes so they see the same configuration: every known
    /// setting that came from the environment or the file, and every other variable of the file
    /// (a child inherits the environment but does not read the file).
    pub fn exported(&self) -> Vec<(String, String)> {
        self.vars
            .iter()
            .filter(|(name, (_, source))| {
                setting_spec(name).is_some() || matches!(source, Source::File(_))
            })
            .map(|(name, (value, _))| (name.clone(), value.clone()))
            .collect()
    }

    /// Warnings to log at start: unknown `BALLAST_` variables (likely typos) and file values the
    /// environment overrides.
    pub fn warnings(&self) -> Vec<String> {
        let mut warnings: Vec<String> = self
            .vars
            .keys()
            .filter(|name| {
                name.starts_with("BALLAST_")
                    && setting_spec(name).is_none()
                    && !INTERNAL_VARIABLES.contains(&name.as_str())
            })
            .map(|name| format!("{name}: not a known setting (ignored)"))
            .collect();
        for (name, path) in &self.overridden {
            warnings.push(format!(
                "{name}: set in the environment and in {}; the environment wins",
                path.display()
            ));
        }
        warnings
    }
}

impl fmt::Debug for RawConfig {
    /// Names and sources only: values may be secrets, and the map holds the whole environment.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_map()
            .entries(
                self.vars
                    .iter()
                    .filter(|(name, _)| is_ours(name))
                    .map(|(name, (_, source))| (name, source)),
            )
            .finish()
    }
}

fn is_ours(name: &str) -> bool {
    name.starts_with("BALLAST_") || setting_spec(name).is_some()
}

/// Parses an env file: `KEY=VALUE` lines, blank lines and `#` comments, an optional `export `
/// prefix, optional single or double quotes around the value (taken literally, no expansion; a
/// `# comment` may follow the closing quote). Whitespace around the key and an unquoted value is
/// trimmed; a `#` inside an unquoted value is part of the value. A later line wins over an earlier
/// one. The error is the 1-based line number and what is wrong with that line.
pub fn parse_env_file(text: &str) -> Result<Vec<(String, String)>, (usize, String)> {
    let mut pairs = Vec::new();
    for (index, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let line = line.strip_prefix("export ").unwrap_or(line);
        let (key, value) = parse_line(line).map_err(|problem| (index + 1, problem))?;
        pairs.push((key, value));
    }
    Ok(pairs)
}

fn parse_line(line: &str) -> Result<(String, String), String> {
    let Some((key, value)) = line.split_once('=') else {
        return Err(format!("expected KEY=VALUE, got {line:?}"));
    };
    let key = key.trim();
    if !is_variable_name(key) {
        return Err(format!(
            "{key:?} is not a variable name (letters, digits and _, not starting with a digit)"
        ));
    }
    let value = value.trim();
    let value = match value.chars().next() {
        Some(quote @ ('"' | '\'')) => {
            let rest = &value[1..];
            let Some(end) = rest.find(quote) else {
                return Err(format!("the value of {key} has no closing {quote}"));
            };
            let after = rest[end + 1..].trim();
            if !after.is_empty() && !after.starts_with('#') {
                return Err(format!(
                    "unexpected text after the closing {quote} of {key}"
                ));
            }
            &rest[..end]
        }
        _ => value,
    };
    Ok((key.to_string(), value.to_string()))
}

fn is_variable_name(name: &str) -> bool {
    let mut chars = name.chars();
    match chars.next() {
        Some(first) if first.is_ascii_alphabetic() || first == '_' => {}
        _ => return false,
    }
    chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quoted_values_are_taken_literally() {
        let pairs = parse_env_file("A=\"x # $HOME\"\nB='a \"b\"'\nC=\"\"\n").expect("parses");
        assert_eq!(
            pairs,
            vec![
                ("A".to_string(), "x # $HOME".to_string()),
                ("B".to_string(), "a \"b\"".to_string()),
                ("C".to_string(), String::new()),
            ]
        );
    }

    #[test]
    fn a_lone_quote_is_unterminated() {
        assert_eq!(parse_env_file("A=\"").map_err(|(line, _)| line), Err(1));
        assert!(parse_env_file("A=\"x\"y\"").is_err());
    }

    #[test]
    fn variable_names_are_checked() {
        assert!(is_variable_name("BALLAST_X_1"));
        assert!(is_variable_name("_X"));
        assert!(!is_variable_name("1X"));
        assert!(!is_variable_name("A-B"));
        assert!(!is_variable_name(""));
    }
}
