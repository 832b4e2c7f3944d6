//! The chat assistant's conversations: per user, messages in order, tool calls decided once,
//! everything gone with its conversation.

mod common;

use ballast_schema::{ChatToolCall, NewChatMessage, StoreError};
use common::fresh_store as store;
use serde_json::json;

fn text(role: &'static str, content: &str) -> NewChatMessage {
    NewChatMessage {
        role,
        content: content.into(),
        tool_calls: json!([]),
        tool_call_id: None,
        is_error: false,
        error: None,
    }
}

#[test]
fn conversations_are_listed_per_user_and_deleted_with_everything_in_them() {
    let (_d, s) = store();
    let a = s.create_conversation("alice", "broker 4", 1).expect("a");
    let b = s.create_conversation("bob", "lag", 2).expect("b");
    let a2 = s.create_conversation("alice", "quotas", 3).expect("a2");
    let listed: Vec<String> = s
        .conversations("alice")
        .expect("list")
        .into_iter()
        .map(|c| c.id)
        .collect();
    assert_eq!(
        listed,
        vec![a2.id.clone(), a.id.clone()],
        "newest first, alice only"
    );

    s.add_chat_message(&a.id, &text("user", "why is broker 4 hot?"), 10)
        .expect("user");
    let mut answer = text("assistant", "Let me look.");
    answer.tool_calls =
        json!([{"id": "call_1", "name": "get_partition_activity", "arguments": {}}]);
    s.add_chat_message(&a.id, &answer, 11).expect("assistant");
    s.add_chat_message(
        &a.id,
        &NewChatMessage {
            tool_call_id: Some("call_1".into()),
            ..text("tool", "{\"count\": 0}")
        },
        12,
    )
    .expect("tool");
    let messages = s.chat_messages(&a.id).expect("messages");
    assert_eq!(
        messages.iter().map(|m| m.role.as_str()).collect::<Vec<_>>(),
        vec!["user", "assistant", "tool"]
    );
    assert_eq!(messages[1].tool_calls[0]["id"], "call_1");
    assert_eq!(
        s.conversations("alice").expect("list")[0].id,
        a.id,
        "a new message makes it the most recent"
    );
    // a tool message without its call, or an unknown role, is refused by the table
    assert!(s.add_chat_message(&a.id, &text("tool", "x"), 13).is_err());
    assert!(s.add_chat_message(&a.id, &text("system", "x"), 13).is_err());

    s.add_chat_tool_call(&ChatToolCall {
        conversation_id: a.id.clone(),
        id: "call_1".into(),
        name: "get_partition_activity".into(),
        arguments: json!({}),
        category: "read".into(),
        state: "running".into(),
        summary: None,
        result: None,
        created_at_ms: 11,
        decided_at_ms: None,
    })
    .expect("tool call");
    assert!(s.delete_conversation(&a.id).expect("delete"));
    assert!(s.conversation(&a.id).expect("get").is_none());
    assert!(s.chat_messages(&a.id).expect("messages").is_empty());
    assert!(s.chat_tool_calls(&a.id).expect("calls").is_empty());
    assert!(!s.delete_conversation(&a.id).expect("again"));
    assert!(s.conversation(&b.id).expect("get").is_some());
}

#[test]
fn a_pending_tool_call_is_decided_once() {
    let (_d, s) = store();
    let c = s.create_conversation("alice", "", 1).expect("c");
    s.add_chat_tool_call(&ChatToolCall {
        conversation_id: c.id.clone(),
        id: "toolu_1".into(),
        name: "update_topic_config".into(),
        arguments: json!({"topic": "t", "configs": {"retention.ms": 1}}),
        category: "mutate".into(),
        state: "pending_approval".into(),
        summary: Some("topic t: set retention.ms = 1".into()),
        result: None,
        created_at_ms: 2,
        decided_at_ms: None,
    })
    .expect("call");
    let approved = s
        .decide_chat_tool_call(&c.id, "toolu_1", true, 3)
        .expect("approve");
    assert_eq!(approved.state, "approved");
    assert!(matches!(
        s.decide_chat_tool_call(&c.id, "toolu_1", false, 4),
        Err(StoreError::Conflict(_))
    ));
    assert!(matches!(
        s.decide_chat_tool_call(&c.id, "nope", true, 4),
        Err(StoreError::NotFound(_))
    ));
    s.finish_chat_tool_call(&c.id, "toolu_1", true, &json!({"ok": true}))
        .expect("finish");
    let calls = s.chat_tool_calls(&c.id).expect("calls");
    assert_eq!(calls[0].state, "done");
    assert_eq!(calls[0].result, Some(json!({"ok": true})));
}
