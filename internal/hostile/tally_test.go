package hostile

import (
	"bytes"
	"fmt"
	"sync"
	"testing"
)

// counts are one category's (or the whole run's) results.
type counts struct {
	tried, wrong, fivexx, panics int
}

// line is the summary line the suite prints for a category.
func (c counts) line(name string) string {
	return fmt.Sprintf("hostile: %-14s tried=%d accepted_wrongly=%d 5xx=%d panics=%d", name, c.tried, c.wrong, c.fivexx, c.panics)
}

// overall adds up every category of the run, printed by TestMain.
var overall struct {
	sync.Mutex
	counts
}

// maxReports bounds how many failures a category reports one by one.
const maxReports = 25

// tally counts one category's probes against s. Its summary is logged, and added to
// the run's, when the test ends; 5xx answers and panics fail the test.
type tally struct {
	t       *testing.T
	s       *server
	name    string
	mu      sync.Mutex
	c       counts
	panics0 int64
	reports int
	status  map[int]int // answers by status, logged to show what the probes met
}

// tally starts counting category name.
func (s *server) tally(name string) *tally {
	tl := &tally{t: s.t, s: s, name: name, panics0: s.panics.Load()}
	s.t.Cleanup(tl.done)
	return tl
}

// probe counts one request: its answer, and why it is wrong ("" = it is not).
// Any 5xx but a 503 with Retry-After, or a transport error, counts as a 5xx.
func (tl *tally) probe(what string, a answer, wrong string) {
	tl.t.Helper()
	tl.mu.Lock()
	defer tl.mu.Unlock()
	tl.c.tried++
	if tl.status == nil {
		tl.status = map[int]int{}
	}
	tl.status[a.status]++
	if a.status == 0 || a.status >= 500 && (a.status != 503 || a.header.Get("Retry-After") == "") { // a 503 with Retry-After sheds load
		tl.c.fivexx++
		tl.report("%s: %d %s", what, a.status, bytes.TrimSpace(a.body))
	}
	if wrong != "" {
		tl.c.wrong++
		tl.report("%s: %s (answer %d %s)", what, wrong, a.status, bytes.TrimSpace(a.body))
	}
}

// report fails the test with a message, for the first maxReports failures.
func (tl *tally) report(format string, args ...any) {
	tl.t.Helper()
	tl.reports++
	switch {
	case tl.reports <= maxReports:
		tl.t.Errorf(format, args...)
	case tl.reports == maxReports+1:
		tl.t.Errorf("(%s: further failures are counted, not listed)", tl.name)
	}
}

// done logs the summary line, adds it to the run's and fails on panics.
func (tl *tally) done() {
	tl.mu.Lock()
	tl.c.panics = int(tl.s.panics.Load() - tl.panics0)
	c := tl.c
	tl.mu.Unlock()
	if c.panics > 0 {
		tl.t.Errorf("%s: the handler recovered %d panics", tl.name, c.panics)
	}
	tl.t.Logf("%s: answers by status %v", tl.name, tl.status)
	tl.t.Log(c.line(tl.name))
	fmt.Println(c.line(tl.name))
	overall.Lock()
	overall.tried += c.tried
	overall.wrong += c.wrong
	overall.fivexx += c.fivexx
	overall.panics += c.panics
	overall.Unlock()
}
