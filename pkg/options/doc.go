// Package options holds the command-line flags shared by `osm-apiserver serve`
// and `osm-apiserver render`: how nodes are configured (NodeFlags) and which
// cluster they join (ClusterFlags). Both turn into the render package's inputs.
package options
