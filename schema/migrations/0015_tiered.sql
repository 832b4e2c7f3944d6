-- 0015_tiered
-- Tiered topics (KIP-405): whether a topic has `remote.storage.enable` (NULL: not read), and
-- each partition's first offset in its leader's local log (ListOffsets EARLIEST_LOCAL, -4;
-- NULL: not tiered or not read). Offsets from `earliest_offset` up to it are held only in
-- remote storage; `size_bytes` (DescribeLogDirs) counts the local log only.
ALTER TABLE cluster_topics ADD COLUMN remote_storage INTEGER;
ALTER TABLE cluster_partitions ADD COLUMN local_start_offset INTEGER;
