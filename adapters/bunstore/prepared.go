package bunstore

import (
	"context"
	"database/sql"
	"sync"
	"time"

	"github.com/uptrace/bun"
)

// Bun writes a query's arguments into its text, so SQLite prepares every
// statement anew. The statements of the hottest paths (refresh rotation,
// the user read of refresh) are prepared once instead, with placeholders; database/sql
// keeps them prepared per connection, until the database is closed. On
// PostgreSQL they are not prepared (see queryRow): a kept statement is
// session state, which a pooler in transaction mode cannot carry
// (docs/benchmarks.md, "Storage design choices").

// preparedSet prepares a fixed list of statements once, on first use.
type preparedSet struct {
	db      *bun.DB
	eng     engine
	queries []string

	mu    sync.Mutex
	stmts []*sql.Stmt
}

// get returns the prepared statements, in the order of queries.
func (p *preparedSet) get(ctx context.Context) ([]*sql.Stmt, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.stmts != nil {
		return p.stmts, nil
	}
	stmts := make([]*sql.Stmt, 0, len(p.queries))
	for _, q := range p.queries {
		st, err := p.db.DB.PrepareContext(ctx, p.eng.placeholders(q))
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

// queryRow runs statement i of the set in tx. On SQLite it uses the
// prepared statement. On PostgreSQL it sends the text and its arguments in
// one round trip (pgx's exec mode, an unnamed statement), so no prepared
// statement outlives the transaction and a pooler in transaction mode
// (PgBouncer) meets no session state; Bun's own queries already go so.
func (p *preparedSet) queryRow(ctx context.Context, tx bun.Tx, i int, args ...any) (*sql.Row, error) {
	if !p.eng.prepares() {
		return tx.Tx.QueryRowContext(ctx, p.eng.placeholders(p.queries[i]), args...), nil
	}
	stmts, err := p.get(ctx)
	if err != nil {
		return nil, err
	}
	return tx.StmtContext(ctx, stmts[i]).QueryRowContext(ctx, args...), nil
}

// exec is queryRow for a statement that returns no rows.
func (p *preparedSet) exec(ctx context.Context, tx bun.Tx, i int, args ...any) (sql.Result, error) {
	if !p.eng.prepares() {
		return tx.Tx.ExecContext(ctx, p.eng.placeholders(p.queries[i]), args...)
	}
	stmts, err := p.get(ctx)
	if err != nil {
		return nil, err
	}
	return tx.StmtContext(ctx, stmts[i]).ExecContext(ctx, args...)
}

// execDB is exec outside a transaction: the statement commits alone.
func (p *preparedSet) execDB(ctx context.Context, i int, args ...any) (sql.Result, error) {
	if !p.eng.prepares() {
		return p.db.DB.ExecContext(ctx, p.eng.placeholders(p.queries[i]), args...)
	}
	stmts, err := p.get(ctx)
	if err != nil {
		return nil, err
	}
	return stmts[i].ExecContext(ctx, args...)
}

// driverTime is t as a database/sql argument in the column form of eng's
// database (see sqlTime).
func driverTime(eng engine, t time.Time) any { return eng.time(t) }

// driverNullTime is driverTime for a nullable time.
func driverNullTime(eng engine, t *time.Time) any {
	if t == nil {
		return nil
	}
	return eng.time(*t)
}
