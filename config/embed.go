// Package config embeds the generated CRDs, the webhook configuration and
// the aggregate roles so that `uptime-operator dev` can install them from
// any working directory.
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

// AggregateRoles holds rbac/crd_view_edit_roles.yaml: the ClusterRoles
// whose rules Kubernetes' view, edit and admin aggregate (the chart's
// rbac-aggregate-roles.yaml), which `uptime-operator dev` installs.
//
//go:embed rbac/crd_view_edit_roles.yaml
var AggregateRoles []byte
