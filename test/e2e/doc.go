// Package e2e holds black-box end-to-end tests of the cachegate binary: it
// is built once, started as a real process on real sockets with real
// databases (a SQLite file, PostgreSQL through pgtest), and driven only
// through its command line, its HTTP routes, its signals and its logs.
//
// The package has no code of its own besides this comment; everything is
// in its _test.go files. Run it with CACHEGATE_TEST_POSTGRES set (see
// test/pgtest) so the PostgreSQL tests do not skip.
package e2e
