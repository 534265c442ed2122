package server

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"k8s.io/client-go/rest"

	"github.com/osm-apiserver/osm-apiserver/pkg/servingcert"
)

// recorder is a kube-apiserver that has nothing (404) and records the
// paths asked for.
type recorder struct {
	mu    sync.Mutex
	paths []string
}

func (r *recorder) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	r.mu.Lock()
	r.paths = append(r.paths, req.Method+" "+req.URL.Path)
	r.mu.Unlock()
	http.NotFound(w, req)
}

func (r *recorder) requests() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.paths...)
}

// With a worker cluster, the APIService's caBundle is kept in the worker
// cluster, where it is registered: kube-apiserver proxies the nodes, who
// authenticate there, to osm-apiserver. The management cluster is not asked.
func TestAPIServiceIsTheWorkerClusters(t *testing.T) {
	management, worker := &recorder{}, &recorder{}
	ms, ws := httptest.NewServer(management), httptest.NewServer(worker)
	defer ms.Close()
	defer ws.Close()
	cl, err := NewClusters(&rest.Config{Host: ms.URL}, &rest.Config{Host: ws.URL})
	if err != nil {
		t.Fatal(err)
	}
	if !cl.Separate {
		t.Error("two clusters are not Separate")
	}
	if err := servingcert.NewAPIService(cl.APIServices, servingcert.APIServiceName).Sync(context.Background(), []byte("ca")); err != nil {
		t.Fatal(err)
	}
	want := "GET /apis/apiregistration.k8s.io/v1/apiservices/" + servingcert.APIServiceName
	if got := worker.requests(); len(got) != 1 || got[0] != want {
		t.Errorf("the worker cluster was asked %q, want %q", got, want)
	}
	if got := management.requests(); len(got) != 0 {
		t.Errorf("the management cluster was asked %q, want nothing", got)
	}
}
