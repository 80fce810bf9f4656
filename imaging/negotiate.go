package imaging

import (
	"strconv"
	"strings"
)

// Negotiate resolves the requested format against the client and the source, assuming
// the engine writes every output format (see NegotiateFor).
func (o Options) Negotiate(accept, srcMime string) (Options, bool) {
	return o.NegotiateFor(accept, srcMime, nil)
}

// NegotiateFor resolves o.Format to a concrete output format and normalises o:
//   - FormatAuto: AVIF or WebP if the Accept header names it explicitly with q > 0
//     (wildcards do not count: browsers send */* without decoding either), the higher
//     q-value first and AVIF on a tie, among formats canWrite allows; otherwise as
//     FormatKeep. varyAccept is true: the response must carry "Vary: Accept".
//   - FormatKeep: the source format from srcMime; GIF becomes PNG, anything else that
//     is not an output format becomes JPEG.
//
// canWrite reports the formats the engine writes (Engine.Supports); nil means all.
// Options that ask for no transformation are returned unchanged.
func (o Options) NegotiateFor(accept, srcMime string, canWrite func(Format) bool) (_ Options, varyAccept bool) {
	if o.IsZero() {
		return o, false
	}
	if canWrite == nil {
		canWrite = Format.IsOutput
	}
	if o.Format == FormatAuto {
		varyAccept = true
		o.Format = preferred(ParseAccept(accept), canWrite)
	}
	if o.Format == FormatKeep {
		o.Format = fallback(srcMime, canWrite)
	}
	return o.Normalize(), varyAccept
}

// preferred returns AVIF or WebP if accepted and writable, else FormatKeep.
func preferred(a Accept, canWrite func(Format) bool) Format {
	best, bestQ := FormatKeep, 0.0
	for _, f := range []Format{AVIF, WebP} {
		if q := a[f.MIME()]; q > bestQ && canWrite(f) {
			best, bestQ = f, q
		}
	}
	return best
}

// fallback is the output format for a source of type srcMime.
func fallback(srcMime string, canWrite func(Format) bool) Format {
	f, _ := FormatFromMIME(srcMime)
	if f == GIF {
		f = PNG
	}
	if f.IsOutput() && canWrite(f) {
		return f
	}
	return JPEG
}

// Accept maps the media types named in an Accept header (lower case, without
// parameters) to their q-values. Types refused with q=0 are present with value 0.
type Accept map[string]float64

// ParseAccept parses an Accept header (RFC 9110 section 12.5.1). Entries with a
// malformed q-value are skipped; when a type is listed twice the first entry counts.
func ParseAccept(header string) Accept {
	a := Accept{}
	for _, entry := range strings.Split(header, ",") {
		parts := strings.Split(entry, ";")
		t := strings.ToLower(strings.TrimSpace(parts[0]))
		if t == "" {
			continue
		}
		q, ok := qValue(parts[1:])
		if _, dup := a[t]; ok && !dup {
			a[t] = q
		}
	}
	return a
}

// qValue returns the q parameter among params (1 if absent); ok is false if malformed.
func qValue(params []string) (q float64, ok bool) {
	for _, p := range params {
		k, v, _ := strings.Cut(strings.TrimSpace(p), "=")
		if !strings.EqualFold(strings.TrimSpace(k), "q") {
			continue
		}
		v = strings.TrimSpace(v)
		f, err := strconv.ParseFloat(v, 64)
		if err != nil || f < 0 || f > 1 || len(v) > 5 || strings.ContainsAny(v, "eExXnNiI+-") {
			return 0, false
		}
		return f, true
	}
	return 1, true
}
