// Command ociimage assembles a single-layer OCI image from files on disk and
// writes it as an image archive that `ctr images import`, `podman load` and
// `docker load` all read (an OCI image layout with a docker-style
// manifest.json beside index.json).
//
// It exists because no base or builder image can be pulled where this project
// is built and tested: the images a cluster here needs (the operator, the
// pause image, CoreDNS, the e2e test server) are all a static binary plus a
// few files, which is what `FROM scratch` + COPY would make. The layer is
// reproducible: entries are sorted, owned by root unless said otherwise and
// dated at the Unix epoch, so the same inputs give the same digest.
//
//	go run ./hack/ociimage -o bin/image.tar -tag ghcr.io/x/y:1 \
//	  -file bin/uptime-operator:/uptime-operator:0755 \
//	  -ca /etc/ssl/certs/ca-certificates.crt -nonroot \
//	  -entrypoint /uptime-operator -cmd manager -user 65532:65532
package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"
)

// listFlag collects a repeatable string flag.
type listFlag []string

func (l *listFlag) String() string     { return strings.Join(*l, ",") }
func (l *listFlag) Set(v string) error { *l = append(*l, v); return nil }

// entry is one file of the layer.
type entry struct {
	name string // absolute path inside the image
	mode int64
	data []byte
	dir  bool
}

// spec is everything the image is made of; main fills it from flags.
type spec struct {
	Tags       []string
	Entries    []entry
	Entrypoint []string
	Cmd        []string
	User       string
	Env        []string
	Labels     map[string]string
}

func main() {
	var (
		out, user, entrypoint, ca string
		digestFile                string
		tags, files, cmds, envs   listFlag
		labels                    listFlag
		nonroot                   bool
	)
	flag.StringVar(&out, "o", "image.tar", "archive to write")
	flag.Var(&tags, "tag", "image reference, e.g. registry.k8s.io/pause:3.10 (repeatable)")
	flag.Var(&files, "file", "SRC:DST[:MODE] file to add (repeatable); MODE is octal, default 0644, or 0755 for executables")
	flag.StringVar(&ca, "ca", "", "CA bundle to install as /etc/ssl/certs/ca-certificates.crt")
	flag.BoolVar(&nonroot, "nonroot", false, "add /etc/passwd and /etc/group with root and nonroot (65532), as distroless has")
	flag.StringVar(&entrypoint, "entrypoint", "", "entrypoint (one path; arguments go in -cmd)")
	flag.Var(&cmds, "cmd", "default argument (repeatable)")
	flag.StringVar(&user, "user", "", "user[:group] the image runs as")
	flag.Var(&envs, "env", "KEY=VALUE environment entry (repeatable)")
	flag.Var(&labels, "label", "KEY=VALUE image label (repeatable)")
	flag.StringVar(&digestFile, "digest-file", "", "also write the image's manifest digest (sha256:…, what image.digest and a registry show) to this file")
	flag.Parse()

	if len(tags) == 0 {
		fail("at least one -tag is required")
	}
	s := spec{Tags: tags, Cmd: cmds, User: user, Env: envs, Labels: map[string]string{}}
	if entrypoint != "" {
		s.Entrypoint = []string{entrypoint}
	}
	for _, l := range labels {
		k, v, ok := strings.Cut(l, "=")
		if !ok {
			fail("-label %q is not KEY=VALUE", l)
		}
		s.Labels[k] = v
	}
	for _, f := range files {
		parts := strings.Split(f, ":")
		if len(parts) < 2 || len(parts) > 3 || !strings.HasPrefix(parts[1], "/") {
			fail("-file %q is not SRC:/DST[:MODE]", f)
		}
		data, err := os.ReadFile(parts[0])
		if err != nil {
			fail("%v", err)
		}
		mode := int64(0o644)
		if st, err := os.Stat(parts[0]); err == nil && st.Mode()&0o111 != 0 {
			mode = 0o755
		}
		if len(parts) == 3 {
			m, err := strconv.ParseInt(parts[2], 8, 64)
			if err != nil {
				fail("-file %q: mode: %v", f, err)
			}
			mode = m
		}
		s.Entries = append(s.Entries, entry{name: parts[1], mode: mode, data: data})
	}
	if ca != "" {
		data, err := os.ReadFile(ca)
		if err != nil {
			fail("%v", err)
		}
		s.Entries = append(s.Entries, entry{name: "/etc/ssl/certs/ca-certificates.crt", mode: 0o644, data: data})
	}
	if nonroot {
		s.Entries = append(s.Entries,
			entry{name: "/etc/passwd", mode: 0o644, data: []byte("root:x:0:0:root:/root:/sbin/nologin\nnonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin\n")},
			entry{name: "/etc/group", mode: 0o644, data: []byte("root:x:0:\nnonroot:x:65532:\n")},
			entry{name: "/home/nonroot", mode: 0o700, dir: true},
		)
	}
	// Programs (Go's os.TempDir) expect /tmp, even with a read-only root.
	s.Entries = append(s.Entries, entry{name: "/tmp", mode: 0o1777, dir: true})

	archive, manifestDigest, err := build(s)
	if err != nil {
		fail("%v", err)
	}
	// A fresh clone has no bin/ yet: the archive's folder is made here.
	if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
		fail("%v", err)
	}
	if err := os.WriteFile(out+".tmp", archive, 0o644); err != nil {
		fail("%v", err)
	}
	if err := os.Rename(out+".tmp", out); err != nil {
		fail("%v", err)
	}
	if digestFile != "" {
		if err := os.WriteFile(digestFile, []byte(manifestDigest+"\n"), 0o644); err != nil {
			fail("%v", err)
		}
	}
	fmt.Printf("ociimage: wrote %s (%s, %s, %d bytes)\n", out, strings.Join(tags, ", "), manifestDigest, len(archive))
}

func fail(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "ociimage: "+format+"\n", args...)
	os.Exit(1)
}

// epoch dates every entry so that the layer digest depends only on content.
var epoch = time.Unix(0, 0).UTC()

// layer returns the uncompressed tar of the entries, parent directories
// included, in path order.
func layer(entries []entry) ([]byte, error) {
	all := map[string]entry{}
	for _, e := range entries {
		name := strings.TrimPrefix(path.Clean(e.name), "/")
		if name == "" || name == "." {
			return nil, fmt.Errorf("bad path %q", e.name)
		}
		if _, dup := all[name]; dup {
			return nil, fmt.Errorf("%s added twice", e.name)
		}
		e.name = name
		all[name] = e
		for dir := path.Dir(name); dir != "."; dir = path.Dir(dir) {
			if _, ok := all[dir]; !ok {
				all[dir] = entry{name: dir, mode: 0o755, dir: true}
			}
		}
	}
	names := make([]string, 0, len(all))
	for n := range all {
		names = append(names, n)
	}
	sort.Strings(names)
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, n := range names {
		e := all[n]
		h := &tar.Header{Name: n, Mode: e.mode, ModTime: epoch, Format: tar.FormatPAX}
		if e.dir {
			h.Typeflag, h.Name = tar.TypeDir, n+"/"
		} else {
			h.Typeflag, h.Size = tar.TypeReg, int64(len(e.data))
		}
		if n == "home/nonroot" {
			h.Uid, h.Gid = 65532, 65532
		}
		if err := tw.WriteHeader(h); err != nil {
			return nil, err
		}
		if !e.dir {
			if _, err := tw.Write(e.data); err != nil {
				return nil, err
			}
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

func digest(b []byte) string {
	sum := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(sum[:])
}

type descriptor struct {
	MediaType   string            `json:"mediaType"`
	Digest      string            `json:"digest"`
	Size        int64             `json:"size"`
	Annotations map[string]string `json:"annotations,omitempty"`
}

// build returns the image archive: blobs under blobs/sha256/, oci-layout,
// index.json (one manifest per tag, named by the annotations containerd and
// podman read) and manifest.json (docker load's format, same blobs); and the
// digest of its manifest, the image's digest once pushed.
func build(s spec) ([]byte, string, error) {
	raw, err := layer(s.Entries)
	if err != nil {
		return nil, "", err
	}
	var gz bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&gz, gzip.BestCompression)
	if _, err := zw.Write(raw); err != nil {
		return nil, "", err
	}
	if err := zw.Close(); err != nil {
		return nil, "", err
	}
	layerBlob := gz.Bytes()

	env := append([]string{"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"}, s.Env...)
	config := map[string]any{
		"architecture": "amd64",
		"os":           "linux",
		"created":      epoch.Format(time.RFC3339),
		"config": map[string]any{
			"Entrypoint": s.Entrypoint,
			"Cmd":        s.Cmd,
			"User":       s.User,
			"Env":        env,
			"Labels":     s.Labels,
		},
		"rootfs":  map[string]any{"type": "layers", "diff_ids": []string{digest(raw)}},
		"history": []map[string]any{{"created": epoch.Format(time.RFC3339), "created_by": "hack/ociimage"}},
	}
	configBlob, err := json.Marshal(config)
	if err != nil {
		return nil, "", err
	}
	manifest := map[string]any{
		"schemaVersion": 2,
		"mediaType":     "application/vnd.oci.image.manifest.v1+json",
		"config":        descriptor{MediaType: "application/vnd.oci.image.config.v1+json", Digest: digest(configBlob), Size: int64(len(configBlob))},
		"layers":        []descriptor{{MediaType: "application/vnd.oci.image.layer.v1.tar+gzip", Digest: digest(layerBlob), Size: int64(len(layerBlob))}},
	}
	manifestBlob, err := json.Marshal(manifest)
	if err != nil {
		return nil, "", err
	}
	index := map[string]any{"schemaVersion": 2, "mediaType": "application/vnd.oci.image.index.v1+json"}
	var manifests []descriptor
	for _, t := range s.Tags {
		manifests = append(manifests, descriptor{
			MediaType: "application/vnd.oci.image.manifest.v1+json",
			Digest:    digest(manifestBlob), Size: int64(len(manifestBlob)),
			Annotations: map[string]string{
				"io.containerd.image.name":          fullName(t),
				"org.opencontainers.image.ref.name": refName(t),
			},
		})
	}
	index["manifests"] = manifests
	indexBlob, err := json.Marshal(index)
	if err != nil {
		return nil, "", err
	}
	docker, err := json.Marshal([]map[string]any{{
		"Config":   "blobs/sha256/" + strings.TrimPrefix(digest(configBlob), "sha256:"),
		"RepoTags": s.Tags,
		"Layers":   []string{"blobs/sha256/" + strings.TrimPrefix(digest(layerBlob), "sha256:")},
	}})
	if err != nil {
		return nil, "", err
	}

	var out bytes.Buffer
	tw := tar.NewWriter(&out)
	add := func(name string, data []byte) error {
		if err := tw.WriteHeader(&tar.Header{Name: name, Mode: 0o644, Size: int64(len(data)), ModTime: epoch, Typeflag: tar.TypeReg}); err != nil {
			return err
		}
		_, err := tw.Write(data)
		return err
	}
	for _, d := range []string{"blobs/", "blobs/sha256/"} {
		if err := tw.WriteHeader(&tar.Header{Name: d, Mode: 0o755, ModTime: epoch, Typeflag: tar.TypeDir}); err != nil {
			return nil, "", err
		}
	}
	for _, b := range [][]byte{layerBlob, configBlob, manifestBlob} {
		if err := add("blobs/sha256/"+strings.TrimPrefix(digest(b), "sha256:"), b); err != nil {
			return nil, "", err
		}
	}
	if err := add("oci-layout", []byte(`{"imageLayoutVersion":"1.0.0"}`)); err != nil {
		return nil, "", err
	}
	if err := add("index.json", indexBlob); err != nil {
		return nil, "", err
	}
	if err := add("manifest.json", docker); err != nil {
		return nil, "", err
	}
	if err := tw.Close(); err != nil {
		return nil, "", err
	}
	return out.Bytes(), digest(manifestBlob), nil
}

// fullName is ref as container runtimes name it: a reference without a
// registry host means Docker Hub (docker.io/library/ for one component), and
// kubelet asks the runtime for the full name.
func fullName(ref string) string {
	first, _, hasSlash := strings.Cut(ref, "/")
	if hasSlash && (strings.ContainsAny(first, ".:") || first == "localhost") {
		return ref
	}
	if !hasSlash {
		return "docker.io/library/" + ref
	}
	return "docker.io/" + ref
}

// refName is the tag part of a reference, as the OCI layout's ref.name
// annotation conventionally holds ("3.10" of "registry.k8s.io/pause:3.10").
func refName(ref string) string {
	if i := strings.LastIndex(ref, ":"); i > strings.LastIndex(ref, "/") {
		return ref[i+1:]
	}
	return "latest"
}
