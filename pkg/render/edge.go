package render

import (
	"encoding/base64"
	"fmt"
	"strings"

	"github.com/osm-apiserver/osm-apiserver/pkg/apis/osm"
	"github.com/osm-apiserver/osm-apiserver/pkg/machinecontroller"
)

// Machines of an MD on cloud provider edge are provisioned by nobody:
// machine-controller creates no VM and passes no user-data. An operator runs
// the MD's join script on the machine instead, which applies the MD's
// bootstrap payload with cloud-init, the way a cloud would. It needs nothing a
// stock cloud image lacks (bash, curl, base64, sed, flock, cloud-init) and does
// nothing when run again.
//
// With a profile that joins through a MachineJoin (join.go), the script
// carries the bootstrap payload and names the Machine it joins as
// (OSM_MACHINE_NAME): it puts that name where machine-controller would put it,
// and the bootstrap exchanges its credential for that machine's, once. With
// any other profile it fetches the bootstrap payload from the API server over
// TLS verified against the cluster CA it carries, with the MD's own fetch
// credential (so a copy keeps working when the payload is rendered again,
// until that credential expires).

// edgeScript returns the join script of an edge MD: c holds the API server
// and the fetch token; bootstrap is the bootstrap payload to carry, nil to
// fetch it.
func edgeScript(c *ClusterInfo, mdNamespace, mdName string, bootstrap []byte) Payload {
	ca := c.KubernetesCACert
	if ca == "" {
		ca = c.CACert
	}
	var b strings.Builder
	b.Grow(4096 + len(ca) + len(bootstrap)*4/3)
	if bootstrap != nil {
		fmt.Fprintf(&b, edgeJoinHead, mdNamespace, mdName, mdNamespace)
	} else {
		fmt.Fprintf(&b, edgeFetchHead, mdNamespace, mdName)
	}
	fmt.Fprintf(&b, "ca=$(cat <<'OSM_CA'\n%s\nOSM_CA\n)\n", strings.TrimRight(ca, "\n"))
	if bootstrap != nil {
		fmt.Fprintf(&b, "bootstrap=$(cat <<'OSM_BOOTSTRAP'\n%s\nOSM_BOOTSTRAP\n)\n", base64.StdEncoding.EncodeToString(bootstrap))
	} else {
		url := c.ServerURL + "/api/v1/namespaces/" + machinecontroller.CloudInitSettingsNamespace + "/secrets/" +
			machinecontroller.SecretName(mdName, mdNamespace, osm.PayloadTypeBootstrap)
		fmt.Fprintf(&b, "url=%s\ntoken=%s\n", shellQuote(url), shellQuote(c.CloudInitGetterToken))
	}
	b.WriteString(edgeScriptStart)
	if bootstrap != nil {
		b.WriteString(edgeScriptCarried)
	} else {
		b.WriteString(edgeScriptFetch)
	}
	b.WriteString(edgeScriptApply)
	return Payload{Format: osm.PayloadFormatShell, UserData: []byte(b.String())}
}

// shellQuote quotes s for bash in single quotes, closing and reopening them
// around each single quote s holds.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

const edgeJoinHead = `#!/bin/bash
# Joins this machine to the cluster as a Machine of MachineDeployment %s/%s
# (cloud provider edge). Pick a Machine of the MachineDeployment that has no node
# yet (kubectl -n %s get machines) and run this as root on the machine:
#
#   sudo OSM_MACHINE_NAME=<machine> bash fetch-bootstrap-script
#
# (OSM_NODE_NAME works too; without either, this host's name is the machine's.)
# It applies the MachineDeployment's bootstrap configuration with cloud-init under
# that name; the bootstrap then asks the API server, over TLS verified against the
# cluster CA, for the join credentials of that Machine: they are handed out once,
# for one machine that has not joined. Running it again does nothing once the
# machine has bootstrapped.
set -euo pipefail
`

const edgeFetchHead = `#!/bin/bash
# Joins this machine to the cluster as a node of MachineDeployment %s/%s
# (cloud provider edge). Run it as root on the machine:
#
#   sudo bash fetch-bootstrap-script                  # the node is named after this host
#   sudo OSM_NODE_NAME=edge-7 bash fetch-bootstrap-script
#
# It fetches the MachineDeployment's bootstrap configuration from the API server
# over TLS verified against the cluster CA below, with the MachineDeployment's own
# credential (it can read nothing else), and applies it with cloud-init. Running it
# again does nothing once the machine has bootstrapped.
set -euo pipefail
`

const edgeScriptStart = `
log() { echo "osm-edge-join: $*" >&2; }
[ "$(id -u)" -eq 0 ] || { log "run me as root"; exit 1; }
for tool in curl base64 sed flock cloud-init; do
  command -v "$tool" >/dev/null || { log "$tool is missing"; exit 1; }
done
state=/var/lib/osm
mkdir -p "$state"
exec 9>"$state/edge-join.lock"
flock -n 9 || { log "another run is in progress"; exit 1; }
if [ -e "$state/bootstrap.done" ] || [ -e "$state/edge-join.done" ]; then
  log "this machine has joined already; nothing to do"
  exit 0
fi
# The node's name: the bootstrap configuration names it after the MachineDeployment,
# one name for every machine; this machine's own name tells them apart.
name=$(printf '%s' "${OSM_MACHINE_NAME:-${OSM_NODE_NAME:-$(hostname)}}" | tr '[:upper:]' '[:lower:]')
[[ $name =~ ^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$ ]] || { log "'$name' is no valid node name"; exit 1; }
install -d -m 0755 /etc/kubernetes/pki
printf '%s\n' "$ca" >/etc/kubernetes/pki/ca.crt
cfg=/etc/cloud/cloud.cfg.d/90-osm-edge-bootstrap.cfg
umask 077
`

const edgeScriptCarried = `# As machine-controller does for the machines it creates: the machine's name in
# place of the placeholder.
printf '%s' "$bootstrap" | base64 -d | sed -e "s/<MACHINE_NAME>/$name/g" -e "s/%3CMACHINE_NAME%3E/$name/g" >"$cfg.new"
`

const edgeScriptFetch = `fetch() {
  local body
  body=$(curl -fsS --connect-timeout 10 --max-time 60 --cacert /etc/kubernetes/pki/ca.crt \
    -H "Authorization: Bearer $token" "$url") || return 1
  printf '%s' "$body" | tr -d ' \n' | sed -n 's/.*"cloud-config":"\([^"]*\)".*/\1/p' | base64 -d >"$cfg.new" || return 1
  [ -s "$cfg.new" ]
}
for attempt in $(seq 1 30); do
  fetch && break
  [ "$attempt" -eq 30 ] && { log "could not fetch the bootstrap configuration from $url"; exit 1; }
  log "bootstrap configuration not available yet, retrying in 10s"
  sleep 10
done
`

const edgeScriptApply = `mv "$cfg.new" "$cfg"
umask 022
sed -i -e '/^hostname:/d' "$cfg"
# Apply it as a cloud would on first boot, keeping this machine's network and SSH
# host keys; cloud-init needs no datasource for it.
rerun=/etc/cloud/cloud.cfg.d/91-osm-edge-rerun.cfg
printf 'network: {config: disabled}\nssh_deletekeys: false\ndatasource_list: [ None ]\nhostname: %s\n' "$name" >"$rerun"
ci() {
  local help
  help=$(cloud-init "$1" --help 2>&1 || true)
  if [[ $help == *--file* ]]; then
    cloud-init "$@" --file "$rerun" --file "$cfg"
  else
    cloud-init --file "$rerun" --file "$cfg" "$@"
  fi
}
cloud-init status --wait >/dev/null 2>&1 || true
cloud-init clean
ci init || log "cloud-init init exited $?"
# The bootstrap configuration may name the node after the MachineDeployment.
printf '%s\n' "$name" >/etc/machine-name
ci modules --mode config || log "cloud-init modules --mode config exited $?"
ci modules --mode final || log "cloud-init modules --mode final exited $?"
printf '%s\n' "$name" >/etc/machine-name
touch "$state/edge-join.done"
log "bootstrap configuration applied; the node $name joins in a few minutes"
`
