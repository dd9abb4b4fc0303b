package application

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"

	"github.com/cachegate/cachegate/domain"
	"github.com/cachegate/cachegate/ports"
)

// Archive is the use case behind `cachegate export` and `cachegate import`
// (docs/operations.md, "Moving from SQLite to PostgreSQL"): everything users need to keep their sessions
// and their data, moved between databases of either kind.
type Archive struct {
	Reader ports.ArchiveReader
	Writer ports.ArchiveWriter
	Clock  ports.Clock
	// Entities maps each configured entity key to its table.
	Entities map[string]string
	// MaxDataBytes bounds an imported entry's data as a write's
	// (--data-bytes); zero means domain.DefaultMaxDataBytes.
	MaxDataBytes int
}

// MaxData is the bound on an imported entry's data.
func (a *Archive) MaxData() int {
	return positive(a.MaxDataBytes, domain.DefaultMaxDataBytes)
}

// ArchiveRecord is one record of an archive; exactly one of User, Key,
// Family, Refresh and Entry is set.
type ArchiveRecord struct {
	User   *domain.User
	Key    *domain.SigningKey
	Family *domain.RefreshFamily
	// Refresh is one issued refresh token, as archives of format version
	// 1 carried sessions; Import stores their families.
	Refresh *domain.RefreshRecord
	Entry   *domain.Entry
	// Entity is the entity key Entry belongs to.
	Entity string
	// Line is where the record was read (import), for error messages; 0
	// when unknown.
	Line int
}

// ArchiveCounts says how many records of each kind went through, and how
// many were left behind (expired, or already stored when merging). Refresh
// counts refresh families.
type ArchiveCounts struct {
	Users, SigningKeys, Refresh, Entries int
	Skipped                              int
}

// Total is the number of records that went through.
func (c ArchiveCounts) Total() int { return c.Users + c.SigningKeys + c.Refresh + c.Entries }

// Export calls emit for every record worth moving, in this order: users,
// signing keys, refresh families whose live token has not expired
// (revoked ones included), then the live entries of each entity (entities
// by key). emit's error stops the export and is returned as is.
func (a *Archive) Export(ctx context.Context, emit func(ArchiveRecord) error) (ArchiveCounts, error) {
	var c ArchiveCounts
	now := a.Clock.Now()
	if err := a.Reader.EachUser(ctx, func(u domain.User) error {
		c.Users++
		return emit(ArchiveRecord{User: &u})
	}); err != nil {
		return c, fmt.Errorf("export users: %w", err)
	}
	if err := a.Reader.EachSigningKey(ctx, func(k domain.SigningKey) error {
		c.SigningKeys++
		return emit(ArchiveRecord{Key: &k})
	}); err != nil {
		return c, fmt.Errorf("export signing keys: %w", err)
	}
	if err := a.Reader.EachRefreshFamily(ctx, now, func(f domain.RefreshFamily) error {
		c.Refresh++
		return emit(ArchiveRecord{Family: &f})
	}); err != nil {
		return c, fmt.Errorf("export refresh families: %w", err)
	}
	for _, entity := range a.entityKeys() {
		if err := a.Reader.EachEntry(ctx, a.Entities[entity], now, func(e domain.Entry) error {
			c.Entries++
			return emit(ArchiveRecord{Entry: &e, Entity: entity})
		}); err != nil {
			return c, fmt.Errorf("export entries of %s: %w", entity, err)
		}
	}
	return c, nil
}

func (a *Archive) entityKeys() []string { return slices.Sorted(maps.Keys(a.Entities)) }

// ErrTargetNotEmpty refuses an import into a database that already holds
// users, sessions or entries, unless merging. Signing keys do not count:
// every start creates one, `migrate` included.
var ErrTargetNotEmpty = errors.New("the target database is not empty; import into an empty database, or pass --merge to add to it (rows already stored win)")

// ImportInput is what Import loads.
type ImportInput struct {
	// Next returns the next record, or io.EOF after the last one. Its
	// other errors stop the import, which then leaves the target as it
	// was.
	Next func() (ArchiveRecord, error)
	// Merge allows a target that is not empty; rows already stored win.
	Merge bool
}

// Import batch limits: a batch is flushed at importBatchRows rows or when
// its entries' data reach importBatchBytes.
const (
	importBatchRows  = 500
	importBatchBytes = 4 << 20
)

// Import loads records into the target in one transaction, in batches: on
// any error nothing of the import stays. Every record is held to the
// domain rules of the path that makes it (validRecord), and one that
// breaks them is refused with its line. Entries deleted or expired, and
// refresh families (or tokens) expired, by now are skipped. A record of an
// entity the target does not configure is an error.
func (a *Archive) Import(ctx context.Context, in ImportInput) (ArchiveCounts, error) {
	var c ArchiveCounts
	if !in.Merge {
		tables := make([]string, 0, len(a.Entities))
		for _, k := range a.entityKeys() {
			tables = append(tables, a.Entities[k])
		}
		holds, err := a.Writer.Holds(ctx, tables)
		if err != nil {
			return c, fmt.Errorf("import: %w", err)
		}
		if holds {
			return c, ErrTargetNotEmpty
		}
	}
	load, err := a.Writer.BeginLoad(ctx, in.Merge)
	if err != nil {
		return c, fmt.Errorf("import: %w", err)
	}
	defer func() { _ = load.Rollback() }()
	b := importBatches{load: load, counts: &c, entries: map[string]*batch[domain.Entry]{}}
	now := a.Clock.Now()
	for {
		r, err := in.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return c, err
		}
		if err := validRecord(&r, a.MaxData()); err != nil {
			return c, err
		}
		switch {
		case r.User != nil:
			if b.users.add(*r.User, r.Line, 0) {
				err = b.flushUsers(ctx)
			}
		case r.Key != nil:
			b.noteCurrent(*r.Key)
			if b.keys.add(*r.Key, r.Line, 0) {
				err = b.flushKeys(ctx)
			}
		case r.Family != nil:
			if !r.Family.ExpiresAt.After(now) {
				c.Skipped++
				continue
			}
			if b.families.add(*r.Family, r.Line, 0) {
				err = b.flushFamilies(ctx)
			}
		case r.Refresh != nil:
			if !r.Refresh.ExpiresAt.After(now) {
				c.Skipped++
				continue
			}
			if b.tokens.add(*r.Refresh, r.Line, 0) {
				err = b.flushTokens(ctx)
			}
		case r.Entry != nil:
			if !r.Entry.Live(now) {
				c.Skipped++
				continue
			}
			table, ok := a.Entities[r.Entity]
			if !ok {
				return c, fmt.Errorf("line %d: entity %q is not configured in this service (configure it, with the same table or another, before importing)", r.Line, r.Entity)
			}
			eb := b.entries[table]
			if eb == nil {
				eb = &batch[domain.Entry]{}
				b.entries[table] = eb
			}
			if eb.add(*r.Entry, r.Line, len(r.Entry.Data)) {
				err = b.flushEntries(ctx, table, eb)
			}
		default:
			return c, fmt.Errorf("line %d: an empty record", r.Line)
		}
		if err != nil {
			return c, err
		}
	}
	if err := b.flushAll(ctx); err != nil {
		return c, err
	}
	if b.current != nil {
		// The archive's current key signs from now on; the key the
		// target generated at its first start (`migrate`) or held before
		// a merge is retired, so exactly one key signs (README, "Export
		// and import").
		if _, err := load.KeepSigningKey(ctx, b.current.ID, now); err != nil {
			return c, fmt.Errorf("import: %w", err)
		}
	}
	if err := load.Commit(); err != nil {
		return c, fmt.Errorf("import: %w", err)
	}
	return c, nil
}

// validRecord holds r to its domain rules, an entry's ids put in lower
// case as every store keeps them; the error names r's line and kind.
// Quotas do not apply: an import is an administrator's restore.
func validRecord(r *ArchiveRecord, maxData int) error {
	var (
		kind string
		err  error
	)
	switch {
	case r.User != nil:
		kind, err = "user", r.User.Validate()
	case r.Key != nil:
		kind, err = "signingKey", r.Key.Validate()
	case r.Family != nil:
		kind, err = "refreshFamily", r.Family.Validate()
	case r.Refresh != nil:
		kind, err = "refresh", r.Refresh.Validate()
	case r.Entry != nil:
		kind = "entry"
		var e domain.Entry
		if e, err = r.Entry.Validate(maxData); err == nil {
			r.Entry = &e
		}
	}
	if err != nil {
		return fmt.Errorf("line %d: %s: %w", r.Line, kind, err)
	}
	return nil
}

// importBatches holds the rows read and not yet written, per kind.
type importBatches struct {
	load   ports.ArchiveLoad
	counts *ArchiveCounts

	users       batch[domain.User]
	keys        batch[domain.SigningKey]
	families    batch[domain.RefreshFamily]
	tokens      batch[domain.RefreshRecord]
	entries     map[string]*batch[domain.Entry]
	tokensAdded bool               // their families are stored at the end
	current     *domain.SigningKey // the newest current key of the archive
}

// noteCurrent remembers k when it is the newest current key read so far:
// neither revoked nor retired, not even ahead (an archive carries no
// activation time, so its keys sign from their creation).
func (b *importBatches) noteCurrent(k domain.SigningKey) {
	if k.RevokedAt != nil || k.RetiredAt != nil {
		return
	}
	if c := b.current; c == nil || k.DateCreated.After(c.DateCreated) || (k.DateCreated.Equal(c.DateCreated) && k.ID > c.ID) {
		b.current = &k
	}
}

// batch is the rows of one kind read and not yet written, the line of the
// first of them (for error messages) and the size of their data.
type batch[T any] struct {
	rows  []T
	from  int
	bytes int
}

// add appends row, read at line with size bytes of data, and reports
// whether the batch is due: importBatchRows rows or importBatchBytes.
func (b *batch[T]) add(row T, line, size int) bool {
	b.rows = append(b.rows, row)
	b.from = cmp.Or(b.from, line)
	b.bytes += size
	return len(b.rows) >= importBatchRows || b.bytes >= importBatchBytes
}

func (b *importBatches) flushUsers(ctx context.Context) error {
	return flushRows(ctx, b, "users", &b.users, &b.counts.Users, b.load.AddUsers)
}

func (b *importBatches) flushKeys(ctx context.Context) error {
	return flushRows(ctx, b, "signing keys", &b.keys, &b.counts.SigningKeys, b.load.AddSigningKeys)
}

func (b *importBatches) flushFamilies(ctx context.Context) error {
	return flushRows(ctx, b, "refresh families", &b.families, &b.counts.Refresh, b.load.AddRefreshFamilies)
}

func (b *importBatches) flushEntries(ctx context.Context, table string, eb *batch[domain.Entry]) error {
	return flushRows(ctx, b, "entries", eb, &b.counts.Entries, func(ctx context.Context, es []domain.Entry) (int, error) {
		return b.load.AddEntries(ctx, table, es)
	})
}

// flushTokens loads the refresh tokens read; they count once their
// families are stored (convertTokens).
func (b *importBatches) flushTokens(ctx context.Context) error {
	if len(b.tokens.rows) == 0 {
		return nil
	}
	b.tokensAdded = true
	return flushRows(ctx, b, "refresh tokens", &b.tokens, nil, b.load.AddRefreshTokens)
}

// flushRows loads the rows of rb with add, counts those added into *added
// and the others as skipped (neither when added is nil), and empties rb.
func flushRows[T any](ctx context.Context, b *importBatches, what string, rb *batch[T], added *int,
	add func(context.Context, []T) (int, error)) error {
	n, err := add(ctx, rb.rows)
	if err != nil && rb.from > 0 {
		return fmt.Errorf("import %s of the batch starting at line %d: %w", what, rb.from, err)
	}
	if err != nil {
		return fmt.Errorf("import %s: %w", what, err)
	}
	if added != nil {
		*added += n
		b.counts.Skipped += len(rb.rows) - n
	}
	rb.rows, rb.from, rb.bytes = rb.rows[:0], 0, 0
	return nil
}

// convertTokens stores the families of the refresh tokens loaded.
func (b *importBatches) convertTokens(ctx context.Context) error {
	if !b.tokensAdded {
		return nil
	}
	stored, skipped, err := b.load.ConvertRefreshTokens(ctx)
	if err != nil {
		return fmt.Errorf("import the families of the refresh tokens: %w", err)
	}
	b.counts.Refresh += stored
	b.counts.Skipped += skipped
	return nil
}

func (b *importBatches) flushAll(ctx context.Context) error {
	for _, flush := range []func(context.Context) error{b.flushUsers, b.flushKeys, b.flushFamilies, b.flushTokens, b.convertTokens} {
		if err := flush(ctx); err != nil {
			return err
		}
	}
	for _, t := range slices.Sorted(maps.Keys(b.entries)) {
		if err := b.flushEntries(ctx, t, b.entries[t]); err != nil {
			return err
		}
	}
	return nil
}
