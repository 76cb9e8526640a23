package apiserver

import (
	"context"
	"fmt"

	"sigs.k8s.io/controller-runtime/pkg/client"
)

// list lists objects of ns from the cache; Options.Overlay lays this
// process's recent writes over it, so a client that creates a monitor and
// lists monitors at once sees it, and one that deletes it twice gets 404 the
// second time.
func (s *Server) list(ctx context.Context, list client.ObjectList, ns string, opts ...client.ListOption) error {
	if err := s.opts.Client.List(ctx, list, append([]client.ListOption{client.InNamespace(ns)}, opts...)...); err != nil {
		return fmt.Errorf("list %T: %w", list, err)
	}
	return nil
}
