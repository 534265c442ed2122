package registry

import (
	"net/http"
	"net/http/httptest"
	"testing"
)

func TestTableOnly(t *testing.T) {
	tests := []struct {
		name, accept, query string
		want                bool
	}{
		{name: "kubectl get", accept: "application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json", want: true},
		{name: "v1beta1 table", accept: "application/json;as=Table;v=v1beta1;g=meta.k8s.io", want: true},
		{name: "metadata asked for", accept: "application/json;as=Table;v=v1;g=meta.k8s.io", query: "?includeObject=Metadata", want: true},
		{name: "whole objects asked for", accept: "application/json;as=Table;v=v1;g=meta.k8s.io", query: "?includeObject=Object"},
		{name: "objects", accept: "application/json"},
		{name: "table not first", accept: "application/json,application/json;as=Table;v=v1;g=meta.k8s.io"},
		{name: "unknown table version", accept: "application/json;as=Table;v=v2;g=meta.k8s.io"},
		{name: "partial object metadata", accept: "application/json;as=PartialObjectMetadataList;v=v1;g=meta.k8s.io"},
		{name: "no accept"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			req := httptest.NewRequest(http.MethodGet, "/apis/osm.k8c.io/v1alpha1/operatingsystemconfigs"+tc.query, nil)
			if tc.accept != "" {
				req.Header.Set("Accept", tc.accept)
			}
			var got bool
			WithTableHint(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) { got = TableOnly(r.Context()) })).ServeHTTP(httptest.NewRecorder(), req)
			if got != tc.want {
				t.Errorf("table only = %v, want %v", got, tc.want)
			}
		})
	}
}
