// Package hostile is coffer's hostile-input regression suite: it keeps the probes of
// an adversarial review running against the real API handler on loopback (SQLite,
// disk blobs and the coffer-imager worker): hostile file names, 403/404
// indistinguishability, presigned URL mutations, Range forms, image bombs, abandoned
// requests and slow clients, malformed bodies, silent connections to a listening
// coffer-imager (which must not keep a server out), the caching headers of
// credentialed downloads, and gzip-bomb streams over the RPC face's h2c (stream
// budgets). Each category logs one line "hostile: <category> tried=N
// accepted_wrongly=N 5xx=N panics=N", and the run one "overall" line;
// scripts/hostile.sh prints them. Generation is seeded.
package hostile
