package cloudconfig

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/url"
	"strconv"
	"strings"

	openstacktypes "k8c.io/machine-controller/sdk/cloudprovider/openstack"
	vspheretypes "k8c.io/machine-controller/sdk/cloudprovider/vsphere"
	"k8c.io/machine-controller/sdk/providerconfig"
	"sigs.k8s.io/yaml"
)

func openstack(r *resolver, in Input) (string, error) {
	var spec openstacktypes.RawConfig
	if err := json.Unmarshal(in.Spec, &spec); err != nil {
		return "", fmt.Errorf("cloudProviderSpec: %w", err)
	}
	var w ini
	w.section("Global")
	w.str("auth-url", r.str("identityEndpoint", spec.IdentityEndpoint))
	if id := r.str("applicationCredentialID", spec.ApplicationCredentialID); id != "" {
		w.str("application-credential-id", id)
		w.str("application-credential-secret", r.str("applicationCredentialSecret", spec.ApplicationCredentialSecret))
	} else {
		w.str("username", r.str("username", spec.Username))
		w.str("password", r.str("password", spec.Password))
		// The provider reads tenant-*; projects are the newer name for tenants.
		w.str("tenant-name", firstSet(r.str("projectName", spec.ProjectName), r.str("tenantName", spec.TenantName)))
		w.str("tenant-id", firstSet(r.str("projectID", spec.ProjectID), r.str("tenantID", spec.TenantID)))
	}
	w.str("domain-name", r.str("domainName", spec.DomainName))
	w.str("region", r.str("region", spec.Region))
	w.section("LoadBalancer")
	w.raw("manage-security-groups", "true")
	w.section("BlockStorage")
	w.raw("ignore-volume-az", "true")
	w.raw("trust-device-path", strconv.FormatBool(r.bool("trustDevicePath", spec.TrustDevicePath)))
	w.str("bs-version", "auto")
	if spec.NodeVolumeAttachLimit != nil && *spec.NodeVolumeAttachLimit > 0 {
		w.raw("node-volume-attach-limit", strconv.FormatUint(uint64(*spec.NodeVolumeAttachLimit), 10))
	}
	return w.String(), r.err
}

func firstSet(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

func vsphere(r *resolver, in Input) (string, error) {
	var spec vspheretypes.RawConfig
	if err := json.Unmarshal(in.Spec, &spec); err != nil {
		return "", fmt.Errorf("cloudProviderSpec: %w", err)
	}
	raw := r.str("vsphereURL", spec.VSphereURL)
	if !strings.HasPrefix(raw, "https://") && !strings.HasPrefix(raw, "http://") {
		raw = "https://" + raw // without a scheme url.Parse finds no host
	}
	u, err := url.Parse(raw)
	if err != nil {
		return "", fmt.Errorf("vsphereURL: %w", err)
	}
	user, password := r.str("username", spec.Username), r.str("password", spec.Password)
	datacenter := r.str("datacenter", spec.Datacenter)
	folder := r.str("folder", spec.Folder)
	if folder == "" {
		folder = "/" + datacenter + "/vm"
	}
	var w ini
	w.section("Global")
	w.str("user", user)
	w.str("password", password)
	w.str("port", u.Port())
	w.raw("insecure-flag", strconv.FormatBool(r.bool("allowInsecure", spec.AllowInsecure)))
	w.section("Disk")
	w.str("scsicontrollertype", "pvscsi")
	w.section("Workspace")
	w.str("server", u.Hostname())
	w.str("datacenter", datacenter)
	w.str("folder", folder)
	w.str("default-datastore", r.str("datastore", spec.Datastore))
	w.section("VirtualCenter " + quote(u.Hostname()))
	w.str("user", user)
	w.str("password", password)
	w.str("port", u.Port())
	w.str("datacenters", datacenter)
	return w.String(), r.err
}

func kubevirt(r *resolver, in Input) (string, error) {
	// The SDK's KubeVirt types pull in all of KubeVirt's API; we need one field.
	var spec struct {
		Auth struct {
			Kubeconfig providerconfig.ConfigVarString `json:"kubeconfig"`
		} `json:"auth"`
	}
	if err := json.Unmarshal(in.Spec, &spec); err != nil {
		return "", fmt.Errorf("cloudProviderSpec: %w", err)
	}
	kubeconfig := r.str("auth.kubeconfig", spec.Auth.Kubeconfig)
	if r.err != nil {
		return "", r.err
	}
	// A literal kubeconfig must be base64-encoded; a referenced one may be either.
	if dec, err := base64.StdEncoding.DecodeString(kubeconfig); err == nil {
		kubeconfig = string(dec)
	} else if spec.Auth.Kubeconfig.Value != "" {
		return "", fmt.Errorf("auth.kubeconfig is not base64: %w", err)
	}
	ns := in.Namespace
	if ns == "" {
		ns = "kube-system"
	}
	out, err := yaml.Marshal(map[string]any{"global": map[string]string{"kubeconfig": kubeconfig, "namespace": ns}})
	return string(out), err
}
