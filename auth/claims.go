package auth

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/coffer/coffer"
)

// principal maps the claims of a verified token to a principal. roleHeader (the
// x-hasura-role request header, "" if none) picks a role other than the default;
// it must be among the allowed roles.
func (c *JWTConfig) principal(claims map[string]any, roleHeader string) (*coffer.Principal, error) {
	vars, err := c.hasuraClaims(claims)
	if err != nil {
		return nil, err
	}
	allowed, err := roleList(vars[claimAllowedRoles])
	if err != nil {
		return nil, tokenError(claimAllowedRoles+" "+err.Error(), nil)
	}
	role, ok := vars[claimDefaultRole].(string)
	switch {
	case vars[claimDefaultRole] == nil:
		return nil, tokenError(claimDefaultRole+" claim is missing", nil)
	case !ok || role == "":
		return nil, tokenError(claimDefaultRole+" must be a non-empty string", nil)
	case !slices.Contains(allowed, role):
		return nil, tokenError(fmt.Sprintf("default role %q is not in %s", clip(role), claimAllowedRoles), nil)
	}
	if roleHeader != "" && roleHeader != role {
		if !slices.Contains(allowed, roleHeader) {
			return nil, coffer.Errorf(coffer.EFORBIDDEN, "role %q is not allowed", clip(roleHeader))
		}
		role = roleHeader
	}
	session := sessionVars(vars)
	session[claimRole] = role
	return &coffer.Principal{Role: role, UserID: session[claimUserID], Session: session}, nil
}

// hasuraClaims collects the x-hasura-* claims (lower-case names) from the
// namespace object, then from claims_map, which wins for the names it lists.
func (c *JWTConfig) hasuraClaims(claims map[string]any) (map[string]any, error) {
	vars := map[string]any{}
	ns, found, err := c.namespace(claims)
	if err != nil {
		return nil, err
	}
	if !found && len(c.ClaimsMap) == 0 {
		return nil, tokenError("claims namespace "+c.namespaceName()+" not found", nil)
	}
	if found {
		obj, ok := ns.(map[string]any)
		if !ok {
			return nil, tokenError("claims namespace "+c.namespaceName()+" is not a JSON object", nil)
		}
		for k, v := range obj {
			lk := strings.ToLower(k)
			if !strings.HasPrefix(lk, hasuraPrefix) {
				continue
			}
			// Names differing only in case would make the winner depend on map order.
			if _, dup := vars[lk]; dup {
				return nil, tokenError(fmt.Sprintf("claim %q appears twice", clip(lk)), nil)
			}
			vars[lk] = v
		}
	}
	for name, m := range c.ClaimsMap {
		v, ok := m.resolve(claims)
		if !ok {
			return nil, tokenError(fmt.Sprintf("claim %s not found at %s (claims_map)", name, m.Path), nil)
		}
		vars[name] = v
	}
	return vars, nil
}

// namespace finds the namespace object; found is false when it is absent or null.
func (c *JWTConfig) namespace(claims map[string]any) (v any, found bool, err error) {
	if c.ClaimsNamespacePath != "" {
		v, found = c.nsPath.lookup(claims)
	} else {
		v, found = claims[c.ClaimsNamespace]
	}
	if !found || v == nil {
		return nil, false, nil
	}
	if c.ClaimsFormat == "stringified_json" {
		s, ok := v.(string)
		if !ok {
			return nil, false, tokenError("claims namespace "+c.namespaceName()+" must be a JSON string", nil)
		}
		if v, err = decodeJSONValue([]byte(s)); err != nil {
			return nil, false, tokenError("claims namespace "+c.namespaceName()+" is not valid JSON", nil)
		}
	}
	return v, true, nil
}

func (c *JWTConfig) namespaceName() string {
	if c.ClaimsNamespacePath != "" {
		return c.ClaimsNamespacePath
	}
	return strconv.Quote(c.ClaimsNamespace)
}

// resolve returns the mapped value: the literal, the value at the path, or the
// default when the path finds nothing (or null).
func (m ClaimMapping) resolve(claims map[string]any) (any, bool) {
	if m.Path == "" {
		return m.Literal, true
	}
	if v, ok := m.path.lookup(claims); ok && v != nil {
		return v, true
	}
	if m.HasDefault {
		return m.Default, true
	}
	return nil, false
}

// roleList checks an allowed-roles value: a non-empty array of non-empty strings.
func roleList(v any) ([]string, error) {
	if v == nil {
		return nil, errors.New("claim is missing")
	}
	arr, ok := v.([]any)
	if !ok || len(arr) == 0 {
		return nil, errors.New("must be a non-empty array of strings")
	}
	roles := make([]string, 0, len(arr))
	for _, r := range arr {
		s, ok := r.(string)
		if !ok || s == "" {
			return nil, errors.New("must be a non-empty array of strings")
		}
		roles = append(roles, s)
	}
	return roles, nil
}

// sessionVars turns the x-hasura-* claims into session variables. The role
// claims are not variables (x-hasura-role is set by the caller); null values are
// left out.
func sessionVars(vars map[string]any) map[string]string {
	s := make(map[string]string, len(vars)+1)
	for name, v := range vars {
		if v == nil || name == claimDefaultRole || name == claimAllowedRoles || name == claimRole {
			continue
		}
		s[name] = sessionValue(v)
	}
	return s
}

// sessionValue renders a claim value as Hasura does: strings as is, numbers and
// booleans as their JSON text, arrays as Postgres array literals ({a,b}),
// objects as compact JSON.
func sessionValue(v any) string {
	switch v := v.(type) {
	case string:
		return v
	case json.Number:
		return v.String()
	case bool:
		return strconv.FormatBool(v)
	case float64:
		return strconv.FormatFloat(v, 'f', -1, 64)
	case []any:
		return pgArray(v)
	}
	b, err := json.Marshal(v)
	if err != nil {
		return ""
	}
	return string(b)
}

// pgArray renders a as a Postgres array literal; nested arrays nest and JSON
// null becomes NULL.
func pgArray(a []any) string {
	var b strings.Builder
	b.WriteByte('{')
	for i, e := range a {
		if i > 0 {
			b.WriteByte(',')
		}
		switch e := e.(type) {
		case nil:
			b.WriteString("NULL")
		case []any:
			b.WriteString(pgArray(e))
		default:
			b.WriteString(pgQuote(sessionValue(e)))
		}
	}
	b.WriteByte('}')
	return b.String()
}

// pgQuote double-quotes an array element when Postgres would otherwise misread
// it: empty, NULL, or containing braces, commas, quotes, backslashes or spaces.
func pgQuote(s string) string {
	if s != "" && !strings.EqualFold(s, "NULL") && !strings.ContainsAny(s, "{},\"\\ \t\n\r\v\f") {
		return s
	}
	r := strings.NewReplacer(`\`, `\\`, `"`, `\"`)
	return `"` + r.Replace(s) + `"`
}

// clip shortens client-supplied text quoted in error messages.
func clip(s string) string {
	const max = 64
	if len(s) <= max {
		return s
	}
	return s[:max] + "..."
}
