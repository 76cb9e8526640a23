package thirdparty

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"
)

// Provider kinds: how a provider publishes its status.
const (
	// KindStatuspage is a Statuspage-compatible API: {URL}/api/v2/summary.json
	// and {URL}/api/v2/incidents.json.
	KindStatuspage = "statuspage"
	// KindFeed is an RSS 2.0 or Atom feed at URL.
	KindFeed = "feed"
)

// DefaultConfigMapName is the ConfigMap, in the manager's namespace, that
// changes and extends the built-in providers.
const DefaultConfigMapName = "uptime-operator-providers"

// ConfigMapKey is the ConfigMap data key that holds a YAML list of providers.
const ConfigMapKey = "providers.yaml"

// Provider is a third-party service whose status can be followed.
type Provider struct {
	// ID identifies the provider in subscriptions (up to 60 characters).
	ID   string `json:"id"`
	Name string `json:"name"`
	// Kind is KindStatuspage or KindFeed.
	Kind string `json:"kind"`
	// URL is the base URL of a Statuspage-compatible page or the feed URL.
	URL string `json:"url"`
	// StatusPageURL is the page people read; defaults to URL for a
	// Statuspage-compatible provider.
	StatusPageURL string `json:"status_page_url,omitempty"`
	Category      string `json:"category,omitempty"`
	// Disabled, in the ConfigMap, removes a built-in provider.
	Disabled bool `json:"disabled,omitempty"`
}

func (p Provider) pageURL() string {
	if p.StatusPageURL != "" {
		return p.StatusPageURL
	}
	if p.Kind == KindStatuspage {
		return strings.TrimRight(p.URL, "/")
	}
	return p.URL
}

// BuiltIn lists well-known providers. Their URLs are the providers' public
// status pages; the ConfigMap can correct or remove any of them.
func BuiltIn() []Provider {
	sp := func(id, name, url, cat string) Provider {
		return Provider{ID: id, Name: name, Kind: KindStatuspage, URL: url, Category: cat}
	}
	feed := func(id, name, url, page, cat string) Provider {
		return Provider{ID: id, Name: name, Kind: KindFeed, URL: url, StatusPageURL: page, Category: cat}
	}
	return []Provider{
		sp("github", "GitHub", "https://www.githubstatus.com", "developer tools"),
		sp("bitbucket", "Bitbucket", "https://bitbucket.status.atlassian.com", "developer tools"),
		sp("atlassian-jira", "Jira", "https://jira-software.status.atlassian.com", "developer tools"),
		sp("cloudflare", "Cloudflare", "https://www.cloudflarestatus.com", "cdn"),
		sp("digitalocean", "DigitalOcean", "https://status.digitalocean.com", "cloud"),
		sp("vercel", "Vercel", "https://www.vercel-status.com", "hosting"),
		sp("netlify", "Netlify", "https://www.netlifystatus.com", "hosting"),
		sp("datadog", "Datadog", "https://status.datadoghq.com", "observability"),
		sp("twilio", "Twilio", "https://status.twilio.com", "communications"),
		sp("sendgrid", "SendGrid", "https://status.sendgrid.com", "communications"),
		sp("discord", "Discord", "https://discordstatus.com", "communications"),
		sp("openai", "OpenAI", "https://status.openai.com", "ai"),
		sp("npm", "npm", "https://status.npmjs.org", "developer tools"),
		sp("circleci", "CircleCI", "https://status.circleci.com", "developer tools"),
		sp("dropbox", "Dropbox", "https://status.dropbox.com", "storage"),
		feed("aws", "Amazon Web Services", "https://status.aws.amazon.com/rss/all.rss", "https://health.aws.amazon.com/health/status", "cloud"),
		feed("google-cloud", "Google Cloud", "https://status.cloud.google.com/en/feed.atom", "https://status.cloud.google.com", "cloud"),
		feed("azure", "Microsoft Azure", "https://rssfeed.azure.status.microsoft/en-us/status/feed/", "https://azure.status.microsoft/en-us/status", "cloud"),
		feed("slack", "Slack", "https://slack-status.com/feed/rss", "https://slack-status.com", "communications"),
	}
}

// Catalog is the list of providers that can be followed: the built-in ones,
// then Extra, then the ConfigMap's entries, a later entry replacing an
// earlier one with the same id.
type Catalog struct {
	// Reader reads the ConfigMap (an uncached reader is fine: the catalog
	// caches it for TTL); nil skips the ConfigMap.
	Reader client.Reader
	// Namespace is the manager's namespace, where the ConfigMap lives.
	Namespace string
	// ConfigMapName defaults to DefaultConfigMapName.
	ConfigMapName string
	// Extra providers are added after the built-in ones.
	Extra []Provider
	// NoBuiltIn leaves the built-in providers out (tests).
	NoBuiltIn bool
	// TTL is how long the ConfigMap is cached (one minute when 0).
	TTL time.Duration

	mu      sync.Mutex
	cached  []Provider
	expires time.Time
}

// List returns the providers, by name.
func (c *Catalog) List(ctx context.Context) ([]Provider, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.cached != nil && time.Now().Before(c.expires) {
		return slices.Clone(c.cached), nil
	}
	var all []Provider
	if !c.NoBuiltIn {
		all = BuiltIn()
	}
	all = append(all, c.Extra...)
	fromMap, err := c.configMap(ctx)
	if err != nil {
		return nil, err
	}
	all = append(all, fromMap...)
	byID := map[string]Provider{}
	var order []string
	for _, p := range all {
		if _, seen := byID[p.ID]; !seen {
			order = append(order, p.ID)
		}
		byID[p.ID] = p
	}
	out := make([]Provider, 0, len(order))
	for _, id := range order {
		if p := byID[id]; !p.Disabled {
			out = append(out, p)
		}
	}
	slices.SortStableFunc(out, func(a, b Provider) int { return strings.Compare(strings.ToLower(a.Name), strings.ToLower(b.Name)) })
	ttl := c.TTL
	if ttl <= 0 {
		ttl = time.Minute
	}
	c.cached, c.expires = out, time.Now().Add(ttl)
	return slices.Clone(out), nil
}

// Get returns the provider with id; ok is false when there is none.
func (c *Catalog) Get(ctx context.Context, id string) (Provider, bool, error) {
	list, err := c.List(ctx)
	if err != nil {
		return Provider{}, false, err
	}
	i := slices.IndexFunc(list, func(p Provider) bool { return p.ID == id })
	if i < 0 {
		return Provider{}, false, nil
	}
	return list[i], true, nil
}

func (c *Catalog) configMap(ctx context.Context) ([]Provider, error) {
	if c.Reader == nil || c.Namespace == "" {
		return nil, nil
	}
	name := c.ConfigMapName
	if name == "" {
		name = DefaultConfigMapName
	}
	var cm corev1.ConfigMap
	if err := c.Reader.Get(ctx, client.ObjectKey{Namespace: c.Namespace, Name: name}, &cm); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, nil
		}
		return nil, fmt.Errorf("read provider catalog %s/%s: %w", c.Namespace, name, err)
	}
	raw, ok := cm.Data[ConfigMapKey]
	if !ok {
		return nil, nil
	}
	return ParseProviders([]byte(raw))
}

// ParseProviders decodes and validates a YAML (or JSON) list of providers.
// An entry with only an id and disabled: true removes that provider.
func ParseProviders(raw []byte) ([]Provider, error) {
	var list []Provider
	if err := yaml.Unmarshal(raw, &list); err != nil {
		return nil, fmt.Errorf("decode provider catalog: %w", err)
	}
	for i, p := range list {
		switch {
		case p.ID == "" || len(p.ID) > 60:
			return nil, fmt.Errorf("provider %d: id must be 1-60 characters", i)
		case p.Disabled:
			continue
		case p.Kind != KindStatuspage && p.Kind != KindFeed:
			return nil, fmt.Errorf("provider %q: kind must be %s or %s", p.ID, KindStatuspage, KindFeed)
		case !strings.HasPrefix(p.URL, "https://") && !strings.HasPrefix(p.URL, "http://"):
			return nil, fmt.Errorf("provider %q: url must be an http(s) URL", p.ID)
		}
		if p.Name == "" {
			list[i].Name = p.ID
		}
	}
	return list, nil
}
