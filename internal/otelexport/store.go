package otelexport

import (
	"context"

	"github.com/uptime-operator/uptime-operator/internal/store"
)

// Store is the part of the history store (internal/store) that the
// Exporter uses: a namespace's export settings, and the outcome of each
// export. It holds only the methods the Exporter calls, so the dependency
// is visible here and a test can fake or wrap it; every store backend
// satisfies it.
type Store interface {
	GetOTelSettings(ctx context.Context, namespace string) (store.OTelSettings, error)
	RecordOTelExport(ctx context.Context, r store.OTelExportResult) error
}
