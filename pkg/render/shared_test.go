package render_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/spf13/pflag"

	"github.com/osm-apiserver/osm-apiserver/pkg/options"
	"github.com/osm-apiserver/osm-apiserver/pkg/render"
)

// upstreamDir is ../shared/upstream-osm beside the repository root, where
// developers and CI keep the upstream project's OSPs and rendered cases.
func upstreamDir(t testing.TB) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			break
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.mod above the test's directory")
		}
		dir = parent
	}
	up := filepath.Join(filepath.Dir(dir), "shared", "upstream-osm")
	if _, err := os.Stat(up); err != nil {
		t.Skipf("../shared/upstream-osm is missing beside the repository root (%s): upstream cases cannot run", up)
	}
	return up
}

// caseInput is the render input a case's args describe, read as the render
// command reads them.
func caseInput(t testing.TB, caseDir string) render.Input {
	t.Helper()
	args, err := readArgs(filepath.Join(caseDir, "args"))
	if err != nil {
		t.Fatal(err)
	}
	var ospPath, mdPath string
	node, cluster := options.NewNodeFlags(), &options.ClusterFlags{}
	node.RegistryCredentialsFromFile = true
	fs := pflag.NewFlagSet("case", pflag.ContinueOnError)
	fs.StringVar(&ospPath, "osp", "", "")
	fs.StringVar(&mdPath, "machinedeployment", "", "")
	node.AddFlags(fs)
	cluster.AddFlags(fs)
	cluster.AddTokenFlags(fs)
	if err := fs.Parse(args); err != nil {
		t.Fatalf("args: %v", err)
	}
	for _, p := range []*string{&ospPath, &mdPath, &cluster.ClusterInfoKubeconfig, &cluster.KubernetesCABundle, &cluster.HostCABundle} {
		if *p != "" && !filepath.IsAbs(*p) {
			*p = filepath.Join(caseDir, *p)
		}
	}
	in := render.Input{}
	if in.Node, err = node.NodeOptions(); err != nil {
		t.Fatal(err)
	}
	if in.Cluster, err = cluster.ClusterInfo(); err != nil {
		t.Fatal(err)
	}
	in.OSP = decodeFile(t, ospPath, render.DecodeOSP)
	in.MachineDeployment = decodeFile(t, mdPath, render.DecodeMachineDeployment)
	return in
}

func decodeFile[T any](t testing.TB, path string, decode func([]byte) (T, error)) T {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	v, err := decode(data)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return v
}

// readArgs reads an args file: one argv entry per line.
func readArgs(path string) ([]string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var args []string
	for _, line := range splitLines(string(data)) {
		if line != "" {
			args = append(args, line)
		}
	}
	return args, nil
}

func splitLines(s string) []string {
	var out []string
	start := 0
	for i := 0; i < len(s); i++ {
		if s[i] == '\n' {
			out = append(out, s[start:i])
			start = i + 1
		}
	}
	return append(out, s[start:])
}
