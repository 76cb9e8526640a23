// Package podsecurity evaluates Pod templates against the Pod Security
// Standards with the evaluator kube-apiserver's admission plugin uses
// (k8s.io/pod-security-admission), so the Pods this project makes (the
// chart's and the probe Deployments the manager builds) are proved to pass
// "baseline" and "restricted" without a cluster.
package podsecurity

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/pod-security-admission/api"
	"k8s.io/pod-security-admission/policy"
)

// Levels are the levels every Pod of the project must pass.
var Levels = []api.Level{api.LevelBaseline, api.LevelRestricted}

var evaluator = func() policy.Evaluator {
	e, err := policy.NewEvaluator(policy.DefaultChecks(), nil)
	if err != nil {
		panic(fmt.Sprintf("pod security evaluator: %v", err))
	}
	return e
}()

// Violations returns, for each level of Levels at the latest version that
// refuses the Pod, the evaluator's reason and detail as kube-apiserver would
// word them ("restricted:latest: unrestricted capabilities (…)"); empty
// when every level allows it.
func Violations(meta *metav1.ObjectMeta, spec *corev1.PodSpec) []string {
	var out []string
	for _, level := range Levels {
		lv := api.LevelVersion{Level: level, Version: api.LatestVersion()}
		res := policy.AggregateCheckResults(evaluator.EvaluatePod(lv, meta, spec))
		if !res.Allowed {
			out = append(out, fmt.Sprintf("%s: %s (%s)", lv, res.ForbiddenReason(), res.ForbiddenDetail()))
		}
	}
	return out
}
