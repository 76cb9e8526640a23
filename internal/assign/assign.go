package assign

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
	"github.com/uptime-operator/uptime-operator/internal/credentials"
	"github.com/uptime-operator/uptime-operator/internal/monitor"
	"github.com/uptime-operator/uptime-operator/internal/monitorconfig"
	"github.com/uptime-operator/uptime-operator/internal/probeapi"
)

// SecretReader reads Secrets (uncached: the manager caches only API keys).
type SecretReader interface {
	Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error
}

// ToAssignment turns a Monitor into the probe API's assignment, resolving
// header values from Secrets. It fails when a referenced Secret or key is
// missing, or when the Monitor may not read the Secret
// (credentials.Referable: a *credentials.NotAllowedError): such a monitor
// is not assigned until it is fixed (its Configured condition says why).
// The check is repeated here, not only at admission, because a Secret's
// labels and owners can change after the reference was written.
func ToAssignment(ctx context.Context, secrets SecretReader, m *monv1.Monitor) (probeapi.Assignment, error) {
	s := &m.Spec
	a := probeapi.Assignment{
		ID:              string(m.UID),
		Namespace:       m.Namespace,
		Name:            m.Name,
		Type:            string(s.Type),
		URL:             s.URL,
		IntervalSeconds: int(monitor.IntervalSeconds(m)),
		TimeoutMs:       int(monitor.EffectiveTimeoutMs(s)),
		Regions:         slices.Clone(monitor.Regions(m)),
		Generation:      m.Generation,
	}
	if a.IntervalSeconds == 0 {
		a.IntervalSeconds = 120
	}
	a.Config = monitorconfig.Only(s)
	for _, l := range monitorconfig.HeaderLists(&a.Config) {
		if err := resolveHeaders(ctx, secrets, m, *l.Headers); err != nil {
			return a, err
		}
	}
	return a, nil
}

// resolveHeaders replaces Secret references in hs by the Secrets' values:
// agents receive text only.
func resolveHeaders(ctx context.Context, secrets SecretReader, m *monv1.Monitor, hs []monv1.HTTPHeader) error {
	for i, h := range hs {
		if h.ValueFrom == nil {
			continue
		}
		v, err := secretValue(ctx, secrets, m, h.ValueFrom)
		if err != nil {
			return err
		}
		hs[i].Value, hs[i].ValueFrom = &v, nil
	}
	return nil
}

func secretValue(ctx context.Context, secrets SecretReader, m *monv1.Monitor, ref *monv1.SecretKeySelector) (string, error) {
	var sec corev1.Secret
	if err := secrets.Get(ctx, client.ObjectKey{Namespace: m.Namespace, Name: ref.Name}, &sec); err != nil {
		return "", fmt.Errorf("read secret %s: %w", ref.Name, err)
	}
	if err := credentials.Referable(&sec, m); err != nil {
		return "", err
	}
	v, ok := sec.Data[ref.Key]
	if !ok {
		return "", fmt.Errorf("secret %s has no key %s", ref.Name, ref.Key)
	}
	return string(v), nil
}

// Revision is a stable digest of an assignment list: agents long-poll until
// it changes.
func Revision(list []probeapi.Assignment) string {
	raw, _ := json.Marshal(list)
	sum := sha256.Sum256(raw)
	return hex.EncodeToString(sum[:12])
}

// ForRegion lists the assignments of region among monitors: every active,
// non-cron monitor whose regions include it, sorted by id. A monitor's
// regions come from regions (see monitor.RegionResolver: a Monitor is
// assigned as soon as it is in the cache, not once its status is written);
// nil regions reads them from the monitor alone (monitor.Regions).
// Monitors whose Secrets cannot be read are left out until they can;
// skipped reports each with the reason.
func ForRegion(ctx context.Context, secrets SecretReader, monitors []monv1.Monitor, region string,
	regions *monitor.RegionResolver, skipped func(m *monv1.Monitor, err error)) []probeapi.Assignment {
	out := []probeapi.Assignment{}
	for i := range monitors {
		m := &monitors[i]
		if m.Spec.Paused || m.Spec.Type == monv1.MonitorCron || !m.DeletionTimestamp.IsZero() {
			continue
		}
		rs := regions.Regions(ctx, m)
		if !slices.Contains(rs, region) {
			continue
		}
		a, err := ToAssignment(ctx, secrets, m)
		if err != nil {
			if skipped != nil {
				skipped(m, err)
			}
			continue
		}
		a.Regions = slices.Clone(rs)
		out = append(out, a)
	}
	slices.SortFunc(out, func(a, b probeapi.Assignment) int { return strings.Compare(a.ID, b.ID) })
	return out
}
