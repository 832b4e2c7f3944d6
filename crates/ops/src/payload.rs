//! How a record is shown: keys, values and header values as UTF-8 text when they are valid UTF-8,
//! else base64; timestamps in ms and RFC 3339; payloads cut at a bound in lists and streams.

use ballast_kafka::Record;
use base64::Engine;
use serde::Serialize;

/// Payload bytes shown per key, value or header value in lists and the tail; the single-message
/// endpoint shows everything.
pub const PREVIEW_BYTES: usize = 64 * 1024;

/// One record as the API shows it.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Message {
    pub partition: i32,
    pub offset: i64,
    /// ms since the epoch; None when the producer set none (-1).
    pub timestamp: Option<i64>,
    pub timestamp_iso: Option<String>,
    /// `CreateTime` or `LogAppendTime`.
    pub timestamp_type: &'static str,
    pub key: Option<String>,
    /// `text` or `base64`; None for a null key.
    pub key_encoding: Option<&'static str>,
    pub key_size: usize,
    pub value: Option<String>,
    pub value_encoding: Option<&'static str>,
    pub value_size: usize,
    pub headers: Vec<Header>,
    /// True when a key, value or header value was cut at the preview bound.
    pub truncated: bool,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Header {
    pub key: String,
    pub value: Option<String>,
    pub value_encoding: Option<&'static str>,
}

/// Shows `bytes` as text or base64, cut to `bound` bytes; returns (data, encoding, cut).
fn show(bytes: &[u8], bound: usize) -> (String, &'static str, bool) {
    let cut = bytes.len() > bound;
    let shown = if cut { &bytes[..bound] } else { bytes };
    match std::str::from_utf8(shown) {
        Ok(text) => (text.to_string(), "text", cut),
        // A cut may split the last character: keep the valid prefix as text when that is all.
        Err(e) if cut && e.error_len().is_none() => (
            String::from_utf8_lossy(&shown[..e.valid_up_to()]).into_owned(),
            "text",
            true,
        ),
        Err(_) => (
            base64::engine::general_purpose::STANDARD.encode(shown),
            "base64",
            cut,
        ),
    }
}

fn show_opt(bytes: Option<&[u8]>, bound: usize) -> (Option<String>, Option<&'static str>, bool) {
    match bytes {
        Some(b) => {
            let (data, encoding, cut) = show(b, bound);
            (Some(data), Some(encoding), cut)
        }
        None => (None, None, false),
    }
}

impl Message {
    /// `bound`: bytes shown per payload (`usize::MAX` for all).
    pub fn from_record(partition: i32, record: &Record, bound: usize) -> Message {
        let (key, key_encoding, key_cut) = show_opt(record.key.as_deref(), bound);
        let (value, value_encoding, value_cut) = show_opt(record.value.as_deref(), bound);
        let mut truncated = key_cut || value_cut;
        let headers = record
            .headers
            .iter()
            .map(|h| {
                let (value, value_encoding, cut) = show_opt(h.value.as_deref(), bound);
                truncated |= cut;
                Header {
                    key: h.key.clone(),
                    value,
                    value_encoding,
                }
            })
            .collect();
        let timestamp = (record.timestamp >= 0).then_some(record.timestamp);
        Message {
            partition,
            offset: record.offset,
            timestamp,
            timestamp_iso: timestamp.map(ballast_runtime::format_rfc3339_ms),
            timestamp_type: if record.log_append_time {
                "LogAppendTime"
            } else {
                "CreateTime"
            },
            key,
            key_encoding,
            key_size: record.key.as_ref().map_or(0, |k| k.len()),
            value,
            value_encoding,
            value_size: record.value.as_ref().map_or(0, |v| v.len()),
            headers,
            truncated,
        }
    }
}

/// Substring filters on the raw key and value bytes (case-sensitive; a UTF-8 text filter matches
/// the text it is part of). A null key or value never matches a filter.
#[derive(Debug, Clone, Default)]
pub struct Filters {
    pub key: Option<String>,
    pub value: Option<String>,
}

impl Filters {
    pub fn is_empty(&self) -> bool {
        self.key.is_none() && self.value.is_none()
    }

    pub fn matches(&self, record: &Record) -> bool {
        contains(record.key.as_deref(), self.key.as_deref())
            && contains(record.value.as_deref(), self.value.as_deref())
    }
}

fn contains(hay: Option<&[u8]>, needle: Option<&str>) -> bool {
    let Some(needle) = needle else {
        return true;
    };
    let Some(hay) = hay else {
        return false;
    };
    let needle = needle.as_bytes();
    needle.is_empty() || hay.windows(needle.len()).any(|w| w == needle)
}

#[cfg(test)]
mod tests {
    use super::*;
    use ballast_kafka::RecordHeader;

    fn record(key: Option<&[u8]>, value: Option<&[u8]>) -> Record {
        Record {
            offset: 7,
            timestamp: 1_700_000_000_000,
            log_append_time: false,
            key: key.map(|k| k.to_vec().into()),
            value: value.map(|v| v.to_vec().into()),
            headers: vec![RecordHeader {
                key: "h".into(),
                value: Some(vec![0xff, 0x00].into()),
            }],
        }
    }

    #[test]
    fn utf8_payloads_are_text_and_others_base64() {
        let m = Message::from_record(2, &record(Some(b"k1"), Some(&[0xff, 0xfe])), PREVIEW_BYTES);
        assert_eq!(m.key.as_deref(), Some("k1"));
        assert_eq!(m.key_encoding, Some("text"));
        assert_eq!(m.value.as_deref(), Some("//4="));
        assert_eq!(m.value_encoding, Some("base64"));
        assert_eq!(m.headers[0].value.as_deref(), Some("/wA="));
        assert_eq!(m.timestamp_iso.as_deref(), Some("2023-11-14T22:13:20.000Z"));
        assert!(!m.truncated);
    }

    #[test]
    fn long_payloads_are_cut_at_the_bound_and_flagged() {
        let value = "é".repeat(10); // 20 bytes
        let m = Message::from_record(0, &record(None, Some(value.as_bytes())), 5);
        assert_eq!(
            m.value.as_deref(),
            Some("éé"),
            "cut on a character boundary"
        );
        assert_eq!(m.value_encoding, Some("text"));
        assert_eq!(m.value_size, 20);
        assert!(m.truncated);
        assert_eq!(m.key, None);
        assert_eq!(m.key_encoding, None);
    }

    #[test]
    fn filters_are_byte_substrings_and_a_null_never_matches() {
        let r = record(Some(b"order-17"), Some(b"{\"total\": 3}"));
        let f = |k: Option<&str>, v: Option<&str>| Filters {
            key: k.map(str::to_string),
            value: v.map(str::to_string),
        };
        assert!(f(Some("der-1"), None).matches(&r));
        assert!(f(None, Some("total")).matches(&r));
        assert!(!f(Some("ORDER"), None).matches(&r));
        assert!(!f(Some("x"), Some("total")).matches(&r));
        assert!(!f(Some("a"), None).matches(&record(None, Some(b"a"))));
    }
}
