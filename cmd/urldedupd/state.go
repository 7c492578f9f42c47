package main

import (
	"errors"
	"fmt"
	"io/fs"

	"github.com/urldedupd/urldedupd/pkg/bitcheck"
	"github.com/urldedupd/urldedupd/pkg/shardfile"
	"github.com/urldedupd/urldedupd/pkg/signature"
)

// state is an open state directory with its decision set and a signer
// matching its format.
type state struct {
	dir    *shardfile.Dir
	set    *bitcheck.Set
	signer *signature.Signer
}

func openState(g *globalOptions, opts *shardfile.Options) (*state, error) {
	d, err := shardfile.Open(g.dir, opts)
	if err != nil {
		if errors.Is(err, fs.ErrPermission) && !opts.ReadOnly {
			err = fmt.Errorf("%w (state %s is not writable by this user; commands that only read, like check and stats, can use it)", err, g.dir)
		}
		return nil, err
	}
	f := d.Meta().Format
	return &state{dir: d, set: bitcheck.New(d), signer: signature.NewSigner(f.Algorithm, f.Mode)}, nil
}

func (s *state) Close() error { return s.dir.Close() }
