package core

import "testing"

func TestStripCauseType(t *testing.T) {
	for in, want := range map[string]string{
		`Invalid value: 10: must be between 15 and 900`:                              "must be between 15 and 900",
		`Invalid value: "ftp://x": must be a valid http:// or https:// URL`:          "must be a valid http:// or https:// URL",
		`Forbidden: plan limit reached: 3 of 3 monitors (ENTITLEMENT_LIMIT_REACHED)`: "plan limit reached: 3 of 3 monitors (ENTITLEMENT_LIMIT_REACHED)",
		`Required value: required for http monitors`:                                 "required for http monitors",
		`Unsupported value: "mars-1": supported values: "eu-1", "us-1"`:              `supported values: "eu-1", "us-1"`,
		`plain message`: "plain message",
	} {
		if got := StripCauseType(in); got != want {
			t.Errorf("StripCauseType(%q) = %q, want %q", in, got, want)
		}
	}
}
