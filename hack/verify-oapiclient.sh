#!/usr/bin/env bash
# Generates a Go client (types and client) from docs/openapi.json with
# oapi-codegen, the version hack/oapiclient/go.mod pins as its tool, and
# type-checks it with go vet. The client is written to a temporary package
# inside hack/oapiclient (so it resolves the generated code's runtime from
# that module) and removed afterwards: nothing generated is committed, the
# check is that it compiles without edits.
set -euo pipefail
cd "$(dirname "$0")/oapiclient"
dir="$(mktemp -d client.XXXXXX)"
trap 'rm -rf "$dir"' EXIT
go tool oapi-codegen -generate types,client -package client -o "$dir/client.gen.go" ../../docs/openapi.json
if ! go vet "./$dir"; then
	echo "verify-oapiclient: the Go client generated from docs/openapi.json does not compile" >&2
	exit 1
fi
echo "verify-oapiclient: ok ($(wc -l <"$dir/client.gen.go") lines generated)"
