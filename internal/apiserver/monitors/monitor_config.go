package monitors

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
	"github.com/uptime-operator/uptime-operator/internal/apiserver/core"
	"github.com/uptime-operator/uptime-operator/internal/credentials"
	"github.com/uptime-operator/uptime-operator/internal/probeapi"
)

// The REST API's monitor `config` is one flat object whose keys depend on the
// monitor type: probeapi.Config, the same object the probe API carries to
// agents. monitor.ConfigOf and monitor.ApplyConfig translate it to and from
// the Monitor's typed structs; this file only adds what is REST's own: the
// size limits, refusing keys of other types, notification_emails (a
// top-level spec field shown under config) and the typed merge of an
// update.

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

// updatedConfig is the config an update writes, merged field by field: the
// stored config cur (nil on create) with the sent keys overlaid, a null
// removing its key. The sent keys decode into probeapi.Config by the one
// codec (so their errors name config.<key>), [REDACTED] credentials get
// their stored values (credentials.RestoreConfig), and each sent key's
// field is then copied over the stored one. urlMoved says the write moves
// the monitor's url to another origin: then stored header credentials not
// sent again are dropped (as are those of steps whose url moves), and their
// paths returned.
func updatedConfig(typ monv1.MonitorType, cur *probeapi.Config, sent map[string]json.RawMessage, urlMoved bool) (probeapi.Config, []string, error) {
	if !slices.Contains(monv1.MonitorTypes, typ) {
		return probeapi.Config{}, nil, core.ValidationError(core.FieldErr("type", "must be one of http, api, ping, port, udp, cron, dns, multistep, mcp"))
	}
	keys := make([]string, 0, len(sent))
	set := map[string]json.RawMessage{}
	for k, v := range sent {
		if string(bytes.TrimSpace(v)) == "null" {
			continue
		}
		keys = append(keys, k)
		set[k] = v
	}
	slices.Sort(keys)
	for _, k := range keys {
		if !probeapi.KeyAllowed(string(typ), k) {
			return probeapi.Config{}, nil, core.ValidationError(core.FieldErr("config."+k, "unknown config key for %s monitors", typ))
		}
	}
	var patch probeapi.Config
	raw, err := json.Marshal(set)
	if err != nil {
		return probeapi.Config{}, nil, fmt.Errorf("encode sent config: %w", err)
	}
	if err := core.DecodeBytes(raw, &patch, true, "config."); err != nil {
		if ae, ok := err.(*core.Error); ok && ae.Body.Code == core.CodeValidation {
			for i, e := range ae.Body.Errors {
				if e.Message == "unknown field" {
					ae.Body.Errors[i].Message = fmt.Sprintf("unknown config key for %s monitors", typ)
				}
			}
		}
		return probeapi.Config{}, nil, err
	}
	if tc := patch.ToolCall; tc != nil {
		if args := bytes.TrimSpace(tc.Arguments); len(args) > 0 && string(args) != "null" && args[0] != '{' {
			return probeapi.Config{}, nil, core.ValidationError(core.FieldErr("config.tool_call.arguments", "must be a JSON object"))
		}
	}
	moved := credentials.Moved{Headers: urlMoved}.StepsMoved(&patch, cur)
	dropped, err := credentials.RestoreConfig(&patch, cur, moved)
	if err != nil {
		return probeapi.Config{}, nil, core.ValidationError(core.FieldErr("config", "%v", err))
	}
	var out probeapi.Config
	if cur != nil {
		out = *cur
	}
	for k := range sent {
		if _, ok := set[k]; ok {
			out.CopyKey(k, &patch)
		} else {
			out.ClearKey(k)
		}
	}
	if _, sentHeaders := sent["headers"]; moved.Headers && !sentHeaders {
		var d []string
		out.Headers, d = credentials.DropHeaders(out.Headers, "config.headers")
		dropped = append(dropped, d...)
	}
	if raw, err := json.Marshal(out); err == nil && len(raw) > maxConfigBytes {
		return probeapi.Config{}, nil, core.ValidationError(core.FieldErr("config", "must be at most 32 KB as JSON"))
	}
	slices.Sort(dropped)
	return out, dropped, nil
}
