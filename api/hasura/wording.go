package hasura

import (
	"errors"

	"github.com/coffer/coffer"
	"github.com/coffer/coffer/service"
)

// message is err's client-safe message in this face's words. The service's messages
// name no face's credentials; where this face names its own, it rewords the error,
// found by its typed cause (never by its text).
func message(err error) string {
	if errors.Is(err, service.ErrAdminRequired) {
		return "this action needs the admin secret (x-hasura-admin-secret)"
	}
	return coffer.ErrorMessage(err)
}
