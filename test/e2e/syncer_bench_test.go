package e2e

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/osm-apiserver/osm-apiserver/pkg/machinecontroller"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/osm-apiserver/osm-apiserver/pkg/server"
)

// BenchmarkSyncer1000MDs measures the syncer writing everything for 1,000
// MachineDeployments from nothing (7 objects each) and the process's RSS then,
// and the cleanup after they are deleted. Run with -benchtime=1x.
func BenchmarkSyncer1000MDs(b *testing.B) {
	const count = 1000
	for range b.N {
		ns := syncerNamespace(b)
		osp := "e2e-syncer-" + ns
		applyProfile(b, e2eProfile(b, osp, "v1.0.0"))
		ctx := context.Background()
		forEach(count, func(i int) { createMD(b, syncerMD(ns, fmt.Sprintf("md-%04d", i), osp, "1")) })

		cfg := rest.CopyConfig(env.config)
		cfg.QPS, cfg.Burst = 1000, 2000
		client, err := kubernetes.NewForConfig(cfg)
		if err != nil {
			b.Fatal(err)
		}
		b.ResetTimer()
		start := time.Now()
		replica := startSyncer(b, "bench", func(c *server.Config) { c.Clusters.Worker, c.Syncer.Workers = client, 16 })
		if err := poll(ctx, 5*time.Minute, func() error { return payloadsIn(ns, 2*count) }); err != nil {
			b.Fatal(err)
		}
		elapsed := time.Since(start)
		b.StopTimer()
		runtime.GC()
		b.ReportMetric(elapsed.Seconds(), "s-to-all-secrets")
		b.ReportMetric(float64(rssKiB())/1024, "MiB-RSS")
		b.Logf("%d MDs: all payload Secrets in %s; RSS of the test process %d MiB", count, elapsed.Round(time.Millisecond), rssKiB()/1024)

		start = time.Now()
		forEach(count, func(i int) {
			err := env.dynamic.Resource(mdResource).Namespace(ns).Delete(ctx, fmt.Sprintf("md-%04d", i), metav1.DeleteOptions{})
			if err != nil {
				b.Error(err)
			}
		})
		if err := poll(ctx, 5*time.Minute, func() error { return payloadsIn(ns, 0) }); err != nil {
			b.Fatal(err)
		}
		b.Logf("cleanup of %d MDs' payload Secrets in %s", count, time.Since(start).Round(time.Millisecond))
		replica.stop()
	}
}

// payloadsIn checks that the MDs of namespace have want payload Secrets.
func payloadsIn(namespace string, want int) error {
	list, err := env.kube.CoreV1().Secrets(machinecontroller.CloudInitSettingsNamespace).List(context.Background(), metav1.ListOptions{
		LabelSelector: machinecontroller.NamespaceLabel + "=" + namespace + "," + machinecontroller.PurposeLabel + " in (bootstrap-config,provisioning-config)"})
	if err != nil {
		return err
	}
	if len(list.Items) != want {
		return fmt.Errorf("%d payload secrets, want %d", len(list.Items), want)
	}
	return nil
}

// rssKiB is the resident set size of this process.
func rssKiB() int {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(data), "\n") {
		var kib int
		if _, err := fmt.Sscanf(line, "VmRSS: %d kB", &kib); err == nil {
			return kib
		}
	}
	return 0
}

// forEach calls f(0..n-1), 32 at a time.
func forEach(n int, f func(int)) {
	var wg sync.WaitGroup
	sem := make(chan struct{}, 32)
	for i := range n {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			f(i)
		}()
	}
	wg.Wait()
}
