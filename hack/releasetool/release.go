package main

import (
	"bufio"
	"bytes"
	"crypto"
	"crypto/sha256"
	"debug/buildinfo"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"
	intoto "github.com/in-toto/attestation/go/v1"
	"github.com/sigstore/sigstore/pkg/cryptoutils"
	"github.com/sigstore/sigstore/pkg/signature"
	"github.com/sigstore/sigstore/pkg/signature/dsse"
	"github.com/sigstore/sigstore/pkg/signature/payload"
)

// release is a release directory and what attest and verify know about it.
// File names follow hack/release.sh: VERSION is x.y.z, the tag is vx.y.z.
type release struct {
	Dir       string
	Version   string
	Image     string   // the image archive, a name in Dir
	Binaries  []string // names in Dir
	Commit    string
	Dirty     bool
	GoFlags   string
	ImageRepo string
	Source    string
}

func (r *release) flags(fs *flag.FlagSet) {
	fs.StringVar(&r.Dir, "dir", "dist", "the release directory")
	fs.StringVar(&r.Version, "version", "", "the release version x.y.z")
	fs.StringVar(&r.Image, "image", "", "the image archive in -dir (default uptime-operator-image-VERSION.tar)")
	fs.StringVar(&r.Source, "source", "https://github.com/uptime-operator/uptime-operator", "the source repository")
}

func (r *release) path(name string) string { return filepath.Join(r.Dir, name) }

func (r *release) imageArchive() string {
	if r.Image != "" {
		return r.Image
	}
	return "uptime-operator-image-" + r.Version + ".tar"
}

// The names of what attest writes.
func (r *release) imageBase() string       { return strings.TrimSuffix(r.imageArchive(), ".tar") }
func (r *release) chart() string           { return "uptime-operator-" + r.Version + ".tgz" }
func (r *release) imageDigestFile() string { return r.imageBase() + ".digest" }
func (r *release) imageSBOM() string       { return r.imageBase() + ".cdx.json" }
func (r *release) imagePayload() string    { return r.imageBase() + ".payload.json" }
func (r *release) imageSig() string        { return r.imageBase() + ".sig" }
func (r *release) statement() string       { return "uptime-operator-" + r.Version + ".intoto.json" }
func (r *release) envelope() string        { return "uptime-operator-" + r.Version + ".intoto.jsonl" }
func (r *release) krewManifest() string    { return "kubectl-uptime_v" + r.Version + ".krew.yaml" }

const (
	sumsFile  = "SHA256SUMS"
	publicKey = "cosign.pub"
)

// signed reports whether a name is a signature or key attest writes last,
// which SHA256SUMS does not list.
func signed(name string) bool {
	return name == sumsFile || name == publicKey || strings.HasSuffix(name, ".sig")
}

// attest writes the SBOMs, the provenance, SHA256SUMS and, with a key, the
// signatures and cosign.pub.
func (r *release) attest(keyFile string) error {
	if r.Version == "" || r.Commit == "" || r.ImageRepo == "" {
		return errors.New("-version, -commit and -image-repo are required")
	}
	var sv signature.SignerVerifier
	if keyFile != "" {
		var err error
		if sv, err = loadSigner(keyFile); err != nil {
			return err
		}
	}
	// Outputs of an earlier run are replaced, not attested.
	for _, n := range []string{r.statement(), r.envelope(), r.imagePayload(), sumsFile, publicKey} {
		if err := os.Remove(r.path(n)); err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
	}
	var builds []build
	for _, b := range r.Binaries {
		bin, err := os.ReadFile(r.path(b))
		if err != nil {
			return err
		}
		info, err := buildinfo.Read(bytes.NewReader(bin))
		if err != nil {
			return fmt.Errorf("%s carries no Go build info: %w", b, err)
		}
		builds = append(builds, build{Name: b, Info: info, Platform: buildSetting(info, "GOOS") + "/" + buildSetting(info, "GOARCH")})
		out, err := encodeBOM(binaryBOM(strings.SplitN(b, "_", 2)[0], r.Version, bin, info))
		if err != nil {
			return err
		}
		if err := os.WriteFile(r.path(b+".cdx.json"), out, 0o644); err != nil {
			return err
		}
	}
	img, err := readImage(r.path(r.imageArchive()))
	if err != nil {
		return err
	}
	if err := r.checkDigestFile(img); err != nil {
		return err
	}
	for _, pi := range img.Images {
		builds = append(builds, build{Name: r.imageArchive() + ":" + pi.Platform.String() + ":" + pi.BinaryPath, Info: pi.BuildInfo, Platform: pi.Platform.String()})
	}
	out, err := encodeBOM(imageBOM(r.ImageRepo, r.Version, img))
	if err != nil {
		return err
	}
	if err := os.WriteFile(r.path(r.imageSBOM()), out, 0o644); err != nil {
		return err
	}

	files, err := r.files()
	if err != nil {
		return err
	}
	var subjects []*intoto.ResourceDescriptor
	for _, f := range files {
		sum, err := sha256File(r.path(f))
		if err != nil {
			return err
		}
		subjects = append(subjects, &intoto.ResourceDescriptor{Name: f, Digest: map[string]string{"sha256": sum}})
	}
	subjects = append(subjects, &intoto.ResourceDescriptor{
		Name: r.ImageRepo + ":" + r.Version, Digest: map[string]string{img.Digest.Algorithm: img.Digest.Hex},
	})
	st, err := r.provenance(subjects, builds)
	if err != nil {
		return err
	}
	stJSON, err := marshalStatement(st)
	if err != nil {
		return err
	}
	if err := os.WriteFile(r.path(r.statement()), stJSON, 0o644); err != nil {
		return err
	}
	if sv != nil {
		env, err := dsse.WrapSigner(sv, inTotoPayloadType).SignMessage(bytes.NewReader(stJSON))
		if err != nil {
			return fmt.Errorf("sign the provenance: %w", err)
		}
		if err := os.WriteFile(r.path(r.envelope()), append(env, '\n'), 0o644); err != nil {
			return err
		}
		p, err := imagePayload(r.ImageRepo, img.Digest.String())
		if err != nil {
			return err
		}
		if err := os.WriteFile(r.path(r.imagePayload()), p, 0o644); err != nil {
			return err
		}
	}
	if err := r.writeSums(); err != nil {
		return err
	}
	if sv == nil {
		return nil
	}
	for blob, sig := range map[string]string{sumsFile: sumsFile + ".sig", r.chart(): r.chart() + ".sig", r.imagePayload(): r.imageSig()} {
		if err := signFile(sv, r.path(blob), r.path(sig)); err != nil {
			return err
		}
	}
	pub, err := sv.PublicKey()
	if err != nil {
		return err
	}
	pubPEM, err := cryptoutils.MarshalPublicKeyToPEM(pub)
	if err != nil {
		return err
	}
	return os.WriteFile(r.path(publicKey), pubPEM, 0o644)
}

// ofVersion reports whether a file name is of this release's version (the
// release directory may hold other releases' files): every release file
// names it, as x.y.z or vx.y.z, between separators.
func (r *release) ofVersion(name string) bool {
	for i := 0; ; {
		j := strings.Index(name[i:], r.Version)
		if j < 0 {
			return false
		}
		j += i
		end := j + len(r.Version)
		before, after := byte('-'), byte('.')
		if j > 0 {
			before = name[j-1]
		}
		if end < len(name) {
			after = name[end]
		}
		if strings.IndexByte("-_v", before) >= 0 && strings.IndexByte("._-", after) >= 0 {
			return true
		}
		i = j + 1
	}
}

// files are the release's files that SHA256SUMS lists, sorted.
func (r *release) files() ([]string, error) {
	entries, err := os.ReadDir(r.Dir)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, e := range entries {
		if e.Type().IsRegular() && !signed(e.Name()) && r.ofVersion(e.Name()) {
			out = append(out, e.Name())
		}
	}
	sort.Strings(out)
	return out, nil
}

func (r *release) writeSums() error {
	files, err := r.files()
	if err != nil {
		return err
	}
	var b strings.Builder
	for _, f := range files {
		sum, err := sha256File(r.path(f))
		if err != nil {
			return err
		}
		fmt.Fprintf(&b, "%s  %s\n", sum, f) // sha256sum's format
	}
	return os.WriteFile(r.path(sumsFile), []byte(b.String()), 0o644)
}

func (r *release) checkDigestFile(img *releaseImage) error {
	b, err := os.ReadFile(r.path(r.imageDigestFile()))
	if err != nil {
		return err
	}
	if got := strings.TrimSpace(string(b)); got != img.Digest.String() {
		return fmt.Errorf("%s says %s, the archive's image is %s", r.imageDigestFile(), got, img.Digest)
	}
	return nil
}

func sha256File(p string) (string, error) {
	b, err := os.ReadFile(p)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:]), nil
}

// loadSigner reads a PEM private key: cosign's encrypted format (the
// password from COSIGN_PASSWORD, as cosign reads it) or a plain one.
func loadSigner(keyFile string) (signature.SignerVerifier, error) {
	b, err := os.ReadFile(keyFile)
	if err != nil {
		return nil, err
	}
	pass := func(bool) ([]byte, error) { return []byte(os.Getenv("COSIGN_PASSWORD")), nil }
	priv, err := cryptoutils.UnmarshalPEMToPrivateKey(b, pass)
	if err != nil {
		return nil, fmt.Errorf("read the signing key %s: %w", keyFile, err)
	}
	sv, err := signature.LoadSignerVerifier(priv, crypto.SHA256)
	if err != nil {
		return nil, fmt.Errorf("load the signing key %s: %w", keyFile, err)
	}
	return sv, nil
}

func loadVerifier(keyFile string) (signature.Verifier, error) {
	b, err := os.ReadFile(keyFile)
	if err != nil {
		return nil, err
	}
	pub, err := cryptoutils.UnmarshalPEMToPublicKey(b)
	if err != nil {
		return nil, fmt.Errorf("read the public key %s: %w", keyFile, err)
	}
	return signature.LoadVerifier(pub, crypto.SHA256)
}

// signFile writes the base64 signature of a file, the form `cosign
// sign-blob` writes and `cosign verify-blob --signature` reads.
func signFile(sv signature.Signer, blob, sigFile string) error {
	data, err := os.ReadFile(blob)
	if err != nil {
		return err
	}
	sig, err := sv.SignMessage(bytes.NewReader(data))
	if err != nil {
		return fmt.Errorf("sign %s: %w", filepath.Base(blob), err)
	}
	return os.WriteFile(sigFile, []byte(base64.StdEncoding.EncodeToString(sig)), 0o644)
}

func verifyFile(v signature.Verifier, blob, sigFile string) error {
	data, err := os.ReadFile(blob)
	if err != nil {
		return err
	}
	b64, err := os.ReadFile(sigFile)
	if err != nil {
		return err
	}
	sig, err := base64.StdEncoding.DecodeString(strings.TrimSpace(string(b64)))
	if err != nil {
		return fmt.Errorf("%s: %w", filepath.Base(sigFile), err)
	}
	if err := v.VerifySignature(bytes.NewReader(sig), bytes.NewReader(data)); err != nil {
		return fmt.Errorf("%s does not verify %s: %w", filepath.Base(sigFile), filepath.Base(blob), err)
	}
	return nil
}

// imagePayload is the simple-signing payload that cosign signs for an
// image, naming its repository and digest: `cosign attach signature
// --payload` attaches it with its signature once the image is pushed, and
// `cosign verify --key` checks both.
func imagePayload(repo, digest string) ([]byte, error) {
	ref, err := name.NewDigest(repo + "@" + digest)
	if err != nil {
		return nil, fmt.Errorf("image reference: %w", err)
	}
	return json.Marshal(payload.Cosign{Image: ref})
}

// verify checks a release with the public key: the signature of SHA256SUMS
// and every sum in it, the chart's signature, the image (each blob against
// its digest, the digest file, the signed payload naming that digest, each
// platform's binary built for that platform), the signed provenance (its
// subjects are the files and the image), and that every SBOM decodes and
// describes the file it is named after. It returns one line per check.
func (r *release) verify(keyFile string) ([]string, error) {
	v, err := loadVerifier(keyFile)
	if err != nil {
		return nil, err
	}
	var report []string
	ok := func(format string, args ...any) { report = append(report, "ok  "+fmt.Sprintf(format, args...)) }

	if err := verifyFile(v, r.path(sumsFile), r.path(sumsFile+".sig")); err != nil {
		return report, err
	}
	sums, err := readSums(r.path(sumsFile))
	if err != nil {
		return report, err
	}
	for _, f := range sortedKeys(sums) {
		got, err := sha256File(r.path(f))
		if err != nil {
			return report, err
		}
		if got != sums[f] {
			return report, fmt.Errorf("%s: sha256 %s, SHA256SUMS says %s", f, got, sums[f])
		}
	}
	ok("%s signed, %d files match it", sumsFile, len(sums))
	for _, f := range []string{r.chart(), r.imageArchive(), r.statement(), r.imageSBOM()} {
		if _, listed := sums[f]; !listed {
			return report, fmt.Errorf("%s does not list %s", sumsFile, f)
		}
	}

	if err := verifyFile(v, r.path(r.chart()), r.path(r.chart()+".sig")); err != nil {
		return report, err
	}
	ok("%s signed", r.chart())

	img, err := readImage(r.path(r.imageArchive()))
	if err != nil {
		return report, err
	}
	if err := r.checkDigestFile(img); err != nil {
		return report, err
	}
	if err := verifyFile(v, r.path(r.imagePayload()), r.path(r.imageSig())); err != nil {
		return report, err
	}
	pb, err := os.ReadFile(r.path(r.imagePayload()))
	if err != nil {
		return report, err
	}
	var p payload.SimpleContainerImage
	if err := json.Unmarshal(pb, &p); err != nil {
		return report, fmt.Errorf("%s: %w", r.imagePayload(), err)
	}
	if p.Critical.Type != payload.CosignSignatureType || p.Critical.Image.DockerManifestDigest != img.Digest.String() {
		return report, fmt.Errorf("%s signs %s (%q), the image is %s", r.imagePayload(), p.Critical.Image.DockerManifestDigest, p.Critical.Type, img.Digest)
	}
	ok("image %s signed (%s)", img.Digest, p.Critical.Identity.DockerReference)
	agree, err := r.checkVersions(img, sums)
	if err != nil {
		return report, err
	}
	ok("versions agree: %s", agree)
	for _, pi := range img.Images {
		if err := pi.checkPlatform(); err != nil {
			return report, err
		}
		ok("image %s: %s is a %s binary", pi.Platform, pi.BinaryPath, pi.Platform)
	}

	env, err := os.ReadFile(r.path(r.envelope()))
	if err != nil {
		return report, err
	}
	if err := dsse.WrapVerifier(v, dsse.WithExpectedPayloadType(inTotoPayloadType)).VerifySignature(bytes.NewReader(env), nil); err != nil {
		return report, fmt.Errorf("%s: %w", r.envelope(), err)
	}
	var envelope struct{ Payload string }
	if err := json.Unmarshal(env, &envelope); err != nil {
		return report, err
	}
	stJSON, err := base64.StdEncoding.DecodeString(envelope.Payload)
	if err != nil {
		return report, err
	}
	if plain, err := os.ReadFile(r.path(r.statement())); err != nil || !bytes.Equal(plain, stJSON) {
		return report, fmt.Errorf("%s is not the statement %s signs", r.statement(), r.envelope())
	}
	st, _, err := parseStatement(stJSON)
	if err != nil {
		return report, err
	}
	subjects := map[string]string{}
	for _, s := range st.GetSubject() {
		subjects[s.GetName()] = s.GetDigest()["sha256"]
	}
	for f, sum := range sums {
		if want, ok := subjects[f]; ok && want != sum {
			return report, fmt.Errorf("provenance: %s has sha256 %s, the file %s", f, want, sum)
		}
	}
	for _, f := range []string{r.chart(), r.imageArchive()} {
		if subjects[f] == "" {
			return report, fmt.Errorf("provenance has no subject %s", f)
		}
	}
	if !hasDigest(subjects, img.Digest.Hex) {
		return report, fmt.Errorf("provenance has no subject with the image digest %s", img.Digest)
	}
	ok("provenance %s signed: %d subjects, SLSA provenance v1", r.envelope(), len(st.GetSubject()))

	for _, f := range sortedKeys(sums) {
		if !strings.HasSuffix(f, ".cdx.json") {
			continue
		}
		b, err := os.ReadFile(r.path(f))
		if err != nil {
			return report, err
		}
		bom, err := decodeBOM(b)
		if err != nil {
			return report, fmt.Errorf("%s: %w", f, err)
		}
		if bom.Metadata == nil || bom.Metadata.Component == nil || bom.Components == nil || len(*bom.Components) == 0 {
			return report, fmt.Errorf("%s names no component", f)
		}
		if bin := strings.TrimSuffix(f, ".cdx.json"); sums[bin] != "" {
			if hs := bom.Metadata.Component.Hashes; hs == nil || len(*hs) == 0 || (*hs)[0].Value != sums[bin] {
				return report, fmt.Errorf("%s does not describe %s (sha256 %s)", f, bin, sums[bin])
			}
		}
		ok("%s: %s with %d components", f, bom.Metadata.Component.Name, len(*bom.Components))
	}
	return report, nil
}

func hasDigest(subjects map[string]string, hex string) bool {
	for _, d := range subjects {
		if d == hex {
			return true
		}
	}
	return false
}

func readSums(p string) (map[string]string, error) {
	f, err := os.Open(p)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	out := map[string]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		sum, name, ok := strings.Cut(sc.Text(), "  ")
		if !ok {
			return nil, fmt.Errorf("%s: bad line %q", p, sc.Text())
		}
		out[name] = sum
	}
	return out, sc.Err()
}

func sortedKeys(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
