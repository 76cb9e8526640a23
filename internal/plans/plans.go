// Package plans resolves the Plan that governs a workspace (namespace) and
// answers the questions admission, controllers and the REST API ask of it:
// which features it grants, which regions it allows, and its limits.
package plans

import (
	"context"
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
)

// API-wide bounds that apply whatever the plan says.
const (
	// MinInterval is the shortest interval the API accepts.
	MinInterval = 15
	// DefaultInterval is the interval of a monitor that names none, unless the
	// plan's minimum is higher.
	DefaultInterval = 120
	// UnlimitedName is the name reported for the built-in plan used when no
	// Plan object applies.
	UnlimitedName = "unlimited"
)

// Resolver finds the effective plan of a namespace.
type Resolver struct {
	// Reader reads Namespaces and Plans.
	Reader client.Reader
	// DefaultPlan is the Plan used by namespaces without the plan label.
	// Empty, or naming a Plan that does not exist, means the built-in
	// unlimited plan.
	DefaultPlan string
}

// ForNamespace returns the Plan in force for namespace ns. It never returns
// nil: without a matching Plan object the built-in unlimited plan applies, so
// a fresh install works before any Plan is created.
func (r *Resolver) ForNamespace(ctx context.Context, ns string) (*monv1.Plan, error) {
	name := r.DefaultPlan
	var namespace corev1.Namespace
	if err := r.Reader.Get(ctx, client.ObjectKey{Name: ns}, &namespace); err == nil {
		if v := namespace.Labels[monv1.PlanLabel]; v != "" {
			name = v
		}
	} else if !apierrors.IsNotFound(err) {
		return nil, fmt.Errorf("get namespace %s: %w", ns, err)
	}
	if name == "" {
		return Unlimited(), nil
	}
	var plan monv1.Plan
	if err := r.Reader.Get(ctx, client.ObjectKey{Name: name}, &plan); err != nil {
		if apierrors.IsNotFound(err) {
			return Unlimited(), nil
		}
		return nil, fmt.Errorf("get plan %s: %w", name, err)
	}
	return &plan, nil
}

// Unlimited is the built-in plan: every feature, no limits.
func Unlimited() *monv1.Plan {
	p := &monv1.Plan{}
	p.Name = UnlimitedName
	p.Spec.DisplayName = "Unlimited"
	p.Spec.Features = AllFeatures()
	return p
}

// AllFeatures lists every feature a plan can grant.
func AllFeatures() []monv1.Feature {
	return []monv1.Feature{
		monv1.FeatureStatusPages, monv1.FeatureWhiteLabel, monv1.FeatureWebhooks,
		monv1.FeatureSMS, monv1.FeatureSLO, monv1.FeatureDependencies,
		monv1.FeatureDeployEvents, monv1.FeatureWebsiteHealth,
		monv1.FeatureThirdPartyStatus, monv1.FeatureAIAssist, monv1.FeatureTelemetryExport,
	}
}

// HasFeature reports whether p grants f.
func HasFeature(p *monv1.Plan, f monv1.Feature) bool {
	return slices.Contains(p.Spec.Features, f)
}

// MinIntervalSeconds is the shortest interval p allows.
func MinIntervalSeconds(p *monv1.Plan) int32 {
	return max(MinInterval, p.Spec.Limits.MinIntervalSeconds)
}

// DefaultIntervalSeconds is the interval of a monitor that names none.
func DefaultIntervalSeconds(p *monv1.Plan) int32 {
	return max(DefaultInterval, MinIntervalSeconds(p))
}

// RegionAllowed reports whether p lets monitors use region code.
func RegionAllowed(p *monv1.Plan, code string) bool {
	return len(p.Spec.Regions) == 0 || slices.Contains(p.Spec.Regions, code)
}

// DefaultRegions returns the regions a monitor that names none is checked
// from: the plan's default regions, else every allowed region among
// available, capped at the plan's location limit. available must be sorted.
func DefaultRegions(p *monv1.Plan, available []string) []string {
	var out []string
	if len(p.Spec.DefaultRegions) > 0 {
		out = slices.Clone(p.Spec.DefaultRegions)
	} else {
		for _, code := range available {
			if RegionAllowed(p, code) {
				out = append(out, code)
			}
		}
	}
	if limit := int(p.Spec.Limits.ProbeLocations); limit > 0 && len(out) > limit {
		out = out[:limit]
	}
	return out
}
