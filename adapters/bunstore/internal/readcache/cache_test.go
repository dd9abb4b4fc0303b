package readcache

import (
	"strconv"
	"testing"
)

func stamp(version int64, seq uint64) Stamp {
	return Stamp{State: state{epoch: 1, version: version}, Seq: seq}
}

func TestCacheAnswersOnlyReadersOfTheSameState(t *testing.T) {
	c := New(1<<20, func(s string) int { return len(s) })
	c.Put(stamp(7, 1), "a", "A")
	if v, ok := c.Get(stamp(7, 2), "a"); !ok || v != "A" {
		t.Fatalf("same state: %q %v, want A", v, ok)
	}
	if _, ok := c.Get(stamp(8, 3), "a"); ok {
		t.Fatal("a reader of a newer state was answered a value of the older one")
	}
	if _, ok := c.Get(Stamp{State: state{epoch: 2, version: 7}, Seq: 3}, "a"); ok {
		t.Fatal("a reader of another connection's epoch was answered")
	}
	// A value read in a newer state empties the cache; a late put of the
	// older state is ignored.
	c.Put(stamp(8, 3), "b", "B")
	c.Put(stamp(7, 2), "a", "A")
	if _, ok := c.Get(stamp(7, 2), "a"); ok {
		t.Fatal("a value of an older state was kept after a newer one")
	}
	if v, ok := c.Get(stamp(8, 4), "b"); !ok || v != "B" {
		t.Fatalf("newer state: %q %v, want B", v, ok)
	}
}

func TestCacheStaysWithinItsBytes(t *testing.T) {
	const maxBytes = 64 * 100
	c := New(maxBytes, func(s string) int { return len(s) })
	value := string(make([]byte, 90))
	for i := range 1000 {
		c.Put(stamp(1, 1), strconv.Itoa(i), value)
		if c.bytes > maxBytes {
			t.Fatalf("%d bytes after %d puts, bound %d", c.bytes, i+1, maxBytes)
		}
	}
	if len(c.m) == 0 {
		t.Fatal("nothing kept")
	}
	c.Put(stamp(1, 1), "big", string(make([]byte, maxBytes/64+1)))
	if _, ok := c.Get(stamp(1, 1), "big"); ok {
		t.Fatal("a value over a sixty-fourth of the bound was kept")
	}
}
