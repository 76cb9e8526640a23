// Package apiserver is the one HTTP stack behind both front doors of the REST
// API: the direct listener (API keys, `Authorization: Bearer sk_…`) and the
// aggregated API (Kubernetes identity through kube-apiserver). Handlers read
// configuration from the informer cache, write it as custom resources and read
// history from the store; errors, codes and limits follow spec/rest-api.md.
// Every write is recorded in the process's writethrough.Overlay before it is
// answered, so the next request, and everything else the manager does, sees
// it (read-your-writes).
//
// The package assembles the API: New builds the core router
// (internal/apiserver/core) and registers on it the routes of one package
// per resource (monitors, incidents, statuspages, integrations, groups,
// maintenance, reliability, stats, public, workspace and one per optional
// feature), in routes.go. Options and Store are the union of what the
// resource packages declare they need.
package apiserver
