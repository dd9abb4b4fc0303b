//go:build linux || darwin

package engine

import "syscall"

// stRDOnly is the read-only mount flag of statfs: ST_RDONLY on Linux,
// MNT_RDONLY on macOS, both 1.
const stRDOnly = 1

// statFS is the statFunc of platforms with statfs(2).
func statFS(dir string) (fsStat, bool, error) {
	var s syscall.Statfs_t
	if err := syscall.Statfs(dir, &s); err != nil {
		return fsStat{}, false, err
	}
	return fsStat{avail: s.Bavail * uint64(s.Bsize), readOnly: uint64(s.Flags)&stRDOnly != 0}, true, nil
}
