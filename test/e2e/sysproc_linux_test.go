package e2e

import "syscall"

// childAttr makes the kernel kill a started cachegate when the test
// process dies, so an interrupted run leaves no server behind.
func childAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
