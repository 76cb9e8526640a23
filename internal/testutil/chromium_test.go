package testutil

import "testing"

// TestChromiumAction checks that a newcomer's `make test` (browser tests
// required) installs chromium as root and fails without it otherwise, and
// that only an optional run skips.
func TestChromiumAction(t *testing.T) {
	for _, tc := range []struct {
		name                         string
		found, root, required, optIn bool
		want                         browserAction
	}{
		{"installed", true, false, true, false, browserUse},
		{"make test as root installs", false, true, true, false, browserInstall},
		{"make test without root fails", false, false, true, false, browserFail},
		{"go test as root with opt-in installs", false, true, false, true, browserInstall},
		{"go test as root without opt-in skips", false, true, false, false, browserSkip},
		{"go test skips", false, false, false, false, browserSkip},
	} {
		if got := chromiumAction(tc.found, tc.root, tc.required, tc.optIn); got != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}

type fakeT struct{ fatal, skipped bool }

func (f *fakeT) Helper()               {}
func (f *fakeT) Fatalf(string, ...any) { f.fatal = true }
func (f *fakeT) Skip(...any)           { f.skipped = true }

// TestChromiumFailsWhenRequired checks that a required browser test with no
// chromium to be had fails instead of skipping.
func TestChromiumFailsWhenRequired(t *testing.T) {
	t.Setenv("PATH", t.TempDir()) // no chromium, no apt-get
	t.Setenv("CI", "")
	t.Setenv(BrowserTestsEnv, "required")
	var f fakeT
	if p := Chromium(&f); p != "" || !f.fatal || f.skipped {
		t.Errorf("required: path %q fatal %v skipped %v, want a failure", p, f.fatal, f.skipped)
	}
	t.Setenv(BrowserTestsEnv, "")
	f = fakeT{}
	if Chromium(&f); f.fatal || !f.skipped {
		t.Errorf("optional: fatal %v skipped %v, want a skip", f.fatal, f.skipped)
	}
}
