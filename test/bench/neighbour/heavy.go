package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/url"
	"strconv"
	"sync"
	"time"
)

// heavyAccounts is how many accounts the heavy phase runs its lists from.
const heavyAccounts = 3

// heavyConditions is how many conditions each heavy list ORs: the most a
// query may hold beside the owner's.
const heavyConditions = 49

// seedHeavy creates the heavy phase's accounts, each owning
// c.attackEntries entries with the attacker's keys and little data, and
// returns their tokens. Their users were added before the server started
// (heavyName).
func seedHeavy(ctx context.Context, c config, client *http.Client, base string, ids, passwords []string) ([]string, error) {
	tokens := make([]string, len(ids))
	for i := range ids {
		tok, err := login(ctx, client, base, heavyName(i), passwords[i])
		if err != nil {
			return nil, err
		}
		tokens[i] = tok
		if _, err := createEntries(ctx, client, base, tok, ids[i], c.attackEntries, func(j int) (string, any) {
			return attackerKey(j), map[string]any{"n": j}
		}); err != nil {
			return nil, fmt.Errorf("seed %s: %w", heavyName(i), err)
		}
	}
	return tokens, nil
}

// heavyName is the username of the i-th heavy account.
func heavyName(i int) string { return "heavy" + strconv.Itoa(i+1) }

// heavyLists runs, for each of the heavy accounts, c.heavyWorkers closed
// loops of lists of its own entries whose heavyConditions ORed $contL
// conditions each search every one of its 250-character keys for a word
// that rarely occurs (page=1, so each also counts its matches). Refusals
// are not waited out: the loops go on as fast as they are answered.
func heavyLists(ctx context.Context, a *attacker, c config) {
	client := newClient(a.from, heavyAccounts*c.heavyWorkers, 30*time.Second)
	defer client.CloseIdleConnections()
	var wg sync.WaitGroup
	for i, tok := range a.heavy {
		for w := range c.heavyWorkers {
			wg.Go(func() {
				r := rand.New(rand.NewPCG(uint64(i), uint64(w)<<32|uint64(time.Now().UnixNano())))
				for ctx.Err() == nil {
					code, _, err := doJSON(ctx, client, http.MethodGet, a.base+"/cache/user?"+heavyQuery(r), tok, nil)
					switch {
					case ctx.Err() != nil:
					case err != nil:
						a.counts.add("err")
					default:
						a.counts.status(code)
					}
				}
			})
		}
	}
	wg.Wait()
}

// heavyQuery returns one query string of heavyLists.
func heavyQuery(r *rand.Rand) string {
	q := url.Values{}
	for range heavyConditions {
		q.Add("or", "key||$contL||"+foldWord(r, 4))
	}
	q.Set("page", "1")
	q.Set("limit", "10")
	q.Set("sort", "key,DESC")
	return q.Encode()
}
