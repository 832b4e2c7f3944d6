-- 0014_realized
-- Predicted vs realized: the per-broker loads an operation was predicted to leave, written with
-- the operation when it was queued (`predicted`), and what the readings after its completion
-- showed: `counts` (leader and follower counts and disk, at the first reading after it
-- completed) and `rates` (the four rates, at the first reading a full rate window after it
-- completed). Written by the observer, each once.
CREATE TABLE operation_realized (
    operation_id TEXT PRIMARY KEY NOT NULL REFERENCES operations (id) ON DELETE CASCADE,
    predicted    TEXT NOT NULL CHECK (json_valid(predicted)),
    counts       TEXT CHECK (counts IS NULL OR json_valid(counts)),
    rates        TEXT CHECK (rates IS NULL OR json_valid(rates))
);
