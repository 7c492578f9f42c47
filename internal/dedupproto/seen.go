package dedupproto

import (
	"context"
	"fmt"
	"sync"

	"github.com/urldedupd/urldedupd/internal/signature"
	"github.com/urldedupd/urldedupd/internal/state"
)

// FinishURL returns the state st as a host's finish_URL: URLs are signed
// as the state signs them (normalized, keyed for the keyed layout) and
// decided in one batch a call.
func FinishURL(st *state.State) Seen {
	s := &stateSeen{st: st}
	s.pool.New = func() any { return &seenScratch{signer: st.Signer()} }
	return s
}

type stateSeen struct {
	st   *state.State
	pool sync.Pool // of *seenScratch
}

type seenScratch struct {
	signer *signature.Signer
	sigs   []signature.Signature
}

func (s *stateSeen) Decide(ctx context.Context, urls []string, dup []bool) error {
	return s.decide(ctx, urls, dup, false)
}

func (s *stateSeen) Check(ctx context.Context, urls []string, dup []bool) error {
	return s.decide(ctx, urls, dup, true)
}

func (s *stateSeen) decide(ctx context.Context, urls []string, dup []bool, dryRun bool) error {
	if len(urls) == 0 {
		return nil
	}
	sc := s.pool.Get().(*seenScratch)
	defer s.pool.Put(sc)
	sc.sigs = sc.sigs[:0]
	for _, u := range urls {
		sig, _ := sc.signer.Sign([]byte(u))
		sc.sigs = append(sc.sigs, sig)
	}
	if err := s.st.Decide(ctx, sc.sigs, dup, dryRun); err != nil {
		return fmt.Errorf("finish_URL %s: %w", s.st, err)
	}
	return nil
}
