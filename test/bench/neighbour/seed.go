package main

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"strings"
	"sync"
)

// foldAlphabet is what the attacker's keys and queries are made of:
// letters whose lower case differs from their upper case, mostly outside
// ASCII, so that every case-insensitive comparison folds real work.
var foldAlphabet = []rune("ÄäÖöÜüÉéÈèÅåØøÑñÇçΣσΩωЖжЯяĞğŁłabcXYZ")

// attackerKey returns the i-th attacker key: 250 characters, its number
// first (so keys are distinct), then letters of foldAlphabet drawn from a
// generator seeded with i (so a run is repeatable).
func attackerKey(i int) string {
	r := rand.New(rand.NewPCG(uint64(i), 0x6e656967))
	var b strings.Builder
	prefix := fmt.Sprintf("%06d", i)
	b.WriteString(prefix)
	for range 250 - len(prefix) {
		b.WriteRune(foldAlphabet[r.IntN(len(foldAlphabet))])
	}
	return b.String()
}

// foldWord returns n random letters of foldAlphabet in upper case, a
// search term that rarely occurs in a key, so that a condition is tested
// on every row.
func foldWord(r *rand.Rand, n int) string {
	var b strings.Builder
	for range n {
		b.WriteString(strings.ToUpper(string(foldAlphabet[r.IntN(len(foldAlphabet))])))
	}
	return b.String()
}

// createEntries POSTs n entries to /cache/user for assignee with 8
// concurrent requests; entry(i) gives the key and data of the i-th. It
// returns the ids, in order, or the first failure.
func createEntries(ctx context.Context, c *http.Client, base, token, assignee string, n int, entry func(i int) (string, any)) ([]string, error) {
	ids := make([]string, n)
	jobs := make(chan int)
	var (
		wg    sync.WaitGroup
		once  sync.Once
		first error
	)
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range jobs {
				id, err := createEntry(ctx, c, base, token, assignee, entry, i)
				if err != nil {
					once.Do(func() { first = fmt.Errorf("create entry %d: %w", i, err) })
					continue
				}
				ids[i] = id
			}
		}()
	}
	for i := range n {
		jobs <- i
	}
	close(jobs)
	wg.Wait()
	return ids, first
}

func createEntry(ctx context.Context, c *http.Client, base, token, assignee string, entry func(i int) (string, any), i int) (string, error) {
	key, data := entry(i)
	code, body, err := doJSON(ctx, c, http.MethodPost, base+"/cache/user", token, map[string]any{
		"key": key, "type": "bench", "data": data, "assignee": map[string]string{"id": assignee}, "expiresIn": nil,
	})
	if err != nil {
		return "", err
	}
	if code != http.StatusCreated {
		return "", fmt.Errorf("status %d: %.200s", code, body)
	}
	var e struct {
		ID string `json:"id"`
	}
	if err := json.Unmarshal(body, &e); err != nil || e.ID == "" {
		return "", fmt.Errorf("no id in the answer")
	}
	return e.ID, nil
}

// blob returns n bytes of text for an entry's data.
func blob(i, n int) string {
	s := strings.Repeat(fmt.Sprintf("entry %d of the attacker, padding the list; ", i), n/30+1)
	return s[:n]
}
