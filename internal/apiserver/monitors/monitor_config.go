package monitors

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
	"github.com/uptime-operator/uptime-operator/internal/apiserver/core"
	"github.com/uptime-operator/uptime-operator/internal/credentials"
	"github.com/uptime-operator/uptime-operator/internal/monitorconfig"
)

// The REST API's monitor `config` is one flat object whose keys depend on the
// monitor type: the fields of the Monitor's config struct of that type
// under the snake_case keys package monitorconfig derives from it (the same
// object the probe API carries to agents). This file only adds what is
// REST's own: the size limits, notification_emails (a top-level spec field
// shown under config) and the merge of an update key by key.

// Config limits of the specification.
const (
	maxConfigKeys  = 50
	maxConfigBytes = 32 * 1024
)

// checkConfigLimits enforces the specification's limits on the raw config
// object: at most 50 keys and 32 KB as JSON.
func checkConfigLimits(cfg map[string]json.RawMessage) []core.FieldError {
	if len(cfg) > maxConfigKeys {
		return []core.FieldError{core.FieldErr("config", "must have at most %d keys", maxConfigKeys)}
	}
	raw, _ := json.Marshal(cfg)
	if len(raw) > maxConfigBytes {
		return []core.FieldError{core.FieldErr("config", "must be at most 32 KB as JSON")}
	}
	return nil
}

// updatedConfig sets the config struct of spec's type to what a write
// asks for, merged key by key: the stored config cur (nil on create, or
// when the write replaces the config) with the sent keys overlaid, a null
// removing its key. The merged object decodes by the one codec
// (monitorconfig: errors name config.<key>), [REDACTED] credentials get
// their stored values (credentials.RestoreConfig). urlMoved says the write
// moves the monitor's url to another origin: then stored header
// credentials not sent again are dropped (as are those of steps whose url
// moves), and their paths returned.
func updatedConfig(spec, cur *monv1.MonitorSpec, sent map[string]json.RawMessage, urlMoved bool) ([]string, error) {
	typ := core.TypeOrDefault(spec.Type)
	if _, ok := monv1.LookupMonitorType(typ); !ok {
		return nil, core.ValidationError(core.FieldErr("type", "must be one of %s", strings.Join(monv1.MonitorTypeNames(), ", ")))
	}
	keys := slices.Sorted(maps.Keys(sent))
	for _, k := range keys {
		if string(bytes.TrimSpace(sent[k])) != "null" && !monitorconfig.KeyAllowed(typ, k) {
			return nil, core.ValidationError(core.FieldErr("config."+k, "unknown config key for %s monitors", typ))
		}
	}
	merged := map[string]json.RawMessage{}
	if cur != nil {
		c := *cur
		c.Type = typ
		merged = monitorconfig.Encode(&c)
	}
	for _, k := range keys {
		if string(bytes.TrimSpace(sent[k])) == "null" {
			delete(merged, k)
		} else {
			merged[k] = sent[k]
		}
	}
	next := monv1.MonitorSpec{Type: typ}
	if err := monitorconfig.Decode(&next, merged); err != nil {
		var ke *monitorconfig.KeyError
		if errors.As(err, &ke) {
			msg := ke.Msg
			if msg == monitorconfig.UnknownKey {
				msg = fmt.Sprintf("unknown config key for %s monitors", typ)
			}
			return nil, core.ValidationError(core.FieldErr(strings.TrimSuffix("config."+ke.Key, "."), "%s", msg))
		}
		return nil, err
	}
	moved := credentials.Moved{Headers: urlMoved}.StepsMoved(&next, cur)
	dropped, err := credentials.RestoreConfig(&next, cur, moved)
	if err != nil {
		return nil, core.ValidationError(core.FieldErr("config", "%v", err))
	}
	// Stored top-level lists whose origin moved and that the write did not
	// send (a nested list moves with its url, sent in the same object).
	for _, l := range monitorconfig.HeaderLists(&next) {
		if _, sentList := sent[l.Path]; !sentList && !strings.Contains(l.Path, ".") && moved.Moves(l) {
			var d []string
			*l.Headers, d = credentials.DropHeaders(*l.Headers, "config."+l.Path)
			dropped = append(dropped, d...)
		}
	}
	if len(monitorconfig.Marshal(&next)) > maxConfigBytes {
		return nil, core.ValidationError(core.FieldErr("config", "must be at most 32 KB as JSON"))
	}
	to, _ := monitorconfig.ConfigField(spec, typ)
	from, _ := monitorconfig.ConfigField(&next, typ)
	monitorconfig.ClearOthers(spec)
	to.Set(from)
	slices.Sort(dropped)
	return dropped, nil
}
