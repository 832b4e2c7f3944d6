-- 0012_proposal_basis
-- What a proposal was judged on: each load's status (measuring, no traffic, below the floor,
-- counted, triggered). A held proposal is kept only while the cluster shows the same statuses;
-- a change (a load measured, traffic appearing, a load newly beyond the trigger) replaces it.
-- Proposals made before this migration have an empty basis: the first check replaces them.
ALTER TABLE proposals ADD COLUMN basis TEXT NOT NULL DEFAULT '';
