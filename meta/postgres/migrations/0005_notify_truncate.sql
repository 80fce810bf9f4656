-- TRUNCATE fires no row triggers, so 0003's triggers miss it: a TRUNCATE of files,
-- buckets or rules (plain SQL, outside coffer) sends "*", which makes every node flush
-- all its caches.
CREATE FUNCTION coffer_notify_flush() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('coffer_invalidate', '*');
    RETURN NULL;
END
$$;

CREATE TRIGGER files_truncate_invalidate AFTER TRUNCATE ON files
    FOR EACH STATEMENT EXECUTE FUNCTION coffer_notify_flush();
CREATE TRIGGER buckets_truncate_invalidate AFTER TRUNCATE ON buckets
    FOR EACH STATEMENT EXECUTE FUNCTION coffer_notify_flush();
CREATE TRIGGER rules_truncate_invalidate AFTER TRUNCATE ON rules
    FOR EACH STATEMENT EXECUTE FUNCTION coffer_notify_flush();
