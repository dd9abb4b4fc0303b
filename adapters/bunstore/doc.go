// Package bunstore implements cachegate's storage ports with Bun on SQLite
// (sqlitedialect) and PostgreSQL (pgdialect, pgx driver). Open returns the
// handle of one database (DB, db.go): its pool, its engine
// (internal/engine, one implementation per database), SQLite's write gate
// (internal/writegate) and the bounds of every call. Each store is made
// from the handle (NewCacheRepository, NewUserRepository, …) and keeps its
// schema and SQL in its own files (docs/storage.md).
package bunstore
