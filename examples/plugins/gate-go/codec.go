package main

import (
	"errors"
	"maps"
	"slices"
	"strconv"
)

// Member names, in the order palace writes them.
var (
	topNames      = names("action", "target", "mode", "card", "counts", "newest", "contest", "reviewer", "source")
	cardNames     = names("id", "tier") // then status, domain, … (skipped)
	countNames    = names("supporting", "verification", "teaching", "counterexample")
	reviewerNames = names("name", "type")
	newestNames   = names("verification") // of supporting, verification, …
	contestNames  = names("since")        // of contested, since, kinds
	sourceNames   = names("channel", "path", "commit", "upstream", "on_default_branch")
)

// parse reads the gate input with the reader in json.go. A field of the
// wrong type is an error; an absent or null one is zero; other fields are
// skipped.
func parse(b []byte) (input, error) {
	var in input
	r := &reader{b: b}
	ok, err := r.open("input")
	if err != nil {
		return in, err
	}
	if !ok {
		return in, errors.New("input: want an object, found null")
	}
	err = readObject(r, topNames, func(k int) error {
		switch k {
		case 0:
			return readString(r, "action", &in.Action)
		case 1:
			return readString(r, "target", &in.Target)
		case 2:
			return readString(r, "mode", &in.Mode)
		case 3:
			return readNested(r, "card", cardNames, func(k int) error {
				if k == 0 {
					return readString(r, "card.id", &in.Card.ID)
				}
				return readString(r, "card.tier", &in.Card.Tier)
			})
		case 4:
			return readNested(r, "counts", countNames, func(k int) error {
				dst := [...]*float64{&in.Counts.Supporting, &in.Counts.Verification, &in.Counts.Teaching, &in.Counts.Counterexample}[k]
				var err error
				*dst, err = r.num("counts." + countNames[k].s)
				return err
			})
		case 5:
			return readNested(r, "newest", newestNames, func(int) error {
				return readString(r, "newest.verification", &in.Newest.Verification)
			})
		case 6:
			return readNested(r, "contest", contestNames, func(int) error {
				return readString(r, "contest.since", &in.Contest.Since)
			})
		case 7:
			return readNested(r, "reviewer", reviewerNames, func(k int) error {
				if k == 0 {
					return readString(r, "reviewer.name", &in.Reviewer.Name)
				}
				return readString(r, "reviewer.type", &in.Reviewer.Type)
			})
		case 8:
			return readNested(r, "source", sourceNames, func(k int) error {
				if k == 4 {
					return readBool(r, "source.on_default_branch", &in.Source.Reviewed)
				}
				dst := [...]*string{&in.Source.Channel, &in.Source.Path, &in.Source.Commit, &in.Source.Upstream}[k]
				return readString(r, "source."+sourceNames[k].s, dst)
			})
		}
		return r.skip()
	})
	if err != nil {
		return in, err
	}
	return in, r.end()
}

// readString reads a string or null (""), naming the field what in an
// error.
func readString(r *reader, what string, dst *string) error {
	s, err := r.str(what)
	*dst = string(s)
	return err
}

// readBool reads true, false or null (false), naming the field what in
// an error.
func readBool(r *reader, what string, dst *bool) error {
	switch r.peek() {
	case 't':
		*dst = true
		return r.literal("true")
	case 'f':
		*dst = false
		return r.literal("false")
	case 'n':
		*dst = false
		return r.literal("null")
	}
	return r.expected(what, "a boolean")
}

// readNested reads an object or null, calling member with the index in
// names of each listed member, with the reader at its value; other members
// are skipped.
func readNested(r *reader, what string, names []name, member func(index int) error) error {
	ok, err := r.open(what)
	if err != nil || !ok {
		return err
	}
	return readObject(r, names, func(k int) error {
		if k < 0 {
			return r.skip()
		}
		return member(k)
	})
}

// readObject reads the members of the object just opened, calling member
// with each one's index in names (-1 for a name not listed).
func readObject(r *reader, names []name, member func(index int) error) error {
	next := 0
	for first := true; ; first = false {
		more, i, err := r.member(first, names, &next)
		if err != nil || !more {
			return err
		}
		if err := member(i); err != nil {
			return err
		}
	}
}

// encode writes {"allow": …, "reasons": […], "missing": {…}}.
func encode(out output) []byte {
	b := make([]byte, 0, 256)
	b = append(b, `{"allow":`...)
	b = strconv.AppendBool(b, out.Allow)
	b = append(b, `,"reasons":[`...)
	for i, r := range out.Reasons {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendString(b, []byte(r))
	}
	b = append(b, `],"missing":{`...)
	for i, role := range slices.Sorted(maps.Keys(out.Missing)) {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendString(b, []byte(role))
		b = append(b, ':')
		b = append(b, num(out.Missing[role])...)
	}
	return append(b, `}}`...)
}
