package coffer

import (
	"mime"
	"net/http"
	"strings"
)

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

// SandboxCSP is the Content-Security-Policy of a user's file whose type is not
// passive (PassiveType): the document gets an opaque origin and runs no script,
// plugin or form (sandbox) and loads nothing, not even inline styles or data: images
// (default-src 'none'). It is the value Nhost's storage sends (its securityheaders
// middleware), word for word. The /v1 face sends it with every such file, a site
// with every such file of a bucket that roles other than the admin may write
// (docs/api.md, "Content types and inline serving").
const SandboxCSP = "default-src 'none'; sandbox"

// StoredType picks the stored MIME type from the declared one and the type sniffed from
// the first 512 bytes (docs/api.md, "Content types and inline serving"):
//   - no usable declaration (none, application/octet-stream, malformed): the sniffed type;
//   - sniffing finds only a generic type (octet-stream, text/plain): the declared type;
//   - declared and sniffed agree (the same type, or both markup: HTML, XML, XHTML,
//     SVG): the declared type (for the same type without a declared charset, the
//     sniffed one, which may name the charset);
//   - they disagree and the content is passive (a PNG declared as image/jpeg): the
//     sniffed type, as coffer always stored it;
//   - they disagree and the content is active (HTML declared as image/png):
//     application/octet-stream, so that no upload is served as a type it did not declare.
func StoredType(declared string, head []byte) string {
	sniffed := http.DetectContentType(head)
	decl, ok := declaredType(declared)
	if !ok {
		return sniffed
	}
	base := BaseType(sniffed)
	switch {
	case base == "application/octet-stream" || base == "text/plain":
		return decl
	case base == BaseType(decl) && !strings.Contains(decl, ";"):
		return sniffed // the same type, with the sniffed charset if any
	case base == BaseType(decl) || markup(base) && markup(BaseType(decl)):
		return decl
	case ActiveType(sniffed):
		return "application/octet-stream"
	}
	return sniffed
}

// declaredType returns a client's declared type, normalised and with only its charset
// parameter; ok is false if there is none worth keeping.
func declaredType(declared string) (string, bool) {
	if declared == "" {
		return "", false
	}
	mt, params, err := mime.ParseMediaType(declared)
	if err != nil || mt == "application/octet-stream" || !strings.Contains(mt, "/") {
		return "", false
	}
	if cs, ok := params["charset"]; ok {
		if t := mime.FormatMediaType(mt, map[string]string{"charset": cs}); t != "" {
			return t, true
		}
	}
	return mt, true
}

// markup reports whether base is HTML or an XML type: what http.DetectContentType
// sniffs as text/html or text/xml ("<!--" starts HTML, SVG and XML files alike).
func markup(base string) bool {
	return base == "text/html" || base == "text/xml" || base == "application/xml" ||
		base == "text/xsl" || strings.HasSuffix(base, "+xml")
}
