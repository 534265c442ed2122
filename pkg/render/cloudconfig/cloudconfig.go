// Package cloudconfig generates /etc/kubernetes/cloud-config, the file the
// kubelet reads with an in-tree cloud provider, from a MachineDeployment's
// providerSpec.value.cloudProviderSpec. Formats are upstream's: gcfg INI for
// aws, gce, openstack and vsphere, JSON for azure, YAML for kubevirt.
package cloudconfig

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"k8c.io/machine-controller/sdk/providerconfig"
)

// Input is what a cloud-config is made of.
type Input struct {
	// CloudProvider is providerSpec.value.cloudProvider, e.g. "aws".
	CloudProvider string
	// Spec is providerSpec.value.cloudProviderSpec.
	Spec json.RawMessage
	// KubeletVersion is the node's kubelet version, e.g. "1.28.4" or "v1.28.4".
	KubeletVersion string
	// ExternalCloudProvider is set when a cloud-controller-manager runs the
	// cloud integration; the kubelet then reads no cloud-config.
	ExternalCloudProvider bool
	// Namespace is where KubeVirt VMs of the cluster live; "" means kube-system.
	Namespace string
}

// Reference is a configVar's secretKeyRef or configMapKeyRef. References are
// not resolved: the MachineDeployment names them, and reading whatever Secret
// it names would hand one tenant's credentials to another's nodes. Only
// kubelets older than 1.29 with an in-tree cloud provider read a cloud-config.
type Reference struct {
	// Kind is "Secret" or "ConfigMap".
	Kind, Namespace, Name, Key string
}

func (r Reference) String() string {
	return fmt.Sprintf("%s %s/%s key %q", strings.ToLower(r.Kind), r.Namespace, r.Name, r.Key)
}

// generators write the cloud-config of one cloud.
var generators = map[string]func(*resolver, Input) (string, error){
	"aws":       aws,
	"azure":     azure,
	"gce":       gce,
	"kubevirt":  kubevirt,
	"openstack": openstack,
	"vsphere":   vsphere,
}

// withoutConfig are the clouds upstream knows that need no cloud-config.
var withoutConfig = map[string]bool{
	"alibaba": true, "anexia": true, "baremetal": true, "digitalocean": true, "edge": true,
	"equinixmetal": true, "hetzner": true, "linode": true, "nutanix": true, "opennebula": true,
	"scaleway": true, "vmware-cloud-director": true, "vultr": true, "fake": true,
}

// Generate returns the cloud-config file content for clouds that have one (aws,
// azure, gce, openstack, vsphere, kubevirt), "" otherwise. Like upstream it is
// also "" with an external cloud provider and for kubelets from 1.29 on, which
// have no in-tree cloud providers.
func Generate(in Input) (string, error) {
	if in.ExternalCloudProvider {
		return "", nil
	}
	gen, ok := generators[in.CloudProvider]
	if !ok {
		if withoutConfig[in.CloudProvider] {
			return "", nil
		}
		return "", fmt.Errorf("cloud-config: unknown cloud provider %q", in.CloudProvider)
	}
	inTree, err := hasInTreeProviders(in.KubeletVersion)
	if err != nil || !inTree {
		return "", err
	}
	if len(in.Spec) == 0 || string(in.Spec) == "null" {
		return "", fmt.Errorf("cloud-config for %s: cloudProviderSpec is empty", in.CloudProvider)
	}
	s, err := gen(&resolver{}, in)
	if err != nil {
		return "", fmt.Errorf("cloud-config for %s: %w", in.CloudProvider, err)
	}
	return s, nil
}

// hasInTreeProviders reports whether a kubelet of version v still has in-tree
// cloud providers: they were removed in 1.29.
func hasInTreeProviders(v string) (bool, error) {
	major, minor, ok := strings.Cut(strings.TrimPrefix(v, "v"), ".")
	if !ok {
		return false, fmt.Errorf("cloud-config: kubelet version %q is not MAJOR.MINOR[.PATCH]", v)
	}
	minor, _, _ = strings.Cut(minor, ".")
	ma, err1 := strconv.Atoi(major)
	mi, err2 := strconv.Atoi(minor)
	if err := errors.Join(err1, err2); err != nil {
		return false, fmt.Errorf("cloud-config: kubelet version %q: %w", v, err)
	}
	return ma < 1 || (ma == 1 && mi < 29), nil
}

// InputFor returns the Input for a MachineDeployment's providerSpec.value and
// its kubelet version; callers add ExternalCloudProvider and Namespace.
func InputFor(pc *providerconfig.Config, kubeletVersion string) Input {
	return Input{
		CloudProvider:  string(pc.CloudProvider),
		Spec:           pc.CloudProviderSpec.Raw,
		KubeletVersion: kubeletVersion,
	}
}
