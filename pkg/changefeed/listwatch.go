package changefeed

import (
	"context"
	"strconv"
	"sync"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/watchlist"
)

// Wrap returns lw as the stream's informer must use it: it sees the
// informer's lists (where the stream's history starts again) and its watch's
// bookmarks (positions without a change), and reads the cluster's current
// revision for Feed.Check. Call it once, before the informer starts.
func (s *Stream) Wrap(lw cache.ListerWatcher) cache.ListerWatcher {
	w := &listWatch{inner: cache.ToListerWatcherWithContext(lw), stream: s, unsupported: watchlist.DoesClientNotSupportWatchListSemantics(lw)}
	s.current = w.currentRevision
	return w
}

type listWatch struct {
	inner       cache.ListerWatcherWithContext
	stream      *Stream
	unsupported bool

	mu    sync.Mutex
	pages map[string]uint64 // the items of a paginated list so far
}

var (
	_ cache.ListerWatcher            = &listWatch{}
	_ cache.ListerWatcherWithContext = &listWatch{}
)

// IsWatchListSemanticsUnSupported tells the reflector whether lw can stream
// its lists (watchlist.DoesClientNotSupportWatchListSemantics).
func (l *listWatch) IsWatchListSemanticsUnSupported() bool {
	return l.unsupported
}

func (l *listWatch) List(options metav1.ListOptions) (runtime.Object, error) {
	return l.ListWithContext(context.Background(), options)
}

func (l *listWatch) Watch(options metav1.ListOptions) (watch.Interface, error) {
	return l.WatchWithContext(context.Background(), options)
}

// ListWithContext lists for the informer; the last page of a list is a list
// of the stream at the list's revision.
func (l *listWatch) ListWithContext(ctx context.Context, options metav1.ListOptions) (runtime.Object, error) {
	obj, err := l.inner.ListWithContext(ctx, options)
	// An exact list is the reflector's consistency check, not a list it stores.
	if err != nil || options.ResourceVersionMatch == metav1.ResourceVersionMatchExact {
		return obj, err
	}
	list, err := meta.ListAccessor(obj)
	if err != nil {
		return obj, nil
	}
	items, err := meta.ExtractList(obj)
	if err != nil {
		return obj, nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if options.Continue == "" || l.pages == nil {
		l.pages = make(map[string]uint64, len(items))
	}
	for _, item := range items {
		// As the handler records it: an unreadable revision is 0.
		if key, rev, _ := keyAndRevision(item); key != "" {
			l.pages[key] = rev
		}
	}
	if list.GetContinue() == "" {
		rev, _ := strconv.ParseUint(list.GetResourceVersion(), 10, 64)
		l.stream.listed(rev, l.pages)
		l.pages = nil
	}
	return obj, nil
}

// WatchWithContext watches for the informer, passing every event on after
// noting it: object events and bookmarks of a watch, or the initial events
// of a watch-list, which end with the bookmark of the list's revision.
func (l *listWatch) WatchWithContext(ctx context.Context, options metav1.ListOptions) (watch.Interface, error) {
	w, err := l.inner.WatchWithContext(ctx, options)
	if err != nil {
		return nil, err
	}
	out := &observedWatch{inner: w, stream: l.stream, result: make(chan watch.Event), stop: make(chan struct{})}
	if options.SendInitialEvents != nil && *options.SendInitialEvents {
		out.initial = map[string]uint64{}
	}
	go out.run()
	return out, nil
}

// currentRevision reads the revision the cluster is at: the resourceVersion
// of a consistent list of at most one object.
func (l *listWatch) currentRevision(ctx context.Context) (uint64, error) {
	obj, err := l.inner.ListWithContext(ctx, metav1.ListOptions{Limit: 1})
	if err != nil {
		return 0, err
	}
	list, err := meta.ListAccessor(obj)
	if err != nil {
		return 0, err
	}
	rev, _ := strconv.ParseUint(list.GetResourceVersion(), 10, 64)
	return rev, nil
}

type observedWatch struct {
	inner  watch.Interface
	stream *Stream
	// initial collects a watch-list's initial events until its bookmark.
	initial map[string]uint64
	result  chan watch.Event
	stop    chan struct{}
	once    sync.Once
}

func (w *observedWatch) Stop() {
	w.once.Do(func() {
		close(w.stop)
		w.inner.Stop()
	})
}

func (w *observedWatch) ResultChan() <-chan watch.Event {
	return w.result
}

func (w *observedWatch) run() {
	defer close(w.result)
	for {
		select {
		case ev, ok := <-w.inner.ResultChan():
			if !ok {
				return
			}
			w.note(ev)
			select {
			case w.result <- ev:
			case <-w.stop:
				return
			}
		case <-w.stop:
			return
		}
	}
}

// note records ev before the informer gets it.
func (w *observedWatch) note(ev watch.Event) {
	key, rev, ok := keyAndRevision(ev.Object)
	switch ev.Type {
	case watch.Added, watch.Modified, watch.Deleted:
		switch {
		case w.initial != nil && key != "":
			w.initial[key] = rev
		case ok && w.initial == nil:
			w.stream.watched(rev)
		}
	case watch.Bookmark:
		switch {
		case !ok:
		case w.initial != nil && endsInitialEvents(ev.Object):
			w.stream.listed(rev, w.initial)
			w.initial = nil
		case w.initial == nil:
			w.stream.bookmark(rev)
		}
	}
}

// endsInitialEvents says whether a bookmark ends a watch-list's initial events.
func endsInitialEvents(obj runtime.Object) bool {
	m, err := meta.Accessor(obj)
	return err == nil && m.GetAnnotations()[metav1.InitialEventsAnnotationKey] == "true"
}
