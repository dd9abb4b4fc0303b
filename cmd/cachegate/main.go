// Command cachegate runs the cachegate service and administers it.
//
//	cachegate serve                      run the HTTP service
//	cachegate migrate                    apply pending schema migrations
//	cachegate users add --username NAME --password-stdin [--inactive]
//	cachegate users list | disable NAME | enable NAME
//	cachegate users set-password NAME --password-stdin
//	cachegate keys rotate                make a new signing key current
//	cachegate version                    print the version
//
// Every command takes the configuration flags (see `cachegate serve -h`);
// each is also a CACHEGATE_* environment variable and a key of the YAML
// file given with --config.
package main

import (
	"fmt"
	"io"
	"os"
)

// version is set at build time with -ldflags "-X main.version=…".
var version = "dev"

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr, os.Getenv))
}

const usage = `usage: cachegate <command> [flags]

commands:
  serve                                   run the HTTP service
  migrate                                 apply pending schema migrations and exit
  users add --username NAME --password-stdin [--inactive]
  users list
  users disable NAME | users enable NAME
  users set-password NAME --password-stdin
  keys rotate                             make a new token signing key current
  version                                 print the version

Run "cachegate <command> -h" for the configuration flags.
`

// run executes one command and returns the process exit code: 0 success,
// 1 failure, 2 bad usage or configuration.
func run(args []string, stdin io.Reader, stdout, stderr io.Writer, getenv func(string) string) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return 2
	}
	env := cmdEnv{stdin: stdin, stdout: stdout, stderr: stderr, getenv: getenv}
	switch args[0] {
	case "serve":
		return env.serve(args[1:])
	case "migrate":
		return env.migrate(args[1:])
	case "users":
		return env.users(args[1:])
	case "keys":
		return env.keys(args[1:])
	case "version", "--version", "-version":
		fmt.Fprintln(stdout, "cachegate", version)
		return 0
	case "help", "-h", "--help":
		fmt.Fprint(stdout, usage)
		return 0
	}
	fmt.Fprintf(stderr, "cachegate: unknown command %q\n\n%s", args[0], usage)
	return 2
}
