# shellcheck shell=bash
# Starting osm-apiserver against the local cluster and registering its APIService.
# Sourced by hack/local-cluster.sh (uses its kc, load_env, save_env and the procs helpers).

# apply_rbac applies the RBAC objects of artifacts/deploy (one object per file), and the
# admission policy that scopes them, so that osm-apiserver runs with exactly the
# permissions a real deployment grants it. It prints
# the kubeconfig osm-apiserver should use: its ServiceAccount identity when the RBAC is
# there, the admin's otherwise.
apply_rbac() {
  local f kind files=()
  for f in "$REPO"/artifacts/deploy/*.yaml; do
    [ -f "$f" ] || continue
    kind=$(awk '/^kind:/ { print $2; exit }' "$f")
    case "$kind" in
      Namespace | ServiceAccount | ClusterRole | ClusterRoleBinding | Role | RoleBinding | ValidatingAdmissionPolicy | ValidatingAdmissionPolicyBinding) files+=(-f "$f") ;;
    esac
  done
  if [ ${#files[@]} -eq 0 ]; then
    log "warning: no RBAC in artifacts/deploy; osm-apiserver runs as cluster admin"
    echo "$KUBECONFIG_ADMIN"
    return 0
  fi
  kc apply --server-side "${files[@]}" >/dev/null
  write_kubeconfig "$DIR/osm-apiserver.kubeconfig" osm-apiserver-client
  echo "$DIR/osm-apiserver.kubeconfig"
}

# register_apiservice points the APIService at osm-apiserver on the host: kube-apiserver
# resolves an ExternalName Service to localhost:port and checks the serving cert for
# osm-apiserver.kube-system.svc against caBundle.
register_apiservice() {
  kc apply --server-side --force-conflicts -f - >/dev/null <<YAML
apiVersion: v1
kind: Service
metadata:
  name: osm-apiserver
  namespace: kube-system
spec:
  type: ExternalName
  externalName: localhost
  ports:
  - name: https
    port: $OSM_PORT
    protocol: TCP
---
apiVersion: apiregistration.k8s.io/v1
kind: APIService
metadata:
  name: $APISERVICE
spec:
  group: osm.k8c.io
  version: v1alpha1
  groupPriorityMinimum: 1000
  versionPriority: 15
  service:
    name: osm-apiserver
    namespace: kube-system
    port: $OSM_PORT
  caBundle: $(base64 -w0 <"$PKI/osm-ca.crt")
YAML
}

start_osm() {
  # A restart keeps the port, so the registered APIService stays valid.
  if [ -z "${OSM_PORT:-}" ] || grep -q 'address already in use' "$RUN/osm-apiserver.log" 2>/dev/null; then
    OSM_PORT=$(free_port)
  fi
  save_env
  log "starting osm-apiserver on https://127.0.0.1:$OSM_PORT (~3 s)"
  # shellcheck disable=SC2086 # OSM_APISERVER_ARGS is a list of flags
  start_proc osm-apiserver "$OSM_BIN" serve \
    --bind-address 127.0.0.1 --secure-port "$OSM_PORT" \
    --tls-cert-file "$PKI/osm-apiserver.crt" --tls-private-key-file "$PKI/osm-apiserver.key" \
    --kubeconfig "$OSM_KUBECONFIG" \
    --authentication-kubeconfig "$OSM_KUBECONFIG" --authorization-kubeconfig "$OSM_KUBECONFIG" \
    ${OSM_APISERVER_ARGS:-}
  wait_for osm-apiserver 90 curl -fsS --cacert "$PKI/osm-ca.crt" "https://127.0.0.1:$OSM_PORT/readyz"
}

cmd_osm() {
  load_env
  local bin="${OSM_APISERVER_BIN:-$REPO/bin/osm-apiserver}"
  [ -x "$bin" ] || die "$bin is missing (run: make build)"
  local t
  t=$(date +%s.%N)
  stop_proc osm-apiserver
  local kubeconfig
  kubeconfig=$(apply_rbac)
  OSM_BIN=$bin OSM_KUBECONFIG=$kubeconfig start_listener osm-apiserver start_osm
  log "osm-apiserver ready in $(elapsed "$t")s; registering APIService $APISERVICE"
  register_apiservice
  if ! kc wait --for condition=Available --timeout 60s "apiservice/$APISERVICE" >/dev/null; then
    kc get apiservice "$APISERVICE" -o jsonpath='{.status.conditions}' >&2 || true
    echo >&2
    tail -n 30 "$RUN/osm-apiserver.log" >&2 || true
    die "APIService $APISERVICE is not Available (logs: $RUN)"
  fi
  # kube-apiserver publishes the group's OpenAPI (kubectl explain) a moment later.
  wait_for osm-apiserver 60 openapi_published
  log "APIService $APISERVICE Available, OpenAPI published, after $(elapsed "$t")s"
}

openapi_published() {
  local paths
  paths=$(kc get --raw /openapi/v3) && [[ "$paths" == *'"apis/osm.k8c.io/v1alpha1"'* ]]
}
