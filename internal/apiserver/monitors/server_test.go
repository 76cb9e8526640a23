package monitors

import (
	"net/http"

	"k8s.io/client-go/tools/record"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/uptime-operator/uptime-operator/internal/apiserver/core"
	"github.com/uptime-operator/uptime-operator/internal/plans"
	"github.com/uptime-operator/uptime-operator/internal/store"
	"github.com/uptime-operator/uptime-operator/internal/writethrough"
)

// testOptions are the settings of a testServer: what the assembling
// server's Options give the monitor handlers.
type testOptions struct {
	Client    client.Client
	Reader    client.Reader
	Keys      client.Reader
	Plans     *plans.Resolver
	Store     store.Store
	Engine    Engine
	Monitors  MonitorLister
	PublicURL string
	Clock     clock.PassiveClock
	Recorder  record.EventRecorder
}

// testServer is the monitor handlers on a core router, built the way
// internal/apiserver builds them (a read-your-writes overlay over Client).
type testServer struct {
	*Handlers
	opts testOptions
	rt   *core.Router
}

func newTestServer(o testOptions) *testServer {
	if o.Clock == nil {
		o.Clock = clock.RealClock{}
	}
	if o.Reader == nil {
		o.Reader = o.Client
	}
	overlay := &writethrough.Overlay{}
	d := &core.Deps{Client: overlay.Client(o.Client), Reader: o.Reader, Overlay: overlay, Plans: o.Plans, Clock: o.Clock}
	var keys core.KeyStore
	var st Store
	if o.Store != nil {
		keys, st = o.Store, o.Store
	}
	rt := core.NewRouter(d, core.RouterOptions{Keys: o.Keys, Store: keys, PublicURL: o.PublicURL, Recorder: o.Recorder})
	h := New(d, Options{Store: st, Engine: o.Engine, Monitors: o.Monitors, PublicURL: o.PublicURL})
	h.Routes(rt)
	return &testServer{Handlers: h, opts: o, rt: rt}
}

// Handler is the router with the monitor routes.
func (s *testServer) Handler() http.Handler { return s.rt.Mux }
