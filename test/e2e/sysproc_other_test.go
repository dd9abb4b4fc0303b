//go:build !linux

package e2e

import "syscall"

// childAttr has nothing to add outside Linux.
func childAttr() *syscall.SysProcAttr { return nil }

// groupAttr has nothing to add outside Linux.
func groupAttr() *syscall.SysProcAttr { return nil }

// killGroup does nothing outside Linux; the script's own trap stops its
// server there.
func killGroup(int) {}
