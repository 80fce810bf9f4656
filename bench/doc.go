// Package bench is coffer's load generator: it drives a coffer server (or any HTTP
// server serving the same files) with built-in download and upload scenarios and
// reports throughput, errors by kind and latency percentiles from HDR histograms.
//
// A scenario ramps its workers along a schedule of stages (see ParseStages). In the
// default closed-loop mode each worker sends its next request as soon as the previous
// one finished; with Config.Rate the generator is open-loop: arrivals follow the
// schedule's shape scaled to Rate requests/s, latency counts from the intended start
// (so a slow server cannot hide its queueing delay), and arrivals that find every
// worker busy are counted as "dropped".
//
// Bodies are streamed both ways: uploads read from a deterministic generator and
// downloads are discarded through a per-worker buffer while their bytes are counted,
// so a 45 MB scenario with 50 workers needs a few megabytes of memory, not gigabytes.
//
// Run sets up fixtures through the API (a bucket of its own when it has the admin
// secret), runs the scenarios, deletes the fixtures (also when its context is
// cancelled) and returns Results, which WriteText, WriteJSON and WriteHTML render.
// Compare runs the same scenarios against two targets alternately.
//
// The spa_site scenario (spasite.go) is a site walk rather than one request repeated:
// each worker is a virtual user loading an SPA's bundle in order and its largest
// assets, then pausing (the pacer interface), its files listed by the manifest of a
// deterministic SPA fixture (spafixture.go) that a static server or an upstream serves.
package bench
