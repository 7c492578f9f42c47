package counter

import (
	"fmt"
	"reflect"
	"strings"
)

// Check reports whether t describes every exported uint64 of S (nested
// structs and arrays included, but for the paths skip names, as
// "Reasons") exactly once, with names of their own. Tests call it, so
// that a counter added to a stats type without a description fails.
func Check[S any](t Table[S], skip ...string) error {
	var s S
	fields := map[uintptr]string{}
	var walk func(v reflect.Value, path string)
	walk = func(v reflect.Value, path string) {
		switch v.Kind() {
		case reflect.Struct:
			for i := range v.NumField() {
				f := v.Type().Field(i)
				if !f.IsExported() {
					continue
				}
				p := strings.TrimPrefix(path+"."+f.Name, ".")
				skipped := false
				for _, k := range skip {
					skipped = skipped || p == k
				}
				if !skipped {
					walk(v.Field(i), p)
				}
			}
		case reflect.Array:
			for i := range v.Len() {
				walk(v.Index(i), fmt.Sprintf("%s[%d]", path, i))
			}
		case reflect.Uint64:
			fields[v.UnsafeAddr()] = path
		}
	}
	walk(reflect.ValueOf(&s).Elem(), "")
	names := map[string]bool{}
	var problems []string
	for i := range t {
		d := &t[i]
		if names[d.Name] {
			problems = append(problems, "two counters named "+d.Name)
		}
		names[d.Name] = true
		p := reflect.ValueOf(d.Field(&s)).Pointer()
		if _, ok := fields[p]; !ok {
			problems = append(problems, d.Name+": not a counter of the type, or described twice")
		}
		delete(fields, p)
	}
	for _, path := range fields {
		problems = append(problems, path+" has no description")
	}
	if len(problems) > 0 {
		return fmt.Errorf("counter: %T: %s", s, strings.Join(problems, "; "))
	}
	return nil
}
