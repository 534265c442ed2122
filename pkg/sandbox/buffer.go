package sandbox

import (
	"bytes"
	"sync"
)

// limitedBuffer is the buffer templates execute into.
type limitedBuffer struct{ bytes.Buffer }

var errOutputTooLarge = exceeded("a template wrote more than %s", sizeString(maxOutput))

func (b *limitedBuffer) Write(p []byte) (int, error) {
	if b.Len()+len(p) > maxOutput {
		return 0, errOutputTooLarge
	}
	return b.Buffer.Write(p)
}

func (b *limitedBuffer) WriteString(s string) (int, error) {
	if b.Len()+len(s) > maxOutput {
		return 0, errOutputTooLarge
	}
	return b.Buffer.WriteString(s)
}

// bufPool holds the buffers templates execute into.
var bufPool = sync.Pool{New: func() any { return new(limitedBuffer) }}
