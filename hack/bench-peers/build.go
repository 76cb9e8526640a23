package main

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
)

// peer is an open-source checker built from a source snapshot.
type peer struct {
	// name is the binary's name and the tarball's prefix ("gatus" for
	// gatus-08c4635.tar.gz).
	name string
	// dir is the folder the tarball unpacks to.
	dir string
}

var peers = []peer{
	{name: "blackbox_exporter", dir: "blackbox_exporter"},
	{name: "gatus", dir: "gatus"},
}

// buildPeer returns the path of p's binary, building it from the one
// tarball named p.name-*.tar.gz in peersDir when the cache has no binary
// for that tarball's content and this Go version yet. Peer code never
// enters the repository: it is unpacked and built under cacheDir.
func buildPeer(p peer, peersDir, cacheDir string, logw io.Writer) (string, error) {
	matches, _ := filepath.Glob(filepath.Join(peersDir, p.name+"-*.tar.gz"))
	if len(matches) != 1 {
		return "", fmt.Errorf("want exactly one %s-*.tar.gz in %s (set PEERS_DIR), found %d", p.name, peersDir, len(matches))
	}
	tarball := matches[0]
	sum, err := fileSum(tarball)
	if err != nil {
		return "", err
	}
	key := sum[:12] + "-" + strings.ReplaceAll(runtime.Version(), " ", "_")
	dir := filepath.Join(cacheDir, p.name+"-"+key)
	bin := filepath.Join(dir, p.name)
	if _, err := os.Stat(bin); err == nil {
		fmt.Fprintf(logw, "peer %s: cached %s\n", p.name, bin)
		return bin, nil
	}
	src := filepath.Join(dir, "src")
	_ = os.RemoveAll(src)
	if err := os.MkdirAll(src, 0o755); err != nil {
		return "", fmt.Errorf("create build folder: %w", err)
	}
	fmt.Fprintf(logw, "peer %s: building from %s into %s\n", p.name, tarball, dir)
	if err := run(logw, "", "tar", "xzf", tarball, "-C", src); err != nil {
		return "", fmt.Errorf("unpack %s: %w", tarball, err)
	}
	if err := run(logw, filepath.Join(src, p.dir), "go", "build", "-o", bin+".tmp", "."); err != nil {
		return "", fmt.Errorf("build %s: %w", p.name, err)
	}
	if err := os.Rename(bin+".tmp", bin); err != nil {
		return "", err
	}
	_ = os.RemoveAll(src)
	return bin, nil
}

// buildAgent builds the uptime-operator binary of the repository at root:
// the agent is what is measured, so it is always built from the tree.
func buildAgent(root, outDir string, logw io.Writer) (string, error) {
	bin := filepath.Join(outDir, "uptime-operator")
	fmt.Fprintf(logw, "agent: building %s\n", bin)
	if err := run(logw, root, "go", "build", "-o", bin, "."); err != nil {
		return "", fmt.Errorf("build uptime-operator: %w", err)
	}
	return bin, nil
}

func run(logw io.Writer, dir, name string, args ...string) error {
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	cmd.Stdout, cmd.Stderr = logw, logw
	// The peers are modules of their own: no workspace, no VCS stamping.
	cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=-buildvcs=false")
	return cmd.Run()
}

func fileSum(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}
