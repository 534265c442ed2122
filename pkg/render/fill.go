package render

import (
	"maps"

	"k8c.io/machine-controller/sdk/providerconfig"

	ospv1alpha1 "github.com/osm-apiserver/osm-apiserver/pkg/apis/operatingsystemmanager/v1alpha1"
	"github.com/osm-apiserver/osm-apiserver/pkg/apis/osm"
	"github.com/osm-apiserver/osm-apiserver/pkg/machinecontroller"
)

// parseData sets the template data that is parsed or generated from the
// MachineDeployment and the node options: the steps that can fail, and the
// cloud-config, which a view replaces.
func parseData(d *templateData, in *Input, pc *providerconfig.Config) error {
	md := in.MachineDeployment
	semver, kubeVersion, err := kubeletVersion(md)
	if err != nil {
		return err
	}
	if err = setKubeletSettings(d, md.Annotations); err != nil {
		return err
	}
	if d.ClusterDNSIPs, err = parseIPs(in.Node.ClusterDNSIPs); err != nil {
		return err
	}
	d.KubeVersion = kubeVersion
	d.CloudConfig, err = cloudConfig(pc, semver, in.Node.ExternalCloudProvider)
	return err
}

// fillData sets the rest of the template data, copied from the
// MachineDeployment, the cluster facts and the node options.
func fillData(d *templateData, in *Input, pc *providerconfig.Config) {
	md := in.MachineDeployment
	n, c := &in.Node, &in.Cluster
	d.InTreeCCMAvailable = hasInTreeCloudProvider(pc.CloudProvider, n.ExternalCloudProvider)
	d.ExternalCloudProvider = n.ExternalCloudProvider
	d.KubernetesCACert = c.KubernetesCACert
	if d.KubernetesCACert == "" {
		d.KubernetesCACert = c.CACert
	}
	d.HostCACert = c.HostCACert
	d.ServerAddress = serverAddress(c.ServerURL)
	d.ContainerRuntime = n.ContainerRuntime
	d.CloudProviderName = ospv1alpha1.CloudProvider(pc.CloudProvider)
	d.NetworkConfig = pc.Network
	d.NetworkIPFamily = string(pc.Network.GetIPFamily())
	d.PauseImage = n.PauseImage
	d.InitialTaints = n.InitialTaints
	if n.HTTPProxy != "" {
		d.HTTPProxy = &n.HTTPProxy
	}
	if n.NoProxy != "" {
		d.NoProxy = &n.NoProxy
	}
	// sprig's set/unset write to maps: keep the caller's out of reach.
	d.KubeletFeatureGates = maps.Clone(n.KubeletFeatureGates)
	if pc.OperatingSystem == providerconfig.OperatingSystemRHEL {
		d.RHSubscription = rhSubscription(&d.RhelConfig)
	}
	d.Token = c.CloudInitGetterToken
	d.ServerURL = c.ServerURL
	d.SecretName = machinecontroller.SecretName(md.Name, md.Namespace, osm.PayloadTypeProvisioning)
	d.BootstrapKubeconfigSecretName = machinecontroller.KubeletBootstrapSecretName(md.Name, md.Namespace)
	d.MachineJoinURL = c.ServerURL + "/apis/" + osm.GroupName + "/v1alpha1/namespaces/" + md.Namespace + "/machinejoins"
	d.MachineName = machinecontroller.MachineNamePlaceholder
}
