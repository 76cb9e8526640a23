// Package websitehealth serves /website-health: a workspace's websites,
// their crawls and audits (internal/sitehealth) and the reports.
package websitehealth
