// Package crd holds the CustomResourceDefinitions of osm-apiserver's
// profiles and overlays; its test holds their schemas to the Go types.
package crd

import (
	"os"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	ospv1alpha1 "github.com/osm-apiserver/osm-apiserver/pkg/apis/operatingsystemmanager/v1alpha1"
	overlaysv1alpha1 "github.com/osm-apiserver/osm-apiserver/pkg/apis/overlays/v1alpha1"
)

// TestSchemasMatchTypes: every field of the Go types is in the CRD's schema,
// and the schema has no property the types lack, so that neither kubectl nor
// our decoder drops what the other keeps.
func TestSchemasMatchTypes(t *testing.T) {
	for _, tc := range []struct {
		file string
		typ  reflect.Type
	}{
		{"operatingsystemmanager.k8c.io_operatingsystemprofiles.yaml", reflect.TypeFor[ospv1alpha1.OperatingSystemProfile]()},
		{"overlays.osm.k8c.io_operatingsystemprofileoverlays.yaml", reflect.TypeFor[overlaysv1alpha1.OperatingSystemProfileOverlay]()},
	} {
		t.Run(tc.file, func(t *testing.T) {
			data, err := os.ReadFile(tc.file)
			if err != nil {
				t.Fatal(err)
			}
			var crd struct {
				Spec struct {
					Versions []struct {
						Schema *struct {
							OpenAPIV3Schema *schemaProps `json:"openAPIV3Schema"`
						} `json:"schema"`
					} `json:"versions"`
				} `json:"spec"`
			}
			if err := yaml.Unmarshal(data, &crd); err != nil {
				t.Fatal(err)
			}
			if len(crd.Spec.Versions) != 1 || crd.Spec.Versions[0].Schema == nil {
				t.Fatalf("want one version with a schema, got %d", len(crd.Spec.Versions))
			}
			compare(t, "", tc.typ, crd.Spec.Versions[0].Schema.OpenAPIV3Schema)
		})
	}
}

// schemaProps is the part of a CRD's JSON schema the test reads.
type schemaProps struct {
	Properties           map[string]schemaProps `json:"properties"`
	Items                *schemaProps           `json:"items"`
	AdditionalProperties *schemaProps           `json:"additionalProperties"`
}

// compare walks typ and schema together; metadata and embedded apimachinery
// types (label selectors, conditions, raw extensions) are not ours to check.
func compare(t *testing.T, path string, typ reflect.Type, s *schemaProps) {
	t.Helper()
	for typ.Kind() == reflect.Pointer {
		typ = typ.Elem()
	}
	if strings.HasPrefix(typ.PkgPath(), "k8s.io/") {
		return
	}
	switch typ.Kind() {
	case reflect.Struct:
		fields := jsonFields(typ)
		var names []string
		for name := range fields {
			names = append(names, name)
		}
		sort.Strings(names)
		for _, name := range names {
			if name == "metadata" || name == "apiVersion" || name == "kind" {
				continue
			}
			p, ok := s.Properties[name]
			if !ok {
				t.Errorf("%s.%s: in the Go type, not in the schema", path, name)
				continue
			}
			compare(t, path+"."+name, fields[name], &p)
		}
		for name := range s.Properties {
			if _, ok := fields[name]; !ok {
				t.Errorf("%s.%s: in the schema, not in the Go type", path, name)
			}
		}
	case reflect.Slice:
		if typ.Elem().Kind() == reflect.Uint8 || s.Items == nil {
			return
		}
		compare(t, path+"[]", typ.Elem(), s.Items)
	case reflect.Map:
		if s.AdditionalProperties != nil {
			compare(t, path+"{}", typ.Elem(), s.AdditionalProperties)
		}
	}
}

// jsonFields are the JSON fields of a struct, inlined ones flattened.
func jsonFields(typ reflect.Type) map[string]reflect.Type {
	out := map[string]reflect.Type{}
	for f := range typ.Fields() {
		tag := f.Tag.Get("json")
		name, opts, _ := strings.Cut(tag, ",")
		if name == "-" {
			continue
		}
		if slices.Contains(strings.Split(opts, ","), "inline") || f.Anonymous && name == "" {
			for k, v := range jsonFields(f.Type) {
				out[k] = v
			}
			continue
		}
		if name == "" {
			name = f.Name
		}
		out[name] = f.Type
	}
	return out
}
