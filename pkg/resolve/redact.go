package resolve

import (
	"slices"
	"strings"

	"github.com/osm-apiserver/osm-apiserver/pkg/apis/osm"
	"github.com/osm-apiserver/osm-apiserver/pkg/render"
)

// Redacted replaces secrets in the OperatingSystemConfig view. The payloads,
// a separate resource with its own RBAC, keep them.
const Redacted = "<redacted>"

// minSecretLen keeps short values (an empty password, "x") from being replaced
// all over the config.
const minSecretLen = 6

// secrets returns the values to redact, longest first so that a token is
// replaced before a part of it.
func secrets(kubelet, fetch string, node render.NodeOptions) []string {
	var out []string
	add := func(s string) {
		if len(s) >= minSecretLen {
			out = append(out, s)
		}
	}
	add(kubelet)
	if _, secret, ok := strings.Cut(kubelet, "."); ok {
		add(secret)
	}
	add(fetch)
	for _, auth := range node.RegistryCredentials {
		add(auth.Password)
		add(auth.Auth)
		add(auth.IdentityToken)
	}
	slices.SortFunc(out, func(a, b string) int { return len(b) - len(a) })
	return slices.Compact(out)
}

// redact replaces every secret in the file contents, units and cloud-init
// commands of cfg, which must be the caller's own copy.
func redact(cfg *osm.OperatingSystemConfigSpec, secrets []string) {
	if len(secrets) == 0 {
		return
	}
	pairs := make([]string, 0, 2*len(secrets))
	for _, s := range secrets {
		pairs = append(pairs, s, Redacted)
	}
	r := &replacer{secrets: secrets, r: strings.NewReplacer(pairs...)}
	for _, c := range []*osm.OSCConfig{&cfg.BootstrapConfig, &cfg.ProvisioningConfig} {
		redactConfig(c, r)
	}
}

// replacer replaces secrets, and leaves a string without any as it is:
// strings.Replacer copies every string, and the copies would be cached.
type replacer struct {
	secrets []string
	r       *strings.Replacer
}

func (r *replacer) Replace(s string) string {
	for _, secret := range r.secrets {
		if strings.Contains(s, secret) {
			return r.r.Replace(s)
		}
	}
	return s
}

func redactConfig(c *osm.OSCConfig, r *replacer) {
	for i := range c.Files {
		if in := c.Files[i].Content.Inline; in != nil {
			in.Data = r.Replace(in.Data)
		}
	}
	for i := range c.Units {
		u := &c.Units[i]
		if u.Content != nil {
			s := r.Replace(*u.Content)
			u.Content = &s
		}
		for j := range u.DropIns {
			u.DropIns[j].Content = r.Replace(u.DropIns[j].Content)
		}
	}
	if m := c.CloudInitModules; m != nil {
		for i := range m.RunCMD {
			m.RunCMD[i] = r.Replace(m.RunCMD[i])
		}
		for i := range m.BootCMD {
			m.BootCMD[i] = r.Replace(m.BootCMD[i])
		}
		for k, v := range m.RHSubscription {
			// Subscription credentials come from the MD, not from us.
			if strings.Contains(k, "password") || strings.Contains(k, "activation-key") {
				m.RHSubscription[k] = Redacted
			} else {
				m.RHSubscription[k] = r.Replace(v)
			}
		}
	}
}
