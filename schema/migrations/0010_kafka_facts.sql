-- 0010_kafka_facts
-- What Kafka the cluster runs and its true controller (issue 25): the metadata mode and release
-- range inferred from ApiVersions, where the controller id came from, the KRaft quorum; and each
-- follower's lag behind its leader in bytes.

-- 'kraft' or 'zookeeper'; NULL before the first sample that read it
ALTER TABLE cluster_state ADD COLUMN metadata_mode TEXT;
-- the release range, inclusive ("3.5", "3.6"); NULL: unbounded (or not read)
ALTER TABLE cluster_state ADD COLUMN kafka_version_min TEXT;
ALTER TABLE cluster_state ADD COLUMN kafka_version_max TEXT;
-- where controller_id came from: 'quorum' (KRaft: DescribeQuorum's leader), 'metadata'
-- (ZooKeeper: Metadata's controller id) or 'unknown' (DescribeQuorum failed)
ALTER TABLE cluster_state ADD COLUMN controller_source TEXT;
-- JSON of the quorum (leaderId, leaderEpoch, highWatermark, voters, observers); NULL off KRaft
ALTER TABLE cluster_state ADD COLUMN quorum TEXT;

-- a follower's lag behind its leader in bytes: the leader's size minus its own, never below 0
-- (0 for the leader; a future replica: the current replica's size on its broker minus its own)
ALTER TABLE cluster_replicas ADD COLUMN lag_bytes INTEGER;
