package hasura_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"image"
	"image/color"
	"image/jpeg"
	"image/png"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coffer/coffer"
	"github.com/coffer/coffer/imaging"
	"golang.org/x/image/webp"
)

// photo returns a w×h JPEG of a colour gradient.
func photo(t testing.TB, w, h int) []byte {
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for y := range h {
		for x := range w {
			img.Set(x, y, color.RGBA{uint8(255 * x / w), uint8(255 * y / h), 90, 255})
		}
	}
	var b bytes.Buffer
	if err := jpeg.Encode(&b, img, &jpeg.Options{Quality: 90}); err != nil {
		panic(err)
	}
	return b.Bytes()
}

// decode decodes an image of the given format and returns its size.
func decode(t *testing.T, format string, b []byte) (int, int) {
	t.Helper()
	var cfg image.Config
	var err error
	switch format {
	case "jpeg":
		cfg, err = jpeg.DecodeConfig(bytes.NewReader(b))
		_, err2 := jpeg.Decode(bytes.NewReader(b))
		err = errorsJoin(err, err2)
	case "png":
		cfg, err = png.DecodeConfig(bytes.NewReader(b))
		_, err2 := png.Decode(bytes.NewReader(b))
		err = errorsJoin(err, err2)
	case "webp":
		cfg, err = webp.DecodeConfig(bytes.NewReader(b))
		_, err2 := webp.Decode(bytes.NewReader(b))
		err = errorsJoin(err, err2)
	}
	if err != nil {
		t.Fatalf("decode %s: %v", format, err)
	}
	return cfg.Width, cfg.Height
}

func errorsJoin(a, b error) error {
	if a != nil {
		return a
	}
	return b
}

func imageEnv(t *testing.T) (*env, string, string) {
	e := newEnv(t, envOptions{images: true})
	src := e.uploadOne("default", "photos/p.jpg", photo(t, 640, 480))
	return e, "/v1/files/" + src.ID, src.ETag
}

func TestTransformFormatsAndSizes(t *testing.T) {
	e, path, srcTag := imageEnv(t)
	cases := []struct {
		query, accept, ctype string
		w, h                 int
		vary                 bool
	}{
		{"w=100", "", "image/jpeg", 100, 75, false},
		{"h=120", "", "image/jpeg", 160, 120, false},
		{"w=100&h=100&fit=cover", "", "image/jpeg", 100, 100, false},
		{"w=100&h=100&fit=fill", "", "image/jpeg", 100, 100, false},
		{"w=200&h=100", "", "image/jpeg", 200, 100, false},            // hasura-storage: exactly w×h, centre crop
		{"w=200&h=100&fit=inside", "", "image/jpeg", 133, 100, false}, // keeps the ratio
		{"w=64&f=png", "", "image/png", 64, 48, false},
		{"w=64&f=webp", "", "image/webp", 64, 48, false},
		{"w=64&f=auto", "image/webp,image/*;q=0.8", "image/webp", 64, 48, true},
		{"w=64&f=auto", "image/png,*/*", "image/jpeg", 64, 48, true},
	}
	for _, c := range cases {
		resp := e.do("GET", path+"?"+c.query, nil, true, "Accept", c.accept)
		body := mustStatus(t, resp, http.StatusOK, nil)
		if got := resp.Header.Get("Content-Type"); got != c.ctype {
			t.Errorf("%s: Content-Type %s, want %s", c.query, got, c.ctype)
			continue
		}
		w, h := decode(t, strings.TrimPrefix(c.ctype, "image/"), body)
		if w != c.w || h != c.h {
			t.Errorf("%s: %dx%d, want %dx%d", c.query, w, h, c.w, c.h)
		}
		if tag := resp.Header.Get("Etag"); tag == "" || tag == srcTag {
			t.Errorf("%s: variant ETag %q (source %q)", c.query, tag, srcTag)
		}
		if vary := strings.Contains(resp.Header.Get("Vary"), "Accept"); vary != c.vary {
			t.Errorf("%s: Vary %q", c.query, resp.Header.Get("Vary"))
		}
	}
}

// Blur and quality change the bytes; equivalent parameters share one cached variant.
func TestTransformParamsMatter(t *testing.T) {
	e, path, _ := imageEnv(t)
	get := func(q string) ([]byte, *http.Response) {
		resp := e.do("GET", path+"?"+q, nil, true)
		return mustStatus(t, resp, http.StatusOK, nil), resp
	}
	plain, made := get("w=200")
	// A variant made now says how long the engine's steps took (encoding, where the
	// lazy libvips pipeline does its pixel work, always takes a while).
	if st := made.Header.Get("Server-Timing"); !strings.Contains(st, `desc="made: `) || !strings.Contains(st, "encode ") {
		t.Fatalf("Server-Timing of a new variant lacks the engine's steps: %s", st)
	}
	blurred, _ := get("w=200&b=5")
	low, _ := get("w=200&q=20")
	if bytes.Equal(plain, blurred) || bytes.Equal(plain, low) || len(low) >= len(plain) {
		t.Fatalf("blur or quality did not change the output (%d, %d, %d bytes)", len(plain), len(blurred), len(low))
	}
	_, first := get("q=80&w=200&f=JPEG") // same as w=200 after normalisation
	if !strings.Contains(first.Header.Get("Server-Timing"), `transform;dur=`) ||
		!strings.Contains(first.Header.Get("Server-Timing"), `desc="memory"`) {
		t.Fatalf("equivalent parameters were not served from the cache: %s", first.Header.Get("Server-Timing"))
	}
	resp := e.do("GET", path+"?w=200", nil, true, "If-None-Match", first.Header.Get("Etag"))
	mustStatus(t, resp, http.StatusNotModified, nil)
}

// r turns the image clockwise before it is resized: a quarter turn swaps the
// output's sides and w, h refer to the turned image. Each rotation is a variant of
// its own (ETag, cache key); r=0 is no transformation. A presigned URL carries r.
func TestTransformRotate(t *testing.T) {
	e, path, srcTag := imageEnv(t) // 640×480
	tags := map[string]string{srcTag: "source"}
	for _, c := range []struct {
		query string
		w, h  int
	}{
		{"r=90", 480, 640}, {"r=270&f=png", 480, 640}, {"r=180", 640, 480}, {"r=90&w=120", 120, 160},
		{"r=90&w=100&h=50", 100, 50}, {"r=90&h=160&fit=inside", 120, 160},
	} {
		resp := e.do("GET", path+"?"+c.query, nil, true)
		body := mustStatus(t, resp, http.StatusOK, nil)
		if w, h := decode(t, strings.TrimPrefix(resp.Header.Get("Content-Type"), "image/"), body); w != c.w || h != c.h {
			t.Errorf("%s: %dx%d, want %dx%d", c.query, w, h, c.w, c.h)
		}
		tag := resp.Header.Get("Etag")
		if other, dup := tags[tag]; dup {
			t.Errorf("%s: ETag %s, as for %s", c.query, tag, other)
		}
		tags[tag] = c.query
	}
	resp := e.do("GET", path+"?r=0", nil, true)
	if tag := resp.Header.Get("Etag"); tag != srcTag {
		t.Errorf("r=0: ETag %s, want the source's %s", tag, srcTag)
	}
	mustStatus(t, resp, http.StatusOK, nil)
	msg := mustError(t, e.do("GET", path+"?r=45", nil, true), http.StatusBadRequest)
	if !strings.Contains(msg, "invalid r: must be one of 0, 90, 180, 270") {
		t.Errorf("r=45: message %q", msg)
	}
	var out struct{ URL string }
	mustStatus(t, e.do("GET", path+"/presignedurl?w=60&r=90", nil, true), http.StatusOK, &out)
	resp, err := http.Get(out.URL)
	if err != nil {
		t.Fatal(err)
	}
	if w, h := decode(t, "jpeg", mustStatus(t, resp, http.StatusOK, nil)); w != 60 || h != 80 || !strings.Contains(out.URL, "r=90") {
		t.Errorf("presigned %s: %dx%d, want 60x80", out.URL, w, h)
	}
}

func TestTransformBadParams(t *testing.T) {
	e, path, _ := imageEnv(t)
	for q, name := range map[string]string{
		"w=0": "w", "w=9000": "w", "h=abc": "h", "q=101": "q", "b=-1": "b", "f=gif": "f",
		"fit=zoom": "fit", "w=10&w=20": "w", "crop=middle": "crop",
	} {
		msg := mustError(t, e.do("GET", path+"?"+q, nil, true), http.StatusBadRequest)
		if !strings.Contains(msg, "invalid "+name) {
			t.Errorf("?%s: message %q does not name %s", q, msg, name)
		}
	}
	text := e.uploadOne("default", "notes.txt", []byte("just text"))
	mustError(t, e.do("GET", "/v1/files/"+text.ID+"?w=10", nil, true), http.StatusUnsupportedMediaType)
	// Bytes that claim to be an image but are not.
	body, ctype := multipartBody(part{field: "file[]", filename: "fake.jpg", ctype: "image/jpeg", body: append([]byte{0xff, 0xd8, 0xff}, bytes.Repeat([]byte("x"), 100)...)})
	var out uploadResp
	mustStatus(t, e.do("POST", "/v1/files", body, true, "Content-Type", ctype), http.StatusCreated, &out)
	resp := e.do("GET", "/v1/files/"+out.ProcessedFiles[0].ID+"?w=10", nil, true)
	if resp.StatusCode < 400 || resp.StatusCode >= 500 {
		t.Fatalf("damaged image: status %d", resp.StatusCode)
	}
	resp.Body.Close()
}

// Replacing the file replaces its variants.
func TestTransformAfterReplace(t *testing.T) {
	e, path, _ := imageEnv(t)
	resp := e.do("GET", path+"?w=100", nil, true)
	old := resp.Header.Get("Etag")
	mustStatus(t, resp, http.StatusOK, nil)
	body, ctype := multipartBody(part{field: "file", filename: "p.jpg", body: photo(t, 300, 300)})
	mustStatus(t, e.do("PUT", path, body, true, "Content-Type", ctype), http.StatusOK, nil)
	resp = e.do("GET", path+"?w=100", nil, true)
	b := mustStatus(t, resp, http.StatusOK, nil)
	if w, h := decode(t, "jpeg", b); w != 100 || h != 100 || resp.Header.Get("Etag") == old {
		t.Fatalf("after replace: %dx%d, ETag %s (before %s)", w, h, resp.Header.Get("Etag"), old)
	}
}

// A presigned URL carries the transformation asked for when it was made; as with
// hasura-storage (whose URLs are S3's), transformation parameters are not signed: the
// holder may change them, never the signed X-Amz-* parameters.
func TestPresignedTransform(t *testing.T) {
	e, path, _ := imageEnv(t)
	var out struct{ URL string }
	mustStatus(t, e.do("GET", path+"/presignedurl?w=50&f=png", nil, true), http.StatusOK, &out)
	u, _ := url.Parse(out.URL)
	resp, err := http.Get(out.URL)
	if err != nil {
		t.Fatal(err)
	}
	b := mustStatus(t, resp, http.StatusOK, nil)
	if w, _ := decode(t, "png", b); w != 50 {
		t.Fatalf("presigned variant %d px wide", w)
	}
	for name, c := range map[string]struct {
		edit func(q url.Values)
		want int
	}{
		"changed w":       {func(q url.Values) { q.Set("w", "20") }, http.StatusOK},
		"removed w":       {func(q url.Values) { q.Del("w"); q.Del("f") }, http.StatusOK},
		"added b":         {func(q url.Values) { q.Set("b", "3") }, http.StatusOK},
		"changed expires": {func(q url.Values) { q.Set("X-Amz-Expires", "3600") }, http.StatusForbidden},
		"changed x-id":    {func(q url.Values) { q.Set("x-id", "PutObject") }, http.StatusForbidden},
	} {
		q := u.Query()
		c.edit(q)
		m := *u
		m.RawQuery = q.Encode()
		resp, err := http.Get(m.String())
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != c.want {
			t.Errorf("%s: status %d, want %d", name, resp.StatusCode, c.want)
		}
	}
}

// refusingEngine refuses every transformation with err.
type refusingEngine struct{ err error }

func (e refusingEngine) Transform(context.Context, io.Reader, imaging.Options) (*imaging.Result, error) {
	return nil, e.err
}
func (refusingEngine) Supports(imaging.Format) bool { return true }
func (refusingEngine) Pool() *imaging.Pool          { return imaging.NewPool(1, 1) }
func (refusingEngine) Close() error                 { return nil }

// An engine that cannot work now answers 503 with a Retry-After that says when to
// come back: the queue is full (1 s), or the image worker is held back after failing
// (its wait, rounded up to whole seconds).
func TestTransformUnavailableSaysWhenToRetry(t *testing.T) {
	for _, c := range []struct {
		err  error
		want string
	}{
		{imaging.ErrBusy, "1"},
		{&imaging.RetryLater{After: 2500 * time.Millisecond, Err: coffer.Errorf(coffer.EUNAVAILABLE, "the image worker failed 3 times in a row")}, "3"},
		{&imaging.RetryLater{After: time.Millisecond, Err: coffer.Errorf(coffer.EUNAVAILABLE, "the image worker did not start")}, "1"},
	} {
		e := newEnv(t, envOptions{engine: refusingEngine{c.err}})
		src := e.uploadOne("default", "p.jpg", photo(t, 64, 48))
		resp := e.do("GET", "/v1/files/"+src.ID+"?w=10", nil, true)
		body := mustStatus(t, resp, http.StatusServiceUnavailable, nil)
		if got := resp.Header.Get("Retry-After"); got != c.want {
			t.Errorf("%v: Retry-After %q, want %q", c.err, got, c.want)
		}
		var ce *coffer.Error
		if errors.As(c.err, &ce); !strings.Contains(string(body), `"message":"`+ce.Message+`"`) {
			t.Errorf("%v: body %s", c.err, body)
		}
	}
}

// crashingEngine acts as a worker that dies on sources containing "POISON" (alone in
// it when it dies) and otherwise returns a tiny result. It counts the sources it got.
type crashingEngine struct {
	refusingEngine
	calls atomic.Int64
}

func (e *crashingEngine) Transform(_ context.Context, src io.Reader, o imaging.Options) (*imaging.Result, error) {
	e.calls.Add(1)
	data, _ := io.ReadAll(src)
	if bytes.Contains(data, []byte("POISON")) {
		return nil, &coffer.Error{Code: coffer.EUNAVAILABLE, Message: "the image worker exited during the transformation; retry later",
			Err: &imaging.CrashError{InFlight: 1, Err: errors.New("signal: segmentation fault")}}
	}
	return &imaging.Result{Data: []byte("variant"), Format: imaging.JPEG, Width: o.Width, Height: 1}, nil
}

// An image that crashes the worker twice is quarantined: its transformations answer
// 415 without reaching the worker; other images, the original download and a
// replaced file's new contents are unaffected.
func TestCrashingImageIsQuarantined(t *testing.T) {
	eng := &crashingEngine{}
	e := newEnv(t, envOptions{engine: eng})
	poison := e.uploadOne("default", "p.jpg", append(photo(t, 64, 48), "POISON"...))
	good := e.uploadOne("default", "g.jpg", photo(t, 64, 48))
	get := func(id string, w int) *http.Response {
		return e.do("GET", fmt.Sprintf("/v1/files/%s?w=%d", id, w), nil, true)
	}
	mustStatus(t, get(poison.ID, 10), http.StatusServiceUnavailable, nil)
	mustStatus(t, get(poison.ID, 11), http.StatusServiceUnavailable, nil)
	calls := eng.calls.Load()
	body := mustStatus(t, get(poison.ID, 12), http.StatusUnsupportedMediaType, nil)
	if !strings.Contains(string(body), "crash") {
		t.Errorf("quarantined image: %s", body)
	}
	if eng.calls.Load() != calls {
		t.Error("a quarantined image reached the worker")
	}
	mustStatus(t, get(good.ID, 10), http.StatusOK, nil)
	mustStatus(t, e.do("GET", "/v1/files/"+poison.ID, nil, true), http.StatusOK, nil)

	body2, ctype := multipartBody(part{field: "file", filename: "p.jpg", ctype: "image/jpeg", body: photo(t, 64, 48)})
	mustStatus(t, e.do("PUT", "/v1/files/"+poison.ID, body2, true, "Content-Type", ctype), http.StatusOK, nil)
	mustStatus(t, get(poison.ID, 12), http.StatusOK, nil)
}

// lastByteEngine answers every transformation with the source's last byte.
type lastByteEngine struct{ refusingEngine }

func (lastByteEngine) Transform(_ context.Context, src io.Reader, o imaging.Options) (*imaging.Result, error) {
	data, err := io.ReadAll(src)
	if err != nil || len(data) == 0 {
		return nil, errors.Join(err, errors.New("empty source"))
	}
	return &imaging.Result{Data: data[len(data)-1:], Format: imaging.JPEG, Width: o.Width, Height: 1}, nil
}

// Transformations racing with replacements of their source, as GETs do
// (TestGetDuringReplace): a transformation that read the row before a replacement
// finds the old blob deleted and reads the row again, instead of answering 404 or 500;
// it never answers from a version older than the last finished replacement.
func TestTransformDuringReplace(t *testing.T) {
	e := newEnv(t, envOptions{engine: lastByteEngine{}})
	base := photo(t, 64, 48)
	version := func(i int) []byte { return append(bytes.Clone(base), byte('a'+i)) } // after the JPEG's end
	id := e.uploadOne("default", "p.jpg", version(0)).ID
	var latest atomic.Int64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for g := range 6 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				atLeast := latest.Load()
				resp := e.do("GET", fmt.Sprintf("/v1/files/%s?w=%d", id, 1+g*1000+i), nil, true) // a new variant each time
				b, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				if resp.StatusCode != 200 || len(b) != 1 || int64(b[0]-'a') < atLeast {
					t.Errorf("transformation during a replace: %d %q, after version %d was in place", resp.StatusCode, b, atLeast)
					return
				}
			}
		}()
	}
	for i := 1; i < 16; i++ {
		body, ctype := multipartBody(part{field: "file", filename: "p.jpg", body: version(i)})
		mustStatus(t, e.do("PUT", "/v1/files/"+id, body, true, "Content-Type", ctype), http.StatusOK, nil)
		latest.Store(int64(i))
	}
	close(stop)
	wg.Wait()
}

// userRecordingEngine records the pool user of each transformation and refuses it
// as a user over its share would be.
type userRecordingEngine struct {
	refusingEngine
	mu    sync.Mutex
	users []string
}

func (e *userRecordingEngine) Transform(ctx context.Context, _ io.Reader, _ imaging.Options) (*imaging.Result, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.users = append(e.users, imaging.UserOf(ctx))
	return nil, imaging.ErrUserBusy
}

// Transformations run under a per-user key (the admin, the JWT's user id, else the
// client's address), and a user over its share gets 429 with Retry-After.
func TestTransformPerUserKeyAnd429(t *testing.T) {
	rec := &userRecordingEngine{}
	e := newEnv(t, envOptions{jwtSecret: jwtConfig, rules: matrixRules, engine: rec})
	mustStatus(t, e.do("POST", "/v1/buckets", strings.NewReader(`{"id":"pub","public":true}`), true), 201, nil)
	alice := []string{"Authorization", "Bearer " + token(t, "user", "alice")}
	f := e.uploadOne("pub", "a.jpg", photo(t, 64, 48))
	for _, who := range [][]string{{"X-Hasura-Admin-Secret", adminSecret}, alice, nil} {
		resp := e.doAs("GET", "/v1/files/"+f.ID+"?w=10", nil, who)
		mustStatus(t, resp, http.StatusTooManyRequests, nil)
		if got := resp.Header.Get("Retry-After"); got != "1" {
			t.Errorf("Retry-After %q, want 1", got)
		}
	}
	if got := strings.Join(rec.users, ","); got != "admin,user:alice,ip:127.0.0.1" {
		t.Errorf("users = %s", got)
	}
}
