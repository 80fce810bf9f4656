package coffer

import (
	"strings"
	"unicode/utf8"
)

// invisibleNames names the code points a file name may not contain: bidirectional
// controls, which reorder how the rest of a name is displayed (U+202E makes
// "invoice\u202Efdp.exe" show as "invoiceexe.pdf"), and invisible characters, which
// make two different names look alike. ZERO WIDTH NON-JOINER and ZERO WIDTH JOINER
// (U+200C, U+200D) stay allowed: Persian, Indic scripts and emoji need them; so do
// variation selectors. Tag characters are allowed only in an emoji tag sequence (see
// invisibleAt).
var invisibleNames = map[rune]string{
	0x061C: "ARABIC LETTER MARK",
	0x115F: "HANGUL CHOSEONG FILLER",
	0x1160: "HANGUL JUNGSEONG FILLER",
	0x180E: "MONGOLIAN VOWEL SEPARATOR",
	0x200B: "ZERO WIDTH SPACE",
	0x200E: "LEFT-TO-RIGHT MARK",
	0x200F: "RIGHT-TO-LEFT MARK",
	0x2028: "LINE SEPARATOR",
	0x2029: "PARAGRAPH SEPARATOR",
	0x202A: "LEFT-TO-RIGHT EMBEDDING",
	0x202B: "RIGHT-TO-LEFT EMBEDDING",
	0x202C: "POP DIRECTIONAL FORMATTING",
	0x202D: "LEFT-TO-RIGHT OVERRIDE",
	0x202E: "RIGHT-TO-LEFT OVERRIDE",
	0x2060: "WORD JOINER",
	0x2061: "FUNCTION APPLICATION",
	0x2062: "INVISIBLE TIMES",
	0x2063: "INVISIBLE SEPARATOR",
	0x2064: "INVISIBLE PLUS",
	0x2066: "LEFT-TO-RIGHT ISOLATE",
	0x2067: "RIGHT-TO-LEFT ISOLATE",
	0x2068: "FIRST STRONG ISOLATE",
	0x2069: "POP DIRECTIONAL ISOLATE",
	0x206A: "INHIBIT SYMMETRIC SWAPPING",
	0x206B: "ACTIVATE SYMMETRIC SWAPPING",
	0x206C: "INHIBIT ARABIC FORM SHAPING",
	0x206D: "ACTIVATE ARABIC FORM SHAPING",
	0x206E: "NATIONAL DIGIT SHAPES",
	0x206F: "NOMINAL DIGIT SHAPES",
	0x3164: "HANGUL FILLER",
	0xFEFF: "ZERO WIDTH NO-BREAK SPACE",
	0xFFA0: "HALFWIDTH HANGUL FILLER",
	0xFFF9: "INTERLINEAR ANNOTATION ANCHOR",
	0xFFFA: "INTERLINEAR ANNOTATION SEPARATOR",
	0xFFFB: "INTERLINEAR ANNOTATION TERMINATOR",
}

// Tag characters (U+E0000..U+E007F) and the emoji tag sequences that use them, such as
// the flag of Scotland: U+1F3F4, tags spelling "gbsct", U+E007F CANCEL TAG.
const (
	tagFirst, tagLast = 0xE0000, 0xE007F
	tagBase           = 0x1F3F4 // WAVING BLACK FLAG
	tagCancel         = 0xE007F
)

// invisibleAt returns the disallowed code point that starts s[i:] and its name, or
// ok false. It also returns how many bytes to skip: a whole emoji tag sequence at once.
func invisibleAt(s string, i int) (r rune, name string, skip int, ok bool) {
	r, size := utf8.DecodeRuneInString(s[i:])
	if r == tagBase {
		if n := tagSequence(s[i+size:]); n > 0 {
			return r, "", size + n, false
		}
		return r, "", size, false
	}
	if r >= tagFirst && r <= tagLast {
		return r, "TAG CHARACTER", size, true
	}
	name, ok = invisibleNames[r]
	return r, name, size, ok
}

// tagSequence returns the length of the emoji tag spec and cancel tag that start s:
// 1 to 32 tags for a-z and 0-9 ended by U+E007F; 0 if s does not start with one.
func tagSequence(s string) int {
	n, tags := 0, 0
	for n < len(s) {
		r, size := utf8.DecodeRuneInString(s[n:])
		n += size
		switch {
		case r == tagCancel && tags > 0:
			return n
		case tags < 32 && (r >= 0xE0030 && r <= 0xE0039 || r >= 0xE0061 && r <= 0xE007A):
			tags++
		default:
			return 0
		}
	}
	return 0
}

// checkInvisible refuses a name with a bidirectional control or invisible character,
// naming the first one.
func checkInvisible(s string) error {
	for i := 0; i < len(s); {
		if s[i] < utf8.RuneSelf {
			i++
			continue
		}
		r, name, skip, bad := invisibleAt(s, i)
		if bad {
			return Errorf(EINVALID, "file name contains U+%04X %s, which is not allowed", r, name)
		}
		i += skip
	}
	return nil
}

// StripInvisible returns s without the code points CleanName refuses for being
// bidirectional controls or invisible, for showing names stored before they were
// refused. It returns s itself when there is nothing to strip.
func StripInvisible(s string) string {
	if checkInvisible(s) == nil {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); {
		if s[i] < utf8.RuneSelf {
			b.WriteByte(s[i])
			i++
			continue
		}
		_, _, skip, bad := invisibleAt(s, i)
		if !bad {
			b.WriteString(s[i : i+skip])
		}
		i += skip
	}
	return b.String()
}
