// Package docs checks the repository's documents as a reader meets them:
// every link and every cited section of README.md, ARCHITECTURE.md and
// docs/*.md leads somewhere (links_test.go). The commands those documents
// show are run against the binary in test/e2e (docs_commands_test.go).
package docs
