use std::fmt;

/// One configuration problem: the variable (or `--config` for the env file) and what is wrong
/// with it, in lowercase without a trailing period. Displays as `{var}: {problem}`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{var}: {problem}")]
pub struct ConfigError {
    pub var: String,
    pub problem: String,
}

impl ConfigError {
    pub fn new(var: impl Into<String>, problem: impl Into<String>) -> ConfigError {
        ConfigError {
            var: var.into(),
            problem: problem.into(),
        }
    }
}

/// A secret value. `Debug` and `Display` print `<redacted>`; [`Secret::expose`] gives the value
/// to the code that actually needs it.
#[derive(Clone, PartialEq, Eq, Default)]
pub struct Secret(String);

impl Secret {
    pub const REDACTED: &'static str = "<redacted>";

    pub fn new(value: impl Into<String>) -> Secret {
        Secret(value.into())
    }

    pub fn expose(&self) -> &str {
        &self.0
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(Secret::REDACTED)
    }
}

impl fmt::Display for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(Secret::REDACTED)
    }
}
