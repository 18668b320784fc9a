package main

import (
	"errors"
	"maps"
	"slices"
	"strconv"

	pj "github.com/palacehq/palace/examples/plugins/pluginjson"
)

// Member names, in the order palace writes them.
var (
	topNames      = pj.Names("action", "target", "mode", "card", "counts", "newest", "contest", "reviewer", "source")
	cardNames     = pj.Names("id", "tier") // then status, domain, … (skipped)
	countRoles    = []string{"supporting", "verification", "teaching", "counterexample"}
	countNames    = pj.Names(countRoles...)
	reviewerNames = pj.Names("name", "type")
	newestNames   = pj.Names("verification") // of supporting, verification, …
	contestNames  = pj.Names("since")        // of contested, since, kinds
	sourceFields  = []string{"channel", "path", "commit", "upstream", "on_default_branch"}
	sourceNames   = pj.Names(sourceFields...)
)

// parse reads the gate input with pluginjson's reader. A field of the
// wrong type is an error; an absent or null one is zero; other fields are
// skipped.
func parse(b []byte) (input, error) {
	var in input
	r := pj.NewReader(b)
	ok, err := r.Open("input")
	if err != nil {
		return in, err
	}
	if !ok {
		return in, errors.New("input: want an object, found null")
	}
	err = r.Object(topNames, func(k int) error {
		switch k {
		case 0:
			return r.ReadString("action", &in.Action)
		case 1:
			return r.ReadString("target", &in.Target)
		case 2:
			return r.ReadString("mode", &in.Mode)
		case 3:
			return r.Nested("card", cardNames, func(k int) error {
				if k == 0 {
					return r.ReadString("card.id", &in.Card.ID)
				}
				return r.ReadString("card.tier", &in.Card.Tier)
			})
		case 4:
			return r.Nested("counts", countNames, func(k int) error {
				dst := [...]*float64{&in.Counts.Supporting, &in.Counts.Verification, &in.Counts.Teaching, &in.Counts.Counterexample}[k]
				var err error
				*dst, err = r.Num("counts." + countRoles[k])
				return err
			})
		case 5:
			return r.Nested("newest", newestNames, func(int) error {
				return r.ReadString("newest.verification", &in.Newest.Verification)
			})
		case 6:
			return r.Nested("contest", contestNames, func(int) error {
				return r.ReadString("contest.since", &in.Contest.Since)
			})
		case 7:
			return r.Nested("reviewer", reviewerNames, func(k int) error {
				if k == 0 {
					return r.ReadString("reviewer.name", &in.Reviewer.Name)
				}
				return r.ReadString("reviewer.type", &in.Reviewer.Type)
			})
		case 8:
			return r.Nested("source", sourceNames, func(k int) error {
				if k == 4 {
					var err error
					in.Source.Reviewed, err = r.Bool("source.on_default_branch")
					return err
				}
				dst := [...]*string{&in.Source.Channel, &in.Source.Path, &in.Source.Commit, &in.Source.Upstream}[k]
				return r.ReadString("source."+sourceFields[k], dst)
			})
		}
		return r.Skip()
	})
	if err != nil {
		return in, err
	}
	return in, r.End()
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
		b = pj.AppendString(b, []byte(r))
	}
	b = append(b, `],"missing":{`...)
	for i, role := range slices.Sorted(maps.Keys(out.Missing)) {
		if i > 0 {
			b = append(b, ',')
		}
		b = pj.AppendString(b, []byte(role))
		b = append(b, ':')
		b = append(b, num(out.Missing[role])...)
	}
	return append(b, `}}`...)
}
