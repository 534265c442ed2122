package app

import (
	"strings"

	openapinamer "k8s.io/apiserver/pkg/endpoints/openapi"
	"k8s.io/kube-openapi/pkg/util"
	"k8s.io/kube-openapi/pkg/validation/spec"

	"github.com/osm-apiserver/osm-apiserver/pkg/registry"
)

// definitionNamer names OpenAPI definitions as the scheme does. The generated
// definitions of our types are keyed by Go package path (github.com/…), the
// scheme knows them by their REST-friendly name (com.github.…); without this
// mapping the definitions lack their group-version-kind and `kubectl explain`
// cannot find them.
func definitionNamer() func(string) (string, spec.Extensions) {
	namer := openapinamer.NewDefinitionNamer(registry.Scheme)
	return func(name string) (string, spec.Extensions) {
		// Names of apimachinery types come already REST-friendly (io.k8s.…).
		if strings.Contains(name, "/") {
			name = util.ToRESTFriendlyName(name)
		}
		return namer.GetDefinitionName(name)
	}
}
