// Package domain holds cachegate's entities, value objects, rules and
// errors. It depends on the standard library only: no JSON, SQL or binding
// tags live here. Adapters convert to and from these types with named
// converters at their boundary.
package domain
