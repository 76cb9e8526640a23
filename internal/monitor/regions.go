package monitor

import (
	"context"
	"fmt"
	"slices"

	"sigs.k8s.io/controller-runtime/pkg/client"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
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
