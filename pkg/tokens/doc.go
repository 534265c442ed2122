// Package tokens keeps the credentials a node of a MachineDeployment uses while
// it boots, one set per MachineDeployment:
//
//   - the kubelet's TLS-bootstrap token, and
//   - the fetch token of the bootstrap payload, allowed to GET only that
//     MachineDeployment's provisioning Secret and kubelet bootstrap kubeconfig
//     (a Role with resourceNames bound to a group of its own).
//
// Tokens are Secrets of type bootstrap.kubernetes.io/token in kube-system, the
// format kube-apiserver's bootstrap-token authenticator reads; kube-apiserver
// itself refuses a token past its expiration, so this works on clusters without
// kube-controller-manager. The syncer creates, extends and deletes them
// (Manager, AccessWriter); every replica reads them through Informer for the
// payloads it serves (Source), leader or not.
package tokens
