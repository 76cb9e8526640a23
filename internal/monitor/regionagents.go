package monitor

// ProbeTokenAudience is the audience of the ServiceAccount tokens that agents
// of managed regions present. The probe Deployments project a token for it,
// and the probe API's TokenReview asks for it, so a token the kubelet mounts
// for talking to kube-apiserver is not one an agent can use, and an agent's
// token is of no use against kube-apiserver.
const ProbeTokenAudience = "probe.uptime-operator.io"

// RegionServiceAccount is the ServiceAccount the agents of managed region
// code run as, in the manager's namespace. Each region has its own, so the
// TokenReview username of an agent names exactly one region.
func RegionServiceAccount(code string) string { return "uptime-operator-probe-" + code }
