//! Reads typed values out of a [`RawConfig`], collecting one [`ConfigError`] per bad variable.

use std::time::Duration;

use crate::error::{ConfigError, Secret};
use crate::raw::RawConfig;
use crate::settings::setting_spec;
use crate::values::{parse_bool, parse_duration, parse_whole};

pub(crate) struct Reader<'a> {
    raw: &'a RawConfig,
    pub(crate) errors: Vec<ConfigError>,
}

impl<'a> Reader<'a> {
    pub(crate) fn new(raw: &'a RawConfig) -> Reader<'a> {
        Reader {
            raw,
            errors: Vec::new(),
        }
    }

    pub(crate) fn fail(&mut self, name: &str, problem: impl Into<String>) {
        self.errors.push(ConfigError::new(name, problem));
    }

    /// The value set in the environment or the file, trimmed; an empty value counts as unset.
    pub(crate) fn set(&self, name: &str) -> Option<&'a str> {
        debug_assert!(setting_spec(name).is_some(), "{name} is not in SETTINGS");
        self.raw
            .get(name)
            .map(str::trim)
            .filter(|value| !value.is_empty())
    }

    /// [`Reader::set`] for a variable whose name is made at run time (a provider's
    /// `AUTH_<P>_<suffix>`), so not in [`crate::SETTINGS`].
    pub(crate) fn dynamic(&self, name: &str) -> Option<&'a str> {
        self.raw
            .get(name)
            .map(str::trim)
            .filter(|value| !value.is_empty())
    }

    /// The raw (untrimmed) value of a run-time-named variable, for secrets used exactly as given.
    pub(crate) fn raw_value(&self, name: &str) -> Option<&'a str> {
        self.raw.get(name)
    }

    pub(crate) fn is_set(&self, name: &str) -> bool {
        self.set(name).is_some()
    }

    /// The set value, or else the default from [`crate::SETTINGS`].
    pub(crate) fn value(&self, name: &str) -> Option<&'a str> {
        self.set(name)
            .or_else(|| setting_spec(name).and_then(|spec| spec.default))
    }

    /// Parses the value (or default). `None` when there is neither, or when it is bad; a bad
    /// value is recorded as an error on `name`.
    pub(crate) fn parse<T>(
        &mut self,
        name: &str,
        parse: impl FnOnce(&str) -> Result<T, String>,
    ) -> Option<T> {
        let value = self.value(name)?;
        match parse(value) {
            Ok(parsed) => Some(parsed),
            Err(problem) => {
                self.fail(name, problem);
                None
            }
        }
    }

    /// A secret as set (not trimmed, so it is used exactly as given), `None` when unset or blank.
    pub(crate) fn secret(&self, name: &str) -> Option<Secret> {
        self.set(name)?;
        self.raw.get(name).map(Secret::new)
    }

    pub(crate) fn text(&self, name: &str) -> Option<String> {
        self.value(name).map(str::to_string)
    }

    pub(crate) fn bool(&mut self, name: &str) -> bool {
        self.parse(name, parse_bool).unwrap_or_default()
    }

    pub(crate) fn whole<T: TryFrom<u64> + Default>(&mut self, name: &str) -> T {
        self.parse(name, parse_whole).unwrap_or_default()
    }

    /// A duration; zero allowed.
    pub(crate) fn duration(&mut self, name: &str) -> Duration {
        self.parse(name, parse_duration).unwrap_or_default()
    }

    /// A duration above zero. `None` when bad.
    pub(crate) fn positive_duration(&mut self, name: &str) -> Option<Duration> {
        self.parse(name, |value| match parse_duration(value)? {
            d if d.is_zero() => Err(format!("must be above 0, got {value}")),
            d => Ok(d),
        })
    }
}
