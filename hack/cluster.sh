#!/usr/bin/env bash
# A single-node Kubernetes cluster built from source, for `make e2e` and for
# trying the chart by hand. Everything comes from the Go module proxy and
# Debian packages; nothing is pulled from an image registry.
#
#   hack/cluster.sh up        start it (idempotent; prints the kubeconfig path)
#   hack/cluster.sh down      stop it and undo every change it made to the host
#   hack/cluster.sh status    say whether it runs
#   hack/cluster.sh load TAR  import an image archive into the node's runtime
#   hack/cluster.sh exec CMD  run CMD inside the node's network (kubectl, helm, …)
#   hack/cluster.sh env       print the exports (KUBECONFIG, PATH) for `eval`
#   SITE=2 hack/cluster.sh …  the same for a second cluster, a remote site
#                             linked to the first (see SITE below)
#
# What runs, all inside a network namespace of its own (NETNS, default
# uptime-k8s) that has no link and no route out of the machine: etcd and
# kube-apiserver (hack/envtest-binaries.sh), kube-controller-manager,
# kube-scheduler, kubelet and kube-proxy (hack/cluster-binaries.sh, all
# v1.37.2), containerd + runc + the CNI plugins (Debian packages, with a
# config, root, state, socket and CNI conf dir of their own), CoreDNS (built
# from its Go module, run as a Deployment) and a local-path volume
# provisioner (hack/cluster/localpath). The pause and CoreDNS images are
# assembled by hack/ociimage and imported into containerd.
#
# The node's address (NODE_IP, 10.250.0.1) sits on a bridge with no ports
# inside that namespace; Pods (10.244.0.0/24) and Services (10.96.0.0/16) are
# routed only there, so a packet to any of them cannot leave the machine. To
# reach the cluster, run inside the namespace: `hack/cluster.sh exec kubectl
# get nodes`, or `eval "$(hack/cluster.sh env)"` and then `hack/cluster.sh exec`.
#
# Host changes and how `down` undoes them: the namespace (deleted, with its
# links, routes, iptables rules and namespaced sysctls); the kernel sysctls
# kubelet sets (vm.overcommit_memory, vm.panic_on_oom, kernel.panic,
# kernel.panic_on_oops, kernel.keys.root_max*: saved before `up`, restored);
# processes (stopped by their recorded PIDs); mounts under the state directory
# and the Pod network namespaces containerd made (unmounted); the kubepods
# cgroups (removed); /var/log/containers links into the state directory
# (removed). The system containerd, its config and /etc/cni/net.d are never
# touched.
#
# Built binaries and images are cached in CACHE (~/.cache/uptime-operator/
# cluster); the cluster's state lives in DIR (CACHE/run) and is removed by `down`.
set -euo pipefail

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
CACHE="${UPTIME_CLUSTER_CACHE:-$HOME/.cache/uptime-operator/cluster}"
# SITE=2 runs a second, independent cluster beside the first (a remote
# site): its own namespace, node address, Pod and Service ranges, state,
# runtime and kubepods cgroup root, joined to the first cluster's namespace
# only by a routed veth link (see site_link). Take it down before the first.
SITE="${SITE:-}"
if [[ -z "$SITE" ]]; then
  DIR="${UPTIME_CLUSTER_DIR:-$CACHE/run}"
  NETNS="${NETNS:-uptime-k8s}"
  NODE_NAME="${NODE_NAME:-uptime-node}"
  NODE_IP=10.250.0.1
  POD_CIDR=10.244.0.0/24
  CLUSTER_CIDR=10.244.0.0/16
  SERVICE_CIDR=10.96.0.0/16
  API_SERVICE_IP=10.96.0.1
  DNS_IP=10.96.0.10
  CGROUP_ROOT=""
else
  [[ "$SITE" =~ ^[2-9]$ ]] || { echo "cluster: SITE must be 2-9" >&2; exit 1; }
  DIR="$CACHE/run-site$SITE"
  NETNS="uptime-k8s-$SITE"
  NODE_NAME="uptime-node-$SITE"
  NODE_IP="10.250.$SITE.1"
  POD_CIDR="10.$((244 + SITE)).0.0/24"
  CLUSTER_CIDR="10.$((244 + SITE)).0.0/16"
  SERVICE_CIDR="10.$((95 + SITE)).0.0/16"
  API_SERVICE_IP="10.$((95 + SITE)).0.1"
  DNS_IP="10.$((95 + SITE)).0.10"
  # Pod cgroups of its own: a kubelet removes the pod cgroups under its root
  # that belong to no Pod it knows, which would be the first cluster's.
  CGROUP_ROOT="/uptime-site$SITE"
fi
# The first cluster, which a site links to.
HOME_NETNS=uptime-k8s
HOME_NODE_IP=10.250.0.1
HOME_POD_CIDR=10.244.0.0/24
HOME_SERVICE_CIDR=10.96.0.0/16
COREDNS_VERSION="${COREDNS_VERSION:-v1.14.7}"
PAUSE_IMAGE=registry.k8s.io/pause:3.10
COREDNS_IMAGE="registry.k8s.io/coredns/coredns:${COREDNS_VERSION}"
KERNEL_SYSCTLS=(vm.overcommit_memory vm.panic_on_oom kernel.panic kernel.panic_on_oops kernel.keys.root_maxkeys kernel.keys.root_maxbytes)
COMPONENTS=(containerd etcd kube-apiserver kube-controller-manager kube-scheduler kubelet kube-proxy localpath)

say() { echo "cluster: $*" >&2; }
die() { echo "cluster: $*" >&2; exit 1; }

in_ns() { nsenter --net="/run/netns/$NETNS" -- "$@"; }
kubectl_() { in_ns "$ASSETS/kubectl" --kubeconfig "$DIR/admin.kubeconfig" "$@"; }

# ---------------------------------------------------------------- binaries --

need_packages() {
  local missing=()
  command -v containerd >/dev/null || missing+=(containerd)
  command -v runc >/dev/null || missing+=(runc)
  [[ -x /usr/lib/cni/bridge ]] || missing+=(containernetworking-plugins)
  command -v iptables >/dev/null || missing+=(iptables)
  command -v conntrack >/dev/null || missing+=(conntrack)
  command -v openssl >/dev/null || missing+=(openssl)
  [[ -s /etc/ssl/certs/ca-certificates.crt ]] || missing+=(ca-certificates)
  if [[ ${#missing[@]} -gt 0 ]]; then
    say "installing Debian packages: ${missing[*]}"
    if ! DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "${missing[@]}" >/dev/null; then
      apt-get update >/dev/null
      DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "${missing[@]}" >/dev/null
    fi
  fi
}

binaries() {
  ASSETS="$("$ROOT/hack/envtest-binaries.sh" | tail -n1)"
  BIN="$("$ROOT/hack/cluster-binaries.sh" | tail -n1)"
  mkdir -p "$CACHE/bin"
  if [[ ! -x "$CACHE/bin/localpath" || "$ROOT/hack/cluster/localpath/main.go" -nt "$CACHE/bin/localpath" ]]; then
    (cd "$ROOT" && CGO_ENABLED=0 go build -o "$CACHE/bin/localpath" ./hack/cluster/localpath)
  fi
}

images() {
  mkdir -p "$CACHE/images"
  local out="$CACHE/images"
  if [[ ! -s "$out/pause.tar" || "$ROOT/hack/cluster/pause/main.go" -nt "$out/pause.tar" ]]; then
    say "building the pause image"
    (cd "$ROOT" && CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o "$out/pause" ./hack/cluster/pause &&
      go run ./hack/ociimage -o "$out/pause.tar" -tag "$PAUSE_IMAGE" -file "$out/pause:/pause:0755" -entrypoint /pause >/dev/null)
  fi
  if [[ ! -s "$out/coredns-${COREDNS_VERSION}.tar" ]]; then
    say "building the CoreDNS image"
    (cd "$ROOT" && go run ./hack/ociimage -o "$out/coredns-${COREDNS_VERSION}.tar" -tag "$COREDNS_IMAGE" \
      -file "$BIN/coredns:/coredns:0755" -entrypoint /coredns >/dev/null)
  fi
}

# ---------------------------------------------------------------------- PKI --

# cert NAME CN ORG SANS [CA]: a key and a certificate signed by CA (default ca).
cert() {
  local name=$1 cn=$2 org=$3 sans=$4 ca=${5:-ca}
  [[ -s "$DIR/pki/$name.crt" ]] && return 0
  local subj="/CN=$cn"
  [[ -n "$org" ]] && subj="/O=$org/CN=$cn"
  openssl req -new -newkey rsa:2048 -nodes -keyout "$DIR/pki/$name.key" -subj "$subj" -out "$DIR/pki/$name.csr" 2>/dev/null
  {
    echo "basicConstraints=CA:FALSE"
    echo "keyUsage=critical,digitalSignature,keyEncipherment"
    echo "extendedKeyUsage=serverAuth,clientAuth"
    [[ -n "$sans" ]] && echo "subjectAltName=$sans"
  } > "$DIR/pki/$name.ext"
  openssl x509 -req -in "$DIR/pki/$name.csr" -CA "$DIR/pki/$ca.crt" -CAkey "$DIR/pki/$ca.key" -CAcreateserial \
    -days 3650 -sha256 -extfile "$DIR/pki/$name.ext" -out "$DIR/pki/$name.crt" 2>/dev/null
  rm -f "$DIR/pki/$name.csr" "$DIR/pki/$name.ext"
}

ca() {
  local name=$1 cn=$2
  [[ -s "$DIR/pki/$name.crt" ]] && return 0
  openssl req -x509 -new -newkey rsa:2048 -nodes -keyout "$DIR/pki/$name.key" -subj "/CN=$cn" -days 3650 -sha256 \
    -addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign,cRLSign,digitalSignature" \
    -out "$DIR/pki/$name.crt" 2>/dev/null
}

kubeconfig() {
  local name=$1 user=$2
  local f="$DIR/$name.kubeconfig"
  [[ -s "$f" ]] && return 0
  cat > "$f" <<EOF
apiVersion: v1
kind: Config
clusters:
- name: uptime
  cluster:
    server: https://${NODE_IP}:6443
    certificate-authority-data: $(base64 -w0 < "$DIR/pki/ca.crt")
users:
- name: $user
  user:
    client-certificate-data: $(base64 -w0 < "$DIR/pki/$user.crt")
    client-key-data: $(base64 -w0 < "$DIR/pki/$user.key")
contexts:
- name: uptime
  context: {cluster: uptime, user: $user}
current-context: uptime
EOF
}

pki() {
  mkdir -p "$DIR/pki"
  ca ca kubernetes-ca
  ca front-proxy-ca front-proxy-ca
  cert apiserver kube-apiserver "" "IP:${NODE_IP},IP:${API_SERVICE_IP},IP:127.0.0.1,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,DNS:kubernetes.default.svc.cluster.local,DNS:localhost"
  cert apiserver-kubelet-client kube-apiserver-kubelet-client system:masters ""
  cert front-proxy-client front-proxy-client "" "" front-proxy-ca
  cert admin kubernetes-admin system:masters ""
  cert controller-manager system:kube-controller-manager "" ""
  cert scheduler system:kube-scheduler "" ""
  cert kubelet "system:node:${NODE_NAME}" system:nodes "IP:${NODE_IP},DNS:${NODE_NAME}"
  cert proxy system:kube-proxy "" ""
  if [[ ! -s "$DIR/pki/sa.key" ]]; then
    openssl genrsa -out "$DIR/pki/sa.key" 2048 2>/dev/null
    openssl rsa -in "$DIR/pki/sa.key" -pubout -out "$DIR/pki/sa.pub" 2>/dev/null
  fi
  kubeconfig admin admin
  kubeconfig controller-manager controller-manager
  kubeconfig scheduler scheduler
  kubeconfig kubelet kubelet
  kubeconfig proxy proxy
}

# ------------------------------------------------------------------ network --

sysctl_save() {
  [[ -s "$CACHE/sysctl.saved" ]] && return 0
  mkdir -p "$CACHE"
  local s
  for s in "${KERNEL_SYSCTLS[@]}"; do echo "$s=$(sysctl -n "$s")"; done > "$CACHE/sysctl.saved.tmp"
  mv "$CACHE/sysctl.saved.tmp" "$CACHE/sysctl.saved"
}

sysctl_restore() {
  [[ -s "$CACHE/sysctl.saved" ]] || return 0
  local line
  while IFS= read -r line; do
    [[ -n "$line" ]] && sysctl -q -w "$line" >/dev/null || true
  done < "$CACHE/sysctl.saved"
  rm -f "$CACHE/sysctl.saved"
}

network() {
  if [[ ! -e "/run/netns/$NETNS" ]]; then
    ip netns add "$NETNS"
  fi
  in_ns ip link set lo up
  if ! in_ns ip link show node0 >/dev/null 2>&1; then
    in_ns ip link add node0 type bridge
  fi
  in_ns ip link set node0 up
  in_ns ip addr replace "${NODE_IP}/32" dev node0
  # Services need a route for kube-proxy's DNAT to see locally made packets;
  # one over the portless bridge sends an unprogrammed one nowhere.
  in_ns ip route replace "$SERVICE_CIDR" dev node0 src "$NODE_IP"
  in_ns sysctl -q -w net.ipv4.ip_forward=1
  in_ns sysctl -q -w net.bridge.bridge-nf-call-iptables=1 2>/dev/null || true
  [[ -n "$SITE" ]] && site_link
  mkdir -p "$DIR/cni/net.d" "$DIR/cni/ipam"
  cat > "$DIR/cni/net.d/10-uptime.conflist" <<EOF
{
  "cniVersion": "0.4.0",
  "name": "uptime-k8s",
  "plugins": [
    {
      "type": "bridge", "bridge": "cni0", "isGateway": true, "ipMasq": false, "hairpinMode": true,
      "ipam": {"type": "host-local", "dataDir": "$DIR/cni/ipam",
               "ranges": [[{"subnet": "$POD_CIDR"}]], "routes": [{"dst": "0.0.0.0/0"}]}
    },
    {"type": "portmap", "capabilities": {"portMappings": true}}
  ]
}
EOF
}

# site_link joins a site's namespace to the first cluster's by a veth pair
# (10.252.SITE.0/30) and routes: the site reaches the first cluster's node
# address, Pods and Services, and the first cluster reaches the site's node
# address and Pods. Nothing else is routed; deleting either namespace
# removes the link.
site_link() {
  [[ -e "/run/netns/$HOME_NETNS" ]] || die "site $SITE links to the first cluster: start it first (hack/cluster.sh up)"
  local home="nsenter --net=/run/netns/$HOME_NETNS --"
  local here_ip="10.252.$SITE.2" home_ip="10.252.$SITE.1"
  if ! $home ip link show "site$SITE" >/dev/null 2>&1; then
    $home ip link add "site$SITE" type veth peer name home0 netns "$NETNS"
  fi
  $home ip addr replace "$home_ip/30" dev "site$SITE"
  $home ip link set "site$SITE" up
  in_ns ip addr replace "$here_ip/30" dev home0
  in_ns ip link set home0 up
  $home ip route replace "$NODE_IP/32" via "$here_ip"
  $home ip route replace "$POD_CIDR" via "$here_ip"
  in_ns ip route replace "$HOME_NODE_IP/32" via "$home_ip"
  in_ns ip route replace "$HOME_POD_CIDR" via "$home_ip"
  in_ns ip route replace "$HOME_SERVICE_CIDR" via "$home_ip"
}

# ---------------------------------------------------------------- processes --

alive() { [[ -s "$DIR/pids/$1" ]] && kill -0 "$(cat "$DIR/pids/$1")" 2>/dev/null; }

start() {
  local name=$1; shift
  alive "$name" && return 0
  mkdir -p "$DIR/pids" "$DIR/logs"
  # setsid: the cluster outlives the shell (and the process group) that started it.
  # The daemons keep no descriptor of their starter's beyond 0-2: under
  # `flock /work/e2e.lock make e2e` they would otherwise inherit the lock's
  # descriptor and hold the lock for as long as the cluster runs.
  (
    for fd in /proc/"$BASHPID"/fd/*; do
      fd=${fd##*/}
      if ((fd > 2)); then eval "exec $fd>&-"; fi
    done
    exec nsenter --net="/run/netns/$NETNS" -- setsid "$@" >>"$DIR/logs/$name.log" 2>&1 < /dev/null
  ) &
  echo $! > "$DIR/pids/$name"
}

wait_for() {
  local what=$1 tries=$2; shift 2
  local i
  for ((i = 0; i < tries; i++)); do
    if "$@" >/dev/null 2>&1; then return 0; fi
    sleep 1
  done
  die "$what did not come up in ${tries}s; logs in $DIR/logs"
}

containerd_up() {
  mkdir -p "$DIR/containerd"
  cat > "$DIR/containerd/config.toml" <<EOF
version = 2
root = "$DIR/containerd/root"
state = "$DIR/containerd/state"
[grpc]
  address = "$DIR/containerd/containerd.sock"
[ttrpc]
  address = "$DIR/containerd/containerd.sock.ttrpc"
[debug]
  address = ""
[metrics]
  address = ""
[plugins."io.containerd.internal.v1.opt"]
  path = "$DIR/containerd/opt"
[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "$PAUSE_IMAGE"
  # The sandbox cannot lower its oom_score_adj (no CAP_SYS_RESOURCE), and
  # runc fails every container without this.
  restrict_oom_score_adj = true
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        SystemdCgroup = false
        Root = "$DIR/containerd/runc"
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "/usr/lib/cni"
    conf_dir = "$DIR/cni/net.d"
EOF
  start containerd containerd -c "$DIR/containerd/config.toml"
  wait_for containerd 30 ctr --address "$DIR/containerd/containerd.sock" version
}

load() {
  local tar=$1
  ctr --address "$DIR/containerd/containerd.sock" -n k8s.io images import "$tar" >/dev/null
}

control_plane_up() {
  start etcd "$ASSETS/etcd" --data-dir "$DIR/etcd" --listen-client-urls http://127.0.0.1:2379 \
    --advertise-client-urls http://127.0.0.1:2379 --listen-peer-urls http://127.0.0.1:2380 \
    --initial-advertise-peer-urls http://127.0.0.1:2380 --initial-cluster default=http://127.0.0.1:2380 \
    --unsafe-no-fsync --quota-backend-bytes 4294967296
  local p="$DIR/pki"
  start kube-apiserver "$ASSETS/kube-apiserver" \
    --etcd-servers http://127.0.0.1:2379 \
    --bind-address "$NODE_IP" --advertise-address "$NODE_IP" --secure-port 6443 \
    --service-cluster-ip-range "$SERVICE_CIDR" \
    --client-ca-file "$p/ca.crt" --tls-cert-file "$p/apiserver.crt" --tls-private-key-file "$p/apiserver.key" \
    --kubelet-client-certificate "$p/apiserver-kubelet-client.crt" --kubelet-client-key "$p/apiserver-kubelet-client.key" \
    --kubelet-certificate-authority "$p/ca.crt" \
    --service-account-issuer https://kubernetes.default.svc.cluster.local \
    --service-account-key-file "$p/sa.pub" --service-account-signing-key-file "$p/sa.key" \
    --authorization-mode Node,RBAC --enable-admission-plugins NodeRestriction \
    --requestheader-client-ca-file "$p/front-proxy-ca.crt" --requestheader-allowed-names front-proxy-client \
    --requestheader-username-headers X-Remote-User --requestheader-group-headers X-Remote-Group \
    --requestheader-extra-headers-prefix X-Remote-Extra- \
    --proxy-client-cert-file "$p/front-proxy-client.crt" --proxy-client-key-file "$p/front-proxy-client.key" \
    --kubelet-preferred-address-types InternalIP,Hostname \
    --allow-privileged=true --profiling=false
  wait_for kube-apiserver 90 kubectl_ get --raw /readyz
  start kube-controller-manager "$BIN/kube-controller-manager" \
    --kubeconfig "$DIR/controller-manager.kubeconfig" \
    --authentication-kubeconfig "$DIR/controller-manager.kubeconfig" \
    --authorization-kubeconfig "$DIR/controller-manager.kubeconfig" \
    --bind-address 127.0.0.1 --leader-elect=false \
    --cluster-signing-cert-file "$p/ca.crt" --cluster-signing-key-file "$p/ca.key" \
    --root-ca-file "$p/ca.crt" --service-account-private-key-file "$p/sa.key" \
    --use-service-account-credentials=true --allocate-node-cidrs=false \
    --service-cluster-ip-range "$SERVICE_CIDR" --cluster-cidr "$CLUSTER_CIDR"
  start kube-scheduler "$BIN/kube-scheduler" --kubeconfig "$DIR/scheduler.kubeconfig" \
    --authentication-kubeconfig "$DIR/scheduler.kubeconfig" --authorization-kubeconfig "$DIR/scheduler.kubeconfig" \
    --bind-address 127.0.0.1 --leader-elect=false
}

node_up() {
  mkdir -p "$DIR/kubelet" "$DIR/pod-logs"
  local c
  if [[ -n "$CGROUP_ROOT" ]]; then
    # kubelet requires its cgroup root to exist in every hierarchy.
    for c in /sys/fs/cgroup/*/ /sys/fs/cgroup/unified/; do
      [[ -d "$c" && ! -L "${c%/}" ]] && mkdir -p "${c}${CGROUP_ROOT#/}" 2>/dev/null || true
    done
  fi
  cat > "$DIR/kubelet.yaml" <<EOF
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
# The host is cgroup v1 (hybrid); containerd 1.6 lacks the CRI RuntimeConfig
# call, so kubelet falls back to this driver.
failCgroupV1: false
cgroupDriver: cgroupfs
cgroupRoot: ${CGROUP_ROOT:-/}
containerRuntimeEndpoint: unix://$DIR/containerd/containerd.sock
failSwapOn: false
rotateCertificates: false
tlsCertFile: $DIR/pki/kubelet.crt
tlsPrivateKeyFile: $DIR/pki/kubelet.key
authentication:
  anonymous: {enabled: false}
  webhook: {enabled: true}
  x509: {clientCAFile: $DIR/pki/ca.crt}
authorization: {mode: Webhook}
address: $NODE_IP
readOnlyPort: 0
healthzBindAddress: 127.0.0.1
clusterDomain: cluster.local
clusterDNS: [$DNS_IP]
# No upstream resolver: nothing but cluster names resolves.
resolvConf: ""
podLogsDir: $DIR/pod-logs
# Images cannot be pulled back here, so none is ever garbage-collected, and
# a nearly full disk evicts nothing.
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
evictionHard: {memory.available: 100Mi, nodefs.available: 1%, nodefs.inodesFree: 1%, imagefs.available: 1%}
serializeImagePulls: false
EOF
  start kubelet "$BIN/kubelet" --config "$DIR/kubelet.yaml" --kubeconfig "$DIR/kubelet.kubeconfig" \
    --root-dir "$DIR/kubelet" --cert-dir "$DIR/kubelet/pki" --hostname-override "$NODE_NAME" --node-ip "$NODE_IP" --v 1
  cat > "$DIR/kube-proxy.yaml" <<EOF
apiVersion: kubeproxy.config.k8s.io/v1alpha1
kind: KubeProxyConfiguration
clientConnection: {kubeconfig: $DIR/proxy.kubeconfig}
mode: iptables
clusterCIDR: $CLUSTER_CIDR
hostnameOverride: $NODE_NAME
metricsBindAddress: 127.0.0.1:10249
healthzBindAddress: 127.0.0.1:10256
# Leave the host-wide conntrack limits and timeouts alone.
conntrack: {maxPerCore: 0, min: 0, tcpEstablishedTimeout: 0s, tcpCloseWaitTimeout: 0s}
EOF
  start kube-proxy "$BIN/kube-proxy" --config "$DIR/kube-proxy.yaml"
  mkdir -p "$DIR/volumes"
  start localpath "$CACHE/bin/localpath" --kubeconfig "$DIR/admin.kubeconfig" --dir "$DIR/volumes" --node "$NODE_NAME"
}

addons() {
  kubectl_ apply --server-side -f - >/dev/null <<EOF
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata:
  name: local-path
  annotations: {storageclass.kubernetes.io/is-default-class: "true"}
provisioner: uptime-operator.io/local-path
reclaimPolicy: Delete
volumeBindingMode: Immediate
---
apiVersion: v1
kind: ServiceAccount
metadata: {name: coredns, namespace: kube-system}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: system:coredns}
rules:
- apiGroups: [""]
  resources: [endpoints, services, pods, namespaces]
  verbs: [list, watch]
- apiGroups: [discovery.k8s.io]
  resources: [endpointslices]
  verbs: [list, watch]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: system:coredns}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: system:coredns}
subjects:
- {kind: ServiceAccount, name: coredns, namespace: kube-system}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: coredns, namespace: kube-system}
data:
  Corefile: |
    .:53 {
        errors
        health :8080
        ready :8181
        kubernetes cluster.local in-addr.arpa ip6.arpa {
            pods insecure
            fallthrough in-addr.arpa ip6.arpa
        }
        cache 30
    }
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: coredns, namespace: kube-system, labels: {k8s-app: kube-dns}}
spec:
  replicas: 1
  selector: {matchLabels: {k8s-app: kube-dns}}
  template:
    metadata: {labels: {k8s-app: kube-dns}}
    spec:
      serviceAccountName: coredns
      priorityClassName: system-cluster-critical
      dnsPolicy: Default
      containers:
      - name: coredns
        image: $COREDNS_IMAGE
        imagePullPolicy: Never
        args: [-conf, /etc/coredns/Corefile]
        ports:
        - {name: dns, containerPort: 53, protocol: UDP}
        - {name: dns-tcp, containerPort: 53, protocol: TCP}
        readinessProbe: {httpGet: {path: /ready, port: 8181}, periodSeconds: 2}
        livenessProbe: {httpGet: {path: /health, port: 8080}, periodSeconds: 10}
        resources: {requests: {cpu: 50m, memory: 32Mi}, limits: {memory: 128Mi}}
        volumeMounts: [{name: config, mountPath: /etc/coredns, readOnly: true}]
      volumes:
      - name: config
        configMap: {name: coredns}
---
apiVersion: v1
kind: Service
metadata: {name: kube-dns, namespace: kube-system, labels: {k8s-app: kube-dns}}
spec:
  clusterIP: $DNS_IP
  selector: {k8s-app: kube-dns}
  ports:
  - {name: dns, port: 53, protocol: UDP, targetPort: 53}
  - {name: dns-tcp, port: 53, protocol: TCP, targetPort: 53}
EOF
}

# --------------------------------------------------------------- teardown --

stop_pid() {
  local name=$1 sig=${2:-TERM}
  [[ -s "$DIR/pids/$name" ]] || return 0
  local pid
  pid="$(cat "$DIR/pids/$name")"
  if kill -0 "$pid" 2>/dev/null; then
    kill -"$sig" "$pid" 2>/dev/null || true
    local i
    for ((i = 0; i < 50; i++)); do kill -0 "$pid" 2>/dev/null || break; sleep 0.2; done
    kill -KILL "$pid" 2>/dev/null || true
  fi
  rm -f "$DIR/pids/$name"
}

# Mount points under a prefix, deepest first.
mounts_under() {
  awk -v p="$1" '{ m = $5; gsub(/\\040/, " ", m); if (index(m, p) == 1) print m }' /proc/self/mountinfo | sort -r
}

down() {
  if [[ -z "$SITE" ]]; then
    # Sites hang off this cluster's namespace: take them down first.
    local site
    for site in "$CACHE"/run-site*; do
      [[ -d "$site" ]] && SITE="${site##*run-site}" "$0" down
    done
  fi
  [[ -d "$DIR" ]] || { say "not running"; teardown_host; return 0; }
  say "stopping"
  stop_pid localpath
  stop_pid kubelet
  stop_pid kube-proxy
  stop_pid kube-scheduler
  stop_pid kube-controller-manager
  if alive containerd; then
    # Stop every container and sandbox (their shims outlive containerd).
    local a="$DIR/containerd/containerd.sock" t
    for t in $(ctr --address "$a" -n k8s.io tasks ls -q 2>/dev/null); do
      ctr --address "$a" -n k8s.io tasks kill -s KILL "$t" >/dev/null 2>&1 || true
    done
    sleep 1
    for t in $(ctr --address "$a" -n k8s.io tasks ls -q 2>/dev/null); do
      ctr --address "$a" -n k8s.io tasks delete -f "$t" >/dev/null 2>&1 || true
    done
  fi
  stop_pid containerd
  # Shims whose task could not be deleted.
  local pid
  for pid in $(pgrep -f "containerd-shim-runc-v2 .*-address $DIR/containerd/containerd.sock" || true); do
    kill -KILL "$pid" 2>/dev/null || true
  done
  stop_pid kube-apiserver
  stop_pid etcd
  teardown_host
  rm -rf "$DIR"
  say "down"
}

# teardown_host undoes what outlives the processes: mounts, Pod network
# namespaces, cgroups, log links, the node's namespace and the sysctls.
teardown_host() {
  local m
  if [[ -d "$DIR" ]]; then
    for m in $(mounts_under "$DIR"); do umount "$m" 2>/dev/null || umount -l "$m" 2>/dev/null || true; done
  fi
  # Pod network namespaces that this cluster's containerd made (it names them cni-*).
  if [[ -s "$CACHE/netns.before$SITE" || -d /run/netns ]]; then
    for m in /run/netns/cni-*; do
      [[ -e "$m" ]] || continue
      grep -qxF "$m" "$CACHE/netns.before$SITE" 2>/dev/null && continue
      umount "$m" 2>/dev/null || umount -l "$m" 2>/dev/null || true
      rm -f "$m"
    done
  fi
  rm -f "$CACHE/netns.before$SITE"
  local c
  local root="${CGROUP_ROOT#/}"
  for c in /sys/fs/cgroup/*/${root:+$root/}kubepods /sys/fs/cgroup/*/${root:+$root/}kubepods.slice /sys/fs/cgroup/unified/${root:+$root/}kubepods; do
    [[ -d "$c" ]] || continue
    find "$c" -depth -type d -exec rmdir {} + 2>/dev/null || true
  done
  if [[ -n "$root" ]]; then
    for c in /sys/fs/cgroup/*/"$root" /sys/fs/cgroup/unified/"$root"; do
      [[ -d "$c" ]] && find "$c" -depth -type d -exec rmdir {} + 2>/dev/null || true
    done
  fi
  if [[ -d /var/log/containers ]]; then
    find /var/log/containers -maxdepth 1 -type l -lname "$DIR/*" -delete 2>/dev/null || true
  fi
  if [[ -e "/run/netns/$NETNS" ]]; then
    ip netns del "$NETNS" 2>/dev/null || true
  fi
  # The e2e suite's bare remote agent (test/e2e/remote_test.go), when a run
  # died before removing its namespace and /etc/netns files.
  if [[ -e /run/netns/uptime-bare ]]; then
    ip netns pids uptime-bare 2>/dev/null | xargs -r kill -TERM 2>/dev/null || true
    ip netns del uptime-bare 2>/dev/null || true
  fi
  rm -rf /etc/netns/uptime-bare
  # A site leaves the kernel sysctls to the first cluster, whose kubelet set
  # them the same way.
  [[ -z "$SITE" ]] && sysctl_restore
  return 0
}

# ------------------------------------------------------------------ status --

status() {
  local c ok=0
  for c in "${COMPONENTS[@]}"; do
    if alive "$c"; then echo "$c: running (pid $(cat "$DIR/pids/$c"))"; else echo "$c: stopped"; ok=1; fi
  done
  if [[ $ok -eq 0 ]]; then
    ASSETS="${ASSETS:-$("$ROOT/hack/envtest-binaries.sh" | tail -n1)}"
    kubectl_ get nodes -o wide || ok=1
  fi
  return $ok
}

up() {
  [[ $EUID -eq 0 ]] || die "needs root (network namespace, containerd, kubelet)"
  need_packages
  binaries
  images
  if [[ -d "$DIR/pids" ]] && status >/dev/null 2>&1; then
    say "already running"
    echo "$DIR/admin.kubeconfig"
    return 0
  fi
  # A half-started or stale cluster: start from scratch.
  if [[ -d "$DIR" ]]; then down >/dev/null 2>&1 || true; fi
  local t0=$SECONDS
  mkdir -p "$DIR" "$CACHE"
  ls -d /run/netns/cni-* 2>/dev/null > "$CACHE/netns.before$SITE" || true
  [[ -z "$SITE" ]] && sysctl_save
  network
  pki
  containerd_up
  load "$CACHE/images/pause.tar"
  load "$CACHE/images/coredns-${COREDNS_VERSION}.tar"
  control_plane_up
  node_up
  wait_for "node $NODE_NAME" 90 kubectl_ wait --for=condition=Ready "node/$NODE_NAME" --timeout=1s
  addons
  wait_for coredns 120 kubectl_ -n kube-system rollout status deploy/coredns --timeout=1s
  say "up in $((SECONDS - t0))s; kubeconfig $DIR/admin.kubeconfig (use it through: hack/cluster.sh exec kubectl …)"
  echo "$DIR/admin.kubeconfig"
}

cmd="${1:-}"
shift || true
case "$cmd" in
  up) up ;;
  down) down ;;
  status)
    [[ -d "$DIR/pids" ]] || { echo "not running"; exit 1; }
    status ;;
  load)
    [[ $# -ge 1 ]] || die "usage: hack/cluster.sh load IMAGE.tar…"
    for t in "$@"; do load "$t"; done ;;
  exec)
    ASSETS="$("$ROOT/hack/envtest-binaries.sh" | tail -n1)"
    export KUBECONFIG="$DIR/admin.kubeconfig" PATH="$ASSETS:$CACHE/bin/k8s-1.37.2:$PATH"
    in_ns "$@" ;;
  env)
    ASSETS="$("$ROOT/hack/envtest-binaries.sh" | tail -n1)"
    echo "export KUBECONFIG=$DIR/admin.kubeconfig PATH=$ASSETS:$CACHE/bin/k8s-1.37.2:\$PATH UPTIME_CLUSTER_NETNS=$NETNS" ;;
  *) die "usage: hack/cluster.sh up|down|status|load TAR…|exec CMD…|env" ;;
esac
