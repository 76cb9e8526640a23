package core

import (
	"context"
	"fmt"
	"net/http"

	"github.com/go-logr/logr"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
	"github.com/uptime-operator/uptime-operator/internal/plans"
	"github.com/uptime-operator/uptime-operator/internal/writethrough"
)

// Deps are what every resource package reads and writes configuration
// with: the custom resources through the process's read-your-writes
// overlay, the plans and the clock. The assembling server makes one and
// hands the same pointer to every resource, so a write of one resource is
// seen by the next read of another.
type Deps struct {
	// Client reads from the cache with this process's recent writes laid
	// over it, and records every write in Overlay.
	Client client.Client
	// Reader reads directly from the API server: an object missing from
	// the cache, the object an update starts from, kinds not cached.
	Reader client.Reader
	// Overlay is the read-your-writes overlay Client writes through.
	Overlay *writethrough.Overlay
	// Plans resolves a workspace's plan.
	Plans *plans.Resolver
	// Clock is the time source.
	Clock clock.PassiveClock
}

// List lists objects of ns from the cache; the overlay lays this process's
// recent writes over it, so a client that creates a monitor and lists
// monitors at once sees it, and one that deletes it twice gets 404 the
// second time.
func (d *Deps) List(ctx context.Context, list client.ObjectList, ns string, opts ...client.ListOption) error {
	if err := d.Client.List(ctx, list, append([]client.ListOption{client.InNamespace(ns)}, opts...)...); err != nil {
		return fmt.Errorf("list %T: %w", list, err)
	}
	return nil
}

// Log is the logger of the API for r.
func Log(r *http.Request) logr.Logger { return LogFrom(r.Context()) }

// LogFrom is the logger of the API for ctx.
func LogFrom(ctx context.Context) logr.Logger { return ctrl.LoggerFrom(ctx).WithName("api") }

// RequireFeature answers 403 FEATURE_NOT_AVAILABLE when the workspace's plan
// lacks f.
func (d *Deps) RequireFeature(ctx context.Context, ns string, f monv1.Feature) *Error {
	plan, err := d.Plans.ForNamespace(ctx, ns)
	if err != nil {
		return NewError(http.StatusInternalServerError, CodeInternal, "could not read the workspace's plan")
	}
	if plans.HasFeature(plan, f) {
		return nil
	}
	required := d.cheapestPlanWith(ctx, f)
	body := ErrorBody{
		Error:   fmt.Sprintf("The %s plan does not include %s", plan.Name, f),
		Code:    CodeFeatureNotAvailable,
		Details: map[string]any{"feature": string(f)},
		Plan:    plan.Name,
	}
	if required != "" {
		body.RequiredPlan = required
		body.UpgradePath = fmt.Sprintf("kubectl label namespace %s %s=%s --overwrite", ns, monv1.PlanLabel, required)
	}
	return &Error{Status: http.StatusForbidden, Body: body}
}

// cheapestPlanWith names the Plan with feature f that grants the fewest
// features (plans carry no price; the smallest plan is the cheapest), ties
// broken by name.
func (d *Deps) cheapestPlanWith(ctx context.Context, f monv1.Feature) string {
	var list monv1.PlanList
	if err := d.Client.List(ctx, &list); err != nil {
		return ""
	}
	best := ""
	bestN := 0
	for _, p := range list.Items {
		if !plans.HasFeature(&p, f) {
			continue
		}
		n := len(p.Spec.Features)
		if best == "" || n < bestN || (n == bestN && p.Name < best) {
			best, bestN = p.Name, n
		}
	}
	return best
}

// WriteFailed maps an error of a create or update to its answer: admission
// refusals to the REST error shapes.
func (d *Deps) WriteFailed(ctx context.Context, ns string, err error, mapPath FieldPathMap) error {
	planName := ""
	if p, perr := d.Plans.ForNamespace(ctx, ns); perr == nil {
		planName = p.Name
	}
	if ae := FromAdmission(err, planName, mapPath); ae != nil {
		return ae
	}
	return err
}
