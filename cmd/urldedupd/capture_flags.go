package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/spf13/pflag"

	"github.com/urldedupd/urldedupd/internal/audit"
	"github.com/urldedupd/urldedupd/internal/capture"
	"github.com/urldedupd/urldedupd/internal/state"
)

// captureOptions are the flags replay and capture share.
type captureOptions struct {
	all    bool
	json   bool
	logFmt string // --log-format
	output string
	ports  []uint
	dryRun bool
	count  uint64 // --count: records before the run stops (0: none)
	reassemblyFlags
}

// reassemblyFlags are the reassembler's caps, for replay, capture and
// serve alike.
type reassemblyFlags struct {
	maxLine int
	maxBuf  int // MiB
	flows   int
	tunnels []string // KIND:PORT, or "none"
	protos  string   // --proto: what is recorded

	fragDatagrams int
	fragBuf       int // MiB
	fragTimeout4  time.Duration
	fragTimeout6  time.Duration
}

// maxFragTimeout is the longest --frag-timeout-v4/-v6: far past any
// operating system's (Linux 30 s, RFC 8200 60 s), short enough that a
// datagram that will never complete does not stay forever.
const maxFragTimeout = time.Hour

func (o *reassemblyFlags) AddFlags(fs *pflag.FlagSet) {
	fs.IntVar(&o.maxLine, "max-line", capture.DefaultAssemblerOptions.MaxLine, "longest request or header line kept, in bytes (at most 262144)")
	fs.IntVar(&o.maxBuf, "max-buffer-mb", capture.DefaultAssemblerOptions.MaxBuffer>>20,
		"reassembly memory cap in MiB: out-of-order segments, partial lines, requests waiting for the end of their headers")
	fs.IntVar(&o.flows, "max-flows", capture.DefaultAssemblerOptions.MaxFlows,
		fmt.Sprintf("most connection directions tracked at once (%d bytes each, besides --max-buffer-mb); at the cap, ones that carried no data are evicted", capture.FlowCost))
	fs.StringVar(&o.protos, "proto", capture.AllProtos.String(),
		"record these protocols, a comma-separated list of http (HTTP/1.x requests), tls (the server name of TLS ClientHellos), quic (the same in QUIC Initials), h2c (cleartext HTTP/2 requests)")
	var defaults []string
	for _, t := range capture.DefaultUDPTunnels {
		defaults = append(defaults, fmt.Sprintf("%s:%d", t.Kind, t.Port))
	}
	fs.StringSliceVar(&o.tunnels, "udp-tunnel", defaults,
		fmt.Sprintf("UDP port decoded as a tunnel, KIND:PORT with KIND vxlan, geneve, gtp, teredo or ayiya (repeatable, at most %d; replaces the defaults; \"none\" for none)", capture.MaxUDPTunnels))
	fs.IntVar(&o.fragDatagrams, "max-frag-datagrams", capture.DefaultDefragDatagrams,
		fmt.Sprintf("most IP datagrams reassembled from fragments at once (%d bytes each, besides --max-frag-buffer-mb); at the cap the oldest is dropped", capture.DatagramCost))
	fs.IntVar(&o.fragBuf, "max-frag-buffer-mb", capture.DefaultDefragBytes>>20,
		"IP fragment reassembly memory cap in MiB (1..1024); at the cap the oldest datagrams in progress are dropped")
	fs.DurationVar(&o.fragTimeout4, "frag-timeout-v4", capture.DefaultDefragTimeout4,
		"an IPv4 datagram not complete within this much packet time is dropped (at most 1h)")
	fs.DurationVar(&o.fragTimeout6, "frag-timeout-v6", capture.DefaultDefragTimeout6,
		"an IPv6 datagram not complete within this much packet time is dropped (at most 1h)")
}

// maxFragDatagrams bounds --max-frag-datagrams: with DatagramCost about
// 1.2 KiB, 1 GiB of datagrams in progress.
const maxFragDatagrams = 1 << 20

// defragOptions checks the fragment flags.
func (o *reassemblyFlags) defragOptions() (capture.DefragOptions, error) {
	if o.fragDatagrams <= 0 || o.fragDatagrams > maxFragDatagrams {
		return capture.DefragOptions{}, usageError(fmt.Errorf("--max-frag-datagrams %d: not in 1..%d", o.fragDatagrams, maxFragDatagrams))
	}
	if o.fragBuf <= 0 || o.fragBuf > 1<<10 {
		return capture.DefragOptions{}, usageError(fmt.Errorf("--max-frag-buffer-mb %d: not in 1..%d", o.fragBuf, 1<<10))
	}
	for _, d := range []struct {
		name string
		v    time.Duration
	}{{"--frag-timeout-v4", o.fragTimeout4}, {"--frag-timeout-v6", o.fragTimeout6}} {
		if d.v <= 0 || d.v > maxFragTimeout {
			return capture.DefragOptions{}, usageError(fmt.Errorf("%s %v: not in (0, %v]", d.name, d.v, maxFragTimeout))
		}
	}
	return capture.DefragOptions{MaxDatagrams: o.fragDatagrams, MaxBytes: o.fragBuf << 20, Timeout4: o.fragTimeout4, Timeout6: o.fragTimeout6}, nil
}

// engineOptions checks every flag and returns the engine's options, less
// the ports (replay and capture only).
func (o *reassemblyFlags) engineOptions() (capture.Options, error) {
	asm, err := o.options()
	if err != nil {
		return capture.Options{}, err
	}
	tunnels, err := o.udpTunnels()
	if err != nil {
		return capture.Options{}, err
	}
	defrag, err := o.defragOptions()
	if err != nil {
		return capture.Options{}, err
	}
	protos, err := o.protoSet()
	if err != nil {
		return capture.Options{}, err
	}
	return capture.Options{Assembler: asm, UDPTunnels: tunnels, Defrag: defrag, Protos: protos}, nil
}

// udpTunnels checks --udp-tunnel.
func (o *reassemblyFlags) udpTunnels() ([]capture.UDPTunnel, error) {
	ts := []capture.UDPTunnel{}
	if len(o.tunnels) == 1 && o.tunnels[0] == "none" {
		return ts, nil
	}
	if len(o.tunnels) > capture.MaxUDPTunnels {
		return nil, usageError(fmt.Errorf("--udp-tunnel: %d ports, at most %d", len(o.tunnels), capture.MaxUDPTunnels))
	}
	for _, s := range o.tunnels {
		t, err := capture.ParseUDPTunnel(s)
		if err != nil {
			return nil, usageError(fmt.Errorf("--udp-tunnel %w", err))
		}
		ts = append(ts, t)
	}
	return ts, nil
}

// protoSet checks --proto.
func (o *reassemblyFlags) protoSet() (capture.Protos, error) {
	s, err := capture.ParseProtos(o.protos)
	if err != nil {
		return 0, usageError(fmt.Errorf("--proto: %w", err))
	}
	return s, nil
}

// maxReassemblyLine is the largest --max-line for captured requests: a
// line is held within one direction's buffer (MaxFlowBuffer), so a longer
// one could never be kept anyway.
const maxReassemblyLine = 256 << 10

// options checks the flags and returns the reassembler's options.
func (o *reassemblyFlags) options() (capture.AssemblerOptions, error) {
	if o.maxLine <= 0 || o.maxLine > maxReassemblyLine {
		return capture.AssemblerOptions{}, usageError(fmt.Errorf("--max-line %d: not in 1..%d", o.maxLine, maxReassemblyLine))
	}
	if o.maxBuf <= 0 || o.maxBuf > 1<<20 {
		return capture.AssemblerOptions{}, usageError(fmt.Errorf("--max-buffer-mb %d: not in 1..%d", o.maxBuf, 1<<20))
	}
	if o.flows <= 0 {
		return capture.AssemblerOptions{}, usageError(fmt.Errorf("--max-flows %d: not a positive count", o.flows))
	}
	return capture.AssemblerOptions{MaxLine: o.maxLine, MaxBuffer: o.maxBuf << 20, MaxFlows: o.flows}, nil
}

func (o *captureOptions) AddFlags(fs *pflag.FlagSet) {
	fs.BoolVar(&o.all, "all", false, `print every request as "new<TAB>URL" or "dup<TAB>URL", not only the new URLs (a CONNECT: "new<TAB>host:port<TAB>tunnel")`)
	fs.BoolVar(&o.json, "json", false, "print every request as a JSON object per line: ts, src, dst, method, url, new; tunnel:true for a CONNECT")
	fs.StringVar(&o.logFmt, "log-format", "", "the records: urls (each new URL, the default), all (--all), json (--json), or ecs (every request as an Elastic Common Schema document)")
	fs.StringVarP(&o.output, "output", "o", "-", "write the records to this file (appended) instead of stdout")
	fs.UintSliceVar(&o.ports, "port", nil, "only parse connections to these server ports, TCP and QUIC (repeatable; default: every port)")
	fs.BoolVar(&o.dryRun, "dry-run", false, "test the URLs without recording them")
	fs.Uint64VarP(&o.count, "count", "c", 0, "stop after this many records are written (0: never); records already decided are still written")
	o.reassemblyFlags.AddFlags(fs)
}

func (o *captureOptions) format() (audit.Format, error) {
	byFlag := audit.NewURLs
	switch {
	case o.all && o.json:
		return 0, usageError(errors.New("--all and --json cannot be combined (--json prints every request)"))
	case o.json:
		byFlag = audit.JSON
	case o.all:
		byFlag = audit.All
	}
	if o.logFmt == "" {
		return byFlag, nil
	}
	f, ok := map[string]audit.Format{"urls": audit.NewURLs, "all": audit.All, "json": audit.JSON, "ecs": audit.ECS}[o.logFmt]
	switch {
	case !ok:
		return 0, usageError(fmt.Errorf("--log-format %q: not urls, all, json or ecs", o.logFmt))
	case (o.all || o.json) && f != byFlag:
		return 0, usageError(fmt.Errorf("--log-format %s and --%s disagree", o.logFmt, map[bool]string{true: "json", false: "all"}[o.json]))
	}
	return f, nil
}

func (o *captureOptions) engineOptions() (*capture.Options, error) {
	eo, err := o.reassemblyFlags.engineOptions()
	if err != nil {
		return nil, err
	}
	opts := &eo
	for _, p := range o.ports {
		if p == 0 || p > 65535 {
			return nil, usageError(fmt.Errorf("--port %d: not a TCP port", p))
		}
		opts.Ports = append(opts.Ports, uint16(p))
	}
	return opts, nil
}

// openOutput opens where the records go; close flushes it.
func (o *captureOptions) openOutput(stdout io.Writer) (w *bufio.Writer, close func() error, err error) {
	if o.output == "-" || o.output == "" {
		w = bufio.NewWriterSize(stdout, 256<<10)
		return w, w.Flush, nil
	}
	f, err := os.OpenFile(o.output, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o666) // less the umask
	if err != nil {
		return nil, nil, err
	}
	w = bufio.NewWriterSize(f, 256<<10)
	return w, func() error { return errors.Join(w.Flush(), f.Close()) }, nil
}

// captureRun is what replay and capture share: the state, the output, the
// audit log and the capture pipeline.
type captureRun struct {
	ctx      context.Context // the run's: ends when the audit log fails
	cancel   context.CancelFunc
	st       *state.State
	closeOut func() error
	log      *audit.Log
	pipe     *audit.Pipeline
	eng      *capture.Engine // pipe's
	json     bool            // the summary as JSON
	engOpts  *capture.Options
	flush    func() error   // the output's
	all      *audit.Workers // when the capture has several workers (pipe the first)
}

// start opens the state and the output and builds the pipeline. A panic
// the engine recovers from is reported on stderr, and the run goes on.
func (o *captureOptions) start(ctx context.Context, g *globalOptions, stdout, stderr io.Writer) (*captureRun, error) {
	format, err := o.format()
	if err != nil {
		return nil, err
	}
	engOpts, err := o.engineOptions()
	if err != nil {
		return nil, err
	}
	st, err := openState(ctx, g, state.Options{Create: !o.dryRun, ReadOnly: o.dryRun})
	if err != nil {
		return nil, err
	}
	w, closeOut, err := o.openOutput(stdout)
	if err != nil {
		return nil, errors.Join(err, st.Close())
	}
	batching := audit.LiveOptions(st)
	if o.count > 0 {
		// Each request decided and written as it comes, so that --count
		// stops the run at the record it counts, not a batch later.
		batching = &audit.Options{Batch: 1}
	}
	log := audit.New(st, st.Signer(), w, format, o.dryRun, batching)
	ctx, cancel := context.WithCancel(ctx)
	log.OnError = func(error) { cancel() } // a failed decision or write ends the run
	pipe := audit.NewPipeline(engOpts, log, w.Flush)
	log.Limit, log.OnLimit = o.count, pipe.Engine.Stop // --count
	pipe.Engine.OnPanic = func(p *capture.PanicError) {
		fmt.Fprintf(stderr, "urldedupd: %v; capture goes on\n%s", p, p.Stack)
	}
	return &captureRun{ctx: ctx, cancel: cancel, st: st, closeOut: closeOut, log: log, pipe: pipe, eng: pipe.Engine, json: o.json,
		engOpts: engOpts, flush: w.Flush}, nil
}

// workers makes the run's engine the first of n workers' (the flags'
// options, the same Log, --count stopping them all) and returns them; the
// summary then adds up their counts.
func (r *captureRun) workers(n int) *audit.Workers {
	w := audit.NewWorkers(n-1, r.engOpts, r.log, r.flush)
	w.Pipes = append([]*audit.Pipeline{r.pipe}, w.Pipes...)
	for _, p := range w.Pipes[1:] {
		p.Engine.OnPanic = r.eng.OnPanic
	}
	r.log.OnLimit = w.Stop
	r.all = w
	return w
}

// finish writes the summary and closes the output and the state, joining
// their errors to the run's.
func (r *captureRun) finish(runErr error, stderr io.Writer) error {
	logErr := r.log.Close() // decides and writes what is still queued
	r.cancel()
	if logErr != nil && errors.Is(runErr, context.Canceled) {
		runErr = nil // the log's failure stopped the run: report that alone
	}
	if errors.Is(runErr, capture.ErrStopped) {
		runErr = nil // --count was reached
	}
	st := r.eng.Stats()
	if r.all != nil {
		st = r.all.Stats()
	}
	if r.json {
		writeJSONSummary(stderr, st, r.log.Counts)
	} else {
		writeSummary(stderr, st, r.log.Counts)
	}
	warnAssumed(r.st, stderr)
	return errors.Join(runErr, logErr, r.closeOut(), r.st.Close())
}
