package sandbox

// Execution is one execution of a Set: one data value, one budget, the
// shared templates' outputs. It is used by one goroutine.
type Execution struct {
	set    *Set
	data   any
	budget *Budget
	keys   renderKeys
	named  map[string]string // the shared templates' outputs
}

// Start executes the shared templates with data, charging b, and returns
// the execution in which the others are executed. Its error is an *Error
// naming the shared template that failed.
func (s *Set) Start(data any, b *Budget) (*Execution, error) {
	x := &Execution{set: s, data: data, budget: b, keys: newRenderKeys(s.schema, data), named: make(map[string]string, len(s.shared))}
	x.keys.named = make(map[string]memoKey, len(s.shared))
	for i := range s.shared {
		t := &s.shared[i]
		key, memoized := x.keys.key(&t.deps)
		if memoized {
			x.keys.named[t.name] = key
			if out, ok := t.memo.Get(key); ok {
				x.named[t.name] = out
				continue
			}
		}
		out, err := x.run(t)
		if err != nil {
			return nil, newError(t.name, true, err)
		}
		out = wrapNamedOutput(out)
		x.named[t.name] = out
		if memoized {
			remember(t.memo, key, out)
		}
	}
	return x, nil
}

// Execute executes Sources.Templates[i] and charges its output to the
// budget. Its error is an *Error naming the template.
func (x *Execution) Execute(i int) (string, error) {
	t := &x.set.templates[i]
	key, memoized := x.keys.key(&t.deps)
	out, hit := "", false
	if memoized {
		out, hit = t.memo.Get(key)
	}
	if !hit {
		var err error
		if out, err = x.run(t); err != nil {
			return "", newError(t.name, false, err)
		}
		if memoized {
			remember(t.memo, key, out)
		}
	}
	if err := x.budget.write(len(out)); err != nil {
		return "", &Error{Name: t.name, msg: err.Error(), err: err}
	}
	return out, nil
}

func (x *Execution) run(t *setTemplate) (string, error) {
	buf := bufPool.Get().(*limitedBuffer)
	defer bufPool.Put(buf)
	buf.Reset()
	if err := t.exec.run(buf, x.data, x.budget, x.named); err != nil {
		return "", err
	}
	return buf.String(), nil
}
