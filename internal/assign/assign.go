package assign

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
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
		target, step := l.URL, stepOf(l)
		if step == nil {
			target = a.URL
		}
		if err := resolveHeaders(ctx, secrets, m, &a, step, target, l.Secret, *l.Headers); err != nil {
			return a, err
		}
	}
	return a, nil
}

// resolveHeaders replaces Secret references in hs by the Secrets' values
// (agents receive text only) and records each in a.Credentials, bound to
// the origin of target, the URL the list is sent to as the Monitor states
// it: admission and the REST API let that origin change only together with
// the credential, or by someone who may read its Secret. A target whose
// origin is not literal (a step URL that starts with a {{variable}}) binds
// the credential to no origin: the agent then sends it nowhere. step is
// the multistep step's position, nil for config.headers; secret marks a
// step's secrets, recorded as {{name}} (probeapi.SecretVariable).
func resolveHeaders(ctx context.Context, secrets SecretReader, m *monv1.Monitor, a *probeapi.Assignment, step *int, target string, secret bool, hs []monv1.HTTPHeader) error {
	origin, _ := probeapi.Origin(target)
	for i, h := range hs {
		if h.ValueFrom == nil {
			continue
		}
		v, err := secretValue(ctx, secrets, m, h.ValueFrom)
		if err != nil {
			return err
		}
		hs[i].Value, hs[i].ValueFrom = &v, nil
		c := probeapi.Credential{Header: h.Name, Origin: origin}
		if secret {
			c.Header = probeapi.SecretVariable(h.Name)
		}
		if step != nil {
			c.Step = new(int)
			*c.Step = *step
		}
		a.Credentials = append(a.Credentials, c)
	}
	return nil
}

func secretValue(ctx context.Context, secrets SecretReader, m *monv1.Monitor, ref *monv1.SecretKeySelector) (string, error) {
	if err := credentials.KeyReferable(*ref, m); err != nil {
		return "", err
	}
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

// stepOf is the multistep step position of a header list (its Prefix is
// "step" and the position), nil for a list of the config struct itself.
func stepOf(l monitorconfig.HeaderList) *int {
	rest, ok := strings.CutPrefix(l.Prefix, "step")
	if !ok {
		return nil
	}
	n, err := strconv.Atoi(rest)
	if err != nil {
		return nil
	}
	return &n
}
