package sites

import (
	"strings"

	"github.com/coffer/coffer/site"
)

// bucketKey is a name in a bucket a site serves.
type bucketKey struct{ bucket, key string }

// siblingExts are the precompressed siblings' extensions a site looks for.
var siblingExts = []string{".br", ".zst", ".gz"}

// bucketKeys returns the bucket names that path is served from on c: the name its
// route maps it to, with that name's precompressed siblings; none for a path no
// bucket route serves.
func bucketKeys(c *site.Compiled, path string) []bucketKey {
	r, key, ok := c.Route(path)
	if !ok || key == "" || r.Target.Bucket == nil {
		return nil
	}
	keys := []bucketKey{{r.Target.Bucket.ID, key}}
	for _, ext := range siblingExts {
		keys = append(keys, bucketKey{r.Target.Bucket.ID, key + ext})
	}
	return keys
}

// pathsOf returns the request paths of c that serve name of bucket: the path of
// each bucket route mapping to it (and the directory path, for an index
// document). The inverse of bucketKeys, checked through c.Route so that a path an
// earlier route takes is not named.
func pathsOf(c *site.Compiled, bucket, name string) []string {
	var out []string
	for _, r := range c.Routes {
		t := r.Target.Bucket
		if t == nil || t.ID != bucket || !strings.HasPrefix(name, t.Prefix) {
			continue
		}
		p := strings.TrimSuffix(r.StripPrefix, "/") + "/" + name[len(t.Prefix):]
		if servedBy(c, r, p, name) {
			out = append(out, p)
		}
		if r.Index != "" && (p == "/"+r.Index || strings.HasSuffix(p, "/"+r.Index)) {
			if dir := p[:len(p)-len(r.Index)]; servedBy(c, r, dir, name) {
				out = append(out, dir)
			}
		}
	}
	return out
}

// servedBy reports whether path goes to route r of c, from name.
func servedBy(c *site.Compiled, r *site.CompiledRoute, path, name string) bool {
	got, key, ok := c.Route(path)
	return ok && got == r && key == name
}
