// Package sqlitedrivers compares the two SQLite drivers for database/sql,
// modernc.org/sqlite (pure Go, the one cachegate uses) and
// mattn/go-sqlite3 (cgo), through cachegate's own cache repository on a
// file, with the connection settings bunstore.Open uses. It is a module of
// its own so that mattn/go-sqlite3 and its C compile stay out of
// cachegate's go.mod and builds. docs/storage.md has the figures.
//
//	cd test/bench/sqlitedrivers && go test -run '^$' -bench . -benchmem
package sqlitedrivers
