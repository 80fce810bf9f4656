// Package remote runs image transformations in a separate worker process,
// coffer-imager (cmd/coffer-imager), so that coffer serve never links libvips.
//
// Why a process: linking libvips loads about a hundred shared libraries into the
// server at exec time, ~43 MB of resident pages before the first image, and a crash
// in a C decoder, or the kernel's OOM killer, would take the whole server down. In a
// child process both stay there; the server idles at about 20 MB and survives the
// worker's death.
//
// The server side is Engine (an imaging.Engine): it keeps imaging.Pool's semantics
// (Workers at once, a bounded queue, ErrBusy beyond it, ctx cancellation), starts the
// child with the first transform, and starts a new one with the next transform after
// the child died (requests in flight then fail with EUNAVAILABLE). New runs the
// worker once to check that it starts and learn which formats it writes, so an idle
// server has no child. Close stops it.
//
// The worker side is Serve, which coffer-imager runs over its stdin and stdout with
// the libvips engine.
//
// Open chooses the server's engine from its settings (Setup): a Cluster of network
// workers, else the child Engine (FindImager looks for the binary), else
// imaging.Disabled, which answers 501.
//
// Over the network (coffer-imager --listen, coffer serve --image-workers-remote) the
// same frames run on one TCP or TLS connection per server and worker, after a
// handshake in which both prove the shared secret (handshake.go). The worker side is
// ServeListener: per connection the same serve loop, with a cap on authenticated
// connections, a separate small budget and a short deadline for those still in
// their handshake (preauth.go: silent peers cannot keep servers out), a cap
// on requests held over all of them (ListenConfig.MaxRequests: beyond it a request is
// answered EUNAVAILABLE before its source is held), and a drain on shutdown. The
// server side is Cluster, another imaging.Engine: one worker type (worker) talks to a
// peer that is either the child or a connection, and Cluster keeps a connection to
// each address, sends each transform to the one with the fewest in flight, pings
// connected workers (Ping/Pong frames, offered by Hello.ping), reconnects with backoff, and reports WorkerState for metrics and the management
// API. Backpressure: the worker's serve loop never blocks on a source (it holds at
// most MaxSourceBytes each, bounded by MaxRequests), results are written with
// blocking writes, so a slow reader on either side stalls the writer through TCP
// flow control rather than growing a buffer.
//
// The wire: length-prefixed protobuf frames (imagerpc/imagerpc.proto; a 4-byte
// big-endian length, at most MaxFrame, then an imagerpc.Frame). Requests carry an id
// and run concurrently in the one child. A request names its transform by the
// options' canonical string (imaging.Options.Canonical), which the worker parses
// strictly with imaging.ParseCanonical (EINVALID for anything else), so a new
// transform parameter changes imaging's options table, geometry and the vips
// pipeline, never the protocol. The source streams in chunks of ChunkSize
// (the server never holds it whole and refuses it with ETOOLARGE as soon as it passes
// MaxSourceBytes), the result comes back in chunks, then a Response with the pipeline
// step timings or a typed error: a coffer error code, the client message and the
// cause for logs, so HTTP answers are those of the in-process engine.
package remote
