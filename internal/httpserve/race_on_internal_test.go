//go:build race

package httpserve

// raceEnabled: the race detector instruments allocations, so allocation counts are
// not the product's under -race.
const raceEnabled = true
