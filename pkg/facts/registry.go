package facts

import (
	"encoding/json"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"

	"github.com/osm-apiserver/osm-apiserver/pkg/render"
)

// RegistryCredentialsFromManifest reads the registry credentials from a Secret
// manifest (YAML or JSON), see RegistryCredentialsFromSecret.
func RegistryCredentialsFromManifest(data []byte) (map[string]render.RegistryAuth, error) {
	var s corev1.Secret
	if err := yaml.UnmarshalStrict(data, &s); err != nil {
		return nil, fmt.Errorf("not a Secret manifest: %w", err)
	}
	if s.Kind != "Secret" {
		return nil, fmt.Errorf("kind is %q, not Secret", s.Kind)
	}
	// stringData is what people write by hand; the API server would merge it into data.
	for k, v := range s.StringData {
		if s.Data == nil {
			s.Data = map[string][]byte{}
		}
		s.Data[k] = []byte(v)
	}
	return RegistryCredentialsFromSecret(&s)
}

// RegistryCredentialsFromSecret reads registry credentials: the "auths" of a
// kubernetes.io/dockerconfigjson Secret, or for any other type one JSON
// {"username":…,"password":…,"auth":…,"identitytoken":…} per registry key.
func RegistryCredentialsFromSecret(s *corev1.Secret) (map[string]render.RegistryAuth, error) {
	if s.Type == corev1.SecretTypeDockerConfigJson {
		data, ok := s.Data[corev1.DockerConfigJsonKey]
		if !ok {
			return nil, errors.New("dockerconfigjson Secret has no " + corev1.DockerConfigJsonKey)
		}
		var cfg struct {
			Auths map[string]render.RegistryAuth `json:"auths"`
		}
		if err := json.Unmarshal(data, &cfg); err != nil {
			return nil, fmt.Errorf("%s: %w", corev1.DockerConfigJsonKey, err)
		}
		return cfg.Auths, nil
	}
	creds := make(map[string]render.RegistryAuth, len(s.Data))
	for registry, data := range s.Data {
		var auth render.RegistryAuth
		if err := json.Unmarshal(data, &auth); err != nil {
			return nil, fmt.Errorf("key %s: %w", registry, err)
		}
		creds[registry] = auth
	}
	return creds, nil
}
