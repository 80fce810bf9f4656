// Package access holds coffer's permission rules: for each role and bucket pattern, per
// action, a filter in Hasura's boolean-expression language over file fields with
// session variables, plus presets, a check and a size cap for uploads. It is pure: it
// parses and compiles rules and answers questions about them, with no I/O.
//
// A rules document (YAML or JSON):
//
//	rules:
//	  - role: user
//	    buckets: [profile-pics]          # exact ids or path.Match patterns like "docs-*"
//	    upload:                          # also spelled insert
//	      presets: {uploaded_by_user_id: X-Hasura-User-Id}
//	      check: {size: {_lte: 5000000}}
//	      max_size: 5000000
//	    read:                            # also spelled select
//	      filter: {uploaded_by_user_id: {_eq: X-Hasura-User-Id}}
//	    replace:                         # also spelled update
//	      filter: {uploaded_by_user_id: {_eq: X-Hasura-User-Id}}
//	    delete:
//	      filter: {uploaded_by_user_id: {_eq: X-Hasura-User-Id}}
//
// For a role and bucket the first rule whose role and bucket pattern match decides;
// an action it does not list is refused. Strings starting with "x-hasura-" (any case)
// are session variables.
package access
