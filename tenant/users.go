package tenant

import (
	"encoding/binary"
	"hash/maphash"
	"math/bits"
	"strings"
	"sync"
)

// userTable holds the per-user buckets of one tenant, sharded so that checks of
// different users rarely share a lock, and capped (UserTableConfig).
type userTable struct {
	rate     rate
	seed     maphash.Seed
	mask     uint64
	perShard int
	shards   []userShard
}

// userShard is one lock and its users, padded to its own cache lines.
type userShard struct {
	mu sync.RWMutex
	m  map[string]*cell
	_  [64]byte
}

// newUserTable returns an empty table.
func newUserTable(r rate, cfg UserTableConfig) *userTable {
	def := DefaultUserTableConfig()
	if cfg.MaxUsers <= 0 {
		cfg.MaxUsers = def.MaxUsers
	}
	n := 1 << bits.Len(uint(max(cfg.Shards, 1)-1)) // a power of 2
	n = min(n, cfg.MaxUsers)
	n = 1 << (bits.Len(uint(n)) - 1) // still a power of 2 after the min
	return &userTable{
		rate: r, seed: maphash.MakeSeed(), mask: uint64(n - 1),
		perShard: max(1, cfg.MaxUsers/n), shards: make([]userShard, n),
	}
}

// maxUserKey is the longest user key kept as it is; a longer one is kept as its
// 64-bit hash, so the table's memory is bounded in bytes, not only in entries.
const maxUserKey = 64

// get returns the bucket of user, adding it (and making room) if new.
func (t *userTable) get(user string, now int64) *cell {
	h := maphash.String(t.seed, user)
	if len(user) > maxUserKey {
		user = string(binary.LittleEndian.AppendUint64(make([]byte, 0, 8), h))
	}
	s := &t.shards[h&t.mask]
	s.mu.RLock()
	c := s.m[user]
	s.mu.RUnlock()
	if c != nil {
		return c
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if c = s.m[user]; c != nil {
		return c
	}
	if s.m == nil {
		s.m = make(map[string]*cell)
	}
	if len(s.m) >= t.perShard {
		s.evict(now)
	}
	c = &cell{}
	s.m[strings.Clone(user)] = c
	return c
}

// evict makes room for one user (the shard's lock held): it forgets every full
// bucket, and if none is full, the one closest to full.
func (s *userShard) evict(now int64) {
	var victim string
	least, freed, first := int64(0), false, true
	for u, c := range s.m {
		if c.idle(now) {
			delete(s.m, u)
			freed = true
		} else if tat := c.tat.Load(); first || tat < least {
			victim, least, first = u, tat, false
		}
	}
	if !freed {
		delete(s.m, victim)
	}
}

// size returns how many users the table holds (for tests).
func (t *userTable) size() int {
	n := 0
	for i := range t.shards {
		s := &t.shards[i]
		s.mu.RLock()
		n += len(s.m)
		s.mu.RUnlock()
	}
	return n
}
