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
		leftOff    int
		owner      string
		wantOK     bool
		wantReason string
	}{
		{"all monitors exist", nil, 0, "team/shop", true, monv1.ReasonReconciled},
		{"owner unknown", nil, 0, "", true, monv1.ReasonReconciled},
		{"missing monitors", []string{"api", "db"}, 0, "team/shop", false, monv1.ReasonReferenceNotFound},
		{"joined monitors left off", nil, 3, "team/shop", false, monv1.ReasonTooManyMonitors},
		{"missing monitors win over left off", []string{"api"}, 3, "team/shop", false, monv1.ReasonReferenceNotFound},
		{"slug taken wins over missing monitors", []string{"api"}, 0, "other/shop", false, monv1.ReasonSlugTaken},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ok, reason, msg := controllers.StatusPageReady(page, tc.missing, tc.leftOff, tc.owner)
			if ok != tc.wantOK || reason != tc.wantReason || msg == "" {
				t.Errorf("StatusPageReady = %v, %s, %q; want %v, %s", ok, reason, msg, tc.wantOK, tc.wantReason)
			}
		})
	}
}
