package probeapi

import (
	"encoding/json"
	"testing"
	"time"
)

// TestAppendJSONIsEncodingJSON holds the hand-written encoder to the bytes
// of encoding/json, the one shape of a result on the wire.
func TestAppendJSONIsEncodingJSON(t *testing.T) {
	code := 503
	at := time.Date(2026, 11, 26, 8, 1, 2, 345678000, time.UTC)
	results := []Result{
		{},
		{ID: "0199b1c2-1111-7000-8000-000000000001", MonitorID: "m1", Region: "eu-1", CheckedAt: at, Status: StatusUp, StatusCode: &code, ResponseTimeMs: 12,
			Timings: &Timings{DNSMs: 0.001, ConnectMs: 0.123, FirstByteMs: 12.5}, Details: json.RawMessage(`{"final_url":"http://a/b?c=d","redirects":0,"body_bytes":15}`)},
		{ID: "x", MonitorID: "m2", Generation: 7, Region: "us-1", CheckedAt: at.In(time.FixedZone("x", 3600)), Status: StatusDown,
			ErrorType: ErrorKeyword, ErrorMessage: "keyword \"<ok>\" not found & more\n\t\x01 é \u2028 \xff",
			Timings: &Timings{TLSMs: 1e-7, ConnectMs: 1e22}, TLS: &TLSInfo{NotAfter: at, Issuer: "CN=Test CA", Subject: "CN=<host>"},
			Details: json.RawMessage(`{ "assertions": [ {"a": "x < y & z"} ] }`)},
		{ID: "t", Timings: &Timings{}, Details: json.RawMessage(`{"steps":[{"name":"é"}]}`)},
		{ID: "s", Status: StatusDown, Screenshot: []byte("\xff\xd8\xff\xe0 jpeg bytes \x00\x01")},
	}
	// A replaying agent's batch carries its replayed count and backlog:
	// the encoder once left them out, so the manager never learnt either.
	for _, batch := range []ResultBatch{{Region: "eu-1", AgentID: "agent-0"}, {Region: "r\"", AgentID: "a", Results: results},
		{Region: "eu-1", AgentID: "a", Results: results[1:2], Replayed: 1, Backlog: 40123}, {Region: "eu-1", Backlog: 7}} {
		want, err := json.Marshal(&batch)
		if err != nil {
			t.Fatal(err)
		}
		if got := batch.AppendJSON(nil); string(got) != string(want) {
			t.Fatalf("AppendJSON\n got %s\nwant %s", got, want)
		}
	}
}

func BenchmarkEncodeBatch(b *testing.B) {
	code := 200
	batch := ResultBatch{Region: "eu-1", AgentID: "agent-0"}
	for range 200 {
		batch.Results = append(batch.Results, Result{ID: "0199b1c2-1111-7000-8000-000000000001", MonitorID: "0199b1c2-1111-7000-8000-000000000002",
			Region: "eu-1", CheckedAt: time.Now().UTC(), Status: StatusUp, StatusCode: &code, ResponseTimeMs: 3,
			Timings: &Timings{ConnectMs: 0.1, FirstByteMs: 0.9}, Details: json.RawMessage(`{"final_url":"http://127.0.0.1:8080/","redirects":0,"body_bytes":15}`)})
	}
	b.Run("append", func(b *testing.B) {
		for b.Loop() {
			batch.AppendJSON(make([]byte, 0, 64<<10))
		}
	})
	b.Run("encoding-json", func(b *testing.B) {
		for b.Loop() {
			_, _ = json.Marshal(&batch)
		}
	})
}
