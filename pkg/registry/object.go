package registry

import (
	"fmt"

	clusterv1alpha1 "k8c.io/machine-controller/sdk/apis/cluster/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// ObjectMeta returns the metadata of a virtual object derived from md. Labels
// are shared with the informer's object, which nothing on the serving path
// modifies; copying them for each of 1,000 items would only cost time.
func ObjectMeta(md *clusterv1alpha1.MachineDeployment, name, resourceVersion string) metav1.ObjectMeta {
	return metav1.ObjectMeta{
		Name:              name,
		Namespace:         md.Namespace,
		Labels:            md.Labels,
		CreationTimestamp: md.CreationTimestamp,
		ResourceVersion:   resourceVersion,
	}
}

// ErrorMessage returns err's message, or "" for nil.
func ErrorMessage(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// UnexpectedObject is the error of a table conversion given an object of
// another resource: a programming error, reported rather than shown as an
// empty table.
func UnexpectedObject(resource schema.GroupResource, obj runtime.Object) error {
	return fmt.Errorf("%s: cannot convert %T to a table", resource, obj)
}
