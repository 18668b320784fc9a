package policies

// Served0 returns what serves p, or the zero Served.
func (s *Set) Served0(p Point) Served { return s.served[p] }
