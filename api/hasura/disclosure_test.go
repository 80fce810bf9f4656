package hasura_test

import (
	"bytes"
	"net/http"
	"strings"
	"testing"

	"github.com/coffer/coffer"
)

// uploadWithID uploads one file with a client-chosen id into bucket "priv" as auth.
func (e *env) uploadWithID(auth, id string) *http.Response {
	e.t.Helper()
	body, ctype := uploadBody(id)
	return e.do("POST", "/v1/files", body, false, "Content-Type", ctype, "Authorization", auth)
}

// uploadBody is a one-file upload into bucket "priv" with a client-chosen id.
func uploadBody(id string) (*bytes.Buffer, string) {
	return multipartBody(part{field: "bucket-id", body: []byte("priv")},
		part{field: "metadata[]", body: []byte(`{"id":"` + id + `","name":"n.txt"}`)},
		part{field: "file[]", filename: "n.txt", body: []byte("mine")})
}

// A user who uploads with a client-chosen id that is taken learns that it is taken and
// nothing more: the answer is the same whether the file is their own or another
// user's they may not read (and does not repeat the id), while GET of another user's
// file stays a 404 like a missing one. The admin still gets the plain conflict.
func TestClientChosenIDConflictRevealsNothing(t *testing.T) {
	e, alice := hotEnv(t)
	bob := "Bearer " + token(t, "user", "bob")
	alices := coffer.NewFileID()
	mustStatus(t, e.uploadWithID(alice, alices), http.StatusCreated, nil)
	bobs := coffer.NewFileID()
	mustStatus(t, e.uploadWithID(bob, bobs), http.StatusCreated, nil)

	other := string(mustStatus(t, e.uploadWithID(bob, alices), http.StatusConflict, nil))
	own := string(mustStatus(t, e.uploadWithID(bob, bobs), http.StatusConflict, nil))
	if other != own {
		t.Errorf("taken by another user: %s\ntaken by the caller: %s", other, own)
	}
	if strings.Contains(other, alices) {
		t.Errorf("the answer names the other user's file: %s", other)
	}
	missing := mustError(t, e.do("GET", "/v1/files/"+coffer.NewFileID(), nil, false, "Authorization", bob), http.StatusNotFound)
	hidden := mustError(t, e.do("GET", "/v1/files/"+alices, nil, false, "Authorization", bob), http.StatusNotFound)
	if missing != hidden {
		t.Errorf("GET of another user's file %q, of a missing one %q", hidden, missing)
	}
	body, ctype := uploadBody(alices)
	admin := mustStatus(t, e.do("POST", "/v1/files", body, true, "Content-Type", ctype), http.StatusConflict, nil)
	if !strings.Contains(string(admin), alices+" already exists") {
		t.Errorf("the admin's conflict: %s", admin)
	}
}
