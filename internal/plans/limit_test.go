package plans

import (
	"errors"
	"fmt"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// TestLimitErrorThroughAdmission: the refusal admission makes with Field
// reaches the REST API as a status cause, and LimitErrorFrom reads the same
// error back, also behind other causes and wrapped.
func TestLimitErrorThroughAdmission(t *testing.T) {
	gk := schema.GroupKind{Group: "monitoring.uptime-operator.io", Kind: "StatusPage"}
	for _, want := range []LimitError{{Resource: "monitors", Current: 3, Limit: 3}, {Resource: "status pages", Current: 12, Limit: 10}} {
		spec := field.NewPath("spec")
		errs := field.ErrorList{field.Required(spec.Child("title"), ""), want.Field(spec)}
		err := fmt.Errorf("create: %w", apierrors.NewInvalid(gk, "x", errs))
		got, ok := LimitErrorFrom(err)
		if !ok || *got != want {
			t.Fatalf("LimitErrorFrom(%v) = %+v, %v; want %+v", err, got, ok, want)
		}
		if msg := errs[1].ErrorBody(); msg != "Forbidden: "+want.Error()+" (ENTITLEMENT_LIMIT_REACHED)" {
			t.Errorf("admission message = %q", msg)
		}
	}
	if got := (&LimitError{Resource: "status pages", Current: 1, Limit: 1}).Key(); got != "status_pages" {
		t.Errorf("Key = %q", got)
	}
}

func TestLimitErrorFromOtherErrors(t *testing.T) {
	in := &LimitError{Resource: "monitors", Current: 1, Limit: 1}
	if got, ok := LimitErrorFrom(fmt.Errorf("wrapped: %w", in)); !ok || got != in {
		t.Errorf("in-process error not found: %v %v", got, ok)
	}
	spec := field.NewPath("spec")
	for _, err := range []error{
		errors.New("plan limit reached: 1 of 1 monitors (ENTITLEMENT_LIMIT_REACHED)"),
		apierrors.NewInvalid(schema.GroupKind{Kind: "Monitor"}, "x", field.ErrorList{field.Forbidden(spec, "needs a plan with white-label (WHITE_LABEL_NOT_ENTITLED)")}),
		apierrors.NewInvalid(schema.GroupKind{Kind: "Monitor"}, "x", field.ErrorList{field.Forbidden(spec, "plan limit reached: many of 1 monitors (ENTITLEMENT_LIMIT_REACHED)")}),
		apierrors.NewInvalid(schema.GroupKind{Kind: "Monitor"}, "x", field.ErrorList{field.Invalid(spec, 1, "plan limit reached: 1 of 1 monitors (ENTITLEMENT_LIMIT_REACHED)")}),
	} {
		if got, ok := LimitErrorFrom(err); ok {
			t.Errorf("LimitErrorFrom(%v) = %+v, want none", err, got)
		}
	}
}
