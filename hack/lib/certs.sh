# shellcheck shell=bash
# Certificates for the local cluster, made with openssl. Sourced by hack/local-cluster.sh.
#
# Three CAs keep the trust relationships as they are in a real cluster:
#   ca           signs kube-apiserver's serving cert and every client cert it accepts
#   front-proxy  signs the client cert kube-apiserver presents to aggregated servers
#   osm-ca       signs osm-apiserver's serving cert; it is the APIService's caBundle

# new_ca NAME CN: writes NAME.crt and NAME.key in $PKI.
new_ca() {
  local name=$1 cn=$2
  openssl ecparam -name prime256v1 -genkey -noout -out "$PKI/$name.key" 2>/dev/null
  openssl req -x509 -new -key "$PKI/$name.key" -subj "/CN=$cn" -days 3650 -sha256 \
    -addext "basicConstraints=critical,CA:TRUE" \
    -addext "keyUsage=critical,keyCertSign,cRLSign,digitalSignature" \
    -out "$PKI/$name.crt" 2>/dev/null
}

# new_cert CA NAME SUBJECT USAGE [SAN]: a leaf cert NAME.crt/.key signed by CA.
# USAGE is serverAuth or clientAuth; SAN like "DNS:localhost,IP:127.0.0.1".
new_cert() {
  local ca=$1 name=$2 subject=$3 usage=$4 san=${5:-}
  local ext="$PKI/$name.ext"
  {
    echo "basicConstraints=critical,CA:FALSE"
    echo "keyUsage=critical,digitalSignature,keyEncipherment"
    echo "extendedKeyUsage=$usage"
    [ -z "$san" ] || echo "subjectAltName=$san"
  } >"$ext"
  openssl ecparam -name prime256v1 -genkey -noout -out "$PKI/$name.key" 2>/dev/null
  openssl req -new -key "$PKI/$name.key" -subj "$subject" -out "$PKI/$name.csr" 2>/dev/null
  openssl x509 -req -in "$PKI/$name.csr" -CA "$PKI/$ca.crt" -CAkey "$PKI/$ca.key" \
    -CAcreateserial -days 365 -sha256 -extfile "$ext" -out "$PKI/$name.crt" 2>/dev/null
  rm -f "$PKI/$name.csr" "$ext"
}

# make_pki writes every key and cert the cluster needs into $PKI.
make_pki() {
  mkdir -p "$PKI"
  new_ca ca "osm-local-cluster-ca"
  new_ca front-proxy-ca "osm-local-front-proxy-ca"
  new_ca osm-ca "osm-apiserver-ca"
  new_cert ca kube-apiserver "/CN=kube-apiserver" serverAuth \
    "DNS:localhost,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,IP:127.0.0.1${OSM_KUBE_APISERVER_SANS:+,$OSM_KUBE_APISERVER_SANS}"
  new_cert ca admin "/O=system:masters/CN=local-admin" clientAuth
  # kube-apiserver's client cert towards kubelets (logs, exec, port-forward).
  new_cert ca kube-apiserver-kubelet-client "/CN=kube-apiserver-kubelet-client" clientAuth
  new_cert front-proxy-ca front-proxy-client "/CN=front-proxy-client" clientAuth
  # osm-apiserver authenticates to kube-apiserver as its ServiceAccount would, so
  # the RBAC in artifacts/ is what grants it access (x509 users match SA subjects by name).
  new_cert ca osm-apiserver-client \
    "/O=system:serviceaccounts/O=system:serviceaccounts:kube-system/CN=system:serviceaccount:kube-system:osm-apiserver" clientAuth
  # kube-apiserver checks the aggregated server's cert for <service>.<namespace>.svc.
  new_cert osm-ca osm-apiserver "/CN=osm-apiserver.kube-system.svc" serverAuth \
    "DNS:osm-apiserver.kube-system.svc,DNS:osm-apiserver.kube-system.svc.cluster.local,DNS:localhost,IP:127.0.0.1"
  openssl ecparam -name prime256v1 -genkey -noout -out "$PKI/sa.key" 2>/dev/null
  openssl ec -in "$PKI/sa.key" -pubout -out "$PKI/sa.pub" 2>/dev/null
  chmod 600 "$PKI"/*.key
}
