package sites

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"time"

	"github.com/coffer/coffer/site"
	"github.com/coffer/coffer/webhook"
)

// Outbound purge notifications: each is tried purgeHookAttempts times, purgeHookGap
// apart, then given up (logged). They are best effort: a CDN that misses one
// serves its copy until its own TTL; they are not kept in the webhook outbox.
const (
	purgeHookAttempts = 3
	purgeHookGap      = 2 * time.Second
	purgeHookTimeout  = 10 * time.Second
)

// purgeNotice is the body POSTed to a site's purge webhooks.
type purgeNotice struct {
	Tenant   string   `json:"tenant"`
	Site     string   `json:"site"`
	Hosts    []string `json:"hosts"`
	Paths    []string `json:"paths,omitempty"`
	Prefixes []string `json:"prefixes,omitempty"`
	Tags     []string `json:"tags,omitempty"`
	Time     string   `json:"time"`
}

// tellWebhooks POSTs the purge p of e to its purge webhooks, in the background,
// signed with each webhook's secret (webhook.SignatureHeader) when it has one.
func (st *Runtime) tellWebhooks(e *siteEntry, p site.Purge) {
	body, _ := json.Marshal(purgeNotice{Tenant: e.tenant, Site: e.row.ID, Hosts: e.row.Hosts, Paths: p.Paths,
		Prefixes: p.Prefixes, Tags: p.Tags, Time: time.Now().UTC().Format(time.RFC3339)})
	for _, h := range e.doc.PurgeWebhooks {
		err := st.needSealer(h.Secret, "purgeWebhooks.secret")
		secret := ""
		if err == nil {
			secret, err = h.OpenSecret(st.opt.Sealer, e.tenant)
		}
		if err != nil {
			st.log.Warn("purge webhook skipped: its secret cannot be opened", "site", e.row.ID, "err", err)
			continue
		}
		st.hooks.Go(func() { st.postPurge(h.URL, secret, body) })
	}
}

// postPurge sends one purge notification, retrying a few times.
func (st *Runtime) postPurge(url, secret string, body []byte) {
	for attempt := 1; attempt <= purgeHookAttempts; attempt++ {
		if err := st.postOnce(url, secret, body); err == nil {
			return
		} else if attempt == purgeHookAttempts {
			st.log.Warn("purge webhook failed; given up", "url", url, "err", err)
			return
		}
		select {
		case <-st.ctx.Done():
			return
		case <-time.After(purgeHookGap):
		}
	}
}

// postOnce sends body to url once; an answer other than 2xx is an error.
func (st *Runtime) postOnce(url, secret string, body []byte) error {
	ctx, cancel := context.WithTimeout(st.ctx, purgeHookTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	if secret != "" {
		req.Header.Set(webhook.SignatureHeader, webhook.Sign(secret, time.Now(), body))
	}
	resp, err := st.client.Do(req)
	if err != nil {
		return err
	}
	resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("answered %d", resp.StatusCode)
	}
	return nil
}
