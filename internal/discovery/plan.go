package discovery

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
)

// Claim is which template serves an object, and what was wrong with the
// object's annotations on the way.
type Claim struct {
	// Template is the name of the serving template, "" for none.
	Template string
	// Warnings are annotations that could not be read (ignored).
	Warnings []string
}

// Selects reports whether t's selector selects src (its kind included).
// A template without a selector selects nothing by label.
func Selects(t *monv1.MonitorTemplate, src *Source) bool {
	if t.Spec.Selector == nil {
		return false
	}
	if len(t.Spec.Kinds) > 0 && !slices.Contains(t.Spec.Kinds, src.Kind) {
		return false
	}
	sel, err := metav1.LabelSelectorAsSelector(t.Spec.Selector)
	if err != nil {
		return false
	}
	return sel.Matches(labels.Set(src.Labels))
}

// ClaimOf returns the template of the namespace's templates that serves
// src. An object opted out (uptime-operator.io/monitor: "false") has none.
// Otherwise the template named by uptime-operator.io/monitor-template
// serves it, whether it selects it or not; else the oldest template
// (by creation, then name) whose selector selects it; else, when it opts
// in with uptime-operator.io/monitor: "true", the implicit template
// (monv1.ImplicitTemplateName), which the controller creates when missing.
// One template per object: two templates never make Monitors of one
// object.
func ClaimOf(templates []monv1.MonitorTemplate, src *Source) Claim {
	var c Claim
	optIn := false
	switch v, ok := src.Annotations[monv1.MonitorAnnotation]; {
	case !ok:
	case v == "false":
		return c
	case v == "true":
		optIn = true
	default:
		c.Warnings = append(c.Warnings, fmt.Sprintf("annotation %s: %q is neither \"true\" nor \"false\"; ignored", monv1.MonitorAnnotation, v))
	}
	if name, ok := src.Annotations[monv1.MonitorTemplateAnnotation]; ok {
		for _, t := range templates {
			if t.Name == name && t.DeletionTimestamp.IsZero() {
				c.Template = name
				return c
			}
		}
		c.Warnings = append(c.Warnings, fmt.Sprintf("annotation %s: no MonitorTemplate %q in the namespace; ignored", monv1.MonitorTemplateAnnotation, name))
	}
	var best *monv1.MonitorTemplate
	for i := range templates {
		t := &templates[i]
		if !t.DeletionTimestamp.IsZero() || !Selects(t, src) {
			continue
		}
		if best == nil || t.CreationTimestamp.Before(&best.CreationTimestamp) ||
			(t.CreationTimestamp.Equal(&best.CreationTimestamp) && t.Name < best.Name) {
			best = t
		}
	}
	switch {
	case best != nil:
		c.Template = best.Name
	case optIn:
		c.Template = monv1.ImplicitTemplateName
	}
	return c
}

// Overrides are the per-object annotations that change what a template
// makes.
type Overrides struct {
	// Path replaces the object's paths ("" keeps them).
	Path string
	// IntervalSeconds replaces the template's interval (0 keeps it).
	IntervalSeconds int32
	// StatusPage replaces the name of the StatusPage the Monitors join
	// ("" keeps the template's).
	StatusPage string
}

// ParseOverrides reads the override annotations; a value that cannot be
// read is ignored with a warning, never an error: an annotation must not
// block the object it is on.
func ParseOverrides(ann map[string]string) (Overrides, []string) {
	var o Overrides
	var warnings []string
	if v, ok := ann[monv1.MonitorPathAnnotation]; ok {
		if plainPath.MatchString(v) && len(v) <= 1024 {
			o.Path = v
		} else {
			warnings = append(warnings, fmt.Sprintf("annotation %s: %q is not a URL path starting with /; ignored", monv1.MonitorPathAnnotation, v))
		}
	}
	if v, ok := ann[monv1.MonitorIntervalAnnotation]; ok {
		n, err := strconv.Atoi(strings.TrimSuffix(v, "s"))
		if err == nil && n >= 15 && n <= 900 {
			o.IntervalSeconds = int32(n)
		} else {
			warnings = append(warnings, fmt.Sprintf("annotation %s: %q is not a number of seconds between 15 and 900; ignored", monv1.MonitorIntervalAnnotation, v))
		}
	}
	if v, ok := ann[monv1.MonitorStatusPageAnnotation]; ok {
		if len(v) <= 63 && pageName.MatchString(v) {
			o.StatusPage = v
		} else {
			warnings = append(warnings, fmt.Sprintf("annotation %s: %q is not the name of a StatusPage (a DNS label of at most 63 characters); ignored", monv1.MonitorStatusPageAnnotation, v))
		}
	}
	return o, warnings
}

// pageName matches the StatusPage names a Monitor can join: label values
// that are DNS labels (DiscoveredStatusPage.name).
var pageName = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`)

// Planned is one Monitor a template wants.
type Planned struct {
	// Name is the Monitor's metadata.name.
	Name string
	// Endpoint is what it checks.
	Endpoint Endpoint
	// Spec is its spec.
	Spec monv1.MonitorSpec
	// StatusPage is the StatusPage it joins, nil for none.
	StatusPage *monv1.DiscoveredStatusPage
}

// Result is what a template makes of one object.
type Result struct {
	Monitors []Planned
	Skipped  []monv1.SkippedEndpoint
	Warnings []string
}

// Plan returns the Monitors template t makes of src: one per endpoint
// (one per host when a path is set by the annotation or the template),
// in the object's order, at most t's bound; the rest are skipped.
func Plan(t *monv1.MonitorTemplate, src *Source) Result {
	over, warnings := ParseOverrides(src.Annotations)
	r := Result{Skipped: slices.Clone(src.Skipped), Warnings: append(slices.Clone(src.Warnings), warnings...)}
	path := t.Spec.Path
	if over.Path != "" {
		path = over.Path
	}
	limit := int(t.Spec.MaxMonitorsPerObject)
	if limit <= 0 || limit > monv1.MaxMonitorsPerObject {
		limit = monv1.MaxMonitorsPerObject
	}
	page := t.Spec.StatusPage.DeepCopy()
	if over.StatusPage != "" {
		if page == nil {
			page = &monv1.DiscoveredStatusPage{}
		}
		page.Name = over.StatusPage
	}
	seen := map[string]bool{}
	for _, e := range src.Endpoints {
		if path != "" && !e.GRPC {
			e.Path = path
		}
		name := Name(src.Kind, src.Name, e)
		if seen[name] {
			continue
		}
		seen[name] = true
		if len(r.Monitors) == limit {
			r.Skipped = append(r.Skipped, monv1.SkippedEndpoint{Endpoint: e.String(),
				Reason: fmt.Sprintf("over the bound of %d Monitors per object", limit)})
			continue
		}
		r.Monitors = append(r.Monitors, Planned{Name: name, Endpoint: e, Spec: MonitorSpec(&t.Spec.Monitor, e, over.IntervalSeconds), StatusPage: page})
	}
	return r
}

// MonitorSpec is the spec of the Monitor that checks e: the template's
// monitor section, the url (or the grpc target) and display name from e.
func MonitorSpec(d *monv1.DiscoveredMonitorSpec, e Endpoint, interval int32) monv1.MonitorSpec {
	d = d.DeepCopy()
	spec := monv1.MonitorSpec{
		Name:                truncate(e.String(), 255),
		Type:                d.Type,
		IntervalSeconds:     d.IntervalSeconds,
		GroupRef:            d.GroupRef,
		EscalationPolicyRef: d.EscalationPolicyRef,
		Tags:                d.Tags,
		Regions:             d.Regions,
		NotificationEmails:  d.NotificationEmails,
		Confirmation:        d.Confirmation,
	}
	if interval != 0 {
		spec.IntervalSeconds = interval
	}
	if e.GRPC {
		spec.Type = monv1.MonitorGRPC
		spec.GRPC = &monv1.GRPCConfig{Target: e.hostPort(), Plaintext: !e.TLS}
		return spec
	}
	if spec.Type == "" {
		spec.Type = monv1.MonitorHTTP
	}
	spec.URL = e.URL()
	spec.HTTP = d.HTTP
	return spec
}

// SLOSpec is the spec of the SLO of the discovered Monitor named monitor:
// the template's slo section with monitorRef set.
func SLOSpec(d *monv1.DiscoveredSLOSpec, monitor string) monv1.SLOSpec {
	return monv1.SLOSpec{
		MonitorRef:         monv1.LocalObjectReference{Name: monitor},
		TargetPercentage:   d.TargetPercentage,
		SLIType:            d.SLIType,
		LatencyThresholdMs: d.LatencyThresholdMs,
		WindowMinutes:      d.WindowMinutes,
	}
}

// maxName is the longest Monitor name discovery makes: a DNS label, so
// the name fits wherever a label value or a DNS name is made of it.
const maxName = 63

// Name is the stable name of the Monitor of an object's endpoint:
// <object>-<host>-<hash>, cut to 63 characters. The hash (of kind, object,
// host and path) keeps it unique and stable while the scheme, port or
// template changes, so the Monitor and its history follow the endpoint.
func Name(kind monv1.DiscoveredKind, object string, e Endpoint) string {
	sum := sha256.Sum256([]byte(string(kind) + "/" + object + "/" + e.Host + "/" + e.Path))
	hash := hex.EncodeToString(sum[:])[:8]
	obj := slug(object)
	host := slug(e.Host)
	room := maxName - len(hash) - 2
	if len(obj) > room/2 && len(obj)+len(host) > room {
		obj = strings.TrimRight(obj[:max(room-len(host), room/2)], "-")
	}
	if len(obj)+len(host) > room {
		host = strings.TrimRight(host[:room-len(obj)], "-")
	}
	parts := []string{}
	for _, p := range []string{obj, host, hash} {
		if p != "" {
			parts = append(parts, p)
		}
	}
	return strings.Join(parts, "-")
}

// slug lower-cases s and turns every run of other characters than a-z
// and 0-9 into one dash.
func slug(s string) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(s) {
		if (r >= 'a' && r <= 'z') || (r >= '0' && r <= '9') {
			b.WriteRune(r)
			dash = false
		} else if !dash && b.Len() > 0 {
			b.WriteByte('-')
			dash = true
		}
	}
	return strings.TrimRight(b.String(), "-")
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n]
}
