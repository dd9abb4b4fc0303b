// Package memstore holds in-memory implementations of cachegate's ports,
// for tests and embedders. Each store guards its state with a mutex, keeps
// nothing across restarts and passes the same contract suites
// (test/contract) as the database stores. Like them, every store keeps
// and compares times in UTC at microsecond precision (domain.Normalize).
package memstore
