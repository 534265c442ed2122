// Package e2e tests osm-apiserver end to end: TestMain builds it, starts a real etcd
// and kube-apiserver on 127.0.0.1 with hack/local-cluster.sh, registers the
// APIService, and the tests drive everything through kube-apiserver with client-go
// and kubectl. The benchmarks list 1,000 MachineDeployments' configs the same way.
package e2e
