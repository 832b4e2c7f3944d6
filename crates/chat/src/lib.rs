//! The chat assistant's model providers (issue: the chat assistant). One [`Provider`] speaks
//! either wire format, streamed:
//!
//! - **OpenAI-compatible chat completions** (`POST {base}/chat/completions`, `stream: true`): hosted
//!   OpenAI, Azure-style deployments, vLLM, llama.cpp server, Ollama. `base` includes the version
//!   (`https://api.openai.com/v1`, `http://127.0.0.1:11434/v1`).
//! - **The Anthropic Messages API** (`POST {base}/v1/messages`, `stream: true`;
//!   `https://api.anthropic.com`; a base ending in `/v1` is used as it is).
//!
//! A call sends the conversation (system prompt, user and assistant turns, tool results) and the
//! tools an agent may call, reports what arrives as [`Event`]s (text deltas, tool calls started
//! and finished) and ends with the whole [`Turn`] — or a [`Failure`] that names what went wrong
//! ([`ChatError`]) and keeps the text received before it. The API key is sent only as the
//! provider's header, never logged, never part of an error.
//!
//! The stream decoders ([`OpenAiStream`], [`AnthropicStream`]) are pure: they take the decoded SSE
//! events and are tested on the providers' documented chunk shapes; `tests/providers.rs` runs the
//! whole client against a scripted server on loopback.

mod anthropic;
mod openai;

use std::time::Duration;

use futures_util::StreamExt;
use serde::{Deserialize, Serialize};
use serde_json::Value;

pub use anthropic::AnthropicStream;
pub use openai::OpenAiStream;

/// Which wire format a provider speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProviderKind {
    /// OpenAI-compatible chat completions.
    OpenAi,
    /// The Anthropic Messages API.
    Anthropic,
}

impl ProviderKind {
    /// `openai` or `anthropic` (the `BALLAST_CHAT_PROVIDER` values).
    pub fn parse(s: &str) -> Option<ProviderKind> {
        match s.trim().to_ascii_lowercase().as_str() {
            "openai" => Some(ProviderKind::OpenAi),
            "anthropic" => Some(ProviderKind::Anthropic),
            _ => None,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            ProviderKind::OpenAi => "openai",
            ProviderKind::Anthropic => "anthropic",
        }
    }

    /// The base URL when none is configured.
    pub fn default_base_url(self) -> &'static str {
        match self {
            ProviderKind::OpenAi => "https://api.openai.com/v1",
            ProviderKind::Anthropic => "https://api.anthropic.com",
        }
    }
}

/// A tool the model may call: the catalog's name, description and input schema.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolSpec {
    pub name: String,
    pub description: String,
    /// JSON Schema of the arguments (an object schema).
    pub parameters: Value,
}

/// A tool call the model made.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolCall {
    /// The provider's call id (`call_...`, `toolu_...`), echoed with the result.
    pub id: String,
    pub name: String,
    /// The parsed arguments (an object; `{}` when the model sent none).
    pub arguments: Value,
}

/// One message of the conversation sent to the model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "role", rename_all = "camelCase")]
pub enum Message {
    User {
        text: String,
    },
    Assistant {
        text: String,
        #[serde(default)]
        tool_calls: Vec<ToolCall>,
    },
    /// The result of a tool call, as text (JSON for structured results).
    ToolResult {
        call_id: String,
        content: String,
        #[serde(default)]
        is_error: bool,
    },
}

/// Why the model stopped.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StopReason {
    /// It finished its answer.
    EndTurn,
    /// It wants tool results.
    ToolUse,
    /// It ran into the token limit.
    MaxTokens,
    /// Anything else the provider said.
    Other(String),
}

/// Tokens counted by the provider, when it says.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Usage {
    pub input_tokens: Option<u64>,
    pub output_tokens: Option<u64>,
}

/// What arrives while a turn streams.
#[derive(Debug, Clone, PartialEq)]
pub enum Event {
    /// More of the answer's text.
    Text(String),
    /// The model began a tool call (its arguments are still streaming).
    ToolCallStarted { id: String, name: String },
    /// A tool call with its complete, parsed arguments.
    ToolCallFinished(ToolCall),
}

/// One whole answer of the model.
#[derive(Debug, Clone, PartialEq)]
pub struct Turn {
    pub text: String,
    pub tool_calls: Vec<ToolCall>,
    pub stop: StopReason,
    pub usage: Usage,
}

/// What went wrong talking to the provider. Never carries the API key.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ChatError {
    #[error("the provider did not answer within {0:?}")]
    Timeout(Duration),
    #[error("the provider refused the API key (HTTP {status}): check BALLAST_CHAT_API_KEY")]
    Unauthorized { status: u16 },
    #[error("the provider is rate limiting (HTTP 429){}", retry_after.map(|d| format!("; retry after {} s", d.as_secs())).unwrap_or_default())]
    RateLimited { retry_after: Option<Duration> },
    #[error("the provider failed (HTTP {status}): {message}")]
    Server { status: u16, message: String },
    #[error("the provider refused the request (HTTP {status}): {message}")]
    Refused { status: u16, message: String },
    #[error("the provider's stream ended before the answer was complete")]
    StreamCut,
    #[error("the provider sent a chunk that could not be read: {0}")]
    Malformed(String),
    #[error("the model called {name} with arguments that are not a JSON object: {error}")]
    BadToolArguments { name: String, error: String },
    #[error("the provider could not be reached: {0}")]
    Network(String),
}

impl ChatError {
    /// A stable code for the chat SSE `error` event and the API.
    pub fn code(&self) -> &'static str {
        match self {
            ChatError::Timeout(_) => "provider_timeout",
            ChatError::Unauthorized { .. } => "provider_unauthorized",
            ChatError::RateLimited { .. } => "provider_rate_limited",
            ChatError::Server { .. } => "provider_error",
            ChatError::Refused { .. } => "provider_refused",
            ChatError::StreamCut => "stream_cut",
            ChatError::Malformed(_) => "malformed_chunk",
            ChatError::BadToolArguments { .. } => "invalid_tool_arguments",
            ChatError::Network(_) => "provider_unreachable",
        }
    }
}

/// A failed turn: why, and the text received before it (kept in the conversation).
#[derive(Debug, Clone, PartialEq)]
pub struct Failure {
    pub error: ChatError,
    pub partial_text: String,
}

/// A stream decoder: SSE events in, [`Event`]s out, the [`Turn`] at the end.
pub trait Decoder {
    /// One SSE event (`event` name, `data`); `Ok(events)` to report.
    fn feed(&mut self, event: Option<&str>, data: &str) -> Result<Vec<Event>, ChatError>;
    /// Whether the provider said the answer is complete.
    fn done(&self) -> bool;
    /// The text so far.
    fn text(&self) -> &str;
    /// The whole turn, once the stream ended.
    fn finish(self) -> Result<Turn, ChatError>;
}

/// Parses a tool call's streamed arguments: empty is `{}`, anything else must be a JSON object.
pub(crate) fn parse_arguments(name: &str, raw: &str) -> Result<Value, ChatError> {
    if raw.trim().is_empty() {
        return Ok(Value::Object(Default::default()));
    }
    match serde_json::from_str::<Value>(raw) {
        Ok(v @ Value::Object(_)) => Ok(v),
        Ok(other) => Err(ChatError::BadToolArguments {
            name: name.to_string(),
            error: format!("got {other}"),
        }),
        Err(e) => Err(ChatError::BadToolArguments {
            name: name.to_string(),
            error: e.to_string(),
        }),
    }
}

/// A configured provider.
#[derive(Clone)]
pub struct Provider {
    pub kind: ProviderKind,
    pub base_url: String,
    api_key: Option<String>,
    pub model: String,
    pub max_tokens: u32,
    /// For the answer to begin, and between two chunks of it.
    pub timeout: Duration,
    http: reqwest::Client,
}

impl std::fmt::Debug for Provider {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Provider")
            .field("kind", &self.kind)
            .field("base_url", &self.base_url)
            .field("api_key", &self.api_key.as_ref().map(|_| "<redacted>"))
            .field("model", &self.model)
            .field("max_tokens", &self.max_tokens)
            .field("timeout", &self.timeout)
            .finish()
    }
}

impl Provider {
    pub fn new(
        kind: ProviderKind,
        base_url: Option<&str>,
        api_key: Option<String>,
        model: &str,
        max_tokens: u32,
        timeout: Duration,
    ) -> Result<Provider, ChatError> {
        let http = reqwest::Client::builder()
            .connect_timeout(timeout)
            .build()
            .map_err(|e| ChatError::Network(e.to_string()))?;
        Ok(Provider {
            kind,
            base_url: base_url
                .filter(|b| !b.trim().is_empty())
                .unwrap_or(kind.default_base_url())
                .trim_end_matches('/')
                .to_string(),
            api_key: api_key.filter(|k| !k.is_empty()),
            model: model.to_string(),
            max_tokens,
            timeout,
            http,
        })
    }

    /// `e` with the API key blanked out of the provider's words (a provider may echo it).
    fn redacted(&self, e: ChatError) -> ChatError {
        let Some(key) = &self.api_key else {
            return e;
        };
        match e {
            ChatError::Server { status, message } => ChatError::Server {
                status,
                message: message.replace(key.as_str(), "<redacted>"),
            },
            ChatError::Refused { status, message } => ChatError::Refused {
                status,
                message: message.replace(key.as_str(), "<redacted>"),
            },
            other => other,
        }
    }

    /// Where requests go.
    pub fn endpoint(&self) -> String {
        match self.kind {
            ProviderKind::OpenAi => format!("{}/chat/completions", self.base_url),
            ProviderKind::Anthropic if self.base_url.ends_with("/v1") => {
                format!("{}/messages", self.base_url)
            }
            ProviderKind::Anthropic => format!("{}/v1/messages", self.base_url),
        }
    }

    /// The request body for this provider.
    pub fn body(&self, system: &str, messages: &[Message], tools: &[ToolSpec]) -> Value {
        match self.kind {
            ProviderKind::OpenAi => {
                openai::body(&self.model, self.max_tokens, system, messages, tools)
            }
            ProviderKind::Anthropic => {
                anthropic::body(&self.model, self.max_tokens, system, messages, tools)
            }
        }
    }

    /// Sends the conversation and streams the answer, calling `on` for every [`Event`].
    pub async fn stream(
        &self,
        system: &str,
        messages: &[Message],
        tools: &[ToolSpec],
        on: impl FnMut(Event),
    ) -> Result<Turn, Failure> {
        match self.kind {
            ProviderKind::OpenAi => {
                self.run(system, messages, tools, OpenAiStream::default(), on)
                    .await
            }
            ProviderKind::Anthropic => {
                self.run(system, messages, tools, AnthropicStream::default(), on)
                    .await
            }
        }
    }

    async fn run<D: Decoder>(
        &self,
        system: &str,
        messages: &[Message],
        tools: &[ToolSpec],
        mut decoder: D,
        mut on: impl FnMut(Event),
    ) -> Result<Turn, Failure> {
        let fail = |error: ChatError, partial: &str| Failure {
            error,
            partial_text: partial.to_string(),
        };
        let mut request = self
            .http
            .post(self.endpoint())
            .header("accept", "text/event-stream")
            .json(&self.body(system, messages, tools));
        request = match (self.kind, &self.api_key) {
            (ProviderKind::OpenAi, Some(key)) => request.bearer_auth(key),
            (ProviderKind::Anthropic, Some(key)) => request.header("x-api-key", key),
            (_, None) => request,
        };
        if self.kind == ProviderKind::Anthropic {
            request = request.header("anthropic-version", "2023-06-01");
        }
        let response = match tokio::time::timeout(self.timeout, request.send()).await {
            Err(_) => return Err(fail(ChatError::Timeout(self.timeout), "")),
            Ok(Err(e)) if e.is_timeout() => return Err(fail(ChatError::Timeout(self.timeout), "")),
            Ok(Err(e)) => return Err(fail(ChatError::Network(without_url(&e)), "")),
            Ok(Ok(r)) => r,
        };
        let status = response.status().as_u16();
        if !(200..300).contains(&status) {
            let retry_after = response
                .headers()
                .get("retry-after")
                .and_then(|v| v.to_str().ok())
                .and_then(|v| v.trim().parse::<u64>().ok())
                .map(Duration::from_secs);
            let body = tokio::time::timeout(self.timeout, response.text())
                .await
                .ok()
                .and_then(Result::ok)
                .unwrap_or_default();
            return Err(fail(
                self.redacted(http_error(status, retry_after, &body)),
                "",
            ));
        }
        let mut events = sse_stream::SseStream::from_bytes_stream(response.bytes_stream());
        loop {
            let next = match tokio::time::timeout(self.timeout, events.next()).await {
                Err(_) => return Err(fail(ChatError::Timeout(self.timeout), decoder.text())),
                Ok(next) => next,
            };
            let sse = match next {
                None => break,
                Some(Err(_)) => return Err(fail(ChatError::StreamCut, decoder.text())),
                Some(Ok(sse)) => sse,
            };
            let Some(data) = sse.data.as_deref() else {
                continue;
            };
            match decoder.feed(sse.event.as_deref(), data) {
                Ok(out) => out.into_iter().for_each(&mut on),
                Err(e) => return Err(fail(e, decoder.text())),
            }
            if decoder.done() {
                break;
            }
        }
        let partial = decoder.text().to_string();
        decoder.finish().map_err(|e| fail(e, &partial))
    }
}

/// A reqwest error's words without the URL (which may carry a key in its query for some gateways).
fn without_url(e: &reqwest::Error) -> String {
    let mut text = e.to_string();
    if let Some(url) = e.url() {
        text = text.replace(url.as_str(), "<provider>");
    }
    text
}

/// The error of a non-2xx answer, with the provider's own message when it gives one.
fn http_error(status: u16, retry_after: Option<Duration>, body: &str) -> ChatError {
    let message = serde_json::from_str::<Value>(body)
        .ok()
        .and_then(|v| {
            v["error"]["message"]
                .as_str()
                .or(v["error"].as_str())
                .or(v["message"].as_str())
                .map(str::to_string)
        })
        .unwrap_or_else(|| body.chars().take(300).collect());
    match status {
        401 | 403 => ChatError::Unauthorized { status },
        429 => ChatError::RateLimited { retry_after },
        500..=599 => ChatError::Server { status, message },
        _ => ChatError::Refused { status, message },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_api_key_never_shows_in_debug_output() {
        let p = Provider::new(
            ProviderKind::OpenAi,
            None,
            Some("sk-secret-123".into()),
            "m",
            100,
            Duration::from_secs(1),
        )
        .expect("provider");
        assert!(!format!("{p:?}").contains("sk-secret-123"));
        assert_eq!(p.endpoint(), "https://api.openai.com/v1/chat/completions");
    }

    #[test]
    fn anthropic_endpoints_take_a_base_with_or_without_the_version() {
        let p = |b: &str| {
            Provider::new(
                ProviderKind::Anthropic,
                Some(b),
                None,
                "m",
                1,
                Duration::from_secs(1),
            )
            .expect("provider")
            .endpoint()
        };
        assert_eq!(
            p("https://api.anthropic.com/"),
            "https://api.anthropic.com/v1/messages"
        );
        assert_eq!(p("http://127.0.0.1:9/v1"), "http://127.0.0.1:9/v1/messages");
    }

    #[test]
    fn http_errors_map_to_what_an_operator_can_act_on() {
        assert_eq!(
            http_error(401, None, "{}"),
            ChatError::Unauthorized { status: 401 }
        );
        assert_eq!(
            http_error(429, Some(Duration::from_secs(7)), ""),
            ChatError::RateLimited {
                retry_after: Some(Duration::from_secs(7))
            }
        );
        assert_eq!(
            http_error(503, None, r#"{"error":{"message":"overloaded"}}"#),
            ChatError::Server {
                status: 503,
                message: "overloaded".into()
            }
        );
        assert!(matches!(
            http_error(400, None, r#"{"error":{"message":"bad model"}}"#),
            ChatError::Refused { status: 400, ref message } if message == "bad model"
        ));
    }

    #[test]
    fn tool_arguments_must_be_an_object_and_empty_means_none() {
        assert_eq!(
            parse_arguments("t", "").expect("empty"),
            serde_json::json!({})
        );
        assert!(parse_arguments("t", "{\"a\": 1").is_err());
        assert!(parse_arguments("t", "[1]").is_err());
    }
}
