package plans

import (
	"errors"
	"fmt"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// CodeLimitReached is the specification's code of a reached plan limit
// (403 ENTITLEMENT_LIMIT_REACHED on the REST API).
const CodeLimitReached = "ENTITLEMENT_LIMIT_REACHED"

// LimitError is a plan limit reached: a workspace has Current of at most
// Limit Resource and may not create another. Admission refuses the create
// with it (Field) and the REST API answers it (LimitErrorFrom), so both
// doors say the same thing in the same words.
type LimitError struct {
	// Resource is what is counted, as the message says it: "monitors",
	// "status pages".
	Resource string
	Current  int
	Limit    int
}

func (e *LimitError) Error() string {
	return fmt.Sprintf("plan limit reached: %d of %d %s", e.Current, e.Limit, e.Resource)
}

// Key is Resource as an identifier: "status_pages".
func (e *LimitError) Key() string { return strings.ReplaceAll(e.Resource, " ", "_") }

// limitSuffix ends the admission message of a limit, so kubectl users read
// the code too and the REST API finds the refusal among the causes.
const limitSuffix = " (" + CodeLimitReached + ")"

// Field is e as an admission refusal of path (Forbidden).
func (e *LimitError) Field(path *field.Path) *field.Error {
	return field.Forbidden(path, e.Error()+limitSuffix)
}

// LimitErrorFrom finds the LimitError in err: the error itself, or the
// cause of an API server refusal that Field made (admission runs behind
// the API server, so the REST API sees it as a status cause). It is the
// one reader of the message Field writes.
func LimitErrorFrom(err error) (*LimitError, bool) {
	var le *LimitError
	if errors.As(err, &le) {
		return le, true
	}
	var status apierrors.APIStatus
	if !errors.As(err, &status) || status.Status().Details == nil {
		return nil, false
	}
	for _, c := range status.Status().Details.Causes {
		if le, ok := LimitErrorFromCause(c); ok {
			return le, true
		}
	}
	return nil, false
}

// LimitErrorFromCause decodes one cause of an API server refusal: the
// Forbidden field error Field made.
func LimitErrorFromCause(c metav1.StatusCause) (*LimitError, bool) {
	if c.Type != metav1.CauseType(field.ErrorTypeForbidden) {
		return nil, false
	}
	msg, ok := strings.CutSuffix(c.Message, limitSuffix)
	if !ok {
		return nil, false
	}
	msg, ok = strings.CutPrefix(msg, field.ErrorTypeForbidden.String()+": ")
	if !ok {
		return nil, false
	}
	var le LimitError
	rest, ok := strings.CutPrefix(msg, "plan limit reached: ")
	if !ok {
		return nil, false
	}
	if n, err := fmt.Sscanf(rest, "%d of %d", &le.Current, &le.Limit); n != 2 || err != nil {
		return nil, false
	}
	if _, le.Resource, ok = strings.Cut(strings.SplitN(rest, " of ", 2)[1], " "); !ok || le.Resource == "" {
		return nil, false
	}
	return &le, true
}
