// Package options holds the command-line flags of osm-apiserver: how nodes are
// configured (NodeFlags) and which cluster they join (ClusterFlags), shared by
// `serve` and `render`, the syncer's (SyncerFlags) and the MachineJoin
// exchange's (MachineJoinFlags). Only cmd/osm-apiserver
// uses it: the flags turn into the inputs of pkg/render and the Config of
// pkg/server there.
package options
