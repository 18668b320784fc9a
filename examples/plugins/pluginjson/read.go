package pluginjson

// ReadString reads a string or null ("") into dst, naming the field what
// in an error.
func (r *Reader) ReadString(what string, dst *string) error {
	s, err := r.Str(what)
	*dst = string(s)
	return err
}

// Bool reads true, false or null (false), naming the field what in an
// error.
func (r *Reader) Bool(what string) (bool, error) {
	switch r.Peek() {
	case 't':
		return true, r.literal("true")
	case 'f':
		return false, r.literal("false")
	case 'n':
		return false, r.literal("null")
	}
	return false, r.expected(what, "true or false")
}

// Nested reads an object or null, calling member with the index in names
// of each listed member, with the reader at its value; other members are
// skipped.
func (r *Reader) Nested(what string, names []Name, member func(index int) error) error {
	ok, err := r.Open(what)
	if err != nil || !ok {
		return err
	}
	return r.Object(names, func(k int) error {
		if k < 0 {
			return r.Skip()
		}
		return member(k)
	})
}

// Object reads the members of the object just opened, calling member with
// each one's index in names (-1 for a name not listed).
func (r *Reader) Object(names []Name, member func(index int) error) error {
	next := 0
	for first := true; ; first = false {
		more, i, err := r.Member(first, names, &next)
		if err != nil || !more {
			return err
		}
		if err := member(i); err != nil {
			return err
		}
	}
}
