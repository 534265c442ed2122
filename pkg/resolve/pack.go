package resolve

import (
	"bytes"
	"github.com/klauspost/compress/flate"
	"io"
	"sync"
)

// Writers are pooled: a flate writer allocates ~600 KiB of tables.
var writers = sync.Pool{New: func() any {
	// BestSpeed: rendered configs are repetitive text, and speed matters
	// more than the last few percent.
	w, _ := flate.NewWriter(nil, flate.BestSpeed) // cannot fail for a valid level
	return w
}}

// pack compresses data.
func pack(data []byte) ([]byte, error) {
	var buf bytes.Buffer
	buf.Grow(len(data)/4 + 64)
	w := writers.Get().(*flate.Writer)
	defer writers.Put(w)
	w.Reset(&buf)
	if _, err := w.Write(data); err != nil {
		return nil, err
	}
	if err := w.Close(); err != nil {
		return nil, err
	}
	// Don't keep the spare capacity of the buffer alive in the cache.
	return bytes.Clone(buf.Bytes()), nil
}

// unpack reverses pack.
func unpack(packed []byte) ([]byte, error) {
	r := flate.NewReader(bytes.NewReader(packed))
	data, err := io.ReadAll(r)
	// Closing a reader of memory cannot fail once it read everything.
	_ = r.Close()
	return data, err
}
