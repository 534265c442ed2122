// Package render turns an OperatingSystemProfile, a MachineDeployment and the
// cluster's and nodes' options into an OperatingSystemConfig and its bootstrap
// and provisioning payloads (cloud-init or Ignition).
//
// It is a pure library: inputs in, bytes out, no Kubernetes client and no I/O.
// Templates of an OSP are parsed once per OSP revision and reused, so a render
// only executes them. The sandboxed template engine (pkg/sandbox) parses and
// executes them, both configs of a render within one budget; render fills the
// template data, says which OSP, config and file failed, and assembles the
// configs and payloads.
package render
