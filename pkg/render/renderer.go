package render

import (
	"errors"
	"fmt"
	"slices"
	"time"

	"k8c.io/machine-controller/sdk/providerconfig"
	"k8s.io/apimachinery/pkg/runtime"

	ospv1alpha1 "github.com/osm-apiserver/osm-apiserver/pkg/apis/operatingsystemmanager/v1alpha1"
	"github.com/osm-apiserver/osm-apiserver/pkg/apis/osm"
	"github.com/osm-apiserver/osm-apiserver/pkg/machinecontroller"
	"github.com/osm-apiserver/osm-apiserver/pkg/sandbox"
)

// Renderer renders OSPs for MachineDeployments. It keeps every OSP revision's
// parsed templates, so only the first render of a revision parses. It is safe
// for concurrent use.
type Renderer struct {
	compiled      *compileCache
	providerSpecs providerSpecCache
	containerd    containerdCache
	// renderTime bounds one Render, from the first template executed;
	// 0 means the package's default.
	renderTime time.Duration
}

// Options size a Renderer's caches and budget.
type Options struct {
	// CompiledOSPs bounds the parsed OSPs kept; <= 0 means 64.
	CompiledOSPs int
	// RenderTime bounds the templates' execution of one Render; <= 0 means
	// 1 s.
	RenderTime time.Duration
}

// NewRenderer returns a Renderer with empty caches.
func NewRenderer() *Renderer {
	return NewRendererWith(Options{})
}

// NewRendererWith returns a Renderer with empty caches of the given sizes.
// Renders of candidates under review use one of their own, with a small
// cache and a short budget, so that they never evict the parsed profiles
// of the MachineDeployments' own renders.
func NewRendererWith(o Options) *Renderer {
	if o.CompiledOSPs <= 0 {
		o.CompiledOSPs = compiledOSPs
	}
	return &Renderer{compiled: newCompileCache(o.CompiledOSPs), providerSpecs: newProviderSpecCache(), containerd: newContainerdCache(), renderTime: o.RenderTime}
}

// Render renders in.OSP for in.MachineDeployment. Neither is modified.
func (r *Renderer) Render(in Input) (*Result, error) {
	x, err := r.check(in)
	if err != nil {
		return nil, err
	}
	if err := x.parseData(); err != nil {
		return nil, err
	}
	if in.View {
		x.redactInputs()
	}
	x.fillData(r.containerd)
	limit := r.renderTime
	if limit <= 0 {
		limit = renderTime
	}
	if err := x.renderTemplates(r.compiled, limit); err != nil {
		return nil, err
	}
	if err := x.assembleConfigs(); err != nil {
		return nil, err
	}
	if in.View {
		x.redactOutputs()
	}
	res, err := x.encodePayloads()
	if err != nil {
		return nil, err
	}
	x.addEdgeScript(res)
	return res, nil
}

// rendering is one Render as it goes from phase to phase.
type rendering struct {
	in    Input
	mdRef string
	spec  *providerSpec
	pc    *providerconfig.Config
	// utility is what the MachineDeployment's OS and settings need.
	utility ospv1alpha1.ProvisioningUtility

	data      *templateData
	hostFiles []osm.File // the registry files osm-apiserver writes itself
	compiled  *compiledOSP
	// boot and prov are the configs: rendered, then completed.
	boot, prov   osm.OSCConfig
	providerSpec []byte // the OSC's cloudProviderSpec
}

// check decodes the MachineDeployment's providerSpec and checks that the OSP
// is one for its operating system, cloud and provisioning utility.
func (r *Renderer) check(in Input) (*rendering, error) {
	osp, md := in.OSP, in.MachineDeployment
	if osp == nil || md == nil {
		return nil, errors.New("render needs an OperatingSystemProfile and a MachineDeployment")
	}
	x := &rendering{in: in, mdRef: fmt.Sprintf("machinedeployment %s/%s", md.Namespace, md.Name)}
	var err error
	if x.spec, err = r.providerSpecs.get(md); err != nil {
		return nil, fmt.Errorf("%s: %w", x.mdRef, err)
	}
	x.pc = x.spec.pc
	pc := x.pc
	if string(pc.OperatingSystem) != string(osp.Spec.OSName) {
		return nil, fmt.Errorf("%s: operating system %q does not match %s, which is for %q", x.mdRef, pc.OperatingSystem, osp.Name, osp.Spec.OSName)
	}
	if err := supportsCloud(osp, pc.CloudProvider); err != nil {
		return nil, fmt.Errorf("%s: %w", x.mdRef, err)
	}
	x.utility = provisioningUtility(pc, &x.spec.os.FlatcarConfig)
	if osp.Spec.ProvisioningUtility != "" && osp.Spec.ProvisioningUtility != x.utility {
		return nil, fmt.Errorf("%s: provisioning utility %q does not match %s, which needs %q", osp.Name, osp.Spec.ProvisioningUtility, x.mdRef, x.utility)
	}
	if pc.Network.IsStaticIPConfig() && pc.OperatingSystem != providerconfig.OperatingSystemFlatcar {
		return nil, fmt.Errorf("%s: static IP configuration is not supported with %s", x.mdRef, pc.OperatingSystem)
	}
	return x, nil
}

// parseData starts the template data: the per-OS settings and what is
// parsed or generated, the steps that can fail.
func (x *rendering) parseData() error {
	x.data = &templateData{cluster: &x.in.Cluster}
	x.spec.setOSSettings(x.data)
	if err := parseData(x.data, &x.in, x.pc); err != nil {
		return fmt.Errorf("%s: %w", x.mdRef, err)
	}
	return nil
}

// fillData completes the template data from the cluster facts and node
// options (a view's, redacted by now) and writes the containerd
// configuration and registry files.
func (x *rendering) fillData(containerd containerdCache) {
	if x.in.Node.ContainerRuntime == string(ospv1alpha1.ContainerRuntimeContainerd) {
		x.data.ContainerRuntimeConfig, x.hostFiles = containerd.get(&x.in.Node)
	}
	fillData(x.data, &x.in, x.pc)
}

// renderTemplates executes the OSP's templates, overlays applied.
func (x *rendering) renderTemplates(compiledOSPs *compileCache, limit time.Duration) error {
	var err error
	if x.compiled, err = compiledOSPs.get(x.in.OSP, x.in.Overlays, x.in.Node.ContainerRuntime); err != nil {
		return err
	}
	x.boot, x.prov, err = x.compiled.render(x.data, limit)
	return err
}

// assembleConfigs adds to the rendered configs what does not come from
// templates: the registry files, RHEL's subscription, SSH keys and the
// cloudProviderSpec.
func (x *rendering) assembleConfigs() error {
	var err error
	if x.hostFiles, err = withServerFiles(x.compiled.provisioning.origins, x.hostFiles); err != nil {
		return err
	}
	x.prov.Files = append(x.prov.Files, x.hostFiles...)
	if x.pc.OperatingSystem == providerconfig.OperatingSystemRHEL {
		// Upstream replaces whatever the OSP says with the providerSpec's subscription.
		for _, c := range []*osm.OSCConfig{&x.boot, &x.prov} {
			if c.CloudInitModules == nil {
				c.CloudInitModules = &osm.CloudInitModule{}
			}
			c.CloudInitModules.RHSubscription = rhSubscription(&x.data.RhelConfig)
		}
	}
	// Results are the caller's: nothing in them may alias the Renderer's caches.
	x.boot.UserSSHKeys, x.prov.UserSSHKeys = slices.Clone(x.pc.SSHPublicKeys), slices.Clone(x.pc.SSHPublicKeys)
	x.providerSpec = slices.Clone(x.pc.CloudProviderSpec.Raw)
	return nil
}

// encodePayloads builds the OperatingSystemConfig spec and encodes both its
// configs as user-data, cloud-init or Ignition.
func (x *rendering) encodePayloads() (*Result, error) {
	osp := x.in.OSP
	res := &Result{Config: osm.OperatingSystemConfigSpec{
		OSName:    string(osp.Spec.OSName),
		OSVersion: osp.Spec.OSVersion,
		CloudProvider: osm.CloudProviderSpec{
			Name: string(x.pc.CloudProvider),
			Spec: runtime.RawExtension{Raw: x.providerSpec},
		},
		BootstrapConfig:     x.boot,
		ProvisioningConfig:  x.prov,
		ProvisioningUtility: string(ospv1alpha1.ProvisioningUtilityCloudInit),
	}}
	if osp.Spec.ProvisioningUtility != "" {
		res.Config.ProvisioningUtility = string(osp.Spec.ProvisioningUtility)
	}
	target := payloadTarget{
		format:            payloadFormat(x.utility),
		cloudProvider:     string(x.pc.CloudProvider),
		machineDeployment: x.in.MachineDeployment.Name,
		distUpgradeOnBoot: x.spec.distUpgradeOnBoot,
	}
	if err := target.encodeAll(res); err != nil {
		return nil, fmt.Errorf("%s for %s: %w", osp.Name, x.mdRef, err)
	}
	return res, nil
}

// addEdgeScript adds the join script of a MachineDeployment on cloud
// provider edge.
func (x *rendering) addEdgeScript(res *Result) {
	if string(x.pc.CloudProvider) != machinecontroller.CloudProviderEdge {
		return
	}
	md := x.in.MachineDeployment
	var carried []byte // the script fetches the bootstrap payload
	if x.compiled.bootstrap.templates.Reads(machineJoinField) {
		carried = res.Bootstrap.UserData
	}
	script := edgeScript(&x.in.Cluster, md.Namespace, md.Name, carried)
	res.EdgeScript = &script
}

// retryTimedOut is how long a revision that ran out of time fails at once
// before a render tries it again: long enough that a hanging OSP costs one
// render time per minute, not one per MD; short enough that an OSP that was
// only slowed by a busy machine renders again soon.
const retryTimedOut = time.Minute

// renderTime bounds one Render by default, from the first template executed.
var renderTime = time.Second

// render executes the templates of both configs within one budget. A
// revision that exceeded its budget fails at once after that: renders for
// the OSP's other MachineDeployments would spend the same, and the syncer
// and the API must not wait for them.
func (c *compiledOSP) render(data *templateData, limit time.Duration) (boot, prov osm.OSCConfig, err error) {
	if f := c.failed.Load(); f != nil && (f.retry.IsZero() || time.Now().Before(f.retry)) {
		return boot, prov, f.err
	}
	b := sandbox.NewBudget(limit)
	if boot, err = c.bootstrap.render(c.name, data, b); err == nil {
		prov, err = c.provisioning.render(c.name, data, b)
	}
	var be *sandbox.BudgetError
	if errors.As(err, &be) {
		f := &revisionFailure{err: fmt.Errorf("%w (not rendered again for this revision of the OSP)", err)}
		if be.Timeout() {
			f.retry = time.Now().Add(retryTimedOut)
			f.err = fmt.Errorf("%w (tried again after %s)", err, retryTimedOut)
		}
		c.failed.Store(f)
		return boot, prov, f.err
	}
	if err == nil && c.failed.Load() != nil {
		c.failed.Store(nil) // a retry after running out of time succeeded
	}
	return boot, prov, err
}

// render executes one config's templates: named templates first, then files.
// Templates whose inputs match an earlier render reuse its output.
func (c *compiledConfig) render(ospName string, data *templateData, b *sandbox.Budget) (osm.OSCConfig, error) {
	x, err := c.templates.Start(data, b)
	if err != nil {
		return osm.OSCConfig{}, c.error(ospName, err)
	}
	out := osm.OSCConfig{Files: make([]osm.File, 0, len(c.files)+4)}
	for i := range c.files {
		f := &c.files[i]
		content := f.literal
		if f.template >= 0 {
			if content, err = x.Execute(f.template); err != nil {
				return osm.OSCConfig{}, c.error(ospName, err)
			}
		}
		out.Files = append(out.Files, osm.File{
			Path:        f.path,
			Permissions: f.permissions,
			Content:     osm.FileContent{Inline: &osm.FileContentInline{Encoding: f.encoding, Data: content}},
		})
	}
	if c.units != nil {
		out.Units = make([]osm.Unit, len(c.units))
		for i := range c.units {
			c.units[i].DeepCopyInto(&out.Units[i])
		}
	}
	out.CloudInitModules = c.modules.DeepCopy()
	return out, nil
}
