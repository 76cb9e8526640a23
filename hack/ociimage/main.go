// Command ociimage assembles a single-layer OCI image from files on disk and
// writes it as an image archive that `ctr images import`, `podman load` and
// `docker load` all read (an OCI image layout with a docker-style
// manifest.json beside index.json).
//
// With more than one -platform it writes an image index (a multi-arch image:
// one manifest per platform, each with its own layer) and the index's digest
// is the image's digest, as a registry shows it for a multi-arch tag. A -file
// source may then name {os} and {arch}, replaced per platform. docker load
// reads manifest.json, which holds the first platform only; ctr and podman
// read index.json and take their own platform from it.
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
//	go run ./hack/ociimage -o bin/image.tar -tag ghcr.io/x/y:1 \
//	  -platform linux/amd64 -platform linux/arm64 \
//	  -file bin/image/{os}-{arch}/uptime-operator:/uptime-operator:0755 …
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

// platform is an image's os/arch, as GOOS/GOARCH and the OCI image spec
// name them.
type platform struct {
	OS   string `json:"os"`
	Arch string `json:"architecture"`
}

func (p platform) String() string { return p.OS + "/" + p.Arch }

// image is the layer content of one platform.
type image struct {
	Platform platform
	Entries  []entry
}

// spec is everything the image is made of; main fills it from flags. One
// image is a plain image; more make an image index, in the order given.
type spec struct {
	Tags       []string
	Images     []image
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
		labels, platforms         listFlag
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
	flag.Var(&platforms, "platform", "OS/ARCH of an image (repeatable; default linux/amd64); more than one writes an image index, and -file sources may name {os} and {arch}")
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
	if len(platforms) == 0 {
		platforms = listFlag{"linux/amd64"}
	}
	for _, pf := range platforms {
		osName, arch, ok := strings.Cut(pf, "/")
		if !ok || osName == "" || arch == "" {
			fail("-platform %q is not OS/ARCH", pf)
		}
		p := platform{OS: osName, Arch: arch}
		entries, err := platformEntries(p, files, ca, nonroot)
		if err != nil {
			fail("%s: %v", p, err)
		}
		s.Images = append(s.Images, image{Platform: p, Entries: entries})
	}

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

// platformEntries reads the files of one platform's layer: the -file
// sources with {os} and {arch} replaced, the CA bundle, the nonroot user's
// files and /tmp.
func platformEntries(p platform, files []string, ca string, nonroot bool) ([]entry, error) {
	var entries []entry
	subst := strings.NewReplacer("{os}", p.OS, "{arch}", p.Arch)
	for _, f := range files {
		parts := strings.Split(f, ":")
		if len(parts) < 2 || len(parts) > 3 || !strings.HasPrefix(parts[1], "/") {
			return nil, fmt.Errorf("-file %q is not SRC:/DST[:MODE]", f)
		}
		src := subst.Replace(parts[0])
		data, err := os.ReadFile(src)
		if err != nil {
			return nil, err
		}
		mode := int64(0o644)
		if st, err := os.Stat(src); err == nil && st.Mode()&0o111 != 0 {
			mode = 0o755
		}
		if len(parts) == 3 {
			m, err := strconv.ParseInt(parts[2], 8, 64)
			if err != nil {
				return nil, fmt.Errorf("-file %q: mode: %w", f, err)
			}
			mode = m
		}
		entries = append(entries, entry{name: parts[1], mode: mode, data: data})
	}
	if ca != "" {
		data, err := os.ReadFile(ca)
		if err != nil {
			return nil, err
		}
		entries = append(entries, entry{name: "/etc/ssl/certs/ca-certificates.crt", mode: 0o644, data: data})
	}
	if nonroot {
		entries = append(entries,
			entry{name: "/etc/passwd", mode: 0o644, data: []byte("root:x:0:0:root:/root:/sbin/nologin\nnonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin\n")},
			entry{name: "/etc/group", mode: 0o644, data: []byte("root:x:0:\nnonroot:x:65532:\n")},
			entry{name: "/home/nonroot", mode: 0o700, dir: true},
		)
	}
	// Programs (Go's os.TempDir) expect /tmp, even with a read-only root.
	entries = append(entries, entry{name: "/tmp", mode: 0o1777, dir: true})
	return entries, nil
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
	Platform    *platform         `json:"platform,omitempty"`
	Annotations map[string]string `json:"annotations,omitempty"`
}

const (
	manifestType = "application/vnd.oci.image.manifest.v1+json"
	indexType    = "application/vnd.oci.image.index.v1+json"
)

func describe(mediaType string, b []byte) descriptor {
	return descriptor{MediaType: mediaType, Digest: digest(b), Size: int64(len(b))}
}

// imageBlobs are the blobs of one platform's image: its gzipped layer, its
// config and its manifest.
type imageBlobs struct {
	layer, config, manifest []byte
}

// buildImage makes the layer, config and manifest of one platform.
func buildImage(s spec, img image) (imageBlobs, error) {
	raw, err := layer(img.Entries)
	if err != nil {
		return imageBlobs{}, err
	}
	var gz bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&gz, gzip.BestCompression)
	if _, err := zw.Write(raw); err != nil {
		return imageBlobs{}, err
	}
	if err := zw.Close(); err != nil {
		return imageBlobs{}, err
	}
	layerBlob := gz.Bytes()

	env := append([]string{"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"}, s.Env...)
	config := map[string]any{
		"architecture": img.Platform.Arch,
		"os":           img.Platform.OS,
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
		return imageBlobs{}, err
	}
	manifest := map[string]any{
		"schemaVersion": 2,
		"mediaType":     manifestType,
		"config":        describe("application/vnd.oci.image.config.v1+json", configBlob),
		"layers":        []descriptor{describe("application/vnd.oci.image.layer.v1.tar+gzip", layerBlob)},
	}
	manifestBlob, err := json.Marshal(manifest)
	if err != nil {
		return imageBlobs{}, err
	}
	return imageBlobs{layer: layerBlob, config: configBlob, manifest: manifestBlob}, nil
}

// build returns the image archive: blobs under blobs/sha256/, oci-layout,
// index.json (one entry per tag, named by the annotations containerd and
// podman read) and manifest.json (docker load's format, same blobs, the
// first platform); and the image's digest once pushed: its manifest's for
// one platform, its image index's for more.
func build(s spec) ([]byte, string, error) {
	if len(s.Images) == 0 {
		return nil, "", fmt.Errorf("no platform to build")
	}
	var images []imageBlobs
	var blobs [][]byte
	for _, img := range s.Images {
		b, err := buildImage(s, img)
		if err != nil {
			return nil, "", fmt.Errorf("%s: %w", img.Platform, err)
		}
		images = append(images, b)
		blobs = append(blobs, b.layer, b.config, b.manifest)
	}
	top := describe(manifestType, images[0].manifest)
	if len(s.Images) > 1 {
		var manifests []descriptor
		for i, img := range s.Images {
			d := describe(manifestType, images[i].manifest)
			p := img.Platform
			d.Platform = &p
			manifests = append(manifests, d)
		}
		indexBlob, err := json.Marshal(map[string]any{"schemaVersion": 2, "mediaType": indexType, "manifests": manifests})
		if err != nil {
			return nil, "", err
		}
		blobs = append(blobs, indexBlob)
		top = describe(indexType, indexBlob)
	}

	index := map[string]any{"schemaVersion": 2, "mediaType": indexType}
	var manifests []descriptor
	for _, t := range s.Tags {
		d := top
		d.Annotations = map[string]string{
			"io.containerd.image.name":          fullName(t),
			"org.opencontainers.image.ref.name": refName(t),
		}
		manifests = append(manifests, d)
	}
	index["manifests"] = manifests
	indexBlob, err := json.Marshal(index)
	if err != nil {
		return nil, "", err
	}
	docker, err := json.Marshal([]map[string]any{{
		"Config":   "blobs/sha256/" + strings.TrimPrefix(digest(images[0].config), "sha256:"),
		"RepoTags": s.Tags,
		"Layers":   []string{"blobs/sha256/" + strings.TrimPrefix(digest(images[0].layer), "sha256:")},
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
	written := map[string]bool{}
	for _, b := range blobs {
		name := "blobs/sha256/" + strings.TrimPrefix(digest(b), "sha256:")
		if written[name] { // two platforms may share a blob
			continue
		}
		written[name] = true
		if err := add(name, b); err != nil {
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
	return out.Bytes(), top.Digest, nil
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
