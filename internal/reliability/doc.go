// Package reliability is the math of the reliability reports: incident
// figures (MTTR, MTBF, downtime), the health score, flakiness and the SLO
// state summary. docs/reliability.md gives every formula; the table tests
// next to each function pin them.
//
// It is pure: callers read checks, incidents and SLOs (the REST API from
// the store and the cluster, the MCP server through the REST API) and pass
// them in, so the REST reports and the MCP uptime report score a monitor
// with the same formula.
package reliability

import "math"

// Round2 rounds to two decimals, the precision of every reported figure.
func Round2(f float64) float64 { return math.Round(f*100) / 100 }
