//! Agents' answers kept once: shaped as a value once per reading, read or check (a door that
//! takes values copies it per call), and written once as JSON text, as its own text and as the
//! contents of a JSON string, for a door that writes its answer's bytes itself (the MCP door's
//! kept answers: docs/api/mcp.md).
//!
//! An answer may carry its age (`ageMs`, the milliseconds since its reading was sampled) in one
//! object: the value is kept without it and the age is set per call; its written form is cut
//! where the age goes, so a call writes the pieces around the age it gives.

use std::sync::{Arc, OnceLock};

use bytes::Bytes;
use serde_json::{json, Value};

/// The field an aged answer carries its age in.
const AGE_FIELD: &str = "ageMs";

/// A number no answer carries, written where the age goes and cut out of the written text.
const AGE_HOLE: i64 = 4_398_046_511_104_123;

/// An agents' answer kept as a value and, once asked for, written.
#[derive(Debug)]
pub struct Kept {
    value: Value,
    /// The JSON pointer of the object that carries the age, for an aged answer.
    aged_in: Option<&'static str>,
    written: OnceLock<Option<Written>>,
}

/// A kept answer written as JSON text: `json` is the text in pieces and `escaped` the same
/// pieces as the contents of a JSON string (its quotes left out); an aged answer's age goes
/// between its two pieces, a plain answer is one piece.
#[derive(Debug, PartialEq, Eq)]
pub struct Written {
    pub json: Vec<Bytes>,
    pub escaped: Vec<Bytes>,
}

impl Kept {
    /// `value` kept as it is.
    pub fn new(value: Value) -> Kept {
        Kept {
            value,
            aged_in: None,
            written: OnceLock::new(),
        }
    }

    /// `value` kept without an age; each call sets `ageMs` in the object at `pointer`.
    pub fn aged(value: Value, pointer: &'static str) -> Kept {
        Kept {
            value,
            aged_in: Some(pointer),
            written: OnceLock::new(),
        }
    }

    /// The answer as a value: a copy, with `age_ms` set in an aged answer.
    pub fn value(&self, age_ms: i64) -> Value {
        let mut value = self.value.clone();
        self.set_age(&mut value, age_ms);
        value
    }

    fn set_age(&self, value: &mut Value, age_ms: i64) {
        if let Some(object) = self
            .aged_in
            .and_then(|p| value.pointer_mut(p))
            .and_then(Value::as_object_mut)
        {
            object.insert(AGE_FIELD.into(), json!(age_ms));
        }
    }

    /// The answer written, made the first time it is asked for. None when it cannot be cut
    /// where its age goes (the door then takes the value).
    pub fn written(&self) -> Option<&Written> {
        self.written.get_or_init(|| self.write()).as_ref()
    }

    fn write(&self) -> Option<Written> {
        let text = match self.aged_in {
            None => serde_json::to_string(&self.value).ok()?,
            Some(_) => {
                let mut value = self.value.clone();
                self.set_age(&mut value, AGE_HOLE);
                serde_json::to_string(&value).ok()?
            }
        };
        let json: Vec<String> = match self.aged_in {
            None => vec![text],
            Some(_) => text
                .split(&AGE_HOLE.to_string())
                .map(String::from)
                .collect(),
        };
        let holes = usize::from(self.aged_in.is_some());
        if json.len() != holes + 1 {
            return None;
        }
        let escaped = json
            .iter()
            .map(|piece| {
                let quoted = serde_json::to_string(piece).ok()?;
                Some(Bytes::copy_from_slice(
                    &quoted.as_bytes()[1..quoted.len() - 1],
                ))
            })
            .collect::<Option<Vec<Bytes>>>()?;
        let json = json.into_iter().map(Bytes::from).collect();
        Some(Written { json, escaped })
    }
}

/// A kept answer as one call gives it: the answer and, for an aged one, the call's age.
#[derive(Debug, Clone)]
pub struct KeptAnswer {
    pub kept: Arc<Kept>,
    pub age_ms: i64,
}

impl KeptAnswer {
    /// `kept` for a call `age_ms` after its reading was sampled.
    pub fn new(kept: Arc<Kept>, age_ms: i64) -> KeptAnswer {
        KeptAnswer { kept, age_ms }
    }

    /// `kept`, an answer without an age.
    pub fn plain(kept: Arc<Kept>) -> KeptAnswer {
        KeptAnswer { kept, age_ms: 0 }
    }

    /// The answer as a value for this call.
    pub fn value(&self) -> Value {
        self.kept.value(self.age_ms)
    }

    /// `pieces` (a written answer's `json` or `escaped`) with this call's age between them:
    /// the shared pieces themselves, not copies.
    pub fn chunks(&self, pieces: &[Bytes]) -> Vec<Bytes> {
        let age = Bytes::from(self.age_ms.to_string());
        let mut out = Vec::with_capacity(pieces.len() * 2);
        for (i, piece) in pieces.iter().enumerate() {
            if i > 0 {
                out.push(age.clone());
            }
            out.push(piece.clone());
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn answer() -> Value {
        json!({"cluster": {"id": "c1", "brokers": 3}, "note": "a \"quoted\"\nline",
            "topics": [{"name": "t\u{e9}", "partitions": 12}]})
    }

    fn written_value(kept: &Kept, age: i64) -> (Value, String) {
        let call = KeptAnswer {
            kept: Arc::new(Kept {
                value: kept.value.clone(),
                aged_in: kept.aged_in,
                written: OnceLock::new(),
            }),
            age_ms: age,
        };
        let written = call.kept.written().expect("written");
        let json = call.chunks(&written.json).concat();
        let mut escaped = b"\"".to_vec();
        escaped.extend(call.chunks(&written.escaped).concat());
        escaped.push(b'"');
        let text: String = serde_json::from_slice(&escaped).expect("a JSON string");
        (serde_json::from_slice(&json).expect("JSON"), text)
    }

    #[test]
    fn a_written_answer_is_its_value_with_the_calls_age() {
        let kept = Kept::aged(answer(), "/cluster");
        for age in [0, 7, 123_456] {
            let (json, text) = written_value(&kept, age);
            assert_eq!(json, kept.value(age));
            assert_eq!(json["cluster"]["ageMs"], age);
            assert_eq!(serde_json::from_str::<Value>(&text).expect("text"), json);
        }
    }

    #[test]
    fn a_plain_answer_is_written_whole_and_carries_no_age() {
        let kept = Kept::new(answer());
        let (json, text) = written_value(&kept, 99);
        assert_eq!(json, answer());
        assert_eq!(kept.value(99), answer());
        assert_eq!(text, serde_json::to_string(&answer()).expect("text"));
    }

    #[test]
    fn an_answer_that_holds_the_age_marker_is_not_written() {
        let mut value = answer();
        value["note"] = json!(format!("{AGE_HOLE}"));
        assert!(Kept::aged(value, "/cluster").written().is_none());
    }
}
