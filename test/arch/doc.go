// Package arch checks the dependency rule of ARCHITECTURE.md ("The
// dependency rule") from inside the repository, so that a clone anywhere
// checks it with `go test`, with or without the workspace's own archcheck
// tool beside it. It also checks that the repository is self-contained:
// no file cites a document that lives outside it (selfcontained_test.go).
package arch
