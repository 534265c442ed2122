// Package informers builds every informer osm-apiserver runs, in one place.
//
// Set is what every replica watches and the API renders from: the worker
// cluster's MachineDeployments, MachineSets, Machines and Nodes, the
// management cluster's profiles and overlays, and our own tokens, payload
// Secrets and boot reports. Its Synced is the one list readyz and the
// MachineJoin gate read. The leader's controllers build their own informers
// here for each leadership term (Owned, Join), and the cluster facts watch one
// object each (NewConfigMap, NewSecret) and kube-apiserver's EndpointSlice
// (NewEndpointSlice).
//
// Each informer drops managed fields and interns metadata
// (machinecontroller.StripManagedFields); the domain packages own the
// indexes and transforms and read the caches through their own types
// (machines.Lister, tokens.Informer, bootreports.Informer, Payloads).
//
// It imports the contract, the readers and the domain packages whose indexes
// it installs (machines, tokens, bootreports), and nothing that reads a Set.
package informers
