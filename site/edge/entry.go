package edge

import (
	"sync/atomic"
	"time"

	"github.com/coffer/coffer/internal/openfile"
)

// meta is an entry's sidecar, written next to its body as JSON so a restart can
// rebuild the index (see restart.go). Times are absolute.
type meta struct {
	Key          string        `json:"key"`
	Scope        string        `json:"scope"`
	Path         string        `json:"path"`
	Tags         []string      `json:"tags,omitempty"`
	Size         int64         `json:"size"`
	ETag         string        `json:"etag,omitempty"`
	LastModified time.Time     `json:"lastModified,omitzero"`
	Type         string        `json:"type,omitempty"`
	Encoding     string        `json:"encoding,omitempty"`
	CacheControl string        `json:"cacheControl,omitempty"`
	Stored       time.Time     `json:"stored"` // fresh from (renewed by a 304)
	TTL          time.Duration `json:"ttl"`
	SWR          time.Duration `json:"swr"`
	SIE          time.Duration `json:"sie"`
	Revalidate   bool          `json:"revalidate,omitempty"`
}

// entry is a committed object on disk. Its fields change only under Cache.mu
// held for writing; visited is SIEVE's bit, set by hits under the read lock.
type entry struct {
	meta
	file    string // the body's path
	name    string // the body's file name in the data directory
	visited atomic.Bool
	// fd is the body's file kept open for hits (nil: none yet, or over the
	// budget); Cache.reader sets it, Cache.drop lets go of it.
	fd atomic.Pointer[openfile.Shared]
	// SIEVE's list: prev is toward the head (newer), next toward the tail.
	prev, next *entry
}

// fresh reports whether e can be served without asking the origin.
func (e *entry) fresh(now time.Time) bool {
	return !e.Revalidate && now.Before(e.Stored.Add(e.TTL))
}

// servableStale reports whether e may be served stale while it is revalidated
// in the background.
func (e *entry) servableStale(now time.Time) bool {
	return !e.Revalidate && now.Before(e.Stored.Add(e.TTL+e.SWR))
}

// servableOnError reports whether e may be served when its origin fails.
func (e *entry) servableOnError(now time.Time) bool {
	return now.Before(e.Stored.Add(e.TTL + e.SIE))
}

// sieve is the eviction order (SIEVE, see doc.go): new entries go in at the
// head; the hand walks from the tail toward the head, clearing visited bits and
// evicting the first entry it finds unvisited.
type sieve struct {
	head, tail, hand *entry
}

func (s *sieve) insert(e *entry) {
	e.prev, e.next = nil, s.head
	if s.head != nil {
		s.head.prev = e
	}
	s.head = e
	if s.tail == nil {
		s.tail = e
	}
}

func (s *sieve) remove(e *entry) {
	if s.hand == e {
		s.hand = e.prev
	}
	if e.prev != nil {
		e.prev.next = e.next
	} else {
		s.head = e.next
	}
	if e.next != nil {
		e.next.prev = e.prev
	} else {
		s.tail = e.prev
	}
	e.prev, e.next = nil, nil
}

// victim returns the entry to evict next, nil when the list is empty.
func (s *sieve) victim() *entry {
	h := s.hand
	if h == nil {
		h = s.tail
	}
	for h != nil && h.visited.Load() {
		h.visited.Store(false)
		h = h.prev
		if h == nil {
			h = s.tail
		}
	}
	s.hand = h // remove(h) moves it on toward the head
	return h
}

// scopeIndex finds a scope's entries by path and by tag for purges.
type scopeIndex struct {
	all    map[*entry]struct{}
	byPath map[string]map[*entry]struct{}
	byTag  map[string]map[*entry]struct{}
}

func newScopeIndex() *scopeIndex {
	return &scopeIndex{
		all:    map[*entry]struct{}{},
		byPath: map[string]map[*entry]struct{}{},
		byTag:  map[string]map[*entry]struct{}{},
	}
}

func (x *scopeIndex) add(e *entry) {
	x.all[e] = struct{}{}
	addTo(x.byPath, e.Path, e)
	for _, t := range e.Tags {
		addTo(x.byTag, t, e)
	}
}

func (x *scopeIndex) remove(e *entry) {
	delete(x.all, e)
	removeFrom(x.byPath, e.Path, e)
	for _, t := range e.Tags {
		removeFrom(x.byTag, t, e)
	}
}

func addTo(m map[string]map[*entry]struct{}, k string, e *entry) {
	s := m[k]
	if s == nil {
		s = map[*entry]struct{}{}
		m[k] = s
	}
	s[e] = struct{}{}
}

func removeFrom(m map[string]map[*entry]struct{}, k string, e *entry) {
	if s := m[k]; s != nil {
		delete(s, e)
		if len(s) == 0 {
			delete(m, k)
		}
	}
}
