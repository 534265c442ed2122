// Package tokens keeps the credentials a node of a MachineDeployment uses while
// it boots, one set per MachineDeployment:
//
//   - the kubelet's TLS-bootstrap token: a Secret of type
//     bootstrap.kubernetes.io/token in kube-system, the format kube-apiserver's
//     bootstrap-token authenticator reads, in the group machine-controller's
//     clusters bind to node bootstrapping. kube-apiserver itself refuses it
//     past its expiration, so this works without kube-controller-manager; the
//     syncer extends it, keeping its value (Manager).
//   - the fetch token of the bootstrap payload, allowed to GET only that
//     MachineDeployment's provisioning Secret and kubelet bootstrap kubeconfig:
//     a token of the MachineDeployment's own ServiceAccount from the
//     TokenRequest API, bound to the Secret in cloud-init-settings that holds it,
//     with a Role naming those Secrets (FetchIssuer, AccessWriter). It carries
//     no system:bootstrappers group, so no cluster's node-bootstrapping
//     bindings apply to it; it expires on its own, is replaced before, and
//     deleting its Secret or ServiceAccount revokes it.
//
// The syncer creates, renews and deletes them; every replica reads them
// through Informer for the payloads it serves (Source), leader or not.
package tokens
