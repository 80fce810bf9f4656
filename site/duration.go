package site

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Duration is a time.Duration written in JSON as protobuf's Duration is ("1.5s",
// "60s"); Go's forms ("1m30s", "250ms") are accepted on input too.
type Duration time.Duration

// D returns d as a time.Duration.
func (d Duration) D() time.Duration { return time.Duration(d) }

// MarshalJSON writes d in seconds ("90s", "0.25s").
func (d Duration) MarshalJSON() ([]byte, error) {
	s := strconv.FormatFloat(time.Duration(d).Seconds(), 'f', -1, 64) + "s"
	return json.Marshal(s)
}

// UnmarshalJSON reads "90s", "1.5s" or a Go duration ("1m30s"); negative is refused.
func (d *Duration) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("a duration is a string such as \"30s\"")
	}
	v, err := time.ParseDuration(strings.TrimSpace(s))
	if err != nil {
		return fmt.Errorf("duration %q: %v", s, err)
	}
	if v < 0 {
		return fmt.Errorf("duration %q is negative", s)
	}
	*d = Duration(v)
	return nil
}
