package main

import (
	"bufio"
	"context"
	"encoding/json"
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
	output string
	ports  []uint
	dryRun bool
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
	fs.StringVarP(&o.output, "output", "o", "-", "write the records to this file (appended) instead of stdout")
	fs.UintSliceVar(&o.ports, "port", nil, "only parse connections to these server ports, TCP and QUIC (repeatable; default: every port)")
	fs.BoolVar(&o.dryRun, "dry-run", false, "test the URLs without recording them")
	o.reassemblyFlags.AddFlags(fs)
}

func (o *captureOptions) format() (audit.Format, error) {
	switch {
	case o.all && o.json:
		return 0, usageError(errors.New("--all and --json cannot be combined (--json prints every request)"))
	case o.json:
		return audit.JSON, nil
	case o.all:
		return audit.All, nil
	}
	return audit.NewURLs, nil
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

func writeSummary(w io.Writer, s capture.Stats, c audit.Counts) {
	a := s.Assembler
	fmt.Fprintf(w, "packets %d  bytes %d  tcp flows %d  requests %d  new %d  dup %d  parse errors %d  reassembly gaps %d  kernel drops %d\n",
		s.Packets, s.Bytes, a.Flows, c.Requests, c.New, c.Dup, a.ParseErrors, a.Gaps, s.KernelDrops)
	if s.DecodeErrors > 0 || a.Overflows > 0 || a.SegmentsDenied > 0 || a.Evicted > 0 || s.Fragments > 0 || c.Invalid > 0 || s.Panics > 0 || a.LateSegments > 0 {
		fmt.Fprintf(w, "malformed frames %d  IP fragments %d  buffer overflows %d  flows evicted at the flow cap %d  segments over the flow cap %d  late segments of closed connections %d  invalid URLs %d  panics recovered %d\n",
			s.DecodeErrors, s.Fragments, a.Overflows, a.Evicted, a.SegmentsDenied, a.LateSegments, c.Invalid, s.Panics)
	}
	if f := s.Defrag; s.Fragments > 0 {
		fmt.Fprintf(w, "IP datagrams reassembled %d  dropped incomplete after the timeout %d  dropped at the cap %d  dropped invalid %d\n",
			f.Reassembled, f.Timeouts, f.Evicted, f.Invalid)
	}
	if recordsBeyondHTTP(&s) {
		var line []byte
		for p, n := range s.Records {
			line = fmt.Appendf(line, "  %s %d", capture.Proto(p), n)
		}
		fmt.Fprintf(w, "records by protocol:%s\n", line)
	}
	if t := s.TLS; s.Records[capture.ProtoTLS] > 0 || t != (capture.TLSStats{}) {
		fmt.Fprintf(w, "TLS ClientHellos without SNI %d  with ECH %d  unparsable %d  over the size cap %d\n", t.NoSNI, t.ECH, t.Errors, t.TooLarge)
	}
	if q := s.QUIC; q != (capture.QUICStats{}) {
		fmt.Fprintf(w, "QUIC datagrams %d  Initials decrypted %d  failed authentication %d  unknown version %d  malformed %d  connections %d  evicted %d  expired %d\n",
			q.Datagrams, q.Decrypted, q.AuthFailed, q.UnknownVersion, q.Malformed, q.Conns, q.Evicted, q.Expired)
		fmt.Fprintf(w, "QUIC ClientHellos %d  without SNI %d  with ECH %d  unparsable %d  not a ClientHello %d\n", q.Hellos, q.NoSNI, q.ECH, q.Errors, q.NotHello)
	}
	if h := s.H2C; h != (capture.H2CStats{}) {
		fmt.Fprintf(w, "h2c connections %d  upgraded %d  given up: framing errors %d  HPACK errors %d  over the header caps %d  bytes lost or memory cap %d\n",
			h.Connections, h.Upgrades, h.FrameErrors, h.HPACKErrors, h.OverCap, h.Lost)
	}
	var other []byte
	for k, n := range a.NonHTTP {
		if n > 0 {
			other = fmt.Appendf(other, "  %s %d", capture.StreamKind(k), n)
		}
	}
	if len(other) > 0 {
		fmt.Fprintf(w, "streams of other protocols than HTTP/1.x:%s\n", other)
	}
	for _, line := range s.Reasons.Describe() {
		fmt.Fprintln(w, line)
	}
}

// recordsBeyondHTTP reports whether s has records of another protocol
// than HTTP/1.x: the summary then counts them all by protocol.
func recordsBeyondHTTP(s *capture.Stats) bool {
	for p, n := range s.Records {
		if capture.Proto(p) != capture.ProtoHTTP && n > 0 {
			return true
		}
	}
	return false
}

// jsonSummary is the summary --json writes to stderr, as one line.
type jsonSummary struct {
	Packets        uint64 `json:"packets"`
	Bytes          uint64 `json:"bytes"`
	TCPFlows       uint64 `json:"tcp_flows"`
	Requests       uint64 `json:"requests"`
	New            uint64 `json:"new"`
	Dup            uint64 `json:"dup"`
	ParseErrors    uint64 `json:"parse_errors"`
	Gaps           uint64 `json:"reassembly_gaps"`
	KernelDrops    uint64 `json:"kernel_drops"`
	DecodeErrors   uint64 `json:"malformed_frames"`
	Fragments      uint64 `json:"ip_fragments"`
	Reassembled    uint64 `json:"ip_datagrams_reassembled"`
	FragTimeouts   uint64 `json:"ip_datagrams_timed_out"`
	FragEvicted    uint64 `json:"ip_datagrams_dropped_at_cap"`
	FragInvalid    uint64 `json:"ip_datagrams_invalid"`
	Overflows      uint64 `json:"buffer_overflows"`
	Evicted        uint64 `json:"flows_evicted"`
	SegmentsDenied uint64 `json:"segments_denied"`
	Invalid        uint64 `json:"invalid_urls"`
	Panics         uint64 `json:"panics_recovered"`
	LateSegments   uint64 `json:"late_segments"`
	Other          uint64 `json:"other_frames"`
	Undecoded      uint64 `json:"undecoded_frames"`
	TLSNoSNI       uint64 `json:"tls_hellos_without_sni"`
	TLSECH         uint64 `json:"tls_ech_hellos"`
	TLSErrors      uint64 `json:"tls_hello_errors"`
	TLSTooLarge    uint64 `json:"tls_hellos_too_large"`
	H2CConns       uint64 `json:"h2c_connections"`
	H2CUpgrades    uint64 `json:"h2c_upgrades"`
	H2CFrameErrors uint64 `json:"h2c_frame_errors"`
	H2CHPACKErrors uint64 `json:"h2c_hpack_errors"`
	H2COverCap     uint64 `json:"h2c_over_cap"`
	H2CLost        uint64 `json:"h2c_lost"`
}

// appendReasons adds the frames without TCP by reason to the summary
// object b, as flat counters like the rest: "undecoded:linktype:127": 26,
// "other:ipproto:1": 3; "undecoded:further" and "other:further" count the
// reasons past capture.MaxReasons.
func appendReasons(b []byte, r *capture.Reasons) []byte {
	b = b[:len(b)-1] // the closing brace
	add := func(undecoded bool, label string, n uint64) {
		kind := "other:"
		if undecoded {
			kind = "undecoded:"
		}
		b = fmt.Appendf(b, ",%q:%d", kind+label, n)
	}
	for _, c := range r.Counts() {
		add(c.Undecoded(), c.Label(), c.Frames)
	}
	if r.LumpedUndecoded > 0 {
		add(true, "further", r.LumpedUndecoded)
	}
	if r.LumpedOther > 0 {
		add(false, "further", r.LumpedOther)
	}
	return append(b, '}')
}

func writeJSONSummary(w io.Writer, s capture.Stats, c audit.Counts) {
	a := s.Assembler
	b, _ := json.Marshal(jsonSummary{Packets: s.Packets, Bytes: s.Bytes, TCPFlows: a.Flows, Requests: c.Requests,
		New: c.New, Dup: c.Dup, ParseErrors: a.ParseErrors, Gaps: a.Gaps, KernelDrops: s.KernelDrops,
		DecodeErrors: s.DecodeErrors, Fragments: s.Fragments,
		Reassembled: s.Defrag.Reassembled, FragTimeouts: s.Defrag.Timeouts, FragEvicted: s.Defrag.Evicted, FragInvalid: s.Defrag.Invalid, Overflows: a.Overflows, SegmentsDenied: a.SegmentsDenied,
		Evicted: a.Evicted, Invalid: c.Invalid, Panics: s.Panics, LateSegments: a.LateSegments, Other: s.Other, Undecoded: s.Undecoded,
		TLSNoSNI: s.TLS.NoSNI, TLSECH: s.TLS.ECH, TLSErrors: s.TLS.Errors, TLSTooLarge: s.TLS.TooLarge,
		H2CConns: s.H2C.Connections, H2CUpgrades: s.H2C.Upgrades, H2CFrameErrors: s.H2C.FrameErrors,
		H2CHPACKErrors: s.H2C.HPACKErrors, H2COverCap: s.H2C.OverCap, H2CLost: s.H2C.Lost})
	b = appendReasons(b, &s.Reasons)
	b = b[:len(b)-1]              // the closing brace
	for p, n := range s.Records { // every protocol, selected or not: "records:tls": 3
		b = fmt.Appendf(b, ",%q:%d", "records:"+capture.Proto(p).String(), n)
	}
	for _, q := range s.QUIC.Counters() { // "quic_decrypted": 2
		b = fmt.Appendf(b, ",%q:%d", "quic_"+q.Name, q.Value)
	}
	for k, n := range a.NonHTTP { // flat like the rest: "non_http:tls": 3
		if n > 0 {
			b = fmt.Appendf(b, ",%q:%d", "non_http:"+capture.StreamKind(k).String(), n)
		}
	}
	fmt.Fprintf(w, "%s}\n", b)
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
	log := audit.New(st, st.Signer(), w, format, o.dryRun, audit.LiveOptions(st))
	ctx, cancel := context.WithCancel(ctx)
	log.OnError = func(error) { cancel() } // a failed decision or write ends the run
	pipe := audit.NewPipeline(engOpts, log, w.Flush)
	pipe.Engine.OnPanic = func(p *capture.PanicError) {
		fmt.Fprintf(stderr, "urldedupd: %v; capture goes on\n%s", p, p.Stack)
	}
	return &captureRun{ctx: ctx, cancel: cancel, st: st, closeOut: closeOut, log: log, pipe: pipe, eng: pipe.Engine, json: o.json}, nil
}

// finish writes the summary and closes the output and the state, joining
// their errors to the run's.
func (r *captureRun) finish(runErr error, stderr io.Writer) error {
	logErr := r.log.Close() // decides and writes what is still queued
	r.cancel()
	if logErr != nil && errors.Is(runErr, context.Canceled) {
		runErr = nil // the log's failure stopped the run: report that alone
	}
	if r.json {
		writeJSONSummary(stderr, r.eng.Stats(), r.log.Counts)
	} else {
		writeSummary(stderr, r.eng.Stats(), r.log.Counts)
	}
	warnAssumed(r.st, stderr)
	return errors.Join(runErr, logErr, r.closeOut(), r.st.Close())
}
