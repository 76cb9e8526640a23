// Command metric-names prints the name of every metric family the product
// exports, one a line, sorted: the manager's own (internal/metrics), the
// controller-runtime, Go and process families of its registry, and the
// probe agent's (probes). `make verify` hands the list to the dashboard
// lint (hack/promtools), so a dashboard query naming a metric that no
// component exports fails.
package main

import (
	"fmt"
	"os"
	"regexp"
	"slices"

	"github.com/prometheus/client_golang/prometheus"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/uptime-operator/uptime-operator/internal/metrics"
	"github.com/uptime-operator/uptime-operator/probes"
)

// fqName reads a family's name from its Desc, which keeps it unexported.
var fqName = regexp.MustCompile(`fqName: "([^"]+)"`)

func main() {
	names := map[string]bool{}
	for _, c := range append(metrics.Collectors(), probes.AgentMetricCollectors()...) {
		ch := make(chan *prometheus.Desc, 64)
		go func() { c.Describe(ch); close(ch) }()
		for d := range ch {
			if m := fqName.FindStringSubmatch(d.String()); m != nil {
				names[m[1]] = true
			}
		}
	}
	// Families registered by controller-runtime and client-go that have a
	// sample in a fresh process (Go runtime, process, workqueue, REST client).
	families, err := ctrlmetrics.Registry.Gather()
	if err != nil {
		fmt.Fprintln(os.Stderr, "metric-names:", err)
		os.Exit(1)
	}
	for _, f := range families {
		names[f.GetName()] = true
	}
	var out []string
	for n := range names {
		out = append(out, n)
	}
	slices.Sort(out)
	for _, n := range out {
		fmt.Println(n)
	}
}
