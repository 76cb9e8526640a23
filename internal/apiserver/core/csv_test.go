package core

import "testing"

func TestCSVSafe(t *testing.T) {
	for in, want := range map[string]string{
		"=1+1":            "'=1+1",
		"+1":              "'+1",
		"-1":              "'-1",
		"@SUM(A1)":        "'@SUM(A1)",
		"\t=1":            "'\t=1",
		"\r=1":            "'\r=1",
		"  =1":            "'  =1",
		"https://a.test/": "https://a.test/",
		"eu-west":         "eu-west",
		"":                "",
		"2026-05-01":      "2026-05-01",
	} {
		if got := CSVSafe(in); got != want {
			t.Errorf("CSVSafe(%q) = %q, want %q", in, got, want)
		}
	}
}
