-- Cache invalidation across nodes: every change to a file, a bucket or the rules sends
-- a notification on channel coffer_invalidate, from inside the transaction that makes
-- the change, so it is delivered exactly when (and only if) the change commits. This
-- also covers changes made with plain SQL, outside coffer. Payloads: "f:<file id>",
-- "b:<bucket id>", "r" (rules). Identical payloads in one transaction are sent once.
CREATE FUNCTION coffer_notify_invalidate() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_TABLE_NAME = 'files' THEN
        IF TG_OP <> 'INSERT' THEN
            PERFORM pg_notify('coffer_invalidate', 'f:' || OLD.id::text);
        END IF;
        IF TG_OP <> 'DELETE' AND (TG_OP = 'INSERT' OR NEW.id <> OLD.id) THEN
            PERFORM pg_notify('coffer_invalidate', 'f:' || NEW.id::text);
        END IF;
    ELSIF TG_TABLE_NAME = 'buckets' THEN
        IF TG_OP <> 'INSERT' THEN
            PERFORM pg_notify('coffer_invalidate', 'b:' || OLD.id);
        END IF;
        IF TG_OP <> 'DELETE' AND (TG_OP = 'INSERT' OR NEW.id <> OLD.id) THEN
            PERFORM pg_notify('coffer_invalidate', 'b:' || NEW.id);
        END IF;
    ELSE
        PERFORM pg_notify('coffer_invalidate', 'r');
    END IF;
    RETURN NULL;
END
$$;

CREATE TRIGGER files_invalidate AFTER INSERT OR UPDATE OR DELETE ON files
    FOR EACH ROW EXECUTE FUNCTION coffer_notify_invalidate();
CREATE TRIGGER buckets_invalidate AFTER INSERT OR UPDATE OR DELETE ON buckets
    FOR EACH ROW EXECUTE FUNCTION coffer_notify_invalidate();
CREATE TRIGGER rules_invalidate AFTER INSERT OR UPDATE OR DELETE ON rules
    FOR EACH STATEMENT EXECUTE FUNCTION coffer_notify_invalidate();
