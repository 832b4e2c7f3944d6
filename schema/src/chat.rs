//! `chat_conversations`, `chat_messages`, `chat_tool_calls`: the chat assistant's conversations.
//!
//! A conversation belongs to one user; the web process checks that a caller only ever reads or
//! changes their own. A tool call of a mutating tool waits in `pending_approval` until its user
//! decides: of concurrent decisions exactly one wins.

use rusqlite::{params, OptionalExtension, Row};
use serde::{Deserialize, Serialize};

use crate::util::{json_col, json_col_opt, json_text, random_hex_token, require_non_empty};
use crate::{Store, StoreError};

/// One conversation.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Conversation {
    pub id: String,
    pub user_id: String,
    pub title: String,
    pub created_at_ms: i64,
    pub updated_at_ms: i64,
}

/// One message of a conversation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ChatMessage {
    pub id: i64,
    pub conversation_id: String,
    pub at_ms: i64,
    /// `user`, `assistant` or `tool`.
    pub role: String,
    pub content: String,
    /// An assistant message's tool calls: `[{id, name, arguments}]`.
    pub tool_calls: serde_json::Value,
    /// A tool result's call.
    pub tool_call_id: Option<String>,
    pub is_error: bool,
    /// Why an assistant turn ended early: `{code, message}`.
    pub error: Option<serde_json::Value>,
}

/// A message to add.
#[derive(Debug, Clone, PartialEq)]
pub struct NewChatMessage {
    pub role: &'static str,
    pub content: String,
    pub tool_calls: serde_json::Value,
    pub tool_call_id: Option<String>,
    pub is_error: bool,
    pub error: Option<serde_json::Value>,
}

/// A tool call the model made.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ChatToolCall {
    pub conversation_id: String,
    pub id: String,
    pub name: String,
    pub arguments: serde_json::Value,
    /// `read`, `mutate` or `meta`.
    pub category: String,
    /// `running`, `pending_approval`, `approved`, `rejected`, `done`, `failed`.
    pub state: String,
    pub summary: Option<String>,
    pub result: Option<serde_json::Value>,
    pub created_at_ms: i64,
    pub decided_at_ms: Option<i64>,
}

const CONVERSATION: &str = "id, user_id, title, created_at_ms, updated_at_ms";
const MESSAGE: &str =
    "id, conversation_id, at_ms, role, content, tool_calls, tool_call_id, is_error, error";
const TOOL_CALL: &str = "conversation_id, id, name, arguments, category, state, summary, result,
    created_at_ms, decided_at_ms";

fn conversation(row: &Row<'_>) -> rusqlite::Result<Conversation> {
    Ok(Conversation {
        id: row.get(0)?,
        user_id: row.get(1)?,
        title: row.get(2)?,
        created_at_ms: row.get(3)?,
        updated_at_ms: row.get(4)?,
    })
}

fn message(row: &Row<'_>) -> rusqlite::Result<ChatMessage> {
    Ok(ChatMessage {
        id: row.get(0)?,
        conversation_id: row.get(1)?,
        at_ms: row.get(2)?,
        role: row.get(3)?,
        content: row.get(4)?,
        tool_calls: json_col(row, 5)?,
        tool_call_id: row.get(6)?,
        is_error: row.get::<_, i64>(7)? != 0,
        error: json_col_opt(row, 8)?,
    })
}

fn tool_call(row: &Row<'_>) -> rusqlite::Result<ChatToolCall> {
    Ok(ChatToolCall {
        conversation_id: row.get(0)?,
        id: row.get(1)?,
        name: row.get(2)?,
        arguments: json_col(row, 3)?,
        category: row.get(4)?,
        state: row.get(5)?,
        summary: row.get(6)?,
        result: json_col_opt(row, 7)?,
        created_at_ms: row.get(8)?,
        decided_at_ms: row.get(9)?,
    })
}

impl Store {
    /// A new conversation of `user_id`.
    pub fn create_conversation(
        &self,
        user_id: &str,
        title: &str,
        now_ms: i64,
    ) -> Result<Conversation, StoreError> {
        require_non_empty("user", user_id)?;
        let c = Conversation {
            id: random_hex_token()?,
            user_id: user_id.to_string(),
            title: title.trim().to_string(),
            created_at_ms: now_ms,
            updated_at_ms: now_ms,
        };
        self.write(|tx| {
            tx.prepare_cached(
                "INSERT INTO chat_conversations (id, user_id, title, created_at_ms, updated_at_ms)
                 VALUES (?1, ?2, ?3, ?4, ?5)",
            )?
            .execute(params![
                c.id,
                c.user_id,
                c.title,
                c.created_at_ms,
                c.updated_at_ms
            ])?;
            Ok(())
        })?;
        Ok(c)
    }

    /// `user_id`'s conversations, most recently active first.
    pub fn conversations(&self, user_id: &str) -> Result<Vec<Conversation>, StoreError> {
        let conn = self.conn()?;
        let mut stmt = conn.prepare_cached(&format!(
            "SELECT {CONVERSATION} FROM chat_conversations WHERE user_id = ?1
             ORDER BY updated_at_ms DESC, id"
        ))?;
        let rows = stmt.query_map([user_id], conversation)?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// One conversation, whoever it belongs to (the caller checks the owner).
    pub fn conversation(&self, id: &str) -> Result<Option<Conversation>, StoreError> {
        let conn = self.conn()?;
        let mut stmt = conn.prepare_cached(&format!(
            "SELECT {CONVERSATION} FROM chat_conversations WHERE id = ?1"
        ))?;
        Ok(stmt.query_row([id], conversation).optional()?)
    }

    /// Deletes a conversation with its messages and tool calls; whether it existed.
    pub fn delete_conversation(&self, id: &str) -> Result<bool, StoreError> {
        self.write(|tx| {
            Ok(tx
                .prepare_cached("DELETE FROM chat_conversations WHERE id = ?1")?
                .execute([id])?
                > 0)
        })
    }

    /// Renames a conversation (its first question names it).
    pub fn set_conversation_title(&self, id: &str, title: &str) -> Result<(), StoreError> {
        self.write(|tx| {
            tx.prepare_cached("UPDATE chat_conversations SET title = ?2 WHERE id = ?1")?
                .execute(params![id, title])?;
            Ok(())
        })
    }

    /// A conversation's messages in order.
    pub fn chat_messages(&self, conversation_id: &str) -> Result<Vec<ChatMessage>, StoreError> {
        let conn = self.conn()?;
        let mut stmt = conn.prepare_cached(&format!(
            "SELECT {MESSAGE} FROM chat_messages WHERE conversation_id = ?1 ORDER BY id"
        ))?;
        let rows = stmt.query_map([conversation_id], message)?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// Appends a message (and marks the conversation active); its id.
    pub fn add_chat_message(
        &self,
        conversation_id: &str,
        m: &NewChatMessage,
        now_ms: i64,
    ) -> Result<i64, StoreError> {
        self.write(|tx| {
            tx.prepare_cached(
                "INSERT INTO chat_messages (conversation_id, at_ms, role, content, tool_calls,
                    tool_call_id, is_error, error)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
            )?
            .execute(params![
                conversation_id,
                now_ms,
                m.role,
                m.content,
                json_text(&m.tool_calls),
                m.tool_call_id,
                i64::from(m.is_error),
                m.error.as_ref().map(json_text),
            ])?;
            let id = tx.last_insert_rowid();
            tx.prepare_cached("UPDATE chat_conversations SET updated_at_ms = ?2 WHERE id = ?1")?
                .execute(params![conversation_id, now_ms])?;
            Ok(id)
        })
    }

    /// Records a tool call the model made.
    pub fn add_chat_tool_call(&self, c: &ChatToolCall) -> Result<(), StoreError> {
        self.write(|tx| {
            tx.prepare_cached(
                "INSERT INTO chat_tool_calls (conversation_id, id, name, arguments, category, state,
                    summary, result, created_at_ms, decided_at_ms)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
            )?
            .execute(params![
                c.conversation_id,
                c.id,
                c.name,
                json_text(&c.arguments),
                c.category,
                c.state,
                c.summary,
                c.result.as_ref().map(json_text),
                c.created_at_ms,
                c.decided_at_ms,
            ])?;
            Ok(())
        })
    }

    /// A conversation's tool calls in the order they were made.
    pub fn chat_tool_calls(&self, conversation_id: &str) -> Result<Vec<ChatToolCall>, StoreError> {
        let conn = self.conn()?;
        let mut stmt = conn.prepare_cached(&format!(
            "SELECT {TOOL_CALL} FROM chat_tool_calls WHERE conversation_id = ?1
             ORDER BY created_at_ms, rowid"
        ))?;
        let rows = stmt.query_map([conversation_id], tool_call)?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// Moves a tool call waiting for approval to `approved` or `rejected`, once: of concurrent
    /// decisions exactly one wins. [`StoreError::NotFound`] for an unknown call,
    /// [`StoreError::Conflict`] when it is not waiting.
    pub fn decide_chat_tool_call(
        &self,
        conversation_id: &str,
        id: &str,
        approve: bool,
        now_ms: i64,
    ) -> Result<ChatToolCall, StoreError> {
        self.write(|tx| {
            let current = tx
                .prepare_cached(&format!(
                    "SELECT {TOOL_CALL} FROM chat_tool_calls WHERE conversation_id = ?1 AND id = ?2"
                ))?
                .query_row([conversation_id, id], tool_call)
                .optional()?;
            let Some(mut c) = current else {
                return Err(StoreError::NotFound(format!("tool call {id}")));
            };
            if c.state != "pending_approval" {
                return Err(StoreError::Conflict(format!(
                    "tool call {id} is {}, not waiting for approval",
                    c.state
                )));
            }
            c.state = if approve { "approved" } else { "rejected" }.to_string();
            c.decided_at_ms = Some(now_ms);
            tx.prepare_cached(
                "UPDATE chat_tool_calls SET state = ?3, decided_at_ms = ?4
                 WHERE conversation_id = ?1 AND id = ?2 AND state = 'pending_approval'",
            )?
            .execute(params![conversation_id, id, c.state, now_ms])?;
            Ok(c)
        })
    }

    /// Records a tool call's outcome: `done` or `failed`, with its result.
    pub fn finish_chat_tool_call(
        &self,
        conversation_id: &str,
        id: &str,
        ok: bool,
        result: &serde_json::Value,
    ) -> Result<(), StoreError> {
        self.write(|tx| {
            tx.prepare_cached(
                "UPDATE chat_tool_calls SET state = ?3, result = ?4
                 WHERE conversation_id = ?1 AND id = ?2",
            )?
            .execute(params![
                conversation_id,
                id,
                if ok { "done" } else { "failed" },
                json_text(result)
            ])?;
            Ok(())
        })
    }
}
