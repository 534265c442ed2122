#!/usr/bin/env bash
# A real local cluster on 127.0.0.1: etcd, kube-apiserver with the aggregation layer,
# the OSP and MachineDeployment CRDs, and osm-apiserver registered as an APIService.
# Used by `make demo` and by test/e2e.
#
#   OSM_CLUSTER_DIR=DIR hack/local-cluster.sh up       cluster, then osm (~15 s once the binaries are built)
#   OSM_CLUSTER_DIR=DIR hack/local-cluster.sh cluster  certs, etcd, kube-apiserver, CRDs
#   OSM_CLUSTER_DIR=DIR hack/local-cluster.sh osm      (re)start osm-apiserver, register the APIService
#   OSM_CLUSTER_DIR=DIR hack/local-cluster.sh down     stop what this dir started, remove DIR
#   OSM_CLUSTER_DIR=DIR hack/local-cluster.sh status
#
# Environment:
#   OSM_CLUSTER_DIR        state dir (required): certs, data, logs, pid files, kubeconfig, env
#   OSM_APISERVER_BIN      osm-apiserver binary (default: bin/osm-apiserver)
#   OSM_APISERVER_ARGS     extra flags for osm-apiserver, split on whitespace
#   OSM_OSP_CRD            OSP CRD file (default: artifacts/crd/...operatingsystemprofiles.yaml);
#                          "none" installs none (test/image installs artifacts/deploy, which has it)
#   OSM_OVERLAY_CRD        overlay CRD file (default: artifacts/crd/...operatingsystemprofileoverlays.yaml);
#                          "none" as OSM_OSP_CRD
#   OSM_MD_CRD             MachineDeployment, MachineSet and Machine CRD file (default: hack/testdata/machinedeployment-crd.yaml)
#   OSM_CLUSTER_WATCH_PID  if set, a watchdog runs `down` once this pid is gone (tests use it
#                          so a killed test binary leaves no processes behind)
#   OSM_KUBE_APISERVER_SANS extra subjectAltNames of kube-apiserver's serving cert, openssl
#                          syntax (e.g. "IP:10.0.2.100"): addresses nodes dial (test/node)
#   OSM_CLUSTER_INFO_SERVER the API server URL in kube-public/cluster-info, which nodes are
#                          told to dial (default: https://127.0.0.1:<port>)
#   OSM_KUBE_APISERVER_ARGS extra flags for kube-apiserver, split on whitespace (test/node
#                          adds its --egress-selector-config-file)
#   OSM_CONTROLLER_MANAGER  1: also run kube-controller-manager (CSR signing and approving,
#                          bootstrap tokens, ServiceAccounts, namespaces, garbage collector)
#                          and the RBAC of kubelet TLS bootstrap (hack/lib/controller-manager.sh)
#
# osm-apiserver authenticates as its ServiceAccount would (a client cert for
# system:serviceaccount:kube-system:osm-apiserver) with the RBAC of artifacts/deploy,
# so it runs with exactly the permissions a real deployment grants.
# Ports are picked free at random, so several clusters (a demo and a test run) coexist.
# $OSM_CLUSTER_DIR/env records them; source it for KUBECONFIG and KUBECTL.
set -euo pipefail

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# shellcheck source=hack/lib/procs.sh
. "$REPO/hack/lib/procs.sh"
# shellcheck source=hack/lib/certs.sh
. "$REPO/hack/lib/certs.sh"
# shellcheck source=hack/lib/controller-manager.sh
. "$REPO/hack/lib/controller-manager.sh"

[ -n "${OSM_CLUSTER_DIR:-}" ] || die "set OSM_CLUSTER_DIR to the state directory"
mkdir -p "$OSM_CLUSTER_DIR"
DIR="$(cd "$OSM_CLUSTER_DIR" && pwd)"
PKI="$DIR/pki"
RUN="$DIR/run"
KUBECONFIG_ADMIN="$DIR/kubeconfig"
APISERVICE=v1alpha1.osm.k8c.io
# kubectl caches discovery per host:port; random ports would litter ~/.kube/cache.
export KUBECACHEDIR="$DIR/kube-cache"

kc() { "$BIN_DIR/kubectl" --kubeconfig "$KUBECONFIG_ADMIN" "$@"; }

# binaries sets BIN_DIR, building what this cluster runs when it is not built yet.
binaries() {
  local want=(kube-apiserver kubectl etcd)
  if [ "${OSM_CONTROLLER_MANAGER:-}" = 1 ]; then want+=(kube-controller-manager); fi
  BIN_DIR="$("$REPO/hack/build-cluster-binaries.sh" "${want[@]}")"
}

# write_kubeconfig FILE CERT: a kubeconfig for kube-apiserver with client cert CERT.
write_kubeconfig() {
  local file=$1 cert=$2
  local k=("$BIN_DIR/kubectl" --kubeconfig "$file")
  "${k[@]}" config set-cluster local --server "https://127.0.0.1:$KUBE_PORT" \
    --certificate-authority "$PKI/ca.crt" --embed-certs >/dev/null
  "${k[@]}" config set-credentials user --client-certificate "$PKI/$cert.crt" \
    --client-key "$PKI/$cert.key" --embed-certs >/dev/null
  "${k[@]}" config set-context local --cluster local --user user >/dev/null
  "${k[@]}" config use-context local >/dev/null
}

start_etcd() {
  local t
  t=$(date +%s.%N)
  ETCD_PORT=$(free_port)
  local peer
  peer=$(free_port)
  log "starting etcd on 127.0.0.1:$ETCD_PORT (~1 s)"
  start_proc etcd "$BIN_DIR/etcd" --name local --data-dir "$DIR/etcd-data" \
    --listen-client-urls "http://127.0.0.1:$ETCD_PORT" --advertise-client-urls "http://127.0.0.1:$ETCD_PORT" \
    --listen-peer-urls "http://127.0.0.1:$peer" --initial-advertise-peer-urls "http://127.0.0.1:$peer" \
    --initial-cluster "local=http://127.0.0.1:$peer" --unsafe-no-fsync --log-level warn
  wait_for etcd 30 curl -fsS "http://127.0.0.1:$ETCD_PORT/health" || return
  log "etcd ready in $(elapsed "$t")s"
}

# write_authentication_config writes kube-apiserver's authentication
# configuration: anonymous requests only for its health endpoints, so a
# request without a credential is 401 everywhere else (as on clusters that
# turn anonymous access off), not the 403 of system:anonymous.
write_authentication_config() {
  cat >"$DIR/authentication-config.yaml" <<'YAML'
apiVersion: apiserver.config.k8s.io/v1
kind: AuthenticationConfiguration
anonymous:
  enabled: true
  conditions:
  - path: /livez
  - path: /readyz
  - path: /healthz
YAML
}

start_kube_apiserver() {
  local t
  t=$(date +%s.%N)
  KUBE_PORT=$(free_port)
  write_authentication_config
  log "starting kube-apiserver on https://127.0.0.1:$KUBE_PORT (~5 s)"
  # As kubeadm runs it towards kubelets: a client cert of the cluster CA (bound to
  # system:kubelet-api-admin by hack/testdata/kubelet-bootstrap-rbac.yaml), kubelet
  # serving certs verified against the CA kube-controller-manager signs them with,
  # nodes dialled at their InternalIP first.
  # shellcheck disable=SC2086 # OSM_KUBE_APISERVER_ARGS is a list of flags
  start_proc kube-apiserver "$BIN_DIR/kube-apiserver" \
    --etcd-servers "http://127.0.0.1:$ETCD_PORT" \
    --bind-address 127.0.0.1 --advertise-address 127.0.0.1 --secure-port "$KUBE_PORT" \
    --endpoint-reconciler-type none \
    --tls-cert-file "$PKI/kube-apiserver.crt" --tls-private-key-file "$PKI/kube-apiserver.key" \
    --client-ca-file "$PKI/ca.crt" --authentication-config "$DIR/authentication-config.yaml" \
    --authorization-mode Node,RBAC --enable-bootstrap-token-auth \
    --service-account-issuer https://kubernetes.default.svc.cluster.local \
    --service-account-key-file "$PKI/sa.pub" --service-account-signing-key-file "$PKI/sa.key" \
    --service-cluster-ip-range 10.96.0.0/16 \
    --requestheader-client-ca-file "$PKI/front-proxy-ca.crt" \
    --requestheader-allowed-names front-proxy-client \
    --requestheader-username-headers X-Remote-User \
    --requestheader-group-headers X-Remote-Group \
    --requestheader-extra-headers-prefix X-Remote-Extra- \
    --proxy-client-cert-file "$PKI/front-proxy-client.crt" \
    --proxy-client-key-file "$PKI/front-proxy-client.key" \
    --kubelet-client-certificate "$PKI/kube-apiserver-kubelet-client.crt" \
    --kubelet-client-key "$PKI/kube-apiserver-kubelet-client.key" \
    --kubelet-certificate-authority "$PKI/ca.crt" \
    --kubelet-preferred-address-types InternalIP,ExternalIP,Hostname \
    ${OSM_KUBE_APISERVER_ARGS:-}
  write_kubeconfig "$KUBECONFIG_ADMIN" admin
  wait_for kube-apiserver 90 kc get --raw /readyz || return
  log "kube-apiserver ready in $(elapsed "$t")s"
}

# osp_crd prints the OSP CRD file to install, nothing for "none".
osp_crd() {
  local crd="${OSM_OSP_CRD:-$REPO/artifacts/crd/operatingsystemmanager.k8c.io_operatingsystemprofiles.yaml}"
  [ "$crd" = none ] && return
  [ -f "$crd" ] || die "no OSP CRD: $crd is missing"
  echo "$crd"
}

# overlay_crd prints the OperatingSystemProfileOverlay CRD file to install,
# nothing for "none".
overlay_crd() {
  local crd="${OSM_OVERLAY_CRD:-$REPO/artifacts/crd/overlays.osm.k8c.io_operatingsystemprofileoverlays.yaml}"
  [ "$crd" = none ] && return
  [ -f "$crd" ] || die "no overlay CRD: $crd is missing"
  echo "$crd"
}

# bootstrap installs what osm-apiserver reads: CRDs, the cluster-info ConfigMap that
# nodes discover the API server from, and the namespace of the Secrets it writes.
bootstrap() {
  local t
  t=$(date +%s.%N)
  log "installing CRDs, cluster-info and namespaces (~3 s)"
  local files=() crds=(crd/machinedeployments.cluster.k8s.io crd/machinesets.cluster.k8s.io crd/machines.cluster.k8s.io) f
  f=$(osp_crd) || return
  if [ -n "$f" ]; then files+=(-f "$f") crds+=(crd/operatingsystemprofiles.operatingsystemmanager.k8c.io); fi
  f=$(overlay_crd) || return
  if [ -n "$f" ]; then files+=(-f "$f") crds+=(crd/operatingsystemprofileoverlays.overlays.osm.k8c.io); fi
  kc apply --server-side "${files[@]}" -f "${OSM_MD_CRD:-$REPO/hack/testdata/machinedeployment-crd.yaml}" >/dev/null
  kc wait --for condition=Established --timeout 60s "${crds[@]}" >/dev/null
  # kube-apiserver creates kube-public and kube-system shortly after /readyz.
  for _ in $(seq 1 100); do kc get namespace kube-public >/dev/null 2>&1 && break; sleep 0.2; done
  local info="$DIR/cluster-info.kubeconfig"
  # Shaped as kubeadm writes it: one cluster with an empty name, no credentials.
  cat >"$info" <<KUBECONFIG
apiVersion: v1
kind: Config
clusters:
- name: ""
  cluster:
    server: ${OSM_CLUSTER_INFO_SERVER:-https://127.0.0.1:$KUBE_PORT}
    certificate-authority-data: $(base64 -w0 <"$PKI/ca.crt")
contexts: null
current-context: ""
preferences: {}
users: null
KUBECONFIG
  kc -n kube-public create configmap cluster-info --from-file kubeconfig="$info" \
    --dry-run=client -o yaml | kc apply --server-side -f - >/dev/null
  kc create namespace cloud-init-settings --dry-run=client -o yaml | kc apply --server-side -f - >/dev/null
  log "bootstrap done in $(elapsed "$t")s"
}

save_env() {
  cat >"$DIR/env" <<ENV
# written by hack/local-cluster.sh; source it
export KUBECONFIG="$KUBECONFIG_ADMIN"
export KUBECTL="$BIN_DIR/kubectl"
BIN_DIR="$BIN_DIR"
ETCD_PORT=$ETCD_PORT
KUBE_PORT=$KUBE_PORT
OSM_PORT=${OSM_PORT:-}
ENV
}

load_env() {
  [ -f "$DIR/env" ] || die "no cluster in $DIR (run: hack/local-cluster.sh up)"
  # shellcheck disable=SC1091
  . "$DIR/env"
}

cmd_cluster() {
  binaries
  mkdir -p "$RUN"
  alive kube-apiserver && die "a cluster already runs in $DIR"
  local t
  t=$(date +%s.%N)
  log "creating CA, serving and client certificates in $PKI"
  make_pki
  log "certificates made in $(elapsed "$t")s"
  start_listener etcd start_etcd
  start_listener kube-apiserver start_kube_apiserver
  OSM_PORT=""
  save_env
  bootstrap
  if [ "${OSM_CONTROLLER_MANAGER:-}" = 1 ]; then controller_manager; fi
  if [ -n "${OSM_CLUSTER_WATCH_PID:-}" ]; then
    start_proc watchdog bash "$REPO/hack/local-cluster.sh" _watchdog "$OSM_CLUSTER_WATCH_PID"
  fi
  log "cluster up in $(elapsed "$t")s"
}

# shellcheck source=hack/lib/osm.sh
. "$REPO/hack/lib/osm.sh"

cmd_down() {
  [ -d "$RUN" ] || { rm -rf "$DIR"; return 0; }
  log "stopping the processes started from $DIR"
  # The watchdog calls down itself; it must not stop itself half-way.
  [ -n "${OSM_IN_WATCHDOG:-}" ] || stop_proc watchdog
  stop_proc osm-apiserver kube-controller-manager kube-apiserver
  # Its data goes away with the state dir, so a graceful stop (~2 s) buys nothing.
  kill_proc etcd
  rm -rf "$DIR"
}

cmd_status() {
  load_env
  local p
  for p in etcd kube-apiserver kube-controller-manager osm-apiserver watchdog; do
    if alive "$p"; then echo "$p: running (pid $(cat "$RUN/$p.pid"))"; else echo "$p: stopped"; fi
  done
  echo "kubeconfig: $KUBECONFIG_ADMIN"
}

cmd_watchdog() {
  local pid=$1
  while kill -0 "$pid" 2>/dev/null; do sleep 1; done
  OSM_IN_WATCHDOG=1 cmd_down
}

case "${1:-}" in
  up) cmd_cluster; cmd_osm ;;
  cluster) cmd_cluster ;;
  osm) cmd_osm ;;
  down) cmd_down ;;
  status) cmd_status ;;
  _watchdog) cmd_watchdog "$2" ;;
  *) die "usage: OSM_CLUSTER_DIR=DIR $0 up|cluster|osm|down|status" ;;
esac
