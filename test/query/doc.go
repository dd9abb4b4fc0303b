// Package query holds the differential fuzz test of the list query
// language: every query the HTTP edge accepts runs on memstore, SQLite and
// PostgreSQL, and the three must agree.
package query
