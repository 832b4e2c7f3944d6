-- 0011_audit_intents
-- One pipeline for every change: an audit event is written as an intent (status 102) before the
-- change is sent, and completed once afterwards with the true before and after and the final
-- status. A completed event never changes; an intent is withdrawn (deleted) only when the change
-- was refused before anything was sent.
DROP TRIGGER audit_events_are_append_only;

CREATE TRIGGER audit_events_are_append_only
BEFORE UPDATE ON audit_events
WHEN OLD.status <> 102
  OR NEW.id IS NOT OLD.id
  OR NEW.at_ms IS NOT OLD.at_ms
  OR NEW.action IS NOT OLD.action
  OR NEW.method IS NOT OLD.method
  OR NEW.user_id IS NOT OLD.user_id
  OR NEW.requested_by IS NOT OLD.requested_by
  OR NEW.target IS NOT OLD.target
  OR NEW.summary IS NOT OLD.summary
  OR NEW.forced IS NOT OLD.forced
BEGIN
    SELECT RAISE(ABORT, 'audit_events rows are append-only: only an intent (status 102) is completed, once');
END;

CREATE TRIGGER audit_events_only_intents_are_withdrawn
BEFORE DELETE ON audit_events
WHEN OLD.status <> 102
BEGIN
    SELECT RAISE(ABORT, 'audit_events rows are append-only: only an intent (status 102) is withdrawn');
END;

CREATE INDEX audit_events_intents ON audit_events (status) WHERE status = 102;
