// Package web is what every room of the HTTP adapter shares (doc.go of
// package ginhttp names the rooms): the error envelope and its status
// table, the one strict JSON body decoder, built from the request types,
// the JSON encoding helpers, the caller of a request, and the Router
// each room mounts its routes on.
package web
