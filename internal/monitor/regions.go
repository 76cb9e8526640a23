package monitor

import (
	"context"
	"fmt"
	"slices"

	"sigs.k8s.io/controller-runtime/pkg/client"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
	"github.com/uptime-operator/uptime-operator/internal/plans"
)

// RegionCodes lists the codes of every ProbeRegion, sorted.
func RegionCodes(ctx context.Context, r client.Reader) ([]string, error) {
	var list monv1.ProbeRegionList
	if err := r.List(ctx, &list); err != nil {
		return nil, fmt.Errorf("list probe regions: %w", err)
	}
	codes := make([]string, 0, len(list.Items))
	for _, pr := range list.Items {
		codes = append(codes, RegionCode(&pr))
	}
	slices.Sort(codes)
	return codes, nil
}

// RegionCode is a region's code: spec.code, else its name.
func RegionCode(pr *monv1.ProbeRegion) string {
	if pr.Spec.Code != "" {
		return pr.Spec.Code
	}
	return pr.Name
}

// RegionResolver gives each monitor the regions it runs in, also before
// the Monitor controller wrote them to its status: its spec's, else its
// plan's default among the regions that exist, the value the controller
// will write. The controller's status writes are paced (after a bulk
// create or a restart a first write can come minutes later), and nothing
// that schedules a monitor waits for them. One resolver serves one pass
// over many monitors: it reads the regions once and each namespace's plan
// once.
type RegionResolver struct {
	Reader client.Reader
	Plans  *plans.Resolver

	available []string
	loaded    bool
	plans     map[string]*monv1.Plan
}

// Regions returns m's regions; nil when they cannot be read yet (the
// caller leaves m out of this pass).
func (r *RegionResolver) Regions(ctx context.Context, m *monv1.Monitor) []string {
	if rs := Regions(m); len(rs) > 0 || m.Spec.Type == monv1.MonitorCron || r == nil || r.Plans == nil {
		return rs
	}
	if !r.loaded {
		codes, err := RegionCodes(ctx, r.Reader)
		if err != nil {
			return nil
		}
		r.available, r.loaded = codes, true
	}
	plan, ok := r.plans[m.Namespace]
	if !ok {
		var err error
		if plan, err = r.Plans.ForNamespace(ctx, m.Namespace); err != nil {
			return nil
		}
		if r.plans == nil {
			r.plans = map[string]*monv1.Plan{}
		}
		r.plans[m.Namespace] = plan
	}
	return EffectiveRegions(&m.Spec, plan, r.available)
}
