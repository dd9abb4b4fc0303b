package application_test

import (
	"runtime"
	"time"

	"golang.org/x/sys/unix"
)

// threadCPU runs fn on one locked OS thread and returns the CPU time that
// thread spent: the work fn did, whatever else the machine runs. The
// thread's CPU clock (CLOCK_THREAD_CPUTIME_ID) counts in nanoseconds;
// getrusage's RUSAGE_THREAD is split by scheduler ticks (4 ms at 250 Hz),
// too coarse for a check of a few milliseconds.
func threadCPU(fn func()) time.Duration {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	before := threadClock()
	fn()
	return threadClock() - before
}

func threadClock() time.Duration {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts); err != nil {
		panic(err)
	}
	return time.Duration(ts.Nano())
}
