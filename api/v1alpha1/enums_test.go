package v1alpha1

import (
	"go/ast"
	"go/parser"
	"go/token"
	"slices"
	"strings"
	"testing"
)

// enumMarkers returns the values of the +kubebuilder:validation:Enum marker
// of every string type declared in this package's source, by type name.
func enumMarkers(t *testing.T) map[string][]string {
	t.Helper()
	fset := token.NewFileSet()
	pkgs, err := parser.ParseDir(fset, ".", nil, parser.ParseComments)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]string{}
	for _, p := range pkgs {
		for _, f := range p.Files {
			for _, decl := range f.Decls {
				gd, ok := decl.(*ast.GenDecl)
				if !ok || gd.Tok != token.TYPE || gd.Doc == nil {
					continue
				}
				for _, c := range gd.Doc.List {
					v, ok := strings.CutPrefix(c.Text, "// +kubebuilder:validation:Enum=")
					if ok {
						out[gd.Specs[0].(*ast.TypeSpec).Name.Name] = strings.Split(v, ";")
					}
				}
			}
		}
	}
	return out
}

// TestEnumMarkersMatchLists fails when a type is added to the Enum marker
// of MonitorType or AlertChannelType but not to its list (or the other way
// round): the CRD would accept what the operator does not know.
func TestEnumMarkersMatchLists(t *testing.T) {
	markers := enumMarkers(t)
	strs := func(v any) []string {
		var out []string
		switch l := v.(type) {
		case []MonitorType:
			for _, x := range l {
				out = append(out, string(x))
			}
		case []AlertChannelType:
			for _, x := range l {
				out = append(out, string(x))
			}
		}
		return out
	}
	for typ, list := range map[string]any{"MonitorType": MonitorTypes, "AlertChannelType": AlertChannelTypes} {
		if got, want := markers[typ], strs(list); !slices.Equal(got, want) {
			t.Errorf("Enum marker of %s is %v, its list is %v", typ, got, want)
		}
	}
}

// TestURLRuleMatchesRegistry fails when the url CEL rules of MonitorSpec
// name other types than the registry's URL column: the CRD would require
// (or refuse to require) a url the REST API and admission see otherwise.
func TestURLRuleMatchesRegistry(t *testing.T) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "monitor_types.go", nil, parser.ParseComments)
	if err != nil {
		t.Fatal(err)
	}
	var required, https []string
	for _, cg := range f.Comments {
		for _, c := range cg.List {
			if v, ok := strings.CutPrefix(c.Text, `// +kubebuilder:validation:XValidation:rule="!(self.type in [`); ok {
				list, _, _ := strings.Cut(v, "]")
				for _, q := range strings.Split(list, ",") {
					required = append(required, strings.Trim(q, "' "))
				}
			}
			if v, ok := strings.CutPrefix(c.Text, `// +kubebuilder:validation:XValidation:rule="self.type != '`); ok {
				name, _, _ := strings.Cut(v, "'")
				https = append(https, name)
			}
		}
	}
	var wantRequired, wantHTTPS []string
	for _, r := range MonitorTypeRegistry {
		if r.URL != URLNone {
			wantRequired = append(wantRequired, string(r.Type))
		}
		if r.URL == URLHTTPS {
			wantHTTPS = append(wantHTTPS, string(r.Type))
		}
	}
	if !slices.Equal(required, wantRequired) {
		t.Errorf("the url-required CEL rule names %v, the registry %v", required, wantRequired)
	}
	if !slices.Equal(https, wantHTTPS) {
		t.Errorf("the https CEL rules name %v, the registry %v", https, wantHTTPS)
	}
}

// TestRegistrySpecTypesFirst: the registry lists the specification's nine
// types first, in its order, then the extension types, each marked: the
// REST document and the MCP tools tell the two apart by that mark.
func TestRegistrySpecTypesFirst(t *testing.T) {
	spec := []MonitorType{MonitorHTTP, MonitorAPI, MonitorPing, MonitorPort, MonitorUDP, MonitorCron, MonitorDNS, MonitorMultistep, MonitorMCP}
	for i, r := range MonitorTypeRegistry {
		if i < len(spec) && (r.Type != spec[i] || r.Extension) {
			t.Errorf("line %d is %s (extension %v), want the specification's %s", i, r.Type, r.Extension, spec[i])
		}
		if i >= len(spec) && !r.Extension {
			t.Errorf("line %d, %s, follows the specification's nine but is not marked Extension", i, r.Type)
		}
	}
}
