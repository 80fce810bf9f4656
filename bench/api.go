package bench

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
)

// apiClient calls the coffer API of one target for setup, uploads and cleanup.
type apiClient struct {
	base   string // http://host:port, no trailing slash
	client *http.Client
	cred   credentials
}

func newAPIClient(base string, client *http.Client, cred credentials) *apiClient {
	return &apiClient{base: strings.TrimRight(base, "/"), client: client, cred: cred}
}

// send makes one request; size is the body's length (-1 unknown, 0 none).
func (a *apiClient) send(ctx context.Context, method, path string, body io.Reader, ctype string, size int64) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, method, a.base+path, body)
	if err != nil {
		return nil, err
	}
	a.cred.apply(req.Header)
	if ctype != "" {
		req.Header.Set("Content-Type", ctype)
	}
	if body != nil {
		req.ContentLength = size
	}
	return a.client.Do(req)
}

// call sends a request, wants status want and decodes a JSON answer into out (if
// not nil). Any other status is an error carrying the server's message.
func (a *apiClient) call(ctx context.Context, method, path string, body io.Reader, ctype string, size int64, want int, out any) error {
	resp, err := a.send(ctx, method, path, body, ctype, size)
	if err != nil {
		return fmt.Errorf("%s %s: %w", method, path, err)
	}
	defer resp.Body.Close()
	lr := io.LimitReader(resp.Body, 1<<20)
	if resp.StatusCode != want {
		msg, _ := io.ReadAll(lr)
		return fmt.Errorf("%s %s: %s: %s", method, path, resp.Status, strings.TrimSpace(string(msg)))
	}
	if out != nil {
		if err := json.NewDecoder(lr).Decode(out); err != nil {
			return fmt.Errorf("%s %s: reading the answer: %w", method, path, err)
		}
	}
	_, _ = io.Copy(io.Discard, lr)
	return nil
}

// maxBenchUpload is the upload limit of a bucket the run creates (above every
// fixture, below nothing the scenarios send).
const maxBenchUpload = 100 * 1000 * 1000

// createBucket creates a private bucket id that takes every fixture size.
func (a *apiClient) createBucket(ctx context.Context, id string) error {
	body := fmt.Sprintf(`{"id":%q,"maxUploadFileSize":%d}`, id, maxBenchUpload)
	return a.call(ctx, http.MethodPost, "/v1/buckets", strings.NewReader(body), "application/json",
		int64(len(body)), http.StatusCreated, nil)
}

func (a *apiClient) deleteBucket(ctx context.Context, id string) error {
	return a.call(ctx, http.MethodDelete, "/v1/buckets/"+id, nil, "", 0, http.StatusNoContent, nil)
}

// uploadFixture uploads f into bucket and returns the new file's id.
func (a *apiClient) uploadFixture(ctx context.Context, bucket string, f Fixture) (string, error) {
	body, ctype, size := multipartBody(bucket, f.Name, f)
	defer body.Close()
	var out struct {
		ProcessedFiles []struct {
			ID string `json:"id"`
		} `json:"processedFiles"`
	}
	if err := a.call(ctx, http.MethodPost, "/v1/files", body, ctype, size, http.StatusCreated, &out); err != nil {
		return "", fmt.Errorf("uploading fixture %s: %w", f.Name, err)
	}
	if len(out.ProcessedFiles) != 1 || out.ProcessedFiles[0].ID == "" {
		return "", fmt.Errorf("uploading fixture %s: the answer names %d files", f.Name, len(out.ProcessedFiles))
	}
	return out.ProcessedFiles[0].ID, nil
}

func (a *apiClient) deleteFile(ctx context.Context, id string) error {
	return a.call(ctx, http.MethodDelete, "/v1/files/"+id, nil, "", 0, http.StatusNoContent, nil)
}

// processMetrics are the Prometheus process collector's figures.
type processMetrics struct {
	RSSBytes   float64
	CPUSeconds float64
}

// scrapeMetrics reads process_resident_memory_bytes and process_cpu_seconds_total
// from the target's /metrics; ok is false when the target has no such endpoint.
func (a *apiClient) scrapeMetrics(ctx context.Context) (m processMetrics, ok bool) {
	resp, err := a.send(ctx, http.MethodGet, "/metrics", nil, "", 0)
	if err != nil {
		return m, false
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return m, false
	}
	var seen int
	sc := bufio.NewScanner(io.LimitReader(resp.Body, 8<<20))
	for sc.Scan() {
		name, val, found := strings.Cut(sc.Text(), " ")
		v, err := strconv.ParseFloat(strings.TrimSpace(val), 64)
		if !found || err != nil {
			continue
		}
		switch name {
		case "process_resident_memory_bytes":
			m.RSSBytes, seen = v, seen+1
		case "process_cpu_seconds_total":
			m.CPUSeconds, seen = v, seen+1
		}
	}
	return m, seen == 2
}
