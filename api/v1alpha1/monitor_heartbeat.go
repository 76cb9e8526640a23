package v1alpha1

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"math/big"
)

// Where a cron Monitor's heartbeat token lives.
//
// The path /heartbeat/<token> is the only credential a job's ping carries,
// and Kubernetes' built-in `view` role reads Monitors (through the chart's
// aggregate roles): a token in the object would let every viewer page
// on-call with ?status=fail, or keep a dead job looking alive. So the
// object holds only the token's SHA-256 (HeartbeatTokenHashAnnotation),
// which is what pings are matched by, and the token itself is kept in the
// Monitor's own credentials Secret (key HeartbeatTokenKey, owned by the
// Monitor's UID), which `view` cannot read and from which the REST API
// shows the heartbeat URL.

// HeartbeatTokenAnnotation sets a cron Monitor's heartbeat token by hand
// (kubectl, GitOps; also where tokens lived before they moved to the
// credentials Secret). Admission checks it; the Monitor controller moves it
// to the credentials Secret, records its hash and removes the annotation,
// keeping the token, so the jobs that ping it keep working.
const HeartbeatTokenAnnotation = "uptime-operator.io/heartbeat-token"

// HeartbeatTokenHashAnnotation holds the hex SHA-256 of a cron Monitor's
// heartbeat token (HashHeartbeatToken). A token has about 165 random bits,
// so its hash reveals nothing a viewer could ping with.
const HeartbeatTokenHashAnnotation = "uptime-operator.io/heartbeat-token-sha256"

// HeartbeatTokenKey is the key of the heartbeat token in a Monitor's own
// credentials Secret. Header values are kept under "<list>.<header>" keys,
// so a key without a dot cannot collide with one.
const HeartbeatTokenKey = "heartbeat-token"

// HeartbeatTokenIndex is the manager's cache field index of Monitors by
// heartbeat token hash (HeartbeatTokenHash). Heartbeat URLs carry no
// workspace, so a token is unique in the cluster: admission looks a new one
// up here, and a ping finds its monitor here by the hash of its path.
const HeartbeatTokenIndex = "heartbeatTokenHash"

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

// HashHeartbeatToken is the hex SHA-256 of a heartbeat token, as
// HeartbeatTokenHashAnnotation holds it.
func HashHeartbeatToken(tok string) string {
	sum := sha256.Sum256([]byte(tok))
	return hex.EncodeToString(sum[:])
}

// ValidHeartbeatTokenHash reports whether h has the shape
// HashHeartbeatToken gives (64 lower-case hex digits).
func ValidHeartbeatTokenHash(h string) bool {
	if len(h) != sha256.Size*2 {
		return false
	}
	for i := 0; i < len(h); i++ {
		if c := h[i]; (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// HeartbeatTokenHash is the hash of the token m's pings are matched by: a
// token set by hand in HeartbeatTokenAnnotation (the newest intent, until
// the controller moves it), else HeartbeatTokenHashAnnotation; "" when m is
// not a cron monitor or has no token yet.
func HeartbeatTokenHash(m *Monitor) string {
	if m.Spec.Type != MonitorCron {
		return ""
	}
	if tok := m.Annotations[HeartbeatTokenAnnotation]; tok != "" {
		return HashHeartbeatToken(tok)
	}
	return m.Annotations[HeartbeatTokenHashAnnotation]
}

// SetHeartbeatToken makes tok m's heartbeat token in the object: its hash
// goes to HeartbeatTokenHashAnnotation and a token set by hand goes. The
// token itself belongs in m's credentials Secret (HeartbeatTokenKey).
func SetHeartbeatToken(m *Monitor, tok string) {
	if m.Annotations == nil {
		m.Annotations = map[string]string{}
	}
	delete(m.Annotations, HeartbeatTokenAnnotation)
	m.Annotations[HeartbeatTokenHashAnnotation] = HashHeartbeatToken(tok)
}

// HeartbeatPath is the path of the heartbeat URL of token below the
// public base URL: "/heartbeat/<token>".
func HeartbeatPath(tok string) string { return "/heartbeat/" + tok }
