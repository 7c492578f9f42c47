package layout_test

import (
	"errors"
	"testing"

	"github.com/urldedupd/urldedupd/internal/format"
	"github.com/urldedupd/urldedupd/internal/layout"
	"github.com/urldedupd/urldedupd/internal/shardfile"
)

// fake is a layout of an id the format does not have.
type fake struct{ id format.Layout }

func (f fake) ID() format.Layout                       { return f.id }
func (fake) Name() string                              { return "fake" }
func (fake) Plan(layout.Plan, *format.Meta) error      { return nil }
func (fake) Open(*shardfile.Dir) (layout.Local, error) { return nil, nil }
func (fake) Merge() layout.Merge                       { return layout.MergeOr }

// The registry finds what is registered, refuses what is not (with
// format.ErrLayout), and refuses an id registered twice.
func TestRegistry(t *testing.T) {
	id := format.Layout(200)
	if _, err := layout.Lookup(id); !errors.Is(err, format.ErrLayout) {
		t.Fatalf("Lookup of an id not registered: %v, want format.ErrLayout", err)
	}
	layout.Register(fake{id})
	if l, err := layout.Lookup(id); err != nil || l != (fake{id}) {
		t.Fatalf("Lookup = %v, %v", l, err)
	}
	if _, err := layout.ByName("no-such-layout"); !errors.Is(err, format.ErrLayout) {
		t.Errorf("ByName of an unknown name: %v, want format.ErrLayout", err)
	}
	for _, l := range layout.All() {
		if l.ID() == id {
			t.Errorf("All lists %s, which the format does not have", id)
		}
	}
	defer func() {
		if recover() == nil {
			t.Error("registering an id twice did not panic")
		}
	}()
	layout.Register(fake{id})
}
