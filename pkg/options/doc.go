// Package options holds the command-line flags of osm-apiserver: how nodes are
// configured (NodeFlags) and which cluster they join (ClusterFlags), shared by
// `serve` and `render`, and the syncer's (SyncerFlags). Only cmd/osm-apiserver
// uses it: the flags turn into the inputs of pkg/render and the Config of
// pkg/server there.
package options
