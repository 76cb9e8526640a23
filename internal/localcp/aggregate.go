package localcp

import (
	"bytes"
	"context"
	"fmt"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/uptime-operator/uptime-operator/config"
)

// AggregateRoles decodes the embedded aggregate roles (config.AggregateRoles):
// the ClusterRoles labelled to aggregate into view, edit and admin.
func AggregateRoles() ([]*rbacv1.ClusterRole, error) {
	var out []*rbacv1.ClusterRole
	for _, doc := range bytes.Split(config.AggregateRoles, []byte("\n---")) {
		doc = bytes.TrimSpace(bytes.TrimPrefix(bytes.TrimSpace(doc), []byte("---")))
		if len(doc) == 0 {
			continue
		}
		role := &rbacv1.ClusterRole{}
		if err := utilyaml.Unmarshal(doc, role); err != nil {
			return nil, fmt.Errorf("decode aggregate roles: %w", err)
		}
		if role.Kind == "ClusterRole" {
			out = append(out, role)
		}
	}
	return out, nil
}

// AggregateClusterRoles fills every ClusterRole that has an
// aggregationRule (Kubernetes' view, edit and admin among them) with the
// rules of the ClusterRoles its selectors match, once, as
// kube-controller-manager's ClusterRole aggregation controller does
// continuously. The local control plane runs no controller manager, so
// without this view, edit and admin stay empty and the chart's aggregate
// roles (docs/kubectl.md: "view is enough") cannot be tried on it. Call it
// again after a role changes.
func AggregateClusterRoles(ctx context.Context, c client.Client) error {
	var roles rbacv1.ClusterRoleList
	if err := c.List(ctx, &roles); err != nil {
		return fmt.Errorf("list cluster roles: %w", err)
	}
	for i := range roles.Items {
		role := &roles.Items[i]
		if role.AggregationRule == nil {
			continue
		}
		rules, err := aggregatedRules(role, roles.Items)
		if err != nil {
			return err
		}
		if equality.Semantic.DeepEqual(rules, role.Rules) {
			continue
		}
		role.Rules = rules
		if err := c.Update(ctx, role); err != nil {
			return fmt.Errorf("aggregate cluster role %s: %w", role.Name, err)
		}
	}
	return nil
}

// aggregatedRules is the union of the rules of the roles (other than
// role) that one of role's selectors matches, in the order the controller
// gives them: by role, then rule, without duplicates.
func aggregatedRules(role *rbacv1.ClusterRole, all []rbacv1.ClusterRole) ([]rbacv1.PolicyRule, error) {
	var rules []rbacv1.PolicyRule
	seen := func(r rbacv1.PolicyRule) bool {
		for _, have := range rules {
			if equality.Semantic.DeepEqual(have, r) {
				return true
			}
		}
		return false
	}
	for _, ls := range role.AggregationRule.ClusterRoleSelectors {
		sel, err := metav1.LabelSelectorAsSelector(&ls)
		if err != nil {
			return nil, fmt.Errorf("cluster role %s: selector: %w", role.Name, err)
		}
		for _, other := range all {
			if other.Name == role.Name || !sel.Matches(labels.Set(other.Labels)) {
				continue
			}
			for _, r := range other.Rules {
				if !seen(r) {
					rules = append(rules, r)
				}
			}
		}
	}
	return rules, nil
}
