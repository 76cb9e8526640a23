package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/elliptic"
	"encoding/json"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/sigstore/sigstore/pkg/cryptoutils"
)

const (
	testVersion  = "1.2.3"
	testRepo     = "ghcr.io/uptime-operator/uptime-operator"
	testPassword = "release-test"
)

// repoRoot is the operator's repository, where hack/ociimage runs.
func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	return root
}

func run(t *testing.T, dir string, env []string, name string, args ...string) string {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
	return string(out)
}

// smallRelease builds what hack/release.sh builds, small: testdata/hello
// for linux/amd64 and linux/arm64 in place of the operator, their image
// index made by hack/ociimage, and a chart package; binFor names the binary
// each platform's image gets.
func smallRelease(t *testing.T, binFor func(arch string) string) (dir string) {
	t.Helper()
	dir = t.TempDir()
	for _, arch := range []string{"amd64", "arm64"} {
		run(t, ".", []string{"CGO_ENABLED=0", "GOOS=linux", "GOARCH=" + arch, "GOFLAGS=-buildvcs=false"},
			"go", "build", "-trimpath", "-ldflags", "-s -w -X main.version=v"+testVersion,
			"-o", filepath.Join(dir, "hello_"+testVersion+"_linux_"+arch), "./testdata/hello")
	}
	image := filepath.Join(dir, "uptime-operator-image-"+testVersion+".tar")
	run(t, repoRoot(t), nil, "go", "run", "./hack/ociimage", "-o", image, "-tag", testRepo+":"+testVersion,
		"-platform", "linux/amd64", "-platform", "linux/arm64",
		"-file", filepath.Join(dir, binFor("{arch}"))+":/hello:0755", "-entrypoint", "/hello", "-nonroot",
		"-label", "org.opencontainers.image.version=v"+testVersion,
		"-digest-file", filepath.Join(dir, "uptime-operator-image-"+testVersion+".digest"))
	var tgz bytes.Buffer
	zw := gzip.NewWriter(&tgz)
	tw := tar.NewWriter(zw)
	chart := []byte("apiVersion: v2\nname: uptime-operator\nversion: " + testVersion + "\nappVersion: \"" + testVersion + "\"\n")
	_ = tw.WriteHeader(&tar.Header{Name: "uptime-operator/Chart.yaml", Mode: 0o644, Size: int64(len(chart)), Typeflag: tar.TypeReg})
	_, _ = tw.Write(chart)
	_ = tw.Close()
	_ = zw.Close()
	if err := os.WriteFile(filepath.Join(dir, "uptime-operator-"+testVersion+".tgz"), tgz.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	krewManifest(t, dir)
	// Another release's file in the same directory is left out.
	if err := os.WriteFile(filepath.Join(dir, "uptime-operator-11.2.3.tgz"), []byte("older"), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// krewManifest fills in plugins/uptime.yaml as krew-release-bot and
// hack/krew-archives.sh do, for archives that hold nothing but their name.
func krewManifest(t *testing.T, dir string) {
	t.Helper()
	tmpl, err := os.ReadFile(filepath.Join(repoRoot(t), "plugins", "uptime.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	tag := "v" + testVersion
	archiveRE := regexp.MustCompile(`"(https://[^"]*/(kubectl-uptime_[^"]*\.tar\.gz))"`)
	var out []string
	for _, line := range strings.Split(string(tmpl), "\n") {
		line = strings.ReplaceAll(line, "{{ .TagName }}", tag)
		if m := archiveRE.FindStringSubmatch(line); m != nil && strings.Contains(line, "addURIAndSha") {
			if err := os.WriteFile(filepath.Join(dir, m[2]), []byte(m[2]), 0o644); err != nil {
				t.Fatal(err)
			}
			sum, _ := sha256File(filepath.Join(dir, m[2]))
			indent := line[:len(line)-len(strings.TrimLeft(line, " "))]
			out = append(out, indent+"uri: "+m[1], indent+"sha256: "+sum)
			continue
		}
		out = append(out, line)
	}
	if err := os.WriteFile(filepath.Join(dir, "kubectl-uptime_"+tag+".krew.yaml"), []byte(strings.Join(out, "\n")), 0o644); err != nil {
		t.Fatal(err)
	}
}

// testKey writes a key pair as `cosign generate-key-pair` does: the private
// key encrypted with a password (ENCRYPTED SIGSTORE PRIVATE KEY).
func testKey(t *testing.T) (priv, pub string) {
	t.Helper()
	dir := t.TempDir()
	privPEM, pubPEM, err := cryptoutils.GeneratePEMEncodedECDSAKeyPair(elliptic.P256(), cryptoutils.StaticPasswordFunc([]byte(testPassword)))
	if err != nil {
		t.Fatal(err)
	}
	priv, pub = filepath.Join(dir, "cosign.key"), filepath.Join(dir, "cosign.pub")
	if err := os.WriteFile(priv, privPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(pub, pubPEM, 0o644); err != nil {
		t.Fatal(err)
	}
	return priv, pub
}

func TestReleaseIsVerifiable(t *testing.T) {
	dir := smallRelease(t, func(arch string) string { return "hello_" + testVersion + "_linux_" + arch })
	priv, pub := testKey(t)
	t.Setenv("COSIGN_PASSWORD", testPassword)
	r := &release{
		Dir: dir, Version: testVersion, Commit: strings.Repeat("ab", 20), ImageRepo: testRepo,
		Source:   "https://github.com/uptime-operator/uptime-operator",
		GoFlags:  "-trimpath -ldflags=-s -w -X main.version=v" + testVersion,
		Binaries: []string{"hello_" + testVersion + "_linux_amd64", "hello_" + testVersion + "_linux_arm64"},
	}
	if err := r.attest(priv); err != nil {
		t.Fatal(err)
	}

	report, err := (&release{Dir: dir, Version: testVersion}).verify(pub)
	if err != nil {
		t.Fatalf("verify: %v\n%s", err, strings.Join(report, "\n"))
	}
	joined := strings.Join(report, "\n")
	for _, want := range []string{"image linux/amd64: /hello is a linux/amd64 binary", "image linux/arm64: /hello is a linux/arm64 binary", "SLSA provenance v1", "versions agree: chart 1.2.3, image :1.2.3, krew v1.2.3 (linux/amd64, linux/arm64, darwin/amd64, darwin/arm64)"} {
		if !strings.Contains(joined, want) {
			t.Errorf("verify reported no %q:\n%s", want, joined)
		}
	}
	sums, err := readSums(filepath.Join(dir, sumsFile))
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := sums["uptime-operator-11.2.3.tgz"]; ok {
		t.Error("SHA256SUMS lists another release's file")
	}
	for _, f := range []string{"hello_" + testVersion + "_linux_arm64.cdx.json", "uptime-operator-image-" + testVersion + ".cdx.json", "uptime-operator-" + testVersion + ".intoto.json", "uptime-operator-" + testVersion + ".intoto.jsonl"} {
		if sums[f] == "" {
			t.Errorf("SHA256SUMS does not list %s", f)
		}
	}

	// The provenance names the commit, the Go version and the flags.
	b, err := os.ReadFile(filepath.Join(dir, r.statement()))
	if err != nil {
		t.Fatal(err)
	}
	_, pred, err := parseStatement(b)
	if err != nil {
		t.Fatal(err)
	}
	deps := pred.GetBuildDefinition().GetResolvedDependencies()
	if len(deps) == 0 || deps[0].GetDigest()["gitCommit"] != r.Commit || deps[0].GetUri() != "git+"+r.Source+"@refs/tags/v"+testVersion {
		t.Errorf("source dependency: %v", deps)
	}
	internal, _ := json.Marshal(pred.GetBuildDefinition().GetInternalParameters().AsMap())
	for _, want := range []string{`"goVersion":"` + runtime.Version() + `"`, `"-trimpath":"true"`, `"goBuildFlags":"-trimpath -ldflags=-s -w -X main.version=v1.2.3"`, `"GOARCH":"arm64"`} {
		if !strings.Contains(string(internal), want) {
			t.Errorf("provenance's build parameters have no %s: %s", want, internal)
		}
	}
	// A second run from the same inputs writes the same statement.
	if err := r.attest(priv); err != nil {
		t.Fatal(err)
	}
	if again, _ := os.ReadFile(filepath.Join(dir, r.statement())); !bytes.Equal(again, b) {
		t.Error("the same release gave a different provenance statement")
	}

	// The SBOMs list the module the binary links, from its build info.
	for _, f := range []string{"hello_" + testVersion + "_linux_amd64.cdx.json", "uptime-operator-image-" + testVersion + ".cdx.json"} {
		b, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil {
			t.Fatal(err)
		}
		bom, err := decodeBOM(b)
		if err != nil {
			t.Fatal(err)
		}
		found := false
		for _, c := range *bom.Components {
			found = found || strings.HasPrefix(c.PackageURL, "pkg:golang/github.com/google/go-containerregistry@v")
		}
		if !found || bom.SpecVersion.String() != "1.6" {
			t.Errorf("%s (CycloneDX %s) does not list go-containerregistry", f, bom.SpecVersion)
		}
	}

	// Tampering is caught: a changed chart no longer matches its signature
	// nor SHA256SUMS.
	chart := filepath.Join(dir, r.chart())
	orig, _ := os.ReadFile(chart)
	if err := os.WriteFile(chart, append(orig, 0), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := (&release{Dir: dir, Version: testVersion}).verify(pub); err == nil || !strings.Contains(err.Error(), r.chart()) {
		t.Errorf("a changed chart verified: %v", err)
	}
	_ = os.WriteFile(chart, orig, 0o644)
	// Another key does not verify.
	_, otherPub := testKey(t)
	if _, err := (&release{Dir: dir, Version: testVersion}).verify(otherPub); err == nil {
		t.Error("the release verified with another key")
	}

	t.Run("cosign", func(t *testing.T) { cosignVerifies(t, r, pub) })
}

// TestImageBinaryForAnotherPlatformIsCaught gives the arm64 image the amd64
// binary: the release does not verify.
func TestImageBinaryForAnotherPlatformIsCaught(t *testing.T) {
	dir := smallRelease(t, func(string) string { return "hello_" + testVersion + "_linux_amd64" })
	img, err := readImage(filepath.Join(dir, "uptime-operator-image-"+testVersion+".tar"))
	if err != nil {
		t.Fatal(err)
	}
	if len(img.Images) != 2 {
		t.Fatalf("%d images in the index", len(img.Images))
	}
	if err := img.Images[0].checkPlatform(); err != nil {
		t.Errorf("amd64: %v", err)
	}
	err = img.Images[1].checkPlatform()
	if err == nil || !strings.Contains(err.Error(), "EM_X86_64") {
		t.Errorf("the arm64 image's amd64 binary passed: %v", err)
	}
}

// cosignVerifies runs the cosign CLI on the release when one is at hand
// ($COSIGN, or cosign on PATH; hack/cosign-binary.sh builds one from the Go
// module proxy): verify-blob on SHA256SUMS and the chart, verify-blob-
// attestation on the provenance, and, after pushing the image index to a
// registry on loopback and attaching the release's signature, verify.
func cosignVerifies(t *testing.T, r *release, pub string) {
	cosign := os.Getenv("COSIGN")
	if cosign == "" {
		cosign, _ = exec.LookPath("cosign")
	}
	if cosign == "" {
		t.Skip("no cosign binary ($COSIGN or PATH; hack/cosign-binary.sh builds one): checked with sigstore's library only")
	}
	home := t.TempDir() // cosign keeps a TUF cache under $HOME; nothing is fetched with these flags
	env := []string{"HOME=" + home, "COSIGN_EXPERIMENTAL=0"}
	p := r.path
	run(t, r.Dir, env, cosign, "verify-blob", "--key", pub, "--insecure-ignore-tlog=true", "--signature", p(sumsFile+".sig"), p(sumsFile))
	run(t, r.Dir, env, cosign, "verify-blob", "--key", pub, "--insecure-ignore-tlog=true", "--signature", p(r.chart()+".sig"), p(r.chart()))
	run(t, r.Dir, env, cosign, "verify-blob-attestation", "--key", pub, "--insecure-ignore-tlog=true",
		"--type", "slsaprovenance1", "--signature", p(r.envelope()), p(r.chart()))

	// A registry on loopback, as a user's registry after the push.
	srv := httptest.NewServer(registry.New())
	defer srv.Close()
	host := strings.TrimPrefix(srv.URL, "http://")
	layoutDir := t.TempDir()
	if err := untar(p(r.imageArchive()), layoutDir); err != nil {
		t.Fatal(err)
	}
	lp, err := layout.FromPath(layoutDir)
	if err != nil {
		t.Fatal(err)
	}
	top, _ := lp.ImageIndex()
	im, _ := top.IndexManifest()
	idx, err := top.ImageIndex(im.Manifests[0].Digest)
	if err != nil {
		t.Fatal(err)
	}
	ref, err := name.ParseReference(host + "/uptime-operator/uptime-operator:" + testVersion)
	if err != nil {
		t.Fatal(err)
	}
	if err := remote.WriteIndex(ref, idx); err != nil {
		t.Fatal(err)
	}
	digestRef := host + "/uptime-operator/uptime-operator@" + im.Manifests[0].Digest.String()
	run(t, r.Dir, env, cosign, "attach", "signature", "--payload", p(r.imagePayload()), "--signature", p(r.imageSig()), digestRef)
	out := run(t, r.Dir, env, cosign, "verify", "--key", pub, "--insecure-ignore-tlog=true", digestRef)
	if !strings.Contains(out, im.Manifests[0].Digest.String()) {
		t.Errorf("cosign verify printed no digest:\n%s", out)
	}
	// An image the release did not sign is refused.
	other := host + "/uptime-operator/uptime-operator@" + idxManifestDigest(t, idx)
	cmd := exec.Command(cosign, "verify", "--key", pub, "--insecure-ignore-tlog=true", other)
	cmd.Env = append(os.Environ(), env...)
	if out, err := cmd.CombinedOutput(); err == nil {
		t.Errorf("cosign verified an unsigned image:\n%s", out)
	}
}

// idxManifestDigest is the digest of the index's first platform image,
// which is pushed but not signed.
func idxManifestDigest(t *testing.T, idx v1.ImageIndex) string {
	t.Helper()
	m, err := idx.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	return m.Manifests[0].Digest.String()
}
