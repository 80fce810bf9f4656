package coffer

import "testing"

func TestActiveAndPassiveTypes(t *testing.T) {
	active := []string{"text/html", "Text/HTML; charset=utf-8", "image/svg+xml", "application/xhtml+xml",
		"text/xml", "application/xml", "application/rss+xml", "application/pdf", "text/javascript",
		"application/javascript", "multipart/x-mixed-replace; boundary=x", "", "html", "text/", "/html", "a/b/c"}
	for _, mt := range active {
		if !ActiveType(mt) || PassiveType(mt) {
			t.Errorf("%q: active %v passive %v, want active", mt, ActiveType(mt), PassiveType(mt))
		}
	}
	passive := []string{"image/png", "IMAGE/JPEG", "video/mp4", "audio/ogg", "font/woff2", "text/plain; charset=utf-8",
		"text/csv", "application/json", "application/octet-stream"}
	for _, mt := range passive {
		if ActiveType(mt) || !PassiveType(mt) {
			t.Errorf("%q: active %v passive %v, want passive", mt, ActiveType(mt), PassiveType(mt))
		}
	}
	neither := []string{"application/zip", "text/markdown", "text/css", "application/msword"} // sandboxed, yet inline
	for _, mt := range neither {
		if ActiveType(mt) || PassiveType(mt) {
			t.Errorf("%q: active %v passive %v, want neither", mt, ActiveType(mt), PassiveType(mt))
		}
	}
}

// FuzzActiveType: a stored type is never both active and passive, and a type a
// browser could read as HTML or XML is never passive.
func FuzzActiveType(f *testing.F) {
	for _, s := range []string{"text/html", "image/svg+xml; x=y", "image/png", " TEXT/PLAIN ;", "", "a/b+xml"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, mt string) {
		a, p := ActiveType(mt), PassiveType(mt)
		if a && p {
			t.Fatalf("%q is both active and passive", mt)
		}
		switch b := BaseType(mt); b {
		case "text/html", "text/xml", "application/xml", "image/svg+xml":
			if !a {
				t.Fatalf("%q (base %q) not active", mt, b)
			}
		}
	})
}
