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
	// EachRefreshFamily calls fn for every refresh family whose live token
	// has not expired at now, in id order, with the used tokens it
	// remembers (so reuse detection and the grace survive the move);
	// revoked ones too (so the access tokens of a session ended before the
	// move stay refused after it).
	EachRefreshFamily(ctx context.Context, now time.Time, fn func(domain.RefreshFamily) error) error
	// EachEntry calls fn for every entry of table live at now, in id order.
	EachEntry(ctx context.Context, table string, now time.Time, fn func(domain.Entry) error) error
}

// ArchiveWriter loads what `cachegate import` reads into a database.
type ArchiveWriter interface {
	// Holds reports whether the database holds any user, refresh family
	// or entry of tables; signing keys do not count (README, "Export and
	// import").
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
	AddRefreshFamilies(ctx context.Context, fs []domain.RefreshFamily) (int, error)
	// AddRefreshTokens takes refresh token records of an archive of format
	// version 1 (one record per issued token); ConvertRefreshTokens, called
	// once after the last of them, stores them as families as the schema
	// migration does (ARCHITECTURE.md, "Authentication").
	AddRefreshTokens(ctx context.Context, rs []domain.RefreshRecord) (int, error)
	// ConvertRefreshTokens stores the families of the tokens given to
	// AddRefreshTokens and returns how many it stored (with merge, a family
	// already stored wins) and how many it skipped.
	ConvertRefreshTokens(ctx context.Context) (stored, skipped int, err error)
	AddEntries(ctx context.Context, table string, es []domain.Entry) (int, error)
	// KeepSigningKey makes id, when stored and current, the one current
	// signing key: every other current key is retired at at, its private
	// half erased. It returns how many keys it retired.
	KeepSigningKey(ctx context.Context, id string, at time.Time) (int, error)
	// Commit makes the whole load visible at once; Rollback discards it
	// (and is harmless after Commit).
	Commit() error
	Rollback() error
}
