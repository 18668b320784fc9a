package policies

import (
	"reflect"
	"sort"
	"strconv"
	"strings"
)

// unknownField finds the first field of raw (decoded JSON) that type t has
// no JSON name for, as a dotted path ("card.tags", "cards[2].scope.globs"),
// so an input error names the exact field to fix. "" when there is none.
func unknownField(t reflect.Type, raw any, path string) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.Struct:
		obj, ok := raw.(map[string]any)
		if !ok {
			return ""
		}
		fields := map[string]reflect.Type{}
		for i := range t.NumField() {
			f := t.Field(i)
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			if name == "" {
				name = f.Name
			}
			fields[name] = f.Type
		}
		keys := make([]string, 0, len(obj))
		for k := range obj {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			ft, ok := fields[k]
			if !ok {
				// encoding/json matches names case-insensitively.
				for name, t2 := range fields {
					if strings.EqualFold(name, k) {
						ft, ok = t2, true
						break
					}
				}
			}
			if !ok {
				return join(path, k)
			}
			if p := unknownField(ft, obj[k], join(path, k)); p != "" {
				return p
			}
		}
	case reflect.Slice:
		list, ok := raw.([]any)
		if !ok {
			return ""
		}
		for i, x := range list {
			if p := unknownField(t.Elem(), x, path+"["+itoa(i)+"]"); p != "" {
				return p
			}
		}
	}
	return ""
}

func join(path, k string) string {
	if path == "" {
		return k
	}
	return path + "." + k
}

func itoa(i int) string { return strconv.Itoa(i) }
