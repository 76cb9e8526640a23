package monitor

import (
	"context"
	"reflect"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/validation/field"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
	"github.com/uptime-operator/uptime-operator/internal/monitorconfig"
	"github.com/uptime-operator/uptime-operator/internal/netguard"
)

// privateValue is a value of the shape a guard tag declares that names a
// private address.
var privateValue = map[monitorconfig.Guard]string{
	monitorconfig.GuardHost:     "10.1.2.3",
	monitorconfig.GuardHostPort: "10.1.2.3:50051",
	monitorconfig.GuardHTTPURL:  "http://10.1.2.3/health",
	monitorconfig.GuardWSURL:    "ws://10.1.2.3/ws",
}

// setGuarded sets every field with a guard tag reachable from the struct v
// (through nested structs and one item of each list) to a private address.
func setGuarded(t *testing.T, v reflect.Value) {
	byName := map[string]reflect.Value{}
	for i := range v.NumField() {
		name, _, _ := strings.Cut(v.Type().Field(i).Tag.Get("json"), ",")
		byName[name] = v.Field(i)
	}
	for _, f := range monitorconfig.Fields(v.Type()) {
		fv := byName[f.Name]
		switch {
		case f.Guard != "":
			fv.SetString(privateValue[f.Guard])
		case f.Kind == monitorconfig.KindStruct:
			if fv.Kind() == reflect.Pointer {
				fv.Set(reflect.New(fv.Type().Elem()))
				fv = fv.Elem()
			}
			setGuarded(t, fv)
		case f.Kind == monitorconfig.KindList:
			fv.Set(reflect.MakeSlice(fv.Type(), 1, 1))
			setGuarded(t, fv.Index(0))
		}
	}
}

// TestEveryGuardedFieldIsChecked: for every monitor type, each field its
// config struct tags as a target (guard:"host", "hostport", "http-url",
// "ws-url") is refused by admission when it names a private address, at its
// own field path, with the specification's message, without a rule
// written for the type. A new type gets this by tagging its field.
func TestEveryGuardedFieldIsChecked(t *testing.T) {
	guarded := 0
	for _, typ := range monv1.MonitorTypes {
		spec := monv1.MonitorSpec{Name: "m", Type: typ}
		cfg, _ := monitorconfig.ConfigField(&spec, typ)
		cfg.Set(reflect.New(cfg.Type().Elem()))
		setGuarded(t, cfg.Elem())
		targets := monitorconfig.Targets(&spec, field.NewPath("spec"))
		errs := ValidateMonitorSpec(context.Background(), &spec, netguard.Guard{}, field.NewPath("spec"))
		for _, tg := range targets {
			guarded++
			found := false
			for _, e := range errs {
				found = found || (e.Field == tg.Field.String() && e.Detail == PrivateAddressMessage)
			}
			if !found {
				t.Errorf("%s: %s = %q is not refused as a private address; errors: %v", typ, tg.Field, tg.Value, errs)
			}
		}
	}
	// ping, port, udp host; multistep and browser step url; grpc target;
	// websocket url.
	if guarded < 7 {
		t.Errorf("%d guarded fields over every type, want at least 7", guarded)
	}
}

// TestGuardedFieldShapes: a guarded field of the wrong shape gets the
// message of its tag.
func TestGuardedFieldShapes(t *testing.T) {
	for _, tc := range []struct {
		spec       monv1.MonitorSpec
		path, want string
	}{
		{monv1.MonitorSpec{Type: monv1.MonitorGRPC, GRPC: &monv1.GRPCConfig{Target: "rpc.example.com"}}, "spec.grpc.target", "must be host:port with a port 1-65535"},
		{monv1.MonitorSpec{Type: monv1.MonitorWebSocket, WebSocket: &monv1.WebSocketConfig{URL: "https://example.com/ws"}}, "spec.websocket.url", "must be a valid ws:// or wss:// URL"},
		{monv1.MonitorSpec{Type: monv1.MonitorWebSocket, WebSocket: &monv1.WebSocketConfig{URL: "wss://u:p@example.com/ws"}}, "spec.websocket.url", "must not contain a username or password"},
		{monv1.MonitorSpec{Type: monv1.MonitorMultistep, Multistep: &monv1.MultistepConfig{Steps: []monv1.MultistepStep{{Name: "a", URL: "ftp://example.com/"}}}}, "spec.multistep.steps[0].url", "must be a valid http:// or https:// URL"},
		{monv1.MonitorSpec{Type: monv1.MonitorPing, Ping: &monv1.PingConfig{Host: "not a host"}}, "spec.ping.host", "must be a hostname or IP address"},
	} {
		tc.spec.Name = "m"
		errs := ValidateMonitorSpec(context.Background(), &tc.spec, nil, field.NewPath("spec"))
		found := false
		for _, e := range errs {
			found = found || (e.Field == tc.path && e.Detail == tc.want)
		}
		if !found {
			t.Errorf("%s: want %q, got %v", tc.path, tc.want, errs)
		}
	}
	// A multi-step URL with variables is checked at run time.
	spec := monv1.MonitorSpec{Name: "m", Type: monv1.MonitorMultistep, Multistep: &monv1.MultistepConfig{Steps: []monv1.MultistepStep{
		{Name: "a", URL: "https://example.com/", Extract: []monv1.Extraction{{Variable: "next", Source: "header", Property: "Location"}}},
		{Name: "b", URL: "{{next}}"}}}}
	for _, e := range ValidateMonitorSpec(context.Background(), &spec, nil, field.NewPath("spec")) {
		if strings.HasPrefix(e.Field, "spec.multistep.steps[1].url") {
			t.Errorf("templated url refused: %v", e)
		}
	}
}
