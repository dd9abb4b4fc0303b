// Package apifuzz holds the OpenAPI conformance fuzz of the HTTP API, the
// Go equivalent of Schemathesis: requests generated from the document
// (adapters/ginhttp/openapi.json), valid and invalid, sent over a real
// socket to the real server (bootstrap, default configuration, SQLite),
// each answer checked against the document. README.md ("Testing") says how
// to run the long run and reproduce a failure.
package apifuzz
