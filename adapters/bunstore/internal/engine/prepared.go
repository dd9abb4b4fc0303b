package engine

import (
	"context"
	"database/sql"
	"sync"
	"time"

	"github.com/uptrace/bun"
)

// Prepared prepares a fixed list of statements once, on first use. Bun
// writes a query's arguments into its text, so SQLite would prepare every
// statement anew; the statements of the hottest paths (refresh rotation,
// the user read of refresh) are prepared once instead, with placeholders,
// and database/sql keeps them prepared per connection until the database
// is closed. PostgreSQL prepares none (see QueryRow; docs/benchmarks.md,
// "Storage design choices").
type Prepared struct {
	db      *bun.DB
	eng     Engine
	queries []string

	mu    sync.Mutex
	stmts []*sql.Stmt
}

// NewPrepared returns the set of queries on db, whose engine is eng.
func NewPrepared(db *bun.DB, eng Engine, queries ...string) *Prepared {
	return &Prepared{db: db, eng: eng, queries: queries}
}

// Get returns the prepared statements, in the order of queries.
func (p *Prepared) Get(ctx context.Context) ([]*sql.Stmt, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.stmts != nil {
		return p.stmts, nil
	}
	stmts := make([]*sql.Stmt, 0, len(p.queries))
	for _, q := range p.queries {
		st, err := p.db.DB.PrepareContext(ctx, p.eng.Placeholders(q))
		if err != nil {
			for _, s := range stmts {
				_ = s.Close()
			}
			return nil, err
		}
		stmts = append(stmts, st)
	}
	p.stmts = stmts
	return stmts, nil
}

// QueryRow runs statement i of the set in tx. On SQLite it uses the
// prepared statement. On PostgreSQL it sends the text and its arguments in
// one round trip (pgx's exec mode, an unnamed statement), so no prepared
// statement outlives the transaction and a pooler in transaction mode
// (PgBouncer) meets no session state; Bun's own queries already go so.
func (p *Prepared) QueryRow(ctx context.Context, tx bun.Tx, i int, args ...any) (*sql.Row, error) {
	if !p.eng.Prepares() {
		return tx.Tx.QueryRowContext(ctx, p.eng.Placeholders(p.queries[i]), args...), nil
	}
	stmts, err := p.Get(ctx)
	if err != nil {
		return nil, err
	}
	return tx.StmtContext(ctx, stmts[i]).QueryRowContext(ctx, args...), nil
}

// Exec is QueryRow for a statement that returns no rows.
func (p *Prepared) Exec(ctx context.Context, tx bun.Tx, i int, args ...any) (sql.Result, error) {
	if !p.eng.Prepares() {
		return tx.Tx.ExecContext(ctx, p.eng.Placeholders(p.queries[i]), args...)
	}
	stmts, err := p.Get(ctx)
	if err != nil {
		return nil, err
	}
	return tx.StmtContext(ctx, stmts[i]).ExecContext(ctx, args...)
}

// ExecDB is Exec outside a transaction: the statement commits alone.
func (p *Prepared) ExecDB(ctx context.Context, i int, args ...any) (sql.Result, error) {
	if !p.eng.Prepares() {
		return p.db.DB.ExecContext(ctx, p.eng.Placeholders(p.queries[i]), args...)
	}
	stmts, err := p.Get(ctx)
	if err != nil {
		return nil, err
	}
	return stmts[i].ExecContext(ctx, args...)
}

// QueryDB runs statement i of the set on the handle, outside any
// transaction, and returns its rows: on SQLite the prepared statement, on
// PostgreSQL the text (as ExecDB).
func (p *Prepared) QueryDB(ctx context.Context, i int, args ...any) (*sql.Rows, error) {
	if !p.eng.Prepares() {
		return p.db.DB.QueryContext(ctx, p.eng.Placeholders(p.queries[i]), args...)
	}
	stmts, err := p.Get(ctx)
	if err != nil {
		return nil, err
	}
	return stmts[i].QueryContext(ctx, args...)
}

// DriverNullTime is eng.Time for a nullable time.
func DriverNullTime(eng Engine, t *time.Time) any {
	if t == nil {
		return nil
	}
	return eng.Time(*t)
}
