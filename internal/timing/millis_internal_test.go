package timing

import (
	"math/rand/v2"
	"strconv"
	"testing"
)

// appendMillis writes what strconv's shortest formatting of the milliseconds wrote
// before it, for small, round, random and large durations of either sign.
func TestAppendMillis(t *testing.T) {
	cases := []int64{0, 1, 9, 10, 12, 100, 120, 999, 1000, 1001, 1010, 1500, 12345, 999999, 1000000, 86_400_000_000, 1e15 - 1}
	rng := rand.New(rand.NewPCG(1, 2))
	for range 100_000 {
		cases = append(cases, rng.Int64N(1e6), rng.Int64N(1e12), rng.Int64N(1e15))
	}
	for _, us := range cases {
		for _, v := range []int64{us, -us} {
			want := strconv.AppendFloat(nil, float64(v)/1000, 'f', -1, 64)
			if got := appendMillis([]byte("x"), v); string(got[1:]) != string(want) {
				t.Fatalf("appendMillis(%d) = %q, want %q", v, got[1:], want)
			}
		}
	}
}

// FuzzAppendMillis checks appendMillis against strconv for any duration of less
// than 31 years.
func FuzzAppendMillis(f *testing.F) {
	f.Add(int64(12))
	f.Add(int64(-1500))
	f.Fuzz(func(t *testing.T, us int64) {
		if us >= 1e15 || us <= -1e15 {
			return
		}
		want := strconv.AppendFloat(nil, float64(us)/1000, 'f', -1, 64)
		if got := appendMillis(nil, us); string(got) != string(want) {
			t.Fatalf("appendMillis(%d) = %q, want %q", us, got, want)
		}
	})
}

// BenchmarkHeader is the Server-Timing value of a cached download.
func BenchmarkHeader(b *testing.B) {
	var r Recorder
	r.Add("auth", 12345, "")
	r.Add("meta", 4000, "")
	r.Add("rules", 800, "")
	r.Note("blob-open", "cache")
	r.Add("app", 61234, "")
	b.ReportAllocs()
	for b.Loop() {
		_ = r.Header()
	}
}
