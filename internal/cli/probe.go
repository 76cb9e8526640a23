package cli

import (
	"context"
	"io"
)

func runProbe(_ context.Context, _ []string, _, _ io.Writer) error { return notYet("probe") }
