// Package monitors serves /monitors (Monitor custom resources with their
// config, credentials, regions, checks, step runs, heartbeats, DNS records
// and subdomain discovery). Its Writes are the monitor writes that
// monitoring as code (package automation) makes too, so every monitor is
// written one way. It keeps the caches that make a list of 10,000 monitors
// cheap: encoded configs and list items, uptimes, and the informer's
// monitor journal (InformerMonitors).
package monitors
