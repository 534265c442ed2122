package options

import (
	"errors"
	"runtime/debug"
	"testing"
)

func TestApplyGCPercent(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	applyGCPercent(30, func(string) string { return "" })
	if got := debug.SetGCPercent(100); got != 30 {
		t.Errorf("without GOGC: %d, want 30", got)
	}
	applyGCPercent(30, func(string) string { return "200" })
	if got := debug.SetGCPercent(100); got != 100 {
		t.Errorf("GOGC set: the flag changed the target to %d", got)
	}
}

func TestMemoryLimit(t *testing.T) {
	tests := []struct {
		name, flag, env, cgroup string
		want                    int64
		wantSource              string
		wantErr                 bool
	}{
		{name: "auto without anything: none", flag: "auto"},
		{name: "auto under a cgroup v2 limit", flag: "auto", cgroup: "536870912\n", want: 402653184, wantSource: "/sys/fs/cgroup/memory.max"},
		{name: "auto, cgroup without a limit", flag: "auto", cgroup: "max\n"},
		{name: "GOMEMLIMIT wins over auto", flag: "auto", env: "100MiB", cgroup: "536870912", wantSource: "GOMEMLIMIT"},
		{name: "explicit", flag: "256Mi", env: "100MiB", want: 256 << 20, wantSource: "--memory-limit"},
		{name: "explicit none", flag: "0", wantSource: "--memory-limit"},
		{name: "garbage", flag: "lots", wantErr: true},
		{name: "negative", flag: "-1Mi", wantErr: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			getenv := func(string) string { return tc.env }
			readFile := func(name string) ([]byte, error) {
				if tc.cgroup != "" && name == cgroupFiles[0] {
					return []byte(tc.cgroup), nil
				}
				return nil, errors.ErrUnsupported
			}
			got, source, err := memoryLimit(tc.flag, getenv, readFile)
			if (err != nil) != tc.wantErr {
				t.Fatalf("error %v, want error %v", err, tc.wantErr)
			}
			if got != tc.want || source != tc.wantSource {
				t.Errorf("got %d from %q, want %d from %q", got, source, tc.want, tc.wantSource)
			}
		})
	}
}
