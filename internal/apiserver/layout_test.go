package apiserver_test

import (
	"go/build"
	"os"
	"path"
	"strings"
	"testing"
)

// TestResourcePackagesImportOnlyCore keeps the imports of the REST layer
// pointing one way: the core imports no resource package, and a resource
// package imports the core (and its test fixture) but no other resource
// package and not this package, which assembles them all.
func TestResourcePackagesImportOnlyCore(t *testing.T) {
	const root = "github.com/uptime-operator/uptime-operator/internal/apiserver"
	entries, err := os.ReadDir(".")
	if err != nil {
		t.Fatal(err)
	}
	dirs := []string{"core", "core/coretest"}
	for _, e := range entries {
		if e.IsDir() && e.Name() != "core" {
			dirs = append(dirs, e.Name())
		}
	}
	for _, dir := range dirs {
		pkg, err := build.ImportDir(dir, 0)
		if err != nil {
			t.Fatalf("%s: %v", dir, err)
		}
		imports := append(append(pkg.Imports, pkg.TestImports...), pkg.XTestImports...)
		for _, imp := range imports {
			if imp != root && !strings.HasPrefix(imp, root+"/") {
				continue
			}
			rel := strings.TrimPrefix(strings.TrimPrefix(imp, root), "/")
			var allowed bool
			switch dir {
			case "core":
				allowed = false
			case "core/coretest":
				allowed = rel == "core"
			default:
				allowed = rel == "core" || rel == "core/coretest"
			}
			if !allowed {
				t.Errorf("%s imports %s: resource packages import only the core, the core no resource package", path.Join(root, dir), imp)
			}
		}
	}
}
