// Package image tests `make image` end to end: it builds the image twice (the
// same bytes), runs the binary in it, and checks that artifacts/deploy runs that
// image the way it serves: user, port, probes; finally it starts the image's
// binary with the Deployment's arguments, as its user, against a local cluster
// (hack/local-cluster.sh) with the manifests' RBAC, and probes it as the kubelet would.
// It also checks that the manifests, alone and with each component, are highly
// available, that the management/worker topology's two kustomizations split
// them between the clusters, and that `make release` pins the image it built in
// install.yaml.
package image
