package probeapi

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

// TestCredentialsOnTheWire: the bound origins reach the agent as the
// manager wrote them, and Bound finds each list's own.
func TestCredentialsOnTheWire(t *testing.T) {
	one := 1
	a := Assignment{ID: "m", Type: TypeMultistep, Credentials: []Credential{
		{Header: "X-Api-Key", Origin: "https://api.example.com:443"},
		{Step: &one, Header: "Authorization", Origin: ""},
	}}
	raw, err := json.Marshal(a)
	if err != nil {
		t.Fatal(err)
	}
	const want = `"credentials":[{"header":"X-Api-Key","origin":"https://api.example.com:443"},{"step":1,"header":"Authorization","origin":""}]`
	if !json.Valid(raw) || !strings.Contains(string(raw), want) {
		t.Fatalf("wire form %s, want it to contain %s", raw, want)
	}
	var back Assignment
	if err := json.Unmarshal(raw, &back); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back.Credentials, a.Credentials) {
		t.Fatalf("round trip %+v", back.Credentials)
	}
	if got := back.Bound(-1); !reflect.DeepEqual(got, map[string]string{"X-Api-Key": "https://api.example.com:443"}) {
		t.Fatalf("Bound(-1) = %v", got)
	}
	if got := back.Bound(1); !reflect.DeepEqual(got, map[string]string{"Authorization": ""}) {
		t.Fatalf("Bound(1) = %v", got)
	}
	if got := back.Bound(0); got != nil {
		t.Fatalf("Bound(0) = %v", got)
	}
	raw, _ = json.Marshal(Assignment{ID: "m"})
	if strings.Contains(string(raw), "credentials") {
		t.Fatalf("an assignment without credentials names them: %s", raw)
	}
}
