package defaultosps

// Helpers of the tests that render one profile and inspect or run what a
// node would run.

import (
	"slices"
	"strings"
	"testing"

	ospv1alpha1 "github.com/osm-apiserver/osm-apiserver/pkg/apis/operatingsystemmanager/v1alpha1"
	"github.com/osm-apiserver/osm-apiserver/pkg/render"
)

// rendered is one profile rendered for one MD.
type rendered struct {
	res          *render.Result
	bootstrap    map[string]string // path → content of the files the bootstrap payload writes
	provisioning map[string]string
}

// renderOSP renders a default profile for a cloud and IP family ("" is IPv4);
// edit, when set, changes the render input first.
func renderOSP(t *testing.T, name, cloud, family string, edit func(*render.Input)) rendered {
	t.Helper()
	osps, err := Load()
	if err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(osps, func(o *ospv1alpha1.OperatingSystemProfile) bool { return o.Name == name })
	if i < 0 {
		t.Fatalf("no default profile %s", name)
	}
	in := renderInput(testCA(t), family != "")
	in.OSP = onCloud(osps[i], cloud)
	in.MachineDeployment = machineDeployment(t, osps[i], cloud, family)
	if edit != nil {
		edit(&in)
	}
	res, err := render.NewRenderer().Render(in)
	if err != nil {
		t.Fatalf("%s/%s/%q: render: %v", name, cloud, family, err)
	}
	r := rendered{res: res}
	for _, p := range []struct {
		payload render.Payload
		into    *map[string]string
	}{{res.Bootstrap, &r.bootstrap}, {res.Provisioning, &r.provisioning}} {
		files, err := cloudConfigFiles(p.payload.UserData)
		if err != nil {
			t.Fatalf("%s/%s: %v", name, cloud, err)
		}
		*p.into = filesByPath(files)
	}
	return r
}

// shellFunction returns the definition of a multi-line shell function in a
// script, from `name() {` to the first line that is only `}`.
func shellFunction(t *testing.T, script, name string) string {
	t.Helper()
	lines := strings.Split(script, "\n")
	start := slices.IndexFunc(lines, func(l string) bool { return strings.HasPrefix(l, name+"() {") })
	if start < 0 {
		t.Fatalf("the script defines no function %s", name)
	}
	for i := start; i < len(lines); i++ {
		if lines[i] == "}" {
			return strings.Join(lines[start:i+1], "\n")
		}
	}
	t.Fatalf("function %s has no closing brace", name)
	return ""
}

// paragraph returns the lines of a script from the one starting with first
// (after indentation) to the next empty line.
func paragraph(t *testing.T, script, first string) string {
	t.Helper()
	lines := strings.Split(script, "\n")
	start := slices.IndexFunc(lines, func(l string) bool { return strings.HasPrefix(strings.TrimSpace(l), first) })
	if start < 0 {
		t.Fatalf("the script has no line starting with %q", first)
	}
	end := start
	for end < len(lines) && strings.TrimSpace(lines[end]) != "" {
		end++
	}
	return strings.Join(lines[start:end], "\n")
}

// onCloud returns osp, or a copy that also supports cloud: the tests run a
// profile's scripts on clouds beyond those it claims, which the render refuses.
func onCloud(osp *ospv1alpha1.OperatingSystemProfile, cloud string) *ospv1alpha1.OperatingSystemProfile {
	for _, c := range osp.Spec.SupportedCloudProviders {
		if string(c.Name) == cloud {
			return osp
		}
	}
	osp = osp.DeepCopy()
	osp.Spec.SupportedCloudProviders = append(osp.Spec.SupportedCloudProviders, ospv1alpha1.CloudProviderSpec{Name: ospv1alpha1.CloudProvider(cloud)})
	return osp
}
