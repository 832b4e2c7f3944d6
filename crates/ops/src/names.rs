//! Kafka's own rules for the names a change carries, checked before anything is sent. Each
//! returns the complete message for the caller when a name breaks the rule.

/// The longest topic name Kafka accepts (`Topic.MAX_NAME_LENGTH`).
pub const MAX_TOPIC_LEN: usize = 249;
/// The longest group id, principal or other name ballast sends, in characters (Kafka's protocol
/// strings are at most 32767 bytes, and 1024 characters are at most 4096; no real name comes near
/// this). Counted in characters, as the OpenAPI document's `maxLength` counts.
pub const MAX_NAME_LEN: usize = 1024;

/// [`topic`]'s rule as a regular expression (ECMA-262 and Rust's `regex` alike), for the
/// OpenAPI document: 1 to 249 of `[a-zA-Z0-9._-]`, neither `.` nor `..`.
pub const TOPIC_PATTERN: &str = r"^([a-zA-Z0-9_-][a-zA-Z0-9._-]{0,248}|\.[a-zA-Z0-9_-][a-zA-Z0-9._-]{0,247}|\.\.[a-zA-Z0-9._-]{1,247})$";

/// [`plain`]'s rule as a regular expression: not blank, no control character; with
/// [`PLAIN_MAX_CHARS`] as `maxLength`.
pub const PLAIN_PATTERN: &str =
    r"^[^\x00-\x1f\x7f-\x9f]*[^\s\x00-\x1f\x7f-\x9f][^\x00-\x1f\x7f-\x9f]*$";
/// The most characters of a plain name.
pub const PLAIN_MAX_CHARS: usize = MAX_NAME_LEN;

/// A topic name as Kafka's `Topic.validate` has it: 1 to 249 characters of ASCII letters, digits,
/// `.`, `_` and `-`, and neither `.` nor `..`.
pub fn topic(name: &str) -> Result<(), String> {
    if name.is_empty() {
        return Err("topic must not be empty".into());
    }
    if name == "." || name == ".." {
        return Err(format!(
            "topic {name:?} is not allowed (Kafka refuses . and ..)"
        ));
    }
    if name.len() > MAX_TOPIC_LEN {
        return Err(format!(
            "topic name is {} characters long; Kafka allows at most {MAX_TOPIC_LEN}",
            name.chars().count()
        ));
    }
    if let Some(c) = name
        .chars()
        .find(|c| !(c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-')))
    {
        return Err(format!(
            "topic {:?} contains {c:?}: Kafka allows only ASCII letters, digits, '.', '_' and '-'",
            shown(name)
        ));
    }
    Ok(())
}

/// Any other name (a group id, a resource name, a host): not blank, no control characters, at
/// most [`MAX_NAME_LEN`] characters.
pub fn plain(what: &str, name: &str) -> Result<(), String> {
    if name.trim().is_empty() {
        return Err(format!("{what} must not be empty"));
    }
    let chars = name.chars().count();
    if chars > MAX_NAME_LEN {
        return Err(format!(
            "{what} is {chars} characters long; at most {MAX_NAME_LEN}"
        ));
    }
    if name.chars().any(char::is_control) {
        return Err(format!(
            "{what} {:?} contains control characters",
            shown(name)
        ));
    }
    Ok(())
}

/// The name as shown in a message: at most 64 characters.
fn shown(name: &str) -> String {
    if name.chars().count() <= 64 {
        name.to_string()
    } else {
        format!("{}…", name.chars().take(64).collect::<String>())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn topic_names_follow_kafkas_rule() {
        for ok in ["payments", "a.b_c-D9", &"x".repeat(249)] {
            assert!(topic(ok).is_ok(), "{ok}");
        }
        for bad in [
            "",
            ".",
            "..",
            "a/b",
            "../etc",
            "a\0b",
            "é",
            "a b",
            &"x".repeat(250),
        ] {
            assert!(topic(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn a_long_name_is_cut_in_the_message() {
        let e = topic(&format!("{}/", "x".repeat(10_000))).unwrap_err();
        assert!(e.len() < 200, "{e}");
    }

    #[test]
    fn plain_names_are_not_blank_not_control_and_bounded() {
        assert!(plain("group", "billing-consumers").is_ok());
        assert!(plain("group", " ").is_err());
        assert!(plain("group", "a\u{7}").is_err());
        assert!(plain("group", &"g".repeat(1025)).is_err());
        // Characters, as the OpenAPI document's maxLength counts them.
        assert!(plain("group", &"é".repeat(1024)).is_ok());
        assert!(plain("group", &"é".repeat(1025)).is_err());
    }
}
