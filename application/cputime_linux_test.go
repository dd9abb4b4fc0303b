package application_test

import (
	"runtime"
	"syscall"
	"time"
)

// threadCPU runs fn on one locked OS thread and returns the CPU time that
// thread spent: the work fn did, whatever else the machine runs.
func threadCPU(fn func()) time.Duration {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	before := rusageThread()
	fn()
	return rusageThread() - before
}

func rusageThread() time.Duration {
	var r syscall.Rusage
	if err := syscall.Getrusage(1 /* RUSAGE_THREAD */, &r); err != nil {
		panic(err)
	}
	return time.Duration(r.Utime.Nano() + r.Stime.Nano())
}
