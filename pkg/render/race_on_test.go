//go:build race

package render

// raceDetector: the race detector makes allocations (and sync.Pool misses)
// many times more frequent, and renders many times slower.
const raceDetector = true
