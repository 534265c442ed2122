package sandbox

import (
	"fmt"
	"reflect"
)

// maxCompareWork bounds uniq's comparisons of lists and dicts: how many it
// keeps times the size of the list.
const maxCompareWork = 1 << 26

// uniqList is sprig's uniq without its quadratic time: texts, numbers and
// bools are looked up in a map; lists and dicts are compared one by one with
// reflect.DeepEqual, as sprig does, as long as that stays within budget.
func uniqList(list any) ([]any, error) {
	v := reflect.ValueOf(list)
	if k := v.Kind(); k != reflect.Slice && k != reflect.Array {
		return nil, fmt.Errorf("cannot find uniq on type %s", k)
	}
	out := []any{}
	seen := map[any]bool{}
	var others []any
	maxOthers := -1
	for i := 0; i < v.Len(); i++ {
		item := v.Index(i).Interface()
		if hashable(item) {
			if !seen[item] {
				seen[item] = true
				out = append(out, item)
			}
			continue
		}
		if maxOthers < 0 {
			size, err := valueSize(list, maxValue)
			if err != nil {
				return nil, err
			}
			maxOthers = max(16, maxCompareWork/int(max(size, 1)))
		}
		if inList(others, item) {
			continue
		}
		if len(others) == maxOthers {
			return nil, exceeded("uniq would compare more than %d lists or dicts", maxOthers)
		}
		others = append(others, item)
		out = append(out, item)
	}
	return out, nil
}

func hashable(v any) bool {
	switch v.(type) {
	case nil, string, bool, int, int8, int16, int32, int64, uint, uint8, uint16, uint32, uint64, float32, float64:
		return true
	}
	return false
}

func inList(list []any, item any) bool {
	for _, x := range list {
		if reflect.DeepEqual(x, item) {
			return true
		}
	}
	return false
}
