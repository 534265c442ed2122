package registry

import (
	"fmt"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/duration"
)

// ConvertToTable is the body of a rest.TableConvertor for a resource whose
// objects are *O and lists L: an object gives one row, a list one row per
// item in order and its list metadata (resourceVersion, continue token,
// remaining item count), so that paging through `kubectl get` works.
func ConvertToTable[O any, PO interface {
	*O
	runtime.Object
	metav1.Object
}, L interface {
	runtime.Object
	metav1.ListInterface
}](resource schema.GroupResource, columns []metav1.TableColumnDefinition, object runtime.Object, items func(L) []O, row func(PO) metav1.TableRow) (*metav1.Table, error) {
	table := &metav1.Table{ColumnDefinitions: columns}
	switch t := object.(type) {
	case PO:
		table.ResourceVersion = t.GetResourceVersion()
		table.Rows = []metav1.TableRow{row(t)}
	case L:
		table.ResourceVersion = t.GetResourceVersion()
		table.Continue = t.GetContinue()
		table.RemainingItemCount = t.GetRemainingItemCount()
		its := items(t)
		// Not nil for an empty list: the rows of a Table are [], not null.
		table.Rows = make([]metav1.TableRow, 0, len(its))
		for i := range its {
			table.Rows = append(table.Rows, row(&its[i]))
		}
	default:
		return nil, UnexpectedObject(resource, object)
	}
	return table, nil
}

// ObjectTable is the body of a rest.TableConvertor for a resource that has
// no lists and whose objects, PO, give rows of their own (a review: a row
// per MachineDeployment it answers for). It sets no resourceVersion: such
// objects are not stored.
func ObjectTable[PO runtime.Object](resource schema.GroupResource, columns []metav1.TableColumnDefinition, object runtime.Object, rows func(PO) []metav1.TableRow) (*metav1.Table, error) {
	o, ok := object.(PO)
	if !ok {
		return nil, UnexpectedObject(resource, object)
	}
	return &metav1.Table{ColumnDefinitions: columns, Rows: rows(o)}, nil
}

// Age formats a creation time as kubectl does.
func Age(t metav1.Time) string {
	if t.IsZero() {
		return "<unknown>"
	}
	return duration.HumanDuration(time.Since(t.Time))
}

// Bytes formats a size for a table cell: 812B, 13.4KiB, 1.2MiB.
func Bytes(n int64) string {
	switch {
	case n < 1024:
		return fmt.Sprintf("%dB", n)
	case n < 1024*1024:
		return fmt.Sprintf("%.1fKiB", float64(n)/1024)
	default:
		return fmt.Sprintf("%.1fMiB", float64(n)/(1024*1024))
	}
}

// maxCell bounds a text cell: a template error can be long, and a table row is
// read on a terminal. `-o yaml` shows the whole message.
const maxCell = 120

// Short returns the first line of s, cut to a table cell's width.
func Short(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	if len(s) > maxCell {
		s = s[:maxCell-3] + "..."
	}
	return s
}
