package hostname

import "testing"

func TestRegistrable(t *testing.T) {
	for host, want := range map[string]string{
		"localhost":          "",
		"co.uk":              "",
		"a.b.example.co.uk.": "example.co.uk",
		" Shop.Example.COM ": "example.com",
		"1.2.3.4":            "",
		"::1":                "",
		"":                   "",
	} {
		if got := Registrable(host); got != want {
			t.Errorf("Registrable(%q) = %q, want %q", host, got, want)
		}
	}
}
