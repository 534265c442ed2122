package registry_test

import (
	"testing"

	"github.com/osm-apiserver/osm-apiserver/pkg/machinecontroller/machinecontrollertest"

	"k8s.io/apiserver/pkg/registry/rest"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/osm-apiserver/osm-apiserver/pkg/apis/osm/v1alpha1"
	"github.com/osm-apiserver/osm-apiserver/pkg/changefeed/changefeedtest"
	"github.com/osm-apiserver/osm-apiserver/pkg/registry"
	"github.com/osm-apiserver/osm-apiserver/pkg/registry/bootreport"
	"github.com/osm-apiserver/osm-apiserver/pkg/registry/machinejoin"
	"github.com/osm-apiserver/osm-apiserver/pkg/registry/operatingsystemconfig"
	"github.com/osm-apiserver/osm-apiserver/pkg/registry/provisioningpayload"
	"github.com/osm-apiserver/osm-apiserver/pkg/registry/registrytest"
)

func TestBuild(t *testing.T) {
	feed := changefeedtest.New(1)
	renderer := &registrytest.Resolver{}
	secrets := fake.NewClientset().CoreV1().Secrets("cloud-init-settings")
	info := registry.Build(registry.Storages{
		Configs:         operatingsystemconfig.NewREST(machinecontrollertest.Lister{}, renderer, feed.Feed, nil),
		Payloads:        provisioningpayload.NewREST(machinecontrollertest.Lister{}, renderer, feed.Feed),
		MachineJoins:    machinejoin.NewREST(nil),
		BootReports:     bootreport.NewREST(secrets),
		BootReportSteps: bootreport.NewStepREST(bootreport.StepConfig{Secrets: secrets}),
	})
	if info.PrioritizedVersions[0] != v1alpha1.SchemeGroupVersion {
		t.Errorf("versions %v", info.PrioritizedVersions)
	}
	storages := info.VersionedResourcesStorageMap["v1alpha1"]
	if len(storages) != 5 {
		t.Fatalf("resources %v", storages)
	}
	// Nodes post their step records; nothing else is writable.
	if _, ok := storages[registry.BootReportSteps].(rest.NamedCreater); !ok {
		t.Errorf("%s cannot be posted to", registry.BootReportSteps)
	}
	delete(storages, registry.BootReportSteps)
	for name, s := range storages {
		if n, ok := s.(rest.SingularNameProvider); !ok || n.GetSingularName() == "" {
			t.Errorf("%s has no singular name", name)
		}
		gvk := v1alpha1.SchemeGroupVersion.WithKind(kindOf(s))
		if !registry.Scheme.Recognizes(gvk) {
			t.Errorf("scheme does not know %v", gvk)
		}
		if name == registry.MachineJoins {
			// Create-only, like a TokenRequest.
			_, creater := s.(rest.Creater)
			_, getter := s.(rest.Getter)
			if !creater || getter {
				t.Errorf("%s: Creater %v, Getter %v; want create only", name, creater, getter)
			}
			continue
		}
		// Read-only: the generic server answers 405 for verbs without an interface.
		if _, ok := s.(rest.Creater); ok {
			t.Errorf("%s implements Creater", name)
		}
		if _, ok := s.(rest.Updater); ok {
			t.Errorf("%s implements Updater", name)
		}
		if _, ok := s.(rest.GracefulDeleter); ok {
			t.Errorf("%s implements GracefulDeleter", name)
		}
		if _, ok := s.(rest.Watcher); !ok {
			t.Errorf("%s cannot watch", name)
		}
	}
}

func kindOf(s rest.Storage) string {
	gvks, _, err := registry.Scheme.ObjectKinds(s.New())
	if err != nil || len(gvks) == 0 {
		return ""
	}
	return gvks[0].Kind
}
