// Package ports declares the interfaces cachegate's use cases need: storage,
// user lookup, token issuing and verification, password hashing, time and
// ids. Adapters implement them; the application depends on nothing else.
//
// Every method documents its error contract. Errors named there are the
// sentinels of package domain, compared with errors.Is; anything else is
// an infrastructure failure the caller treats as internal.
package ports
