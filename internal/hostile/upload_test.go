package hostile

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
)

// part is one multipart part; a filename makes it a file part.
type part struct {
	field, filename, ctype string
	body                   []byte
}

// boundary separates the parts of the suite's multipart bodies.
const boundary = "hostile-7f3a9c"

// multipartBody encodes parts by hand, so that a filename goes in raw (quotes and
// backslashes escaped as browsers do, other bytes as they are).
func multipartBody(parts ...part) (*bytes.Buffer, string) {
	var b bytes.Buffer
	esc := strings.NewReplacer(`\`, `\\`, `"`, `\"`)
	for _, p := range parts {
		fmt.Fprintf(&b, "--%s\r\nContent-Disposition: form-data; name=\"%s\"", boundary, p.field)
		if p.filename != "" {
			fmt.Fprintf(&b, "; filename=\"%s\"", esc.Replace(p.filename))
		}
		if p.ctype != "" {
			fmt.Fprintf(&b, "\r\nContent-Type: %s", p.ctype)
		}
		b.WriteString("\r\n\r\n")
		b.Write(p.body)
		b.WriteString("\r\n")
	}
	fmt.Fprintf(&b, "--%s--\r\n", boundary)
	return &b, "multipart/form-data; boundary=" + boundary
}

// jsonString quotes s as a JSON string, escaping only '"', '\' and bytes below 0x20,
// so that invalid UTF-8 reaches the server's decoder as it is.
func jsonString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '"' || c == '\\':
			b.WriteByte('\\')
			b.WriteByte(c)
		case c < 0x20:
			fmt.Fprintf(&b, `\u%04x`, c)
		default:
			b.WriteByte(c)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// fileJSON is the part of a file's metadata the suite reads.
type fileJSON struct {
	ID       string `json:"id"`
	Name     string `json:"name"`
	Size     int64  `json:"size"`
	BucketID string `json:"bucketId"`
}

// uploaded returns the files of an upload's answer (none unless it is a 201).
func uploaded(a answer) []fileJSON {
	var out struct {
		ProcessedFiles []fileJSON `json:"processedFiles"`
	}
	if a.status != http.StatusCreated || json.Unmarshal(a.body, &out) != nil {
		return nil
	}
	return out.ProcessedFiles
}

// uploadNamed uploads data into bucket as user with name (and id, when not "") in
// its metadata[] part.
func (s *server) uploadNamed(user, bucket, id, name string, data []byte) answer {
	s.t.Helper()
	meta := `{"name":` + jsonString(name)
	if id != "" {
		meta += `,"id":"` + id + `"`
	}
	body, ctype := multipartBody(part{field: "bucket-id", body: []byte(bucket)},
		part{field: "metadata[]", body: []byte(meta + "}")},
		part{field: "file[]", filename: "f.bin", body: data})
	return s.do("POST", "/v1/files", body, append(as(user), "Content-Type", ctype)...)
}

// mustUpload uploads data as user and returns the new file's id.
func (s *server) mustUpload(user, bucket, name string, data []byte) string {
	s.t.Helper()
	a := s.uploadNamed(user, bucket, "", name, data)
	fs := uploaded(a)
	if len(fs) != 1 {
		s.t.Fatalf("upload %q: %d %s", name, a.status, a.body)
	}
	return fs[0].ID
}
