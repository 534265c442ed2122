package render

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
	"sync/atomic"
	"text/template"

	ospv1alpha1 "github.com/osm-apiserver/osm-apiserver/pkg/apis/operatingsystemmanager/v1alpha1"
	"github.com/osm-apiserver/osm-apiserver/pkg/apis/osm"
)

// dataSchema is what templates read of templateData.
var dataSchema = newSchema(reflect.TypeFor[*templateData]())

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

// compiledConfig is one of an OSP's two configs, parsed.
type compiledConfig struct {
	kind    string // "bootstrapConfig" or "provisioningConfig", for errors
	named   []compiledTemplate
	files   []compiledFile
	units   []osm.Unit
	modules *osm.CloudInitModule
}

type compiledTemplate struct {
	name string
	exec *executable
	deps templateDeps
	memo *memo
}

type compiledFile struct {
	path        string
	permissions int32
	encoding    string
	exec        *executable
	deps        templateDeps
	memo        *memo
}

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
	sources := map[string]string{}
	for _, cr := range cfg.SupportedContainerRuntimes {
		if string(cr.Name) == runtime {
			files = append(slices.Clip(files), cr.Files...)
			for name, text := range cr.Templates {
				sources[name] = text
			}
			break
		}
	}
	for name, text := range cfg.Templates {
		sources[name] = text
	}

	names := make(map[string]bool, len(sources))
	for _, name := range sortedKeys(sources) {
		t, err := template.New(name).Funcs(funcMap).Parse(sources[name])
		if err != nil {
			return cc, templateError(ospName, kind+" template "+name, name, err)
		}
		exec, deps, err := compileTemplate(t)
		if err != nil {
			return cc, templateError(ospName, kind+" template "+name, name, err)
		}
		cc.named = append(cc.named, compiledTemplate{name: name, exec: exec, deps: deps, memo: newMemo()})
		names[name] = true
	}

	for _, f := range files {
		if f.Content.Inline == nil {
			return cc, fmt.Errorf("%s: %s file %s: no inline content", ospName, kind, f.Path)
		}
		t, err := template.New(f.Path).Funcs(funcMap).Parse(f.Content.Inline.Data)
		if err != nil {
			return cc, templateError(ospName, kind+" file "+f.Path, f.Path, err)
		}
		for _, tt := range t.Templates() {
			if tt.Tree != nil {
				rewriteNamedCalls(tt.Tree.Root, names)
			}
		}
		perms := f.Permissions
		if perms == 0 {
			perms = defaultFilePermissions
		}
		exec, deps, err := compileTemplate(t)
		if err != nil {
			return cc, templateError(ospName, kind+" file "+f.Path, f.Path, err)
		}
		cc.files = append(cc.files, compiledFile{
			path: f.Path, permissions: perms, encoding: f.Content.Inline.Encoding,
			exec: exec, deps: deps, memo: newMemo(),
		})
	}
	return cc, nil
}

// maxErrorMessage bounds the text of a template's error.
const maxErrorMessage = 1 << 10

// templateError names the OSP, what was rendered and the template line:
// `osp-ubuntu: provisioningConfig file /opt/bin/setup: template: line 12: function "foo" not defined`.
func templateError(ospName, what, tmplName string, err error) error {
	if be, line, ok := budgetLine(err, tmplName); ok {
		if line == "" {
			return fmt.Errorf("%s: %s: %w", ospName, what, be)
		}
		return fmt.Errorf("%s: %s: template: line %s: %w", ospName, what, line, be)
	}
	msg := err.Error()
	if len(msg) > maxErrorMessage {
		// {{ fail }} takes any text; errors are kept and shown in the OSC.
		msg = strings.ToValidUTF8(msg[:maxErrorMessage], "") + "…"
	}
	if rest, ok := strings.CutPrefix(msg, "template: "+tmplName+":"); ok {
		line, rest, _ := strings.Cut(rest, ":")
		// Execution errors carry a column and repeat the template's name.
		if col, after, ok := strings.Cut(rest, ":"); ok && isDigits(col) {
			rest = after
		}
		rest = strings.Replace(rest, fmt.Sprintf(" executing %q", tmplName), "", 1)
		msg = "template: line " + line + ":" + rest
	}
	return fmt.Errorf("%s: %s: %s", ospName, what, msg)
}

func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
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

// compileTemplate finds the dependencies of t, then instruments it for the
// render budget: in that order, since instrumenting rewrites t's trees.
func compileTemplate(t *template.Template) (*executable, templateDeps, error) {
	deps := analyze(t, dataSchema)
	exec, err := newExecutable(t)
	return exec, deps, err
}
