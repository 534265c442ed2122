// Package e2e tests osm-apiserver end to end: TestMain builds it, starts a real etcd
// and kube-apiserver on 127.0.0.1 with hack/local-cluster.sh, registers the
// APIService, and the tests drive everything through kube-apiserver with client-go
// and kubectl. The benchmarks list 1,000 MachineDeployments' configs the same way.
//
// For quick iterations, keep a cluster running and point the tests at it:
//
//	OSM_CLUSTER_DIR=/tmp/osm hack/local-cluster.sh up
//	OSM_E2E_REUSE_CLUSTER=/tmp/osm go test -count=1 -run TestWatch ./test/e2e
//	OSM_CLUSTER_DIR=/tmp/osm hack/local-cluster.sh osm   # restart osm-apiserver after `make build`
package e2e
