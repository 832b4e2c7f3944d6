-- 0013_move_stalls
-- A move the cluster cannot progress reads stalled: `stalled_since_ms` is since when its cause
-- holds (a broker it needs down since then, or no copied bytes since the last reading that grew),
-- `stalled_brokers` the brokers down that it needs (a JSON array; `[]` when the cause is no
-- progress), `reason` the words. Both are NULL on a move that is not stalled. Written only by the
-- executor, on in-flight moves; cleared when the cause clears or the move leaves the cluster.
ALTER TABLE moves ADD COLUMN stalled_since_ms INTEGER;
ALTER TABLE moves ADD COLUMN stalled_brokers TEXT
    CHECK (stalled_brokers IS NULL OR (json_valid(stalled_brokers) AND json_type(stalled_brokers) = 'array'));
