package nodejoin

import (
	"fmt"

	clusterv1alpha1 "k8c.io/machine-controller/sdk/apis/cluster/v1alpha1"
	certificatesv1 "k8s.io/api/certificates/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	certificatesv1listers "k8s.io/client-go/listers/certificates/v1"
	corev1listers "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
)

// registration is one handler the Controller added to a shared informer, removed when it stops.
type registration struct {
	informer     cache.SharedIndexInformer
	registration cache.ResourceEventHandlerRegistration
}

// addHandlers registers the Controller on its own informers and the shared ones.
func (c *Controller) addHandlers() ([]registration, error) {
	ours := cache.ResourceEventHandlerFuncs{AddFunc: c.onOurs, UpdateFunc: func(_, cur any) { c.onOurs(cur) }, DeleteFunc: c.onOurs}
	machine := cache.ResourceEventHandlerFuncs{UpdateFunc: func(_, cur any) { c.onMachine(cur) }, DeleteFunc: c.onMachine}
	node := cache.ResourceEventHandlerFuncs{AddFunc: c.onNode}
	csr := cache.ResourceEventHandlerFuncs{AddFunc: c.onCSR, UpdateFunc: func(_, cur any) { c.onCSR(cur) }}
	var out []registration
	for _, h := range []struct {
		informer cache.SharedIndexInformer
		funcs    cache.ResourceEventHandler
	}{
		{c.watch.Accounts, ours}, {c.watch.Credentials, ours}, {c.cfg.MachineInformer, machine}, {c.cfg.NodeInformer, node}, {c.watch.CSRs, csr},
	} {
		r, err := h.informer.AddEventHandler(h.funcs)
		if err != nil {
			return out, fmt.Errorf("machine join: failed to add event handler: %w", err)
		}
		out = append(out, registration{h.informer, r})
	}
	return out, nil
}

// onOurs enqueues the Machine of a join identity or credential.
func (c *Controller) onOurs(obj any) {
	if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = d.Obj
	}
	if m, ok := obj.(metav1.Object); ok {
		if key, ok := machineOf(m); ok {
			c.machineQueue.Add(key)
		}
	}
}

// onMachine enqueues a Machine that changed or went, if it has a join identity.
func (c *Controller) onMachine(obj any) {
	if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = d.Obj
	}
	if m, ok := obj.(*clusterv1alpha1.Machine); ok {
		key := MachineKey{Namespace: m.Namespace, Name: m.Name}
		if _, exists, _ := c.watch.Accounts.GetIndexer().GetByKey(Namespace + "/" + AccountName(key)); exists {
			c.machineQueue.Add(key)
		}
	}
}

// onNode enqueues the Machines whose node a new Node may be.
func (c *Controller) onNode(obj any) {
	if m, ok := obj.(metav1.Object); ok {
		machines, err := c.cfg.Machines.ByNodeName(m.GetName())
		if err != nil {
			return
		}
		for _, machine := range machines {
			c.onMachine(machine)
		}
	}
}

// onCSR enqueues an undecided CSR of a join identity.
func (c *Controller) onCSR(obj any) {
	csr, ok := obj.(*certificatesv1.CertificateSigningRequest)
	if !ok || decided(csr) {
		return
	}
	if _, ok := AccountOf(csr.Spec.Username); ok {
		c.csrQueue.Add(csr.Name)
	}
}

func (c *Controller) accountLister() corev1listers.ServiceAccountLister {
	return corev1listers.NewServiceAccountLister(c.watch.Accounts.GetIndexer())
}

func (c *Controller) credentialLister() corev1listers.SecretLister {
	return corev1listers.NewSecretLister(c.watch.Credentials.GetIndexer())
}

func (c *Controller) csrLister() certificatesv1listers.CertificateSigningRequestLister {
	return certificatesv1listers.NewCertificateSigningRequestLister(c.watch.CSRs.GetIndexer())
}
