package webhooks

import (
	"context"
	"fmt"
	"net/url"
	"slices"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
	"github.com/uptime-operator/uptime-operator/internal/monitor"
	"github.com/uptime-operator/uptime-operator/internal/plans"
)

// MonitorGroupWebhook defaults and validates MonitorGroups.
type MonitorGroupWebhook struct{ *Deps }

// Default names the group after its object when spec.name is empty.
func (MonitorGroupWebhook) Default(_ context.Context, g *monv1.MonitorGroup) error {
	if g.Spec.Name == "" {
		g.Spec.Name = g.Name
	}
	return nil
}

// ValidateCreate checks a new group.
func (w MonitorGroupWebhook) ValidateCreate(_ context.Context, g *monv1.MonitorGroup) (admission.Warnings, error) {
	return nil, invalid(g, monitor.ValidateMonitorGroupSpec(&g.Spec, field.NewPath("spec")))
}

// ValidateUpdate checks a changed group.
func (w MonitorGroupWebhook) ValidateUpdate(_ context.Context, _, g *monv1.MonitorGroup) (admission.Warnings, error) {
	return nil, invalid(g, monitor.ValidateMonitorGroupSpec(&g.Spec, field.NewPath("spec")))
}

// ValidateDelete allows every delete.
func (MonitorGroupWebhook) ValidateDelete(context.Context, *monv1.MonitorGroup) (admission.Warnings, error) {
	return nil, nil
}

// StatusPageWebhook defaults and validates StatusPages.
type StatusPageWebhook struct{ *Deps }

// Default sets the slug to the object name and access to public.
func (StatusPageWebhook) Default(_ context.Context, p *monv1.StatusPage) error {
	if p.Spec.Slug == "" {
		p.Spec.Slug = p.Name
	}
	if p.Spec.Access == nil {
		p.Spec.Access = &monv1.StatusPageAccess{Mode: monv1.AccessPublic}
	}
	return nil
}

// ValidateCreate checks a new page, the plan's page limit and slug uniqueness.
func (w StatusPageWebhook) ValidateCreate(ctx context.Context, p *monv1.StatusPage) (admission.Warnings, error) {
	return nil, w.validate(ctx, nil, p)
}

// ValidateUpdate checks a changed page.
func (w StatusPageWebhook) ValidateUpdate(ctx context.Context, old, p *monv1.StatusPage) (admission.Warnings, error) {
	return nil, w.validate(ctx, old, p)
}

// ValidateDelete allows every delete.
func (StatusPageWebhook) ValidateDelete(context.Context, *monv1.StatusPage) (admission.Warnings, error) {
	return nil, nil
}

func (w StatusPageWebhook) validate(ctx context.Context, old, p *monv1.StatusPage) error {
	spec := field.NewPath("spec")
	plan, err := w.Plans.ForNamespace(ctx, p.Namespace)
	if err != nil {
		return apierrors.NewInternalError(err)
	}
	errs := ValidateStatusPageSpec(&p.Spec, plan, spec)
	if switchedToSSO(old, p) && w.SSOUnavailable != "" {
		errs = append(errs, field.Invalid(spec.Child("access", "mode"), monv1.AccessSSO, w.SSOUnavailable))
	}
	var pages monv1.StatusPageList
	if err := w.Reader.List(ctx, &pages); err != nil {
		return apierrors.NewInternalError(fmt.Errorf("list status pages: %w", err))
	}
	inNamespace := 0
	for _, other := range pages.Items {
		if other.Namespace == p.Namespace && other.Name == p.Name {
			continue
		}
		if other.Namespace == p.Namespace {
			inNamespace++
		}
		if other.Spec.Slug == p.Spec.Slug {
			errs = append(errs, field.Duplicate(spec.Child("slug"), p.Spec.Slug))
		}
		if p.Spec.CustomDomain != "" && other.Spec.CustomDomain == p.Spec.CustomDomain {
			errs = append(errs, field.Duplicate(spec.Child("customDomain"), p.Spec.CustomDomain))
		}
	}
	if old == nil && plan.Spec.Limits.StatusPages > 0 && inNamespace >= int(plan.Spec.Limits.StatusPages) {
		errs = append(errs, (&plans.LimitError{Resource: "status pages", Current: inNamespace, Limit: int(plan.Spec.Limits.StatusPages)}).Field(spec))
	}
	return invalid(p, errs)
}

// switchedToSSO reports whether p is an sso page that old (nil on create)
// was not: a page already in sso mode stays editable on an install that
// lost its provider (it answers 503 until the provider is back).
func switchedToSSO(old, p *monv1.StatusPage) bool {
	mode := func(p *monv1.StatusPage) monv1.StatusPageAccessMode {
		if p == nil || p.Spec.Access == nil {
			return ""
		}
		return p.Spec.Access.Mode
	}
	return mode(p) == monv1.AccessSSO && mode(old) != monv1.AccessSSO
}

// ValidateStatusPageSpec checks a page's fields against the plan.
func ValidateStatusPageSpec(s *monv1.StatusPageSpec, plan *monv1.Plan, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	if !plans.HasFeature(plan, monv1.FeatureStatusPages) {
		errs = append(errs, featureError(path, plan, monv1.FeatureStatusPages))
	}
	if len(s.Title) < 1 || len(s.Title) > 255 {
		errs = append(errs, field.Invalid(path.Child("title"), s.Title, "must be 1-255 characters"))
	}
	if len(s.Description) > 1000 {
		errs = append(errs, field.TooLong(path.Child("description"), "", 1000))
	}
	if n := len(s.Slug); n < 3 || n > 64 {
		errs = append(errs, field.Invalid(path.Child("slug"), s.Slug, "must be 3-64 characters"))
	}
	for name, raw := range map[string]string{"logoURL": s.LogoURL, "faviconURL": s.FaviconURL} {
		if raw == "" {
			continue
		}
		if u, err := url.Parse(raw); err != nil || u.Scheme != "https" || u.Host == "" {
			errs = append(errs, field.Invalid(path.Child(name), raw, "must be an https URL"))
		}
	}
	if !plans.HasFeature(plan, monv1.FeatureWhiteLabel) {
		if s.HidePoweredBy {
			errs = append(errs, field.Forbidden(path.Child("hidePoweredBy"), "needs a plan with white-label ("+monitor.CodeWhiteLabel+")"))
		}
		if s.FaviconURL != "" {
			errs = append(errs, field.Forbidden(path.Child("faviconURL"), "needs a plan with white-label ("+monitor.CodeWhiteLabel+")"))
		}
	}
	if len(s.Monitors) > 500 {
		errs = append(errs, field.TooMany(path.Child("monitors"), len(s.Monitors), 500))
	}
	seen := map[string]bool{}
	for i, m := range s.Monitors {
		if seen[m.MonitorRef.Name] {
			errs = append(errs, field.Duplicate(path.Child("monitors").Index(i).Child("monitorRef", "name"), m.MonitorRef.Name))
		}
		seen[m.MonitorRef.Name] = true
		if len(m.Section) > 100 {
			errs = append(errs, field.TooLong(path.Child("monitors").Index(i).Child("section"), "", 100))
		}
	}
	if a := s.Access; a != nil && a.Mode == monv1.AccessPassword && a.PasswordSecretRef == nil {
		errs = append(errs, field.Required(path.Child("access", "passwordSecretRef"), "required for password access"))
	}
	return errs
}

// AlertChannelWebhook defaults and validates AlertChannels.
type AlertChannelWebhook struct{ *Deps }

// Default names the connection after its type and scopes routing to all.
func (AlertChannelWebhook) Default(_ context.Context, c *monv1.AlertChannel) error {
	if c.Spec.Name == "" {
		c.Spec.Name = string(c.Spec.Type)
	}
	if c.Spec.Routing == nil {
		c.Spec.Routing = &monv1.AlertRouting{}
	}
	if c.Spec.Routing.Scope == "" {
		c.Spec.Routing.Scope = "all"
	}
	if c.Spec.Routing.MinSeverity == "" {
		c.Spec.Routing.MinSeverity = "down"
	}
	return nil
}

// ValidateCreate checks a new channel and the 10-per-type limit.
func (w AlertChannelWebhook) ValidateCreate(ctx context.Context, c *monv1.AlertChannel) (admission.Warnings, error) {
	return nil, w.validate(ctx, nil, c)
}

// ValidateUpdate checks a changed channel.
func (w AlertChannelWebhook) ValidateUpdate(ctx context.Context, old, c *monv1.AlertChannel) (admission.Warnings, error) {
	return nil, w.validate(ctx, old, c)
}

// ValidateDelete allows every delete.
func (AlertChannelWebhook) ValidateDelete(context.Context, *monv1.AlertChannel) (admission.Warnings, error) {
	return nil, nil
}

func (w AlertChannelWebhook) validate(ctx context.Context, old, c *monv1.AlertChannel) error {
	spec := field.NewPath("spec")
	plan, err := w.Plans.ForNamespace(ctx, c.Namespace)
	if err != nil {
		return apierrors.NewInternalError(err)
	}
	errs := ValidateAlertChannelSpec(ctx, &c.Spec, plan, w.Guard(), spec)
	errs = append(errs, validateChannelInlineCredentials(old, c)...)
	refErrs, err := w.validateChannelSecretRefs(ctx, old, c)
	if err != nil {
		return apierrors.NewInternalError(err)
	}
	errs = append(errs, refErrs...)
	if old != nil && old.Spec.Type != c.Spec.Type {
		errs = append(errs, field.Forbidden(spec.Child("type"), "type cannot change after creation"))
	}
	if old == nil {
		var list monv1.AlertChannelList
		if err := w.Reader.List(ctx, &list, client.InNamespace(c.Namespace)); err != nil {
			return apierrors.NewInternalError(fmt.Errorf("list alert channels: %w", err))
		}
		n := 0
		for _, other := range list.Items {
			if other.Spec.Type == c.Spec.Type && other.Name != c.Name {
				n++
			}
		}
		if n >= maxConnectionsPerType {
			errs = append(errs, field.Forbidden(spec.Child("type"), fmt.Sprintf(
				"already %d %s connections; at most %d per type (%s)", n, c.Spec.Type, maxConnectionsPerType, monitor.CodeConnectionLimit)))
		}
	}
	return invalid(c, errs)
}

// ValidateAlertChannelSpec checks the fields each channel type needs, the
// webhook URL rules of the specification and the plan's channel features.
func ValidateAlertChannelSpec(ctx context.Context, s *monv1.AlertChannelSpec, plan *monv1.Plan, guard monitor.HostChecker, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	if len(s.Name) > 60 {
		errs = append(errs, field.TooLong(path.Child("name"), "", 60))
	}
	need := func(ok bool, name, what string) {
		if !ok {
			errs = append(errs, field.Required(path.Child(name), fmt.Sprintf("required for %s channels: %s", s.Type, what)))
		}
	}
	switch s.Type {
	case monv1.ChannelWebhook, monv1.ChannelSlack, monv1.ChannelDiscord, monv1.ChannelTeams,
		monv1.ChannelGoogleChat, monv1.ChannelMattermost, monv1.ChannelZapier:
		need(s.WebhookURL != "" || s.WebhookURLFrom != nil, "webhookURL", "the endpoint URL (webhookURL or webhookURLFrom)")
		if s.WebhookURL != "" {
			errs = append(errs, ValidateWebhookURL(ctx, s.WebhookURL, guard, path.Child("webhookURL"))...)
		}
		if s.Type == monv1.ChannelWebhook && !plans.HasFeature(plan, monv1.FeatureWebhooks) {
			errs = append(errs, featureError(path.Child("type"), plan, monv1.FeatureWebhooks))
		}
	case monv1.ChannelPagerDuty:
		need(s.IntegrationKeyFrom != nil, "integrationKeyFrom", "the integration key")
	case monv1.ChannelOpsgenie:
		need(s.APIKeyFrom != nil, "apiKeyFrom", "the API key")
		need(s.Region != "", "region", "us or eu")
	case monv1.ChannelTelegram:
		need(s.ChatID != "", "chatID", "the chat id")
	case monv1.ChannelGitHub:
		need(s.Repository != "", "repository", "owner/repo")
		need(s.TokenFrom != nil, "tokenFrom", "the access token")
	case monv1.ChannelSMS, monv1.ChannelVoice, monv1.ChannelWhatsApp:
		need(s.To != "", "to", "an E.164 phone number")
		if !plans.HasFeature(plan, monv1.FeatureSMS) {
			errs = append(errs, featureError(path.Child("type"), plan, monv1.FeatureSMS))
		}
	case monv1.ChannelEmail:
		need(len(s.Emails) > 0, "emails", "at least one address")
		errs = append(errs, monitor.ValidateEmails(s.Emails, path.Child("emails"))...)
	}
	if r := s.Routing; r != nil {
		rp := path.Child("routing")
		if r.Scope == "groups" && len(r.Groups) == 0 {
			errs = append(errs, field.Required(rp.Child("groups"), "required when scope is groups"))
		}
		if r.Scope == "monitors" && len(r.Monitors) == 0 {
			errs = append(errs, field.Required(rp.Child("monitors"), "required when scope is monitors"))
		}
	}
	return errs
}

// ValidateWebhookURL applies the connection-time rules of the webhook
// specification: https only, no credentials, and a host that resolves to a
// public address (an unresolvable host is refused too).
func ValidateWebhookURL(ctx context.Context, raw string, guard monitor.HostChecker, path *field.Path) field.ErrorList {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return field.ErrorList{field.Invalid(path, raw, "must be a valid URL")}
	}
	if u.Scheme != "https" {
		return field.ErrorList{field.Invalid(path, monitor.RedactURL(u), "must start with https:// (plain http is refused)")}
	}
	if u.User != nil {
		return field.ErrorList{field.Invalid(path, monitor.RedactURL(u), "must not contain a username or password")}
	}
	if guard == nil {
		return nil
	}
	if err := guard.CheckHost(ctx, u.Hostname()); err != nil {
		if monitor.IsBlocked(err) {
			return field.ErrorList{field.Invalid(path, monitor.RedactURL(u), monitor.PrivateAddressMessage)}
		}
		return field.ErrorList{field.Invalid(path, monitor.RedactURL(u), monitor.UnresolvableHostMessage)}
	}
	return nil
}

// SLOWebhook defaults and validates SLOs.
type SLOWebhook struct{ *Deps }

// Default fills the SLI type, window and burn-rate thresholds.
func (SLOWebhook) Default(_ context.Context, s *monv1.SLO) error {
	monitor.DefaultSLO(&s.Spec)
	return nil
}

// ValidateCreate checks a new SLO: plan feature, monitor exists, one per monitor.
func (w SLOWebhook) ValidateCreate(ctx context.Context, s *monv1.SLO) (admission.Warnings, error) {
	return nil, w.validate(ctx, s)
}

// ValidateUpdate checks a changed SLO.
func (w SLOWebhook) ValidateUpdate(ctx context.Context, _, s *monv1.SLO) (admission.Warnings, error) {
	return nil, w.validate(ctx, s)
}

// ValidateDelete allows every delete.
func (SLOWebhook) ValidateDelete(context.Context, *monv1.SLO) (admission.Warnings, error) {
	return nil, nil
}

func (w SLOWebhook) validate(ctx context.Context, s *monv1.SLO) error {
	spec := field.NewPath("spec")
	plan, err := w.Plans.ForNamespace(ctx, s.Namespace)
	if err != nil {
		return apierrors.NewInternalError(err)
	}
	errs := monitor.ValidateSLOSpec(&s.Spec, spec)
	if !plans.HasFeature(plan, monv1.FeatureSLO) {
		errs = append(errs, featureError(spec, plan, monv1.FeatureSLO))
	}
	if err := w.mustExist(ctx, s.Namespace, s.Spec.MonitorRef.Name, &monv1.Monitor{}); err != nil {
		errs = append(errs, field.NotFound(spec.Child("monitorRef", "name"), s.Spec.MonitorRef.Name))
	}
	var list monv1.SLOList
	if err := w.Reader.List(ctx, &list, client.InNamespace(s.Namespace)); err != nil {
		return apierrors.NewInternalError(fmt.Errorf("list slos: %w", err))
	}
	for _, other := range list.Items {
		if other.Name != s.Name && other.Spec.MonitorRef.Name == s.Spec.MonitorRef.Name {
			errs = append(errs, field.Duplicate(spec.Child("monitorRef", "name"), s.Spec.MonitorRef.Name+" already has SLO "+other.Name))
		}
	}
	return invalid(s, errs)
}

// MaintenanceWindowWebhook defaults and validates MaintenanceWindows.
type MaintenanceWindowWebhook struct{ *Deps }

// Default sets UTC, medium impact and a single occurrence.
func (MaintenanceWindowWebhook) Default(_ context.Context, m *monv1.MaintenanceWindow) error {
	if m.Spec.TimeZone == "" {
		m.Spec.TimeZone = "UTC"
	}
	if m.Spec.Impact == "" {
		m.Spec.Impact = "medium"
	}
	if r := m.Spec.Recurrence; r != nil && r.Interval == 0 {
		r.Interval = 1
	}
	return nil
}

// ValidateCreate checks a new window.
func (w MaintenanceWindowWebhook) ValidateCreate(ctx context.Context, m *monv1.MaintenanceWindow) (admission.Warnings, error) {
	return nil, w.validate(ctx, m)
}

// ValidateUpdate checks a changed window.
func (w MaintenanceWindowWebhook) ValidateUpdate(ctx context.Context, _, m *monv1.MaintenanceWindow) (admission.Warnings, error) {
	return nil, w.validate(ctx, m)
}

// ValidateDelete allows every delete.
func (MaintenanceWindowWebhook) ValidateDelete(context.Context, *monv1.MaintenanceWindow) (admission.Warnings, error) {
	return nil, nil
}

func (w MaintenanceWindowWebhook) validate(ctx context.Context, m *monv1.MaintenanceWindow) error {
	spec := field.NewPath("spec")
	var errs field.ErrorList
	errs = append(errs, monitor.ValidateTimeZone(m.Spec.TimeZone, spec.Child("timeZone"))...)
	if !m.Spec.EndsAt.After(m.Spec.StartsAt.Time) {
		errs = append(errs, field.Invalid(spec.Child("endsAt"), m.Spec.EndsAt, "must be after startsAt"))
	}
	for _, refs := range []struct {
		child string
		refs  []monv1.LocalObjectReference
		list  client.ObjectList
	}{{"monitors", m.Spec.Monitors, &monv1.MonitorList{}}, {"groups", m.Spec.Groups, &monv1.MonitorGroupList{}}} {
		if len(refs.refs) == 0 {
			continue
		}
		names, err := w.namesIn(ctx, m.Namespace, refs.list)
		if err != nil {
			return err
		}
		for i, ref := range refs.refs {
			if !names[ref.Name] {
				errs = append(errs, field.NotFound(spec.Child(refs.child).Index(i).Child("name"), ref.Name))
			}
		}
	}
	return invalid(m, errs)
}

// EscalationPolicyWebhook validates EscalationPolicies.
type EscalationPolicyWebhook struct{ *Deps }

// ValidateCreate checks a new policy.
func (w EscalationPolicyWebhook) ValidateCreate(_ context.Context, p *monv1.EscalationPolicy) (admission.Warnings, error) {
	return nil, invalid(p, validateEscalationPolicy(&p.Spec, field.NewPath("spec")))
}

// ValidateUpdate checks a changed policy.
func (w EscalationPolicyWebhook) ValidateUpdate(_ context.Context, _, p *monv1.EscalationPolicy) (admission.Warnings, error) {
	return nil, invalid(p, validateEscalationPolicy(&p.Spec, field.NewPath("spec")))
}

// ValidateDelete allows every delete.
func (EscalationPolicyWebhook) ValidateDelete(context.Context, *monv1.EscalationPolicy) (admission.Warnings, error) {
	return nil, nil
}

func validateEscalationPolicy(s *monv1.EscalationPolicySpec, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	for i, st := range s.Steps {
		p := path.Child("steps").Index(i)
		if len(st.Channels) == 0 && len(st.Emails) == 0 && len(st.OnCall) == 0 {
			errs = append(errs, field.Required(p, "a step needs channels, emails or onCall"))
		}
		errs = append(errs, monitor.ValidateEmails(st.Emails, p.Child("emails"))...)
		if i > 0 && st.DelayMinutes < s.Steps[i-1].DelayMinutes {
			errs = append(errs, field.Invalid(p.Child("delayMinutes"), st.DelayMinutes, "must not be lower than the previous step's delay"))
		}
	}
	return errs
}

// ProbeRegionWebhook defaults and validates ProbeRegions.
type ProbeRegionWebhook struct{ *Deps }

// Default sets the code to the object name and the placement to managed.
func (ProbeRegionWebhook) Default(_ context.Context, r *monv1.ProbeRegion) error {
	if r.Spec.Code == "" {
		r.Spec.Code = r.Name
	}
	if r.Spec.Placement.Mode == "" {
		r.Spec.Placement.Mode = monv1.PlacementManaged
	}
	if r.Spec.Placement.Replicas == 0 {
		r.Spec.Placement.Replicas = 1
	}
	return nil
}

// ValidateCreate checks that the region code is unique.
func (w ProbeRegionWebhook) ValidateCreate(ctx context.Context, r *monv1.ProbeRegion) (admission.Warnings, error) {
	return nil, w.validate(ctx, nil, r)
}

// ValidateUpdate refuses code changes: monitors and history refer to it.
func (w ProbeRegionWebhook) ValidateUpdate(ctx context.Context, old, r *monv1.ProbeRegion) (admission.Warnings, error) {
	return nil, w.validate(ctx, old, r)
}

// ValidateDelete allows every delete.
func (ProbeRegionWebhook) ValidateDelete(context.Context, *monv1.ProbeRegion) (admission.Warnings, error) {
	return nil, nil
}

func (w ProbeRegionWebhook) validate(ctx context.Context, old, r *monv1.ProbeRegion) error {
	spec := field.NewPath("spec")
	var errs field.ErrorList
	if old != nil && monitor.RegionCode(old) != monitor.RegionCode(r) {
		errs = append(errs, field.Forbidden(spec.Child("code"), "code cannot change; monitors and history refer to it"))
	}
	var list monv1.ProbeRegionList
	if err := w.Reader.List(ctx, &list); err != nil {
		return apierrors.NewInternalError(fmt.Errorf("list probe regions: %w", err))
	}
	for _, other := range list.Items {
		if other.Name != r.Name && monitor.RegionCode(&other) == monitor.RegionCode(r) {
			errs = append(errs, field.Duplicate(spec.Child("code"), monitor.RegionCode(r)))
		}
	}
	return invalid(r, errs)
}

// PlanWebhook validates Plans.
type PlanWebhook struct{ *Deps }

// ValidateCreate checks a new plan.
func (w PlanWebhook) ValidateCreate(_ context.Context, p *monv1.Plan) (admission.Warnings, error) {
	return nil, invalid(p, validatePlan(&p.Spec, field.NewPath("spec")))
}

// ValidateUpdate checks a changed plan.
func (w PlanWebhook) ValidateUpdate(_ context.Context, _, p *monv1.Plan) (admission.Warnings, error) {
	return nil, invalid(p, validatePlan(&p.Spec, field.NewPath("spec")))
}

// ValidateDelete allows every delete.
func (PlanWebhook) ValidateDelete(context.Context, *monv1.Plan) (admission.Warnings, error) {
	return nil, nil
}

func validatePlan(s *monv1.PlanSpec, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	if m := s.Limits.MinIntervalSeconds; m != 0 && m < plans.MinInterval {
		errs = append(errs, field.Invalid(path.Child("limits", "minIntervalSeconds"), m, "must be 0 (no floor) or between 15 and 900"))
	}
	for i, code := range s.DefaultRegions {
		if len(s.Regions) > 0 && !slices.Contains(s.Regions, code) {
			errs = append(errs, field.Invalid(path.Child("defaultRegions").Index(i), code, "must be one of the plan's regions"))
		}
	}
	if l := s.Limits.ProbeLocations; l > 0 && len(s.DefaultRegions) > int(l) {
		errs = append(errs, field.TooMany(path.Child("defaultRegions"), len(s.DefaultRegions), int(l)))
	}
	return errs
}

// OnCallScheduleWebhook validates OnCallSchedules.
type OnCallScheduleWebhook struct{ *Deps }

// ValidateCreate checks a new schedule.
func (OnCallScheduleWebhook) ValidateCreate(_ context.Context, s *monv1.OnCallSchedule) (admission.Warnings, error) {
	return nil, invalid(s, validateOnCall(&s.Spec, field.NewPath("spec")))
}

// ValidateUpdate checks a changed schedule.
func (OnCallScheduleWebhook) ValidateUpdate(_ context.Context, _, s *monv1.OnCallSchedule) (admission.Warnings, error) {
	return nil, invalid(s, validateOnCall(&s.Spec, field.NewPath("spec")))
}

// ValidateDelete allows every delete.
func (OnCallScheduleWebhook) ValidateDelete(context.Context, *monv1.OnCallSchedule) (admission.Warnings, error) {
	return nil, nil
}

func validateOnCall(s *monv1.OnCallScheduleSpec, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	errs = append(errs, monitor.ValidateTimeZone(s.TimeZone, path.Child("timeZone"))...)
	for i, p := range s.Participants {
		errs = append(errs, monitor.ValidateEmails([]string{p.Email}, path.Child("participants").Index(i).Child("email"))...)
	}
	for i, o := range s.Overrides {
		op := path.Child("overrides").Index(i)
		errs = append(errs, monitor.ValidateEmails([]string{o.Participant.Email}, op.Child("participant", "email"))...)
		if !o.EndsAt.After(o.StartsAt.Time) {
			errs = append(errs, field.Invalid(op.Child("endsAt"), o.EndsAt, "must be after startsAt"))
		}
	}
	return errs
}
