// Package machinecontroller is the contract with machine-controller, the
// consumer of our Secrets, written once: what machine-controller dictates and
// reads, and what we promise it. That is the MachineDeployment annotations we
// read and write, the profile an MD names (or defaults to), the names and keys
// of the Secrets it waits for (and why an MD may get none: names shared with
// another MD, or too long), the labels that tie every object we write to its
// MachineDeployment, the ownership chain MachineDeployment → MachineSet →
// Machine and the names a Machine's node may have, the clouds' user-data
// limits, and the kubelet's bootstrap kubeconfig.
//
// It reads no caches: pkg/machines reads machine-controller's objects from
// informers. It sits at the bottom of the module: it imports nothing of ours
// but the API types, and everything else imports it.
package machinecontroller
