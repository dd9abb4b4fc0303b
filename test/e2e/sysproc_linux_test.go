package e2e

import "syscall"

// childAttr makes the kernel kill a started cachegate when the test
// process dies, so an interrupted run leaves no server behind.
func childAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}

// groupAttr starts a shell in a process group of its own, so that
// killGroup can stop it together with whatever it started in the
// background.
func groupAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}

// killGroup kills the process group led by pid; it is a no-op for a group
// already gone.
func killGroup(pid int) { _ = syscall.Kill(-pid, syscall.SIGKILL) }
