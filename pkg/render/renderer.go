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
}

// NewRenderer returns a Renderer with empty caches.
func NewRenderer() *Renderer {
	return &Renderer{compiled: newCompileCache(compiledOSPs), providerSpecs: newProviderSpecCache(), containerd: newContainerdCache()}
}

// Render renders in.OSP for in.MachineDeployment. Neither is modified.
func (r *Renderer) Render(in Input) (*Result, error) {
	osp, md := in.OSP, in.MachineDeployment
	if osp == nil || md == nil {
		return nil, errors.New("render needs an OperatingSystemProfile and a MachineDeployment")
	}
	mdRef := fmt.Sprintf("machinedeployment %s/%s", md.Namespace, md.Name)

	spec, err := r.providerSpecs.get(md)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", mdRef, err)
	}
	pc, distUpgradeOnBoot := spec.pc, spec.distUpgradeOnBoot
	if in.View {
		in.Cluster, in.Node = viewInputs(in.Cluster, in.Node)
	}
	data := &templateData{cluster: &in.Cluster}
	spec.setOSSettings(data)
	if string(pc.OperatingSystem) != string(osp.Spec.OSName) {
		return nil, fmt.Errorf("%s: operating system %q does not match %s, which is for %q", mdRef, pc.OperatingSystem, osp.Name, osp.Spec.OSName)
	}
	if err := supportsCloud(osp, pc.CloudProvider); err != nil {
		return nil, fmt.Errorf("%s: %w", mdRef, err)
	}
	utility := provisioningUtility(pc, &data.FlatcarConfig)
	if osp.Spec.ProvisioningUtility != "" && osp.Spec.ProvisioningUtility != utility {
		return nil, fmt.Errorf("%s: provisioning utility %q does not match %s, which needs %q", osp.Name, osp.Spec.ProvisioningUtility, mdRef, utility)
	}
	if pc.Network.IsStaticIPConfig() && pc.OperatingSystem != providerconfig.OperatingSystemFlatcar {
		return nil, fmt.Errorf("%s: static IP configuration is not supported with %s", mdRef, pc.OperatingSystem)
	}
	var hostFiles []osm.File
	if in.Node.ContainerRuntime == string(ospv1alpha1.ContainerRuntimeContainerd) {
		data.ContainerRuntimeConfig, hostFiles = r.containerd.get(&in.Node)
	}
	if err := fillData(data, &in, pc); err != nil {
		return nil, fmt.Errorf("%s: %w", mdRef, err)
	}
	if in.View {
		data.redactOSSecrets()
		if pc.OperatingSystem == providerconfig.OperatingSystemRHEL {
			data.RHSubscription = rhSubscription(&data.RhelConfig)
		}
	}

	compiled, err := r.compiled.get(osp, in.Overlays, in.Node.ContainerRuntime)
	if err != nil {
		return nil, err
	}
	boot, prov, err := compiled.render(data)
	if err != nil {
		return nil, err
	}
	if hostFiles, err = withServerFiles(compiled.provisioning.origins, hostFiles); err != nil {
		return nil, err
	}
	prov.Files = append(prov.Files, hostFiles...)
	if pc.OperatingSystem == providerconfig.OperatingSystemRHEL {
		// Upstream replaces whatever the OSP says with the providerSpec's subscription.
		for _, c := range []*osm.OSCConfig{&boot, &prov} {
			if c.CloudInitModules == nil {
				c.CloudInitModules = &osm.CloudInitModule{}
			}
			c.CloudInitModules.RHSubscription = rhSubscription(&data.RhelConfig)
		}
	}
	// Results are the caller's: nothing in them may alias the Renderer's caches.
	boot.UserSSHKeys, prov.UserSSHKeys = slices.Clone(pc.SSHPublicKeys), slices.Clone(pc.SSHPublicKeys)
	providerSpec := slices.Clone(pc.CloudProviderSpec.Raw)
	if in.View {
		// The cloudProviderSpec holds the cloud's credentials, in fields of
		// every cloud's own making: the view leaves it out.
		providerSpec = nil
		for _, c := range []*osm.OSCConfig{&boot, &prov} {
			if c.CloudInitModules != nil {
				c.CloudInitModules.RHSubscription = redactRHSubscription(c.CloudInitModules.RHSubscription)
			}
		}
	}

	res := &Result{Config: osm.OperatingSystemConfigSpec{
		OSName:    string(osp.Spec.OSName),
		OSVersion: osp.Spec.OSVersion,
		CloudProvider: osm.CloudProviderSpec{
			Name: string(pc.CloudProvider),
			Spec: runtime.RawExtension{Raw: providerSpec},
		},
		BootstrapConfig:     boot,
		ProvisioningConfig:  prov,
		ProvisioningUtility: string(ospv1alpha1.ProvisioningUtilityCloudInit),
	}}
	if osp.Spec.ProvisioningUtility != "" {
		res.Config.ProvisioningUtility = string(osp.Spec.ProvisioningUtility)
	}

	target := payloadTarget{
		format:            payloadFormat(utility),
		cloudProvider:     string(pc.CloudProvider),
		machineDeployment: md.Name,
		distUpgradeOnBoot: distUpgradeOnBoot,
	}
	if err := target.encodeAll(res); err != nil {
		return nil, fmt.Errorf("%s for %s: %w", osp.Name, mdRef, err)
	}
	if string(pc.CloudProvider) == machinecontroller.CloudProviderEdge {
		var carried []byte // the script fetches the bootstrap payload
		if compiled.bootstrap.templates.Reads(machineJoinField) {
			carried = res.Bootstrap.UserData
		}
		script := edgeScript(&in.Cluster, md.Namespace, md.Name, carried)
		res.EdgeScript = &script
	}
	return res, nil
}

// retryTimedOut is how long a revision that ran out of time fails at once
// before a render tries it again: long enough that a hanging OSP costs one
// render time per minute, not one per MD; short enough that an OSP that was
// only slowed by a busy machine renders again soon.
const retryTimedOut = time.Minute

// renderTime bounds one Render, from the first template executed.
var renderTime = time.Second

// render executes the templates of both configs within one budget. A
// revision that exceeded its budget fails at once after that: renders for
// the OSP's other MachineDeployments would spend the same, and the syncer
// and the API must not wait for them.
func (c *compiledOSP) render(data *templateData) (boot, prov osm.OSCConfig, err error) {
	if f := c.failed.Load(); f != nil && (f.retry.IsZero() || time.Now().Before(f.retry)) {
		return boot, prov, f.err
	}
	b := sandbox.NewBudget(renderTime)
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
