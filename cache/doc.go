// Package cache holds coffer's caches, each a decorator that implements the interface
// it wraps, so the layers below never know they are cached:
//
//   - Meta wraps a meta.Store: file rows by id and bucket settings by id, count-bounded
//     with a TTL as a safety net. Writes made through it invalidate at once; changes
//     made by other nodes arrive as typed events (Handle; package bus carries them).
//   - Content holds small, hot file contents, byte-bounded, keyed by blob key: in
//     memory, or, for blobs on disk from 16 KB up, as open files (the contents stay
//     in the kernel's page cache and go out with sendfile; at most 1024 files). A blob
//     key is never reused (every write makes a new one), so an entry can never be
//     stale; deleting a blob forgets its entry so an open file keeps no disk space.
package cache
