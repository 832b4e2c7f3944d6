-- 0007_auth
-- Authentication (docs/auth.md): logins under way at a provider, login sessions, personal access
-- tokens. No secret is stored in a form that can be used as it is: the session cookie and the token
-- value are kept only as hashes (SHA-256 for sessions, HMAC-SHA-256 with AUTH_PAT_HASH_SECRET for
-- tokens). The provider's refresh token is kept as the provider gave it (it is useless without the
-- client secret); keep the database file readable by the service user only.

-- A login started at a provider: the state, nonce and PKCE verifier until the browser comes back.
-- Used once: the callback deletes the row, so a replayed state is refused. `browser_hash` is the
-- SHA-256 of a cookie given to the browser that started it: a callback from another browser (a
-- login link planted by someone else) is refused.
CREATE TABLE auth_logins (
    state_hash    TEXT PRIMARY KEY NOT NULL CHECK (length(state_hash) = 64),
    browser_hash  TEXT NOT NULL CHECK (length(browser_hash) = 64),
    provider      TEXT NOT NULL CHECK (provider <> ''),
    nonce         TEXT NOT NULL CHECK (nonce <> ''),
    pkce_verifier TEXT NOT NULL CHECK (pkce_verifier <> ''),
    next_path     TEXT NOT NULL,
    created_at_ms INTEGER NOT NULL,
    expires_at_ms INTEGER NOT NULL
);

CREATE INDEX auth_logins_expires_at_ms ON auth_logins (expires_at_ms);

-- A person logged in through a provider. `id` is public (audit, listings); the cookie value is
-- known only by its hash.
CREATE TABLE sessions (
    id                   TEXT PRIMARY KEY NOT NULL CHECK (length(id) = 32),
    cookie_hash          TEXT NOT NULL UNIQUE CHECK (length(cookie_hash) = 64),
    provider             TEXT NOT NULL CHECK (provider <> ''),
    subject              TEXT NOT NULL CHECK (subject <> ''),
    user_id              TEXT NOT NULL CHECK (user_id <> ''),
    name                 TEXT,
    email                TEXT,
    groups               TEXT NOT NULL DEFAULT '[]' CHECK (json_valid(groups)),
    roles                TEXT NOT NULL DEFAULT '[]' CHECK (json_valid(roles)),
    scope                TEXT NOT NULL CHECK (scope IN ('read', 'write')),
    refresh_token        TEXT,
    access_expires_at_ms INTEGER,
    created_at_ms        INTEGER NOT NULL,
    expires_at_ms        INTEGER NOT NULL,
    last_seen_at_ms      INTEGER NOT NULL
);

CREATE INDEX sessions_expires_at_ms ON sessions (expires_at_ms);

-- Personal access tokens. `owner` is the provider and subject of the person who made it
-- (`provider:subject`), `user_id` the name audit events record.
CREATE TABLE api_tokens (
    id              TEXT PRIMARY KEY NOT NULL CHECK (length(id) = 32),
    owner           TEXT NOT NULL CHECK (owner <> ''),
    user_id         TEXT NOT NULL CHECK (user_id <> ''),
    name            TEXT NOT NULL CHECK (name <> ''),
    scope           TEXT NOT NULL CHECK (scope IN ('read', 'write')),
    value_hmac      TEXT NOT NULL UNIQUE CHECK (length(value_hmac) = 64),
    created_at_ms   INTEGER NOT NULL,
    expires_at_ms   INTEGER,
    last_used_at_ms INTEGER,
    revoked_at_ms   INTEGER
);

CREATE INDEX api_tokens_owner ON api_tokens (owner, created_at_ms);
