package sandbox

import (
	"reflect"
)

var errorType = reflect.TypeFor[error]()

// funcLimit says how wrap bounds the calls of a function.
type funcLimit struct {
	// check refuses, before the call, arguments whose result or work would
	// exceed the budget; it may charge the budget for what the call keeps.
	check func(b *Budget, name string, args []reflect.Value) error
	// deep: the function reads its arguments deeply (prints, serializes,
	// compares or copies them): lists and dicts among them are measured first.
	deep bool
	// shares: the result is (part of) an argument and is not charged again.
	shares bool
	// deepResult: the result is charged by its full size (parsers, copies).
	deepResult bool
}

// slot is where the functions of a binding (exec.go) find what the execution
// holding the binding has: its budget, and its data and the outputs of its
// set's shared templates (nil outside a set).
type slot struct {
	b     *Budget
	data  any
	named map[string]string
}

// wrap returns fn bounded by l and charging the budget in s: it fails once the
// budget is out of time, measures arguments fn reads deeply, runs l.check,
// and charges what fn returns. The result has fn's arguments and result, and
// an error besides.
func wrap(name string, fn any, l *funcLimit, s *slot) any {
	fv := reflect.ValueOf(fn)
	ft := fv.Type()
	in := make([]reflect.Type, ft.NumIn())
	for i := range in {
		in[i] = ft.In(i)
	}
	zero, noError := reflect.Zero(ft.Out(0)), reflect.Zero(errorType)
	fail := func(err error) []reflect.Value {
		return []reflect.Value{zero, reflect.ValueOf(&err).Elem()}
	}
	variadic := ft.IsVariadic()
	wt := reflect.FuncOf(in, []reflect.Type{ft.Out(0), errorType}, variadic)
	return reflect.MakeFunc(wt, func(args []reflect.Value) []reflect.Value {
		b := s.b
		if err := b.clock(); err != nil {
			return fail(err)
		}
		if l.deep || l.check != nil {
			flat := flatten(args, variadic)
			if l.deep {
				if err := readable(name, flat); err != nil {
					return fail(err)
				}
			}
			if l.check != nil {
				if err := l.check(b, name, flat); err != nil {
					return fail(err)
				}
			}
		}
		var out []reflect.Value
		if variadic {
			out = fv.CallSlice(args)
		} else {
			out = fv.Call(args)
		}
		if len(out) == 2 && !out[1].IsNil() {
			return out
		}
		if err := charge(b, name, out[0], l); err != nil {
			return fail(err)
		}
		return []reflect.Value{out[0], noError}
	}).Interface()
}

func charge(b *Budget, name string, v reflect.Value, l *funcLimit) error {
	switch {
	case l.shares:
		return nil
	case l.deepResult:
		n, err := valueSize(v.Interface(), maxValue)
		if err != nil {
			return err
		}
		return b.produce(name, n)
	}
	return b.produce(name, resultSize(v))
}

// flatten returns the arguments of a call with the variadic ones spread out.
func flatten(args []reflect.Value, variadic bool) []reflect.Value {
	if !variadic {
		return args
	}
	last := args[len(args)-1]
	flat := make([]reflect.Value, 0, len(args)-1+last.Len())
	flat = append(flat, args[:len(args)-1]...)
	for i := 0; i < last.Len(); i++ {
		flat = append(flat, last.Index(i))
	}
	return flat
}

// readable fails for arguments too large or too deeply nested to be read
// whole, together: printing a list that holds one big text a thousand times
// would build a thousand copies, a dict set into itself would never end.
func readable(name string, args []reflect.Value) error {
	var total int64
	for _, a := range args {
		n, err := valueSize(a.Interface(), maxValue-total)
		if err != nil {
			return err
		}
		if total += n; total > maxValue {
			return exceeded("%s would read more than %s", name, sizeString(maxValue))
		}
	}
	return nil
}

// Argument helpers for checks: text/template has converted the arguments to
// the function's parameter types; interface parameters are read as the
// template functions themselves read them.

func argLen(v reflect.Value) int {
	for v.Kind() == reflect.Interface && !v.IsNil() {
		v = v.Elem()
	}
	switch v.Kind() {
	case reflect.Slice, reflect.Array, reflect.Map, reflect.String:
		return v.Len()
	}
	return 0
}
