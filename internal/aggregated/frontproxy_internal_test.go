package aggregated

import (
	"strings"
	"testing"

	"github.com/uptime-operator/uptime-operator/internal/certs"
)

// TestParseRequestHeader: every part of the configuration must parse; a
// broken part is an error, never an empty (widest) value.
func TestParseRequestHeader(t *testing.T) {
	ca, err := certs.NewCA("test-ca")
	if err != nil {
		t.Fatal(err)
	}
	good := func() map[string]string {
		return map[string]string{
			keyClientCA: string(ca.CertPEM), keyAllowedNames: `["front-proxy-client"]`,
			keyUserHeaders: `["X-Remote-User"]`, keyUIDHeaders: `["X-Remote-Uid"]`,
			keyGroupHeaders: `["X-Remote-Group"]`, keyExtraPrefix: `["X-Remote-Extra-"]`,
		}
	}
	for _, tc := range []struct {
		name    string
		edit    func(map[string]string)
		wantErr string
	}{
		{"complete", func(map[string]string) {}, ""},
		{"no allowed names means any name", func(d map[string]string) { delete(d, keyAllowedNames) }, ""},
		{"no uid headers (an older kube-apiserver)", func(d map[string]string) { delete(d, keyUIDHeaders) }, ""},
		{"allowed names not JSON", func(d map[string]string) { d[keyAllowedNames] = "front-proxy-client" }, keyAllowedNames},
		{"allowed names not strings", func(d map[string]string) { d[keyAllowedNames] = `[1]` }, keyAllowedNames},
		{"blank allowed name", func(d map[string]string) { d[keyAllowedNames] = `["front-proxy-client", " "]` }, keyAllowedNames},
		{"extra prefixes not JSON", func(d map[string]string) { d[keyExtraPrefix] = `X-Remote-Extra-` }, keyExtraPrefix},
		{"no CA", func(d map[string]string) { delete(d, keyClientCA) }, keyClientCA},
		{"CA not PEM", func(d map[string]string) { d[keyClientCA] = "garbage" }, keyClientCA},
		{"no username headers", func(d map[string]string) { d[keyUserHeaders] = `[]` }, keyUserHeaders},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := good()
			tc.edit(d)
			c, err := parseRequestHeader(d)
			if tc.wantErr == "" {
				if err != nil || c == nil {
					t.Fatalf("got %v, %v", c, err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("error %v, want one naming %s", err, tc.wantErr)
			}
		})
	}
}
