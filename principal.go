package coffer

// Principal is who makes a request, as the auth layer established it.
type Principal struct {
	Role   string // "admin" for the admin secret, else the JWT role or the anonymous role
	UserID string // the SessionUserID variable, "" if none
	Admin  bool   // bypasses all rules
	// Anonymous is true when the request carried no credentials at all.
	Anonymous bool
	Session   map[string]string // session variables (SessionVarPrefix names), lower-case keys
}

// Session variable names. They are the rules language's, Hasura's permission syntax
// (a rule compares a file's column with "X-Hasura-User-Id"), which every face
// evaluates alike; a name starts with SessionVarPrefix in any case.
const (
	SessionVarPrefix = "x-hasura-"
	SessionRole      = "x-hasura-role"    // the principal's role
	SessionUserID    = "x-hasura-user-id" // the principal's user id
)

// AdminRole is Hasura's admin role: the admin secret's role, and (unless turned off)
// a JWT acting as this role has every permission too.
const AdminRole = "admin"

// AdminPrincipal is the principal of a request carrying the admin secret.
func AdminPrincipal() *Principal { return &Principal{Role: AdminRole, Admin: true} }

// AnonymousPrincipal is the principal of a request without credentials.
func AnonymousPrincipal(role string) *Principal {
	return &Principal{Role: role, Anonymous: true, Session: map[string]string{SessionRole: role}}
}
