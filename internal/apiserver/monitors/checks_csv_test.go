package monitors

import (
	"context"
	"encoding/csv"
	"net/http"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
	"github.com/uptime-operator/uptime-operator/internal/apikeys"
	"github.com/uptime-operator/uptime-operator/internal/apiserver/core"
	"github.com/uptime-operator/uptime-operator/internal/store"
)

// TestCheckExportNeutralisesEveryCell (issue 27 row 8): the check-history
// CSV neutralises formulas in every column, also in the region and error
// type that a probe agent reports, and in values starting with a tab or a
// carriage return.
func TestCheckExportNeutralisesEveryCell(t *testing.T) {
	m := &monv1.Monitor{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "shop", UID: types.UID("uid-shop")},
		Spec: monv1.MonitorSpec{Type: monv1.MonitorHTTP, URL: "https://shop.example.com"}}
	f := newRouteFixture(t, m)
	hostile := []store.Check{
		{ID: "c1", MonitorID: "uid-shop", Namespace: "team", Region: `=HYPERLINK("https://evil.test","x")`, CheckedAt: f.clk.Now().Add(-3 * time.Minute),
			Status: store.StatusDown, ErrorType: "@SUM(1+1)", ErrorMessage: "\t=cmd|' /C calc'!A0"},
		{ID: "c2", MonitorID: "uid-shop", Namespace: "team", Region: "+eu", CheckedAt: f.clk.Now().Add(-2 * time.Minute),
			Status: store.StatusDown, ErrorType: "-timeout", ErrorMessage: "\r=1+1"},
	}
	if _, err := f.st.InsertChecks(context.Background(), hostile); err != nil {
		t.Fatal(err)
	}
	rec := f.call("team", apikeys.ReadOnly, http.MethodGet, "/monitors/uid-shop/checks.csv", nil)
	if rec.Code != http.StatusOK {
		t.Fatalf("export: %d %s", rec.Code, rec.Body.String())
	}
	rows, err := csv.NewReader(rec.Body).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 3 {
		t.Fatalf("%d rows, want a header and 2", len(rows))
	}
	// Newest first: c2, then c1.
	want := [][3]string{
		{"'+eu", "'-timeout", "'\r=1+1"},
		{`'=HYPERLINK("https://evil.test","x")`, "'@SUM(1+1)", "'\t=cmd|' /C calc'!A0"},
	}
	for i, w := range want {
		row := rows[i+1]
		if got := [3]string{row[2], row[6], row[7]}; got != w {
			t.Errorf("row %d region, error_type, error_message = %q, want %q", i+1, got, w)
		}
		for j, cell := range row {
			if cell != "" && cell[0] != '\'' && core.CSVSafe(cell) != cell {
				t.Errorf("row %d column %s = %q is not neutralised", i+1, rows[0][j], cell)
			}
		}
	}
}
