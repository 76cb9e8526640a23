package monitors

import (
	"encoding/json"
	"testing"

	"k8s.io/apimachinery/pkg/api/equality"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
	"github.com/uptime-operator/uptime-operator/internal/apiserver/core"
	"github.com/uptime-operator/uptime-operator/internal/monitorconfig"
	"github.com/uptime-operator/uptime-operator/internal/monitorconfig/configtest"
	"github.com/uptime-operator/uptime-operator/internal/probeapi"
)

// TestEveryKeyThroughREST walks every key of every monitor type through the
// REST layer's own steps: a create's config object into the Monitor's spec
// (updatedConfig), an update that sends no key (every stored key kept),
// the agent's assignment (probe API JSON, decoded as the agent does) and
// the answer's config object (core.ConfigObject), which must be the object
// the create sent. A key some step forgets, renames or reshapes fails here.
func TestEveryKeyThroughREST(t *testing.T) {
	for _, typ := range monv1.MonitorTypes {
		full, err := configtest.Full(typ)
		if err != nil {
			t.Fatal(err)
		}
		sent := monitorconfig.Encode(&full)
		created := monv1.MonitorSpec{Type: typ}
		if _, err := updatedConfig(&created, nil, sent, false); err != nil {
			t.Fatalf("%s: create: %v", typ, err)
		}
		updated := *created.DeepCopy()
		if _, err := updatedConfig(&updated, &created, map[string]json.RawMessage{}, false); err != nil {
			t.Fatalf("%s: update: %v", typ, err)
		}
		raw, err := json.Marshal(probeapi.Assignment{Type: string(typ), Config: monitorconfig.Only(&updated)})
		if err != nil {
			t.Fatalf("%s: assignment: %v", typ, err)
		}
		var a probeapi.Assignment
		if err := json.Unmarshal(raw, &a); err != nil {
			t.Fatalf("%s: agent decode: %v", typ, err)
		}
		if !equality.Semantic.DeepEqual(monitorconfig.Config(&a.Config), monitorconfig.Config(&full)) {
			t.Errorf("%s: the agent's config differs from the one sent:\n got %+v\nwant %+v", typ, monitorconfig.Config(&a.Config), monitorconfig.Config(&full))
		}
		got, _ := json.Marshal(core.ConfigObject(&a.Config))
		want, _ := json.Marshal(sent)
		if string(got) != string(want) {
			t.Errorf("%s: REST → CR → agent → REST\n got %s\nwant %s", typ, got, want)
		}
	}
}
