package cache

import (
	"sync"
	"testing"
)

func TestVersionEmpties(t *testing.T) {
	var c Map[int, string, int]
	if _, ok := c.Get(1, "a"); ok {
		t.Fatal("empty map held a")
	}
	c.Put(1, "a", 10)
	if v, ok := c.Get(1, "a"); !ok || v != 10 {
		t.Fatalf("Get(1, a) = %d, %v; want 10, true", v, ok)
	}
	if _, ok := c.Get(2, "a"); ok {
		t.Fatal("a read at version 2 served the entry of version 1")
	}
	c.Put(1, "b", 20) // a slower read of version 1: stale now
	if _, ok := c.Get(2, "b"); ok {
		t.Fatal("a put at an old version was kept")
	}
}

func TestBoundEmpties(t *testing.T) {
	c := Map[int, int, int]{Max: 4}
	c.Get(0, 0)
	for k := range 4 {
		c.Put(0, k, k)
	}
	c.Put(0, 3, 33) // replacing a held key keeps the others
	if _, ok := c.Get(0, 0); !ok {
		t.Fatal("replacing a key emptied the map")
	}
	c.Put(0, 4, 4)
	if _, ok := c.Get(0, 0); ok {
		t.Fatal("a fifth key did not empty a map bounded at four")
	}
	if v, ok := c.Get(0, 4); !ok || v != 4 {
		t.Fatal("the key that emptied the map was not kept")
	}
	c.PutMany(0, []int{5, 6, 7, 8, 9}, func(k int) int { return k })
	if _, ok := c.Get(0, 5); ok {
		t.Fatal("PutMany kept more keys than the bound")
	}
}

func TestCostBound(t *testing.T) {
	c := Map[int, string, string]{Cost: func(_, v string) int { return len(v) }, MaxCost: 160}
	c.Get(0, "")
	c.Put(0, "big", string(make([]byte, 11)))
	if _, ok := c.Get(0, "big"); ok {
		t.Fatal("an entry over MaxCost/16 was kept")
	}
	for i := range 16 {
		c.Put(0, string(rune('a'+i)), "0123456789")
	}
	if _, ok := c.Get(0, "a"); !ok {
		t.Fatal("entries within MaxCost were dropped")
	}
	c.Put(0, "q", "x")
	if _, ok := c.Get(0, "a"); ok {
		t.Fatal("passing MaxCost did not empty the map")
	}
}

func TestGetManyAndMove(t *testing.T) {
	var c Map[int, string, int]
	c.Get(1, "")
	c.PutMany(1, []string{"a", "b", "c"}, func(k string) int { return int(k[0]) })
	got := map[string]int{}
	keys := []string{"a", "x", "c"}
	missing := c.GetMany(1, keys, func(i int, v int) { got[keys[i]] = v })
	if len(got) != 2 || len(missing) != 1 || missing[0] != "x" {
		t.Fatalf("GetMany found %v, missing %v", got, missing)
	}
	if c.Move(0, 2, func(string) bool { return true }) {
		t.Fatal("Move from a version the map does not hold moved it")
	}
	if !c.Move(1, 2, func(k string) bool { return k == "b" }) {
		t.Fatal("Move from the held version did not move")
	}
	if v, ok := c.Version(); !ok || v != 2 {
		t.Fatalf("Version() = %d, %v; want 2, true", v, ok)
	}
	if _, ok := c.Get(2, "b"); ok {
		t.Fatal("Move kept an entry drop reported")
	}
	if _, ok := c.Get(2, "a"); !ok {
		t.Fatal("Move dropped an entry drop did not report")
	}
}

func TestMemoOfConcurrent(t *testing.T) {
	var c Memo[int, int]
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 1000 {
				if v := c.Of(Forever{}, i%100, func(k int) int { return k * k }); v != (i%100)*(i%100) {
					t.Errorf("goroutine %d: Of(%d) = %d", g, i%100, v)
					return
				}
			}
		})
	}
	wg.Wait()
}
