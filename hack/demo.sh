#!/usr/bin/env bash
# `make demo` / `make demo-down`: osm-apiserver on a local cluster in .demo/, with the
# default OperatingSystemProfiles and a few sample MachineDeployments.
#
#   hack/demo.sh up     start everything in the background; the first run also builds
#                       kube-apiserver, kubectl and etcd, nothing else (times: docs/benchmarks.md,
#                       "First run")
#   hack/demo.sh down   stop everything it started and remove .demo/
set -euo pipefail

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
export OSM_CLUSTER_DIR="$REPO/.demo"
SAMPLES="$REPO/hack/testdata/demo"

say() { echo "[demo] $*" >&2; }

# default_osps prints the default OSP files of the repo.
default_osps() {
  local f
  for f in "$REPO"/artifacts/default-osps/*.yaml; do
    [ -f "$f" ] && echo "$f"
  done
  return 0
}

up() {
  local status=""
  [ -f "$OSM_CLUSTER_DIR/env" ] && status=$("$REPO/hack/local-cluster.sh" status 2>/dev/null || true)
  if [[ "$status" == *"kube-apiserver: running"* ]]; then
    say "the cluster already runs; restarting osm-apiserver with the binary just built"
    "$REPO/hack/local-cluster.sh" osm
  else
    # The demo runs these three; the first run builds them (it says how long that takes).
    "$REPO/hack/build-cluster-binaries.sh" kube-apiserver kubectl etcd >/dev/null
    "$REPO/hack/local-cluster.sh" up || {
      say "failed; logs are in $OSM_CLUSTER_DIR/run/ (make demo-down cleans up)"
      exit 1
    }
  fi
  # shellcheck disable=SC1091
  . "$OSM_CLUSTER_DIR/env"
  local kc=("$KUBECTL" --kubeconfig "$KUBECONFIG")
  # The kubectl the cluster was built with, for users who have none on their PATH.
  mkdir -p "$OSM_CLUSTER_DIR/bin"
  ln -sf "$KUBECTL" "$OSM_CLUSTER_DIR/bin/kubectl"

  # osm-apiserver installs the default OSPs itself (the ones in artifacts/default-osps);
  # the files are the fallback should it not have done so within 30 s.
  local osps f args=() deadline
  mapfile -t osps < <(default_osps)
  say "waiting for osm-apiserver to install the ${#osps[@]} default OperatingSystemProfiles"
  deadline=$(( $(date +%s) + 30 ))
  until [ "$("${kc[@]}" get osp -n kube-system --no-headers 2>/dev/null | grep -c '^osp-')" -ge "${#osps[@]}" ]; do
    if [ "$(date +%s)" -ge "$deadline" ]; then
      say "not installed after 30 s; applying artifacts/default-osps"
      for f in "${osps[@]}"; do args+=(-f "$f"); done
      "${kc[@]}" apply --server-side "${args[@]}" >/dev/null
      break
    fi
    sleep 0.5
  done
  say "creating sample MachineDeployments from hack/testdata/demo"
  "${kc[@]}" apply --server-side -f "$SAMPLES" >/dev/null

  # Each new MD renders once the syncer has created its tokens (a second or two).
  local want deadline rows
  want=$(find "$SAMPLES" -name '*.yaml' | wc -l)
  deadline=$(( $(date +%s) + 60 ))
  while :; do
    rows=$("${kc[@]}" get osc -A --no-headers 2>/dev/null || true)
    if [ "$(grep -c . <<<"$rows")" -ge "$want" ] && ! grep -q 'Error' <<<"$rows"; then break; fi
    if [ "$(date +%s)" -ge "$deadline" ]; then
      say "not all $want OperatingSystemConfigs rendered after 60 s; osm-apiserver log: $OSM_CLUSTER_DIR/run/osm-apiserver.log"
      break
    fi
    sleep 0.5
  done

  echo
  echo "\$ kubectl get osc -A"
  "${kc[@]}" get osc -A
  cat <<USAGE

The demo cluster runs in the background (etcd, kube-apiserver, osm-apiserver; logs in .demo/run/).
Use it with:

  export KUBECONFIG=$KUBECONFIG
  export PATH=$OSM_CLUSTER_DIR/bin:\$PATH           # the demo cluster's kubectl, if you have none
  kubectl get osc -A                                      # one OperatingSystemConfig per MachineDeployment
  kubectl get osc -n kube-system ubuntu-aws -o yaml       # the rendered files and units (tokens redacted)
  kubectl get provisioningpayloads -A                     # bootstrap and provisioning user-data, sizes, limits
  kubectl get --raw /apis/osm.k8c.io/v1alpha1/namespaces/kube-system/provisioningpayloads/ubuntu-aws-bootstrap
  kubectl explain osc.spec
  kubectl get osc -A -w                                   # then edit an MD or an OSP in another shell

Stop it with: make demo-down
USAGE
}

case "${1:-}" in
  up) up ;;
  down) "$REPO/hack/local-cluster.sh" down ;;
  *) echo "usage: $0 up|down" >&2; exit 2 ;;
esac
