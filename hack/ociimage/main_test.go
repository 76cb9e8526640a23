package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"io"
	"strings"
	"testing"
)

// untar returns the regular files of a tar stream by name, and the headers.
func untar(t *testing.T, r io.Reader) (map[string][]byte, map[string]*tar.Header) {
	t.Helper()
	files, headers := map[string][]byte{}, map[string]*tar.Header{}
	tr := tar.NewReader(r)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return files, headers
		}
		if err != nil {
			t.Fatal(err)
		}
		headers[h.Name] = h
		if h.Typeflag == tar.TypeReg {
			b, _ := io.ReadAll(tr)
			files[h.Name] = b
		}
	}
}

func blob(t *testing.T, files map[string][]byte, digest string) []byte {
	t.Helper()
	b, ok := files["blobs/sha256/"+strings.TrimPrefix(digest, "sha256:")]
	if !ok {
		t.Fatalf("blob %s missing", digest)
	}
	if got := digestOf(b); got != digest {
		t.Fatalf("blob %s has digest %s", digest, got)
	}
	return b
}

func digestOf(b []byte) string { return digest(b) }

func TestBuildWritesALoadableImage(t *testing.T) {
	s := spec{
		Tags:       []string{"registry.k8s.io/pause:3.10", "example.com/x:dev"},
		Entrypoint: []string{"/app"},
		Cmd:        []string{"serve"},
		User:       "65532:65532",
		Images: []image{{Platform: platform{OS: "linux", Arch: "amd64"}, Entries: []entry{
			{name: "/app", mode: 0o755, data: []byte("#!binary")},
			{name: "/etc/ssl/certs/ca-certificates.crt", mode: 0o644, data: []byte("PEM")},
			{name: "/tmp", mode: 0o1777, dir: true},
		}}},
	}
	archive, _, err := build(s)
	if err != nil {
		t.Fatal(err)
	}
	files, _ := untar(t, bytes.NewReader(archive))

	var index struct {
		Manifests []descriptor `json:"manifests"`
	}
	if err := json.Unmarshal(files["index.json"], &index); err != nil {
		t.Fatal(err)
	}
	if len(index.Manifests) != 2 || index.Manifests[0].Annotations["io.containerd.image.name"] != "registry.k8s.io/pause:3.10" ||
		index.Manifests[0].Annotations["org.opencontainers.image.ref.name"] != "3.10" {
		t.Fatalf("index names the image wrongly: %+v", index.Manifests)
	}
	var manifest struct {
		Config descriptor   `json:"config"`
		Layers []descriptor `json:"layers"`
	}
	if err := json.Unmarshal(blob(t, files, index.Manifests[0].Digest), &manifest); err != nil {
		t.Fatal(err)
	}
	var config struct {
		Config struct {
			Entrypoint, Cmd []string
			User            string
		} `json:"config"`
		RootFS struct {
			DiffIDs []string `json:"diff_ids"`
		} `json:"rootfs"`
	}
	if err := json.Unmarshal(blob(t, files, manifest.Config.Digest), &config); err != nil {
		t.Fatal(err)
	}
	if config.Config.User != "65532:65532" || config.Config.Entrypoint[0] != "/app" || config.Config.Cmd[0] != "serve" {
		t.Fatalf("config: %+v", config.Config)
	}
	zr, err := gzip.NewReader(bytes.NewReader(blob(t, files, manifest.Layers[0].Digest)))
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := io.ReadAll(zr)
	if digestOf(raw) != config.RootFS.DiffIDs[0] {
		t.Fatal("diff_id is not the digest of the uncompressed layer")
	}
	layerFiles, headers := untar(t, bytes.NewReader(raw))
	if string(layerFiles["app"]) != "#!binary" || headers["app"].Mode != 0o755 {
		t.Fatalf("app: %q mode %o", layerFiles["app"], headers["app"].Mode)
	}
	for _, dir := range []string{"etc/", "etc/ssl/", "etc/ssl/certs/", "tmp/"} {
		if h := headers[dir]; h == nil || h.Typeflag != tar.TypeDir {
			t.Fatalf("directory %s missing from the layer", dir)
		}
	}
	if headers["tmp/"].Mode != 0o1777 {
		t.Fatalf("/tmp mode %o", headers["tmp/"].Mode)
	}

	var docker []struct{ RepoTags []string }
	if err := json.Unmarshal(files["manifest.json"], &docker); err != nil || len(docker) != 1 || len(docker[0].RepoTags) != 2 {
		t.Fatalf("manifest.json: %s", files["manifest.json"])
	}

	again, _, err := build(s)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(archive, again) {
		t.Fatal("the same inputs gave a different archive")
	}
}

func TestBuildWritesAnIndexForTwoPlatforms(t *testing.T) {
	app := func(arch string) []entry {
		return []entry{{name: "/app", mode: 0o755, data: []byte("binary for " + arch)}, {name: "/tmp", mode: 0o1777, dir: true}}
	}
	s := spec{
		Tags:       []string{"example.com/x:1.2.3"},
		Entrypoint: []string{"/app"},
		Images: []image{
			{Platform: platform{OS: "linux", Arch: "amd64"}, Entries: app("amd64")},
			{Platform: platform{OS: "linux", Arch: "arm64"}, Entries: app("arm64")},
		},
	}
	archive, imageDigest, err := build(s)
	if err != nil {
		t.Fatal(err)
	}
	files, _ := untar(t, bytes.NewReader(archive))
	var layout struct {
		Manifests []descriptor `json:"manifests"`
	}
	if err := json.Unmarshal(files["index.json"], &layout); err != nil {
		t.Fatal(err)
	}
	if len(layout.Manifests) != 1 || layout.Manifests[0].MediaType != indexType || layout.Manifests[0].Digest != imageDigest ||
		layout.Manifests[0].Annotations["io.containerd.image.name"] != "example.com/x:1.2.3" {
		t.Fatalf("index.json does not name the image index %s: %+v", imageDigest, layout.Manifests)
	}
	var index struct {
		MediaType string       `json:"mediaType"`
		Manifests []descriptor `json:"manifests"`
	}
	if err := json.Unmarshal(blob(t, files, imageDigest), &index); err != nil {
		t.Fatal(err)
	}
	if index.MediaType != indexType || len(index.Manifests) != 2 {
		t.Fatalf("image index: %+v", index)
	}
	var configs []string
	for i, want := range []string{"amd64", "arm64"} {
		d := index.Manifests[i]
		if d.Platform == nil || d.Platform.OS != "linux" || d.Platform.Arch != want || d.MediaType != manifestType {
			t.Fatalf("manifest %d: %+v", i, d)
		}
		var manifest struct {
			Config descriptor   `json:"config"`
			Layers []descriptor `json:"layers"`
		}
		if err := json.Unmarshal(blob(t, files, d.Digest), &manifest); err != nil {
			t.Fatal(err)
		}
		var config struct {
			OS           string `json:"os"`
			Architecture string `json:"architecture"`
		}
		if err := json.Unmarshal(blob(t, files, manifest.Config.Digest), &config); err != nil {
			t.Fatal(err)
		}
		if config.OS != "linux" || config.Architecture != want {
			t.Fatalf("config of %s says %s/%s", want, config.OS, config.Architecture)
		}
		zr, err := gzip.NewReader(bytes.NewReader(blob(t, files, manifest.Layers[0].Digest)))
		if err != nil {
			t.Fatal(err)
		}
		layerFiles, _ := untar(t, zr)
		if got := string(layerFiles["app"]); got != "binary for "+want {
			t.Fatalf("the %s layer holds %q", want, got)
		}
		configs = append(configs, "blobs/sha256/"+strings.TrimPrefix(manifest.Config.Digest, "sha256:"))
	}
	var docker []struct{ Config string }
	if err := json.Unmarshal(files["manifest.json"], &docker); err != nil || len(docker) != 1 || docker[0].Config != configs[0] {
		t.Fatalf("manifest.json is not the first platform's image: %s", files["manifest.json"])
	}
}

func TestFullName(t *testing.T) {
	for in, want := range map[string]string{
		"registry.k8s.io/pause:3.10":      "registry.k8s.io/pause:3.10",
		"uptime-e2e/testserver:dev":       "docker.io/uptime-e2e/testserver:dev",
		"busybox:1":                       "docker.io/library/busybox:1",
		"localhost/x:1":                   "localhost/x:1",
		"127.0.0.1:5000/x:1":              "127.0.0.1:5000/x:1",
		"ghcr.io/uptime-operator/x:0.1.0": "ghcr.io/uptime-operator/x:0.1.0",
	} {
		if got := fullName(in); got != want {
			t.Errorf("fullName(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestLayerRefusesDuplicatePaths(t *testing.T) {
	_, err := layer([]entry{{name: "/a", data: []byte("1")}, {name: "a", data: []byte("2")}})
	if err == nil {
		t.Fatal("a path added twice was accepted")
	}
}
