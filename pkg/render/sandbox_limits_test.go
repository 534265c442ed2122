package render

import "fmt"

// What the hostile tests know of the sandbox (pkg/sandbox): it cuts a
// template's error at 1 KiB.
const maxErrorMessage = 1 << 10

// sizeString prints a byte count for the tests' messages.
func sizeString(n int64) string {
	return fmt.Sprintf("%.3g MiB", float64(n)/(1<<20))
}
