// Command hello is the small program the release test builds for two
// platforms in place of the operator: it links a module, so its SBOM has one
// to list.
package main

import (
	"fmt"

	"github.com/google/go-containerregistry/pkg/name"
)

func main() {
	ref, err := name.ParseReference("ghcr.io/uptime-operator/uptime-operator:latest")
	fmt.Println(ref, err)
}
