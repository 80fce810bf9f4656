package hasura

import (
	"io"
	"net/http"

	"github.com/coffer/coffer"
)

// maxRulesBytes bounds a rules document.
const maxRulesBytes = 1 << 20

// getRules serves GET /v1/rules: the rules in force, as JSON (admin).
func (h *Handler) getRules(w http.ResponseWriter, r *http.Request) {
	doc, err := h.svc.Rules(principal(r))
	if err != nil {
		writeError(w, r, err)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(doc)
}

// putRules serves PUT /v1/rules: replace the rules with a YAML or JSON document
// (admin). Validation errors are 400 and name the offending path.
func (h *Handler) putRules(w http.ResponseWriter, r *http.Request) {
	doc, err := io.ReadAll(io.LimitReader(r.Body, maxRulesBytes+1))
	if err != nil {
		writeError(w, r, coffer.Errorf(coffer.EINVALID, "reading the rules: %v", err))
		return
	}
	if len(doc) > maxRulesBytes {
		writeError(w, r, coffer.Errorf(coffer.ETOOLARGE, "rules document larger than %d bytes", maxRulesBytes))
		return
	}
	if err := h.svc.SetRules(r.Context(), principal(r), doc); err != nil {
		writeError(w, r, err)
		return
	}
	h.getRules(w, r)
}
