package e2e

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/osm-apiserver/osm-apiserver/test/internal/testenv"
)

// dumpLogs prints the end of the servers' logs, and osm-apiserver's first error
// lines (a panic's stack would fill the tail): the first thing to read when a test fails.
func dumpLogs() {
	for _, name := range []string{"kube-apiserver", "osm-apiserver"} {
		path := filepath.Join(env.dir, "run", name+".log")
		lines, errs, err := scanLog(path, 60, 20)
		if err != nil {
			fmt.Fprintf(os.Stderr, "e2e: %v\n", err)
			continue
		}
		if name == "osm-apiserver" && len(errs) > 0 {
			fmt.Fprintf(os.Stderr, "----- first %d errors in %s -----\n%s\n", len(errs), path, strings.Join(errs, "\n"))
		}
		fmt.Fprintf(os.Stderr, "----- last %d lines of %s -----\n%s\n", len(lines), path, strings.Join(lines, "\n"))
	}
}

// scanLog returns the last n lines of a klog file and its first m error lines.
func scanLog(path string, n, m int) (last, errs []string, err error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	defer func() { _ = f.Close() }() // read-only
	s := bufio.NewScanner(f)
	s.Buffer(make([]byte, 1<<20), 1<<20)
	for s.Scan() {
		line := s.Text()
		if len(errs) < m && (strings.HasPrefix(line, "E") || strings.Contains(line, "panic")) {
			errs = append(errs, line)
		}
		last = append(last, line)
		if len(last) > n {
			last = last[1:]
		}
	}
	return last, errs, s.Err()
}

// command runs name with args in dir, streaming its output to stderr.
func command(timeout time.Duration, dir string, extraEnv []string, name string, args ...string) error {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	return testenv.Command(ctx, dir, extraEnv, name, args...)
}

// readEnvFile reads the harness's env file, which names kubectl and the
// kubeconfig.
func readEnvFile(path string) (map[string]string, error) {
	vars, err := testenv.ReadShellEnv(path)
	if err != nil {
		return nil, err
	}
	if vars["KUBECONFIG"] == "" || vars["KUBECTL"] == "" {
		return nil, fmt.Errorf("%s: KUBECONFIG or KUBECTL missing", path)
	}
	return vars, nil
}
