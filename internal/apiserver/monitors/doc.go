// Package monitors serves /monitors (Monitor custom resources with their
// config, credentials, regions, checks, step runs, heartbeats, DNS records
// and subdomain discovery) and monitoring as code (/automation/monitors:
// plan, apply and keyed monitors). It keeps the caches that make a list of
// 10,000 monitors cheap: encoded configs and list items, uptimes, and the
// informer's monitor journal (InformerMonitors).
package monitors
