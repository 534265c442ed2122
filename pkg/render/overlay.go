package render

import (
	"fmt"
	"slices"
	"sync"

	ospv1alpha1 "github.com/osm-apiserver/osm-apiserver/pkg/apis/operatingsystemmanager/v1alpha1"
	"github.com/osm-apiserver/osm-apiserver/pkg/apis/osm"
	overlaysv1alpha1 "github.com/osm-apiserver/osm-apiserver/pkg/apis/overlays/v1alpha1"
	"github.com/osm-apiserver/osm-apiserver/pkg/sandbox"
)

// configSource is one config of a profile with its overlays applied: the
// files, named templates, units and modules compileConfig parses. Each item
// remembers the overlay that set it (origin, "namespace/name"; "" for the
// profile's own), for errors and to refuse a second overlay setting it.
type configSource struct {
	kind         string // "bootstrapConfig" or "provisioningConfig"
	files        []sourceFile
	shared       map[string]string
	sharedOrigin map[string]string
	units        []osm.Unit
	unitOrigin   map[string]string
	dropInOrigin map[string]string // by unit + "/" + drop-in
	modules      *osm.CloudInitModule
	repoOrigin   map[string]string
	// unitCommands enable or mask overlays' units written as files, and
	// runCMD are the overlays' commands: both follow the profile's.
	unitCommands, runCMD []string
}

// sourceFile is one file of a config: a template, or literal text (a unit
// written as a file is not a template, as a profile's unit is not).
type sourceFile struct {
	path        string
	permissions int32
	encoding    string
	text        string
	literal     bool
	origin      string
}

// systemdDir is where cloud-init writes an overlay's units as files.
const systemdDir = "/etc/systemd/system/"

// newConfigSource is one config of a profile for the given container
// runtime: the runtime's files follow the config's own, and the config's
// named templates override the runtime's of the same name.
func newConfigSource(ospName, kind string, cfg *ospv1alpha1.OSPConfig, runtime string) (*configSource, error) {
	c := &configSource{
		kind: kind, shared: map[string]string{}, sharedOrigin: map[string]string{},
		units: convertUnits(cfg.Units), modules: convertModules(cfg.CloudInitModules),
		unitOrigin: map[string]string{}, dropInOrigin: map[string]string{}, repoOrigin: map[string]string{},
	}
	files := cfg.Files
	for _, cr := range cfg.SupportedContainerRuntimes {
		if string(cr.Name) == runtime {
			files = append(slices.Clip(files), cr.Files...)
			for name, text := range cr.Templates {
				c.shared[name] = text
			}
			break
		}
	}
	for name, text := range cfg.Templates {
		c.shared[name] = text
	}
	for _, f := range files {
		if f.Content.Inline == nil {
			// The files before it are compiled, so that their errors come first.
			return c, fmt.Errorf("%s: %s file %s: no inline content", ospName, kind, f.Path)
		}
		c.files = append(c.files, sourceFile{path: f.Path, permissions: f.Permissions, encoding: f.Content.Inline.Encoding, text: f.Content.Inline.Data})
	}
	return c, nil
}

// OverlayRef names an overlay in errors and statuses: "namespace/name".
func OverlayRef(o *overlaysv1alpha1.OperatingSystemProfileOverlay) string {
	return o.Namespace + "/" + o.Name
}

// applyOverlays applies the overlays, in order, to c: first their templates,
// files, units and modules, then their drop-ins, so that a drop-in lands on
// the unit as every overlay left it. nativeUnits says the payload format
// writes units (Flatcar); otherwise units become files and commands.
func (c *configSource) applyOverlays(overlays []*overlaysv1alpha1.OperatingSystemProfileOverlay, nativeUnits, modules bool) error {
	for _, o := range overlays {
		oc := c.overlayConfig(o)
		if err := c.apply(OverlayRef(o), oc, nativeUnits, modules); err != nil {
			return err
		}
	}
	for _, o := range overlays {
		for _, d := range c.overlayConfig(o).DropIns {
			if err := c.addDropIn(OverlayRef(o), d, nativeUnits); err != nil {
				return err
			}
		}
	}
	if len(c.unitCommands) > 0 || len(c.runCMD) > 0 {
		// The profile's commands, then those of the overlays' units (after
		// a daemon-reload), then the overlays' own, in the overlays' order.
		m := c.moduleSet()
		m.RunCMD = slices.Concat(m.RunCMD, c.unitCommands, c.runCMD)
	}
	return nil
}

func (c *configSource) overlayConfig(o *overlaysv1alpha1.OperatingSystemProfileOverlay) *overlaysv1alpha1.OverlayConfig {
	if c.kind == "bootstrapConfig" {
		return &o.Spec.BootstrapConfig
	}
	return &o.Spec.ProvisioningConfig
}

func (c *configSource) apply(origin string, oc *overlaysv1alpha1.OverlayConfig, nativeUnits, modules bool) error {
	for name, text := range oc.Templates {
		if prev := c.sharedOrigin[name]; prev != "" {
			return c.conflict(prev, origin, "template "+name)
		}
		c.shared[name], c.sharedOrigin[name] = text, origin
	}
	for _, f := range oc.Files {
		if f.Content.Inline == nil {
			return &OverlayError{Overlay: origin, Err: fmt.Errorf("%s file %s: no inline content", c.kind, f.Path)}
		}
		in := f.Content.Inline
		if err := c.setFile(sourceFile{path: f.Path, permissions: f.Permissions, encoding: in.Encoding, text: in.Data, origin: origin}); err != nil {
			return err
		}
	}
	for i := range oc.Units {
		if err := c.setUnit(origin, &oc.Units[i], nativeUnits); err != nil {
			return err
		}
	}
	if m := oc.Modules; m != nil {
		if !modules && (len(m.BootCMD) > 0 || len(m.RunCMD) > 0 || len(m.YumRepos) > 0) {
			return &OverlayError{Overlay: origin, Err: fmt.Errorf("%s: modules: Ignition payloads run no cloud-init modules; use units", c.kind)}
		}
		set := c.moduleSet()
		set.BootCMD = append(set.BootCMD, m.BootCMD...)
		c.runCMD = append(c.runCMD, m.RunCMD...)
		for _, name := range sortedKeys(m.YumRepos) {
			if prev := c.repoOrigin[name]; prev != "" {
				return c.conflict(prev, origin, "yum repository "+name)
			}
			if set.YumRepos == nil {
				set.YumRepos = map[string]map[string]string{}
			}
			set.YumRepos[name], c.repoOrigin[name] = cloneMap(m.YumRepos[name]), origin
		}
	}
	return nil
}

// setFile adds f, or replaces the profile's file of its path; a path another
// overlay set is a conflict.
func (c *configSource) setFile(f sourceFile) error {
	for i := range c.files {
		if c.files[i].path != f.path {
			continue
		}
		if prev := c.files[i].origin; prev != "" {
			return c.conflict(prev, f.origin, "file "+f.path)
		}
		c.files[i] = f
		return nil
	}
	c.files = append(c.files, f)
	return nil
}

// setUnit adds u, or replaces the profile's unit of its name. Without native
// units it is written as a file (its drop-ins too), enabled or masked by a
// command.
func (c *configSource) setUnit(origin string, u *ospv1alpha1.Unit, nativeUnits bool) error {
	if prev := c.unitOrigin[u.Name]; prev != "" {
		return c.conflict(prev, origin, "unit "+u.Name)
	}
	c.unitOrigin[u.Name] = origin
	if !nativeUnits {
		if u.Content != nil {
			if err := c.setFile(sourceFile{path: systemdDir + u.Name, permissions: 644, text: *u.Content, literal: true, origin: origin}); err != nil {
				return err
			}
		}
		for _, d := range u.DropIns {
			if err := c.addDropIn(origin, overlaysv1alpha1.UnitDropIn{Unit: u.Name, Name: d.Name, Content: d.Content}, false); err != nil {
				return err
			}
		}
		if u.Mask != nil && *u.Mask {
			c.unitCommand("systemctl mask --now " + u.Name)
		} else if u.Enable != nil && *u.Enable {
			c.unitCommand("systemctl enable --now --no-block " + u.Name)
		}
		return nil
	}
	unit := convertUnits([]ospv1alpha1.Unit{*u})[0]
	for _, d := range unit.DropIns {
		c.dropInOrigin[u.Name+"/"+d.Name] = origin
	}
	if i := slices.IndexFunc(c.units, func(x osm.Unit) bool { return x.Name == u.Name }); i >= 0 {
		c.units[i] = unit
		return nil
	}
	c.units = append(c.units, unit)
	return nil
}

// addDropIn adds d to its unit, replacing the profile's drop-in of its name;
// without native units it is written as a file.
func (c *configSource) addDropIn(origin string, d overlaysv1alpha1.UnitDropIn, nativeUnits bool) error {
	key := d.Unit + "/" + d.Name
	if prev := c.dropInOrigin[key]; prev != "" && prev != origin {
		return c.conflict(prev, origin, "drop-in "+key)
	}
	c.dropInOrigin[key] = origin
	if !nativeUnits {
		c.unitCommand("") // a daemon-reload, at least
		return c.setFile(sourceFile{path: systemdDir + d.Unit + ".d/" + d.Name, permissions: 644, text: d.Content, literal: true, origin: origin})
	}
	i := slices.IndexFunc(c.units, func(x osm.Unit) bool { return x.Name == d.Unit })
	if i < 0 {
		c.units = append(c.units, osm.Unit{Name: d.Unit})
		i = len(c.units) - 1
	}
	u := &c.units[i]
	in := osm.DropIn{Name: d.Name, Content: d.Content}
	if j := slices.IndexFunc(u.DropIns, func(x osm.DropIn) bool { return x.Name == d.Name }); j >= 0 {
		u.DropIns[j] = in
	} else {
		u.DropIns = append(u.DropIns, in)
	}
	return nil
}

// unitCommand adds a command for an overlay's unit written as a file, after
// the daemon-reload that makes systemd read it; "" adds only that.
func (c *configSource) unitCommand(cmd string) {
	if len(c.unitCommands) == 0 {
		c.unitCommands = append(c.unitCommands, "systemctl daemon-reload")
	}
	if cmd != "" {
		c.unitCommands = append(c.unitCommands, cmd)
	}
}

func (c *configSource) moduleSet() *osm.CloudInitModule {
	if c.modules == nil {
		c.modules = &osm.CloudInitModule{}
	}
	return c.modules
}

func (c *configSource) conflict(first, second, what string) error {
	return &OverlayConflictError{Overlays: [2]string{first, second}, Config: c.kind, What: what}
}

// OverlayError is a failure of one overlay: it does not parse or execute, is
// invalid, or sets what it may not. The error of every render it makes fail
// wraps one, so that the overlay's status can say so.
type OverlayError struct {
	// Overlay is "namespace/name".
	Overlay string
	Err     error
}

func (e *OverlayError) Error() string {
	return "overlay " + e.Overlay + ": " + e.Err.Error()
}

func (e *OverlayError) Unwrap() error {
	return e.Err
}

// OverlayConflictError says two overlays applying to one MachineDeployment
// set the same file, unit, drop-in, named template or yum repository: the
// render fails rather than pick one (docs/overlays.md).
type OverlayConflictError struct {
	// Overlays are the two, in the order they apply.
	Overlays [2]string
	// Config is bootstrapConfig or provisioningConfig.
	Config string
	// What both set, e.g. "file /etc/chrony/chrony.conf".
	What string
}

func (e *OverlayConflictError) Error() string {
	return fmt.Sprintf("overlay conflict: overlays %s and %s both set %s in %s", e.Overlays[0], e.Overlays[1], e.What, e.Config)
}

func cloneMap(m map[string]string) map[string]string {
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// withServerFiles returns the files osm-apiserver writes from its node
// options (containerd's hosts.toml per registry) that the config keeps. An
// overlay's file replaces one only where no option configured it (the
// docker.io hosts.toml written by default); where an option did, neither
// may silently win and the render fails.
func withServerFiles(origins map[string]string, serverFiles []osm.File) ([]osm.File, error) {
	out := serverFiles[:0:0]
	for _, f := range serverFiles {
		origin := origins[f.Path]
		switch {
		case origin == "":
			out = append(out, f)
		case !isDefaultHostsFile(f):
			return nil, &OverlayError{Overlay: origin, Err: fmt.Errorf("provisioningConfig file %s: osm-apiserver writes it from its --node-* registry options", f.Path)}
		}
	}
	return out, nil
}

// defaultHostsFiles are the hosts.toml files written without any registry option.
var defaultHostsFiles = sync.OnceValue(func() []osm.File { return registryHostFiles(&NodeOptions{}) })

func isDefaultHostsFile(f osm.File) bool {
	for _, d := range defaultHostsFiles() {
		if d.Path == f.Path && d.Content.Inline.Data == f.Content.Inline.Data {
			return true
		}
	}
	return false
}

// CheckOverlay parses o's named templates and files on their own, as a
// render would, so that an overlay whose templates do not parse says so
// before (and whether or not) it applies to a MachineDeployment. Calls of a
// profile's named templates are left to the render.
func CheckOverlay(o *overlaysv1alpha1.OperatingSystemProfileOverlay) error {
	for _, kind := range []string{"bootstrapConfig", "provisioningConfig"} {
		oc := (&configSource{kind: kind}).overlayConfig(o)
		src := sandbox.Sources{Data: dataType, Shared: oc.Templates}
		for _, f := range oc.Files {
			if f.Content.Inline == nil {
				return &OverlayError{Overlay: OverlayRef(o), Err: fmt.Errorf("%s file %s: no inline content", kind, f.Path)}
			}
			src.Templates = append(src.Templates, sandbox.Source{Name: f.Path, Text: f.Content.Inline.Data})
		}
		if _, err := sandbox.Compile(src); err != nil {
			return &OverlayError{Overlay: OverlayRef(o), Err: configError("", kind, err, false)}
		}
	}
	return nil
}
