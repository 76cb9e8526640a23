// Package stats serves /stats/{id}: the statistics of one monitor from the
// history store (summary, checks, incidents, response time charts and
// series, uptime history and daily bars, region statuses, pause windows).
package stats
