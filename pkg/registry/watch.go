package registry

import (
	"context"
	"sync"
	"time"

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
	// List returns the current objects for the initial events of a watch,
	// of resourceVersion rv.
	List func(ctx context.Context, options *metainternalversion.ListOptions, rv string) ([]runtime.Object, error)
	// Events returns the events of one change of an MD, of type typ unless
	// the resource says otherwise, with objects of resourceVersion rv (an MD
	// has one OSC but two payloads).
	Events func(ctx context.Context, ev changefeed.Event, typ watch.EventType, rv string) []watch.Event
	// New returns an empty object, for bookmarks.
	New func() runtime.Object
}

// bookmarkInterval is how often a watch that allows bookmarks is told its
// position when it has advanced without an event for it, as kube-apiserver
// does about once a minute: a client that resumes later then need not
// replay as much, or list again.
const bookmarkInterval = 30 * time.Second

// Watch serves a watch with kube-apiserver's resourceVersion semantics: "" and
// "0" start with an ADDED event per existing object; a position from an
// earlier list or event, on any replica, resumes after it, or fails with 410
// Gone when this replica cannot prove it has every change since (which makes
// clients list again), or with 504 when the cluster never issued it.
// sendInitialEvents with allowWatchBookmarks (watch-list) ends the initial
// events with a bookmark.
func Watch(ctx context.Context, src WatchSource, options *metainternalversion.ListOptions) (watch.Interface, error) {
	if options == nil {
		options = &metainternalversion.ListOptions{}
	}
	rv := options.ResourceVersion
	sendInitial := options.SendInitialEvents != nil && *options.SendInitialEvents
	initial := rv == "" || rv == "0" || sendInitial
	var from changefeed.Position
	var err error
	if initial {
		// Initial events are the current state, not older than rv.
		from, err = ListPosition(ctx, src.Feed, &metainternalversion.ListOptions{ResourceVersion: rv})
	} else {
		from, err = changefeed.Parse(rv)
	}
	if err != nil {
		return nil, FeedError(err)
	}
	sub, err := src.Feed.Subscribe(ctx, from)
	if err != nil {
		return nil, FeedError(err)
	}
	var start []watch.Event
	if initial {
		objs, err := src.List(ctx, options, from.String())
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
			start = append(start, src.bookmark(from.String(), true))
		}
	}
	w := &feedWatcher{
		src:       src,
		sub:       sub,
		pos:       sub.From.Clone(),
		sent:      from.String(),
		bookmarks: options.AllowWatchBookmarks,
		namespace: genericapirequest.NamespaceValue(ctx),
		labels:    LabelSelector(options),
		fields:    FieldSelector(options),
		result:    make(chan watch.Event),
		stop:      make(chan struct{}),
	}
	go w.run(ctx, start)
	return w, nil
}

// bookmark returns a bookmark at rv; initialEnd marks the end of the initial
// events of a watch-list.
func (src WatchSource) bookmark(rv string, initialEnd bool) watch.Event {
	obj := src.New()
	if m, err := meta.Accessor(obj); err == nil {
		m.SetResourceVersion(rv)
		if initialEnd {
			m.SetAnnotations(map[string]string{metav1.InitialEventsAnnotationKey: "true"})
		}
	}
	return watch.Event{Type: watch.Bookmark, Object: obj}
}

type feedWatcher struct {
	src WatchSource
	sub *changefeed.Subscription
	// pos is the position of the client after the events sent so far (and
	// those it was not sent because they are not of its objects); sent is
	// the resourceVersion the client last received.
	pos       changefeed.Position
	sent      string
	bookmarks bool
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
	var tick <-chan time.Time
	if w.bookmarks {
		t := time.NewTicker(bookmarkInterval)
		defer t.Stop()
		tick = t.C
	}
	for {
		select {
		case ev, ok := <-w.sub.C():
			if !ok || !w.deliver(ctx, ev) {
				return
			}
		case <-tick:
			if rv := w.pos.String(); rv != w.sent {
				if !w.send(ctx, w.src.bookmark(rv, false)) {
					return
				}
				w.sent = rv
			}
		case <-w.stop:
			return
		case <-ctx.Done():
			return
		}
	}
}

// deliver sends the events of ev the client has not seen and that are of
// its objects, with the client's position after ev.
func (w *feedWatcher) deliver(ctx context.Context, ev changefeed.Event) bool {
	// A change before the watch's start (a list already had it) is not new
	// to the client; it still advances nothing.
	if !ev.Progress && !w.sub.From.New(ev) {
		return true
	}
	w.pos.Advance(ev)
	if ev.Progress {
		return true
	}
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
	rv := w.pos.String()
	for _, out := range w.src.Events(ctx, ev, typ, rv) {
		if m, err := meta.Accessor(out.Object); err == nil && w.fields != nil &&
			!w.fields.Matches(fields.Set{"metadata.name": m.GetName(), "metadata.namespace": m.GetNamespace()}) {
			continue
		}
		if !w.send(ctx, out) {
			return false
		}
		w.sent = rv
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
