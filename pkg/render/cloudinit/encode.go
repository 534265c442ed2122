// Package cloudinit writes an OperatingSystemConfig's files, units, SSH keys and
// modules as a "#cloud-config" document, shaped like upstream OSM's output.
package cloudinit

import (
	"fmt"

	"github.com/osm-apiserver/osm-apiserver/pkg/apis/osm"
	"github.com/osm-apiserver/osm-apiserver/pkg/machinecontroller"
)

// machineNameFile is where the OSPs' scripts look for the node's name.
const machineNameFile = "/etc/machine-name"

// Options are the parts of a payload that depend on more than the config itself.
type Options struct {
	// Hostname, when set, becomes the node's hostname and the content of
	// /etc/machine-name. See Hostname for upstream's rule.
	Hostname string
	// DistUpgradeOnBoot upgrades all packages on first boot, rebooting if needed
	// (the providerSpec's operatingSystemSpec.distUpgradeOnBoot).
	DistUpgradeOnBoot bool
}

// Hostname returns the hostname a payload sets, "" for none. Like upstream, only
// bootstrap payloads set one, and never on AWS, where kube-proxy needs the
// hostname to stay the instance's private DNS name. On edge machine-controller
// does not replace the placeholder, so the MachineDeployment's name is used.
func Hostname(payload osm.PayloadType, cloudProvider, machineDeployment string) string {
	switch {
	case payload != osm.PayloadTypeBootstrap, cloudProvider == "aws":
		return ""
	case cloudProvider == "edge":
		return machineDeployment
	}
	return machinecontroller.MachineNamePlaceholder
}

// Encode writes cfg as a "#cloud-config" document, what a node needs, as
// upstream emits it, with the settings of opts that do not come from cfg.
func Encode(cfg osm.OSCConfig, opts Options) ([]byte, error) {
	b := make([]byte, 0, sizeHint(cfg))
	b = append(b, "#cloud-config\n"...)
	var err error
	if opts.Hostname != "" {
		b = append(b, "hostname: "...)
		if b, err = appendQuoted(b, opts.Hostname); err != nil {
			return nil, fmt.Errorf("hostname: %w", err)
		}
		b = append(b, '\n')
	}
	if opts.DistUpgradeOnBoot {
		b = append(b, "package_upgrade: true\npackage_reboot_if_required: true\n"...)
	}
	b = append(b, "ssh_pwauth: false\n"...)
	if b, err = appendList(b, "ssh_authorized_keys", cfg.UserSSHKeys); err != nil {
		return nil, err
	}
	if b, err = appendFiles(b, cfg.Files, opts.Hostname); err != nil {
		return nil, err
	}
	if b, err = appendUnits(b, cfg.Units); err != nil {
		return nil, err
	}
	if b, err = appendModules(b, cfg.CloudInitModules); err != nil {
		return nil, err
	}
	return b, nil
}

// sizeHint estimates the output size, so that the buffer grows at most once.
func sizeHint(cfg osm.OSCConfig) int {
	n := 512
	for i := range cfg.Files {
		if in := cfg.Files[i].Content.Inline; in != nil {
			n += 64 + len(in.Data)*4/3 + len(in.Data)/16
		}
	}
	for i := range cfg.Units {
		if c := cfg.Units[i].Content; c != nil {
			n += 128 + len(*c) + len(*c)/8
		}
	}
	return n
}

// appendList appends key with items as a list of strings; nothing when there are none.
func appendList(b []byte, key string, items []string) ([]byte, error) {
	if len(items) == 0 {
		return b, nil
	}
	b = append(b, key...)
	b = append(b, ":\n"...)
	var err error
	for i, item := range items {
		b = append(b, "- "...)
		if b, err = appendQuoted(b, item); err != nil {
			return nil, fmt.Errorf("%s[%d]: %w", key, i, err)
		}
		b = append(b, '\n')
	}
	return b, nil
}

// appendFiles appends write_files. Content marked b64 in the OSP is written
// base64-encoded, as upstream does; plain content is written as a literal block,
// or base64-encoded too when a literal block could not carry it exactly.
func appendFiles(b []byte, files []osm.File, hostname string) ([]byte, error) {
	if len(files) == 0 && hostname == "" {
		return b, nil
	}
	b = append(b, "write_files:\n"...)
	var err error
	for i := range files {
		f := &files[i]
		b = append(b, "- path: "...)
		if b, err = appendQuoted(b, f.Path); err != nil {
			return nil, fmt.Errorf("file %q: path: %w", f.Path, err)
		}
		if b, err = appendPermissions(b, f.Permissions); err != nil {
			return nil, fmt.Errorf("file %s: %w", f.Path, err)
		}
		var data, encoding string
		if f.Content.Inline != nil {
			data, encoding = f.Content.Inline.Data, f.Content.Inline.Encoding
		}
		switch {
		case data == "":
			b = append(b, "\n  content: ''\n"...)
		case encoding == "" && literalSafe(data):
			b = append(b, "\n  content: "...)
			b = appendLiteral(b, data, 4)
		case encoding == "" || encoding == "b64":
			b = append(b, "\n  encoding: b64\n  content: '"...)
			b = appendBase64(b, data)
			b = append(b, "'\n"...)
		default:
			return nil, fmt.Errorf("file %s: unknown encoding %q, want b64 or none", f.Path, encoding)
		}
	}
	if hostname != "" {
		b = append(b, "- path: "+machineNameFile+"\n  permissions: '0600'\n  content: "...)
		if b, err = appendQuoted(b, hostname); err != nil {
			return nil, fmt.Errorf("hostname: %w", err)
		}
		b = append(b, '\n')
	}
	return b, nil
}

// appendPermissions appends p, octal digits written as a decimal number, as the
// octal string cloud-init expects. Zero means unset: the CRD defaults it to 644.
func appendPermissions(b []byte, p int32) ([]byte, error) {
	if p == 0 {
		p = 644
	}
	if p < 0 || p > 7777 {
		return nil, fmt.Errorf("permissions %d are not 3 or 4 octal digits", p)
	}
	var d [4]byte
	for i, v := 3, p; i >= 0; i, v = i-1, v/10 {
		if v%10 > 7 {
			return nil, fmt.Errorf("permissions %d are not octal digits", p)
		}
		d[i] = byte('0' + v%10)
	}
	b = append(b, "\n  permissions: '"...)
	b = append(b, d[:]...)
	return append(b, '\''), nil
}
