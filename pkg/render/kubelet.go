package render

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"k8c.io/machine-controller/sdk/apis/cluster/common"

	"github.com/osm-apiserver/osm-apiserver/pkg/machinecontroller"
)

// setKubeletSettings reads the kubelet knobs from MachineDeployment annotations
// (v1.kubelet-config.machine-controller.kubermatic.io/<Knob>). Unset knobs stay
// nil: the OSP templates carry the defaults (200m/200Mi/1Gi reserved, ...).
func setKubeletSettings(s *templateData, annotations map[string]string) error {
	for name, value := range annotations {
		knob, ok := strings.CutPrefix(name, machinecontroller.KubeletConfigAnnotationPrefix)
		if !ok {
			continue
		}
		if err := setKubeletKnob(s, knob, value); err != nil {
			return fmt.Errorf("annotation %s: %w", name, err)
		}
	}
	return nil
}

func setKubeletKnob(s *templateData, knob, value string) error {
	var err error
	switch knob {
	case common.KubeReservedKubeletConfig:
		s.KubeReserved = keyValues(value, "=")
	case common.SystemReservedKubeletConfig:
		s.SystemReserved = keyValues(value, "=")
	case common.EvictionHardKubeletConfig:
		s.EvictionHard = keyValues(value, "<")
	case common.MaxPodsKubeletConfig:
		s.MaxPods, err = parseInt32(value)
	case common.ContainerLogMaxSizeKubeletConfig:
		s.ContainerLogMaxSize = &value
	case common.ContainerLogMaxFilesKubeletConfig:
		s.ContainerLogMaxFiles = &value
	case common.ImageGCHighThresholdPercent:
		s.ImageGCHighThresholdPercent, err = parseInt32(value)
	case common.ImageGCLowThresholdPercent:
		s.ImageGCLowThresholdPercent, err = parseInt32(value)
	case common.ImageMinimumGCAge:
		s.ImageMinimumGCAge, err = parseDuration(value)
	case common.ImageMaximumGCAge:
		s.ImageMaximumGCAge, err = parseDuration(value)
	}
	return err
}

// keyValues parses "k1=v1,k2=v2" (EvictionHard: "memory.available<100Mi,...");
// pairs without the separator are skipped, as upstream does.
func keyValues(value, sep string) *map[string]string {
	m := map[string]string{}
	for pair := range strings.SplitSeq(value, ",") {
		k, v, ok := strings.Cut(pair, sep)
		if !ok {
			continue
		}
		m[k] = v
	}
	return &m
}

func parseInt32(value string) (*int32, error) {
	n, err := strconv.ParseInt(value, 10, 32)
	if err != nil {
		return nil, fmt.Errorf("invalid integer %q", value)
	}
	v := int32(n)
	return &v, nil
}

func parseDuration(value string) (*kubeletDuration, error) {
	d, err := time.ParseDuration(value)
	if err != nil {
		return nil, fmt.Errorf("invalid duration %q", value)
	}
	return &kubeletDuration{Duration: d}, nil
}
