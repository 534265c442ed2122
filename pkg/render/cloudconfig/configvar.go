package cloudconfig

import (
	"fmt"
	"strconv"

	"k8c.io/machine-controller/sdk/providerconfig"
)

// resolver reads configVars: literal values; a reference is an error (see
// Reference). The first error sticks, so that generators can read all their
// fields and check once.
type resolver struct {
	err error
}

// str returns the value of the configVar at field, "" when it is unset.
func (r *resolver) str(field string, v providerconfig.ConfigVarString) string {
	if v.Value != "" || r.err != nil {
		return v.Value
	}
	var ref Reference
	switch {
	case v.SecretKeyRef.Name != "":
		ref = Reference{"Secret", v.SecretKeyRef.Namespace, v.SecretKeyRef.Name, v.SecretKeyRef.Key}
	case v.ConfigMapKeyRef.Name != "":
		ref = Reference{"ConfigMap", v.ConfigMapKeyRef.Namespace, v.ConfigMapKeyRef.Name, v.ConfigMapKeyRef.Key}
	default:
		return ""
	}
	r.err = fmt.Errorf("%s refers to %s; references are not resolved: set the value inline, or use an external cloud provider (--external-cloud-provider)", field, ref)
	return ""
}

// bool returns the value of the boolean configVar at field, false when unset.
func (r *resolver) bool(field string, v providerconfig.ConfigVarBool) bool {
	if v.Value != nil {
		return *v.Value
	}
	s := r.str(field, providerconfig.ConfigVarString{SecretKeyRef: v.SecretKeyRef, ConfigMapKeyRef: v.ConfigMapKeyRef})
	if s == "" || r.err != nil {
		return false
	}
	b, err := strconv.ParseBool(s)
	if err != nil {
		r.err = fmt.Errorf("%s: %q is not a boolean", field, s)
	}
	return b
}
