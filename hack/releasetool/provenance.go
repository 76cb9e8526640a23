package main

import (
	"encoding/json"
	"fmt"
	"runtime/debug"

	slsa "github.com/in-toto/attestation/go/predicates/provenance/v1"
	intoto "github.com/in-toto/attestation/go/v1"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/structpb"
)

const (
	// slsaPredicateType is SLSA provenance v1's predicate type.
	slsaPredicateType = "https://slsa.dev/provenance/v1"
	// buildType names how a release is built: hack/release.sh at the source
	// commit, its parameters below.
	buildType = "https://github.com/uptime-operator/uptime-operator/blob/main/hack/release.sh"
	// builderID is the builder: whoever runs `make release` with the key.
	builderID = "https://github.com/uptime-operator/uptime-operator/blob/main/Makefile#release"
	// inTotoPayloadType is the DSSE payload type of an in-toto statement.
	inTotoPayloadType = "application/vnd.in-toto+json"
)

// build is one binary the release built, as its Go build info tells.
type build struct {
	Name     string
	Info     *debug.BuildInfo
	Platform string
}

// provenance returns the in-toto statement (SLSA provenance v1) of the
// release: the subjects are every file of the release and the image by
// digest; the build definition names the version, the source commit and,
// per binary, the Go version and flags read from its build info.
func (r *release) provenance(subjects []*intoto.ResourceDescriptor, builds []build) (*intoto.Statement, error) {
	var perBinary []any
	goVersion := ""
	for _, b := range builds {
		flags := map[string]any{}
		for _, s := range b.Info.Settings {
			flags[s.Key] = s.Value
		}
		perBinary = append(perBinary, map[string]any{
			"binary": b.Name, "platform": b.Platform, "goVersion": b.Info.GoVersion,
			"mainModule": b.Info.Main.Path, "settings": flags,
		})
		goVersion = b.Info.GoVersion
	}
	external, err := structpb.NewStruct(map[string]any{
		"version":         r.Version,
		"tag":             "v" + r.Version,
		"source":          r.Source,
		"imageRepository": r.ImageRepo,
	})
	if err != nil {
		return nil, err
	}
	internal, err := structpb.NewStruct(map[string]any{"goBuildFlags": r.GoFlags, "builds": perBinary, "sourceDirty": r.Dirty})
	if err != nil {
		return nil, err
	}
	deps := []*intoto.ResourceDescriptor{{
		Uri:    "git+" + r.Source + "@refs/tags/v" + r.Version,
		Digest: map[string]string{"gitCommit": r.Commit},
	}}
	if goVersion != "" {
		deps = append(deps, &intoto.ResourceDescriptor{Name: "go", Uri: goPURL("std", goVersion)})
	}
	pred := &slsa.Provenance{
		BuildDefinition: &slsa.BuildDefinition{
			BuildType:            buildType,
			ExternalParameters:   external,
			InternalParameters:   internal,
			ResolvedDependencies: deps,
		},
		RunDetails: &slsa.RunDetails{
			Builder: &slsa.Builder{Id: builderID, Version: map[string]string{"go": goVersion}},
		},
	}
	if err := pred.Validate(); err != nil {
		return nil, fmt.Errorf("provenance: %w", err)
	}
	predStruct, err := protoStruct(pred)
	if err != nil {
		return nil, err
	}
	st := &intoto.Statement{
		Type:          intoto.StatementTypeUri,
		Subject:       subjects,
		PredicateType: slsaPredicateType,
		Predicate:     predStruct,
	}
	if err := st.Validate(); err != nil {
		return nil, fmt.Errorf("statement: %w", err)
	}
	return st, nil
}

// protoStruct converts a message to the Struct a statement's predicate is.
func protoStruct(m proto.Message) (*structpb.Struct, error) {
	b, err := protojson.Marshal(m)
	if err != nil {
		return nil, err
	}
	s := &structpb.Struct{}
	if err := protojson.Unmarshal(b, s); err != nil {
		return nil, err
	}
	return s, nil
}

// marshalStatement is the statement as indented JSON with sorted keys:
// protojson's output varies its spacing on purpose, and a release should be
// the same bytes every time it is built from the same commit.
func marshalStatement(st *intoto.Statement) ([]byte, error) {
	b, err := protojson.Marshal(st)
	if err != nil {
		return nil, err
	}
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		return nil, err
	}
	out, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(out, '\n'), nil
}

// parseStatement reads a statement and checks it against the in-toto
// attestation framework's rules (type, subjects with digests, predicate),
// and its predicate against SLSA provenance v1's.
func parseStatement(b []byte) (*intoto.Statement, *slsa.Provenance, error) {
	st := &intoto.Statement{}
	if err := protojson.Unmarshal(b, st); err != nil {
		return nil, nil, fmt.Errorf("parse the statement: %w", err)
	}
	if err := st.Validate(); err != nil {
		return nil, nil, fmt.Errorf("statement: %w", err)
	}
	if st.GetPredicateType() != slsaPredicateType {
		return nil, nil, fmt.Errorf("predicate type %q, not %q", st.GetPredicateType(), slsaPredicateType)
	}
	pb, err := protojson.Marshal(st.GetPredicate())
	if err != nil {
		return nil, nil, err
	}
	pred := &slsa.Provenance{}
	if err := protojson.Unmarshal(pb, pred); err != nil {
		return nil, nil, fmt.Errorf("parse the provenance: %w", err)
	}
	if err := pred.Validate(); err != nil {
		return nil, nil, fmt.Errorf("provenance: %w", err)
	}
	return st, pred, nil
}
