package render

import (
	"encoding/base64"
	"maps"
	"net/url"
	"strings"

	"github.com/osm-apiserver/osm-apiserver/pkg/apis/osm"
)

// The view of a render is what a reader of OperatingSystemConfigs sees: the
// same OSP rendered for the same MachineDeployment, but from inputs whose
// secrets are placeholders. No template transformation (b64enc, upper,
// replace, printf into an error) can then reveal a secret, because the
// templates never see one. The payloads, a resource of their own with its own
// RBAC, come from the render with the real values.
const (
	// RedactedToken stands for a token: a well-formed bootstrap token, so
	// templates that split or check it behave as with a real one.
	RedactedToken = "redact.redactedredacted"
	// Redacted stands for any other secret value.
	Redacted = "REDACTED"
	// redactedCloudConfig stands for the cloud-config of in-tree cloud
	// providers, which holds the cloud's credentials.
	redactedCloudConfig = "# REDACTED: the cloud provider's configuration holds its credentials\n"
)

// A view is redacted twice: its inputs before the templates, or anything
// else derived from them, see a secret; and, once the configs are assembled,
// what reaches them without passing through templates.

// redactInputs replaces the secrets of the cluster facts, the node options
// and the providerSpec's OS settings and cloud-config. It comes after the
// parsing steps, which read none of them, and before the rest of the
// template data, the containerd configuration and registry files are
// derived from them.
func (x *rendering) redactInputs() {
	x.in.Cluster, x.in.Node = viewInputs(x.in.Cluster, x.in.Node)
	x.data.redactOSSecrets()
}

// redactOutputs leaves out the cloudProviderSpec, which holds the cloud's
// credentials in fields of every cloud's own making, and replaces the
// credentials of rh_subscription modules, which OSPs may bring themselves.
func (x *rendering) redactOutputs() {
	x.providerSpec = nil
	for _, c := range []*osm.OSCConfig{&x.boot, &x.prov} {
		if c.CloudInitModules != nil {
			c.CloudInitModules.RHSubscription = redactRHSubscription(c.CloudInitModules.RHSubscription)
		}
	}
}

// viewInputs returns copies of the cluster facts and node options with every
// secret replaced; in's own maps are not touched.
func viewInputs(c ClusterInfo, n NodeOptions) (ClusterInfo, NodeOptions) {
	if c.BootstrapToken != "" {
		c.BootstrapToken = RedactedToken
	}
	if c.CloudInitGetterToken != "" {
		c.CloudInitGetterToken = RedactedToken
	}
	n.HTTPProxy = redactURLCredentials(n.HTTPProxy)
	if len(n.RegistryCredentials) > 0 {
		creds := maps.Clone(n.RegistryCredentials)
		for registry, auth := range creds {
			creds[registry] = RegistryAuth{
				Username:      redactIfSet(auth.Username),
				Password:      redactIfSet(auth.Password),
				Auth:          redactAuth(auth.Auth),
				IdentityToken: redactIfSet(auth.IdentityToken),
			}
		}
		n.RegistryCredentials = creds
	}
	return c, n
}

// redactOSSecrets replaces the secrets a providerSpec brings in the render's
// template data: RHEL subscription credentials and the cloud-config.
func (d *templateData) redactOSSecrets() {
	r := &d.RhelConfig
	r.RHELSubscriptionManagerPassword = redactIfSet(r.RHELSubscriptionManagerPassword)
	r.RHELActivationKey = redactIfSet(r.RHELActivationKey)
	r.RHSMOfflineToken = redactIfSet(r.RHSMOfflineToken)
	if d.CloudConfig != "" {
		d.CloudConfig = redactedCloudConfig
	}
}

// redactRHSubscription replaces the credentials of a rh_subscription module
// an OSP brings itself.
func redactRHSubscription(m map[string]string) map[string]string {
	if m == nil {
		return nil
	}
	out := maps.Clone(m)
	for k := range out {
		if strings.Contains(k, "password") || strings.Contains(k, "activation-key") || strings.Contains(k, "token") {
			out[k] = Redacted
		}
	}
	return out
}

func redactIfSet(s string) string {
	if s == "" {
		return ""
	}
	return Redacted
}

// redactAuth keeps a dockerconfig "auth" well-formed: base64 of user:password.
func redactAuth(s string) string {
	if s == "" {
		return ""
	}
	return base64.StdEncoding.EncodeToString([]byte(Redacted + ":" + Redacted))
}

// redactURLCredentials replaces the user information of a proxy URL
// (http://user:password@proxy:3128).
func redactURLCredentials(s string) string {
	u, err := url.Parse(s)
	if err != nil || u.User == nil {
		if err != nil && strings.Contains(s, "@") {
			return Redacted // not a URL we can take apart: show none of it
		}
		return s
	}
	u.User = url.UserPassword(Redacted, Redacted)
	return u.String()
}
