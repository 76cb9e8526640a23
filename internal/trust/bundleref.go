package trust

// BundleRef names a ConfigMap or a Secret (exactly one) of the manager's
// namespace whose Key holds PEM CA certificates. The manager mounts it into
// the probe pods it runs (--probe-trusted-ca-configmap/-secret/-key), so
// managed agents trust the same private CAs as the manager.
type BundleRef struct {
	ConfigMap string
	Secret    string
	Key       string
}
