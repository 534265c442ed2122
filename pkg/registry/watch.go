package registry

import (
	"context"
	"errors"
	"strconv"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"

	"github.com/osm-apiserver/osm-apiserver/pkg/changefeed"
	"github.com/osm-apiserver/osm-apiserver/pkg/metrics"
)

// WatchSource turns change-feed events into the objects of one resource.
type WatchSource struct {
	Resource schema.GroupResource
	Feed     *changefeed.Feed
	// List returns the current objects for the initial events of a watch.
	List func(ctx context.Context, options *metainternalversion.ListOptions) ([]runtime.Object, error)
	// Events returns the events of one change of an MD, of type typ unless
	// the resource says otherwise, with objects of resourceVersion rv (an MD
	// has one OSC but two payloads).
	Events func(ctx context.Context, ev changefeed.Event, typ watch.EventType, rv string) []watch.Event
	// New returns an empty object, for bookmarks.
	New func() runtime.Object
}

// Watch serves a watch with kube-apiserver's resourceVersion semantics: "" and
// "0" start with an ADDED event per existing object; a version from an earlier
// list or event resumes after it, or fails with 410 Gone when the feed no longer
// has it, which makes clients list again. sendInitialEvents with
// allowWatchBookmarks (watch-list) ends the initial events with a bookmark.
func Watch(ctx context.Context, src WatchSource, options *metainternalversion.ListOptions) (watch.Interface, error) {
	if options == nil {
		options = &metainternalversion.ListOptions{}
	}
	var from uint64
	initial := options.ResourceVersion == "" || options.ResourceVersion == "0"
	if !initial {
		v, err := strconv.ParseUint(options.ResourceVersion, 10, 64)
		if err != nil {
			return nil, apierrors.NewBadRequest("invalid resourceVersion " + strconv.Quote(options.ResourceVersion))
		}
		from = v
	}
	sendInitial := options.SendInitialEvents != nil && *options.SendInitialEvents
	if sendInitial {
		initial = true
	}
	sub, current, err := src.Feed.Subscribe(from)
	if err != nil {
		var tooOld *changefeed.TooOldError
		if errors.As(err, &tooOld) {
			return nil, apierrors.NewResourceExpired(err.Error())
		}
		return nil, err
	}
	var start []watch.Event
	if initial {
		objs, err := src.List(ctx, options)
		if err != nil {
			sub.Close()
			return nil, err
		}
		start = make([]watch.Event, 0, len(objs)+1)
		for _, obj := range objs {
			start = append(start, watch.Event{Type: watch.Added, Object: obj})
		}
		// k8s.io/apiserver turns a plain watch into sendInitialEvents=true
		// without bookmarks: only a client that allows bookmarks gets the
		// end-of-initial-events one.
		if sendInitial && options.AllowWatchBookmarks {
			bookmark := src.New()
			if m, err := meta.Accessor(bookmark); err == nil {
				m.SetResourceVersion(strconv.FormatUint(current, 10))
				m.SetAnnotations(map[string]string{metav1.InitialEventsAnnotationKey: "true"})
			}
			start = append(start, watch.Event{Type: watch.Bookmark, Object: bookmark})
		}
	}
	w := &feedWatcher{
		src:       src,
		sub:       sub,
		namespace: genericapirequest.NamespaceValue(ctx),
		labels:    LabelSelector(options),
		fields:    FieldSelector(options),
		result:    make(chan watch.Event),
		stop:      make(chan struct{}),
	}
	go w.run(ctx, start)
	return w, nil
}

type feedWatcher struct {
	src       WatchSource
	sub       *changefeed.Subscription
	namespace string
	labels    labels.Selector
	fields    fields.Selector
	result    chan watch.Event
	stop      chan struct{}
	stopOnce  sync.Once
}

// ResultChan implements watch.Interface.
func (w *feedWatcher) ResultChan() <-chan watch.Event {
	return w.result
}

// Stop implements watch.Interface.
func (w *feedWatcher) Stop() {
	w.stopOnce.Do(func() { close(w.stop) })
}

func (w *feedWatcher) run(ctx context.Context, start []watch.Event) {
	defer close(w.result)
	defer w.sub.Close()
	for _, ev := range start {
		if !w.send(ctx, ev) {
			return
		}
	}
	for _, ev := range w.sub.Replay {
		if !w.deliver(ctx, ev) {
			return
		}
	}
	w.sub.Replay = nil
	for {
		select {
		case ev, ok := <-w.sub.C():
			if !ok || !w.deliver(ctx, ev) {
				return
			}
		case <-w.stop:
			return
		case <-ctx.Done():
			return
		}
	}
}

func (w *feedWatcher) deliver(ctx context.Context, ev changefeed.Event) bool {
	md := ev.MD
	if w.namespace != "" && md.Namespace != w.namespace {
		return true
	}
	typ := ev.Type
	matches := w.labels.Matches(labels.Set(md.Labels))
	if ev.Old != nil {
		// Like kube-apiserver: relabelling out of the selection is a delete
		// for this watcher, into it an add.
		switch matched := w.labels.Matches(labels.Set(ev.Old.Labels)); {
		case matched && !matches:
			typ, matches = watch.Deleted, true
		case !matched && matches:
			typ = watch.Added
		}
	}
	if !matches {
		return true
	}
	for _, out := range w.src.Events(ctx, ev, typ, strconv.FormatUint(ev.Seq, 10)) {
		if m, err := meta.Accessor(out.Object); err == nil && w.fields != nil &&
			!w.fields.Matches(fields.Set{"metadata.name": m.GetName(), "metadata.namespace": m.GetNamespace()}) {
			continue
		}
		if !w.send(ctx, out) {
			return false
		}
	}
	return true
}

func (w *feedWatcher) send(ctx context.Context, ev watch.Event) bool {
	select {
	case w.result <- ev:
		metrics.WatchEvents.WithLabelValues(w.src.Resource.Resource, string(ev.Type)).Inc()
		return true
	case <-w.stop:
		return false
	case <-ctx.Done():
		return false
	}
}
