package v1alpha1

import (
	"crypto/rand"
	"math/big"
)

// HeartbeatTokenAnnotation on a cron Monitor holds its heartbeat token: the
// path /heartbeat/<token> is the credential a job pings. Whoever creates a
// cron Monitor first (the REST API at create time, else the Monitor
// controller) mints it with EnsureHeartbeatToken; rotation replaces it.
const HeartbeatTokenAnnotation = "uptime-operator.io/heartbeat-token"

// HeartbeatTokenIndex is the manager's cache field index of Monitors by
// heartbeat token. Heartbeat URLs carry no workspace, so a token is unique
// in the cluster: admission looks a new one up here, and a ping finds its
// monitor here.
const HeartbeatTokenIndex = "heartbeatToken"

// heartbeatTokenAlphabet and heartbeatTokenLength shape heartbeat tokens:
// 32 characters of [0-9a-z], about 165 bits.
const (
	heartbeatTokenAlphabet = "0123456789abcdefghijklmnopqrstuvwxyz"
	heartbeatTokenLength   = 32
)

// NewHeartbeatToken returns a random token for a heartbeat URL (also used
// for other random secrets of the same shape, such as region tokens).
func NewHeartbeatToken() string {
	b := make([]byte, heartbeatTokenLength)
	limit := big.NewInt(int64(len(heartbeatTokenAlphabet)))
	for i := range b {
		n, err := rand.Int(rand.Reader, limit)
		if err != nil {
			panic(err) // crypto/rand does not fail on supported platforms
		}
		b[i] = heartbeatTokenAlphabet[n.Int64()]
	}
	return string(b)
}

// ValidHeartbeatToken reports whether tok has the shape NewHeartbeatToken
// gives: a token set by hand must be as hard to guess as a minted one,
// since it is the only credential of the heartbeat URL.
func ValidHeartbeatToken(tok string) bool {
	if len(tok) < heartbeatTokenLength || len(tok) > 128 {
		return false
	}
	for i := 0; i < len(tok); i++ {
		c := tok[i]
		if (c < '0' || c > '9') && (c < 'a' || c > 'z') {
			return false
		}
	}
	return true
}

// EnsureHeartbeatToken gives a cron monitor a heartbeat token when it has
// none and reports whether it did; other types are left alone. Minting
// before the Monitor is created lets the create response carry the URL.
func EnsureHeartbeatToken(m *Monitor) bool {
	if m.Spec.Type != MonitorCron || m.Annotations[HeartbeatTokenAnnotation] != "" {
		return false
	}
	if m.Annotations == nil {
		m.Annotations = map[string]string{}
	}
	m.Annotations[HeartbeatTokenAnnotation] = NewHeartbeatToken()
	return true
}

// HeartbeatPath is the path of m's heartbeat URL below the public base URL
// ("/heartbeat/<token>"), or "" when m is not a cron monitor or has no
// token yet.
func HeartbeatPath(m *Monitor) string {
	if m.Spec.Type != MonitorCron {
		return ""
	}
	if tok := m.Annotations[HeartbeatTokenAnnotation]; tok != "" {
		return "/heartbeat/" + tok
	}
	return ""
}
