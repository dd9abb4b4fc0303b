//go:build !linux

package application_test

import "time"

// threadCPU returns the wall time fn took: other systems lack a per-thread
// CPU clock in the standard library.
func threadCPU(fn func()) time.Duration {
	start := time.Now()
	fn()
	return time.Since(start)
}
