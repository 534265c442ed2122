package registry

import (
	"context"
	"mime"
	"net/http"
	"strings"

	clusterv1alpha1 "k8c.io/machine-controller/sdk/apis/cluster/v1alpha1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/osm-apiserver/osm-apiserver/pkg/resolve"
)

type tableOnlyKey struct{}

// WithTableHint marks the context of requests whose answer is a Table that
// carries no more of each object than its metadata (`kubectl get`): their
// rows are built from the outputs' summaries, without unpacking any config.
// Only a request whose first accepted media type is a meta.k8s.io Table (so
// that the server answers with one) and that does not ask for whole objects
// (includeObject=Object) is marked.
func WithTableHint(handler http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if req.Method == http.MethodGet && tableOnly(req) {
			req = req.WithContext(context.WithValue(req.Context(), tableOnlyKey{}, true))
		}
		handler.ServeHTTP(w, req)
	})
}

func tableOnly(req *http.Request) bool {
	q := req.URL.Query()
	if io := q.Get("includeObject"); io != "" && io != "Metadata" && io != "None" {
		return false
	}
	first, _, _ := strings.Cut(req.Header.Get("Accept"), ",")
	mediaType, params, err := mime.ParseMediaType(strings.TrimSpace(first))
	if err != nil || mediaType != "application/json" && mediaType != "application/vnd.kubernetes.protobuf" && mediaType != "application/yaml" {
		return false
	}
	return params["as"] == "Table" && params["g"] == "meta.k8s.io" && (params["v"] == "v1" || params["v"] == "v1beta1")
}

// TableOnly says whether the request of ctx is answered with a Table of
// object metadata only (see WithTableHint).
func TableOnly(ctx context.Context) bool {
	v, _ := ctx.Value(tableOnlyKey{}).(bool)
	return v
}

// SummaryObjects is implemented by Objects whose table rows need only an
// output's summary: SummaryObject builds an object as Object does, with the
// spec reduced to what the table shows.
type SummaryObjects interface {
	SummaryObject(md *clusterv1alpha1.MachineDeployment, out *resolve.Rendered, name, rv string) (runtime.Object, error)
}
