package syncer

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	clusterv1alpha1 "k8c.io/machine-controller/sdk/apis/cluster/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	metadatafake "k8s.io/client-go/metadata/fake"
	k8stesting "k8s.io/client-go/testing"
	fcache "k8s.io/client-go/tools/cache/testing"

	"github.com/osm-apiserver/osm-apiserver/pkg/bootreports"
	"github.com/osm-apiserver/osm-apiserver/pkg/informers"
	"github.com/osm-apiserver/osm-apiserver/pkg/machinecontroller"
)

// report is the metadata of machine's report, of an MD of kube-system,
// created created ago and last written updated ago.
func report(md, machine string, created, updated time.Duration) runtime.Object {
	ref := machinecontroller.Ref{Namespace: "kube-system", Name: md}
	annotations := ref.Annotations()
	annotations[bootreports.MachineAnnotation] = "kube-system/" + machine
	annotations[bootreports.UpdatedAnnotation] = time.Now().Add(-updated).UTC().Format(time.RFC3339)
	return &metav1.PartialObjectMetadata{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"},
		ObjectMeta: metav1.ObjectMeta{
			Namespace: bootreports.Namespace, Name: bootreports.SecretName("kube-system", machine), UID: types.UID(machine),
			Labels: ref.Labels(bootreports.Purpose), Annotations: annotations,
			CreationTimestamp: metav1.NewTime(time.Now().Add(-created)),
		},
	}
}

// A report goes with its MachineDeployment, with its Machine (seen deleted,
// or not seen for the grace a new Machine gets), and when it expires.
func TestBootReportsAreCollected(t *testing.T) {
	machineSource := fcache.NewFakeControllerSource()
	machineSource.Add(&clusterv1alpha1.Machine{ObjectMeta: metav1.ObjectMeta{Namespace: "kube-system", Name: "alive"}})
	machineSource.Add(&clusterv1alpha1.Machine{ObjectMeta: metav1.ObjectMeta{Namespace: "kube-system", Name: "expiring"}})
	machineSource.Add(&clusterv1alpha1.Machine{ObjectMeta: metav1.ObjectMeta{Namespace: "kube-system", Name: "fresh"}})
	hour := time.Hour
	scheme := metadatafake.NewTestScheme()
	if err := metav1.AddMetaToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	meta := metadatafake.NewSimpleMetadataClient(scheme)
	for _, r := range []runtime.Object{
		report("workers", "alive", hour, time.Minute),
		report("workers", "expiring", 48*hour, 25*hour),
		report("workers", "machine-gone", hour, time.Minute),
		report("workers", "machine-new", time.Second, time.Second),
		report("workers", "fresh", time.Second, time.Second),
		report("gone", "md-gone", hour, time.Minute),
	} {
		if err := meta.Tracker().Create(corev1.SchemeGroupVersion.WithResource("secrets"), r, bootreports.Namespace); err != nil {
			t.Fatal(err)
		}
	}
	machineInformer := informers.NewMachines(machineSource)
	reports := informers.NewBootReports(meta, nil)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	go machineInformer.RunWithContext(ctx)
	reports.Start(ctx.Done())

	h := start(t, func(c *Config) {
		c.MachineInformer, c.BootReports, c.BootReportTTL = machineInformer, reports, 24*time.Hour
	})
	h.osps.Add(profile("osp-ubuntu", "v1"))
	h.mds.Add(machineDeployment("workers", "osp-ubuntu", "1"))

	deleted := func() []string {
		var names []string
		for _, a := range h.client.Actions() {
			// The gone MD's cleanup deletes its tokens too.
			if d, ok := a.(k8stesting.DeleteAction); ok && d.GetResource().Resource == "secrets" && strings.HasPrefix(d.GetName(), "osm-boot-") {
				names = append(names, d.GetName())
			}
		}
		slices.Sort(names)
		return slices.Compact(names) // a report may be deleted twice: sweep and cleanup
	}
	want := []string{
		bootreports.SecretName("kube-system", "expiring"),
		bootreports.SecretName("kube-system", "machine-gone"),
		bootreports.SecretName("kube-system", "md-gone"),
	}
	slices.Sort(want)
	h.eventually("reports of gone MDs and machines, and expired ones, deleted", func() (bool, error) {
		return slices.Equal(deleted(), want), nil
	})
	// A Machine deleted later takes its report along, even a new one's.
	machineSource.Delete(&clusterv1alpha1.Machine{ObjectMeta: metav1.ObjectMeta{Namespace: "kube-system", Name: "alive"}})
	machineSource.Delete(&clusterv1alpha1.Machine{ObjectMeta: metav1.ObjectMeta{Namespace: "kube-system", Name: "fresh"}})
	want = append(want, bootreports.SecretName("kube-system", "alive"), bootreports.SecretName("kube-system", "fresh"))
	slices.Sort(want)
	h.eventually("the deleted Machine's report deleted", func() (bool, error) {
		return slices.Equal(deleted(), want), nil
	})
}
