package render

import "io"

// execute runs the template with data, charging b, outside of a set.
func (e *executable) execute(w io.Writer, data any, b *budget) error {
	return e.run(w, data, b, nil)
}
