package migrate

import (
	"context"
	"fmt"
	"slices"
	"strings"

	clusterv1alpha1 "k8c.io/machine-controller/sdk/apis/cluster/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/osm-apiserver/osm-apiserver/pkg/apis/osm"
	"github.com/osm-apiserver/osm-apiserver/pkg/machinecontroller"
)

func (s *State) findMachineDeployments(ctx context.Context, c Clients, o Options) error {
	list, err := c.WorkerDynamic.Resource(MachineDeploymentResource).List(ctx, metav1.ListOptions{})
	if err != nil {
		return fmt.Errorf("failed to list machinedeployments: %w", err)
	}
	// One list each rather than a GET per MD.
	settings, err := c.Worker.CoreV1().Secrets(machinecontroller.CloudInitSettingsNamespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return fmt.Errorf("failed to list secrets in %s: %w", machinecontroller.CloudInitSettingsNamespace, err)
	}
	secrets := map[string]*corev1.Secret{}
	for i := range settings.Items {
		secrets[settings.Items[i].Name] = &settings.Items[i]
	}
	tokens, err := c.Worker.CoreV1().Secrets("kube-system").List(ctx, metav1.ListOptions{LabelSelector: BootstrapTokenLabel})
	if err != nil {
		return fmt.Errorf("failed to list upstream's bootstrap tokens in kube-system: %w", err)
	}
	tokensOf := map[string][]*corev1.Secret{}
	for i := range tokens.Items {
		t := &tokens.Items[i]
		key := t.Labels[BootstrapTokenLabel]
		tokensOf[key] = append(tokensOf[key], t)
	}
	var joinModes map[machinecontroller.Ref]osm.NodeJoinMode
	if s.Serving {
		if joinModes, err = nodeJoinModes(ctx, c); err != nil {
			return err
		}
	}
	for i := range list.Items {
		md, err := typed(&list.Items[i])
		if err != nil {
			return err
		}
		m := machineDeployment(md, o.ProfileNamespace, secrets, tokensOf)
		if s.Serving {
			m.joins(joinModes[m.Ref])
		}
		if !m.current() && s.Serving {
			m.Output = ourOutput(ctx, c, m.Ref)
		}
		s.MachineDeployments = append(s.MachineDeployments, m)
	}
	slices.SortFunc(s.MachineDeployments, func(a, b MachineDeployment) int { return strings.Compare(a.Ref.String(), b.Ref.String()) })
	return nil
}

func machineDeployment(md *clusterv1alpha1.MachineDeployment, profileNamespace string, secrets map[string]*corev1.Secret, tokensOf map[string][]*corev1.Secret) MachineDeployment {
	ref := machinecontroller.RefOf(md)
	m := MachineDeployment{
		Ref:       ref,
		Revision:  md.Annotations[machinecontroller.AnnotationMDRevision],
		Deleting:  md.DeletionTimestamp != nil,
		Finalizer: slices.Contains(md.Finalizers, Finalizer),
	}
	if p, err := machinecontroller.ProfileOf(md, profileNamespace); err != nil {
		m.ProfileErr = err.Error()
	} else {
		m.Profile = p
	}
	for i, kind := range []osm.PayloadType{osm.PayloadTypeBootstrap, osm.PayloadTypeProvisioning} {
		sec := Secret{Kind: kind, Name: machinecontroller.SecretName(ref.Name, ref.Namespace, kind)}
		if got, ok := secrets[sec.Name]; ok {
			owner, ours := machinecontroller.Owner(got)
			sec.Exists, sec.Ours = true, ours && owner == ref
			sec.Revision = got.Annotations[machinecontroller.AnnotationSecretMDRevision]
			sec.UID = got.UID
			if !sec.Ours {
				sec.NotUpstream = notUpstreamPayload(got)
			}
		}
		m.Secrets[i] = sec
	}
	if got, ok := secrets[KubeletBootstrapSecretName(ref)]; ok {
		m.leftover(got, notUpstreamKubeletBootstrap(got))
	}
	for _, t := range tokensOf[UpstreamKey(ref)] {
		m.leftover(t, notUpstreamBootstrapToken(t))
	}
	return m
}

// leftover records s, an upstream node credential of m, or, when it is not
// upstream's (why), that it is left alone.
func (m *MachineDeployment) leftover(s *corev1.Secret, why string) {
	o := Object{Kind: "Secret", Namespace: s.Namespace, Name: s.Name, UID: s.UID}
	if why != "" {
		m.Skipped = append(m.Skipped, Skip{Object: o, Reason: why})
		return
	}
	m.Leftovers = append(m.Leftovers, o)
}

// nodeJoinModes reads how the nodes of each MD join from our
// OperatingSystemConfigs, in one list.
func nodeJoinModes(ctx context.Context, c Clients) (map[machinecontroller.Ref]osm.NodeJoinMode, error) {
	list, err := c.OSM.OsmV1alpha1().OperatingSystemConfigs(metav1.NamespaceAll).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("failed to list osm-apiserver's operatingsystemconfigs: %w", err)
	}
	modes := make(map[machinecontroller.Ref]osm.NodeJoinMode, len(list.Items))
	for _, o := range list.Items {
		if o.Status.NodeJoin != nil {
			modes[machinecontroller.Ref{Namespace: o.Namespace, Name: o.Name}] = osm.NodeJoinMode(o.Status.NodeJoin.Mode)
		}
	}
	return modes, nil
}

// joins records how m's nodes join. Those that post a MachineJoin read no
// provisioning Secret: upstream's is a leftover to delete with its node
// credentials, and ours is not waited for.
func (m *MachineDeployment) joins(mode osm.NodeJoinMode) {
	m.Join = mode
	if mode != osm.NodeJoinMachineJoin {
		return
	}
	p := &m.Secrets[1]
	p.Unneeded = true
	if p.Exists && !p.Ours && !m.Deleting {
		o := Object{Kind: "Secret", Namespace: machinecontroller.CloudInitSettingsNamespace, Name: p.Name, UID: p.UID}
		if p.NotUpstream != "" {
			m.Skipped = append(m.Skipped, Skip{Object: o, Reason: p.NotUpstream})
		} else {
			m.Leftovers = append(m.Leftovers, o)
		}
	}
}

// current says whether the payload Secrets osm-apiserver writes for the MD
// are its own, with the MD's revision: machine-controller creates Machines
// from ours.
func (m MachineDeployment) current() bool {
	for _, s := range m.Secrets {
		if s.Unneeded {
			continue
		}
		if !s.Ours || s.Revision != m.Revision {
			return false
		}
	}
	return true
}

// upstreams says whether a payload Secret is still upstream's (or nobody's
// yet): a VM created now would boot with upstream's credentials.
func (m MachineDeployment) upstreams() bool {
	for _, s := range m.Secrets {
		if s.Exists && !s.Ours && !s.Unneeded {
			return true
		}
	}
	return false
}

// ourOutput says why our OperatingSystemConfig of ref is not in its Secrets:
// its render error or what it waits for.
func ourOutput(ctx context.Context, c Clients, ref machinecontroller.Ref) string {
	osc, err := c.OSM.OsmV1alpha1().OperatingSystemConfigs(ref.Namespace).Get(ctx, ref.Name, metav1.GetOptions{})
	switch {
	case err != nil:
		return fmt.Sprintf("osm-apiserver answers: %v", err)
	case osc.Status.RenderError != "":
		return "its OperatingSystemConfig: Error: " + osc.Status.RenderError
	case osc.Status.Pending != "":
		return "its OperatingSystemConfig: Pending: " + osc.Status.Pending
	}
	return "its OperatingSystemConfig is rendered; the syncer writes the Secrets within moments"
}
