// Package machines reads machine-controller's objects from informer caches:
// which MachineDeployments use a profile or share dictated Secret names
// (Lister), the template of an MD's revision (RevisionTemplates), a Machine's
// MachineDeployment and Node (MachineReader), and which MD owns Secret names
// several share (Claims). It also makes the MachineDeployment, MachineSet,
// Machine and Node list-watches and informers with the indexes these read.
//
// It may import the contract (pkg/machinecontroller) and the API types, and
// nothing else of ours: it sits just above the contract, and the packages that
// read MachineDeployments import it.
package machines
