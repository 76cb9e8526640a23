package credentials

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
)

// Which Secrets a Monitor may read.
//
// The manager resolves a header's valueFrom with its own permission to read
// Secrets, and sends the value to the monitor's target. Whoever may write a
// Monitor would otherwise read, through the manager, every Secret of the
// namespace, including those RBAC keeps from them (a confused deputy). So a
// Monitor may read only
//
//   - its own credentials Secret (SecretName, made by the REST API and
//     owned by the Monitor's UID: IsOwn), and
//   - Secrets that opt in with monv1.CredentialsLabel: "true", a label only
//     someone who may write the Secret can set;
//
// and never a Secret the operator made for something else (signing
// secrets, status page passwords, channel credentials, API keys, other
// Monitors' credentials), labelled or not. The rule is checked where a
// reference is written (admission, REST) and again where it is resolved
// (assignments, run-check), so a Secret relabelled since is refused too.

// NotAllowedError says why a Monitor may not read a Secret.
type NotAllowedError struct {
	// Secret is the Secret's name.
	Secret string
	// Reason completes "secret <name> may not be used by this monitor: ".
	Reason string
}

func (e *NotAllowedError) Error() string {
	return fmt.Sprintf("secret %s may not be used by this monitor: %s", e.Secret, e.Reason)
}

// Referable returns nil when Monitor m may read Secret sec through a
// header's valueFrom, else a *NotAllowedError that says why. m may be
// unsaved (no UID yet, as in admission of a create).
func Referable(sec *corev1.Secret, m *monv1.Monitor) error {
	if why := madeByOperator(sec, m); why != "" {
		return &NotAllowedError{Secret: sec.Name, Reason: why}
	}
	if IsOwn(sec, m) || sec.Labels[monv1.CredentialsLabel] == monv1.CredentialsLabelValue {
		return nil
	}
	return &NotAllowedError{Secret: sec.Name, Reason: fmt.Sprintf(
		"it is not the monitor's own credentials Secret and does not opt in with the label %s=%q",
		monv1.CredentialsLabel, monv1.CredentialsLabelValue)}
}

// IsOwn reports whether sec is m's own credentials Secret: named
// SecretName(m.Name) and made for this very Monitor, which its UID proves:
// sec is owned by m's UID. A name proves nothing: a Monitor deleted with
// --cascade=orphan leaves its Secret behind, labelled with the name and
// with no owner (the garbage collector removes the owner reference), and
// a Monitor created again under that name must not inherit it; nor may
// naming a Monitor after someone's Secret give it that Secret.
//
// One Secret is own without the UID: one the REST API made for m a moment
// before creating it (Pending), which the API owns by m's UID once m
// exists and then unmarks.
func IsOwn(sec *corev1.Secret, m *monv1.Monitor) bool {
	if sec.Name != SecretName(m.Name) {
		return false
	}
	for _, o := range sec.OwnerReferences {
		if isMonitorOwner(o) && ownerIs(o, m) {
			return true
		}
	}
	return Pending(sec, m.Name)
}

// Pending reports whether sec is a credentials Secret the REST API made
// for the Monitor named name while creating it: labelled with the name,
// marked monv1.CredentialsPendingAnnotation, owned by no Monitor yet. The
// API owns it and clears the mark right after the create; a Secret left
// marked (the manager stopped between the two writes) would be honoured
// for the next Monitor of the name, which is why only the REST API, which
// then writes the values anew, sets it.
func Pending(sec *corev1.Secret, name string) bool {
	if sec.Labels[monv1.CredentialsOfLabel] != name || sec.Annotations[monv1.CredentialsPendingAnnotation] != "true" {
		return false
	}
	for _, o := range sec.OwnerReferences {
		if isMonitorOwner(o) {
			return false
		}
	}
	return true
}

// madeByOperator says why sec is a Secret the operator made for something
// other than m, or "" when it is not.
func madeByOperator(sec *corev1.Secret, m *monv1.Monitor) string {
	for _, o := range sec.OwnerReferences {
		gv, err := schema.ParseGroupVersion(o.APIVersion)
		if err != nil || gv.Group != monv1.GroupVersion.Group {
			continue
		}
		if isMonitorOwner(o) && ownerIs(o, m) {
			continue
		}
		return fmt.Sprintf("it belongs to %s %s", o.Kind, o.Name)
	}
	if of, ok := sec.Labels[monv1.CredentialsOfLabel]; ok && of != m.Name {
		return fmt.Sprintf("it holds the credentials of monitor %s", of)
	} else if ok && !IsOwn(sec, m) {
		return fmt.Sprintf("it holds the credentials of an earlier monitor named %s and is not owned by this one (uid %s)", of, uidOrNew(m))
	}
	if sec.Labels[monv1.ManagedByLabel] == monv1.ManagedByValue {
		return "the operator made it for its own use"
	}
	if strings.HasPrefix(string(sec.Type), "uptime-operator.io/") {
		return fmt.Sprintf("the operator made it (type %s)", sec.Type)
	}
	return ""
}

func isMonitorOwner(o metav1.OwnerReference) bool {
	gv, err := schema.ParseGroupVersion(o.APIVersion)
	return err == nil && gv.Group == monv1.GroupVersion.Group && o.Kind == "Monitor"
}

// ownerIs reports whether owner reference o names m, by UID: a Monitor
// being created (no UID yet) owns nothing.
func ownerIs(o metav1.OwnerReference, m *monv1.Monitor) bool {
	return m.UID != "" && o.UID == m.UID
}

func uidOrNew(m *monv1.Monitor) string {
	if m.UID == "" {
		return "not assigned yet"
	}
	return string(m.UID)
}

// Reference is a header of a Monitor spec whose value comes from a Secret.
type Reference struct {
	// Path is the header's field path in the Monitor (spec.http.headers[0]).
	Path *field.Path
	// List is the header's list: "http", "step<N>" or "mcp".
	List string
	// Header is the header's name.
	Header string
	// Secret is the Secret key the value is read from.
	Secret monv1.SecretKeySelector
	// URL is where the header is sent (the monitor's or the step's url).
	URL string
	// Was is, for a reference NewReferences returns because its header
	// moved to another origin, the URL it was sent to before the write;
	// empty for a reference the write adds.
	Was string
}

// References lists every header of spec whose value comes from a Secret,
// in the order of the spec.
func References(spec *monv1.MonitorSpec) []Reference {
	var out []Reference
	for _, l := range headerLists(spec) {
		for i, h := range l.headers {
			if h.ValueFrom != nil {
				out = append(out, Reference{Path: l.path.Index(i), List: l.prefix, Header: h.Name, Secret: *h.ValueFrom, URL: l.url})
			}
		}
	}
	return out
}

// NewReferences lists the references of spec that were not in was (nil
// when the Monitor is new): the ones this write makes. A reference kept as
// it was, to the same origin, is not the writer's doing, and refusing it
// would block every other change of a Monitor whose Secret lost its label;
// one whose header now goes to another origin is new.
func NewReferences(spec, was *monv1.MonitorSpec) []Reference {
	old := map[string]string{}
	if was != nil {
		for _, r := range References(was) {
			old[r.key()] = r.URL
		}
	}
	var out []Reference
	for _, r := range References(spec) {
		if u, ok := old[r.key()]; !ok || !SameOrigin(u, r.URL) {
			if ok {
				r.Was = u
			}
			out = append(out, r)
		}
	}
	return out
}

func (r Reference) key() string {
	return r.List + "\x00" + strings.ToLower(r.Header) + "\x00" + r.Secret.Name + "\x00" + r.Secret.Key
}
