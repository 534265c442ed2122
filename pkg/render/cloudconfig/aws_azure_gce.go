package cloudconfig

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strconv"

	awstypes "k8c.io/machine-controller/sdk/cloudprovider/aws"
	azuretypes "k8c.io/machine-controller/sdk/cloudprovider/azure"
	gcetypes "k8c.io/machine-controller/sdk/cloudprovider/gce"
)

func aws(r *resolver, in Input) (string, error) {
	var spec awstypes.RawConfig
	if err := json.Unmarshal(in.Spec, &spec); err != nil {
		return "", fmt.Errorf("cloudProviderSpec: %w", err)
	}
	var w ini
	w.WriteString("[global]\n")
	w.line("Zone", "=", quote(r.str("availabilityZone", spec.AvailabilityZone)))
	w.line("VPC", "=", quote(r.str("vpcId", spec.VpcID)))
	w.line("SubnetID", "=", quote(r.str("subnetId", spec.SubnetID)))
	return w.String(), r.err
}

// azureConfig is the JSON the Azure in-tree provider reads.
type azureConfig struct {
	Cloud                      string `json:"cloud"`
	TenantID                   string `json:"tenantId"`
	SubscriptionID             string `json:"subscriptionId"`
	AADClientID                string `json:"aadClientId"`
	AADClientSecret            string `json:"aadClientSecret"`
	ResourceGroup              string `json:"resourceGroup"`
	Location                   string `json:"location"`
	VNetName                   string `json:"vnetName"`
	SubnetName                 string `json:"subnetName"`
	RouteTableName             string `json:"routeTableName"`
	SecurityGroupName          string `json:"securityGroupName"`
	PrimaryAvailabilitySetName string `json:"primaryAvailabilitySetName"`
	VnetResourceGroup          string `json:"vnetResourceGroup"`
	UseInstanceMetadata        bool   `json:"useInstanceMetadata"`
	LoadBalancerSku            string `json:"loadBalancerSku"`
}

func azure(r *resolver, in Input) (string, error) {
	var spec azuretypes.RawConfig
	if err := json.Unmarshal(in.Spec, &spec); err != nil {
		return "", fmt.Errorf("cloudProviderSpec: %w", err)
	}
	c := azureConfig{
		Cloud:               "AZUREPUBLICCLOUD",
		UseInstanceMetadata: true,
		TenantID:            r.str("tenantID", spec.TenantID),
		SubscriptionID:      r.str("subscriptionID", spec.SubscriptionID),
		AADClientID:         r.str("clientID", spec.ClientID),
		AADClientSecret:     r.str("clientSecret", spec.ClientSecret),
		ResourceGroup:       r.str("resourceGroup", spec.ResourceGroup),
		Location:            r.str("location", spec.Location),
		VNetName:            r.str("vnetName", spec.VNetName),
		SubnetName:          r.str("subnetName", spec.SubnetName),
		RouteTableName:      r.str("routeTableName", spec.RouteTableName),
		SecurityGroupName:   r.str("securityGroupName", spec.SecurityGroupName),
		VnetResourceGroup:   r.str("vnetResourceGroup", spec.VNetResourceGroup),
		LoadBalancerSku:     r.str("loadBalancerSku", spec.LoadBalancerSku),
	}
	// An availability set is used unless assignAvailabilitySet says no.
	if set := r.str("availabilitySet", spec.AvailabilitySet); spec.AssignAvailabilitySet == nil || *spec.AssignAvailabilitySet {
		c.PrimaryAvailabilitySetName = set
	}
	if r.err != nil {
		return "", r.err
	}
	// Compact, without a trailing newline: upstream's json.Marshal output.
	out, err := json.Marshal(c)
	return string(out), err
}

func gce(r *resolver, in Input) (string, error) {
	var spec gcetypes.RawConfig
	if err := json.Unmarshal(in.Spec, &spec); err != nil {
		return "", fmt.Errorf("cloudProviderSpec: %w", err)
	}
	project, err := gceProject(r, spec)
	if err != nil {
		return "", err
	}
	var w ini
	w.WriteString("[global]\n")
	w.line("project-id", " = ", quote(project))
	w.line("local-zone", " = ", quote(r.str("zone", spec.Zone)))
	w.line("network-name", " = ", quote(r.str("network", spec.Network)))
	w.line("subnetwork-name", " = ", quote(r.str("subnetwork", spec.Subnetwork)))
	w.line("multizone", " = ", strconv.FormatBool(r.bool("multizone", spec.MultiZone)))
	w.line("regional", " = ", strconv.FormatBool(r.bool("regional", spec.Regional)))
	for _, tag := range spec.Tags {
		w.line("node-tags", " = ", quote(tag))
	}
	return w.String(), r.err
}

// gceProject returns the project of the service account (base64-encoded JSON
// key), as upstream does, or the spec's projectID when there is no account.
func gceProject(r *resolver, spec gcetypes.RawConfig) (string, error) {
	sa := r.str("serviceAccount", spec.ServiceAccount)
	if sa == "" {
		if p := r.str("projectID", spec.ProjectID); p != "" {
			return p, r.err
		}
		return "", fmt.Errorf("serviceAccount is empty: the project id comes from it")
	}
	raw, err := base64.StdEncoding.DecodeString(sa)
	if err != nil {
		return "", fmt.Errorf("serviceAccount is not base64: %w", err)
	}
	var key struct {
		ProjectID string `json:"project_id"`
	}
	if err := json.Unmarshal(raw, &key); err != nil {
		return "", fmt.Errorf("serviceAccount is not a JSON key: %w", err)
	}
	return key.ProjectID, nil
}
