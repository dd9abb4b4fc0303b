// Command cachegate runs the cachegate service and administers it. Run
// `cachegate --help` for the commands and `cachegate <command> --help` for
// a command's flags; the commands live in adapters/cli, wired by bootstrap.
package main

import (
	"os"

	"github.com/cachegate/cachegate/bootstrap"
)

// version is set at build time with -ldflags "-X main.version=…"; left
// empty, `cachegate version` reads the build information.
var version string

func main() {
	os.Exit(bootstrap.Main(version, os.Args[1:], os.Stdin, os.Stdout, os.Stderr, os.Getenv))
}
