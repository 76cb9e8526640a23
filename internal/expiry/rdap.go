package expiry

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/uptime-operator/uptime-operator/internal/store"
)

// maxRDAPBody bounds an RDAP response.
const maxRDAPBody = 1 << 20

// domainExpiry returns the registration expiry of domain from the store,
// looking it up over RDAP when the stored lookup is a day old (or, with
// force, an hour old). A failed lookup is stored too, with its error, so a
// broken registry is asked once a day like any other.
func (c *Checker) domainExpiry(ctx context.Context, domain string, force bool) (store.DomainExpiry, error) {
	c.lookupMu.Lock()
	defer c.lookupMu.Unlock()
	now := c.now()
	cached, err := c.Store.GetDomainExpiry(ctx, domain)
	switch {
	case errors.Is(err, store.ErrNotFound):
	case err != nil:
		return cached, fmt.Errorf("read domain expiry of %s: %w", domain, err)
	default:
		age := now.Sub(cached.CheckedAt)
		if age < DomainLookupInterval && (!force || age < RefreshLookupInterval) {
			return cached, nil
		}
	}
	d := store.DomainExpiry{Domain: domain, CheckedAt: now}
	exp, registrar, lerr := c.lookup(ctx, domain)
	if lerr != nil {
		if ctx.Err() != nil {
			return cached, ctx.Err()
		}
		c.log().V(1).Info("RDAP lookup failed", "domain", domain, "error", lerr.Error())
		d.Error = lerr.Error()
		// Keep the last known date: a registry outage does not unknow it.
		d.ExpiresAt, d.Registrar = cached.ExpiresAt, cached.Registrar
	} else {
		d.ExpiresAt, d.Registrar = exp, registrar
	}
	if err := c.Store.PutDomainExpiry(ctx, d); err != nil {
		return d, fmt.Errorf("store domain expiry of %s: %w", domain, err)
	}
	return d, nil
}

// rdapDomain is the part of an RDAP domain object (RFC 9083) we read.
type rdapDomain struct {
	ObjectClassName string      `json:"objectClassName"`
	LDHName         string      `json:"ldhName"`
	Events          []rdapEvent `json:"events"`
	Entities        []struct {
		Roles      []string          `json:"roles"`
		VCardArray []json.RawMessage `json:"vcardArray"`
	} `json:"entities"`
}

type rdapEvent struct {
	Action string `json:"eventAction"`
	Date   string `json:"eventDate"`
}

// lookup asks the RDAP service for domain and returns its expiration event
// (nil when the registry publishes none) and the registrar's name.
func (c *Checker) lookup(ctx context.Context, domain string) (*time.Time, string, error) {
	base := strings.TrimRight(c.RDAPBaseURL, "/")
	if base == "" {
		base = DefaultRDAPBaseURL
	}
	hc := c.HTTPClient
	if hc == nil {
		hc = &http.Client{Timeout: 15 * time.Second}
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+"/domain/"+domain, nil)
	if err != nil {
		return nil, "", fmt.Errorf("build RDAP request: %w", err)
	}
	req.Header.Set("Accept", "application/rdap+json, application/json")
	resp, err := hc.Do(req)
	if err != nil {
		return nil, "", fmt.Errorf("rdap lookup of %s: %w", domain, err)
	}
	defer func() { _ = resp.Body.Close() }()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxRDAPBody))
	if err != nil {
		return nil, "", fmt.Errorf("read RDAP response for %s: %w", domain, err)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, "", fmt.Errorf("rdap lookup of %s: HTTP %d", domain, resp.StatusCode)
	}
	var d rdapDomain
	if err := json.Unmarshal(body, &d); err != nil {
		return nil, "", fmt.Errorf("decode RDAP response for %s: %w", domain, err)
	}
	exp, err := expirationOf(d.Events)
	if err != nil {
		return nil, "", fmt.Errorf("rdap lookup of %s: %w", domain, err)
	}
	return exp, registrarOf(d), nil
}

// expirationOf returns the date of the expiration event, nil when there is
// none.
func expirationOf(events []rdapEvent) (*time.Time, error) {
	for _, e := range events {
		if !strings.EqualFold(e.Action, "expiration") {
			continue
		}
		t, err := time.Parse(time.RFC3339, strings.TrimSpace(e.Date))
		if err != nil {
			return nil, fmt.Errorf("bad expiration date %q", e.Date)
		}
		t = t.UTC()
		return &t, nil
	}
	return nil, nil
}

// registrarOf returns the fn of the entity with the registrar role.
func registrarOf(d rdapDomain) string {
	for _, e := range d.Entities {
		isRegistrar := false
		for _, r := range e.Roles {
			isRegistrar = isRegistrar || strings.EqualFold(r, "registrar")
		}
		if !isRegistrar || len(e.VCardArray) < 2 {
			continue
		}
		var props [][]json.RawMessage
		if json.Unmarshal(e.VCardArray[1], &props) != nil {
			continue
		}
		for _, p := range props {
			var name, value string
			if len(p) < 4 || json.Unmarshal(p[0], &name) != nil || name != "fn" {
				continue
			}
			if json.Unmarshal(p[3], &value) == nil {
				return value
			}
		}
	}
	return ""
}
