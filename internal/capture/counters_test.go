package capture

import (
	"reflect"
	"testing"
	"unsafe"
)

// counterAddrs returns the address of every exported uint64 in v (a
// struct, nested structs and arrays included), by its path.
func counterAddrs(v reflect.Value, path string, out map[uintptr]string) {
	switch v.Kind() {
	case reflect.Struct:
		for i := range v.NumField() {
			if f := v.Type().Field(i); f.IsExported() {
				counterAddrs(v.Field(i), path+"."+f.Name, out)
			}
		}
	case reflect.Array:
		for i := range v.Len() {
			counterAddrs(v.Index(i), path+"["+string(rune('0'+i))+"]", out)
		}
	case reflect.Uint64:
		out[v.UnsafeAddr()] = path
	}
}

// StatsCounters describes every counter of Stats exactly once (the frames
// by Reasons aside, which have their own Merge), with a name of its own:
// a field added to a stats type without a description fails here.
func TestStatsCountersCoverStats(t *testing.T) {
	var s Stats
	fields := map[uintptr]string{}
	counterAddrs(reflect.ValueOf(&s).Elem(), "Stats", fields)
	reasons := map[uintptr]string{}
	counterAddrs(reflect.ValueOf(&s.Reasons).Elem(), "Stats.Reasons", reasons)
	names := map[string]bool{}
	st := StatsCounters()
	for i := range st {
		d := &st[i]
		if names[d.Name] {
			t.Errorf("two counters named %s", d.Name)
		}
		names[d.Name] = true
		p := uintptr(unsafe.Pointer(d.Field(&s)))
		if _, ok := fields[p]; !ok {
			t.Errorf("%s: not a counter of Stats, or described twice", d.Name)
		}
		delete(fields, p)
	}
	for p, path := range fields {
		if _, ok := reasons[p]; !ok {
			t.Errorf("%s has no description in StatsCounters", path)
		}
	}
}
