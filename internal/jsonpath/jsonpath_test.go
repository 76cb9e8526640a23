package jsonpath

import "testing"

func TestJSONPathWildcardsAndText(t *testing.T) {
	doc, err := Decode([]byte(`{"svc":{"web":{"s":"up","tags":["<a>"]},"db":{"s":"down"}},"list":[[1,2],[3]]}`))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		path, want string
		exists     bool
	}{
		{"$.svc.*.s", `["down","up"]`, true}, // members by key: db, web
		{"$.list[*][*]", `[1,2,3]`, true},
		{"$.list[*][-1]", `[2,3]`, true},
		{"$.svc[*].tags[0]", `["<a>"]`, true}, // no HTML escaping
		{"$.svc.*.nope", `[]`, false},
		{"$.list[0][1]", `2`, true},
		{"$.svc.web.tags", `["<a>"]`, true},
	} {
		v, ok, err := Eval(doc, tc.path)
		if err != nil || ok != tc.exists {
			t.Errorf("%s: exists %v (%v), want %v", tc.path, ok, err, tc.exists)
			continue
		}
		if ok {
			if got := Text(v); got != tc.want {
				t.Errorf("%s = %s, want %s", tc.path, got, tc.want)
			}
		}
	}
	if _, _, err := Eval(doc, "$.svc[*"); err == nil {
		t.Error("an unclosed wildcard bracket must be an error")
	}
}
