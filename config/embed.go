// Package config embeds the generated CRDs and webhook configuration so that
// `uptime-operator dev` can install them from any working directory.
package config

import "embed"

// CRDs holds crd/bases/*.yaml.
//
//go:embed crd/bases/*.yaml
var CRDs embed.FS

// Webhooks holds webhook/manifests.yaml.
//
//go:embed webhook/manifests.yaml
var Webhooks embed.FS
