//go:build !sqlitecompare

package bunstore

// extraSQLiteDrivers lists the SQLite drivers the benchmarks compare with
// the one Open uses; none unless built with -tags sqlitecompare.
var extraSQLiteDrivers []struct{ name, driver string }
