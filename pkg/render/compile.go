package render

import (
	"errors"
	"fmt"
	"reflect"
	"sync/atomic"
	"time"

	ospv1alpha1 "github.com/osm-apiserver/osm-apiserver/pkg/apis/operatingsystemmanager/v1alpha1"
	"github.com/osm-apiserver/osm-apiserver/pkg/apis/osm"
	overlaysv1alpha1 "github.com/osm-apiserver/osm-apiserver/pkg/apis/overlays/v1alpha1"
	"github.com/osm-apiserver/osm-apiserver/pkg/sandbox"
)

// defaultFilePermissions applies to OSP files without permissions, as upstream.
const defaultFilePermissions = 644

// compiledOSP is an OSP's templates parsed for one container runtime. It is
// immutable once built and shared by concurrent renders, except for failed,
// which a render that exceeded its budget sets (renderer.go).
type compiledOSP struct {
	name         string
	bootstrap    compiledConfig
	provisioning compiledConfig
	failed       atomic.Pointer[revisionFailure]
}

// revisionFailure is a budget failure a revision of an OSP keeps; one that ran
// out of time is kept until retry, then the next render tries again.
type revisionFailure struct {
	err   error
	retry time.Time // zero: for as long as the revision is cached
}

// compiledConfig is one of an OSP's two configs, with its overlays, parsed:
// its named templates are the set's shared templates, its files the set's
// templates (literal files aside).
type compiledConfig struct {
	kind      string // "bootstrapConfig" or "provisioningConfig", for errors
	templates *sandbox.Set
	files     []compiledFile
	units     []osm.Unit
	modules   *osm.CloudInitModule
	// origins are the overlays that set templates and files, by template
	// name (and the shared templates' by name), for errors.
	origins, sharedOrigins map[string]string
}

type compiledFile struct {
	path        string
	permissions int32
	encoding    string
	// template is the file's index in the set; -1 for literal text.
	template int
	literal  string
}

// dataType is the type of what templates execute with.
var dataType = reflect.TypeFor[*templateData]()

// compile parses the OSP's templates, with its overlays applied in order,
// for the given container runtime.
func compile(osp *ospv1alpha1.OperatingSystemProfile, overlays []*overlaysv1alpha1.OperatingSystemProfileOverlay, runtime string) (*compiledOSP, error) {
	c := &compiledOSP{name: osp.Name}
	// Flatcar's payloads write units; cloud-init elsewhere does not, so
	// the overlays' units become files there. Ignition runs no modules.
	nativeUnits := osp.Spec.OSName == ospv1alpha1.OperatingSystemFlatcar
	modules := osp.Spec.ProvisioningUtility != ospv1alpha1.ProvisioningUtilityIgnition
	for _, cfg := range []struct {
		kind string
		spec *ospv1alpha1.OSPConfig
		out  *compiledConfig
	}{
		{"bootstrapConfig", &osp.Spec.BootstrapConfig, &c.bootstrap},
		{"provisioningConfig", &osp.Spec.ProvisioningConfig, &c.provisioning},
	} {
		src, noInline := newConfigSource(osp.Name, cfg.kind, cfg.spec, runtime)
		if noInline == nil {
			if err := src.applyOverlays(overlays, nativeUnits, modules); err != nil {
				return nil, err
			}
		}
		var err error
		if *cfg.out, err = compileConfig(osp.Name, src); err != nil {
			return nil, err
		}
		if noInline != nil {
			return nil, noInline
		}
	}
	return c, nil
}

func compileConfig(ospName string, c *configSource) (compiledConfig, error) {
	cc := compiledConfig{kind: c.kind, units: c.units, modules: c.modules, origins: map[string]string{}, sharedOrigins: c.sharedOrigin}
	src := sandbox.Sources{Data: dataType, Shared: c.shared}
	for _, f := range c.files {
		perms := f.permissions
		if perms == 0 {
			perms = defaultFilePermissions
		}
		cf := compiledFile{path: f.path, permissions: perms, encoding: f.encoding, template: -1}
		if f.literal {
			cf.literal = f.text
		} else {
			cf.template = len(src.Templates)
			src.Templates = append(src.Templates, sandbox.Source{Name: f.path, Text: f.text})
		}
		if f.origin != "" {
			cc.origins[f.path] = f.origin
		}
		cc.files = append(cc.files, cf)
	}
	var err error
	if cc.templates, err = sandbox.Compile(src); err != nil {
		return cc, cc.error(ospName, err)
	}
	return cc, nil
}

// error names the OSP, the config and its template or file that failed:
// `osp-ubuntu: provisioningConfig file /opt/bin/setup: template: line 12: function "foo" not defined`,
// or the overlay that brought it: `overlay team-a/ca: provisioningConfig file ...`.
func (c *compiledConfig) error(ospName string, err error) error {
	var te *sandbox.Error
	if errors.As(err, &te) {
		origin := c.origins[te.Name]
		if te.Shared {
			origin = c.sharedOrigins[te.Name]
		}
		if origin != "" {
			return &OverlayError{Overlay: origin, Err: configError(ospName, c.kind, err, false)}
		}
	}
	return configError(ospName, c.kind, err, true)
}

// configError says which config and template or file failed, after the
// OSP's name when withOSP.
func configError(ospName, kind string, err error, withOSP bool) error {
	prefix := kind
	if withOSP {
		prefix = ospName + ": " + kind
	}
	var te *sandbox.Error
	if !errors.As(err, &te) {
		return fmt.Errorf("%s: %w", prefix, err)
	}
	what := " file "
	if te.Shared {
		what = " template "
	}
	return fmt.Errorf("%s%s%s: %w", prefix, what, te.Name, err)
}

func convertUnits(units []ospv1alpha1.Unit) []osm.Unit {
	if units == nil {
		return nil
	}
	out := make([]osm.Unit, len(units))
	for i := range units {
		u := units[i].DeepCopy() // the OSP comes from a shared cache
		out[i] = osm.Unit{Name: u.Name, Enable: u.Enable, Mask: u.Mask, Content: u.Content}
		for _, d := range u.DropIns {
			out[i].DropIns = append(out[i].DropIns, osm.DropIn{Name: d.Name, Content: d.Content})
		}
	}
	return out
}

func convertModules(m *ospv1alpha1.CloudInitModule) *osm.CloudInitModule {
	if m == nil {
		return nil
	}
	m = m.DeepCopy() // the OSP comes from a shared cache
	return &osm.CloudInitModule{
		BootCMD:        m.BootCMD,
		RHSubscription: m.RHSubscription,
		RunCMD:         m.RunCMD,
		YumRepos:       m.YumRepos,
		YumRepoDir:     m.YumRepoDir,
	}
}
