// Command gen-openapi writes the OpenAPI 3.1 document of the REST API
// (internal/apiserver/openapi.json, embedded and served at GET
// /openapi.json, and its copy docs/openapi.json) and the reference
// docs/api-reference.md rendered from it (markdown.go), and the config
// keys table of docs/rest-api.md (configkeys.go). The document is built from the
// routes as they are declared where they are registered (core.Doc in each
// resource package's Routes): see apiserver.BuildOpenAPI and
// internal/apidoc. Run it from the repository root after changing a route
// or a wire type:
//
//	go run ./hack/gen-openapi
//
// internal/apiserver/openapi_test.go fails while the written files are
// stale.
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/uptime-operator/uptime-operator/internal/apiserver"
)

func main() {
	outs := flag.String("out", "internal/apiserver/openapi.json,docs/openapi.json", "comma-separated files to write")
	mdOut := flag.String("markdown", "docs/api-reference.md", "Markdown API reference to write (empty: none)")
	keysDoc := flag.String("config-keys", "docs/rest-api.md", "Markdown file whose config keys table to rewrite (empty: none)")
	flag.Parse()
	if err := run(strings.Split(*outs, ","), *mdOut, *keysDoc); err != nil {
		fmt.Fprintln(os.Stderr, "gen-openapi:", err)
		os.Exit(1)
	}
}

func run(outs []string, mdOut, keysDoc string) error {
	doc, err := apiserver.BuildOpenAPI()
	if err != nil {
		return err
	}
	for _, p := range outs {
		if err := write(p, doc); err != nil {
			return err
		}
	}
	if keysDoc != "" {
		if err := spliceConfigKeys(keysDoc); err != nil {
			return err
		}
	}
	if mdOut == "" {
		return nil
	}
	md, err := Markdown(doc)
	if err != nil {
		return err
	}
	return write(mdOut, md)
}

func write(path string, b []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return os.WriteFile(path, b, 0o644)
}
