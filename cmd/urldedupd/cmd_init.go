package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/urldedupd/urldedupd/internal/format"
	"github.com/urldedupd/urldedupd/internal/layout"
	"github.com/urldedupd/urldedupd/internal/signature"
	"github.com/urldedupd/urldedupd/internal/state"
	"github.com/urldedupd/urldedupd/internal/window"
)

type initOptions struct {
	normalize string
	signature string
	layout    string
	capacity  uint64
	falseDup  float64
	size      string
	keyFile   string
	filter    format.Filter
	window    string
	gens      int
	policy    string
}

func (o *initOptions) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.layout, "layout", format.Default.Layout.Name(), "layout: bitmap (the patent's: one bit per CRC32), keyed (keyed fingerprints: no forgeable collisions, far fewer false duplicates), the literature's bloom, mdbf (state directories only) and dsbf, or keyed-window and bitmap-window (seen in the last --window)")
	fs.StringVar(&o.normalize, "normalize", "safe", "URL normalization: safe (RFC 3986 6.2.2-6.2.3) or none (raw bytes)")
	fs.StringVar(&o.signature, "signature", "", "bitmap signature: crc32 (IEEE, as zlib; the default) or crc32c (Castagnoli); keyed is always siphash-1-3")
	fs.Uint64Var(&o.capacity, "capacity", 0, "plan the state for this many distinct URLs (with --false-dup); keyed picks its size from it")
	fs.Float64Var(&o.falseDup, "false-dup", 0, "with --capacity: the largest chance, at that capacity, that a new URL is reported a duplicate (default 1e-6)")
	fs.StringVar(&o.size, "size", "", "the state's size: keyed, 256 shards of a power of two from 2 MiB to 1 GiB (512MiB, 8GiB, or bytes); bloom, mdbf, dsbf from 4 KiB to 2 MiB (1MiB to 512MiB; a dsbf leaf is a shard); bitmap is always 512MiB")
	fs.IntVar(&o.filter.K, "k", 0, "bloom, mdbf, dsbf: positions per URL (bloom 1..10; default: best for --capacity, else bloom 4, mdbf 4, dsbf from --fmax)")
	fs.IntVar(&o.filter.Groups, "groups", 0, "mdbf: the groups S, 1..256 (default 4); each group's V1 and V2 share the state's bits")
	fs.Uint64Var(&o.filter.V1Bits, "v1-bits", 0, "mdbf: N, the bits of each group's V1, a multiple of 64·k (default: the most that --groups groups of V1 and V2 fit in --size)")
	fs.IntVar(&o.filter.Children, "children", 0, "dsbf: leaves of the first level and children of a split, 2..16 (default 3, or the paper's c for --capacity)")
	fs.Float64Var(&o.filter.FMax, "fmax", 0, "dsbf: the bound on the false-dup chance however the tree grows (default --false-dup, else 0.01)")
	fs.StringVar(&o.window, "window", "", "keyed, bitmap: hold a URL only this long (30d, 24h, 1d12h, 10s; at least 1s): a URL not seen within the window is new again; the layout becomes keyed-window or bitmap-window")
	fs.IntVar(&o.gens, "generations", 0, "with --window: cut the window into this many generations, 1..32 (default 6); a URL leaves within one generation's length after the window")
	fs.StringVar(&o.policy, "policy", "", "with --window: first-seen (a URL is new again a window after its first sighting: re-crawl every window; the default) or last-seen (every sighting refreshes it: new again only after a window of silence)")
	fs.StringVar(&o.keyFile, "key-file", "", "keyed: take the secret key from this file (mode 0600), to share one key among states to be merged; a file that does not exist is written with the state's key")
}

func newInitCommand(g *globalOptions) *cobra.Command {
	o := &initOptions{}
	cmd := &cobra.Command{
		Use:   "init",
		Short: "Create the state: choose its layout, signature, normalization and size",
		Long: `Create the state: 256 shard files 00..ff, written as real zeros, and
urldedupd.meta recording the format. The format is fixed for the life of
the state. Other commands create a default state (bitmap, 512 MiB) on first
use; init is for choosing other settings, or for paying the creation cost up
front.

Layouts:
` + layout.Help() + `
--window D makes a keyed or bitmap state hold each URL for D only
(keyed-window, bitmap-window): the window is cut into --generations G
(default 6) by the wall clock from the state's creation, every process
computes the current generation itself, and a URL is new again once its
first sighting (--policy first-seen) or its last (last-seen) has left
the window. With --window, --capacity is the URLs in the window at once
and --size that of the keyed buckets; a bitmap window is (G+1)·512 MiB.
forget makes one URL of a keyed state new again.

--capacity N --false-dup P sizes a keyed state for N distinct URLs with at
most a P chance that the next new one is reported a duplicate (and at most
1e-4 that it is not stored), and refuses what it cannot meet; on a bitmap it
only checks the plan. --size sets the size directly. stats measures the
state against the plan.

States to be merged must share a key: make the first with --key-file F (F
is written, mode 0600) and copy F to the other sensors for their init.

If the state exists already with the settings asked, init says so and
succeeds; with other settings it fails.`,
		Example: `  urldedupd init
  urldedupd --dir /var/lib/urldedupd init --normalize none --signature crc32c
  urldedupd --dir /var/lib/urldedupd init --layout keyed --capacity 100000000 --false-dup 1e-6
  urldedupd --dir /srv/sensor1 init --layout keyed --size 8GiB --key-file /etc/urldedupd/fleet.key
  urldedupd --backend redis://127.0.0.1:6379/0 init --layout keyed
  urldedupd --dir /tmp/bf init --layout bloom --capacity 1000000 --false-dup 1e-4
  urldedupd --dir /tmp/dsbf init --layout dsbf --size 64MiB --children 3 --fmax 0.01
  urldedupd --dir /var/lib/crawl init --layout keyed --window 30d --generations 6 --capacity 100000000
  urldedupd --dir /var/lib/sensor init --layout keyed --window 24h --policy last-seen`,
		Args: usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := explicitZeros(cmd.Flags()); err != nil {
				return err
			}
			return runInit(cmd.Context(), g, o, cmd.OutOrStdout())
		},
	}
	o.AddFlags(cmd.Flags())
	return cmd
}

// filterRanges are the Bloom family's parameters and what each takes.
var filterRanges = map[string]string{
	"k": "1 to 32 (bloom at most 10, mdbf at least 2)", "groups": "1 to 256", "v1-bits": "a multiple of 64·k",
	"children": "2 to 16", "fmax": "a chance in (0, 1)", "false-dup": "a chance in (0, 1)",
}

// explicitZeros refuses a parameter given as 0: inside, zero means "not
// given, take the default", so --groups 0 would otherwise quietly become 4.
func explicitZeros(fs *pflag.FlagSet) error {
	for _, name := range []string{"k", "groups", "v1-bits", "children", "fmax", "false-dup"} {
		if f := fs.Lookup(name); f.Changed && f.Value.String() == "0" {
			return usageError(fmt.Errorf("--%s 0: want %s (leave it out for the default)", name, filterRanges[name]))
		}
	}
	return nil
}

// windowRequest reads --window, --generations and --policy into in,
// returning the windowed layout of l when a window is asked.
func (o *initOptions) windowRequest(in *state.Init, l format.Layout) (format.Layout, error) {
	if o.window == "" {
		switch {
		case o.gens != 0 || o.policy != "":
			return l, errors.New("--generations, --policy: give --window too")
		case l.Windowed():
			return l, fmt.Errorf("--layout %s: give --window too", l.Name())
		}
		return l, nil
	}
	wl, ok := l.WithWindow()
	if !ok {
		return l, fmt.Errorf("--window: only the keyed and bitmap layouts keep a window; %s shares bits among URLs, which could not leave it one by one", l.Name())
	}
	d, err := window.ParseDuration(o.window)
	if err != nil {
		return l, fmt.Errorf("--window: %w", err)
	}
	in.Window = window.Spec{Window: d, Generations: o.gens, Policy: window.FirstSeen}
	if in.Window.Generations == 0 {
		in.Window.Generations = 6
	}
	if o.policy != "" {
		if in.Window.Policy, err = window.ParsePolicy(o.policy); err != nil {
			return l, fmt.Errorf("--policy: %w", err)
		}
	}
	return wl, nil
}

// request turns the flags into what the new state is asked to be.
func (o *initOptions) request() (state.Init, error) {
	var in state.Init
	layout, err := format.ParseLayout(o.layout)
	if err != nil {
		return in, fmt.Errorf("--layout: %w", err)
	}
	mode, err := signature.ParseMode(o.normalize)
	if err != nil {
		return in, fmt.Errorf("--normalize: %w", err)
	}
	if layout, err = o.windowRequest(&in, layout); err != nil {
		return in, err
	}
	in.Spec = format.Spec{Layout: layout, Mode: mode}
	switch {
	case layout.Keyed() && o.signature != "" && o.signature != signature.SipHash.String():
		return in, fmt.Errorf("--signature %s: the %s layout signs with %s", o.signature, layout.Name(), signature.SipHash)
	case layout.Keyed():
		in.Spec.Algorithm = signature.SipHash
	case o.signature != "":
		if in.Spec.Algorithm, err = signature.ParseAlgorithm(o.signature); err != nil || in.Spec.Algorithm.Keyed() {
			return in, fmt.Errorf("--signature %s: the bitmap layout signs with crc32 or crc32c", o.signature)
		}
	}
	if o.keyFile != "" && !layout.Keyed() {
		return in, errors.New("--key-file: the bitmap layout has no key")
	}
	if o.filter != (format.Filter{}) && !layout.Filter() {
		return in, errors.New("--k, --groups, --v1-bits, --children, --fmax: only for the bloom, mdbf and dsbf layouts")
	}
	in.Filter = o.filter
	if o.size != "" {
		if in.Size, err = format.ParseBytes(o.size); err != nil {
			return in, fmt.Errorf("--size: %w", err)
		}
	}
	in.Capacity, in.FalseDup = o.capacity, o.falseDup
	if o.falseDup != 0 && o.capacity == 0 {
		return in, errors.New("--false-dup: give --capacity too")
	}
	if o.capacity != 0 && o.falseDup == 0 {
		in.FalseDup = 1e-6
	}
	return in, nil
}

func runInit(ctx context.Context, g *globalOptions, o *initOptions, out io.Writer) error {
	in, err := o.request()
	if err != nil {
		return usageError(err)
	}
	keyFileExists := false
	if o.keyFile != "" {
		k, err := format.ReadKeyFile(o.keyFile)
		switch {
		case err == nil:
			in.Key, keyFileExists = &k, true
		case !errors.Is(err, fs.ErrNotExist):
			return err
		}
	}
	want, err := in.Meta(time.Now())
	if err != nil {
		if errors.Is(err, state.ErrPlan) && in.Spec.Layout == format.Default.Layout && in.Capacity != 0 {
			err = fmt.Errorf("%w (init --layout keyed)", err)
		}
		if errors.Is(err, state.ErrPlan) {
			return usageError(err) // what was asked cannot be made
		}
		return err
	}
	st, err := openState(ctx, g, state.Options{Create: true, Spec: &want.Spec, New: &want})
	if err != nil {
		return err
	}
	defer st.Close()
	got := st.Meta()
	if !st.Created() {
		if err := sameAsAsked(st, in, o, want, keyFileExists); err != nil {
			return err
		}
	}
	if o.keyFile != "" && !keyFileExists {
		// The state's key, made now or before: written for other sensors.
		k := st.Key()
		if err := format.WriteKeyFile(o.keyFile, *k); err != nil {
			return err
		}
	}
	verb := "exists"
	switch {
	case g.backend != "": // SET NX: made now or before, it is the one asked for
		verb = "ready"
	case st.Created():
		verb = "created"
	}
	fmt.Fprintf(out, "%s %s (%s)\n", verb, st, describe(got))
	return st.Close()
}

// sameAsAsked returns an error wrapping format.ErrMismatch when the state
// that existed differs from what the flags asked of it: its size, its plan
// or its key. The spec was checked by Open.
func sameAsAsked(st *state.State, in state.Init, o *initOptions, want format.Meta, keyFileExists bool) error {
	got := st.Meta()
	switch {
	case (in.Size != 0 || in.Capacity != 0) && got.Sizes != want.Sizes:
		return fmt.Errorf("%s: %w: the state has %s; asked for %s", st, format.ErrMismatch, sizeText(got.Sizes.Bytes()), sizeText(want.Sizes.Bytes()))
	case in.Capacity != 0 && (got.Capacity != want.Capacity || got.FalseDup != want.FalseDup):
		return fmt.Errorf("%s: %w: the state was planned for %d URLs at %g; asked for %d at %g", st, format.ErrMismatch,
			got.Capacity, got.FalseDup, want.Capacity, want.FalseDup)
	case want.Window.Generations != 0 && (got.Window.Window != want.Window.Window ||
		got.Window.Generations != want.Window.Generations || got.Window.Policy != want.Window.Policy):
		return fmt.Errorf("%s: %w: the state has a window of %s in %d generations (%s); asked for %s in %d (%s)", st, format.ErrMismatch,
			window.FormatDuration(got.Window.Window), got.Window.Generations, got.Window.Policy,
			window.FormatDuration(want.Window.Window), want.Window.Generations, want.Window.Policy)
	case keyFileExists && got.KeyID != want.KeyID:
		return fmt.Errorf("%s: %w: key file %s has key id %s, the state key id %s", st, format.ErrMismatch, o.keyFile, want.KeyID, got.KeyID)
	}
	return nil
}

// describe says what a state is, for init's message; never its key.
func describe(m format.Meta) string {
	d := fmt.Sprintf("layout %s, signature %s, normalize %s, %s", m.Spec.Layout.Name(), m.Spec.Algorithm, m.Spec.Mode, sizeText(m.Sizes.Bytes()))
	if m.KeyID != "" {
		d += ", key id " + m.KeyID
	}
	if p := layout.Parameters(m); p != "" {
		d += ", " + p
	}
	if w := m.Window; w.Generations != 0 {
		d += fmt.Sprintf(", window %s in %d generations of %s, %s, from %s", window.FormatDuration(w.Window), w.Generations,
			window.FormatDuration(w.Length()), w.Policy, w.Epoch.UTC().Format(time.RFC3339))
	}
	if m.Capacity != 0 {
		d += fmt.Sprintf(", planned for %d URLs at a false-dup chance of at most %g", m.Capacity, m.FalseDup)
	}
	return d
}
