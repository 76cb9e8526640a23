package probeapi

import (
	"encoding/base64"
	"encoding/json"
	"math"
	"strconv"
	"time"
)

// AppendJSON appends the JSON encoding of the batch to dst: the same bytes
// json.Marshal produces (a test holds them equal), written without
// reflection, because agents encode every result they push and
// encoding/json was a visible share of an agent's CPU per check.
func (b *ResultBatch) AppendJSON(dst []byte) []byte {
	dst = append(dst, `{"region":`...)
	dst = appendString(dst, b.Region)
	dst = append(dst, `,"agent_id":`...)
	dst = appendString(dst, b.AgentID)
	dst = append(dst, `,"results":`...)
	if b.Results == nil {
		dst = append(dst, "null"...)
	} else {
		dst = append(dst, '[')
		for i := range b.Results {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = b.Results[i].AppendJSON(dst)
		}
		dst = append(dst, ']')
	}
	if b.Replayed != 0 {
		dst = append(dst, `,"replayed":`...)
		dst = strconv.AppendInt(dst, int64(b.Replayed), 10)
	}
	if b.Backlog != 0 {
		dst = append(dst, `,"backlog":`...)
		dst = strconv.AppendInt(dst, int64(b.Backlog), 10)
	}
	return append(dst, '}')
}

// AppendJSON appends the JSON encoding of r to dst, byte for byte what
// json.Marshal produces.
func (r *Result) AppendJSON(dst []byte) []byte {
	dst = append(dst, `{"id":`...)
	dst = appendString(dst, r.ID)
	dst = append(dst, `,"monitor_id":`...)
	dst = appendString(dst, r.MonitorID)
	if r.Generation != 0 {
		dst = append(dst, `,"generation":`...)
		dst = strconv.AppendInt(dst, r.Generation, 10)
	}
	dst = append(dst, `,"region":`...)
	dst = appendString(dst, r.Region)
	dst = append(dst, `,"checked_at":`...)
	dst = appendTime(dst, r.CheckedAt)
	dst = append(dst, `,"status":`...)
	dst = appendString(dst, string(r.Status))
	dst = append(dst, `,"status_code":`...)
	if r.StatusCode == nil {
		dst = append(dst, "null"...)
	} else {
		dst = strconv.AppendInt(dst, int64(*r.StatusCode), 10)
	}
	dst = append(dst, `,"response_time_ms":`...)
	dst = strconv.AppendInt(dst, r.ResponseTimeMs, 10)
	if r.ErrorType != "" {
		dst = append(dst, `,"error_type":`...)
		dst = appendString(dst, r.ErrorType)
	}
	if r.ErrorMessage != "" {
		dst = append(dst, `,"error_message":`...)
		dst = appendString(dst, r.ErrorMessage)
	}
	if t := r.Timings; t != nil {
		dst = append(dst, `,"timings":{`...)
		first := true
		for _, f := range [...]struct {
			name string
			v    float64
		}{{`"dns_ms":`, t.DNSMs}, {`"connect_ms":`, t.ConnectMs}, {`"tls_ms":`, t.TLSMs}, {`"first_byte_ms":`, t.FirstByteMs}} {
			if f.v == 0 {
				continue
			}
			if !first {
				dst = append(dst, ',')
			}
			first = false
			dst = append(dst, f.name...)
			dst = appendFloat(dst, f.v)
		}
		dst = append(dst, '}')
	}
	if t := r.TLS; t != nil {
		dst = append(dst, `,"tls":{"not_after":`...)
		dst = appendTime(dst, t.NotAfter)
		dst = append(dst, `,"issuer":`...)
		dst = appendString(dst, t.Issuer)
		dst = append(dst, `,"subject":`...)
		dst = appendString(dst, t.Subject)
		dst = append(dst, '}')
	}
	if len(r.Details) > 0 {
		dst = append(dst, `,"details":`...)
		dst = appendRaw(dst, r.Details)
	}
	if len(r.Screenshot) > 0 {
		dst = append(dst, `,"screenshot":"`...)
		dst = base64.StdEncoding.AppendEncode(dst, r.Screenshot)
		dst = append(dst, '"')
	}
	return append(dst, '}')
}

// plain reports whether s needs no escaping in encoding/json's output
// (printable ASCII other than the quote, the backslash and the HTML
// characters encoding/json escapes).
func plain(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 0x20 || c >= 0x80 || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			return false
		}
	}
	return true
}

// AppendString appends s as a JSON string, escaped as encoding/json
// escapes it.
func AppendString(dst []byte, s string) []byte { return appendString(dst, s) }

func appendString(dst []byte, s string) []byte {
	if plain(s) {
		dst = append(dst, '"')
		dst = append(dst, s...)
		return append(dst, '"')
	}
	b, _ := json.Marshal(s)
	return append(dst, b...)
}

// appendRaw appends a RawMessage: as is when it is compact and needs no
// escaping (what json.Marshal of the details produces), else through
// encoding/json, which compacts and escapes it.
func appendRaw(dst []byte, raw json.RawMessage) []byte {
	for _, c := range raw {
		if c <= ' ' || c >= 0x80 || c == '<' || c == '>' || c == '&' {
			b, err := json.Marshal(raw)
			if err != nil {
				return append(dst, "null"...)
			}
			return append(dst, b...)
		}
	}
	return append(dst, raw...)
}

// appendTime formats t as time.Time's MarshalJSON does.
func appendTime(dst []byte, t time.Time) []byte {
	if y := t.Year(); y < 0 || y > 9999 {
		b, _ := json.Marshal(t)
		return append(dst, b...)
	}
	dst = append(dst, '"')
	dst = t.AppendFormat(dst, time.RFC3339Nano)
	return append(dst, '"')
}

// appendFloat formats f as encoding/json does.
func appendFloat(dst []byte, f float64) []byte {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return append(dst, '0')
	}
	format := byte('f')
	if abs := math.Abs(f); abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	dst = strconv.AppendFloat(dst, f, format, -1, 64)
	if format == 'e' {
		// Clean up e-09 to e-9.
		if n := len(dst); n >= 4 && dst[n-4] == 'e' && dst[n-3] == '-' && dst[n-2] == '0' {
			dst[n-2] = dst[n-1]
			dst = dst[:n-1]
		}
	}
	return dst
}
