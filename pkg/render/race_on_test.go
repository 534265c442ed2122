//go:build race

package render

import "time"

// raceDetector: the race detector makes allocations (and sync.Pool misses)
// many times more frequent, and renders many times slower: the hostile
// OSPs would run out of time before they exceed what they are meant to.
const raceDetector = true

func init() { renderTime = 10 * time.Second }
