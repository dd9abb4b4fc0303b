// Package image checks how cachegate ships (docs/deployment.md): the OCI
// image that deploy/build-image builds from the Containerfile, run with
// Debian's podman (image_test.go), and the systemd unit
// deploy/cachegate.service, checked by systemd-analyze (unit_test.go).
package image
