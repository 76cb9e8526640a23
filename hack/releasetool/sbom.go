package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/url"
	"runtime/debug"
	"sort"
	"strings"

	cdx "github.com/CycloneDX/cyclonedx-go"
)

// The SBOMs are CycloneDX 1.6 JSON, read from the Go build info a binary
// carries (debug/buildinfo): the main module, every module linked in with
// its version and go.sum hash, the Go standard library at the toolchain's
// version, and the build settings (GOOS, GOARCH, CGO_ENABLED, -trimpath,
// -ldflags). Nothing is fetched. They carry no timestamp and no serial
// number, so the same build gives the same SBOM.
const sbomSpec = cdx.SpecVersion1_6

// goPURL is the package URL of a Go module (or "std" at a Go version).
func goPURL(path, version string) string {
	return "pkg:golang/" + path + "@" + url.PathEscape(version)
}

// moduleComponents are the library components of the modules a binary
// links (replacements resolved) and of the standard library.
func moduleComponents(info *debug.BuildInfo) []cdx.Component {
	var out []cdx.Component
	for _, m := range info.Deps {
		if m.Replace != nil {
			m = m.Replace
		}
		c := cdx.Component{
			Type:       cdx.ComponentTypeLibrary,
			BOMRef:     goPURL(m.Path, m.Version),
			Name:       m.Path,
			Version:    m.Version,
			PackageURL: goPURL(m.Path, m.Version),
		}
		if m.Sum != "" {
			// go.sum's h1: hash, the one `go mod verify` checks.
			c.Properties = &[]cdx.Property{{Name: "cdx:gomod:module:hash", Value: m.Sum}}
		}
		out = append(out, c)
	}
	std := goPURL("std", info.GoVersion)
	out = append(out, cdx.Component{Type: cdx.ComponentTypeLibrary, BOMRef: std, Name: "std", Version: info.GoVersion, PackageURL: std})
	return out
}

// binaryComponent is the application component of one binary: its name and
// the release version, its SHA-256, and its build settings as properties.
func binaryComponent(name, version string, bin []byte, info *debug.BuildInfo, ref string) cdx.Component {
	sum := sha256.Sum256(bin)
	props := []cdx.Property{{Name: "cdx:gomod:build:goVersion", Value: info.GoVersion}, {Name: "cdx:gomod:build:mainModule", Value: info.Main.Path}}
	for _, s := range info.Settings {
		props = append(props, cdx.Property{Name: "cdx:gomod:build:setting:" + s.Key, Value: s.Value})
	}
	return cdx.Component{
		Type:       cdx.ComponentTypeApplication,
		BOMRef:     ref,
		Name:       name,
		Version:    "v" + version,
		PackageURL: goPURL(info.Main.Path, "v"+version) + "?goos=" + buildSetting(info, "GOOS") + "&goarch=" + buildSetting(info, "GOARCH"),
		Hashes:     &[]cdx.Hash{{Algorithm: cdx.HashAlgoSHA256, Value: hex.EncodeToString(sum[:])}},
		Properties: &props,
	}
}

func tool() *cdx.ToolsChoice {
	return &cdx.ToolsChoice{Components: &[]cdx.Component{{
		Type: cdx.ComponentTypeApplication, Name: "releasetool", Group: "github.com/uptime-operator/uptime-operator/hack",
	}}}
}

// binaryBOM is the SBOM of one binary.
func binaryBOM(name, version string, bin []byte, info *debug.BuildInfo) *cdx.BOM {
	main := binaryComponent(name, version, bin, info, goPURL(info.Main.Path, "v"+version))
	libs := moduleComponents(info)
	bom := cdx.NewBOM()
	bom.Metadata = &cdx.Metadata{Component: &main, Tools: tool()}
	bom.Components = &libs
	bom.Dependencies = &[]cdx.Dependency{{Ref: main.BOMRef, Dependencies: refs(libs)}}
	return bom
}

// imageBOM is the SBOM of the image: the image (a container component with
// its digest) made of one binary per platform, each with the modules it
// links. A module that two platforms link is listed once.
func imageBOM(repo, version string, img *releaseImage) *cdx.BOM {
	alg, hexDigest := img.Digest.Algorithm, img.Digest.Hex
	name := repo[strings.LastIndex(repo, "/")+1:]
	container := cdx.Component{
		Type:       cdx.ComponentTypeContainer,
		BOMRef:     "pkg:oci/" + name + "@" + url.PathEscape(img.Digest.String()) + "?repository_url=" + url.QueryEscape(repo) + "&tag=" + version,
		Name:       repo,
		Version:    version,
		PackageURL: "pkg:oci/" + name + "@" + url.PathEscape(img.Digest.String()) + "?repository_url=" + url.QueryEscape(repo) + "&tag=" + version,
	}
	if alg == "sha256" {
		container.Hashes = &[]cdx.Hash{{Algorithm: cdx.HashAlgoSHA256, Value: hexDigest}}
	}
	seen := map[string]bool{}
	var components []cdx.Component
	var deps []cdx.Dependency
	var binaries []string
	for _, pi := range img.Images {
		ref := "binary:" + pi.Platform.String() + ":" + pi.BinaryPath
		bin := binaryComponent(strings.TrimPrefix(pi.BinaryPath, "/"), version, pi.Binary, pi.BuildInfo, ref)
		props := append(*bin.Properties, cdx.Property{Name: "cdx:oci:platform", Value: pi.Platform.String()}, cdx.Property{Name: "cdx:oci:manifestDigest", Value: pi.Digest.String()})
		bin.Properties = &props
		components = append(components, bin)
		binaries = append(binaries, ref)
		libs := moduleComponents(pi.BuildInfo)
		for _, l := range libs {
			if !seen[l.BOMRef] {
				seen[l.BOMRef] = true
				components = append(components, l)
			}
		}
		deps = append(deps, cdx.Dependency{Ref: ref, Dependencies: refs(libs)})
	}
	deps = append([]cdx.Dependency{{Ref: container.BOMRef, Dependencies: &binaries}}, deps...)
	bom := cdx.NewBOM()
	bom.Metadata = &cdx.Metadata{Component: &container, Tools: tool()}
	bom.Components = &components
	bom.Dependencies = &deps
	return bom
}

func refs(cs []cdx.Component) *[]string {
	out := make([]string, 0, len(cs))
	for _, c := range cs {
		out = append(out, c.BOMRef)
	}
	sort.Strings(out)
	return &out
}

// encodeBOM writes a BOM as indented CycloneDX JSON.
func encodeBOM(bom *cdx.BOM) ([]byte, error) {
	var buf bytes.Buffer
	enc := cdx.NewBOMEncoder(&buf, cdx.BOMFileFormatJSON).SetPretty(true)
	if err := enc.EncodeVersion(bom, sbomSpec); err != nil {
		return nil, fmt.Errorf("encode the SBOM: %w", err)
	}
	return buf.Bytes(), nil
}

// decodeBOM reads CycloneDX JSON.
func decodeBOM(b []byte) (*cdx.BOM, error) {
	var bom cdx.BOM
	if err := cdx.NewBOMDecoder(bytes.NewReader(b), cdx.BOMFileFormatJSON).Decode(&bom); err != nil {
		return nil, fmt.Errorf("decode the SBOM: %w", err)
	}
	return &bom, nil
}
