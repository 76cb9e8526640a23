package v1alpha1

import (
	"net"
	"net/url"
	"strconv"
	"strings"
)

// Endpoint is where a monitor's checks connect, as its spec declares it:
// what lists show as the target, and what certificate expiry watches.
// +kubebuilder:object:generate=false
type Endpoint struct {
	// Target is the URL, host:port or DNS name as lists show it.
	Target string
	// Host is the host name or IP literal the check connects to (no
	// brackets); empty for a type that connects nowhere (cron).
	Host string
	// TLSAddr is host:port when the check makes a TLS handshake there, empty
	// otherwise; ServerName is the name it sends (Host unless the config
	// overrides it).
	TLSAddr    string
	ServerName string
}

// Endpointer is the config struct of a type whose target is in its own
// fields, not in spec.url: each such type says here where it connects, so
// nothing else switches on the type to find out.
// +kubebuilder:object:generate=false
type Endpointer interface {
	Endpoint() Endpoint
}

// URLEndpoint is the endpoint of a check of raw, an http(s):// or ws(s)://
// URL: a TLS endpoint for https and wss.
func URLEndpoint(raw string) Endpoint {
	e := Endpoint{Target: raw}
	u, err := url.Parse(raw)
	if err != nil {
		return e
	}
	e.Host = u.Hostname()
	if scheme := strings.ToLower(u.Scheme); scheme == "https" || scheme == "wss" {
		port := u.Port()
		if port == "" {
			port = "443"
		}
		e.TLSAddr, e.ServerName = net.JoinHostPort(e.Host, port), e.Host
	}
	return e
}

// Endpoint implements Endpointer.
func (c *PingConfig) Endpoint() Endpoint {
	return Endpoint{Target: c.Host, Host: strings.Trim(c.Host, "[]")}
}

// Endpoint implements Endpointer: a TLS endpoint when the port check
// makes a handshake.
func (c *PortConfig) Endpoint() Endpoint {
	host := strings.Trim(c.Host, "[]")
	addr := net.JoinHostPort(host, strconv.Itoa(int(c.Port)))
	e := Endpoint{Target: addr, Host: host}
	if c.TLS {
		e.TLSAddr, e.ServerName = addr, host
	}
	return e
}

// Endpoint implements Endpointer.
func (c *UDPConfig) Endpoint() Endpoint {
	host := strings.Trim(c.Host, "[]")
	return Endpoint{Target: "udp://" + net.JoinHostPort(host, strconv.Itoa(int(c.Port))), Host: host}
}

// Endpoint implements Endpointer. The name is what is resolved, not where
// the check connects (the resolver), so it has no host.
func (c *DNSConfig) Endpoint() Endpoint {
	return Endpoint{Target: string(c.RecordType) + " " + c.Name}
}

// Endpoint implements Endpointer: jobs call in, the check connects nowhere.
func (c *CronConfig) Endpoint() Endpoint {
	return Endpoint{Target: "heartbeat " + c.CronExpression}
}

// Endpoint implements Endpointer: the first step's URL, as lists show it
// (each step's certificate is its own; expiry does not watch them).
func (c *MultistepConfig) Endpoint() Endpoint {
	if len(c.Steps) == 0 {
		return Endpoint{}
	}
	return Endpoint{Target: c.Steps[0].URL}
}

// Endpoint implements Endpointer: a TLS endpoint unless plaintext.
func (c *GRPCConfig) Endpoint() Endpoint {
	e := Endpoint{Target: "grpc://" + c.Target + "/" + c.Service}
	host, _, err := net.SplitHostPort(c.Target)
	if err != nil {
		return e
	}
	e.Host = host
	if !c.Plaintext {
		e.TLSAddr, e.ServerName = c.Target, host
		if c.ServerName != "" {
			e.ServerName = c.ServerName
		}
	}
	return e
}

// Endpoint implements Endpointer.
func (c *WebSocketConfig) Endpoint() Endpoint { return URLEndpoint(c.URL) }
