// Package contract holds the test suites every implementation of a port
// runs, so that fakes and real adapters are held to one behaviour:
// CacheRepository, UserRepository, RefreshStore, KeyStore and
// LoginThrottle for the storage adapters (memstore, bunstore on SQLite
// and on PostgreSQL), and CacheHTTP and AuthHTTP for the HTTP API (the
// in-process server and the real binary on either database).
//
// A suite takes a constructor returning a fresh, empty implementation for
// each subtest and runs its subtests in parallel.
package contract
