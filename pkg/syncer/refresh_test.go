package syncer

import (
	"bytes"
	"encoding/base64"
	"testing"

	"github.com/osm-apiserver/osm-apiserver/pkg/machinecontroller"
)

// A fired Refresh re-syncs every MachineDeployment without an event of its
// own, and the kubelet kubeconfigs take the cluster facts of that moment.
func TestRefreshResyncsEveryMachineDeployment(t *testing.T) {
	facts := newFakeFacts("ca-one")
	refresh := make(chan struct{}, 1)
	h := start(t, func(c *Config) {
		c.Facts = facts
		c.Refresh = refresh
	})
	h.osps.Add(profile("osp-ubuntu", "v1"))
	for _, name := range []string{"a", "b"} {
		h.mds.Add(machineDeployment(name, "osp-ubuntu", "1"))
		h.waitPayloads(name, "v1", "1")
	}
	h.waitKubeconfigCA("a", "ca-one")
	h.renderer.mu.Lock()
	before := h.renderer.calls
	h.renderer.mu.Unlock()

	facts.ca.Store("ca-two")
	refresh <- struct{}{}
	for _, name := range []string{"a", "b"} {
		h.waitKubeconfigCA(name, "ca-two")
	}
	h.eventually("both MDs rendered again", func() (bool, error) {
		h.renderer.mu.Lock()
		defer h.renderer.mu.Unlock()
		return h.renderer.calls >= before+2, nil
	})
}

func (h *harness) waitKubeconfigCA(md, ca string) {
	h.t.Helper()
	want := []byte(base64.StdEncoding.EncodeToString([]byte(ca)))
	h.eventually("kubeconfig of "+md+" with "+ca, func() (bool, error) {
		s, err := h.secret(machinecontroller.CloudInitSettingsNamespace, machinecontroller.KubeletBootstrapSecretName(md, "kube-system"))
		if err != nil {
			return false, nil
		}
		return bytes.Contains(s.Data[machinecontroller.KubeconfigDataKey], want), nil
	})
}
