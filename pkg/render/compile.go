package render

import (
	"errors"
	"fmt"
	"reflect"
	"slices"
	"sync/atomic"
	"time"

	ospv1alpha1 "github.com/osm-apiserver/osm-apiserver/pkg/apis/operatingsystemmanager/v1alpha1"
	"github.com/osm-apiserver/osm-apiserver/pkg/apis/osm"
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

// compiledConfig is one of an OSP's two configs, parsed: its named
// templates are the set's shared templates, its files the set's templates.
type compiledConfig struct {
	kind      string // "bootstrapConfig" or "provisioningConfig", for errors
	templates *sandbox.Set
	files     []compiledFile
	units     []osm.Unit
	modules   *osm.CloudInitModule
}

type compiledFile struct {
	path        string
	permissions int32
	encoding    string
}

// dataType is the type of what templates execute with.
var dataType = reflect.TypeFor[*templateData]()

// compile parses the OSP's templates for the given container runtime.
func compile(osp *ospv1alpha1.OperatingSystemProfile, runtime string) (*compiledOSP, error) {
	c := &compiledOSP{name: osp.Name}
	var err error
	if c.bootstrap, err = compileConfig(osp.Name, "bootstrapConfig", &osp.Spec.BootstrapConfig, runtime); err != nil {
		return nil, err
	}
	if c.provisioning, err = compileConfig(osp.Name, "provisioningConfig", &osp.Spec.ProvisioningConfig, runtime); err != nil {
		return nil, err
	}
	return c, nil
}

func compileConfig(ospName, kind string, cfg *ospv1alpha1.OSPConfig, runtime string) (compiledConfig, error) {
	cc := compiledConfig{kind: kind, units: convertUnits(cfg.Units), modules: convertModules(cfg.CloudInitModules)}

	// The selected runtime's files follow the config's own; its named templates
	// are overridden by the config's templates of the same name.
	files := cfg.Files
	src := sandbox.Sources{Data: dataType, Shared: map[string]string{}}
	for _, cr := range cfg.SupportedContainerRuntimes {
		if string(cr.Name) == runtime {
			files = append(slices.Clip(files), cr.Files...)
			for name, text := range cr.Templates {
				src.Shared[name] = text
			}
			break
		}
	}
	for name, text := range cfg.Templates {
		src.Shared[name] = text
	}

	// The files before one without inline content are compiled, so that
	// their errors come first, as the config reads.
	var noInline error
	for _, f := range files {
		if f.Content.Inline == nil {
			noInline = fmt.Errorf("%s: %s file %s: no inline content", ospName, kind, f.Path)
			break
		}
		perms := f.Permissions
		if perms == 0 {
			perms = defaultFilePermissions
		}
		src.Templates = append(src.Templates, sandbox.Source{Name: f.Path, Text: f.Content.Inline.Data})
		cc.files = append(cc.files, compiledFile{path: f.Path, permissions: perms, encoding: f.Content.Inline.Encoding})
	}
	var err error
	if cc.templates, err = sandbox.Compile(src); err != nil {
		return cc, configError(ospName, kind, err)
	}
	return cc, noInline
}

// configError names the OSP, the config and its template or file that failed:
// `osp-ubuntu: provisioningConfig file /opt/bin/setup: template: line 12: function "foo" not defined`.
func configError(ospName, kind string, err error) error {
	var te *sandbox.Error
	if !errors.As(err, &te) {
		return fmt.Errorf("%s: %s: %w", ospName, kind, err)
	}
	what := " file "
	if te.Shared {
		what = " template "
	}
	return fmt.Errorf("%s: %s%s%s: %w", ospName, kind, what, te.Name, err)
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
