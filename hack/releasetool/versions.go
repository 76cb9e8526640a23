package main

import (
	"archive/tar"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"strings"

	"sigs.k8s.io/yaml"
)

// krewPlatforms are the platforms plugins/uptime.yaml promises.
var krewPlatforms = []string{"linux/amd64", "linux/arm64", "darwin/amd64", "darwin/arm64"}

// checkVersions checks that the release names one version throughout: the
// packaged chart's version and appVersion X.Y.Z, the image's tag X.Y.Z and
// version label vX.Y.Z on every platform, and the krew manifest's version
// vX.Y.Z with an archive of that tag, present and with the sum it says, for
// each platform the manifest promises.
func (r *release) checkVersions(img *releaseImage, sums map[string]string) (string, error) {
	var chart struct{ Version, AppVersion string }
	b, err := fileInTgz(r.path(r.chart()), "Chart.yaml")
	if err != nil {
		return "", fmt.Errorf("%s: %w", r.chart(), err)
	}
	if err := yaml.Unmarshal(b, &chart); err != nil {
		return "", fmt.Errorf("%s: Chart.yaml: %w", r.chart(), err)
	}
	if chart.Version != r.Version || chart.AppVersion != r.Version {
		return "", fmt.Errorf("%s: chart version %q, appVersion %q, the release is %s", r.chart(), chart.Version, chart.AppVersion, r.Version)
	}
	if img.Tag != r.Version {
		return "", fmt.Errorf("the image is tagged %q, the release is %s", img.Tag, r.Version)
	}
	for _, pi := range img.Images {
		if got := pi.Labels["org.opencontainers.image.version"]; got != "v"+r.Version {
			return "", fmt.Errorf("the %s image's version label is %q, not v%s", pi.Platform, got, r.Version)
		}
	}
	agree := "chart " + chart.Version + ", image :" + img.Tag
	if _, err := os.Stat(r.path(r.krewManifest())); errors.Is(err, os.ErrNotExist) {
		return agree, nil
	}
	var krew struct {
		Spec struct {
			Version   string
			Platforms []struct {
				Selector struct{ MatchLabels map[string]string } `json:"selector"`
				URI      string                                  `json:"uri"`
				Sha256   string                                  `json:"sha256"`
			}
		}
	}
	b, err = os.ReadFile(r.path(r.krewManifest()))
	if err != nil {
		return "", err
	}
	if err := yaml.Unmarshal(b, &krew); err != nil {
		return "", fmt.Errorf("%s: %w", r.krewManifest(), err)
	}
	if krew.Spec.Version != "v"+r.Version {
		return "", fmt.Errorf("%s: version %q, not v%s", r.krewManifest(), krew.Spec.Version, r.Version)
	}
	got := map[string]bool{}
	for _, p := range krew.Spec.Platforms {
		osArch := p.Selector.MatchLabels["os"] + "/" + p.Selector.MatchLabels["arch"]
		archive := "kubectl-uptime_v" + r.Version + "_" + strings.ReplaceAll(osArch, "/", "_") + ".tar.gz"
		if path.Base(p.URI) != archive || !strings.Contains(p.URI, "/v"+r.Version+"/") {
			return "", fmt.Errorf("%s: %s is at %s, not a v%s release's %s", r.krewManifest(), osArch, p.URI, r.Version, archive)
		}
		if sums[archive] == "" || sums[archive] != p.Sha256 {
			return "", fmt.Errorf("%s: %s has sha256 %q, the release's %s %q", r.krewManifest(), osArch, p.Sha256, archive, sums[archive])
		}
		got[osArch] = true
	}
	for _, p := range krewPlatforms {
		if !got[p] {
			return "", fmt.Errorf("%s has no %s archive", r.krewManifest(), p)
		}
	}
	return agree + ", krew " + krew.Spec.Version + " (" + strings.Join(krewPlatforms, ", ") + ")", nil
}

// fileInTgz reads the file a chart package holds under <chart>/name.
func fileInTgz(tgz, name string) ([]byte, error) {
	f, err := os.Open(tgz)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		return nil, err
	}
	tr := tar.NewReader(zr)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return nil, fmt.Errorf("no %s", name)
		}
		if err != nil {
			return nil, err
		}
		if parts := strings.Split(path.Clean(h.Name), "/"); len(parts) == 2 && parts[1] == name {
			return io.ReadAll(tr)
		}
	}
}
