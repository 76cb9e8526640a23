package jsonpath

import "testing"

func FuzzJSONPath(f *testing.F) {
	for _, s := range []struct{ doc, path string }{
		{`{"data":{"items":[{"id":1}]}}`, "$.data.items[0].id"},
		{`{"a b":[1,2,3]}`, "$['a b'][-1]"},
		{`[1,[2,[3]]]`, "$[1][1][0]"},
		{`{"x":null}`, "x"},
		{`"str"`, "$"},
		{`{}`, "$.[0]]"},
		{`{"a":[{"b":1},{"b":[2,3]}]}`, "$.a[*].b[*]"},
		{`{"a":{"x":1,"y":2}}`, "$.a.*"},
	} {
		f.Add([]byte(s.doc), s.path)
	}
	f.Fuzz(func(t *testing.T, doc []byte, path string) {
		v, err := Decode(doc)
		if err != nil {
			return
		}
		got, ok, err := Eval(v, path)
		if err != nil && ok {
			t.Fatalf("error and found: %v", err)
		}
		if ok {
			_ = Text(got)
		}
	})
}
