// Package changefeedtest has a change feed for tests, fed by hand.
package changefeedtest

import (
	"context"
	"strconv"

	clusterv1alpha1 "k8c.io/machine-controller/sdk/apis/cluster/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"

	"github.com/osm-apiserver/osm-apiserver/pkg/changefeed"
	"github.com/osm-apiserver/osm-apiserver/pkg/machinecontroller"
)

// Feed is a changefeed.Feed with one stream, of MachineDeployments, whose
// changes the test publishes; each gets the next revision.
type Feed struct {
	*changefeed.Feed
	handler cache.ResourceEventHandler
	rev     uint64
	next    func(b *changefeed.Batch)
}

// New returns a Feed that keeps history events, listed at revision 1.
func New(history int) *Feed {
	f := &Feed{Feed: changefeed.New(history, nil), rev: 1}
	s := f.AddStream("machinedeployments")
	lw := s.Wrap(&cache.ListWatch{ListWithContextFunc: func(context.Context, metav1.ListOptions) (runtime.Object, error) {
		return &clusterv1alpha1.MachineDeploymentList{ListMeta: metav1.ListMeta{ResourceVersion: "1"}}, nil
	}})
	if _, err := cache.ToListerWatcherWithContext(lw).ListWithContext(context.Background(), metav1.ListOptions{}); err != nil {
		panic(err) // the list above cannot fail
	}
	publish := func(b *changefeed.Batch, _ any) { f.next(b) }
	f.handler = s.Handler(changefeed.Changes{Add: publish, Update: func(b *changefeed.Batch, _, _ any) { f.next(b) }, Delete: publish})
	return f
}

// Publish publishes a change of md of type typ and returns the position after it.
func (f *Feed) Publish(typ watch.EventType, md *clusterv1alpha1.MachineDeployment) changefeed.Position {
	return f.publish(md, func(b *changefeed.Batch, md *clusterv1alpha1.MachineDeployment) { b.Add(typ, md) })
}

// PublishUpdate publishes an update of an MD from old to md.
func (f *Feed) PublishUpdate(old, md *clusterv1alpha1.MachineDeployment) changefeed.Position {
	return f.publish(md, func(b *changefeed.Batch, md *clusterv1alpha1.MachineDeployment) { b.Update(old, md) })
}

// PublishMachines publishes a change of the boot reports of md's machines
// (events marked changefeed.Event.Machines).
func (f *Feed) PublishMachines(md *clusterv1alpha1.MachineDeployment) changefeed.Position {
	ref := machinecontroller.RefOf(md)
	report := &metav1.ObjectMeta{Namespace: "cloud-init-settings", Name: "report", Labels: ref.Labels("boot-report"), Annotations: ref.Annotations()}
	return f.publish(md, func(b *changefeed.Batch, md *clusterv1alpha1.MachineDeployment) {
		changefeed.MachineReports(lister{md}, nil).Add(b, report)
	})
}

// lister is a machines.Lister of one MD.
type lister struct {
	md *clusterv1alpha1.MachineDeployment
}

func (l lister) List(string, labels.Selector) ([]*clusterv1alpha1.MachineDeployment, error) {
	return []*clusterv1alpha1.MachineDeployment{l.md}, nil
}

func (l lister) Get(string, string) (*clusterv1alpha1.MachineDeployment, error) { return l.md, nil }

func (l lister) UsingProfile(machinecontroller.Profile) ([]*clusterv1alpha1.MachineDeployment, error) {
	return nil, nil
}

func (l lister) SharingSecretNames(machinecontroller.Ref) ([]*clusterv1alpha1.MachineDeployment, error) {
	return nil, nil
}

func (f *Feed) publish(md *clusterv1alpha1.MachineDeployment, add func(*changefeed.Batch, *clusterv1alpha1.MachineDeployment)) changefeed.Position {
	f.rev++
	md = md.DeepCopy()
	md.ResourceVersion = strconv.FormatUint(f.rev, 10)
	f.next = func(b *changefeed.Batch) { add(b, md) }
	f.handler.OnUpdate(md, md)
	return f.Position()
}

// Position returns the feed's position.
func (f *Feed) Position() changefeed.Position {
	p, err := f.Feed.Position(context.Background())
	if err != nil {
		panic(err) // the feed has listed its one stream
	}
	return p
}
