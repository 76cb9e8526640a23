// Package statuspages serves /status/pages: a workspace's StatusPage
// custom resources, the monitors they show, their access (password,
// sessions), custom domain, languages and subscribers. The public pages
// themselves are served by internal/statuspage.
package statuspages
