package coffer

import "strings"

// activeTypes are the media types a browser can run script in when it renders them
// as a document (besides the XML family, see ActiveType).
var activeTypes = map[string]bool{
	"text/html": true, "application/xhtml+xml": true, "image/svg+xml": true, "text/xml": true,
	"application/xml": true, "text/javascript": true, "application/javascript": true,
	"application/x-javascript": true, "application/ecmascript": true, "text/ecmascript": true,
	"application/pdf": true, "application/x-pdf": true, "application/x-shockwave-flash": true,
	"text/xsl": true, "application/vnd.wap.xhtml+xml": true, "multipart/x-mixed-replace": true,
	"multipart/related": true, "message/rfc822": true, "application/x-mimearchive": true,
}

// BaseType returns a media type without parameters, trimmed and in lower case:
// "Text/HTML; charset=utf-8" -> "text/html".
func BaseType(mt string) string {
	if i := strings.IndexByte(mt, ';'); i >= 0 {
		mt = mt[:i]
	}
	mt = strings.TrimSpace(mt)
	for i := 0; i < len(mt); i++ {
		if 'A' <= mt[i] && mt[i] <= 'Z' {
			return strings.ToLower(mt)
		}
	}
	return mt
}

// ActiveType reports whether a browser could run script in a document of media type
// mt: HTML, XHTML, SVG, any XML (XSLT can turn it into HTML), PDF, JavaScript, MHTML
// and the like, and any type that is not a well-formed type/subtype (a browser may
// sniff those).
func ActiveType(mt string) bool {
	base := BaseType(mt)
	typ, sub, ok := strings.Cut(base, "/")
	if !ok || typ == "" || sub == "" || strings.ContainsAny(sub, "/ \t") {
		return true
	}
	return activeTypes[base] || sub == "xml" || strings.HasSuffix(sub, "+xml")
}

// PassiveType reports whether a document of media type mt can only be displayed or
// played, never run script: images other than SVG, audio, video, fonts, plain text,
// CSV, JSON and application/octet-stream. Every other type is served in a sandbox.
func PassiveType(mt string) bool {
	if ActiveType(mt) {
		return false
	}
	base := BaseType(mt)
	switch base {
	case "text/plain", "text/csv", "application/json", "application/octet-stream":
		return true
	}
	typ, _, _ := strings.Cut(base, "/")
	return typ == "image" || typ == "audio" || typ == "video" || typ == "font"
}
