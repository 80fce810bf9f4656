package remote

import (
	"errors"
	"time"

	"github.com/coffer/coffer"
	"github.com/coffer/coffer/imaging"
	"github.com/coffer/coffer/imaging/remote/imagerpc"
)

// protocol is the version this package speaks (Hello.protocol). Version 2 sends the
// transform as its canonical string (Request.transform) instead of an Options message.
const protocol = 2

// errorToProto keeps the code and client message of a coffer.Error; other errors
// (a context error of a cancelled request, a bug) become EINTERNAL.
func errorToProto(err error) *imagerpc.Error {
	var ce *coffer.Error
	if !errors.As(err, &ce) {
		return &imagerpc.Error{Code: coffer.EINTERNAL, Message: "image transformation failed", Detail: err.Error()}
	}
	p := &imagerpc.Error{Code: ce.Code, Message: ce.Message}
	if ce.Err != nil {
		p.Detail = ce.Err.Error()
	}
	return p
}

// errorFromProto rebuilds the coffer.Error; an unknown or empty code is EINTERNAL.
func errorFromProto(p *imagerpc.Error) error {
	e := &coffer.Error{Code: p.GetCode(), Message: p.GetMessage()}
	if !knownCode(e.Code) {
		e.Code = coffer.EINTERNAL
	}
	if p.GetDetail() != "" {
		e.Err = errors.New(p.GetDetail())
	}
	return e
}

func knownCode(c string) bool {
	switch c {
	case coffer.EINVALID, coffer.EUNAUTHORIZED, coffer.EFORBIDDEN, coffer.ENOTFOUND, coffer.ECONFLICT,
		coffer.EPRECONDITION, coffer.ETOOLARGE, coffer.EUNSUPPORTED, coffer.ERANGE, coffer.EINTERNAL,
		coffer.ENOTIMPLEMENTED, coffer.EUNAVAILABLE, coffer.ETOOMANY, coffer.EINUSE, coffer.EABORTED:
		return true
	}
	return false
}

func stepsToProto(steps []imaging.StepTiming) []*imagerpc.Step {
	out := make([]*imagerpc.Step, len(steps))
	for i, s := range steps {
		out[i] = &imagerpc.Step{Name: s.Name, Nanos: int64(s.Duration)}
	}
	return out
}

func stepsFromProto(steps []*imagerpc.Step) []imaging.StepTiming {
	out := make([]imaging.StepTiming, len(steps))
	for i, s := range steps {
		out[i] = imaging.StepTiming{Name: s.GetName(), Duration: time.Duration(s.GetNanos())}
	}
	return out
}
