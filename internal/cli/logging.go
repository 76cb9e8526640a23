package cli

import (
	"flag"
	"fmt"
	"io"

	"github.com/go-logr/logr"
	"go.uber.org/zap/zapcore"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
)

// Log formats of --log-format.
const (
	// LogJSON writes one JSON object per line, for log collectors (the
	// default of the manager and the probe agent, and of the Helm chart).
	LogJSON = "json"
	// LogConsole writes one readable line per entry (level, logger,
	// message, key/values) without stack traces, for a person at a
	// terminal (the default of `uptime-operator dev`).
	LogConsole = "console"
)

// logFlags are the logging flags of a subcommand: --log-format plus
// controller-runtime's --zap-* flags (level, stack trace level, …).
type logFlags struct {
	format string
	zap    zap.Options
}

// bindLogFlags registers the logging flags on fs with def as the default
// format.
func bindLogFlags(fs *flag.FlagSet, def string) *logFlags {
	l := &logFlags{}
	fs.StringVar(&l.format, "log-format", def, "log format: json (one JSON object per line) or console (human-readable lines)")
	l.zap.BindFlags(fs)
	return l
}

// logger builds the logger the flags describe, writing to w.
func (l *logFlags) logger(w io.Writer) (logr.Logger, error) {
	opts := []zap.Opts{zap.UseFlagOptions(&l.zap), zap.WriteTo(w)}
	if l.zap.StacktraceLevel == nil {
		// controller-runtime's default puts a stack trace on every error
		// entry; an agent retrying a push every 2 s while the manager is
		// away would write one each time. Errors here are operational
		// (connection refused, store down), so only a panic keeps one
		// unless --zap-stacktrace-level says otherwise.
		opts = append(opts, zap.StacktraceLevel(zapcore.PanicLevel))
	}
	switch l.format {
	case LogJSON:
		opts = append(opts, zap.JSONEncoder())
	case LogConsole:
		opts = append(opts, zap.ConsoleEncoder(func(c *zapcore.EncoderConfig) {
			c.EncodeTime = zapcore.TimeEncoderOfLayout("15:04:05.000")
			c.EncodeLevel = zapcore.CapitalLevelEncoder
		}))
	default:
		return logr.Discard(), fmt.Errorf("--log-format must be %s or %s, not %q", LogJSON, LogConsole, l.format)
	}
	return zap.New(opts...), nil
}
