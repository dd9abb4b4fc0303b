package josejwt

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	jose "github.com/go-jose/go-jose/v4"

	"github.com/cachegate/cachegate/domain"
	"github.com/cachegate/cachegate/ports"
)

// unknownKIDReload is the shortest interval between two reloads caused by
// tokens naming an unknown kid, so garbage tokens cannot hammer the store.
const unknownKIDReload = time.Second

// Tokens holds the signing keys and hands out the issuer and the verifier
// that use them. It is safe for concurrent use.
//
// In EdDSA mode the keys live in the KeyStore: New loads them and, when no
// key can sign, generates an Ed25519 key and stores it. Two replicas
// starting together on an empty store may both add one; the later one
// retires the earlier, both verify, and every replica signs with the
// newest after its next reload. Keys are cached and re-read every
// KeyReload interval, and at most once a second when a token names an
// unknown kid, so a rotation made by another process is picked up without
// a restart.
type Tokens struct {
	opts  Options
	alg   jose.SignatureAlgorithm
	allow []jose.SignatureAlgorithm
	ring  atomic.Pointer[keyring]
	cache *verifyCache
	// window is how long a retired key still verifies refresh tokens
	// (MaxTokenTTL plus Leeway); accessWindow how long it still verifies
	// access tokens (AccessTokenTTL plus Leeway).
	window       time.Duration
	accessWindow time.Duration
	seal         *sealer
	// refreshAudience is the aud of refresh tokens (RefreshAudience).
	refreshAudience string

	reloadMu sync.Mutex
	// nextReload is the UnixNano instant after which the keys are stale.
	nextReload atomic.Int64
	// lastReload is when the keys were last read; guarded by reloadMu.
	lastReload time.Time
	// stamp is the keysStamp of the stored keys the ring was last built
	// from; guarded by reloadMu.
	stamp [sha256.Size]byte
	// reloads logs when the periodic reloads start failing and when they
	// recover, not every failed reload (a second apart in an outage).
	reloads ports.FailureLog

	issuer   Issuer
	verifier Verifier
}

// New validates o, loads (or in EdDSA mode, on an empty store, creates)
// the signing keys and returns Tokens ready to sign and verify.
func New(ctx context.Context, o Options) (*Tokens, error) {
	o, err := o.withDefaults()
	if err != nil {
		return nil, err
	}
	t := &Tokens{opts: o, window: o.MaxTokenTTL + o.Leeway, accessWindow: min(o.AccessTokenTTL, o.MaxTokenTTL) + o.Leeway,
		refreshAudience: RefreshAudience(o.Audience)}
	t.issuer.t, t.verifier.t = t, t
	if o.KeyEncryptionSecret != nil {
		t.seal = &sealer{secret: append([]byte(nil), o.KeyEncryptionSecret...), random: rand.Reader}
	}
	if o.VerifyCacheSize > 0 {
		t.cache = newVerifyCache(o.VerifyCacheSize)
	}
	if o.HS256Secret != nil {
		t.alg = jose.HS256
		ring, err := hs256Ring(append([]byte(nil), o.HS256Secret...))
		if err != nil {
			return nil, err
		}
		t.ring.Store(ring)
		t.nextReload.Store(maxNano)
	} else {
		t.alg = jose.EdDSA
		t.reloadMu.Lock()
		err := t.reloadLocked(ctx, o.Clock.Now())
		t.reloadMu.Unlock()
		if err != nil {
			return nil, err
		}
	}
	t.allow = []jose.SignatureAlgorithm{t.alg}
	return t, nil
}

const maxNano = int64(^uint64(0) >> 1)

// RefreshAudience returns the aud of refresh tokens for the access
// audience audience: audience + ":refresh".
func RefreshAudience(audience string) string { return audience + ":refresh" }

// Issuer returns the ports.TokenIssuer signing with t's signing key at
// each instant.
func (t *Tokens) Issuer() *Issuer { return &t.issuer }

// Verifier returns the ports.TokenVerifier checking tokens against t's
// keys.
func (t *Tokens) Verifier() *Verifier { return &t.verifier }

// Reload re-reads the keys from the KeyStore now. It is a no-op in HS256
// mode. On failure t keeps the keys it had.
func (t *Tokens) Reload(ctx context.Context) error {
	if t.alg != jose.EdDSA {
		return nil
	}
	t.reloadMu.Lock()
	defer t.reloadMu.Unlock()
	return t.reloadLocked(ctx, t.opts.Clock.Now())
}

// Rotate generates a new Ed25519 key and stores it published: it is in
// the JWKS and verifies at once, and signs from KeyPublishAhead later
// (at once when immediate is set), when the store retires the previous
// key, which keeps verifying the tokens it signed. Every replica switches
// at that instant (keyring.signerAt), having read the key within its
// KeyReload. It returns the new key without its private half. In HS256
// mode it fails.
//
// The events record the rotation: the store writes them with the new key,
// in its transaction (ports.KeyStore.AddSigningKey), each with its Family
// set to the new kid (a key event's Family holds the key id,
// domain.AuditEvent), which only exists here.
func (t *Tokens) Rotate(ctx context.Context, immediate bool, events ...domain.AuditEvent) (domain.SigningKey, error) {
	if t.alg != jose.EdDSA {
		return domain.SigningKey{}, errHS256Rotate
	}
	t.reloadMu.Lock()
	defer t.reloadMu.Unlock()
	now := t.opts.Clock.Now()
	k, err := t.newKey(now)
	if err != nil {
		return domain.SigningKey{}, err
	}
	if !immediate {
		k.SignsFrom = domain.Normalize(now.Add(t.opts.KeyPublishAhead))
	}
	events = slices.Clone(events)
	for i := range events {
		events[i].Family = k.ID
	}
	if err := t.opts.Keys.AddSigningKey(ctx, k, events...); err != nil {
		return domain.SigningKey{}, fmt.Errorf("rotate signing key: %w", err)
	}
	if err := t.reloadLocked(ctx, now); err != nil {
		// The key is stored; the next call reloads again.
		t.nextReload.Store(now.UnixNano())
		t.opts.Logger.WarnContext(ctx, "reload signing keys after rotation failed", "error", err)
	}
	k.Private = nil
	k.SignsFrom = k.Activation()
	return k, nil
}

// PruneKeys deletes the keys retired longer ago than MaxTokenTTL plus
// Leeway (no token they signed can still be valid) and returns how many it
// deleted. Without a KeyStore it does nothing.
func (t *Tokens) PruneKeys(ctx context.Context) (int, error) {
	if t.opts.Keys == nil {
		return 0, nil
	}
	now := t.opts.Clock.Now()
	n, err := t.opts.Keys.DeleteSigningKeysRetiredBefore(ctx, now.Add(-t.window))
	if err != nil {
		return 0, fmt.Errorf("prune signing keys: %w", err)
	}
	if n > 0 {
		if err := t.Reload(ctx); err != nil {
			t.opts.Logger.WarnContext(ctx, "reload signing keys after pruning failed", "error", err)
		}
	}
	return n, nil
}

// JWKS returns the JSON Web Key Set of the public keys that may verify a
// still-valid access token: the signing key, any key published to sign
// next (Rotate), and those retired less than AccessTokenTTL plus Leeway
// ago (never a revoked one), newest first, each
// with kid, alg "EdDSA" and use "sig". In HS256 mode the set is empty:
// {"keys":[]}.
func (t *Tokens) JWKS(ctx context.Context) ([]byte, error) {
	now := t.opts.Clock.Now()
	ring := t.keys(ctx, now)
	set := jose.JSONWebKeySet{Keys: []jose.JSONWebKey{}}
	if t.alg == jose.EdDSA {
		for _, k := range ring.ordered {
			if k.usable(now, t.accessWindow) {
				set.Keys = append(set.Keys, jose.JSONWebKey{Key: k.key, KeyID: k.kid, Algorithm: algEdDSA, Use: "sig"})
			}
		}
	}
	b, err := json.Marshal(set)
	if err != nil {
		return nil, fmt.Errorf("encode JWKS: %w", err)
	}
	return b, nil
}

// keys returns the current snapshot, first reloading it when it is stale.
// The call that finds it stale reloads; concurrent callers go on with the
// snapshot they have. A failed reload is retried a second later; the first
// failure and the recovery are logged (reloads), not each failure.
func (t *Tokens) keys(ctx context.Context, now time.Time) *keyring {
	if now.UnixNano() >= t.nextReload.Load() && t.reloadMu.TryLock() {
		if now.UnixNano() >= t.nextReload.Load() {
			t.reloads.Record(ctx, t.opts.Logger, "reload signing keys", t.reloadLocked(ctx, now), now)
		}
		t.reloadMu.Unlock()
	}
	return t.ring.Load()
}

// revokedMore reports whether next revokes a key prev did not.
func revokedMore(prev, next *keyring) bool {
	for kid := range next.revoked {
		if !prev.revoked[kid] {
			return true
		}
	}
	return false
}

// KeepLoaded reads the stored keys every KeyPoll until ctx is done and
// reloads them when they changed (a key published by `keys rotate` on
// another process, a revocation), or once they are KeyReload old. So every
// process lists a published key, and ends the streams of a revoked key's
// tokens, within a second, serving requests or not (README.md, "Signing
// keys"), and a rotation's publish-ahead holds on every replica. Requests
// also reload lazily; whichever comes first reloads. It is a no-op
// in HS256 mode.
func (t *Tokens) KeepLoaded(ctx context.Context) {
	if t.alg != jose.EdDSA {
		return
	}
	tick := time.NewTicker(KeyPoll)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
			t.poll(ctx, t.opts.Clock.Now())
		}
	}
}

// poll reloads the keys when they are stale (keys), else reads the
// stored keys and reloads only when they differ from those the ring was
// built from: the read is one small query, the reload opens private
// halves and may write.
func (t *Tokens) poll(ctx context.Context, now time.Time) {
	if now.UnixNano() >= t.nextReload.Load() {
		t.keys(ctx, now)
		return
	}
	if !t.reloadMu.TryLock() {
		return // a reload is under way
	}
	defer t.reloadMu.Unlock()
	stored, err := t.opts.Keys.SigningKeys(ctx)
	if err == nil && keysStamp(stored) != t.stamp {
		err = t.reloadLocked(ctx, now)
	}
	t.reloads.Record(ctx, t.opts.Logger, "reload signing keys", err, now)
}

// keysStamp digests stored keys, every field, so that any change to them
// changes it.
func keysStamp(stored []domain.SigningKey) [sha256.Size]byte {
	h := sha256.New()
	field := func(b []byte) {
		h.Write(binary.BigEndian.AppendUint32(nil, uint32(len(b))))
		h.Write(b)
	}
	stamp := func(t *time.Time) {
		if t == nil {
			field(nil)
			return
		}
		field(binary.BigEndian.AppendUint64([]byte{1}, uint64(t.UnixMicro())))
	}
	for _, k := range stored {
		field([]byte(k.ID))
		field([]byte(k.Algorithm))
		field(k.Private)
		field(k.Public)
		stamp(&k.DateCreated)
		from := k.Activation()
		stamp(&from)
		stamp(k.RetiredAt)
		stamp(k.RevokedAt)
	}
	return [sha256.Size]byte(h.Sum(nil))
}

// keysForUnknownKID reloads the keys for a token naming kid, unless kid is
// known by now or the keys were read less than unknownKIDReload ago.
func (t *Tokens) keysForUnknownKID(ctx context.Context, now time.Time, kid string) *keyring {
	if t.alg != jose.EdDSA {
		return t.ring.Load()
	}
	t.reloadMu.Lock()
	defer t.reloadMu.Unlock()
	if ring := t.ring.Load(); ring.byKID[kid] != nil || ring.revoked[kid] || now.Sub(t.lastReload).Abs() < unknownKIDReload {
		return ring
	}
	t.reloads.Record(ctx, t.opts.Logger, "reload signing keys", t.reloadLocked(ctx, now), now)
	return t.ring.Load()
}

// reloadLocked reads the keys from the store and swaps in the new
// snapshot. When no key can sign, or the keys that sign are stored in
// clear although a key encryption secret is configured, it adds a key
// that signs at once first. The caller holds reloadMu.
//
// Adding that key retires every other key at once and erases its private
// half (ports.KeyStore.AddSigningKey): a key stored in clear is replaced,
// not sealed in place, because its seed in clear may outlive the erasure
// in the database's free pages and log (PostgreSQL's dead rows and WAL,
// docs/operations.md, "Signing keys at rest"), and a seed found there
// then belongs to a key that signs nothing. Its public half keeps
// verifying the tokens it signed, as any retired key's does, so no
// session ends.
func (t *Tokens) reloadLocked(ctx context.Context, now time.Time) error {
	t.lastReload = now
	// Until this attempt succeeds, retry after unknownKIDReload.
	t.nextReload.Store(now.Add(unknownKIDReload).UnixNano())
	ring, stored, err := t.load(ctx, now)
	generated := false
	if err == nil && (len(ring.signers) == 0 || len(ring.plain) > 0) {
		generated = true
		plain := ring.plain
		key, gerr := t.newKey(now)
		if gerr != nil {
			return gerr
		}
		if err := t.opts.Keys.AddSigningKey(ctx, key); err != nil {
			return fmt.Errorf("store new signing key: %w", err)
		}
		ring, stored, err = t.load(ctx, now)
		if err == nil && len(ring.signers) == 0 {
			err = errors.New("the key store holds no signing EdDSA key after adding one")
		}
		if err == nil && len(plain) > 0 {
			t.opts.Logger.InfoContext(ctx, "signing keys stored in clear retired and erased; an encrypted key signs",
				"retired", plain, "kid", key.ID)
		}
	}
	if err != nil {
		return err
	}
	t.stamp = keysStamp(stored)
	t.eraseRetired(ctx, stored, now)
	prev := t.ring.Swap(ring)
	t.nextReload.Store(now.Add(t.opts.KeyReload).UnixNano())
	if t.opts.KeysRevoked != nil && prev != nil && revokedMore(prev, ring) {
		t.opts.KeysRevoked()
	}
	if generated {
		// Replicas starting together on an empty store may each create a
		// first key, one of them after the other read the store: that one
		// does not know the other's key yet. Its first token naming an
		// unknown kid may reload at once, and the keys are read again a
		// second later, so the replicas agree on the newest key.
		t.lastReload = time.Time{}
		t.nextReload.Store(now.Add(unknownKIDReload).UnixNano())
	}
	return nil
}

// newKey generates a key created at now, its private half sealed when a
// key encryption secret is configured.
func (t *Tokens) newKey(now time.Time) (domain.SigningKey, error) {
	k, err := newEd25519Key(rand.Reader, now)
	if err != nil || t.seal == nil {
		return k, err
	}
	if k.Private, err = t.seal.seal(k.ID, k.Private); err != nil {
		return domain.SigningKey{}, err
	}
	return k, nil
}

// eraseAfter is how long after its retirement a key's private half is
// erased by a reload (a key published ahead retires the previous one in
// the future, so AddSigningKey cannot erase it then): a process whose
// clock lags by less still reads the key it signs with.
const eraseAfter = 5 * time.Second

// eraseRetired erases the private halves of the stored keys whose
// retirement passed more than eraseAfter ago. A failure is logged: the
// next reload tries again.
func (t *Tokens) eraseRetired(ctx context.Context, stored []domain.SigningKey, now time.Time) {
	for _, sk := range stored {
		if sk.RetiredAt == nil || len(sk.Private) == 0 || now.Before(sk.RetiredAt.Add(eraseAfter)) {
			continue
		}
		if err := t.opts.Keys.SetSigningKeyPrivate(ctx, sk.ID, nil); err != nil {
			t.opts.Logger.WarnContext(ctx, "erase the private half of a retired signing key", "kid", sk.ID, "error", err)
		}
	}
}

// List returns every stored key, newest first, without private halves.
// In HS256 mode it returns none.
func (t *Tokens) List(ctx context.Context) ([]domain.SigningKey, error) {
	if t.alg != jose.EdDSA {
		return nil, nil
	}
	keys, err := t.opts.Keys.SigningKeys(ctx)
	if err != nil {
		return nil, fmt.Errorf("list signing keys: %w", err)
	}
	for i := range keys {
		keys[i].Private = nil
	}
	return keys, nil
}

// Revoke revokes the key kid: no process accepts a token it signed once
// its keys are reloaded (every KeyReload). When kid signs, a new key that
// signs at once is added first; a key published ahead that does not sign
// yet is only withdrawn, and the signing key keeps signing
// (ports.KeyStore.RevokeSigningKey). domain.ErrSigningKeyNotFound for an
// unknown kid; in HS256 mode it fails. The events record the revocation: the store
// writes them in its transaction (ports.KeyStore.RevokeSigningKey).
func (t *Tokens) Revoke(ctx context.Context, kid string, events ...domain.AuditEvent) error {
	if t.alg != jose.EdDSA {
		return errHS256Revoke
	}
	t.reloadMu.Lock()
	defer t.reloadMu.Unlock()
	now := t.opts.Clock.Now()
	stored, err := t.opts.Keys.SigningKeys(ctx)
	if err != nil {
		return fmt.Errorf("revoke signing key: %w", err)
	}
	i := slices.IndexFunc(stored, func(k domain.SigningKey) bool { return k.ID == kid })
	if i < 0 {
		return domain.ErrSigningKeyNotFound
	}
	if stored[i].StateAt(now) == domain.KeySigning {
		k, err := t.newKey(now)
		if err != nil {
			return err
		}
		if err := t.opts.Keys.AddSigningKey(ctx, k); err != nil {
			return fmt.Errorf("revoke signing key: make a new key current: %w", err)
		}
	}
	if err := t.opts.Keys.RevokeSigningKey(ctx, kid, now, events...); err != nil {
		return fmt.Errorf("revoke signing key: %w", err)
	}
	if err := t.reloadLocked(ctx, now); err != nil {
		t.nextReload.Store(now.UnixNano())
		t.opts.Logger.WarnContext(ctx, "reload signing keys after revocation failed", "error", err)
	}
	return nil
}

// load reads the stored keys and builds their ring as of now.
func (t *Tokens) load(ctx context.Context, now time.Time) (*keyring, []domain.SigningKey, error) {
	stored, err := t.opts.Keys.SigningKeys(ctx)
	if err != nil {
		return nil, nil, fmt.Errorf("load signing keys: %w", err)
	}
	ring, err := eddsaRing(stored, t.seal, now)
	if err != nil {
		return nil, nil, fmt.Errorf("load signing keys: %w", err)
	}
	return ring, stored, nil
}
