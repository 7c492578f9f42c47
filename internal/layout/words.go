package layout

import "github.com/urldedupd/urldedupd/internal/format"

// Words are what a layout says of itself on the command line: its
// paragraph in init's help, and a state's parameters in words (init's
// created line, stats' filter line). A layout without them has no
// paragraph and no parameters.
type Words interface {
	// Help is the layout's paragraph in init's help: its name, indented
	// two spaces and padded to eight, then its lines, indented ten.
	Help() string
	// Parameters names the parameters of a state of metadata m ("" for
	// none).
	Parameters(m format.Meta) string
}

// Help is every layout's paragraph of init's help, in format order.
func Help() string {
	var h string
	for _, l := range All() {
		if w, ok := l.(Words); ok {
			h += w.Help()
		}
	}
	return h
}

// Parameters names the parameters of a state of metadata m, by its
// layout's Words ("" for none, or a layout not in this build).
func Parameters(m format.Meta) string {
	l, err := Lookup(m.Spec.Layout)
	if err != nil {
		return ""
	}
	if w, ok := l.(Words); ok {
		return w.Parameters(m)
	}
	return ""
}
