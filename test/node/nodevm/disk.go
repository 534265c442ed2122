package nodevm

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// CreateOverlay writes a qcow2 image at path whose backing file is the raw
// base image: the VM writes the overlay, never the base.
func CreateOverlay(ctx context.Context, base, path string) error {
	abs, err := filepath.Abs(base)
	if err != nil {
		return err
	}
	return run(ctx, "qemu-img", "create", "-q", "-f", "qcow2", "-b", abs, "-F", "raw", path)
}

// CreateSeed writes a NoCloud seed directory: user-data and meta-data. QEMU
// shows it to the guest as a read-only FAT disk labelled cidata (its vvfat
// driver), which cloud-init reads like any seed disk; no host tools needed.
func CreateSeed(dir string, userData, metaData []byte) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for name, data := range map[string][]byte{"user-data": userData, "meta-data": metaData} {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// MetaData is a NoCloud meta-data document naming the instance.
func MetaData(instanceID, hostname string) []byte {
	return fmt.Appendf(nil, "instance-id: %s\nlocal-hostname: %s\n", instanceID, hostname)
}

func run(ctx context.Context, name string, args ...string) error {
	out, err := exec.CommandContext(ctx, name, args...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("%s %s: %w: %s", name, strings.Join(args, " "), err, strings.TrimSpace(string(out)))
	}
	return nil
}
