//! OpenAI-compatible chat completions: the request body and the stream decoder.
//!
//! Stream: `data: {chunk}` lines, each chunk `{"choices": [{"index": 0, "delta": {...},
//! "finish_reason": null | "stop" | "tool_calls" | "length"}]}`; text arrives in
//! `delta.content`, tool calls in `delta.tool_calls[]` keyed by `index` (the first fragment has
//! `id` and `function.name`, later ones append to `function.arguments`); with
//! `stream_options.include_usage` a last chunk has empty `choices` and `usage`; then
//! `data: [DONE]`.

use std::collections::BTreeMap;

use serde_json::{json, Value};

use crate::{
    parse_arguments, ChatError, Decoder, Event, Message, StopReason, ToolCall, ToolSpec, Turn,
    Usage,
};

pub(crate) fn body(
    model: &str,
    max_tokens: u32,
    system: &str,
    messages: &[Message],
    tools: &[ToolSpec],
) -> Value {
    let mut out = vec![json!({"role": "system", "content": system})];
    for m in messages {
        out.push(match m {
            Message::User { text } => json!({"role": "user", "content": text}),
            Message::Assistant { text, tool_calls } => {
                let mut a = json!({"role": "assistant", "content": if text.is_empty() { Value::Null } else { json!(text) }});
                if !tool_calls.is_empty() {
                    a["tool_calls"] = tool_calls
                        .iter()
                        .map(|c| {
                            json!({"id": c.id, "type": "function",
                                "function": {"name": c.name, "arguments": c.arguments.to_string()}})
                        })
                        .collect();
                }
                a
            }
            Message::ToolResult {
                call_id, content, ..
            } => json!({"role": "tool", "tool_call_id": call_id, "content": content}),
        });
    }
    let mut body = json!({
        "model": model,
        "messages": out,
        "stream": true,
        "stream_options": {"include_usage": true},
        "max_tokens": max_tokens,
    });
    if !tools.is_empty() {
        body["tools"] = tools
            .iter()
            .map(|t| {
                json!({"type": "function", "function": {
                    "name": t.name, "description": t.description, "parameters": t.parameters}})
            })
            .collect();
    }
    body
}

#[derive(Debug, Default)]
struct PartialCall {
    id: String,
    name: String,
    arguments: String,
}

/// Decodes an OpenAI-compatible stream.
#[derive(Debug, Default)]
pub struct OpenAiStream {
    text: String,
    calls: BTreeMap<u64, PartialCall>,
    stop: Option<StopReason>,
    usage: Usage,
    done: bool,
}

impl Decoder for OpenAiStream {
    fn feed(&mut self, _event: Option<&str>, data: &str) -> Result<Vec<Event>, ChatError> {
        let data = data.trim();
        if data == "[DONE]" {
            self.done = true;
            return Ok(Vec::new());
        }
        let chunk: Value = serde_json::from_str(data)
            .map_err(|e| ChatError::Malformed(format!("{e}: {}", clip(data))))?;
        if let Some(err) = chunk.get("error") {
            let message = err["message"].as_str().unwrap_or("error in stream");
            return Err(ChatError::Server {
                status: 500,
                message: message.to_string(),
            });
        }
        let mut events = Vec::new();
        if let Some(usage) = chunk.get("usage").filter(|u| u.is_object()) {
            self.usage = Usage {
                input_tokens: usage["prompt_tokens"].as_u64(),
                output_tokens: usage["completion_tokens"].as_u64(),
            };
        }
        let Some(choices) = chunk.get("choices").and_then(Value::as_array) else {
            return Err(ChatError::Malformed(format!(
                "a chunk without choices: {}",
                clip(data)
            )));
        };
        for choice in choices {
            let delta = &choice["delta"];
            if let Some(t) = delta["content"].as_str().filter(|t| !t.is_empty()) {
                self.text.push_str(t);
                events.push(Event::Text(t.to_string()));
            }
            for call in delta["tool_calls"].as_array().into_iter().flatten() {
                let index = call["index"].as_u64().unwrap_or(0);
                let entry = self.calls.entry(index).or_default();
                let fresh = entry.id.is_empty() && entry.name.is_empty();
                if let Some(id) = call["id"].as_str() {
                    entry.id = id.to_string();
                }
                if let Some(name) = call["function"]["name"].as_str() {
                    entry.name.push_str(name);
                }
                if let Some(args) = call["function"]["arguments"].as_str() {
                    entry.arguments.push_str(args);
                }
                if fresh && !entry.name.is_empty() {
                    events.push(Event::ToolCallStarted {
                        id: entry.id.clone(),
                        name: entry.name.clone(),
                    });
                }
            }
            if let Some(reason) = choice["finish_reason"].as_str() {
                self.stop = Some(match reason {
                    "stop" => StopReason::EndTurn,
                    "tool_calls" | "function_call" => StopReason::ToolUse,
                    "length" => StopReason::MaxTokens,
                    other => StopReason::Other(other.to_string()),
                });
            }
        }
        Ok(events)
    }

    fn done(&self) -> bool {
        self.done
    }

    fn text(&self) -> &str {
        &self.text
    }

    fn finish(self) -> Result<Turn, ChatError> {
        // Some servers end without [DONE] after a finish_reason; neither is a cut stream.
        let Some(stop) = self.stop else {
            return Err(ChatError::StreamCut);
        };
        let mut tool_calls = Vec::new();
        for (index, c) in self.calls {
            let id = if c.id.is_empty() {
                format!("call_{index}")
            } else {
                c.id
            };
            tool_calls.push(ToolCall {
                arguments: parse_arguments(&c.name, &c.arguments)?,
                id,
                name: c.name,
            });
        }
        Ok(Turn {
            text: self.text,
            tool_calls,
            stop,
            usage: self.usage,
        })
    }
}

fn clip(s: &str) -> String {
    s.chars().take(200).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A text answer then a tool call whose arguments arrive in three pieces, a usage chunk and
    /// [DONE], as the chat-completions stream documents them.
    pub(crate) const TOOL_CALL_STREAM: &[&str] = &[
        r#"{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"role":"assistant","content":""},"logprobs":null,"finish_reason":null}]}"#,
        r#"{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":"Checking "},"logprobs":null,"finish_reason":null}]}"#,
        r#"{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":"broker 4."},"logprobs":null,"finish_reason":null}]}"#,
        r#"{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_abc","type":"function","function":{"name":"get_cluster_logdirs","arguments":""}}]},"logprobs":null,"finish_reason":null}]}"#,
        r#"{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\"bro"}}]},"logprobs":null,"finish_reason":null}]}"#,
        r#"{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"kerId\": 4"}}]},"logprobs":null,"finish_reason":null}]}"#,
        r#"{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"}"}}]},"logprobs":null,"finish_reason":null}]}"#,
        r#"{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{},"logprobs":null,"finish_reason":"tool_calls"}]}"#,
        r#"{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"m","choices":[],"usage":{"prompt_tokens":812,"completion_tokens":31,"total_tokens":843}}"#,
        "[DONE]",
    ];

    #[test]
    fn text_and_a_tool_call_split_across_chunks_are_put_back_together() {
        let mut d = OpenAiStream::default();
        let mut events = Vec::new();
        for data in TOOL_CALL_STREAM {
            events.extend(d.feed(None, data).expect("chunk"));
        }
        assert!(d.done());
        assert_eq!(
            events,
            vec![
                Event::Text("Checking ".into()),
                Event::Text("broker 4.".into()),
                Event::ToolCallStarted {
                    id: "call_abc".into(),
                    name: "get_cluster_logdirs".into()
                },
            ]
        );
        let turn = d.finish().expect("turn");
        assert_eq!(turn.text, "Checking broker 4.");
        assert_eq!(turn.stop, StopReason::ToolUse);
        assert_eq!(turn.tool_calls.len(), 1);
        assert_eq!(turn.tool_calls[0].arguments, json!({"brokerId": 4}));
        assert_eq!(turn.usage.input_tokens, Some(812));
        assert_eq!(turn.usage.output_tokens, Some(31));
    }

    #[test]
    fn a_stream_that_stops_before_its_finish_reason_is_cut() {
        let mut d = OpenAiStream::default();
        for data in &TOOL_CALL_STREAM[..3] {
            d.feed(None, data).expect("chunk");
        }
        assert_eq!(d.text(), "Checking broker 4.");
        assert_eq!(d.finish(), Err(ChatError::StreamCut));
    }

    #[test]
    fn malformed_chunks_and_bad_arguments_are_errors() {
        let mut d = OpenAiStream::default();
        assert!(matches!(
            d.feed(None, "{\"choices\": [ {"),
            Err(ChatError::Malformed(_))
        ));
        let mut d = OpenAiStream::default();
        d.feed(None, r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"c","function":{"name":"t","arguments":"{\"a\":"}}]},"finish_reason":"tool_calls"}]}"#)
            .expect("chunk");
        assert!(matches!(
            d.finish(),
            Err(ChatError::BadToolArguments { ref name, .. }) if name == "t"
        ));
    }

    #[test]
    fn the_request_carries_the_conversation_tools_and_streaming() {
        let b = body(
            "m",
            512,
            "sys",
            &[
                Message::User { text: "hi".into() },
                Message::Assistant {
                    text: String::new(),
                    tool_calls: vec![ToolCall {
                        id: "c1".into(),
                        name: "t".into(),
                        arguments: json!({"a": 1}),
                    }],
                },
                Message::ToolResult {
                    call_id: "c1".into(),
                    content: "{}".into(),
                    is_error: false,
                },
            ],
            &[ToolSpec {
                name: "t".into(),
                description: "d".into(),
                parameters: json!({"type": "object"}),
            }],
        );
        assert_eq!(b["stream"], true);
        assert_eq!(b["messages"][0]["role"], "system");
        assert_eq!(
            b["messages"][2]["tool_calls"][0]["function"]["arguments"],
            "{\"a\":1}"
        );
        assert_eq!(b["messages"][3]["role"], "tool");
        assert_eq!(b["tools"][0]["function"]["name"], "t");
    }
}
