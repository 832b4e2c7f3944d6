-- 0008_chat
-- The chat assistant (docs/chat.md): conversations, each of one user, their messages, and the tool
-- calls the model made — a mutating one waits for its user's approval here. Deleting a
-- conversation deletes its messages and tool calls.

CREATE TABLE chat_conversations (
    id            TEXT PRIMARY KEY NOT NULL CHECK (length(id) = 32),
    user_id       TEXT NOT NULL CHECK (user_id <> ''),
    title         TEXT NOT NULL,
    created_at_ms INTEGER NOT NULL,
    updated_at_ms INTEGER NOT NULL
);

CREATE INDEX chat_conversations_user ON chat_conversations (user_id, updated_at_ms);

-- One message in order: the user's question, the model's answer (its text and the tool calls it
-- made, or the error that ended its turn), and tool results.
CREATE TABLE chat_messages (
    id              INTEGER PRIMARY KEY AUTOINCREMENT,
    conversation_id TEXT NOT NULL REFERENCES chat_conversations (id) ON DELETE CASCADE,
    at_ms           INTEGER NOT NULL,
    role            TEXT NOT NULL CHECK (role IN ('user', 'assistant', 'tool')),
    content         TEXT NOT NULL,
    tool_calls      TEXT NOT NULL DEFAULT '[]' CHECK (json_valid(tool_calls)),
    tool_call_id    TEXT,
    is_error        INTEGER NOT NULL DEFAULT 0 CHECK (is_error IN (0, 1)),
    error           TEXT CHECK (error IS NULL OR json_valid(error)),
    CHECK ((role = 'tool') = (tool_call_id IS NOT NULL))
);

CREATE INDEX chat_messages_conversation ON chat_messages (conversation_id, id);

-- A tool call of the model: read tools run at once (`running` -> `done` | `failed`); mutate tools
-- wait (`pending_approval` -> `approved` -> `done` | `failed`, or `rejected`). Only one decision
-- can move a call out of `pending_approval`.
CREATE TABLE chat_tool_calls (
    conversation_id TEXT NOT NULL REFERENCES chat_conversations (id) ON DELETE CASCADE,
    id              TEXT NOT NULL CHECK (id <> ''),
    name            TEXT NOT NULL CHECK (name <> ''),
    arguments       TEXT NOT NULL CHECK (json_valid(arguments)),
    category        TEXT NOT NULL CHECK (category IN ('read', 'mutate', 'meta')),
    state           TEXT NOT NULL
                    CHECK (state IN ('running', 'pending_approval', 'approved', 'rejected', 'done', 'failed')),
    summary         TEXT,
    result          TEXT CHECK (result IS NULL OR json_valid(result)),
    created_at_ms   INTEGER NOT NULL,
    decided_at_ms   INTEGER,
    PRIMARY KEY (conversation_id, id)
);
