package probes

import (
	"os"
	"runtime/debug"

	"github.com/google/uuid"
)

// agentGCPercent is the agent process's GOGC. An HTTP check allocates a
// few kilobytes that die with it, and the live heap is small (the schedule
// and the result buffer), so at the default of 100 the collector ran
// several times a second at saturation and took about a tenth of the
// agent's CPU; at 400 it runs a quarter as often for a heap that peaks
// higher by a few tens of megabytes.
const agentGCPercent = 400

// TuneProcess sets the runtime up for a process that runs only the agent
// (`uptime-operator probe`): a larger GC target unless GOGC is set, and
// result ids drawn from a buffered pool of crypto/rand bytes instead of a
// read of crypto/rand per id. The manager, which runs ad-hoc checks
// in-process, keeps the defaults.
func TuneProcess() {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(agentGCPercent)
	}
	uuid.EnableRandPool()
}
