package ports

import (
	"context"
	"time"

	"github.com/cachegate/cachegate/domain"
)

// ArchiveReader streams what `cachegate export` carries out of a database.
// Each method reads in pages, so memory stays bounded whatever the size;
// it is not a point-in-time snapshot of a database that is being written.
// fn's error stops the walk and is returned as is.
type ArchiveReader interface {
	// EachUser calls fn for every user, in id order.
	EachUser(ctx context.Context, fn func(domain.User) error) error
	// EachSigningKey calls fn for every stored signing key, in id order.
	EachSigningKey(ctx context.Context, fn func(domain.SigningKey) error) error
	// EachRefresh calls fn for every refresh record not expired at now, in
	// id order: the live families, used tokens included (so reuse detection
	// survives the move), and revoked ones (so the access tokens of a
	// session ended before the move stay refused after it).
	EachRefresh(ctx context.Context, now time.Time, fn func(domain.RefreshRecord) error) error
	// EachEntry calls fn for every entry of table live at now, in id order.
	EachEntry(ctx context.Context, table string, now time.Time, fn func(domain.Entry) error) error
}

// ArchiveWriter loads what `cachegate import` reads into a database.
type ArchiveWriter interface {
	// Holds reports whether the database holds any user, signing key,
	// refresh record or entry of tables.
	Holds(ctx context.Context, tables []string) (bool, error)
	// BeginLoad starts the one transaction an import writes in: nothing is
	// visible, and nothing stays, unless Commit succeeds.
	BeginLoad(ctx context.Context, merge bool) (ArchiveLoad, error)
}

// ArchiveLoad is an import in progress. Each Add inserts a batch. Without
// merge a row whose id (or username, or live natural key) is taken fails
// the batch; with merge the row already stored wins and the new one is
// skipped. Every Add returns how many rows it inserted.
type ArchiveLoad interface {
	AddUsers(ctx context.Context, us []domain.User) (int, error)
	AddSigningKeys(ctx context.Context, ks []domain.SigningKey) (int, error)
	AddRefresh(ctx context.Context, rs []domain.RefreshRecord) (int, error)
	AddEntries(ctx context.Context, table string, es []domain.Entry) (int, error)
	// Commit makes the whole load visible at once; Rollback discards it
	// (and is harmless after Commit).
	Commit() error
	Rollback() error
}
