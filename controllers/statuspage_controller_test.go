package controllers_test

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
	"github.com/uptime-operator/uptime-operator/controllers"
)

func TestStatusPageReady(t *testing.T) {
	page := &monv1.StatusPage{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "shop"}}
	for _, tc := range []struct {
		name       string
		missing    []string
		owner      string
		wantOK     bool
		wantReason string
	}{
		{"all monitors exist", nil, "team/shop", true, monv1.ReasonReconciled},
		{"owner unknown", nil, "", true, monv1.ReasonReconciled},
		{"missing monitors", []string{"api", "db"}, "team/shop", false, monv1.ReasonReferenceNotFound},
		{"slug taken wins over missing monitors", []string{"api"}, "other/shop", false, monv1.ReasonSlugTaken},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ok, reason, msg := controllers.StatusPageReady(page, tc.missing, tc.owner)
			if ok != tc.wantOK || reason != tc.wantReason || msg == "" {
				t.Errorf("StatusPageReady = %v, %s, %q; want %v, %s", ok, reason, msg, tc.wantOK, tc.wantReason)
			}
		})
	}
}
