package probeapi

import (
	"encoding/json"
	"testing"
)

// TestCopyAndClearKey: every config key can be copied and cleared by its
// REST name, and the copy is exactly that key.
func TestCopyAndClearKey(t *testing.T) {
	var from Config
	if err := json.Unmarshal([]byte(`{"timeout":1,"method":"POST","host":"h","steps":[{"name":"a","url":"u"}],"tool_call":{"name":"t"}}`), &from); err != nil {
		t.Fatal(err)
	}
	for _, k := range ConfigKeys() {
		var c Config
		if !c.CopyKey(k, &from) || !c.ClearKey(k) {
			t.Errorf("config key %q has no field", k)
		}
	}
	var c Config
	c.CopyKey("method", &from)
	c.CopyKey("steps", &from)
	if raw, _ := json.Marshal(c); string(raw) != `{"method":"POST","steps":[{"name":"a","url":"u"}]}` {
		t.Errorf("copied method and steps: %s", raw)
	}
	c.ClearKey("steps")
	if raw, _ := json.Marshal(c); string(raw) != `{"method":"POST"}` {
		t.Errorf("cleared steps: %s", raw)
	}
	if c.CopyKey("nope", &from) || c.ClearKey("nope") {
		t.Error("an unknown key was accepted")
	}
}
