// Command benchscale measures osm-apiserver with many MachineDeployments on a
// real local cluster (hack/local-cluster.sh: etcd, kube-apiserver, osm-apiserver
// behind its APIService, all on 127.0.0.1) and prints the table of issue 20:
// create time, time until every MD's Secrets are written, osm-apiserver's RSS,
// `kubectl get osc -A`, a restart, and the writes per new MD by kind.
//
//	go run ./hack/benchscale -n 3000            (make bench-scale N=3000)
//
// It is bounded: every wait has a deadline (-timeout in all), and the cluster it
// started is torn down on exit (-keep leaves it running). Secrets are counted from
// a metadata-only watch, writes from kube-apiserver's apiserver_request_total, so the
// measurement itself adds next to no load.
package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/yaml"
)

var mdResource = schema.GroupVersionResource{Group: "cluster.k8s.io", Version: "v1alpha1", Resource: "machinedeployments"}

type options struct {
	n, namespaces, workers int
	dir, repo, bin         string
	heapProfiles           string
	reuse, keep            bool
	timeout, settle        time.Duration
}

func main() {
	var o options
	flag.IntVar(&o.n, "n", 3000, "MachineDeployments to create")
	flag.IntVar(&o.namespaces, "namespaces", 50, "namespaces the MDs are spread over")
	flag.IntVar(&o.workers, "workers", 16, "parallel creates")
	flag.StringVar(&o.dir, "dir", "", "cluster state dir (default: a new temporary dir)")
	flag.BoolVar(&o.reuse, "reuse", false, "use the cluster already running in -dir (it must hold no bench MDs)")
	flag.BoolVar(&o.keep, "keep", false, "leave the cluster running")
	flag.StringVar(&o.heapProfiles, "heap-profiles", "", "save osm-apiserver's heap profiles (after a GC) into this dir: after the sync, after the LISTs, after the restart")
	flag.StringVar(&o.repo, "repo", ".", "repository root")
	flag.StringVar(&o.bin, "osm-apiserver", "bin/osm-apiserver", "osm-apiserver binary")
	flag.DurationVar(&o.timeout, "timeout", 45*time.Minute, "bound of the whole run")
	flag.DurationVar(&o.settle, "settle", 30*time.Second, "how long writes are counted after a restart")
	flag.Parse()
	ctx, cancel := context.WithTimeout(context.Background(), o.timeout)
	defer cancel()
	if err := run(ctx, o); err != nil {
		fmt.Fprintln(os.Stderr, "benchscale:", err)
		os.Exit(1)
	}
}

func logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "[bench-scale %s] %s\n", time.Now().UTC().Format("15:04:05"), fmt.Sprintf(format, args...))
}

// cluster is the local cluster of hack/local-cluster.sh in dir.
type cluster struct {
	o          options
	dir        string
	kubectl    string
	kubeconfig string
	osmPort    string
	config     *rest.Config
	client     kubernetes.Interface
	dynamic    dynamic.Interface
	meta       metadata.Interface
	osmHTTP    *http.Client
}

func (c *cluster) script(ctx context.Context, args ...string) error {
	cmd := exec.CommandContext(ctx, filepath.Join(c.o.repo, "hack/local-cluster.sh"), args...)
	bin, err := filepath.Abs(c.o.bin)
	if err != nil {
		return err
	}
	cmd.Env = append(os.Environ(), "OSM_CLUSTER_DIR="+c.dir, "OSM_APISERVER_BIN="+bin, "OSM_CLUSTER_WATCH_PID="+strconv.Itoa(os.Getpid()))
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("hack/local-cluster.sh %s: %w\n%s", strings.Join(args, " "), err, out.String())
	}
	return nil
}

func (c *cluster) loadEnv() error {
	data, err := os.ReadFile(filepath.Join(c.dir, "env"))
	if err != nil {
		return err
	}
	for line := range strings.SplitSeq(string(data), "\n") {
		k, v, ok := strings.Cut(strings.TrimPrefix(line, "export "), "=")
		if !ok {
			continue
		}
		v = strings.Trim(v, `"`)
		switch k {
		case "KUBECONFIG":
			c.kubeconfig = v
		case "KUBECTL":
			c.kubectl = v
		case "OSM_PORT":
			c.osmPort = v
		}
	}
	c.config, err = clientcmd.BuildConfigFromFlags("", c.kubeconfig)
	if err != nil {
		return err
	}
	c.config.QPS, c.config.Burst = 2000, 4000
	if c.client, err = kubernetes.NewForConfig(c.config); err != nil {
		return err
	}
	if c.dynamic, err = dynamic.NewForConfig(c.config); err != nil {
		return err
	}
	if c.meta, err = metadata.NewForConfig(c.config); err != nil {
		return err
	}
	ca, err := os.ReadFile(filepath.Join(c.dir, "pki/osm-ca.crt"))
	if err != nil {
		return err
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(ca)
	// The admin's client certificate: delegated authentication trusts the
	// cluster's client CA, and /metrics needs a user.
	cert, err := tls.LoadX509KeyPair(filepath.Join(c.dir, "pki/admin.crt"), filepath.Join(c.dir, "pki/admin.key"))
	if err != nil {
		return err
	}
	c.osmHTTP = &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{
		TLSClientConfig: &tls.Config{RootCAs: pool, Certificates: []tls.Certificate{cert}}, DisableKeepAlives: true}}
	return nil
}

// renders returns osm-apiserver's count of renders and the seconds they took
// (osm_apiserver_render_duration_seconds: both renders of an MD, real and
// view, and packing the output).
func (c *cluster) renders() (count, seconds float64) {
	resp, err := c.osmHTTP.Get("https://127.0.0.1:" + c.osmPort + "/metrics")
	if err != nil {
		return 0, 0
	}
	defer func() { _ = resp.Body.Close() }()
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		name, rest, _ := strings.Cut(line, "{")
		_, value, ok := strings.Cut(rest, "} ")
		if !ok {
			continue
		}
		v, _ := strconv.ParseFloat(value, 64)
		switch name {
		case "osm_apiserver_render_duration_seconds_count":
			count += v
		case "osm_apiserver_render_duration_seconds_sum":
			seconds += v
		}
	}
	return count, seconds
}

// heapProfile saves osm-apiserver's heap profile, after a GC, as
// <-heap-profiles>/heap-<name>.pprof; with -heap-profiles only. After the
// RSS was read: the GC it forces returns no memory to the OS by itself, but
// the profile is not part of what is measured.
func (c *cluster) heapProfile(name string) {
	if c.o.heapProfiles == "" {
		return
	}
	client := *c.osmHTTP
	client.Timeout = time.Minute
	resp, err := client.Get("https://127.0.0.1:" + c.osmPort + "/debug/pprof/heap?gc=1")
	if err != nil {
		logf("heap profile %s: %v", name, err)
		return
	}
	defer func() { _ = resp.Body.Close() }()
	data, err := io.ReadAll(resp.Body)
	if err == nil && resp.StatusCode != http.StatusOK {
		err = fmt.Errorf("%s: %s", resp.Status, data)
	}
	if err == nil {
		err = os.MkdirAll(c.o.heapProfiles, 0o755)
	}
	if err == nil {
		err = os.WriteFile(filepath.Join(c.o.heapProfiles, "heap-"+name+".pprof"), data, 0o644)
	}
	if err != nil {
		logf("heap profile %s: %v", name, err)
	}
}

func formatRenders(count, seconds float64) string {
	if count == 0 {
		return "0 renders"
	}
	return fmt.Sprintf("%.0f renders, %.2f ms each", count, 1000*seconds/count)
}

func (c *cluster) osmPID() (int, error) {
	data, err := os.ReadFile(filepath.Join(c.dir, "run/osm-apiserver.pid"))
	if err != nil {
		return 0, err
	}
	return strconv.Atoi(strings.TrimSpace(string(data)))
}

// rssKiB returns VmRSS of osm-apiserver.
func (c *cluster) rssKiB() int {
	pid, err := c.osmPID()
	if err != nil {
		return 0
	}
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for line := range strings.SplitSeq(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			n, _ := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(v), " kB"))
			return n
		}
	}
	return 0
}

func (c *cluster) ready() bool {
	resp, err := c.osmHTTP.Get("https://127.0.0.1:" + c.osmPort + "/readyz")
	if err != nil {
		return false
	}
	_ = resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}

// writes returns kube-apiserver's count of write requests by resource
// (resource/subresource), from apiserver_request_total.
func (c *cluster) writes(ctx context.Context) (map[string]float64, error) {
	data, err := c.client.CoreV1().RESTClient().Get().AbsPath("/metrics").DoRaw(ctx)
	if err != nil {
		return nil, err
	}
	out := map[string]float64{}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		rest, ok := strings.CutPrefix(line, "apiserver_request_total{")
		if !ok {
			continue
		}
		labels, value, ok := strings.Cut(rest, "} ")
		if !ok {
			continue
		}
		l := map[string]string{}
		for kv := range strings.SplitSeq(labels, ",") {
			k, v, _ := strings.Cut(kv, "=")
			l[k] = strings.Trim(v, `"`)
		}
		switch l["verb"] {
		case "POST", "PUT", "PATCH", "DELETE", "APPLY":
		default:
			continue
		}
		if strings.HasPrefix(l["code"], "4") || strings.HasPrefix(l["code"], "5") {
			continue
		}
		kind := l["resource"]
		if l["subresource"] != "" {
			kind += "/" + l["subresource"]
		}
		v, _ := strconv.ParseFloat(value, 64)
		out[kind] += v
	}
	return out, sc.Err()
}

func diff(after, before map[string]float64) map[string]float64 {
	out := map[string]float64{}
	for k, v := range after {
		if d := v - before[k]; d > 0 {
			out[k] = d
		}
	}
	return out
}

func run(ctx context.Context, o options) (err error) {
	c := &cluster{o: o, dir: o.dir}
	if c.dir == "" {
		if c.dir, err = os.MkdirTemp("", "osm-bench-scale-"); err != nil {
			return err
		}
	}
	if !o.reuse {
		logf("starting a local cluster in %s", c.dir)
		if err := c.script(ctx, "up"); err != nil {
			return err
		}
		if !o.keep {
			defer func() {
				logf("tearing the cluster down")
				if derr := c.script(context.Background(), "down"); derr != nil && err == nil {
					err = derr
				}
			}()
		}
	}
	if err := c.loadEnv(); err != nil {
		return err
	}
	if err := c.waitProfiles(ctx); err != nil {
		return err
	}
	load0 := loadAvg()
	before, err := c.writes(ctx)
	if err != nil {
		return err
	}
	secrets := c.watchBootstrapSecrets(ctx)
	created, createTook, err := c.createMDs(ctx)
	if err != nil {
		return err
	}
	lastCreate := time.Now()
	logf("created %d MDs in %s; waiting for their Secrets", len(created), createTook.Round(time.Millisecond))
	var peakSync atomic.Int64
	stopSampler := c.sampleRSS(&peakSync)
	if err := secrets.waitAll(ctx, created); err != nil {
		stopSampler()
		return err
	}
	syncTook := time.Since(lastCreate)
	logf("all Secrets written %s after the last create", syncTook.Round(time.Millisecond))
	// The syncer may still write (events, tokens stored): count until quiet.
	after := c.quietWrites(ctx, 5*time.Second, 2*time.Minute)
	stopSampler()
	perMD := diff(after, before)
	delete(perMD, "machinedeployments")
	delete(perMD, "namespaces")
	delete(perMD, "subjectaccessreviews")
	loadSync := loadAvg()
	rssAfter := c.rssKiB()
	syncRenders, syncSeconds := c.renders()
	c.heapProfile("sync")

	// kubectl get osc -A: the first LIST, then the best of 3 warm ones.
	var peakList atomic.Int64
	stopSampler = c.sampleRSS(&peakList)
	var lists []time.Duration
	rows := 0
	for range 4 {
		took, n, err := c.kubectlGetOSC(ctx)
		if err != nil {
			stopSampler()
			return err
		}
		lists, rows = append(lists, took), n
	}
	stopSampler()
	loadList := loadAvg()
	rssAfterList := c.rssKiB()
	listRenders, listSeconds := c.renders()
	c.heapProfile("lists")

	// Restart: ready, and the writes over the first -settle of the new
	// process (counted from its start: the script's own RBAC apply is before).
	readyIn, restartBefore, err := c.restart(ctx)
	if err != nil {
		return err
	}
	select {
	case <-time.After(o.settle):
	case <-ctx.Done():
		return ctx.Err()
	}
	restartAfter, err := c.writes(ctx)
	if err != nil {
		return err
	}
	restartWrites := diff(restartAfter, restartBefore)
	// Not osm-apiserver's: the script registers the APIService; reviews store nothing.
	for _, k := range []string{"apiservices", "services", "subjectaccessreviews", "selfsubjectreviews", "tokenreviews"} {
		delete(restartWrites, k)
	}
	rssRestart := c.rssKiB()
	loadRestart := loadAvg()
	c.heapProfile("restart")
	restartRenders, restartSeconds := c.renders()

	fmt.Printf("\nbench-scale: %d MDs in %d namespaces (hack/testdata/demo mix), %s\n", o.n, o.namespaces, time.Now().UTC().Format(time.RFC3339))
	fmt.Printf("load average: before %s, after sync %s, after LISTs %s, after restart %s\n\n", load0, loadSync, loadList, loadRestart)
	fmt.Println("| MDs | create | all Secrets written after the last create | osm-apiserver RSS after (peak during sync) | RSS after LISTs (peak during LIST) | `kubectl get osc -A` first / warm best of 3 | restart to ready | writes in the 30 s after restart |")
	fmt.Println("|---|---|---|---|---|---|---|---|")
	best := slices.Min(lists[1:])
	fmt.Printf("| %d | %.0f s | %.0f s | %d MiB (%d MiB) | %d MiB (%d MiB) | %.2f s / %.2f s (%d rows) | %.1f s | %s |\n",
		o.n, createTook.Seconds(), syncTook.Seconds(), rssAfter/1024, peakSync.Load()/1024, rssAfterList/1024, peakList.Load()/1024,
		lists[0].Seconds(), best.Seconds(), rows, readyIn.Seconds(), formatWrites(restartWrites, 1))
	fmt.Printf("\nRSS 30 s after the restart: %d MiB\n", rssRestart/1024)
	fmt.Printf("in-server renders: until all Secrets were written and quiet: %s; during the 4 LISTs: %s; in the %s after the restart: %s\n",
		formatRenders(syncRenders, syncSeconds), formatRenders(listRenders-syncRenders, listSeconds-syncSeconds), o.settle, formatRenders(restartRenders, restartSeconds))
	fmt.Printf("writes per new MD by kind (kube-apiserver, from the first create until quiet): %s\n", formatWrites(perMD, float64(o.n)))
	return nil
}

func formatWrites(w map[string]float64, per float64) string {
	if len(w) == 0 {
		return "none"
	}
	total := 0.0
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(w)) {
		total += w[k]
		parts = append(parts, fmt.Sprintf("%s %s", k, trim(w[k]/per)))
	}
	return fmt.Sprintf("%s total (%s)", trim(total/per), strings.Join(parts, ", "))
}

func trim(v float64) string {
	return strconv.FormatFloat(v, 'f', -1, 64)[:min(len(strconv.FormatFloat(v, 'f', -1, 64)), 5)]
}

func loadAvg() string {
	data, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	f := strings.Fields(string(data))
	return strings.Join(f[:3], " ")
}

func (c *cluster) waitProfiles(ctx context.Context) error {
	osp := schema.GroupVersionResource{Group: "operatingsystemmanager.k8c.io", Version: "v1alpha1", Resource: "operatingsystemprofiles"}
	want := []string{"osp-ubuntu", "osp-flatcar", "osp-rockylinux", "osp-amzn2"}
	return poll(ctx, 60*time.Second, func() error {
		for _, name := range want {
			if _, err := c.dynamic.Resource(osp).Namespace("kube-system").Get(ctx, name, metav1.GetOptions{}); err != nil {
				return err
			}
		}
		return nil
	})
}

func poll(ctx context.Context, limit time.Duration, f func() error) error {
	deadline := time.Now().Add(limit)
	for {
		err := f()
		if err == nil {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("after %s: %w", limit, err)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(250 * time.Millisecond):
		}
	}
}

// templates are the sample MDs of hack/testdata/demo.
func (c *cluster) templates() ([]*unstructured.Unstructured, error) {
	files, err := filepath.Glob(filepath.Join(c.o.repo, "hack/testdata/demo/*.yaml"))
	if err != nil || len(files) == 0 {
		return nil, fmt.Errorf("no sample MDs in hack/testdata/demo (glob error: %w)", err)
	}
	var out []*unstructured.Unstructured
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		u := &unstructured.Unstructured{}
		if err := yaml.Unmarshal(data, &u.Object); err != nil {
			return nil, fmt.Errorf("%s: %w", f, err)
		}
		out = append(out, u)
	}
	return out, nil
}

type ref struct{ namespace, name string }

func (c *cluster) createMDs(ctx context.Context) ([]ref, time.Duration, error) {
	tmpl, err := c.templates()
	if err != nil {
		return nil, 0, err
	}
	for i := range c.o.namespaces {
		ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("bench-%02d", i)}}
		if _, err := c.client.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			return nil, 0, err
		}
	}
	refs := make([]ref, c.o.n)
	for i := range refs {
		refs[i] = ref{namespace: fmt.Sprintf("bench-%02d", i%c.o.namespaces), name: fmt.Sprintf("md-%05d", i)}
	}
	start := time.Now()
	next := atomic.Int64{}
	var wg sync.WaitGroup
	errs := make([]error, c.o.workers)
	for w := range c.o.workers {
		wg.Go(func() {
			for {
				i := int(next.Add(1) - 1)
				if i >= len(refs) || ctx.Err() != nil {
					return
				}
				md := tmpl[i%len(tmpl)].DeepCopy()
				md.SetNamespace(refs[i].namespace)
				md.SetName(refs[i].name)
				label := map[string]any{"machine": refs[i].name}
				_ = unstructured.SetNestedField(md.Object, label, "spec", "selector", "matchLabels")
				_ = unstructured.SetNestedField(md.Object, label, "spec", "template", "metadata", "labels")
				if _, err := c.dynamic.Resource(mdResource).Namespace(refs[i].namespace).Create(ctx, md, metav1.CreateOptions{}); err != nil {
					errs[w] = fmt.Errorf("create %s/%s: %w", refs[i].namespace, refs[i].name, err)
					return
				}
			}
		})
	}
	wg.Wait()
	return refs, time.Since(start), errors.Join(errs...)
}

// secretSet is the names of the Secrets in cloud-init-settings, from a
// metadata-only watch.
type secretSet struct {
	mu    sync.Mutex
	names map[string]bool
}

func (c *cluster) watchBootstrapSecrets(ctx context.Context) *secretSet {
	s := &secretSet{names: map[string]bool{}}
	res := c.meta.Resource(schema.GroupVersionResource{Version: "v1", Resource: "secrets"}).Namespace("cloud-init-settings")
	go func() {
		rv := ""
		for ctx.Err() == nil {
			if rv == "" {
				list, err := res.List(ctx, metav1.ListOptions{})
				if err != nil {
					time.Sleep(time.Second)
					continue
				}
				s.mu.Lock()
				for _, item := range list.Items {
					s.names[item.Name] = true
				}
				s.mu.Unlock()
				rv = list.ResourceVersion
			}
			w, err := res.Watch(ctx, metav1.ListOptions{ResourceVersion: rv, AllowWatchBookmarks: true})
			if err != nil {
				rv = ""
				continue
			}
			for ev := range w.ResultChan() {
				m, ok := ev.Object.(*metav1.PartialObjectMetadata)
				if !ok {
					rv = "" // an error event: list again
					break
				}
				rv = m.ResourceVersion
				s.mu.Lock()
				switch ev.Type {
				case watch.Added, watch.Modified:
					s.names[m.Name] = true
				case watch.Deleted:
					delete(s.names, m.Name)
				}
				s.mu.Unlock()
			}
			w.Stop()
		}
	}()
	return s
}

// waitAll waits until every MD has its bootstrap Secret.
func (s *secretSet) waitAll(ctx context.Context, refs []ref) error {
	last, lastLog := -1, time.Now()
	for {
		s.mu.Lock()
		missing := 0
		for _, r := range refs {
			if !s.names[r.name+"-"+r.namespace+"-bootstrap-config"] {
				missing++
			}
		}
		s.mu.Unlock()
		if missing == 0 {
			return nil
		}
		if missing != last && time.Since(lastLog) > 15*time.Second {
			logf("%d of %d MDs still without their bootstrap Secret", missing, len(refs))
			last, lastLog = missing, time.Now()
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%d of %d MDs without their bootstrap Secret: %w", missing, len(refs), ctx.Err())
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// quietWrites returns the write counts once they did not change for quiet.
func (c *cluster) quietWrites(ctx context.Context, quiet, limit time.Duration) map[string]float64 {
	deadline := time.Now().Add(limit)
	prev, _ := c.writes(ctx)
	since := time.Now()
	for time.Now().Before(deadline) && ctx.Err() == nil {
		time.Sleep(time.Second)
		cur, err := c.writes(ctx)
		if err != nil {
			continue
		}
		// kube-apiserver renews its own leases: ignore them.
		if sum(cur, "leases") != sum(prev, "leases") {
			prev, since = cur, time.Now()
			continue
		}
		if time.Since(since) >= quiet {
			return cur
		}
	}
	return prev
}

func sum(w map[string]float64, skip string) float64 {
	t := 0.0
	for k, v := range w {
		if k != skip {
			t += v
		}
	}
	return t
}

// sampleRSS records the highest RSS of osm-apiserver until the returned func is called.
func (c *cluster) sampleRSS(peak *atomic.Int64) func() {
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		for {
			if r := int64(c.rssKiB()); r > peak.Load() {
				peak.Store(r)
			}
			select {
			case <-done:
				return
			case <-time.After(50 * time.Millisecond):
			}
		}
	})
	return func() { close(done); wg.Wait() }
}

func (c *cluster) kubectlGetOSC(ctx context.Context) (time.Duration, int, error) {
	cmd := exec.CommandContext(ctx, c.kubectl, "--kubeconfig", c.kubeconfig, "get", "osc", "-A", "--no-headers")
	cmd.Env = append(os.Environ(), "KUBECACHEDIR="+filepath.Join(c.dir, "kube-cache"))
	var out, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &stderr
	start := time.Now()
	if err := cmd.Run(); err != nil {
		return 0, 0, fmt.Errorf("kubectl get osc -A: %w: %s", err, stderr.String())
	}
	return time.Since(start), bytes.Count(out.Bytes(), []byte("\n")), nil
}

// restart restarts osm-apiserver (hack/local-cluster.sh osm) and returns the
// time from its new process's start until /readyz answers 200.
func (c *cluster) restart(ctx context.Context) (time.Duration, map[string]float64, error) {
	old, _ := c.osmPID()
	done := make(chan error, 1)
	go func() { done <- c.script(ctx, "osm") }()
	var started time.Time
	for {
		if pid, err := c.osmPID(); err == nil && pid != old {
			started = time.Now()
			break
		}
		select {
		case err := <-done:
			return 0, nil, fmt.Errorf("restart: the script ended before a new osm-apiserver started: %w", err)
		case <-time.After(20 * time.Millisecond):
		}
	}
	before, err := c.writes(ctx)
	if err != nil {
		return 0, nil, err
	}
	if err := c.loadEnv(); err != nil { // the port may have changed
		return 0, nil, err
	}
	var readyIn time.Duration
	for {
		if c.osmPort != "" && c.ready() {
			readyIn = time.Since(started)
			break
		}
		if time.Since(started) > 5*time.Minute {
			return 0, nil, errors.New("restart: not ready after 5 minutes")
		}
		time.Sleep(50 * time.Millisecond)
		_ = c.loadEnv()
	}
	if err := <-done; err != nil {
		return 0, nil, err
	}
	return readyIn, before, nil
}
