package main

import (
	"archive/tar"
	"bytes"
	"debug/buildinfo"
	"debug/elf"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"runtime/debug"
	"strings"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/types"
	"github.com/google/go-containerregistry/pkg/v1/validate"
)

// platformImage is one platform's image of a release image and the binary
// its entrypoint runs.
type platformImage struct {
	Platform   v1.Platform
	Digest     v1.Hash
	BinaryPath string // the entrypoint, inside the image
	Binary     []byte
	BuildInfo  *debug.BuildInfo
	Labels     map[string]string
}

// releaseImage is the image archive hack/ociimage wrote: its digest (the
// image index's for a multi-arch image, the manifest's for one platform)
// and its images.
type releaseImage struct {
	Digest v1.Hash
	Tag    string // the tag index.json names it by
	Images []platformImage
}

// readImage reads an image archive (an OCI layout in a tar), checks every
// blob against its digest and size (go-containerregistry's validate), and
// returns each platform's entrypoint binary.
func readImage(archive string) (*releaseImage, error) {
	dir, err := os.MkdirTemp("", "releasetool-image-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	if err := untar(archive, dir); err != nil {
		return nil, fmt.Errorf("unpack %s: %w", archive, err)
	}
	lp, err := layout.FromPath(dir)
	if err != nil {
		return nil, fmt.Errorf("read the OCI layout of %s: %w", archive, err)
	}
	top, err := lp.ImageIndex()
	if err != nil {
		return nil, err
	}
	im, err := top.IndexManifest()
	if err != nil {
		return nil, err
	}
	if len(im.Manifests) == 0 {
		return nil, errors.New("the layout names no image")
	}
	d := im.Manifests[0]
	out := &releaseImage{Digest: d.Digest, Tag: d.Annotations["org.opencontainers.image.ref.name"]}
	var images []v1.Image
	switch d.MediaType {
	case types.OCIImageIndex, types.DockerManifestList:
		idx, err := top.ImageIndex(d.Digest)
		if err != nil {
			return nil, err
		}
		if err := validate.Index(idx); err != nil {
			return nil, fmt.Errorf("image index %s: %w", d.Digest, err)
		}
		m, err := idx.IndexManifest()
		if err != nil {
			return nil, err
		}
		for _, md := range m.Manifests {
			img, err := idx.Image(md.Digest)
			if err != nil {
				return nil, err
			}
			images = append(images, img)
		}
	default:
		img, err := top.Image(d.Digest)
		if err != nil {
			return nil, err
		}
		if err := validate.Image(img); err != nil {
			return nil, fmt.Errorf("image %s: %w", d.Digest, err)
		}
		images = append(images, img)
	}
	for _, img := range images {
		pi, err := entrypointBinary(img)
		if err != nil {
			return nil, err
		}
		out.Images = append(out.Images, *pi)
	}
	return out, nil
}

// entrypointBinary reads one image's platform and the file its entrypoint
// names.
func entrypointBinary(img v1.Image) (*platformImage, error) {
	digest, err := img.Digest()
	if err != nil {
		return nil, err
	}
	cf, err := img.ConfigFile()
	if err != nil {
		return nil, err
	}
	if len(cf.Config.Entrypoint) == 0 {
		return nil, fmt.Errorf("image %s has no entrypoint", digest)
	}
	want := strings.TrimPrefix(path.Clean(cf.Config.Entrypoint[0]), "/")
	rc := mutate.Extract(img)
	defer rc.Close()
	tr := tar.NewReader(rc)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return nil, fmt.Errorf("image %s has no %s", digest, cf.Config.Entrypoint[0])
		}
		if err != nil {
			return nil, err
		}
		if strings.TrimPrefix(path.Clean(h.Name), "/") != want || h.Typeflag != tar.TypeReg {
			continue
		}
		bin, err := io.ReadAll(tr)
		if err != nil {
			return nil, err
		}
		pi := &platformImage{
			Platform:   v1.Platform{OS: cf.OS, Architecture: cf.Architecture, Variant: cf.Variant},
			Digest:     digest,
			BinaryPath: "/" + want,
			Binary:     bin,
			Labels:     cf.Config.Labels,
		}
		if pi.BuildInfo, err = buildinfo.Read(bytes.NewReader(bin)); err != nil {
			return nil, fmt.Errorf("image %s: %s carries no Go build info: %w", digest, pi.BinaryPath, err)
		}
		return pi, nil
	}
}

// elfMachines is the ELF machine of each GOARCH a release builds for.
var elfMachines = map[string]elf.Machine{
	"amd64": elf.EM_X86_64,
	"arm64": elf.EM_AARCH64,
}

// checkPlatform fails unless the binary is a Linux ELF executable for the
// image's architecture, built by Go for that GOOS/GOARCH.
func (pi platformImage) checkPlatform() error {
	want, ok := elfMachines[pi.Platform.Architecture]
	if !ok {
		return fmt.Errorf("%s: no ELF machine known for architecture %q", pi.Platform, pi.Platform.Architecture)
	}
	f, err := elf.NewFile(bytes.NewReader(pi.Binary))
	if err != nil {
		return fmt.Errorf("%s: %s is not an ELF file: %w", pi.Platform, pi.BinaryPath, err)
	}
	if f.Machine != want {
		return fmt.Errorf("the %s image's %s is for %s, not %s", pi.Platform, pi.BinaryPath, f.Machine, want)
	}
	if got := buildSetting(pi.BuildInfo, "GOARCH"); got != pi.Platform.Architecture {
		return fmt.Errorf("the %s image's %s was built for GOARCH %q", pi.Platform, pi.BinaryPath, got)
	}
	if got := buildSetting(pi.BuildInfo, "GOOS"); got != pi.Platform.OS {
		return fmt.Errorf("the %s image's %s was built for GOOS %q", pi.Platform, pi.BinaryPath, got)
	}
	return nil
}

func buildSetting(info *debug.BuildInfo, key string) string {
	for _, s := range info.Settings {
		if s.Key == key {
			return s.Value
		}
	}
	return ""
}

// untar unpacks the regular files and directories of a tar archive into dir,
// refusing paths that leave it.
func untar(archive, dir string) error {
	f, err := os.Open(archive)
	if err != nil {
		return err
	}
	defer f.Close()
	tr := tar.NewReader(f)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		name := filepath.Clean(h.Name)
		if filepath.IsAbs(name) || name == ".." || strings.HasPrefix(name, "../") {
			return fmt.Errorf("entry %q leaves the archive", h.Name)
		}
		target := filepath.Join(dir, name)
		switch h.Typeflag {
		case tar.TypeDir:
			if err := os.MkdirAll(target, 0o755); err != nil {
				return err
			}
		case tar.TypeReg:
			if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
				return err
			}
			out, err := os.Create(target)
			if err != nil {
				return err
			}
			if _, err := io.Copy(out, tr); err != nil {
				out.Close()
				return err
			}
			if err := out.Close(); err != nil {
				return err
			}
		}
	}
}
