// Package domainssl serves /monitors/{id}/domain-ssl: the certificate and
// domain registration expiry of a monitor's target (internal/expiry).
package domainssl
