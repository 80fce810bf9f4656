// Package audit is the audit log of every request a site serves: JSON lines in
// Config.Dir, rotated by size and bounded in total, optionally shipped to an HTTP
// collector, and queried by tenant, site, host, time, path glob, status and cache.
//
// Serving never waits for it. Write copies the record into a bounded queue and
// returns; when the queue is full (a slow or hung disk) the record is dropped and
// counted (Stats.Dropped). One writer goroutine encodes records (a hand-written
// appender, no reflection) into a 64 KiB buffer over audit.log and, every
// Config.FlushEvery (1 s), writes the buffer and fsyncs: a record is durable about
// FlushEvery after Write, and a crash loses at most that much. A torn last line left
// by a crash is skipped by readers and ended by the next writer. Errors (disk full,
// the directory removed, a read-only file system) are counted, logged at most every
// 10 s, the records dropped, and the file reopened after a backoff (1 s doubling to
// 30 s); the directory is recreated if it is gone.
//
// Files: audit.log is the current file; when the next record would take it past
// MaxFileBytes it is renamed audit-<UTC time of its earliest record>-<seq>.log
// (20261125T060038.123456789Z, seq counting rotations) and a new one is begun. The
// oldest rotated files are deleted while they and a full audit.log would pass
// MaxTotalBytes.
//
// Shipping reads the files, not memory: a cursor (file name and offset, in
// Dir/ship.cursor) moves only after the collector answers 2xx, and follows
// audit.log through its rename. A collector outage or a restart therefore loses
// nothing still on disk; delivery is at least once (a batch whose 2xx answer is lost,
// or a crash before the cursor is saved, is sent again): collectors dedupe by
// request_id. Files deleted by the total bound before they were shipped are skipped
// (and logged).
package audit
