package apidoc

import (
	"fmt"
	"go/ast"
	"go/doc"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"unicode"
)

// The descriptions of the schemas are the doc comments of the wire types
// and their fields, read from the sources with go/doc.

// pkgDocs are the doc comments of one package.
type pkgDocs struct {
	docs   map[string]string   // "Type" and "Type.Field" → doc
	consts map[string][]string // type name → values of its constants
}

// modulePath is the module whose packages doc comments are read from, in
// moduleRoot: the sources this package was built from (go run ./hack/gen-
// openapi and the tests run from them).
const modulePath = "github.com/uptime-operator/uptime-operator/"

var moduleRoot = func() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..")
}()

// pkg parses the doc comments of a package of this module once; other
// packages (the standard library) have none to give.
func (c *components) pkg(path string) *pkgDocs {
	if d, ok := c.docs[path]; ok {
		return d
	}
	d := &pkgDocs{}
	if rel, ok := strings.CutPrefix(path, modulePath); ok {
		var err error
		if d, err = parseDocs(filepath.Join(moduleRoot, filepath.FromSlash(rel))); err != nil {
			panic(fmt.Sprintf("doc comments of %s: %v", path, err))
		}
	}
	c.docs[path] = d
	return d
}

// parseDocs reads the doc comments of the package in dir.
func parseDocs(dir string) (*pkgDocs, error) {
	fset := token.NewFileSet()
	pkgs, err := parser.ParseDir(fset, dir, func(fi fs.FileInfo) bool { return !strings.HasSuffix(fi.Name(), "_test.go") }, parser.ParseComments)
	if err != nil {
		return nil, err
	}
	out := &pkgDocs{docs: map[string]string{}, consts: map[string][]string{}}
	for _, p := range pkgs {
		dp := doc.New(p, dir, doc.AllDecls)
		for _, t := range dp.Types {
			out.docs[t.Name] = describe(t.Doc, t.Name)
			for _, c := range t.Consts {
				for _, spec := range c.Decl.Specs {
					for _, v := range spec.(*ast.ValueSpec).Values {
						if lit, ok := v.(*ast.BasicLit); ok && lit.Kind == token.STRING {
							if s, err := strconv.Unquote(lit.Value); err == nil {
								out.consts[t.Name] = append(out.consts[t.Name], s)
							}
						}
					}
				}
			}
			st, ok := t.Decl.Specs[0].(*ast.TypeSpec).Type.(*ast.StructType)
			if !ok {
				continue
			}
			for _, f := range st.Fields.List {
				text := f.Doc.Text()
				if text == "" {
					text = f.Comment.Text()
				}
				for _, n := range f.Names {
					out.docs[t.Name+"."+n.Name] = describe(text, n.Name)
				}
			}
		}
	}
	return out, nil
}

// describe is a doc comment as one paragraph, without the Go convention
// of starting it with the declared name ("Monitor is the monitor object of
// …" → "The monitor object of …", "Reason says why …" → "Says why …"): the
// reader of the API does not know the Go name.
func describe(text, name string) string {
	c := strings.Join(strings.Fields(text), " ")
	rest, ok := strings.CutPrefix(c, name+" ")
	if !ok {
		return c
	}
	r, verb := strings.CutPrefix(rest, "is ")
	if !verb {
		r, verb = strings.CutPrefix(rest, "are ")
	}
	if r == "" || !verb && !unicode.IsLower(rune(r[0])) {
		return c
	}
	return strings.ToUpper(r[:1]) + r[1:]
}
