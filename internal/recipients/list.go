package recipients

import (
	"context"
	"slices"
	"strings"

	"sigs.k8s.io/controller-runtime/pkg/client"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
)

// Sources of a recipient: which kind of resource names the address.
const (
	SourceMonitor    = "monitor"
	SourceGroup      = "group"
	SourceChannel    = "alert_channel"
	SourceEscalation = "escalation_policy"
	SourceOnCall     = "on_call_schedule"
)

// Recipient is one alert email address of a namespace.
type Recipient struct {
	Namespace string
	// Email is the address as first written in a resource.
	Email string
	// Sources are the kinds of resource naming the address, in the order of
	// the Source constants, each once.
	Sources []string
}

// Key is the case-insensitive identity of an address.
func Key(email string) string { return strings.ToLower(strings.TrimSpace(email)) }

// List returns the alert email addresses named by the resources of
// namespace (every namespace's when empty): monitors', groups', email
// channels', escalation steps' and on-call schedule participants' (rotation
// and overrides), each address once per namespace, in that order. Deleted objects still in the cache are skipped.
func List(ctx context.Context, r client.Reader, namespace string) ([]Recipient, error) {
	var monitors monv1.MonitorList
	var groups monv1.MonitorGroupList
	var channels monv1.AlertChannelList
	var policies monv1.EscalationPolicyList
	var schedules monv1.OnCallScheduleList
	for _, l := range []client.ObjectList{&monitors, &groups, &channels, &policies, &schedules} {
		if err := r.List(ctx, l, client.InNamespace(namespace), client.UnsafeDisableDeepCopy); err != nil {
			return nil, err
		}
	}
	var out []Recipient
	index := map[[2]string]int{}
	add := func(obj client.Object, email, source string) {
		if obj.GetDeletionTimestamp() != nil || strings.TrimSpace(email) == "" {
			return
		}
		k := [2]string{obj.GetNamespace(), Key(email)}
		i, ok := index[k]
		if !ok {
			i = len(out)
			index[k] = i
			out = append(out, Recipient{Namespace: obj.GetNamespace(), Email: strings.TrimSpace(email)})
		}
		if !slices.Contains(out[i].Sources, source) {
			out[i].Sources = append(out[i].Sources, source)
		}
	}
	for i := range monitors.Items {
		for _, e := range monitors.Items[i].Spec.NotificationEmails {
			add(&monitors.Items[i], e, SourceMonitor)
		}
	}
	for i := range groups.Items {
		for _, e := range groups.Items[i].Spec.NotificationEmails {
			add(&groups.Items[i], e, SourceGroup)
		}
	}
	for i := range channels.Items {
		if channels.Items[i].Spec.Type == monv1.ChannelEmail {
			for _, e := range channels.Items[i].Spec.Emails {
				add(&channels.Items[i], e, SourceChannel)
			}
		}
	}
	for i := range policies.Items {
		for _, st := range policies.Items[i].Spec.Steps {
			for _, e := range st.Emails {
				add(&policies.Items[i], e, SourceEscalation)
			}
		}
	}
	for i := range schedules.Items {
		sched := &schedules.Items[i]
		for _, p := range sched.Spec.Participants {
			add(sched, p.Email, SourceOnCall)
		}
		for _, o := range sched.Spec.Overrides {
			add(sched, o.Participant.Email, SourceOnCall)
		}
	}
	return out, nil
}
