package app

import (
	"bytes"
	"strings"
	"testing"
)

func TestVersionFlag(t *testing.T) {
	root := NewRootCommand()
	var out bytes.Buffer
	root.SetOut(&out)
	root.SetArgs([]string{"--version"})
	if err := root.Execute(); err != nil {
		t.Fatal(err)
	}
	// Unstamped in tests: component-base's default version, then commit,
	// date and Go release.
	got := out.String()
	if !strings.HasPrefix(got, "osm-apiserver v") || !strings.Contains(got, "(commit ") || !strings.Contains(got, " go1.") {
		t.Errorf("--version printed %q", got)
	}
}
