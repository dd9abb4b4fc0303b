// Package arch checks the dependency rule of ARCHITECTURE.md ("The
// dependency rule") from inside the repository, so that a clone anywhere
// checks it with `go test`, with or without the workspace's own archcheck
// tool beside it.
package arch
