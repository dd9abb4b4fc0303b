// Package cli is the command-line driving adapter: it parses `cachegate
// <command> [flags]`, calls the use cases and prints their results, as
// adapters/ginhttp does for HTTP. It knows nothing of fx or of the
// configuration's shape: bootstrap gives it a Host that defines the
// configuration flags and, once they are parsed, a Runtime that starts the
// service or hands out the use cases (Services).
//
// Every command, and every group of subcommands (`cachegate users`),
// answers -h and --help with its usage on standard output and exit status
// 0 (ARCHITECTURE.md, "Adding a command").
package cli
