package access

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"path"
	"strings"
	"sync/atomic"

	"github.com/coffer/coffer"
	"gopkg.in/yaml.v3"
)

// Action is what a caller wants to do with a file.
type Action string

// Actions.
const (
	Upload  Action = "upload"
	Read    Action = "read"
	Replace Action = "replace"
	Delete  Action = "delete"
)

var actionNames = map[string]Action{
	"upload": Upload, "insert": Upload, "read": Read, "select": Read,
	"replace": Replace, "update": Replace, "delete": Delete,
}

// Permission is one role's compiled permission for one action on a bucket.
type Permission struct {
	// Filter selects the existing files the action may touch (read, replace, delete).
	Filter coffer.Expr
	// Check must hold for the file as it will be stored (upload, replace).
	Check coffer.Expr
	// Presets are forced onto uploaded files, whatever the client sent.
	Presets map[string]coffer.Operand
	// MaxSize caps upload size for the role (0: only the bucket's limit).
	MaxSize int64
}

// PresetFields are the fields a preset may set.
var PresetFields = map[string]bool{coffer.FieldUploadedBy: true}

type rule struct {
	role    string
	buckets []string
	perms   map[Action]*Permission
	// at is the rule's path in the document ("rules[2]"); keys the document's
	// spelling of each action's key ("insert" for Upload).
	at   string
	keys map[Action]string
}

// RuleSet is a compiled rules document; safe for concurrent use, never modified.
type RuleSet struct {
	rules []rule
	doc   json.RawMessage
	// writable memoizes Writable by bucket id (the rules never change): a map
	// replaced, never changed, so a hit reads it without a lock or an allocation.
	writable atomic.Pointer[map[string]bool]
}

// Empty is the rule set with no rules: only admins and public-bucket readers get in.
func Empty() *RuleSet { return &RuleSet{doc: json.RawMessage(`{"rules":[]}`)} }

// Document returns the rules as canonical JSON (what Parse was given, normalised).
func (rs *RuleSet) Document() json.RawMessage { return rs.doc }

// Permission returns role's permission for action on bucket, or nil.
func (rs *RuleSet) Permission(role, bucket string, a Action) *Permission {
	if r := rs.match(role, bucket); r != nil {
		return r.perms[a]
	}
	return nil
}

// match returns the rule that decides for role on bucket: the first whose role and
// bucket pattern match; nil if none does.
func (rs *RuleSet) match(role, bucket string) *rule {
	for i := range rs.rules {
		if r := &rs.rules[i]; r.role == role && matchBucket(r.buckets, bucket) {
			return r
		}
	}
	return nil
}

// Decision is what the rules decide for a role's action on a bucket, and where.
type Decision struct {
	// Permission is the role's permission; nil: the action is refused.
	Permission *Permission
	// Path is the deciding rule's path in the document, as Parse's errors name
	// paths: its action ("rules[2].read", the action spelled as in the document)
	// when it grants it, the rule ("rules[2]") when it does not list the action, ""
	// when no rule matches the role and bucket.
	Path string
	// Buckets are the deciding rule's bucket patterns (nil when none decided).
	Buckets []string
}

// Decide returns role's Decision for a on bucket: Permission's answer, with the
// rule that gave it.
func (rs *RuleSet) Decide(role, bucket string, a Action) Decision {
	r := rs.match(role, bucket)
	switch {
	case r == nil:
		return Decision{}
	case r.perms[a] == nil:
		return Decision{Path: r.at, Buckets: r.buckets}
	}
	return Decision{Permission: r.perms[a], Path: r.at + "." + r.keys[a], Buckets: r.buckets}
}

// ParseAction returns the action named s, as a rules document spells it (upload or
// insert, read or select, replace or update, delete) or "create" (upload).
func ParseAction(s string) (Action, bool) {
	if s == "create" {
		return Upload, true
	}
	a, ok := actionNames[s]
	return a, ok
}

// Grants reports whether role has a permission for action on any bucket at all (the
// analogue of a Hasura role with a permission on the files table, whatever its filter).
func (rs *RuleSet) Grants(role string, a Action) bool {
	for i := range rs.rules {
		if rs.rules[i].role == role && rs.rules[i].perms[a] != nil {
			return true
		}
	}
	return false
}

// Writable reports whether a role of the rules may write files in bucket: whether
// the rule that decides for some role on bucket grants it upload or replace. Every
// role counts, "admin" included (its rules decide only when a JWT of the admin role
// is not an admin): false means only the admin writes the bucket. Sites serve the
// files of a writable bucket as the content of any of those roles' users.
func (rs *RuleSet) Writable(bucket string) bool {
	old := rs.writable.Load()
	if old != nil {
		if w, ok := (*old)[bucket]; ok {
			return w
		}
	}
	w := false
	for i := range rs.rules {
		if r := rs.match(rs.rules[i].role, bucket); r == &rs.rules[i] && (r.perms[Upload] != nil || r.perms[Replace] != nil) {
			w = true
			break
		}
	}
	m := make(map[string]bool, 1)
	if old != nil {
		m = maps.Clone(*old)
	}
	m[bucket] = w
	rs.writable.CompareAndSwap(old, &m) // a lost race leaves the other's map; the next miss adds this one
	return w
}

func matchBucket(patterns []string, bucket string) bool {
	for _, p := range patterns {
		if ok, _ := path.Match(p, bucket); ok {
			return true
		}
	}
	return false
}

// Parse reads a rules document in YAML or JSON (JSON is YAML). Errors are EINVALID
// and name the offending path, e.g. rules[1].read.filter.size._gt. The document is
// {rules: [...]} or a bare list; see topLevel for what is refused.
func Parse(doc []byte) (*RuleSet, error) {
	raw, err := oneDocument(doc)
	if err != nil {
		return nil, err
	}
	raw, err = topLevel(normalize(raw))
	if err != nil {
		return nil, err
	}
	list, ok := raw.([]any)
	if !ok {
		return nil, invalid("rules", "must be a list of rules")
	}
	rs := &RuleSet{}
	for i, item := range list {
		r, err := compileRule(item, fmt.Sprintf("rules[%d]", i))
		if err != nil {
			return nil, err
		}
		rs.rules = append(rs.rules, r)
	}
	out, _ := json.Marshal(map[string]any{"rules": list})
	rs.doc = out
	return rs, nil
}

// oneDocument decodes doc, which must hold one YAML or JSON document and nothing
// after it: yaml.Unmarshal alone reads the first of `{...}{...}` or `{...}]` and
// ignores the rest. An empty doc decodes to nil.
func oneDocument(doc []byte) (any, error) {
	dec := yaml.NewDecoder(bytes.NewReader(doc))
	var raw, extra any
	if err := dec.Decode(&raw); err != nil && err != io.EOF {
		return nil, coffer.InvalidField("rules", fmt.Sprintf("rules: not valid YAML or JSON: %v", err))
	}
	if err := dec.Decode(&extra); err != io.EOF {
		return nil, coffer.InvalidField("rules", "rules: not valid YAML or JSON: more than one document, or data after the document")
	}
	return raw, nil
}

// topLevel returns the list of rules of a document: {rules: [...]} or a bare list.
// An empty document, null, a map without "rules" and "rules: null" are refused, so a
// request that lost its body cannot delete every rule: clearing them takes an
// explicit {"rules": []}.
func topLevel(raw any) (any, error) {
	if raw == nil {
		return nil, invalid("rules", `missing: the document is empty or null (send {"rules": []} to remove every rule)`)
	}
	m, ok := raw.(map[string]any)
	if !ok {
		return raw, nil
	}
	if err := onlyKeys(m, "rules", "rules"); err != nil {
		return nil, err
	}
	list, ok := m["rules"]
	if !ok || list == nil {
		return nil, invalid("rules", `missing (send {"rules": []} to remove every rule)`)
	}
	return list, nil
}

// invalid returns the EINVALID error of the document's path at, naming it as Field.
func invalid(at, format string, args ...any) error {
	return coffer.InvalidField(at, at+": "+fmt.Sprintf(format, args...))
}

func onlyKeys(m map[string]any, at string, allowed ...string) error {
	for k := range m {
		ok := false
		for _, a := range allowed {
			ok = ok || k == a
		}
		if !ok {
			return invalid(at+"."+k, "unknown key (allowed: %s)", strings.Join(allowed, ", "))
		}
	}
	return nil
}

func compileRule(item any, at string) (rule, error) {
	m, ok := item.(map[string]any)
	if !ok {
		return rule{}, invalid(at, "must be an object with role, buckets and actions")
	}
	r := rule{perms: map[Action]*Permission{}, at: at, keys: map[Action]string{}}
	role, ok := m["role"].(string)
	if !ok || role == "" {
		return rule{}, invalid(at+".role", "must be a non-empty string")
	}
	r.role = role
	buckets, err := compileBuckets(m["buckets"], at+".buckets")
	if err != nil {
		return rule{}, err
	}
	r.buckets = buckets
	for k, v := range m {
		if k == "role" || k == "buckets" {
			continue
		}
		a, ok := actionNames[k]
		if !ok {
			return rule{}, invalid(at+"."+k, "unknown key (use role, buckets, upload, read, replace, delete)")
		}
		if r.perms[a] != nil {
			return rule{}, invalid(at+"."+k, "action %s given twice", a)
		}
		p, err := compilePermission(a, v, at+"."+k)
		if err != nil {
			return rule{}, err
		}
		r.perms[a], r.keys[a] = p, k
	}
	return r, nil
}

func compileBuckets(v any, at string) ([]string, error) {
	if s, ok := v.(string); ok {
		v = []any{s}
	}
	list, ok := v.([]any)
	if !ok || len(list) == 0 {
		return nil, invalid(at, "must be a bucket id, pattern, or a non-empty list of them")
	}
	out := make([]string, len(list))
	for i, b := range list {
		s, ok := b.(string)
		if _, err := path.Match(s, ""); !ok || s == "" || err != nil {
			return nil, invalid(fmt.Sprintf("%s[%d]", at, i), "must be a bucket id or pattern like \"docs-*\"")
		}
		out[i] = s
	}
	return out, nil
}

func compilePermission(a Action, v any, at string) (*Permission, error) {
	if v == nil {
		v = map[string]any{}
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, invalid(at, "must be an object")
	}
	allowed := map[Action][]string{
		Upload: {"check", "presets", "max_size"}, Read: {"filter"},
		Replace: {"filter", "check"}, Delete: {"filter"},
	}[a]
	if err := onlyKeys(m, at, allowed...); err != nil {
		return nil, err
	}
	p := &Permission{Filter: coffer.And{}, Check: coffer.And{}}
	var err error
	if f, ok := m["filter"]; ok {
		if p.Filter, err = CompileExpr(f, at+".filter"); err != nil {
			return nil, err
		}
	}
	if c, ok := m["check"]; ok {
		if p.Check, err = CompileExpr(c, at+".check"); err != nil {
			return nil, err
		}
	}
	if p.Presets, err = compilePresets(m["presets"], at+".presets"); err != nil {
		return nil, err
	}
	if ms, ok := m["max_size"]; ok {
		n, ok := ms.(int64)
		if !ok || n < 0 {
			return nil, invalid(at+".max_size", "must be a non-negative integer (bytes)")
		}
		p.MaxSize = n
	}
	return p, nil
}

func compilePresets(v any, at string) (map[string]coffer.Operand, error) {
	if v == nil {
		return nil, nil
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, invalid(at, "must be an object of field: value")
	}
	out := map[string]coffer.Operand{}
	for field, val := range m {
		if !PresetFields[field] {
			return nil, invalid(at+"."+field, "cannot be preset (presettable: uploaded_by_user_id)")
		}
		o, err := compileOperand(coffer.FieldKinds[field], val, at+"."+field)
		if err != nil {
			return nil, err
		}
		out[field] = o
	}
	return out, nil
}

// normalize turns YAML's decoded values into JSON-like ones: map[string]any, []any,
// string, bool, int64 for integers, float64 otherwise.
func normalize(v any) any {
	switch t := v.(type) {
	case map[string]any:
		for k, x := range t {
			t[k] = normalize(x)
		}
		return t
	case map[any]any:
		m := make(map[string]any, len(t))
		for k, x := range t {
			m[fmt.Sprint(k)] = normalize(x)
		}
		return m
	case []any:
		for i, x := range t {
			t[i] = normalize(x)
		}
		return t
	case int:
		return int64(t)
	case uint64:
		return float64(t)
	}
	return v
}
