//go:build !linux

package e2e

import "syscall"

// childAttr has nothing to add outside Linux.
func childAttr() *syscall.SysProcAttr { return nil }
