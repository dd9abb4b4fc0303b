package main

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"fmt"
	"log"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // the "pgx" driver
	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect/pgdialect"
	"github.com/uptrace/bun/dialect/sqlitedialect"
	"github.com/uptrace/bun/schema"
	_ "modernc.org/sqlite" // the "sqlite" driver
)

// entry is one row: cachegate's entry without its deletion and quota
// bookkeeping.
type entry struct {
	bun.BaseModel `bun:"table:cache_entries"`

	ID             string     `bun:"id,pk,type:varchar(36)" json:"id"`
	Key            string     `bun:"key,notnull" json:"key"`
	Type           string     `bun:"type,notnull" json:"type"`
	Data           string     `bun:"data" json:"data"`
	AssigneeID     string     `bun:"assignee_id,notnull" json:"-"`
	ExpirationDate *time.Time `bun:"expiration_date" json:"expirationDate"`
	DateCreated    time.Time  `bun:"date_created,notnull" json:"dateCreated"`
	DateUpdated    time.Time  `bun:"date_updated,notnull" json:"dateUpdated"`
	Version        int        `bun:"version,notnull" json:"version"`
}

// openDB opens the database of mode (sqlite or pg) with at most conns
// connections.
func openDB(mode, dsn string, conns int) (*bun.DB, error) {
	var (
		driver  string
		dialect schema.Dialect
	)
	switch mode {
	case "sqlite":
		driver, dialect = "sqlite", sqlitedialect.New()
	case "pg":
		driver, dialect = "pgx", pgdialect.New()
	default:
		return nil, fmt.Errorf("unknown mode %q: nethttp, gin, sqlite or pg", mode)
	}
	sqldb, err := sql.Open(driver, dsn)
	if err != nil {
		return nil, err
	}
	sqldb.SetMaxOpenConns(conns)
	sqldb.SetMaxIdleConns(conns)
	return bun.NewDB(sqldb, dialect), nil
}

// seed makes the table hold n entries of 100 assignees, unless it holds
// that many already.
func seed(ctx context.Context, db *bun.DB, n int) error {
	if have, err := db.NewSelect().Model((*entry)(nil)).Count(ctx); err == nil && have >= int64(n) {
		log.Printf("table already has %d rows", have)
		return nil
	}
	if _, err := db.NewDropTable().Model((*entry)(nil)).IfExists().Exec(ctx); err != nil {
		return err
	}
	if _, err := db.NewCreateTable().Model((*entry)(nil)).Exec(ctx); err != nil {
		return err
	}
	if _, err := db.NewCreateIndex().Model((*entry)(nil)).Index("cache_assignee_key_type").Unique().
		Column("assignee_id", "key", "type").Exec(ctx); err != nil {
		return err
	}
	now := time.Now().UTC()
	exp := now.Add(time.Hour)
	batch := make([]entry, 0, 1000)
	for i := range n {
		batch = append(batch, entry{ID: newID(), Key: fmt.Sprintf("key-%d", i), Type: "settings",
			Data: fmt.Sprintf(`{"theme":"dark","n":%d}`, i), AssigneeID: fmt.Sprintf("user-%d", i%100),
			ExpirationDate: &exp, DateCreated: now, DateUpdated: now, Version: 1})
		if len(batch) == cap(batch) || i == n-1 {
			if _, err := db.NewInsert().Model(&batch).Exec(ctx); err != nil {
				return err
			}
			batch = batch[:0]
		}
	}
	log.Printf("seeded %d rows", n)
	return nil
}

// newID is a random (version 4) UUID.
func newID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	h := hex.EncodeToString(b[:])
	return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}
