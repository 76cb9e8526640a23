package main

import (
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// frontDoors are the packages only the composition root (internal/manager,
// main.go) and tests may import: the reconcilers and the admission webhooks.
var frontDoors = []string{
	"github.com/uptime-operator/uptime-operator/controllers",
	"github.com/uptime-operator/uptime-operator/webhooks",
}

// layered lists the directories (with their subpackages) whose non-test
// files must not import a front door: every package but the composition root
// and the front doors themselves. The model, the leaf services and the domain
// services take what they share from internal/monitor, api/v1alpha1 and each
// other. docs/architecture.md ("Import direction") explains the rule; the
// same check by hand is
//
//	go list -f '{{.ImportPath}} {{.Imports}}' ./... | grep -E ' \[.*uptime-operator/(controllers|webhooks)[] ]'
var layered = []string{"api", "probes", "internal"}

// composition is what may import the front doors besides tests: the
// composition root (main.go, at the top, is not walked).
var composition = map[string]bool{"internal/manager": true}

// TestImportDirection fails when a package of layered imports controllers
// or webhooks.
func TestImportDirection(t *testing.T) {
	for _, dir := range layered {
		err := filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() && (d.Name() == "testdata" || composition[filepath.ToSlash(path)]) {
				return filepath.SkipDir
			}
			if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
				return nil
			}
			f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ImportsOnly)
			if err != nil {
				return err
			}
			for _, imp := range f.Imports {
				p, _ := strconv.Unquote(imp.Path.Value)
				for _, door := range frontDoors {
					if p == door {
						t.Errorf("%s imports %s: only internal/manager and tests may", path, p)
					}
				}
			}
			return nil
		})
		if err != nil {
			t.Fatalf("walk %s: %v", dir, err)
		}
	}
}
