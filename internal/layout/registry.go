package layout

import (
	"fmt"
	"sync"

	"github.com/urldedupd/urldedupd/internal/format"
)

var (
	mu       sync.RWMutex
	registry = map[format.Layout]Layout{}
)

// Register makes l known by its ID and name. Layout packages call it from
// an init function; registering an ID twice panics.
func Register(l Layout) {
	mu.Lock()
	defer mu.Unlock()
	if _, dup := registry[l.ID()]; dup {
		panic(fmt.Sprintf("layout: %s registered twice", l.ID()))
	}
	registry[l.ID()] = l
}

// Lookup returns the layout of id, or an error wrapping format.ErrLayout
// when this build has not registered it.
func Lookup(id format.Layout) (Layout, error) {
	mu.RLock()
	defer mu.RUnlock()
	if l, ok := registry[id]; ok {
		return l, nil
	}
	return nil, fmt.Errorf("%w: layout %s is not in this build", format.ErrLayout, id)
}

// ByName returns the layout of a command-line or metadata name.
func ByName(name string) (Layout, error) {
	id, err := format.ParseLayout(name)
	if err != nil {
		return nil, err
	}
	return Lookup(id)
}

// All returns every registered layout, in the format's order.
func All() []Layout {
	mu.RLock()
	defer mu.RUnlock()
	var ls []Layout
	for _, id := range format.Layouts {
		if l, ok := registry[id]; ok {
			ls = append(ls, l)
		}
	}
	return ls
}
