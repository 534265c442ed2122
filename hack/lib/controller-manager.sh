# shellcheck shell=bash
# kube-controller-manager for the local cluster (OSM_CONTROLLER_MANAGER=1): the
# controllers a real cluster runs that nodes and clean-ups depend on. Sourced by
# hack/local-cluster.sh (uses its kc, write_kubeconfig and the procs helpers).
#
# Controllers: CSR signing with the cluster CA, CSR approving and cleaning (kubelet
# TLS bootstrap), bootstrap-token signer and cleaner, ServiceAccounts and their
# tokens, kube-root-ca.crt publishing (pods mount it), namespace deletion and the
# garbage collector (foreground deletion, owner references).
KCM_CONTROLLERS=csrsigning,csrapproving,csrcleaner,bootstrapsigner,tokencleaner,serviceaccount,serviceaccount-token,root-ca-cert-publisher,namespace,garbagecollector

start_kube_controller_manager() {
  local t
  t=$(date +%s.%N)
  KCM_PORT=$(free_port)
  log "starting kube-controller-manager on https://127.0.0.1:$KCM_PORT (~1 s)"
  # As kubeadm runs it: its own identity, one ServiceAccount per controller.
  start_proc kube-controller-manager "$BIN_DIR/kube-controller-manager" \
    --kubeconfig "$DIR/kube-controller-manager.kubeconfig" \
    --authentication-kubeconfig "$DIR/kube-controller-manager.kubeconfig" \
    --authorization-kubeconfig "$DIR/kube-controller-manager.kubeconfig" \
    --bind-address 127.0.0.1 --secure-port "$KCM_PORT" \
    --controllers "$KCM_CONTROLLERS" --leader-elect=false \
    --use-service-account-credentials \
    --cluster-signing-cert-file "$PKI/ca.crt" --cluster-signing-key-file "$PKI/ca.key" \
    --root-ca-file "$PKI/ca.crt" --service-account-private-key-file "$PKI/sa.key" \
    --client-ca-file "$PKI/ca.crt" --requestheader-client-ca-file "$PKI/front-proxy-ca.crt"
  wait_for kube-controller-manager 90 curl -fsSk "https://127.0.0.1:$KCM_PORT/healthz" || return
  log "kube-controller-manager ready in $(elapsed "$t")s"
}

# controller_manager writes its credentials, starts it and applies the RBAC of
# kubelet TLS bootstrap (hack/testdata/kubelet-bootstrap-rbac.yaml).
controller_manager() {
  new_cert ca kube-controller-manager "/CN=system:kube-controller-manager" clientAuth
  write_kubeconfig "$DIR/kube-controller-manager.kubeconfig" kube-controller-manager
  kc apply --server-side -f "$REPO/hack/testdata/kubelet-bootstrap-rbac.yaml" >/dev/null
  start_listener kube-controller-manager start_kube_controller_manager
}
