// Command ceiling is the floor cost of cachegate's hot paths: a server
// that does only the unavoidable work of each (Gin routing, an HS256
// bearer check with go-jose, one Bun statement on SQLite or PostgreSQL,
// bcrypt for login) and nothing cachegate adds on top (validation rules,
// policies, rotation bookkeeping, logging, metrics). `bash test/bench/run
// --ceiling` runs it beside cachegate and prints cachegate's rate as a
// share of it (test/bench/README.md).
//
//	ceiling -mode nethttp|gin|sqlite|pg [-addr 127.0.0.1:8082] [-dsn DSN]
//	        [-rows 100000] [-conns 4] [-cost 10]
//
// -mode nethttp and -mode gin serve GET /hello, the framework floor. In
// sqlite and pg modes it seeds -rows entries first, then serves:
//
//	GET  /cache/:id      bearer checked, SELECT by primary key, JSON
//	POST /cache          bearer checked, JSON body bound, INSERT, 201 JSON
//	POST /auth/login     bcrypt check of user "user" (password Test1234!), a signed pair
//	POST /auth/refresh   refresh token checked, a signed pair
//	GET  /token          a valid access token (set-up helper)
//	GET  /ids?n=N        N existing ids, one a line (set-up helper)
package main

import (
	"context"
	"flag"
	"log"
	"net/http"

	"github.com/gin-gonic/gin"
)

func main() {
	mode := flag.String("mode", "gin", "nethttp, gin, sqlite or pg")
	addr := flag.String("addr", "127.0.0.1:8082", "listen address")
	dsn := flag.String("dsn", "file:ceiling.db?_pragma=journal_mode(WAL)&_pragma=synchronous(NORMAL)&_pragma=busy_timeout(5000)",
		"database DSN (sqlite: a modernc.org/sqlite DSN; pg: a PostgreSQL URL)")
	rows := flag.Int("rows", 100000, "entries to seed")
	conns := flag.Int("conns", 4, "most open database connections")
	cost := flag.Int("cost", 10, "bcrypt cost of the seeded user")
	flag.Parse()

	handler, err := newHandler(context.Background(), *mode, *dsn, *rows, *conns, *cost)
	if err != nil {
		log.Fatal(err)
	}
	log.Printf("%s on %s", *mode, *addr)
	log.Fatal(http.ListenAndServe(*addr, handler))
}

// newHandler is the server of mode: the frameworks' hello, or the hot
// paths on a database it seeds first.
func newHandler(ctx context.Context, mode, dsn string, rows, conns, cost int) (http.Handler, error) {
	hello := []byte("Hello, World!")
	switch mode {
	case "nethttp":
		mux := http.NewServeMux()
		mux.HandleFunc("GET /hello", func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "text/plain")
			_, _ = w.Write(hello)
		})
		return mux, nil
	case "gin":
		gin.SetMode(gin.ReleaseMode)
		r := gin.New()
		r.GET("/hello", func(c *gin.Context) { c.Data(http.StatusOK, "text/plain", hello) })
		return r, nil
	}
	db, err := openDB(mode, dsn, conns)
	if err != nil {
		return nil, err
	}
	if err := seed(ctx, db, rows); err != nil {
		return nil, err
	}
	s, err := newServer(db, cost)
	if err != nil {
		return nil, err
	}
	return s.routes(), nil
}
