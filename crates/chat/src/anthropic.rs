//! The Anthropic Messages API: the request body and the stream decoder.
//!
//! Stream: named SSE events — `message_start` (input token usage), `content_block_start`
//! (`index`, a `text` block or a `tool_use` block with `id` and `name`), `content_block_delta`
//! (`text_delta` with `text`, or `input_json_delta` with `partial_json` for a tool's arguments),
//! `content_block_stop`, `message_delta` (`stop_reason`: `end_turn`, `tool_use`, `max_tokens`, and
//! output token usage), `message_stop`; `ping` in between; `error` (`overloaded_error`, ...) at any
//! point.

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
    // Roles must alternate: consecutive user-side content (tool results, then a question) goes
    // into one user message.
    let mut out: Vec<(String, Vec<Value>)> = Vec::new();
    let mut push = |role: &str, block: Value| match out.last_mut() {
        Some((r, blocks)) if r == role => blocks.push(block),
        _ => out.push((role.to_string(), vec![block])),
    };
    for m in messages {
        match m {
            Message::User { text } => push("user", json!({"type": "text", "text": text})),
            Message::Assistant { text, tool_calls } => {
                if !text.is_empty() {
                    push("assistant", json!({"type": "text", "text": text}));
                }
                for c in tool_calls {
                    push(
                        "assistant",
                        json!({"type": "tool_use", "id": c.id, "name": c.name, "input": c.arguments}),
                    );
                }
            }
            Message::ToolResult {
                call_id,
                content,
                is_error,
            } => push(
                "user",
                json!({"type": "tool_result", "tool_use_id": call_id, "content": content, "is_error": is_error}),
            ),
        }
    }
    let messages: Vec<Value> = out
        .into_iter()
        .map(|(role, content)| json!({"role": role, "content": content}))
        .collect();
    let mut body = json!({
        "model": model,
        "max_tokens": max_tokens,
        "system": system,
        "messages": messages,
        "stream": true,
    });
    if !tools.is_empty() {
        body["tools"] = tools
            .iter()
            .map(|t| json!({"name": t.name, "description": t.description, "input_schema": t.parameters}))
            .collect();
    }
    body
}

#[derive(Debug)]
enum Block {
    Text,
    Tool {
        id: String,
        name: String,
        json: String,
    },
}

/// Decodes an Anthropic Messages stream.
#[derive(Debug, Default)]
pub struct AnthropicStream {
    text: String,
    blocks: BTreeMap<u64, Block>,
    calls: Vec<ToolCall>,
    stop: Option<StopReason>,
    usage: Usage,
    done: bool,
}

impl Decoder for AnthropicStream {
    fn feed(&mut self, event: Option<&str>, data: &str) -> Result<Vec<Event>, ChatError> {
        let v: Value = serde_json::from_str(data.trim()).map_err(|e| {
            ChatError::Malformed(format!(
                "{e}: {}",
                data.chars().take(200).collect::<String>()
            ))
        })?;
        let kind = event
            .map(str::to_string)
            .or_else(|| v["type"].as_str().map(str::to_string))
            .unwrap_or_default();
        let index = v["index"].as_u64().unwrap_or(0);
        let mut events = Vec::new();
        match kind.as_str() {
            "message_start" => {
                self.usage.input_tokens = v["message"]["usage"]["input_tokens"].as_u64();
            }
            "content_block_start" => {
                let b = &v["content_block"];
                match b["type"].as_str() {
                    Some("tool_use") => {
                        let id = b["id"].as_str().unwrap_or_default().to_string();
                        let name = b["name"].as_str().unwrap_or_default().to_string();
                        events.push(Event::ToolCallStarted {
                            id: id.clone(),
                            name: name.clone(),
                        });
                        self.blocks.insert(
                            index,
                            Block::Tool {
                                id,
                                name,
                                json: String::new(),
                            },
                        );
                    }
                    _ => {
                        if let Some(t) = b["text"].as_str().filter(|t| !t.is_empty()) {
                            self.text.push_str(t);
                            events.push(Event::Text(t.to_string()));
                        }
                        self.blocks.insert(index, Block::Text);
                    }
                }
            }
            "content_block_delta" => {
                let d = &v["delta"];
                match (d["type"].as_str(), self.blocks.get_mut(&index)) {
                    (Some("text_delta"), _) => {
                        if let Some(t) = d["text"].as_str() {
                            self.text.push_str(t);
                            events.push(Event::Text(t.to_string()));
                        }
                    }
                    (Some("input_json_delta"), Some(Block::Tool { json, .. })) => {
                        json.push_str(d["partial_json"].as_str().unwrap_or_default());
                    }
                    (Some("input_json_delta"), _) => {
                        return Err(ChatError::Malformed(format!(
                            "arguments for content block {index}, which is not a tool call"
                        )))
                    }
                    // thinking and signature deltas are not shown
                    _ => {}
                }
            }
            "content_block_stop" => {
                if let Some(Block::Tool { id, name, json }) = self.blocks.remove(&index) {
                    let call = ToolCall {
                        arguments: parse_arguments(&name, &json)?,
                        id,
                        name,
                    };
                    events.push(Event::ToolCallFinished(call.clone()));
                    self.calls.push(call);
                }
            }
            "message_delta" => {
                if let Some(reason) = v["delta"]["stop_reason"].as_str() {
                    self.stop = Some(match reason {
                        "end_turn" | "stop_sequence" => StopReason::EndTurn,
                        "tool_use" => StopReason::ToolUse,
                        "max_tokens" => StopReason::MaxTokens,
                        other => StopReason::Other(other.to_string()),
                    });
                }
                if let Some(out) = v["usage"]["output_tokens"].as_u64() {
                    self.usage.output_tokens = Some(out);
                }
            }
            "message_stop" => self.done = true,
            "error" => {
                let e = &v["error"];
                let message = e["message"].as_str().unwrap_or("error").to_string();
                return Err(match e["type"].as_str() {
                    Some("rate_limit_error") => ChatError::RateLimited { retry_after: None },
                    Some("authentication_error") | Some("permission_error") => {
                        ChatError::Unauthorized { status: 401 }
                    }
                    Some("overloaded_error") => ChatError::Server {
                        status: 529,
                        message,
                    },
                    Some("api_error") => ChatError::Server {
                        status: 500,
                        message,
                    },
                    _ => ChatError::Refused {
                        status: 400,
                        message,
                    },
                });
            }
            // ping and event types added later
            _ => {}
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
        if !self.done {
            return Err(ChatError::StreamCut);
        }
        Ok(Turn {
            text: self.text,
            tool_calls: self.calls,
            stop: self.stop.unwrap_or(StopReason::EndTurn),
            usage: self.usage,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Text, then a tool call whose input arrives in pieces, as the Messages streaming
    /// documentation shows them: (event, data).
    pub(crate) const TOOL_USE_STREAM: &[(&str, &str)] = &[
        (
            "message_start",
            r#"{"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","content":[],"model":"m","stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":472,"output_tokens":2}}}"#,
        ),
        (
            "content_block_start",
            r#"{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}"#,
        ),
        ("ping", r#"{"type": "ping"}"#),
        (
            "content_block_delta",
            r#"{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Checking "}}"#,
        ),
        (
            "content_block_delta",
            r#"{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"broker 4."}}"#,
        ),
        (
            "content_block_stop",
            r#"{"type":"content_block_stop","index":0}"#,
        ),
        (
            "content_block_start",
            r#"{"type":"content_block_start","index":1,"content_block":{"type":"tool_use","id":"toolu_01","name":"get_cluster_logdirs","input":{}}}"#,
        ),
        (
            "content_block_delta",
            r#"{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":""}}"#,
        ),
        (
            "content_block_delta",
            r#"{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"{\"brokerId\""}}"#,
        ),
        (
            "content_block_delta",
            r#"{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":": 4}"}}"#,
        ),
        (
            "content_block_stop",
            r#"{"type":"content_block_stop","index":1}"#,
        ),
        (
            "message_delta",
            r#"{"type":"message_delta","delta":{"stop_reason":"tool_use","stop_sequence":null},"usage":{"output_tokens":89}}"#,
        ),
        ("message_stop", r#"{"type":"message_stop"}"#),
    ];

    #[test]
    fn text_and_a_tool_use_block_with_split_input_are_put_back_together() {
        let mut d = AnthropicStream::default();
        let mut events = Vec::new();
        for (event, data) in TOOL_USE_STREAM {
            events.extend(d.feed(Some(event), data).expect("event"));
        }
        assert!(d.done());
        let call = ToolCall {
            id: "toolu_01".into(),
            name: "get_cluster_logdirs".into(),
            arguments: json!({"brokerId": 4}),
        };
        assert_eq!(
            events,
            vec![
                Event::Text("Checking ".into()),
                Event::Text("broker 4.".into()),
                Event::ToolCallStarted {
                    id: "toolu_01".into(),
                    name: "get_cluster_logdirs".into()
                },
                Event::ToolCallFinished(call.clone()),
            ]
        );
        let turn = d.finish().expect("turn");
        assert_eq!(turn.text, "Checking broker 4.");
        assert_eq!(turn.tool_calls, vec![call]);
        assert_eq!(turn.stop, StopReason::ToolUse);
        assert_eq!(turn.usage.input_tokens, Some(472));
        assert_eq!(turn.usage.output_tokens, Some(89));
    }

    #[test]
    fn an_error_event_mid_stream_and_a_missing_message_stop_end_the_turn() {
        let mut d = AnthropicStream::default();
        for (event, data) in &TOOL_USE_STREAM[..5] {
            d.feed(Some(event), data).expect("event");
        }
        let err = d
            .feed(
                Some("error"),
                r#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#,
            )
            .expect_err("error event");
        assert_eq!(
            err,
            ChatError::Server {
                status: 529,
                message: "Overloaded".into()
            }
        );
        assert_eq!(d.text(), "Checking broker 4.");
        assert_eq!(d.finish(), Err(ChatError::StreamCut));
    }

    #[test]
    fn tool_results_and_the_next_question_share_one_user_message() {
        let b = body(
            "m",
            100,
            "sys",
            &[
                Message::User { text: "q".into() },
                Message::Assistant {
                    text: "let me look".into(),
                    tool_calls: vec![ToolCall {
                        id: "toolu_1".into(),
                        name: "t".into(),
                        arguments: json!({}),
                    }],
                },
                Message::ToolResult {
                    call_id: "toolu_1".into(),
                    content: "{}".into(),
                    is_error: false,
                },
                Message::User {
                    text: "and now?".into(),
                },
            ],
            &[],
        );
        let roles: Vec<&str> = b["messages"]
            .as_array()
            .expect("messages")
            .iter()
            .filter_map(|m| m["role"].as_str())
            .collect();
        assert_eq!(roles, vec!["user", "assistant", "user"]);
        assert_eq!(b["messages"][1]["content"][1]["type"], "tool_use");
        assert_eq!(b["messages"][2]["content"][0]["type"], "tool_result");
        assert_eq!(b["messages"][2]["content"][1]["text"], "and now?");
        assert_eq!(b["system"], "sys");
        assert!(b.get("tools").is_none());
    }
}
