package server

import (
	"strings"

	openapinamer "k8s.io/apiserver/pkg/endpoints/openapi"
	genericapiserver "k8s.io/apiserver/pkg/server"
	"k8s.io/kube-openapi/pkg/util"
	"k8s.io/kube-openapi/pkg/validation/spec"

	generatedopenapi "github.com/osm-apiserver/osm-apiserver/pkg/generated/openapi"
	"github.com/osm-apiserver/osm-apiserver/pkg/registry"
)

// SetOpenAPI serves OpenAPI v2 and v3 for the osm.k8c.io types, so that
// `kubectl explain` works. The generic server needs them for server-side apply
// type information too, even though nothing here is writable.
func SetOpenAPI(cfg *genericapiserver.Config) {
	namer := openapinamer.NewDefinitionNamer(registry.Scheme)
	cfg.OpenAPIConfig = genericapiserver.DefaultOpenAPIConfig(generatedopenapi.GetOpenAPIDefinitions, namer)
	cfg.OpenAPIConfig.Info.Title = "osm-apiserver"
	cfg.OpenAPIConfig.Info.Version = "v1alpha1"
	cfg.OpenAPIConfig.GetDefinitionName = definitionNamer(namer)
	cfg.OpenAPIV3Config = genericapiserver.DefaultOpenAPIV3Config(generatedopenapi.GetOpenAPIDefinitions, namer)
	cfg.OpenAPIV3Config.Info.Title = "osm-apiserver"
	cfg.OpenAPIV3Config.Info.Version = "v1alpha1"
	cfg.OpenAPIV3Config.GetDefinitionName = definitionNamer(namer)
	// Computed with the default namer: let the builder compute them with ours.
	cfg.OpenAPIV3Config.Definitions = nil
}

// definitionNamer names OpenAPI definitions as the scheme does. The generated
// definitions of our types are keyed by Go package path (github.com/…), the
// scheme knows them by their REST-friendly name (com.github.…); without this
// mapping the definitions lack their group-version-kind and `kubectl explain`
// cannot find them.
func definitionNamer(namer *openapinamer.DefinitionNamer) func(string) (string, spec.Extensions) {
	return func(name string) (string, spec.Extensions) {
		// Names of apimachinery types come already REST-friendly (io.k8s.…).
		if strings.Contains(name, "/") {
			name = util.ToRESTFriendlyName(name)
		}
		return namer.GetDefinitionName(name)
	}
}
