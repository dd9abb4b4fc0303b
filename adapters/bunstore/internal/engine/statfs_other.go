//go:build !linux && !darwin

package engine

// statFS cannot tell on this platform: the readiness check then tests no
// disk space (README, "What the API does").
func statFS(string) (fsStat, bool, error) { return fsStat{}, false, nil }
