// Package options holds the command-line flags of osm-apiserver. Options are
// the flags of `serve`: Validate checks them, ServerConfig turns them into the
// Config of pkg/server and ApplyGoRuntime sets the Go runtime's garbage
// collection target and memory limit. Its flag sets are how nodes are
// configured (NodeFlags) and which cluster they join (ClusterFlags), shared
// with `render`, the syncer's (SyncerFlags) and the MachineJoin exchange's
// (MachineJoinFlags). Only cmd/osm-apiserver uses it: the flags turn into the
// inputs of pkg/render and the Config of pkg/server there.
package options
