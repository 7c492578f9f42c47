package daemon

import (
	"reflect"
	"testing"

	"github.com/urldedupd/urldedupd/internal/capture"
)

// fillCounters sets every exported integer of v (a struct, nested structs
// and arrays included) to n, n+1, ... Unexported fields (capture.Reasons'
// table) are left to their own Merge test.
func fillCounters(v reflect.Value, n *uint64) {
	switch v.Kind() {
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				fillCounters(v.Field(i), n)
			}
		}
	case reflect.Array:
		for i := range v.Len() {
			fillCounters(v.Index(i), n)
		}
	case reflect.Uint64, reflect.Uint32, reflect.Uint, reflect.Int, reflect.Int64:
		*n++
		if v.CanUint() {
			v.SetUint(*n)
		} else {
			v.SetInt(int64(*n))
		}
	}
}

// Every counter of an engine survives addStats: the sum of two engines'
// stats is each field's sum (KernelDrops, a running total of the socket,
// the larger), so a counter added later cannot be forgotten there.
func TestAddStatsEveryCounter(t *testing.T) {
	var b capture.Stats
	var n uint64
	fillCounters(reflect.ValueOf(&b).Elem(), &n)
	sum := addStats(addStats(capture.Stats{}, b), b)
	var want capture.Stats
	fillCounters(reflect.ValueOf(&want).Elem(), new(uint64))
	double := reflect.ValueOf(&want).Elem()
	var scale func(v reflect.Value)
	scale = func(v reflect.Value) {
		switch v.Kind() {
		case reflect.Struct:
			for i := range v.NumField() {
				if v.Type().Field(i).IsExported() {
					scale(v.Field(i))
				}
			}
		case reflect.Array:
			for i := range v.Len() {
				scale(v.Index(i))
			}
		case reflect.Uint64, reflect.Uint32, reflect.Uint:
			v.SetUint(2 * v.Uint())
		case reflect.Int, reflect.Int64:
			v.SetInt(2 * v.Int())
		}
	}
	scale(double)
	want.KernelDrops = b.KernelDrops
	if !reflect.DeepEqual(sum, want) {
		t.Errorf("addStats(b, b):\n%+v\nwant\n%+v", sum, want)
	}
}
