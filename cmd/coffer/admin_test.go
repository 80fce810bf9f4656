package main

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"connectrpc.com/connect"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
)

// TestAdminCredentials: every call carries the admin secret and the token given.
func TestAdminCredentials(t *testing.T) {
	var got http.Header
	srv := httptest.NewServer(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) { got = r.Header.Clone() }))
	defer srv.Close()
	c := &adminConfig{Server: srv.URL, AdminSecret: "s3cret", Token: "a.b.c"}
	resp, err := c.client().Get(c.base() + "/x")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if got.Get("X-Hasura-Admin-Secret") != "s3cret" || got.Get("Authorization") != "Bearer a.b.c" {
		t.Fatalf("headers %v", got)
	}
}

// TestAdminFlags: --server must be a URL, --output table or json (JSON when stdout
// is not a terminal, as under go test).
func TestAdminFlags(t *testing.T) {
	for _, tc := range []struct {
		c    adminConfig
		ok   bool
		want string
	}{
		{adminConfig{Server: "http://127.0.0.1:8000"}, true, "json"},
		{adminConfig{Server: "http://127.0.0.1:8000", Output: "table"}, true, "table"},
		{adminConfig{Server: "http://127.0.0.1:8000", Output: "yaml"}, false, ""},
		{adminConfig{Server: "127.0.0.1:8000"}, false, ""},
	} {
		err := tc.c.check()
		if (err == nil) != tc.ok || tc.ok && tc.c.Output != tc.want {
			t.Errorf("%+v: %v", tc.c, err)
		}
	}
}

// TestCallError: a call's error is one line with its code, and the field of a
// BadRequest detail when the message does not name it.
func TestCallError(t *testing.T) {
	ce := connect.NewError(connect.CodeInvalidArgument, errors.New("must be between 1 and 604800\nseconds"))
	d, err := connect.NewErrorDetail(&errdetails.BadRequest{FieldViolations: []*errdetails.BadRequest_FieldViolation{{Field: "downloadExpiration"}}})
	if err != nil {
		t.Fatal(err)
	}
	ce.AddDetail(d)
	if got := callError(ce).Error(); got != "invalid_argument: downloadExpiration: must be between 1 and 604800 seconds" {
		t.Errorf("got %q", got)
	}
	if got := callError(connect.NewError(connect.CodeUnimplemented, errors.New(""))).Error(); !strings.Contains(got, "--default-tenant-hosts") {
		t.Errorf("a bare 404: %q", got)
	}
	if callError(nil) != nil {
		t.Error("no error made one")
	}
}
