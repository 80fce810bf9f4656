package auth

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/coffer/coffer"
)

// DefaultClaimsNamespace is where Hasura looks for the x-hasura-* claims by default.
const DefaultClaimsNamespace = "https://hasura.io/jwt/claims"

// Claim names with a meaning of their own; every other x-hasura-* claim is a
// session variable.
const (
	claimDefaultRole  = "x-hasura-default-role"
	claimAllowedRoles = "x-hasura-allowed-roles"
	claimUserID       = "x-hasura-user-id"
	claimRole         = "x-hasura-role"
	hasuraPrefix      = "x-hasura-"
)

// JWTConfig is a parsed and validated JWT secret in Hasura's JSON form (the value
// of --jwt-secret). Build it with ParseJWTConfig.
type JWTConfig struct {
	Type                string                  // signing algorithm of Key (HS256 ... EdDSA); with JWKURL optional
	Key                 string                  // HMAC secret or PEM public key / certificate
	JWKURL              string                  // JWKS endpoint (http or https); exclusive with Key
	Audience            []string                // accepted "aud" values (any of them); empty: not checked
	Issuer              string                  // required "iss"; "": not checked
	ClaimsNamespace     string                  // top-level claim holding the x-hasura-* claims
	ClaimsNamespacePath string                  // JSON path to that object instead, e.g. "$.hasura.claims"
	ClaimsFormat        string                  // "json" (default) or "stringified_json"
	ClaimsMap           map[string]ClaimMapping // lower-case x-hasura-* name → where to find it
	RequireExp          bool                    // refuse tokens without "exp" (default true)
	AllowedSkew         time.Duration           // clock leeway for exp/nbf/iat (default 0)

	methods []string // algorithms a token may use
	key     any      // parsed Key; nil with JWKURL
	nsPath  jsonPath // parsed ClaimsNamespacePath; nil when unset
}

// String describes c without its key, so logging a config cannot leak an HMAC
// secret.
func (c *JWTConfig) String() string {
	src := "jwk_url=" + c.JWKURL
	if c.JWKURL == "" {
		src = "key=<redacted>"
	}
	return fmt.Sprintf("JWTConfig{type=%s %s audience=%v issuer=%q}", c.Type, src, c.Audience, c.Issuer)
}

// ClaimMapping says where one claims_map entry takes its value: a JSON path into
// the whole claim set (with an optional default), or a literal value.
type ClaimMapping struct {
	Path       string // "" for a literal
	Default    any    // used when Path finds nothing, if HasDefault
	HasDefault bool
	Literal    any // the value when Path == ""

	path jsonPath
}

// rawJWTConfig is the JSON form. Unknown fields are refused so a typo
// ("audiance") is an error, not a silently unchecked audience.
type rawJWTConfig struct {
	Type                string                     `json:"type"`
	Key                 string                     `json:"key"`
	JWKURL              string                     `json:"jwk_url"`
	Audience            json.RawMessage            `json:"audience"`
	Issuer              string                     `json:"issuer"`
	ClaimsNamespace     *string                    `json:"claims_namespace"`
	ClaimsNamespacePath *string                    `json:"claims_namespace_path"`
	ClaimsFormat        string                     `json:"claims_format"`
	ClaimsMap           map[string]json.RawMessage `json:"claims_map"`
	RequireExp          *bool                      `json:"require_exp"`
	AllowedSkew         *float64                   `json:"allowed_skew"`
	Header              *struct {
		Type string `json:"type"`
	} `json:"header"`
}

// Algorithm families.
var (
	hmacAlgs  = []string{"HS256", "HS384", "HS512"}
	rsaAlgs   = []string{"RS256", "RS384", "RS512", "PS256", "PS384", "PS512"}
	ecAlgs    = []string{"ES256", "ES384", "ES512"}
	edAlgs    = []string{"EdDSA"}
	asymAlgs  = concat(rsaAlgs, ecAlgs, edAlgs)
	validAlgs = concat(hmacAlgs, asymAlgs)
)

func concat(ss ...[]string) []string {
	var out []string
	for _, s := range ss {
		out = append(out, s...)
	}
	return out
}

func jwtInvalid(format string, args ...any) error {
	return coffer.Errorf(coffer.EINVALID, "jwt secret: "+format, args...)
}

// ParseJWTConfig parses and validates s, Hasura's JSON JWT secret. Errors are
// EINVALID and name the bad field; none repeats the key.
func ParseJWTConfig(s string) (*JWTConfig, error) {
	var raw rawJWTConfig
	if err := decodeStrict(s, &raw); err != nil {
		return nil, err
	}
	c := &JWTConfig{
		Type: raw.Type, Key: raw.Key, JWKURL: raw.JWKURL, Issuer: raw.Issuer,
		ClaimsNamespace: DefaultClaimsNamespace, ClaimsFormat: "json", RequireExp: true,
	}
	steps := []func(*rawJWTConfig) error{
		c.parseSource, c.parseAudience, c.parseNamespace, c.parseClaimsMap, c.parseMisc,
	}
	for _, step := range steps {
		if err := step(&raw); err != nil {
			return nil, err
		}
	}
	return c, nil
}

// decodeStrict decodes one JSON object into raw, refusing unknown fields and
// trailing data.
func decodeStrict(s string, raw *rawJWTConfig) error {
	dec := json.NewDecoder(strings.NewReader(s))
	dec.DisallowUnknownFields()
	if err := dec.Decode(raw); err != nil {
		var te *json.UnmarshalTypeError
		switch {
		case errors.As(err, &te) && te.Field != "":
			return jwtInvalid("field %q has the wrong type (want %s)", te.Field, te.Type)
		case strings.HasPrefix(err.Error(), "json: unknown field"):
			return jwtInvalid("%s", strings.TrimPrefix(err.Error(), "json: "))
		}
		return jwtInvalid("not a JSON object: %v", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return jwtInvalid("trailing data after the JSON object")
	}
	return nil
}

// parseSource checks type, key and jwk_url and parses the key.
func (c *JWTConfig) parseSource(*rawJWTConfig) error {
	switch {
	case c.Key != "" && c.JWKURL != "":
		return jwtInvalid(`"key" and "jwk_url" are mutually exclusive`)
	case c.Key == "" && c.JWKURL == "":
		return jwtInvalid(`one of "key" or "jwk_url" is required`)
	case c.Type != "" && !slices.Contains(validAlgs, c.Type):
		return jwtInvalid(`"type" %q is not supported (want one of %s)`, c.Type, strings.Join(validAlgs, ", "))
	}
	if c.JWKURL != "" {
		return c.parseJWKURL()
	}
	if c.Type == "" {
		return jwtInvalid(`"type" is required with "key"`)
	}
	key, err := parseKey(c.Type, c.Key)
	if err != nil {
		return jwtInvalid(`"key": %v`, err)
	}
	c.key, c.methods = key, []string{c.Type}
	return nil
}

// parseJWKURL checks the JWKS URL. Only asymmetric algorithms may be used with a
// JWKS, so a token signed with HMAC can never be checked against a public key.
func (c *JWTConfig) parseJWKURL() error {
	u, err := url.Parse(c.JWKURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return jwtInvalid(`"jwk_url" must be an absolute http or https URL`)
	}
	switch {
	case c.Type == "":
		c.methods = asymAlgs
	case slices.Contains(hmacAlgs, c.Type):
		return jwtInvalid(`"type" %s cannot be used with "jwk_url": JWKS keys must be asymmetric`, c.Type)
	default:
		c.methods = []string{c.Type}
	}
	return nil
}

// parseAudience accepts a string or an array of non-empty strings.
func (c *JWTConfig) parseAudience(raw *rawJWTConfig) error {
	if len(raw.Audience) == 0 || string(raw.Audience) == "null" {
		return nil
	}
	var one string
	if json.Unmarshal(raw.Audience, &one) == nil {
		c.Audience = []string{one}
	} else if json.Unmarshal(raw.Audience, &c.Audience) != nil {
		return jwtInvalid(`"audience" must be a string or an array of strings`)
	}
	if len(c.Audience) == 0 {
		return jwtInvalid(`"audience" must not be an empty array`)
	}
	for _, a := range c.Audience {
		if a == "" {
			return jwtInvalid(`"audience" must not contain an empty string`)
		}
	}
	return nil
}

// parseNamespace handles claims_namespace, claims_namespace_path and claims_format.
func (c *JWTConfig) parseNamespace(raw *rawJWTConfig) error {
	if raw.ClaimsNamespace != nil && raw.ClaimsNamespacePath != nil {
		return jwtInvalid(`"claims_namespace" and "claims_namespace_path" are mutually exclusive`)
	}
	if raw.ClaimsNamespace != nil {
		if *raw.ClaimsNamespace == "" {
			return jwtInvalid(`"claims_namespace" must not be empty`)
		}
		c.ClaimsNamespace = *raw.ClaimsNamespace
	}
	if raw.ClaimsNamespacePath != nil {
		p, err := parseJSONPath(*raw.ClaimsNamespacePath)
		if err != nil {
			return jwtInvalid(`"claims_namespace_path": %v`, err)
		}
		c.ClaimsNamespace, c.ClaimsNamespacePath, c.nsPath = "", *raw.ClaimsNamespacePath, p
	}
	switch raw.ClaimsFormat {
	case "", "json":
	case "stringified_json":
		c.ClaimsFormat = raw.ClaimsFormat
	default:
		return jwtInvalid(`"claims_format" must be "json" or "stringified_json"`)
	}
	return nil
}

// parseMisc handles require_exp, allowed_skew and header.
func (c *JWTConfig) parseMisc(raw *rawJWTConfig) error {
	if raw.RequireExp != nil {
		c.RequireExp = *raw.RequireExp
	}
	if s := raw.AllowedSkew; s != nil {
		if math.IsNaN(*s) || *s < 0 || *s > 3600 {
			return jwtInvalid(`"allowed_skew" must be between 0 and 3600 seconds`)
		}
		c.AllowedSkew = time.Duration(*s * float64(time.Second))
	}
	if raw.Header != nil && !strings.EqualFold(raw.Header.Type, "Authorization") {
		return jwtInvalid(`"header": only {"type":"Authorization"} is supported`)
	}
	return nil
}

// parseClaimsMap parses claims_map: names are x-hasura-* (any case, stored lower
// case); a value is {"path": "$...", "default": v}, a string starting with "$"
// (a path), or any other JSON value (a literal, as in Hasura).
func (c *JWTConfig) parseClaimsMap(raw *rawJWTConfig) error {
	if len(raw.ClaimsMap) == 0 {
		return nil
	}
	c.ClaimsMap = make(map[string]ClaimMapping, len(raw.ClaimsMap))
	for name, v := range raw.ClaimsMap {
		lname := strings.ToLower(name)
		if !strings.HasPrefix(lname, hasuraPrefix) || lname == claimRole {
			return jwtInvalid(`"claims_map": %q is not a mappable x-hasura-* name`, name)
		}
		if _, dup := c.ClaimsMap[lname]; dup {
			return jwtInvalid(`"claims_map": %q is listed twice`, lname)
		}
		m, err := parseClaimMapping(lname, v)
		if err != nil {
			return jwtInvalid(`"claims_map" %q: %v`, lname, err)
		}
		c.ClaimsMap[lname] = m
	}
	return nil
}

func parseClaimMapping(name string, v json.RawMessage) (ClaimMapping, error) {
	var m ClaimMapping
	val, err := decodeJSONValue(v)
	if err != nil {
		return m, err
	}
	switch val := val.(type) {
	case map[string]any:
		return objectMapping(val)
	case string:
		if strings.HasPrefix(val, "$") {
			m.Path = val
			m.path, err = parseJSONPath(val)
			return m, err
		}
	}
	m.Literal = val
	return m, checkLiteral(name, val)
}

// objectMapping parses {"path": "$...", "default": v}.
func objectMapping(o map[string]any) (ClaimMapping, error) {
	var m ClaimMapping
	for k := range o {
		if k != "path" && k != "default" {
			return m, fmt.Errorf("unknown field %q (want \"path\" and optional \"default\")", k)
		}
	}
	p, ok := o["path"].(string)
	if !ok {
		return m, errors.New(`"path" must be a string`)
	}
	path, err := parseJSONPath(p)
	if err != nil {
		return m, err
	}
	m.Path, m.path = p, path
	m.Default, m.HasDefault = o["default"]
	return m, nil
}

// checkLiteral checks literal role values at startup rather than per request.
func checkLiteral(name string, v any) error {
	switch name {
	case claimDefaultRole:
		if s, ok := v.(string); !ok || s == "" {
			return errors.New("literal default role must be a non-empty string")
		}
	case claimAllowedRoles:
		if _, err := roleList(v); err != nil {
			return errors.New("literal allowed roles must be a non-empty array of strings")
		}
	}
	return nil
}

// decodeJSONValue decodes one JSON value, keeping numbers exact.
func decodeJSONValue(b []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	return v, nil
}
