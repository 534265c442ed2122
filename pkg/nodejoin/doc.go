// Package nodejoin hands each machine of a MachineDeployment, once, the
// credentials to join as its own node, in exchange for the fetch credential
// of its user-data (a MachineJoin), and holds that node to its name.
//
//   - Exchange answers a MachineJoin: the caller must be the fetch
//     ServiceAccount of the MachineDeployment that owns the named Machine,
//     in its namespace; the Machine must exist, have no Node, and not have
//     been answered before, except to the same boot within the retry window.
//     The answer: the provisioning payload and a kubelet bootstrap
//     kubeconfig with a short-lived token of the machine's join identity.
//   - The join identity is a ServiceAccount per machine in Namespace
//     (osm-node-join), created when the machine is first answered: its
//     creation is the claim every replica agrees on (the API server lets
//     one create win), and its annotations are the durable record (boot,
//     time, Machine uid). Its tokens are bound to a Secret of the same name,
//     the credential: deleting it revokes them. One static binding lets the
//     namespace's ServiceAccounts create CSRs (system:node-bootstrapper); no
//     cluster binds their group to node-client auto-approval.
//   - Approver (leader only) approves a kubelet client CSR of a join identity
//     only for a name the node of its machine may have, and denies any other
//     with the reason on the CSR.
//   - Controller (leader only) deletes a credential once its machine's Node
//     registered, once it expired, and the record with its Machine.
package nodejoin
