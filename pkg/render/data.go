package render

import (
	"net"
	"time"

	"k8c.io/machine-controller/sdk/providerconfig"
	"k8c.io/machine-controller/sdk/userdata/amzn2"
	"k8c.io/machine-controller/sdk/userdata/flatcar"
	"k8c.io/machine-controller/sdk/userdata/rhel"
	"k8c.io/machine-controller/sdk/userdata/rockylinux"
	"k8c.io/machine-controller/sdk/userdata/ubuntu"

	ospv1alpha1 "github.com/osm-apiserver/osm-apiserver/pkg/apis/operatingsystemmanager/v1alpha1"
	"github.com/osm-apiserver/osm-apiserver/pkg/machinecontroller"
)

// templateData is what OSP templates see as "." (and "$"). Field names and types
// are the contract with OSPs written for the upstream project (contract.md): the
// pointer types are deliberate, `{{ if .HTTPProxy }}` and `{{ with .MaxPods }}`
// must behave as they do there.
type templateData struct {
	KubeVersion                string
	KubeletConfiguration       string
	KubeletSystemdUnit         string
	InTreeCCMAvailable         bool
	CNIVersion                 string
	ClusterDNSIPs              []net.IP
	KubernetesCACert           string
	HostCACert                 string
	ServerAddress              string
	CloudConfig                string
	ContainerRuntime           string
	CloudProviderName          ospv1alpha1.CloudProvider
	NetworkConfig              *providerconfig.NetworkConfig
	ExternalCloudProvider      bool
	PauseImage                 string
	InitialTaints              string
	HTTPProxy                  *string
	NoProxy                    *string
	ContainerRuntimeConfig     string
	ContainerRuntimeAuthConfig string
	KubeletFeatureGates        map[string]bool
	RHSubscription             map[string]string
	NetworkIPFamily            string

	// Kubelet knobs from the MachineDeployment's kubelet-config annotations.
	KubeReserved                *map[string]string
	SystemReserved              *map[string]string
	EvictionHard                *map[string]string
	MaxPods                     *int32
	ContainerLogMaxSize         *string
	ContainerLogMaxFiles        *string
	ImageGCHighThresholdPercent *int32
	ImageGCLowThresholdPercent  *int32
	ImageMinimumGCAge           *kubeletDuration
	ImageMaximumGCAge           *kubeletDuration

	// The providerSpec's operatingSystemSpec, per OS.
	AmazonLinuxConfig amzn2.Config
	FlatcarConfig     flatcar.Config
	RhelConfig        rhel.Config
	UbuntuConfig      ubuntu.Config
	RockyLinuxConfig  rockylinux.Config

	// What the bootstrap payload needs to fetch the provisioning payload and
	// the kubelet's bootstrap kubeconfig.
	Token                         string
	ServerURL                     string
	SecretName                    string
	BootstrapKubeconfigSecretName string

	// What the bootstrap payload needs to post a MachineJoin instead (see
	// join.go): the URL of the MD namespace's machinejoins, and the machine's
	// name as machine-controller writes it into the user-data (the
	// placeholder it replaces; write it where it is not base64-encoded).
	MachineJoinURL string
	MachineName    string

	// bootstrapKubeconfig is built on first use: few OSPs read it.
	bootstrapKubeconfig *string
	cluster             *ClusterInfo
}

// BootstrapKubeconfig is the kubelet's bootstrap kubeconfig (server, CA and
// bootstrap token), as a template reads `.BootstrapKubeconfig`.
func (d *templateData) BootstrapKubeconfig() (string, error) {
	if d.bootstrapKubeconfig == nil {
		c := d.cluster
		data, err := machinecontroller.BootstrapKubeconfig(c.ServerURL, []byte(c.CACert), c.BootstrapToken)
		if err != nil {
			return "", err
		}
		s := string(data)
		d.bootstrapKubeconfig = &s
	}
	return *d.bootstrapKubeconfig, nil
}

// kubeletDuration prints as a Go duration ("5m0s"), which KubeletConfiguration
// reads; metav1.Duration's generated String() would print "&Duration{...}".
type kubeletDuration struct {
	time.Duration
}
