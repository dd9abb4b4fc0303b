//go:build sqlitecompare

package bunstore

// The cgo driver, for comparison only: it registers itself as "sqlite3".
import _ "github.com/mattn/go-sqlite3"

// extraSQLiteDrivers lists the SQLite drivers the benchmarks compare with
// the one Open uses.
var extraSQLiteDrivers = []struct{ name, driver string }{{"mattn", "sqlite3"}}
