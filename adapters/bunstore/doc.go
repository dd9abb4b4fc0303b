// Package bunstore implements cachegate's storage ports with Bun on SQLite
// (sqlitedialect) and PostgreSQL (pgdialect, pgx driver). One code path
// serves both; the few dialect differences are named in dialect.go.
package bunstore
