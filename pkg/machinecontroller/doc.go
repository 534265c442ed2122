// Package machinecontroller is the contract with machine-controller, the consumer
// of our Secrets, written once: the MachineDeployment annotations we read and
// write, the profile an MD names, the names and keys of the Secrets it waits for,
// the labels that tie every object we write to its MachineDeployment, the
// MachineDeployment, MachineSet and Machine informers and readers (which
// MachineDeployment owns a Machine, which names its node may have), and the
// kubelet's bootstrap kubeconfig.
//
// It sits at the bottom of the module: it imports nothing of ours but the API
// types, and everything else imports it.
package machinecontroller
