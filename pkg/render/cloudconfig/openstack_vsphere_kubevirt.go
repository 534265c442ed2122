package cloudconfig

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/url"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
	openstacktypes "k8c.io/machine-controller/sdk/cloudprovider/openstack"
	vspheretypes "k8c.io/machine-controller/sdk/cloudprovider/vsphere"
	"k8c.io/machine-controller/sdk/providerconfig"
)

func openstack(r *resolver, in Input) (string, error) {
	var spec openstacktypes.RawConfig
	if err := json.Unmarshal(in.Spec, &spec); err != nil {
		return "", fmt.Errorf("cloudProviderSpec: %w", err)
	}
	// Key padding and the [LoadBalancer] defaults are upstream's template's.
	var w ini
	w.WriteString("[Global]\n")
	w.line("auth-url", "    = ", quote(r.str("identityEndpoint", spec.IdentityEndpoint)))
	if id := r.str("applicationCredentialID", spec.ApplicationCredentialID); id != "" {
		w.line("application-credential-id", "     = ", quote(id))
		w.line("application-credential-secret", " = ", quote(r.str("applicationCredentialSecret", spec.ApplicationCredentialSecret)))
	} else {
		w.line("username", "    = ", quote(r.str("username", spec.Username)))
		w.line("password", "    = ", quote(r.str("password", spec.Password)))
		// The provider reads tenant-*; projects are the newer name for tenants.
		w.line("tenant-name", " = ", quote(firstSet(r.str("projectName", spec.ProjectName), r.str("tenantName", spec.TenantName))))
		w.line("tenant-id", "   = ", quote(firstSet(r.str("projectID", spec.ProjectID), r.str("tenantID", spec.TenantID))))
	}
	w.line("domain-name", " = ", quote(r.str("domainName", spec.DomainName)))
	w.line("region", "      = ", quote(r.str("region", spec.Region)))
	w.WriteString("\n[LoadBalancer]\n")
	w.line("lb-version", " = ", quote("v2"))
	w.line("subnet-id", " = ", quote(""))
	w.line("floating-network-id", " = ", quote(""))
	w.line("lb-method", " = ", quote("ROUND_ROBIN"))
	w.line("lb-provider", " = ", quote(""))
	w.line("manage-security-groups", " = ", "true")
	w.WriteString("\n[BlockStorage]\n")
	w.line("ignore-volume-az", "  = ", "true")
	w.line("trust-device-path", " = ", strconv.FormatBool(r.bool("trustDevicePath", spec.TrustDevicePath)))
	w.line("bs-version", "        = ", quote("auto"))
	if spec.NodeVolumeAttachLimit != nil && *spec.NodeVolumeAttachLimit > 0 {
		w.line("node-volume-attach-limit", " = ", strconv.FormatUint(uint64(*spec.NodeVolumeAttachLimit), 10))
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
	datastore := r.str("datastore", spec.Datastore)
	if datastore == "" {
		datastore = r.str("datastoreCluster", spec.DatastoreCluster)
	}
	// Padding, blank lines and the unquoted port of [VirtualCenter] are upstream's.
	var w ini
	w.WriteString("[Global]\n")
	w.line("user", "              = ", quote(user))
	w.line("password", "          = ", quote(password))
	w.line("port", "              = ", quote(u.Port()))
	w.line("insecure-flag", "     = ", strconv.FormatBool(r.bool("allowInsecure", spec.AllowInsecure)))
	w.WriteString("\n[Disk]\n")
	w.line("scsicontrollertype", " = ", quote("pvscsi"))
	w.WriteString("\n[Workspace]\n")
	w.line("server", "            = ", quote(u.Hostname()))
	w.line("datacenter", "        = ", quote(datacenter))
	w.line("folder", "            = ", quote(folder))
	w.line("default-datastore", " = ", quote(datastore))
	w.WriteString("\n\n[VirtualCenter " + quote(u.Hostname()) + "]\n")
	w.line("user", " = ", quote(user))
	w.line("password", " = ", quote(password))
	w.line("port", " = ", u.Port())
	w.line("datacenters", " = ", quote(datacenter))
	w.WriteByte('\n')
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
	// yaml.v3 as upstream, which indents by four spaces.
	type global struct {
		Kubeconfig string `yaml:"kubeconfig"`
		Namespace  string `yaml:"namespace"`
	}
	out, err := yaml.Marshal(struct {
		Global global `yaml:"global"`
	}{global{kubeconfig, ns}})
	return string(out), err
}
