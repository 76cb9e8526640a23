// Command releasetool writes and checks what a verifier needs next to a
// release that hack/release.sh built: CycloneDX SBOMs of the binaries and of
// the image (read from the Go build info the binaries carry, no network), an
// in-toto statement with SLSA provenance v1 of how the release was built,
// SHA256SUMS, and signatures that `cosign verify-blob --key` and `cosign
// verify --key` accept, made with sigstore's Go libraries.
//
//	releasetool attest -dir dist -version 1.2.3 -commit $(git rev-parse HEAD) \
//	  -image uptime-operator-image-1.2.3.tar -image-repo ghcr.io/x/y \
//	  -binary uptime-operator_1.2.3_linux_amd64 -binary … [-key cosign.key]
//	releasetool verify -dir dist -version 1.2.3 -key cosign.pub
//
// The key is a PEM private key: cosign's own (`cosign generate-key-pair`,
// its password in COSIGN_PASSWORD) or an unencrypted PKCS#8/SEC 1 one.
// Without -key the release is written unsigned (SBOMs, provenance and
// SHA256SUMS only). verify checks everything with the same libraries that
// cosign verifies with, so a verifier without cosign can use it too.
//
// It is a module of its own so that its dependencies (sigstore, CycloneDX,
// in-toto, go-containerregistry) stay out of the operator's build and so out
// of the operator's SBOM.
package main

import (
	"flag"
	"fmt"
	"os"
	"strings"
)

// listFlag collects a repeatable string flag.
type listFlag []string

func (l *listFlag) String() string     { return strings.Join(*l, ",") }
func (l *listFlag) Set(v string) error { *l = append(*l, v); return nil }

func main() {
	if len(os.Args) < 2 {
		fail("usage: releasetool attest|verify [flags]")
	}
	switch os.Args[1] {
	case "attest":
		var r release
		var binaries listFlag
		fs := flag.NewFlagSet("attest", flag.ExitOnError)
		r.flags(fs)
		fs.Var(&binaries, "binary", "a binary of the release (in -dir; repeatable): its SBOM is written beside it")
		fs.StringVar(&r.Commit, "commit", "", "the source commit the release was built from")
		fs.BoolVar(&r.Dirty, "dirty", false, "the work tree had changes not in -commit")
		fs.StringVar(&r.ImageRepo, "image-repo", "", "the image's repository, which the image signature names")
		fs.StringVar(&r.GoFlags, "go-flags", "", "the flags the binaries were built with, as given to go build (the build info leaves -ldflags out under -trimpath)")
		keyFile := fs.String("key", "", "PEM private key to sign with (cosign's format, password in COSIGN_PASSWORD); none: unsigned")
		_ = fs.Parse(os.Args[2:])
		r.Binaries = binaries
		if err := r.attest(*keyFile); err != nil {
			fail("attest: %v", err)
		}
	case "verify":
		var r release
		fs := flag.NewFlagSet("verify", flag.ExitOnError)
		r.flags(fs)
		keyFile := fs.String("key", "", "PEM public key the release is signed with (cosign.pub)")
		_ = fs.Parse(os.Args[2:])
		report, err := r.verify(*keyFile)
		for _, line := range report {
			fmt.Println(line)
		}
		if err != nil {
			fail("verify: %v", err)
		}
	default:
		fail("unknown command %q (attest or verify)", os.Args[1])
	}
}

func fail(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "releasetool: "+format+"\n", args...)
	os.Exit(1)
}
